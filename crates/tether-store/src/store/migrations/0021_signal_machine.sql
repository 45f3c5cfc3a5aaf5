-- Where a signal came from on a team's board: the machine whose Tether wrote it. A wake it causes
-- is held for the person of the machine the woken chat runs on when that is another machine
-- (runs::trust). On this machine's own board it stays NULL: everything is this machine's.
ALTER TABLE signals ADD COLUMN machine TEXT;
