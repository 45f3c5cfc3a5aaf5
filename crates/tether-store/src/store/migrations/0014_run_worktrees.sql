-- A local run on a git repository works in a worktree of its own, on its own branch, beside the
-- person's checkout (issue 23). The worktree is its own row because a run's follow-ups and a
-- task's later runs continue in it; its path and branch are decided when the run is queued (from
-- the run's number, so two runs never share one) and recorded before git makes it, so a start
-- after kill -9 finds whatever is left.
CREATE TABLE worktrees (
    id            INTEGER PRIMARY KEY,
    repo          TEXT NOT NULL,                  -- the person's checkout (its top folder)
    subdir        TEXT NOT NULL DEFAULT '',       -- where in it the run's workspace is
    path          TEXT NOT NULL UNIQUE,           -- the folder Tether makes, under its worktrees base
    branch        TEXT NOT NULL,                  -- tether/R-<n>-<slug>
    base_branch   TEXT,                           -- named, else the checkout's branch at start (NULL: detached)
    base_commit   TEXT,                           -- resolved when it is made
    state         TEXT NOT NULL DEFAULT 'planned'
                  CHECK (state IN ('planned', 'creating', 'ready', 'removed')),
    created_at    INTEGER NOT NULL,
    ready_at      INTEGER,
    removed_at    INTEGER,
    removed_why   TEXT,                           -- discarded, merged, reaped, never made
    merged_at     INTEGER,
    merged_commit TEXT,                           -- the commit on the base the merge made (or fast-forwarded to)
    merged_into   TEXT,
    pr_url        TEXT,
    pr_number     INTEGER,
    pinned        INTEGER NOT NULL DEFAULT 0,     -- kept by the reaper however old
    setup_paths   TEXT NOT NULL DEFAULT '[]'      -- what the setup made or copied (JSON): never committed as the run's work
) STRICT;
ALTER TABLE runs ADD COLUMN worktree INTEGER REFERENCES worktrees(id);
-- Why a local run works in the person's folder itself (asked for, or not a git repository).
ALTER TABLE runs ADD COLUMN in_place TEXT;
-- The branch's commit when the run ended, and what changed from the base to it (JSON summary).
ALTER TABLE runs ADD COLUMN head_commit TEXT;
ALTER TABLE runs ADD COLUMN changes TEXT;
CREATE INDEX runs_by_worktree ON runs(worktree) WHERE worktree IS NOT NULL;

-- A person's comment on lines of a run's diff; a follow-up "with comments" carries every open one
-- and marks them addressed when it ends.
CREATE TABLE run_comments (
    id           INTEGER PRIMARY KEY,
    run          INTEGER NOT NULL REFERENCES runs(num) ON DELETE CASCADE,
    path         TEXT NOT NULL,
    start_line   INTEGER NOT NULL CHECK (start_line >= 1),
    end_line     INTEGER NOT NULL CHECK (end_line >= start_line),
    quote        TEXT NOT NULL,                  -- the lines as they were when commented
    body         TEXT NOT NULL,
    author       TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    sent_in      INTEGER REFERENCES runs(num),   -- the follow-up that carried it
    addressed_at INTEGER
) STRICT;
CREATE INDEX run_comments_by_run ON run_comments(run);
