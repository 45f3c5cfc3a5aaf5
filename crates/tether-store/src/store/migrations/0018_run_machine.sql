-- Which machine's runner runs a run. On this machine's own board it stays NULL (every run is
-- this machine's); the board's SQL is the same on a team's PostgreSQL, where it names the machine.
ALTER TABLE runs ADD COLUMN machine TEXT;
