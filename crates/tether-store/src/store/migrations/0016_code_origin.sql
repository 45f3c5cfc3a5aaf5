-- Code origin (tether-trace): each edit an agent made (Cursor's afterFileEdit / afterTabFileEdit
-- hooks, a run's tool calls) and the hashes of the lines it wrote and replaced. A line's origin is
-- decided when it is asked for, from these and git's blame; nothing here is a guess made early.
CREATE TABLE trace_edits (
    id              INTEGER PRIMARY KEY,
    uid             TEXT NOT NULL UNIQUE,          -- the capturer's id: an edit may arrive in parts
    at              INTEGER NOT NULL,              -- epoch ms
    kind            TEXT NOT NULL CHECK (kind IN ('agent', 'tab', 'run')),
    conversation_id TEXT,                          -- Cursor's chat (composer / CLI session) id
    generation_id   TEXT,
    model           TEXT,
    run_id          TEXT,                          -- a Tether run's id (kind = 'run')
    repo            TEXT,                          -- the repository's root; NULL outside any
    head            TEXT,                          -- its HEAD commit at the time
    path            TEXT NOT NULL,                 -- relative to repo, else absolute
    ranges          TEXT NOT NULL DEFAULT '[]',    -- JSON [{start_line, end_line, content_hash}] right after the edit
    lines           INTEGER NOT NULL DEFAULT 0,    -- lines written
    published_in    TEXT                           -- the commit whose record it went into ('' = from before publishing was on)
) STRICT;
CREATE INDEX trace_edits_file ON trace_edits(repo, path);
CREATE INDEX trace_edits_conversation ON trace_edits(conversation_id);
CREATE INDEX trace_edits_at ON trace_edits(at);

-- One row per line hash an edit wrote (written = 1) or replaced (written = 0).
CREATE TABLE trace_lines (
    edit_id INTEGER NOT NULL REFERENCES trace_edits(id) ON DELETE CASCADE,
    hash    INTEGER NOT NULL,
    written INTEGER NOT NULL CHECK (written IN (0, 1))
) STRICT;
CREATE INDEX trace_lines_hash ON trace_lines(hash, written);
CREATE INDEX trace_lines_edit ON trace_lines(edit_id);

-- Per repository: when tracing began (lines written after it with no AI behind them are a
-- person's) and whether the person asked for records to be written into it on commit.
CREATE TABLE trace_repos (
    repo            TEXT PRIMARY KEY,
    since           INTEGER NOT NULL,
    publish         TEXT CHECK (publish IN ('notes', 'files')),
    published_head  TEXT
) STRICT;
