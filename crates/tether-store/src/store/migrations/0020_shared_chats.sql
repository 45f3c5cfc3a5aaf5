-- Chats shared with a team (the board's table on either engine; only a team's database has
-- rows, since sharing needs one): a redacted Markdown copy, who shared it, from which machine.
CREATE TABLE shared_chats (
    num INTEGER PRIMARY KEY,
    source TEXT NOT NULL,
    machine TEXT NOT NULL DEFAULT '',
    shared_by TEXT NOT NULL,
    shared_at INTEGER NOT NULL,
    title TEXT NOT NULL,
    project TEXT,
    messages INTEGER NOT NULL,
    redacted INTEGER NOT NULL,
    body TEXT NOT NULL,
    UNIQUE (machine, source)
);
CREATE INDEX shared_chats_recent ON shared_chats (shared_at DESC);
