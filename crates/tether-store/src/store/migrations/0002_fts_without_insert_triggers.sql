-- FTS5 flushes its in-memory term hash to a new on-disk segment whenever a statement inside the
-- transaction opens a savepoint, and every statement that fires a trigger does. With per-row
-- insert/update triggers, bulk indexing wrote one segment per message and spent most of its time
-- merging them. The indexer now writes FTS rows itself right after each row (see index.rs);
-- the delete triggers stay, since deletes are rare and often cascade.
DROP TRIGGER messages_ai;
DROP TRIGGER messages_au;
DROP TRIGGER sessions_ai;
DROP TRIGGER sessions_au;

-- A 16 MB term buffer (default 1 MB): fewer, larger segments per bulk pass, less merging later.
INSERT INTO messages_fts(messages_fts, rank) VALUES ('hashsize', 16777216);
