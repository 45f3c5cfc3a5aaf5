-- Other agents' recorded token figures (issue 37), one row per request as the agent recorded it:
-- Claude Code's response (message id + request id), Codex's turn (its token_count event), Gemini
-- CLI's model message. Keyed by the agent's own id of the request, so the copy of a request in a
-- resumed or forked session is one row, not two. The buckets are disjoint (`input` is the input
-- not read from the cache) so each is priced at its own rate. A chat with rows is reported from
-- them, never again from its `sessions` totals.
CREATE TABLE chat_usage (
    key          TEXT PRIMARY KEY,
    session_id   TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    at           INTEGER,               -- epoch ms
    model        TEXT,
    input        INTEGER NOT NULL DEFAULT 0,
    output       INTEGER NOT NULL DEFAULT 0,
    cache_read   INTEGER NOT NULL DEFAULT 0,
    cache_write  INTEGER NOT NULL DEFAULT 0
) STRICT;
CREATE INDEX chat_usage_session ON chat_usage(session_id);
-- Agents' chats indexed before this read again once, so their rows are written.
UPDATE sources SET fingerprint = NULL WHERE kind IN ('claude_code', 'codex', 'gemini');
UPDATE sessions SET fingerprint = NULL WHERE origin IN ('claude-code', 'codex', 'gemini');
