-- A chat listed before its messages are read (first start lists every chat, then indexes the
-- newest first) is not searchable yet; everything indexed before this migration is rewritten.
ALTER TABLE sessions ADD COLUMN searchable INTEGER NOT NULL DEFAULT 1;

-- Message ids now come from their chat's real time (index.rs, `message_id_base`), so that a
-- broad search walking ids newest first follows time whatever order chats were indexed in.
-- Ids given in indexing order cannot be renumbered in place: the text is dropped (the FTS index
-- in one step, not row by row through the delete trigger) and the next pass reads it again.
-- Sessions, user metadata and the board stay.
DROP TRIGGER messages_ad;
DELETE FROM messages;
INSERT INTO messages_fts(messages_fts) VALUES ('delete-all');
CREATE TRIGGER messages_ad AFTER DELETE ON messages BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, text) VALUES ('delete', old.id, old.text);
END;
DELETE FROM fts_terms;
UPDATE sessions SET fingerprint = NULL, searchable = 0;
UPDATE sources SET fingerprint = NULL, watermark = NULL;
DELETE FROM skipped;
