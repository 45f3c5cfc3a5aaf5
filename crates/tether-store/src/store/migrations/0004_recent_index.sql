-- Listing is "most recent first" over coalesce(updated_at, created_at): an index on exactly that
-- expression lets a list stop after LIMIT rows instead of sorting every session.
CREATE INDEX sessions_recent ON sessions(coalesce(updated_at, created_at, 0) DESC, id);
