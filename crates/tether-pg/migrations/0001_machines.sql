-- The team's clock and machines. Every time in the team schema is epoch ms by the database's
-- clock (`tether_now_ms()`), so leases and "last seen" agree whichever machine wrote them.
CREATE FUNCTION tether_now_ms() RETURNS BIGINT LANGUAGE sql VOLATILE
AS $$ SELECT (extract(epoch FROM clock_timestamp()) * 1000)::BIGINT $$;

-- A Tether instance in the team: its name (the host name unless it chose another), the data dir
-- it speaks for (`instance`, random per data dir: two instances on one host need two names),
-- whether it runs agents for the team and with which labels.
CREATE TABLE machines (
    name       TEXT PRIMARY KEY CHECK (name <> ''),
    instance   TEXT NOT NULL,
    host       TEXT NOT NULL,
    runner     BIGINT NOT NULL DEFAULT 0 CHECK (runner IN (0, 1)),
    labels     TEXT NOT NULL DEFAULT '[]',          -- JSON array of strings
    version    TEXT NOT NULL,                       -- Tether's version on it
    first_seen BIGINT NOT NULL DEFAULT tether_now_ms(),
    last_seen  BIGINT NOT NULL DEFAULT tether_now_ms()
);
