-- Agent runs: the Cursor CLI (kind `local`) started by Tether for a prompt or a task, with the
-- typed events of its stream and the workspace files it placed for the run (see board/runs.rs).
-- Numbers come from `counters` like tasks; `runs_rev` is bumped by every run write so the daemon
-- notices runs queued or cancelled by other processes.
INSERT INTO counters(name, value) VALUES ('run_num', 0), ('runs_rev', 0);

CREATE TABLE runs (
    num                 INTEGER PRIMARY KEY,    -- shown as R-<num>
    kind                TEXT NOT NULL DEFAULT 'local' CHECK (kind IN ('local', 'cloud')),
    prompt              TEXT NOT NULL,
    workspace           TEXT,                   -- canonical folder (local runs)
    model               TEXT,
    mode                TEXT NOT NULL DEFAULT 'agent' CHECK (mode IN ('agent', 'plan', 'ask')),
    role                TEXT,
    task                INTEGER REFERENCES tasks(num) ON DELETE SET NULL,
    complete_task       INTEGER NOT NULL DEFAULT 0, -- success moves the task to done, not in_review
    permissions         TEXT NOT NULL DEFAULT '{"allow":[],"deny":[]}',
    timeout_ms          INTEGER NOT NULL,
    parent              INTEGER REFERENCES runs(num),
    resume_chat         TEXT,                   -- the chat a follow-up continues
    status              TEXT NOT NULL DEFAULT 'queued'
                        CHECK (status IN ('queued', 'running', 'succeeded', 'failed', 'timed_out', 'cancelled', 'lost')),
    chat_id             TEXT,                   -- Cursor's session_id, from the stream's system/init
    exit_code           INTEGER,
    result              TEXT,
    error               TEXT,
    warning             TEXT,                   -- e.g. a resume that started a fresh chat
    duration_ms         INTEGER,
    duration_api_ms     INTEGER,
    input_tokens        INTEGER,
    output_tokens       INTEGER,
    cache_read_tokens   INTEGER,
    cache_write_tokens  INTEGER,
    requested_by        TEXT NOT NULL,
    cancel_requested_at INTEGER,
    runner_pid          INTEGER,                -- the Tether process running it
    child_pid           INTEGER,                -- the agent's process (and process group)
    child_started       INTEGER,                -- its start time (clock ticks since boot), against pid reuse
    created_at          INTEGER NOT NULL,
    started_at          INTEGER,
    ended_at            INTEGER
) STRICT;
CREATE INDEX runs_status ON runs(status, num);
CREATE INDEX runs_chat ON runs(chat_id) WHERE chat_id IS NOT NULL;
CREATE INDEX runs_task ON runs(task) WHERE task IS NOT NULL;

-- Every line of the agent's output as a typed event, append-only.
CREATE TABLE run_events (
    run  INTEGER NOT NULL REFERENCES runs(num) ON DELETE CASCADE,
    seq  INTEGER NOT NULL,
    at   INTEGER NOT NULL,
    kind TEXT NOT NULL,                         -- init | user | assistant | thinking | tool_call | result | stderr | raw | status
    data TEXT NOT NULL,                         -- JSON
    PRIMARY KEY (run, seq)
) STRICT, WITHOUT ROWID;
CREATE TRIGGER run_events_append_only BEFORE UPDATE ON run_events
BEGIN SELECT RAISE(ABORT, 'run events are append-only'); END;

-- Files a run placed in its workspace (`.cursor/cli.json`, a role rule) with what was there
-- before, written before the file is touched: whatever happens to the process, the next start
-- puts the person's own file back.
CREATE TABLE run_files (
    run         INTEGER NOT NULL REFERENCES runs(num),
    path        TEXT NOT NULL,
    original    BLOB,                           -- NULL: the file did not exist
    placed      BLOB NOT NULL,                  -- what the run wrote
    restored_at INTEGER,
    PRIMARY KEY (run, path)
) STRICT;
CREATE INDEX run_files_pending ON run_files(path) WHERE restored_at IS NULL;
