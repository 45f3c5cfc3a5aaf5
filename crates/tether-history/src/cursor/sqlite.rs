//! Opening Cursor's SQLite files without ever writing to them.
//!
//! SQLite itself would create `-wal`/`-shm` next to a WAL-mode file opened read-only when they
//! are missing, so we look first: rollback-journal files are opened `SQLITE_OPEN_READ_ONLY` +
//! `query_only`; live WAL files (both sidecars present) also with `readonly_shm=1`, so not even
//! the shared-memory index is written (SQLite then keeps a private wal-index in memory when it
//! must); a WAL-mode file without its `-wal` has nothing uncheckpointed and is opened
//! `immutable=1`; a `-wal` without its `-shm` (Cursor crashed) is read from a private snapshot copy. No transaction is held
//! longer than one statement batch, so Cursor's writers never wait on us for long.
//!
//! While Cursor writes continuously (an answer streaming), the watcher's passes come several a
//! second: [`CursorDb::open_kept`] hands back the connection the last pass [`CursorDb::keep`]s,
//! so a pass does not open the file, parse its schema and prepare its statements again.
//! [`release_kept`] closes them once the watcher is quiet (no handle on Cursor's files is held
//! while nothing happens).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{LazyLock, Mutex};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, OptionalExtension, params};

use crate::error::{Error, Result};

/// How a Cursor database was opened, for `doctor`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpenMode {
    ReadOnly,
    Immutable,
    Snapshot,
}

pub struct CursorDb {
    pub conn: Connection,
    /// The file asked for (not a snapshot copy of it).
    path: PathBuf,
    pub mode: OpenMode,
    tables: std::cell::RefCell<Vec<String>>,
    _snapshot: Option<tempfile::TempDir>,
    /// What the file was when opened (see [`Shape`]); a kept connection is reused only while
    /// the file still has this shape.
    shape: Option<Shape>,
    /// Cursor's schema version when the tables were listed (see [`CursorDb::in_one_read`]).
    schema: std::cell::Cell<i64>,
}

/// The file and its sidecars as a connection saw them: the same file (not one put in its place)
/// with the same sidecars, so the way it was opened still holds. A change of journal mode makes
/// or removes the `-wal` and `-shm`, so the sidecars stand for the header's mode (reading the
/// header is an open of Cursor's file, an event for our own watcher, on every pass).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Shape {
    file: (u64, u64),
    wal_file: bool,
    shm_file: bool,
}

impl Shape {
    fn of(path: &Path) -> Option<Self> {
        let file = crate::platform::file_id(&std::fs::metadata(path).ok()?)?;
        Some(Self { file, wal_file: sidecar(path, "-wal").exists(), shm_file: sidecar(path, "-shm").exists() })
    }
}

/// Connections kept between the watcher's passes, by file.
static KEPT: LazyLock<Mutex<HashMap<PathBuf, CursorDb>>> = LazyLock::new(Default::default);

/// Closes every kept connection (the watcher calls it once quiet).
pub fn release_kept() {
    let gone = std::mem::take(&mut *KEPT.lock().unwrap_or_else(|p| p.into_inner()));
    drop(gone);
}

/// Sidecar path: `state.vscdb` → `state.vscdb-wal`.
pub fn sidecar(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

/// Is the file in WAL mode, judging by its header (bytes 18/19 == 2)?
fn header_says_wal(path: &Path) -> bool {
    use std::io::Read;
    let mut buf = [0u8; 20];
    std::fs::File::open(path).and_then(|mut f| f.read_exact(&mut buf)).is_ok() && buf[18] == 2 && buf[19] == 2
}

impl CursorDb {
    /// Open a Cursor DB for reading. `scratch` is our own directory for snapshot copies.
    pub fn open(path: &Path, scratch: &Path) -> Result<Self> {
        if !path.is_file() {
            return Err(Error::io(format!("opening {}", path.display()), std::io::ErrorKind::NotFound.into()));
        }
        let wal = sidecar(path, "-wal");
        let shm = sidecar(path, "-shm");
        let is_wal = header_says_wal(path);
        let (conn, mode, snap) = if is_wal && !wal.exists() {
            (open_uri(path, "immutable=1")?, OpenMode::Immutable, None)
        } else if is_wal && !shm.exists() {
            let (dir, copy) = snapshot(path, scratch)?;
            (open_plain(&copy)?, OpenMode::Snapshot, Some(dir))
        } else if is_wal {
            // A plain read-only reader still writes the -shm (it rebuilds a stale wal-index header
            // and moves read marks). With `readonly_shm` it maps the -shm read-only and, when that
            // is not enough, builds a private wal-index in its own memory from the -wal.
            (open_uri(path, "readonly_shm=1")?, OpenMode::ReadOnly, None)
        } else {
            (open_plain(path)?, OpenMode::ReadOnly, None)
        };
        conn.busy_timeout(Duration::from_millis(500))?;
        conn.pragma_update(None, "query_only", true)?;
        // Every statement a pass runs stays prepared on a kept connection (rusqlite keeps 16).
        conn.set_prepared_statement_cache_capacity(64);
        let (tables, schema) = retry_busy(|| {
            let txn = conn.unchecked_transaction()?;
            let listed = (list_tables(&txn)?, schema_version(&txn)?);
            txn.commit()?;
            Ok(listed)
        })?;
        Ok(Self {
            conn,
            path: path.to_owned(),
            mode,
            tables: tables.into(),
            _snapshot: snap,
            shape: None,
            schema: schema.into(),
        })
    }

    /// [`CursorDb::open`], or the connection a pass kept ([`CursorDb::keep`]) when the file is
    /// still the one it opened, in the same shape. A pass starts with [`CursorDb::in_one_read`],
    /// which lists the tables again if Cursor changed its schema meanwhile.
    pub fn open_kept(path: &Path, scratch: &Path) -> Result<Self> {
        let kept = KEPT.lock().unwrap_or_else(|p| p.into_inner()).remove(path);
        let shape = Shape::of(path);
        if let Some(db) = kept
            && shape.is_some()
            && db.shape == shape
        {
            return Ok(db);
        }
        let mut db = Self::open(path, scratch)?;
        db.shape = shape;
        Ok(db)
    }

    /// Keeps this connection for the next [`CursorDb::open_kept`] of its file. Only a connection
    /// on the live file in read-only mode is kept: an immutable one must not see the file change,
    /// and a snapshot is a copy of a moment.
    pub fn keep(self) {
        if self.mode == OpenMode::ReadOnly && self.shape.is_some() {
            KEPT.lock().unwrap_or_else(|p| p.into_inner()).insert(self.path.clone(), self);
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Runs `f`'s statements in one read transaction: one lock taken and released (held while
    /// `f` runs, so `f` must be a few quick look-ups), and all of them see the same moment.
    /// The tables are listed again first when Cursor changed its schema since they were (a
    /// kept connection's).
    pub fn in_one_read<T>(&self, f: impl FnOnce() -> Result<T>) -> Result<T> {
        self.conn.prepare_cached("BEGIN")?.execute([])?;
        let out = retry_busy(|| {
            let v = schema_version(&self.conn)?;
            if v != self.schema.get() {
                *self.tables.borrow_mut() = list_tables(&self.conn)?;
                self.schema.set(v);
            }
            Ok(())
        })
        .map_err(Into::into)
        .and_then(|()| f());
        // A read-only transaction: ending it cannot lose anything.
        let _ = self.conn.prepare_cached("COMMIT").and_then(|mut s| s.execute([]));
        out
    }

    /// The value of one row by rowid (`None`: no such row; `Some(None)`: SQL NULL).
    pub fn value_at(&self, table: Table, rowid: i64) -> Result<Option<Option<Vec<u8>>>> {
        if !self.has_table(table.name())? {
            return Ok(None);
        }
        let sql = format!("SELECT key, value FROM {} WHERE rowid = ?1", table.name());
        retry_busy(|| {
            let mut stmt = self.conn.prepare_cached(&sql)?;
            let mut rows = stmt.query([rowid])?;
            match rows.next()? {
                Some(r) if !super::value::is_secret_key(&key_str(r)?) => Ok(Some(value_bytes(r, 1)?)),
                _ => Ok(None),
            }
        })
        .map_err(Into::into)
    }

    pub fn has_table(&self, name: &str) -> Result<bool> {
        Ok(self.tables.borrow().iter().any(|t| t == name))
    }

    /// Point lookup of one key. Refuses secret keys outright.
    pub fn get(&self, table: Table, key: &str) -> Result<Option<Option<Vec<u8>>>> {
        if super::value::is_secret_key(key) || !self.has_table(table.name())? {
            return Ok(None);
        }
        let sql = format!("SELECT value FROM {} WHERE key = ?1", table.name());
        retry_busy(|| {
            let mut stmt = self.conn.prepare_cached(&sql)?;
            let mut rows = stmt.query([key])?;
            match rows.next()? {
                Some(r) => Ok(Some(value_bytes(r, 0)?)),
                None => Ok(None),
            }
        })
        .map_err(Into::into)
    }

    /// Key-range scan `[prefix, prefix+1)`: uses the `UNIQUE(key)` index, never a `LIKE` scan.
    /// Calls `f(key, rowid, value)` per row; rows with a NULL key are never in range. Read a page
    /// at a time (see [`PAGE_ROWS`]).
    pub fn scan_prefix(
        &self,
        table: Table,
        prefix: &str,
        with_values: bool,
        mut f: impl FnMut(&str, i64, Option<&[u8]>),
    ) -> Result<()> {
        let cols = if with_values { "key, rowid, value" } else { "key, rowid, NULL" };
        let page = if with_values { PAGE_VALUES } else { PAGE_ROWS };
        self.paged(
            table,
            cols,
            prefix,
            page,
            // A secret's value is never copied out of Cursor's file.
            |r| {
                let key = key_str(r)?;
                if super::value::is_secret_key(&key) {
                    return Ok(None);
                }
                Ok(Some((key, r.get::<_, i64>(1)?, value_bytes(r, 2)?)))
            },
            |kept| {
                if let Some((key, rowid, v)) = kept {
                    f(&key, rowid, v.as_deref());
                }
            },
        )
    }

    /// `(key, rowid, byte length)` per key in range, from record headers only: SQLite answers
    /// `octet_length` without loading the value, so this is cheap even for huge values.
    pub fn stat_prefix(&self, table: Table, prefix: &str, mut f: impl FnMut(&str, i64, i64)) -> Result<()> {
        self.paged(
            table,
            "key, rowid, coalesce(octet_length(value), -1)",
            prefix,
            PAGE_ROWS,
            |r| Ok((key_str(r)?, r.get(1)?, r.get(2)?)),
            |(key, rowid, len)| f(&key, rowid, len),
        )
    }

    /// `(key, rowid)` per key in range, answered from the key's unique index alone: no table row
    /// is visited, where `stat_prefix` seeks each one (a random read per key in a big file).
    pub fn keys_with_rowids(&self, table: Table, prefix: &str, mut f: impl FnMut(&str, i64)) -> Result<()> {
        self.paged(
            table,
            "key, rowid",
            prefix,
            PAGE_ROWS,
            |r| Ok((key_str(r)?, r.get(1)?)),
            |(key, rowid)| f(&key, rowid),
        )
    }

    /// `SELECT cols` (the key first) over the key range, in key order, `page` rows per statement
    /// at most, and no longer than [`HOLD`]. Each statement is a read transaction of its own: in
    /// rollback-journal mode a reader's lock holds Cursor's commit until the statement ends, so a
    /// walk of every key (tens of thousands at 5 GB) in one statement made Cursor wait for all of
    /// it; between pages Cursor's writes go through. A page of rows is not a measure of time
    /// (values of a few bytes or of a megabyte, pages cached or read from disk), so a statement
    /// also ends once it has held the lock for `HOLD`, and the next goes on from its last key.
    ///
    /// Inside the statement a row is only copied out (`row`); what the caller does with it (`f`:
    /// decoding a bubble's JSON is most of a walk's time) runs after the statement has let go
    /// of the lock. A page read again after a busy lock is copied afresh, so `f` sees each row once.
    fn paged<R>(
        &self,
        table: Table,
        cols: &str,
        prefix: &str,
        page: usize,
        mut row: impl FnMut(&rusqlite::Row<'_>) -> rusqlite::Result<R>,
        mut f: impl FnMut(R),
    ) -> Result<()> {
        if !self.has_table(table.name())? {
            return Ok(());
        }
        let name = table.name();
        let first = format!("SELECT {cols} FROM {name} WHERE key >= ?1 AND key < ?2 ORDER BY key LIMIT {page}");
        let next = format!("SELECT {cols} FROM {name} WHERE key > ?1 AND key < ?2 ORDER BY key LIMIT {page}");
        let end = prefix_end(prefix);
        let mut from: Option<String> = None;
        loop {
            let (rows, last) = retry_busy(|| {
                let mut stmt = self.conn.prepare_cached(if from.is_some() { &next } else { &first })?;
                let mut rows = stmt.query(params![from.as_deref().unwrap_or(prefix), end])?;
                let until = std::time::Instant::now() + HOLD;
                let mut out = Vec::new();
                while let Some(r) = rows.next()? {
                    out.push(row(r)?);
                    if out.len() == page || std::time::Instant::now() >= until {
                        // Ends the statement (its lock) here; the walk goes on after this key.
                        let last = key_str(r)?;
                        return Ok((out, Some(last)));
                    }
                }
                Ok((out, None))
            })?;
            rows.into_iter().for_each(&mut f);
            match last {
                Some(k) => from = Some(k),
                None => return Ok(()),
            }
        }
    }

    /// The byte length of one row's value (`-1` for NULL), from its record header.
    pub fn value_len(&self, table: Table, rowid: i64) -> Result<Option<i64>> {
        let sql = format!("SELECT coalesce(octet_length(value), -1) FROM {} WHERE rowid = ?1", table.name());
        retry_busy(|| self.conn.prepare_cached(&sql)?.query_row([rowid], |r| r.get(0)).optional()).map_err(Into::into)
    }

    /// Keys written after `rowid` (new or replaced rows get a higher rowid), and the max rowid.
    pub fn keys_after(&self, table: Table, rowid: i64) -> Result<(Vec<String>, i64)> {
        if !self.has_table(table.name())? {
            return Ok((Vec::new(), 0));
        }
        let sql = format!("SELECT key FROM {} WHERE rowid > ?1", table.name());
        let keys = retry_busy(|| {
            let mut stmt = self.conn.prepare_cached(&sql)?;
            let rows = stmt.query_map([rowid], |r| r.get::<_, Option<String>>(0))?;
            rows.filter_map(|r| r.transpose()).collect::<rusqlite::Result<Vec<_>>>()
        })?;
        Ok((keys, self.max_rowid(table)?))
    }

    pub fn max_rowid(&self, table: Table) -> Result<i64> {
        if !self.has_table(table.name())? {
            return Ok(0);
        }
        let sql = format!("SELECT coalesce(max(rowid), 0) FROM {}", table.name());
        // Cached: asked on every pass of the watcher, several a second while Cursor streams.
        Ok(retry_busy(|| self.conn.prepare_cached(&sql)?.query_row([], |r| r.get(0)))?)
    }

    /// Count rows whose key is NULL (damage we report but cannot read).
    pub fn null_keys(&self, table: Table) -> Result<u64> {
        if !self.has_table(table.name())? {
            return Ok(0);
        }
        let sql = format!("SELECT count(*) FROM {} WHERE key IS NULL", table.name());
        Ok(retry_busy(|| self.conn.query_row(&sql, [], |r| r.get::<_, i64>(0)))? as u64)
    }
}

fn list_tables(conn: &Connection) -> rusqlite::Result<Vec<String>> {
    let mut stmt = conn.prepare_cached("SELECT name FROM sqlite_schema WHERE type = 'table'")?;
    stmt.query_map([], |r| r.get::<_, String>(0))?.collect()
}

fn schema_version(conn: &Connection) -> rusqlite::Result<i64> {
    conn.prepare_cached("PRAGMA schema_version")?.query_row([], |r| r.get(0))
}

/// The longest a walk's statement holds its read lock on Cursor's file (see
/// [`CursorDb::paged`]). A commit that finds the lock held sleeps 1, 2, then 5 ms (SQLite's busy
/// handler) before it tries again: a hold of a few milliseconds costs Cursor up to 8.
const HOLD: Duration = Duration::from_millis(2);

/// Rows per statement of a key-range walk (see [`CursorDb::paged`]), and of a read with values
/// (a chat's bubbles: a few KB each).
const PAGE_ROWS: usize = 2048;
const PAGE_VALUES: usize = 256;

#[derive(Debug, Clone, Copy)]
pub enum Table {
    ItemTable,
    CursorDiskKv,
}

impl Table {
    fn name(self) -> &'static str {
        match self {
            Table::ItemTable => "ItemTable",
            Table::CursorDiskKv => "cursorDiskKV",
        }
    }
}

/// The smallest string greater than every string starting with `prefix`.
pub fn prefix_end(prefix: &str) -> String {
    let mut bytes = prefix.as_bytes().to_vec();
    while let Some(last) = bytes.pop() {
        if last < 0x7f {
            bytes.push(last + 1);
            return String::from_utf8(bytes).unwrap_or_else(|_| format!("{prefix}\u{10ffff}"));
        }
    }
    format!("{prefix}\u{10ffff}")
}

fn key_str(r: &rusqlite::Row<'_>) -> rusqlite::Result<String> {
    use rusqlite::types::ValueRef;
    Ok(match r.get_ref(0)? {
        ValueRef::Text(t) | ValueRef::Blob(t) => String::from_utf8_lossy(t).into_owned(),
        _ => String::new(),
    })
}

fn value_bytes(r: &rusqlite::Row<'_>, i: usize) -> rusqlite::Result<Option<Vec<u8>>> {
    use rusqlite::types::ValueRef;
    Ok(match r.get_ref(i)? {
        ValueRef::Text(t) | ValueRef::Blob(t) => Some(t.to_vec()),
        _ => None,
    })
}

fn open_plain(path: &Path) -> Result<Connection> {
    Ok(Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX | OpenFlags::SQLITE_OPEN_URI,
    )?)
}

fn open_uri(path: &Path, query: &str) -> Result<Connection> {
    let encoded: String = path
        .to_string_lossy()
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'/' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect();
    let uri = format!("file:{encoded}?mode=ro&{query}");
    Ok(Connection::open_with_flags(
        uri,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX | OpenFlags::SQLITE_OPEN_URI,
    )?)
}

fn snapshot(path: &Path, scratch: &Path) -> Result<(tempfile::TempDir, PathBuf)> {
    let dir = {
        std::fs::create_dir_all(scratch).map_err(|e| Error::io("creating the scratch dir", e))?;
        tempfile::TempDir::new_in(scratch).map_err(|e| Error::io("creating a snapshot dir", e))?
    };
    let copy = dir.path().join("snapshot.db");
    std::fs::copy(path, &copy).map_err(|e| Error::io(format!("copying {}", path.display()), e))?;
    std::fs::copy(sidecar(path, "-wal"), sidecar(&copy, "-wal"))
        .map_err(|e| Error::io(format!("copying the -wal of {}", path.display()), e))?;
    Ok((dir, copy))
}

/// Retry a statement a few times when Cursor holds a write lock longer than our busy timeout.
fn retry_busy<T>(mut f: impl FnMut() -> rusqlite::Result<T>) -> rusqlite::Result<T> {
    let mut attempt = 0;
    loop {
        match f() {
            Err(rusqlite::Error::SqliteFailure(e, _))
                if matches!(e.code, rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
                    && attempt < 3 =>
            {
                attempt += 1;
                std::thread::sleep(Duration::from_millis(50 << attempt));
            }
            other => return other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A walk longer than a page (each page its own statement, so Cursor's writes get between
    /// them) sees every row in range once, in order, and nothing outside it.
    #[test]
    fn a_key_range_walk_over_many_pages_sees_every_row_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.vscdb");
        let c = Connection::open(&path).unwrap();
        c.execute_batch("CREATE TABLE cursorDiskKV (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB); BEGIN;").unwrap();
        let n = PAGE_ROWS * 2 + 7;
        for i in 0..n {
            c.execute("INSERT INTO cursorDiskKV VALUES (?1, ?2)", params![format!("bubbleId:c:{i:06}"), "{}"]).unwrap();
        }
        c.execute_batch("INSERT INTO cursorDiskKV VALUES ('bubbleId:d:1', '{}'); INSERT INTO cursorDiskKV VALUES ('bubbleId:b:1', '{}'); COMMIT;").unwrap();
        drop(c);
        let db = CursorDb::open(&path, dir.path()).unwrap();
        let mut keys = Vec::new();
        db.keys_with_rowids(Table::CursorDiskKv, "bubbleId:c:", |k, _| keys.push(k.to_owned())).unwrap();
        assert_eq!(keys, (0..n).map(|i| format!("bubbleId:c:{i:06}")).collect::<Vec<_>>());
        let mut values = 0;
        db.scan_prefix(Table::CursorDiskKv, "bubbleId:c:", true, |_, _, v| values += usize::from(v.is_some())).unwrap();
        assert_eq!(values, n);
    }

    /// What the caller does with a walk's rows (decoding a bubble's JSON) happens after the
    /// statement that read them has let go of its lock: Cursor commits meanwhile without
    /// waiting, and the walk, split into a statement per row here, still sees every row once.
    #[test]
    fn cursor_commits_while_a_walks_rows_are_handled() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.vscdb");
        let c = Connection::open(&path).unwrap();
        c.execute_batch("CREATE TABLE cursorDiskKV (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)").unwrap();
        for i in 0..6 {
            c.execute("INSERT INTO cursorDiskKV VALUES (?1, 'v')", [format!("bubbleId:c:{i}")]).unwrap();
        }
        // Cursor, in rollback-journal mode, with no busy timeout: a held read lock fails it.
        let journal: String = c.query_row("PRAGMA journal_mode", [], |r| r.get(0)).unwrap();
        assert_eq!(journal, "delete");
        let db = CursorDb::open(&path, dir.path()).unwrap();
        let mut seen = Vec::new();
        db.scan_prefix(Table::CursorDiskKv, "bubbleId:c:", true, |k, _, _| {
            seen.push(k.to_owned());
            c.execute("INSERT INTO cursorDiskKV VALUES ('bubbleId:z:1', ?1)", [k])
                .expect("Cursor's commit beside the walk");
            // Longer than the hold: the next rows are read by a statement of their own.
            std::thread::sleep(HOLD + Duration::from_millis(1));
        })
        .unwrap();
        assert_eq!(seen, (0..6).map(|i| format!("bubbleId:c:{i}")).collect::<Vec<_>>());
    }

    /// A kept connection is used again while the file is the same one (its tables listed again
    /// when Cursor changes its schema); a file put in its place, or a connection that must not
    /// be kept, gives a fresh one.
    #[test]
    fn a_kept_connection_serves_the_next_pass_until_the_file_changes_shape() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.vscdb");
        let make = |p: &Path, v: &str| {
            let c = Connection::open(p).unwrap();
            c.execute_batch("CREATE TABLE cursorDiskKV (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)").unwrap();
            c.execute("INSERT INTO cursorDiskKV VALUES ('k', ?1)", [v]).unwrap();
        };
        make(&path, "one");
        // A setting of the connection's own marks it (nothing is written to the file).
        let mark = |db: &CursorDb| db.conn.query_row("PRAGMA cache_size", [], |r| r.get::<_, i64>(0)).unwrap();
        let value = |db: &CursorDb| db.get(Table::CursorDiskKv, "k").unwrap().flatten().unwrap();
        let db = CursorDb::open_kept(&path, dir.path()).unwrap();
        db.conn.pragma_update(None, "cache_size", -1234).unwrap();
        db.keep();
        // Cursor writes in place: the same connection reads the new value.
        Connection::open(&path).unwrap().execute("UPDATE cursorDiskKV SET value = 'two'", []).unwrap();
        let db = CursorDb::open_kept(&path, dir.path()).unwrap();
        assert_eq!((mark(&db), value(&db)), (-1234, b"two".to_vec()));
        db.keep();
        // A new table (Cursor migrating its schema): listed again by the pass's first read.
        Connection::open(&path).unwrap().execute_batch("CREATE TABLE composerHeaders (x)").unwrap();
        let db = CursorDb::open_kept(&path, dir.path()).unwrap();
        assert!(!db.has_table("composerHeaders").unwrap());
        db.in_one_read(|| Ok(())).unwrap();
        assert_eq!((mark(&db), db.has_table("composerHeaders").unwrap()), (-1234, true));
        db.keep();
        // Another file renamed over it: read afresh.
        let other = dir.path().join("new.vscdb");
        make(&other, "three");
        std::fs::rename(&other, &path).unwrap();
        let db = CursorDb::open_kept(&path, dir.path()).unwrap();
        assert_eq!((mark(&db) != -1234, value(&db)), (true, b"three".to_vec()));
        // A WAL-mode file with nothing uncheckpointed is opened immutable: never kept.
        let c = Connection::open(&path).unwrap();
        let _: String = c.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0)).unwrap();
        drop(c);
        let db = CursorDb::open_kept(&path, dir.path()).unwrap();
        assert_eq!(db.mode, OpenMode::Immutable);
        db.keep();
        assert!(!KEPT.lock().unwrap().contains_key(&path));
    }

    #[test]
    fn prefix_end_bounds_the_range() {
        assert_eq!(prefix_end("bubbleId:abc:"), "bubbleId:abc;");
        assert_eq!(prefix_end("composerData:"), "composerData;");
    }
}
