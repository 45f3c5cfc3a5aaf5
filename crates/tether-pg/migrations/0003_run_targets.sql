-- Where a run may go: `origin` is the machine that queued it, `target_machine` the one it must run
-- on (`--on`, or its origin when no other machine could find its folder), `target_labels` (a JSON
-- list) what a runner must have (`--labels`). `repo_url` and `repo_subdir` name the workspace so
-- another machine can find or clone it. `machine` now says which runner took it.
ALTER TABLE runs ADD COLUMN origin TEXT;
ALTER TABLE runs ADD COLUMN target_machine TEXT;
ALTER TABLE runs ADD COLUMN target_labels TEXT;
ALTER TABLE runs ADD COLUMN repo_url TEXT;
ALTER TABLE runs ADD COLUMN repo_subdir TEXT;
-- A run's waking up reaches every machine at once: each board write (a revision bumped)
-- notifies `tether_board`; the rows stay the truth (a listener that missed it polls).
CREATE FUNCTION tether_board_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('tether_board', '');
    RETURN NULL;
END $$;
CREATE TRIGGER counters_notify AFTER UPDATE ON counters
    FOR EACH STATEMENT EXECUTE FUNCTION tether_board_notify();
