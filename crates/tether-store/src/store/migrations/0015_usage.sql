-- Usage and budgets (issue 25): what runs, chats and the account spent, and budgets that stop runs.
--
-- A run that goes over its budget ends `over_budget`. SQLite cannot alter a CHECK, and rebuilding
-- `runs` under foreign keys would cascade into its events, so the status CHECK is widened in the
-- schema's text by the migration's hook (`store::widen_run_status`, SQLite's documented procedure
-- for changes that leave every stored row valid), in this migration's transaction.
ALTER TABLE runs ADD COLUMN cost_usd REAL;          -- what Cursor said it cost (cloud runs); NULL: not said
ALTER TABLE runs ADD COLUMN usage_source TEXT;      -- result | turns | cloud: where the token figures came from
ALTER TABLE runs ADD COLUMN budget TEXT;            -- this run's own budget, e.g. "200k" or "$2"
ALTER TABLE runs ADD COLUMN budget_allowed INTEGER NOT NULL DEFAULT 0; -- over budget, and the person let its chain go on
UPDATE runs SET usage_source = 'result' WHERE input_tokens IS NOT NULL;
-- Usage is read by time: the runs that started (else were queued) since a moment, with every
-- column the usage report and the budget checks read, so they never walk the table's rows (whose
-- prompts and results spill into overflow pages).
CREATE INDEX runs_usage ON runs(coalesce(started_at, created_at), num, kind, status, model, task, role, workspace, root,
                                ended_at, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost_usd,
                                cloud);

-- A task's budget, over all its runs.
ALTER TABLE tasks ADD COLUMN budget TEXT;

-- Token counts Cursor's chat stores kept (per bubble, summed); NULL: none recorded, never zero.
ALTER TABLE sessions ADD COLUMN input_tokens INTEGER;
ALTER TABLE sessions ADD COLUMN output_tokens INTEGER;

-- The account's usage events, imported from the CSV the person exports from Cursor's dashboard.
-- One row per event; the same event imported again (same time, model, kind, tokens and cost)
-- is the same row.
CREATE TABLE usage_events (
    id                   INTEGER PRIMARY KEY,
    at                   INTEGER NOT NULL,      -- epoch ms
    kind                 TEXT NOT NULL DEFAULT '',
    model                TEXT NOT NULL DEFAULT '',
    max_mode             INTEGER,
    cloud_agent          TEXT,
    automation           TEXT,
    input_cache_write    INTEGER NOT NULL DEFAULT 0, -- the CSV's input columns are disjoint buckets
    input_no_cache_write INTEGER NOT NULL DEFAULT 0,
    cache_read           INTEGER NOT NULL DEFAULT 0,
    output               INTEGER NOT NULL DEFAULT 0,
    total                INTEGER NOT NULL DEFAULT 0,
    cost_usd             REAL,                  -- charged, as the CSV says; NULL: not a figure ("Included")
    cost_text            TEXT NOT NULL DEFAULT '', -- the Cost cell as written (what tells one event from another)
    errored              INTEGER NOT NULL DEFAULT 0,
    extra                TEXT NOT NULL DEFAULT '{}', -- columns this version does not know, kept
    file                 TEXT NOT NULL,
    line                 INTEGER NOT NULL,
    imported_at          INTEGER NOT NULL,
    UNIQUE (at, model, kind, input_cache_write, input_no_cache_write, cache_read, output, total, cost_text)
) STRICT;
CREATE INDEX usage_events_at ON usage_events(at);
