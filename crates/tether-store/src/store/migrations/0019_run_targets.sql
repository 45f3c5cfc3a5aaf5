-- Where a run may go, on a team's board: `origin` is the machine that queued it, `target_machine`
-- the one it must run on (`--on`, or its origin when no other machine could find its folder),
-- `target_labels` (a JSON list) what a runner must have (`--labels`). `repo_url` and `repo_subdir`
-- name the workspace so another machine can find or clone it. `machine` now says who took it.
-- On this machine's own board they all stay NULL.
ALTER TABLE runs ADD COLUMN origin TEXT;
ALTER TABLE runs ADD COLUMN target_machine TEXT;
ALTER TABLE runs ADD COLUMN target_labels TEXT;
ALTER TABLE runs ADD COLUMN repo_url TEXT;
ALTER TABLE runs ADD COLUMN repo_subdir TEXT;
