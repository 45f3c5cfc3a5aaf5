-- A run's workspace files may have been symbolic links: the link's target is kept so it is put
-- back as the same link (never read through). Signals that came from outside this machine (a
-- cloud run's scoped bearer; later a teammate) are marked, and a run may be held in the queue
-- until the person allows it (`approval`: a wake with write or shell permissions that such a
-- signal caused).
ALTER TABLE run_files ADD COLUMN original_link TEXT;
ALTER TABLE signals ADD COLUMN remote INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN held TEXT;
-- A run's log is kept up to `runs.max_log_mb`; what was left out past it is counted here.
ALTER TABLE runs ADD COLUMN log_dropped_lines INTEGER;
ALTER TABLE runs ADD COLUMN log_dropped_bytes INTEGER;
