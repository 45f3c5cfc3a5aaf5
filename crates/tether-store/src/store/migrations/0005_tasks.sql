-- Tasks and agent sessions. Task numbers come from `counters` inside the creating transaction, so
-- parallel processes never collide and a number is never reused. `tasks_rev` is bumped by every
-- task write so another process (the daemon) can notice changes with one cheap read.
CREATE TABLE counters (
    name  TEXT PRIMARY KEY,
    value INTEGER NOT NULL
) STRICT;
INSERT INTO counters(name, value) VALUES ('task_num', 0), ('tasks_rev', 0);

-- A Cursor chat (id = its conversation_id), another MCP client (mcp:<session>) or a CLI user.
CREATE TABLE agents (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL UNIQUE,
    kind        TEXT NOT NULL,              -- cursor | mcp | cli
    role        TEXT,
    project     TEXT,
    mcp_session TEXT,
    created_at  INTEGER NOT NULL,
    last_seen   INTEGER NOT NULL,
    ended_at    INTEGER
) STRICT;
CREATE INDEX agents_mcp_session ON agents(mcp_session);

CREATE TABLE tasks (
    num          INTEGER PRIMARY KEY,       -- shown as T-<num>
    title        TEXT NOT NULL,
    description  TEXT NOT NULL DEFAULT '',
    status       TEXT NOT NULL DEFAULT 'todo'
                 CHECK (status IN ('todo', 'in_progress', 'blocked', 'in_review', 'done', 'cancelled')),
    priority     INTEGER NOT NULL DEFAULT 2 CHECK (priority BETWEEN 0 AND 3), -- 0 critical … 3 low
    role         TEXT,
    project      TEXT,
    acceptance   TEXT NOT NULL DEFAULT '[]', -- JSON array of criteria
    assignee     TEXT,                       -- an agent's name or a person
    assignee_agent TEXT REFERENCES agents(id) ON DELETE SET NULL,
    lease_until  INTEGER,                    -- epoch ms; NULL = no expiry (people) or not claimed
    summary      TEXT,                       -- what was done, given on completion
    external_ref TEXT UNIQUE,                -- e.g. taskmaster:12, backlog:task-3 (re-import updates)
    created_by   TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL,
    version      INTEGER NOT NULL DEFAULT 1
) STRICT;
CREATE INDEX tasks_status ON tasks(status, priority, num);
CREATE INDEX tasks_assignee ON tasks(assignee_agent);

CREATE TABLE task_labels (
    task  INTEGER NOT NULL REFERENCES tasks(num) ON DELETE CASCADE,
    label TEXT NOT NULL,
    PRIMARY KEY (task, label)
) STRICT, WITHOUT ROWID;

CREATE TABLE task_deps (
    task       INTEGER NOT NULL REFERENCES tasks(num) ON DELETE CASCADE,
    depends_on INTEGER NOT NULL REFERENCES tasks(num) ON DELETE CASCADE,
    PRIMARY KEY (task, depends_on),
    CHECK (task != depends_on)
) STRICT, WITHOUT ROWID;
CREATE INDEX task_deps_reverse ON task_deps(depends_on);

-- Every change and every comment/handoff note, with its actor. Append-only.
CREATE TABLE task_events (
    id     INTEGER PRIMARY KEY,
    task   INTEGER NOT NULL REFERENCES tasks(num) ON DELETE CASCADE,
    at     INTEGER NOT NULL,
    actor  TEXT NOT NULL,
    kind   TEXT NOT NULL,                    -- created | claimed | status | edited | comment | handoff | released | lease_expired | assigned | completed
    detail TEXT NOT NULL DEFAULT '{}'        -- JSON
) STRICT;
CREATE INDEX task_events_task ON task_events(task, id);
CREATE TRIGGER task_events_append_only_u BEFORE UPDATE ON task_events
BEGIN SELECT RAISE(ABORT, 'task history is append-only'); END;
CREATE TRIGGER task_events_append_only_d BEFORE DELETE ON task_events
WHEN (SELECT count(*) FROM tasks WHERE num = old.task) > 0
BEGIN SELECT RAISE(ABORT, 'task history is append-only'); END;
