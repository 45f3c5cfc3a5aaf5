-- Who works at each machine (the person Tether acts for there: TETHER_USER or the login name), so
-- the team sees people as well as machines. Never a credential: tokens and keys stay on the
-- machines.
ALTER TABLE machines ADD COLUMN person TEXT NOT NULL DEFAULT '';
