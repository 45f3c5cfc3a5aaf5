-- Signals: short messages between agents and people, each with the obligation its type carries
-- (see board/signals.rs). A signal is written once; its deliveries (one per recipient: a role
-- address fans out to every live agent with that role) carry the drain, the obligation and the
-- doorbell's wake telemetry. Numbers come from `counters` like task numbers; `signals_rev` is
-- bumped by every signal write so the daemon notices sends made by other processes.
INSERT INTO counters(name, value) VALUES ('signal_num', 0), ('signals_rev', 0);

CREATE TABLE signals (
    num             INTEGER PRIMARY KEY,        -- shown as S-<num>
    type            TEXT NOT NULL CHECK (type IN ('question', 'task_assigned', 'review_requested',
                        'status_update', 'acknowledgment', 'peer_joined', 'peer_left', 'master_preempted')),
    sender          TEXT NOT NULL,              -- an agent's name, 'human' or 'tether'
    sender_agent    TEXT,                       -- the agent's id when an agent sent it
    address         TEXT NOT NULL,              -- `to` as resolved: an agent name, role:<r> or 'human'
    body            TEXT NOT NULL,
    reply_to        INTEGER REFERENCES signals(num),
    task            INTEGER REFERENCES tasks(num) ON DELETE SET NULL,
    trace_id        TEXT NOT NULL,              -- the first signal's, carried through every reply
    action_required INTEGER NOT NULL,
    reply_required  INTEGER NOT NULL,           -- the obligation stays open until a reply
    created_at      INTEGER NOT NULL,
    answered_at     INTEGER,
    answered_by     INTEGER REFERENCES signals(num)
) STRICT;
CREATE INDEX signals_trace ON signals(trace_id, num);
CREATE INDEX signals_reply_to ON signals(reply_to);
CREATE INDEX signals_task ON signals(task) WHERE task IS NOT NULL;

CREATE TABLE signal_deliveries (
    signal             INTEGER NOT NULL REFERENCES signals(num) ON DELETE CASCADE,
    recipient          TEXT NOT NULL,           -- an agent id, or 'human'
    recipient_name     TEXT NOT NULL,
    drained_at         INTEGER,
    obligation         TEXT NOT NULL CHECK (obligation IN ('none', 'open', 'closed')),
    closed_at          INTEGER,
    wake_attempt_count INTEGER NOT NULL DEFAULT 0,
    last_wake_at       INTEGER,
    last_wake_path     TEXT,                    -- sse | hook | piggyback | resume
    last_wake_result   TEXT,                    -- rang | coalesced | filtered | uncaptured | send_failed
    PRIMARY KEY (signal, recipient)
) STRICT;
CREATE INDEX signal_deliveries_inbox ON signal_deliveries(recipient, drained_at, signal);
CREATE INDEX signal_deliveries_open ON signal_deliveries(obligation, signal) WHERE obligation = 'open';
-- The daemon's doorbell picks up deliveries it has not tried yet (sent by any process).
CREATE INDEX signal_deliveries_unrung ON signal_deliveries(signal) WHERE wake_attempt_count = 0 AND recipient != 'human';

-- Every push outcome, append-only: which signal, to whom, by which path, and what happened.
CREATE TABLE signal_wakes (
    id          INTEGER PRIMARY KEY,
    signal      INTEGER NOT NULL REFERENCES signals(num) ON DELETE CASCADE,
    recipient   TEXT NOT NULL,
    at          INTEGER NOT NULL,
    path        TEXT NOT NULL,
    result      TEXT NOT NULL,
    mcp_session TEXT
) STRICT;
CREATE INDEX signal_wakes_signal ON signal_wakes(signal, id);
CREATE TRIGGER signal_wakes_append_only BEFORE UPDATE ON signal_wakes
BEGIN SELECT RAISE(ABORT, 'wake telemetry is append-only'); END;

-- Per recipient: its last drain, and the last time the stop hook asked its chat to drain (at
-- most once per drain cycle).
CREATE TABLE signal_inboxes (
    recipient  TEXT PRIMARY KEY,
    drained_at INTEGER,
    hook_at    INTEGER
) STRICT;

-- How many GET streams each persisted MCP session holds open in the running daemon (its
-- surface support, readable by other processes); reset when a daemon starts.
ALTER TABLE mcp_sessions ADD COLUMN streams INTEGER NOT NULL DEFAULT 0;
