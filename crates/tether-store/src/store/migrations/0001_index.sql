-- Each Cursor file (or transcript) we read.
CREATE TABLE sources (
    id           INTEGER PRIMARY KEY,
    path         TEXT NOT NULL UNIQUE,
    kind         TEXT NOT NULL,            -- global | workspace | cli_store | transcript
    fingerprint  TEXT,                     -- file-level: size/mtime of the file and its -wal
    watermark    INTEGER,                  -- highest rowid seen (global DB fast path)
    status       TEXT NOT NULL DEFAULT 'pending', -- pending | complete | partial | error | missing
    reasons      TEXT NOT NULL DEFAULT '{}', -- JSON {reason: count} for problems found
    notes        TEXT NOT NULL DEFAULT '{}', -- JSON {note: count} for things skipped on purpose
    error        TEXT,
    sessions     INTEGER NOT NULL DEFAULT 0,
    messages     INTEGER NOT NULL DEFAULT 0,
    bytes        INTEGER NOT NULL DEFAULT 0,
    indexed_at   INTEGER
) STRICT;

-- One chat (composer, chat tab, CLI session or transcript). Rebuilt from Cursor at will.
CREATE TABLE sessions (
    id            TEXT PRIMARY KEY,
    source_id     INTEGER NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
    origin        TEXT NOT NULL,           -- ide | cli
    format        TEXT NOT NULL,           -- composer | composer-inline | chat-tab | cli-store | transcript
    title         TEXT,
    project       TEXT,
    project_via   TEXT NOT NULL DEFAULT 'none', -- identifier | header | membership | heuristic | cwd | none
    workspace_id  TEXT,
    mode          TEXT,
    model         TEXT,
    created_at    INTEGER,                 -- epoch ms
    updated_at    INTEGER,                 -- epoch ms
    message_count INTEGER NOT NULL DEFAULT 0,
    archived      INTEGER NOT NULL DEFAULT 0,
    fingerprint   TEXT,
    problems      TEXT NOT NULL DEFAULT '{}'
) STRICT;
CREATE INDEX sessions_source ON sessions(source_id);
CREATE INDEX sessions_updated ON sessions(updated_at DESC);
CREATE INDEX sessions_project ON sessions(project);

-- One part of a conversation, in order: a user or assistant text, a thinking block or a tool call.
CREATE TABLE messages (
    id           INTEGER PRIMARY KEY,
    session_id   TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    seq          INTEGER NOT NULL,
    role         TEXT NOT NULL,            -- user | assistant | system | tool
    kind         TEXT NOT NULL,            -- text | thinking | tool
    text         TEXT NOT NULL,
    tool_name    TEXT,
    tool_status  TEXT,
    model        TEXT,
    created_at   INTEGER,
    external_id  TEXT,                     -- Cursor's bubbleId where there is one
    hash         INTEGER NOT NULL,         -- content hash, so a re-read rewrites only what changed
    UNIQUE (session_id, seq)
) STRICT;

CREATE VIRTUAL TABLE messages_fts USING fts5(
    text, content='messages', content_rowid='id', tokenize='unicode61 remove_diacritics 2'
);
CREATE TRIGGER messages_ai AFTER INSERT ON messages BEGIN
    INSERT INTO messages_fts(rowid, text) VALUES (new.id, new.text);
END;
CREATE TRIGGER messages_ad AFTER DELETE ON messages BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, text) VALUES ('delete', old.id, old.text);
END;
CREATE TRIGGER messages_au AFTER UPDATE OF text ON messages BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, text) VALUES ('delete', old.id, old.text);
    INSERT INTO messages_fts(rowid, text) VALUES (new.id, new.text);
END;

CREATE VIRTUAL TABLE titles_fts USING fts5(
    title, content='sessions', content_rowid='rowid', tokenize='unicode61 remove_diacritics 2'
);
CREATE TRIGGER sessions_ai AFTER INSERT ON sessions BEGIN
    INSERT INTO titles_fts(rowid, title) VALUES (new.rowid, coalesce(new.title, ''));
END;
CREATE TRIGGER sessions_ad AFTER DELETE ON sessions BEGIN
    INSERT INTO titles_fts(titles_fts, rowid, title) VALUES ('delete', old.rowid, coalesce(old.title, ''));
END;
CREATE TRIGGER sessions_au AFTER UPDATE OF title ON sessions BEGIN
    INSERT INTO titles_fts(titles_fts, rowid, title) VALUES ('delete', old.rowid, coalesce(old.title, ''));
    INSERT INTO titles_fts(rowid, title) VALUES (new.rowid, coalesce(new.title, ''));
END;

-- What Cursor's workspace DBs tell us about projects, for attributing global composers.
CREATE TABLE workspaces (
    id       TEXT PRIMARY KEY,                -- workspaceStorage/<id>
    uri      TEXT,
    project  TEXT
) STRICT;
CREATE TABLE workspace_members (
    composer_id  TEXT NOT NULL,
    workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    PRIMARY KEY (composer_id, workspace_id)
) STRICT, WITHOUT ROWID;

-- User metadata. Keyed by session id with no foreign key: it must outlive any re-index and
-- the session disappearing from Cursor, and reattach if it comes back.
CREATE TABLE session_meta (
    session_id  TEXT PRIMARY KEY,
    nickname    TEXT UNIQUE COLLATE NOCASE,
    bookmarked  INTEGER NOT NULL DEFAULT 0,
    no_index    INTEGER NOT NULL DEFAULT 0,
    updated_at  INTEGER NOT NULL
) STRICT;
CREATE TABLE session_tags (
    session_id  TEXT NOT NULL,
    tag         TEXT NOT NULL COLLATE NOCASE,
    PRIMARY KEY (session_id, tag)
) STRICT, WITHOUT ROWID;
CREATE INDEX session_tags_tag ON session_tags(tag);

-- Composers read and deliberately not indexed (empty, draft, subagent, unreadable), with the
-- fingerprint they had: they are not re-read until they change, and their reason still counts.
CREATE TABLE skipped (
    source_id    INTEGER NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
    id           TEXT NOT NULL,
    fingerprint  TEXT NOT NULL,
    reason       TEXT NOT NULL,
    PRIMARY KEY (source_id, id)
) STRICT, WITHOUT ROWID;
