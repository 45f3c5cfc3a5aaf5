-- Where a signal came from: the machine whose Tether wrote it. Stamped by the writing session
-- (each machine's write transactions set `tether.machine` first), so every path that sends a
-- signal — an op, a task assignment, a notice inside another write — carries it without the
-- code having to remember. A wake it causes on another machine waits for that machine's person.
ALTER TABLE signals ADD COLUMN machine TEXT DEFAULT NULLIF(current_setting('tether.machine', true), '');
