-- MCP sessions (the initialize params rmcp needs to restore a session after a daemon restart).
CREATE TABLE mcp_sessions (
    id         TEXT PRIMARY KEY,
    state      TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    last_seen  INTEGER NOT NULL
);

-- What Cursor's hooks told us about each chat: where it runs and whether it is working.
CREATE TABLE chat_activity (
    conversation_id TEXT PRIMARY KEY,
    workspace_roots TEXT NOT NULL DEFAULT '[]',
    status          TEXT NOT NULL,            -- working | idle | ended
    last_event      TEXT NOT NULL,
    last_at         INTEGER NOT NULL,
    transcript_path TEXT
);
