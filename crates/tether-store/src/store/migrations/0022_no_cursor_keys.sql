-- A Cursor CLI chat was fingerprinted by its store's meta row as it was, and since 2026.08 that
-- row holds `blobEncryptionKey`: no key of Cursor's may be kept here. Every such fingerprint (the
-- only ones that are JSON) is dropped, with the fingerprint of the file it came from, so the next
-- pass reads the store again and keeps a hash instead. `secure_delete` overwrites the freed bytes
-- (the `Store::open` that runs this checkpoints the log afterwards, so no old page stays behind).
PRAGMA secure_delete = ON;
UPDATE sessions SET fingerprint = NULL WHERE fingerprint LIKE '{%';
UPDATE skipped SET fingerprint = '' WHERE fingerprint LIKE '{%';
UPDATE sources SET fingerprint = NULL WHERE kind = 'cli_store';
PRAGMA secure_delete = FAST;
