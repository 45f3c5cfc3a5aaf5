-- Every term of messages_fts and titles_fts, so a prefix query can be rewritten into an OR of the
-- terms under it (see terms.rs). The indexer adds to it as it writes; a term no row holds any more
-- only costs a lookup, so entries leave only when a chat is set to "do not index".
CREATE TABLE fts_terms (term TEXT PRIMARY KEY) WITHOUT ROWID;

CREATE VIRTUAL TABLE temp.messages_vocab USING fts5vocab(main, messages_fts, row);
CREATE VIRTUAL TABLE temp.titles_vocab USING fts5vocab(main, titles_fts, row);
INSERT OR IGNORE INTO fts_terms(term) SELECT term FROM temp.messages_vocab;
INSERT OR IGNORE INTO fts_terms(term) SELECT term FROM temp.titles_vocab;
DROP TABLE temp.messages_vocab;
DROP TABLE temp.titles_vocab;
