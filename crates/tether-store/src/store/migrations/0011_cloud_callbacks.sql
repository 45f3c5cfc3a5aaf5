-- Cursor Cloud webhooks and agents calling back (opt-in, with a public URL of the person's own).
-- A webhook delivery is kept by its X-Webhook-ID (a delivery seen again is answered, not applied
-- again) with its raw payload, as Cursor's docs advise. A grant is a one-time bootstrap token put
-- in a cloud run's prompt, or the run-scoped bearer it is exchanged for; only a hash is stored.
CREATE TABLE cloud_webhooks (
    id          TEXT PRIMARY KEY,
    agent_id    TEXT,
    status      TEXT,
    received_at INTEGER NOT NULL,
    body        TEXT NOT NULL
) STRICT;

CREATE TABLE cloud_grants (
    hash       TEXT PRIMARY KEY,               -- sha256 of the token, hex
    kind       TEXT NOT NULL CHECK (kind IN ('bootstrap', 'bearer')),
    run        INTEGER NOT NULL REFERENCES runs(num) ON DELETE CASCADE,
    expires_at INTEGER NOT NULL,
    used_at    INTEGER                         -- a bootstrap token is spent once
) STRICT;
