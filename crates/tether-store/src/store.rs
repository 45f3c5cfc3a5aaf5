//! Our SQLite database: opening it with the right pragmas and migrating it.
//!
//! Knows nothing about Cursor. Migrations are append-only files applied atomically by
//! rusqlite_migration (tracked in `PRAGMA user_version`); never edit a released one.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};
use rusqlite_migration::{M, Migrations};

use crate::announce::Announcer;
pub use crate::changed::{Changed, Revisions};
use crate::error::Result;

const MIGRATIONS: &[&str] = &[
    include_str!("store/migrations/0001_index.sql"),
    include_str!("store/migrations/0002_fts_without_insert_triggers.sql"),
    include_str!("store/migrations/0003_live_state.sql"),
    include_str!("store/migrations/0004_recent_index.sql"),
    include_str!("store/migrations/0005_tasks.sql"),
    include_str!("store/migrations/0006_fts_terms.sql"),
    include_str!("store/migrations/0007_signals.sql"),
    include_str!("store/migrations/0008_runs.sql"),
    include_str!("store/migrations/0009_wake_by_resume.sql"),
    include_str!("store/migrations/0010_cloud_runs.sql"),
    include_str!("store/migrations/0011_cloud_callbacks.sql"),
    include_str!("store/migrations/0012_time_ordered_messages.sql"),
    include_str!("store/migrations/0013_runs_safety.sql"),
    include_str!("store/migrations/0014_run_worktrees.sql"),
    include_str!("store/migrations/0015_usage.sql"),
    include_str!("store/migrations/0016_code_origin.sql"),
    include_str!("store/migrations/0017_cloud_agent_index.sql"),
    include_str!("store/migrations/0018_run_machine.sql"),
    include_str!("store/migrations/0019_run_targets.sql"),
    include_str!("store/migrations/0020_shared_chats.sql"),
    include_str!("store/migrations/0021_signal_machine.sql"),
    include_str!("store/migrations/0022_no_cursor_keys.sql"),
    include_str!("store/migrations/0023_agent_usage.sql"),
    include_str!("store/migrations/0024_pending_sessions.sql"),
];

/// The migration that removes Cursor keys from earlier indexes: an open that runs it also
/// checkpoints the log, whose older frames still hold the pages as they were.
const NO_CURSOR_KEYS: usize = 22;

fn migrations() -> Migrations<'static> {
    Migrations::new(
        MIGRATIONS
            .iter()
            .enumerate()
            .map(|(i, sql)| if i + 1 == 15 { M::up_with_hook(sql, widen_run_status) } else { M::up(sql) })
            .collect(),
    )
}

/// Migration 15's hook: lets `runs.status` be `over_budget`. The CHECK is widened in the stored
/// schema text (every row that was valid stays valid, nothing on disk changes) and the schema
/// version bumped so every connection reads the new text: SQLite's documented way to change a
/// constraint without rebuilding a table, which under foreign keys would cascade into its
/// children. Checked: exactly one table changed, and the new CHECK holds.
fn widen_run_status(txn: &rusqlite::Transaction<'_>) -> rusqlite_migration::HookResult {
    const OLD: &str = "'cancelled', 'lost'))";
    const NEW: &str = "'cancelled', 'lost', 'over_budget'))";
    let version: i64 = txn.query_row("PRAGMA schema_version", [], |r| r.get(0))?;
    txn.execute_batch("PRAGMA writable_schema = ON")?;
    let changed = txn.execute(
        "UPDATE sqlite_schema SET sql = replace(sql, ?1, ?2) WHERE type = 'table' AND name = 'runs' AND instr(sql, ?1) > 0",
        [OLD, NEW],
    )?;
    txn.execute_batch(&format!("PRAGMA schema_version = {}; PRAGMA writable_schema = OFF;", version + 1))?;
    if changed != 1 {
        return Err(rusqlite_migration::HookError::Hook(format!("runs.status CHECK not found to widen ({changed})")));
    }
    let ok: i64 =
        txn.query_row("PRAGMA integrity_check(runs)", [], |r| r.get::<_, String>(0).map(|s| (s == "ok") as i64))?;
    if ok != 1 {
        return Err(rusqlite_migration::HookError::Hook("runs failed its integrity check after widening".into()));
    }
    Ok(())
}

/// The index database. One writer connection guarded by a mutex; readers open their own.
pub struct Store {
    path: PathBuf,
    writer: Mutex<Connection>,
    readers: Mutex<Vec<Connection>>,
    /// The board's revisions as this process last announced them (its own writes, or others'
    /// seen by [`Store::foreign_changes`]), and whom it tells: every write is announced once, by
    /// whoever made it (the same bookkeeping as the team's pool, [`crate::announce`]).
    announced: Announcer,
    /// The OS watcher of the WAL while anyone watches ([`Store::watch_writes`]).
    writes: Mutex<std::sync::Weak<WriteHub>>,
    /// The writer connection's `PRAGMA data_version` at the last [`Store::others_wrote`].
    seen_version: std::sync::atomic::AtomicI64,
}

impl Revisions {
    fn read(c: &Connection) -> Result<Self> {
        let mut r = Revisions::default();
        let mut stmt = c.prepare_cached(
            "SELECT name, value FROM counters WHERE name IN ('tasks_rev', 'signals_rev', 'runs_rev')",
        )?;
        for row in stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))? {
            let (name, v) = row?;
            match name.as_str() {
                "tasks_rev" => r.tasks = v,
                "signals_rev" => r.signals = v,
                _ => r.runs = v,
            }
        }
        Ok(r)
    }
}

impl crate::sql::Database for Store {
    fn read_with(&self, f: &mut dyn FnMut(&dyn crate::sql::Sql) -> Result<()>) -> Result<()> {
        self.read(|c| f(c))
    }

    fn write_with(&self, f: &mut dyn FnMut(&dyn crate::sql::Sql) -> Result<()>) -> Result<Changed> {
        self.durable_changes(|t| f(t)).map(|((), c)| c)
    }

    fn append_with(&self, f: &mut dyn FnMut(&dyn crate::sql::Sql) -> Result<()>) -> Result<()> {
        let mut conn = self.writer();
        let txn = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        f(&txn)?;
        txn.commit()?;
        Ok(())
    }

    fn foreign_changes(&self) -> Result<Changed> {
        Store::foreign_changes(self)
    }
}

/// Calls back when any process writes the database (its WAL changes), or another file of the
/// store's directory (`settings.json`), so readers that care about other processes' writes need
/// not poll. Stops when dropped. In-memory stores never call back.
///
/// However many parts of the daemon watch, the store keeps one OS watcher of its directory (one
/// [`crate::file_events`] feed and its thread) and calls back those whose file was written; it goes when
/// the last one is dropped. (A second watcher of the same directory received every WAL write of
/// the index as well: a wake-up of its thread for nothing, several a second while Cursor streams.)
pub struct WriteWatcher {
    hub: Option<(Arc<WriteHub>, u64)>,
}

impl Drop for WriteWatcher {
    fn drop(&mut self) {
        if let Some((hub, id)) = self.hub.take() {
            hub.lock().retain(|(i, _, _)| *i != id);
        }
    }
}

type OnWrite = Box<dyn Fn() + Send>;

/// Who is called back, for a write of which file of the store's directory (a file name).
type Subscribers = Vec<(u64, std::ffi::OsString, OnWrite)>;

/// The one OS watcher of a store's directory and whom it calls back.
struct WriteHub {
    subscribers: Arc<Mutex<Subscribers>>,
    next: std::sync::atomic::AtomicU64,
    _feed: crate::file_events::Feed,
}

impl WriteHub {
    fn lock(&self) -> std::sync::MutexGuard<'_, Subscribers> {
        self.subscribers.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn start(path: &Path) -> Result<Option<Self>> {
        use crate::file_events::{self, News};
        let Some(dir) = path.parent() else { return Ok(None) };
        let subscribers: Arc<Mutex<Subscribers>> = Arc::default();
        let subs = Arc::clone(&subscribers);
        let feed = file_events::start(&[(dir.to_path_buf(), false)], move |news| {
            let subs = subs.lock().unwrap_or_else(|p| p.into_inner());
            match news {
                // Written or created: a file that went away has nothing new to read.
                News::Paths(paths) => {
                    for (_, name, on_write) in subs.iter() {
                        if paths.iter().any(|p| p.file_name() == Some(name.as_os_str()) && p.exists()) {
                            on_write();
                        }
                    }
                }
                // Events were lost: any of them may have been written.
                News::Rescan => subs.iter().for_each(|(_, _, on_write)| on_write()),
                News::Error(e) => tracing::warn!(error = %e, "watching the store's folder"),
            }
        })?;
        Ok(Some(Self { subscribers, next: Default::default(), _feed: feed }))
    }
}

impl Store {
    /// Calls back when any process writes the database (its WAL).
    pub fn watch_writes(&self, on_write: impl Fn() + Send + 'static) -> Result<WriteWatcher> {
        let Some(name) = self.path.file_name() else { return Ok(WriteWatcher { hub: None }) };
        let mut wal = name.to_owned();
        wal.push("-wal");
        self.watch_file(wal, on_write)
    }

    /// Calls back when the file `name` of the store's directory is created or written.
    pub fn watch_file(
        &self,
        name: impl Into<std::ffi::OsString>,
        on_write: impl Fn() + Send + 'static,
    ) -> Result<WriteWatcher> {
        if self.path.as_os_str().is_empty() {
            return Ok(WriteWatcher { hub: None });
        }
        let mut shared = self.writes.lock().unwrap_or_else(|p| p.into_inner());
        let hub = match shared.upgrade() {
            Some(hub) => hub,
            None => match WriteHub::start(&self.path)? {
                Some(hub) => {
                    let hub = Arc::new(hub);
                    *shared = Arc::downgrade(&hub);
                    hub
                }
                None => return Ok(WriteWatcher { hub: None }),
            },
        };
        let id = hub.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        hub.lock().push((id, name.into(), Box::new(on_write)));
        Ok(WriteWatcher { hub: Some((hub, id)) })
    }
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("path", &self.path).finish_non_exhaustive()
    }
}

impl Store {
    /// Open (creating if needed, private to this user) and migrate to the latest schema.
    ///
    /// Processes opening one data dir at once (the daemon starting at login while a CLI command
    /// runs) take turns: an OS file lock is held from reading the schema version to the last
    /// migration, so the schema is applied once and the others find it current. Without it, two
    /// first opens both see version 0 and one fails ("table already exists") or gets
    /// SQLITE_BUSY, which no busy timeout waits out.
    pub fn open(path: &Path) -> Result<Self> {
        let _turn = migration_lock(path)?;
        create_private(path)?;
        let mut conn = Connection::open(path)?;
        configure(&conn)?;
        let before: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        migrations().to_latest(&mut conn)?;
        if (1..NO_CURSOR_KEYS as i64).contains(&before) {
            conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
        }
        conn.pragma_update(None, "cache_size", WRITER_CACHE_KIB.0)?;
        let announced = Announcer::new(Some(Revisions::read(&conn)?));
        Ok(Self {
            path: path.to_owned(),
            writer: Mutex::new(conn),
            readers: Mutex::new(Vec::new()),
            announced,
            writes: Default::default(),
            seen_version: std::sync::atomic::AtomicI64::new(i64::MIN),
        })
    }

    /// An in-memory store, for unit tests.
    pub fn open_in_memory() -> Result<Self> {
        let mut conn = Connection::open_in_memory()?;
        configure(&conn)?;
        migrations().to_latest(&mut conn)?;
        let announced = Announcer::new(Some(Revisions::read(&conn)?));
        Ok(Self {
            path: PathBuf::new(),
            writer: Mutex::new(conn),
            readers: Mutex::new(Vec::new()),
            announced,
            writes: Default::default(),
            seen_version: std::sync::atomic::AtomicI64::new(i64::MIN),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The single writer connection. Hold it only for one transaction's worth of work.
    pub fn writer(&self) -> MutexGuard<'_, Connection> {
        self.writer.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs `f` in one `BEGIN IMMEDIATE` transaction with a FULL-synchronous commit: for data that
    /// cannot be rebuilt from Cursor (tasks, agents). IMMEDIATE takes the write lock up front, so
    /// a read-check-write inside `f` is atomic across threads and processes alike.
    pub fn durable<T>(&self, f: impl FnOnce(&rusqlite::Transaction<'_>) -> Result<T>) -> Result<T> {
        self.durable_changes(f).map(|(v, _)| v)
    }

    /// [`Store::durable`], saying which of the board's domains the transaction changed. Those
    /// revisions count as announced by this process (its caller announces them), so
    /// [`Store::foreign_changes`] never reports this write again.
    pub fn durable_changes<T>(&self, f: impl FnOnce(&rusqlite::Transaction<'_>) -> Result<T>) -> Result<(T, Changed)> {
        self.announced.write(|| {
            let mut conn = self.writer();
            conn.pragma_update(None, "synchronous", "FULL")?;
            let out = (|| {
                let txn = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
                // Inside the write lock: no other process's write falls between the two reads.
                let before = Revisions::read(&txn)?;
                let v = f(&txn)?;
                let after = Revisions::read(&txn)?;
                txn.commit()?;
                Ok((v, before.changed_to(after)))
            })();
            conn.pragma_update(None, "synchronous", "NORMAL")?;
            out
        })
    }

    /// Whether another connection (another process, mostly) may have committed since the last
    /// call: `PRAGMA data_version` on the writer, which only others' commits move. A watcher of
    /// the WAL cannot tell whose write it saw; this spares it looking at the board after each of
    /// the daemon's own index writes. `true` when it cannot be told at once (the writer is busy:
    /// it is not waited for).
    pub fn others_wrote(&self) -> bool {
        use std::sync::atomic::Ordering;
        let Ok(conn) = self.writer.try_lock() else { return true };
        let Ok(v) = conn.query_row("PRAGMA data_version", [], |r| r.get::<_, i64>(0)) else { return true };
        self.seen_version.swap(v, Ordering::Relaxed) != v
    }

    /// Tells `f` of every board write this store commits, once, right after it commits (set once;
    /// later calls are ignored).
    pub fn announce_writes(&self, f: impl Fn(Changed) + Send + Sync + 'static) {
        self.announced.announce_to(f);
    }

    /// What other processes changed on the board since this one last announced: the domains
    /// whose revision moved past what was announced (now announced).
    pub fn foreign_changes(&self) -> Result<Changed> {
        if self.path.as_os_str().is_empty() {
            // In memory: no other process, and reading takes the writer (a lock order a
            // concurrent write takes the other way round).
            return Ok(Changed::default());
        }
        self.announced.foreign(|| self.read(Revisions::read))
    }

    /// A pooled read connection; in-memory stores share the writer.
    pub fn read<T>(&self, f: impl FnOnce(&Connection) -> Result<T>) -> Result<T> {
        if self.path.as_os_str().is_empty() {
            return f(&self.writer());
        }
        let conn = self.readers.lock().unwrap_or_else(|p| p.into_inner()).pop();
        let conn = match conn {
            Some(c) => c,
            None => {
                let c = Connection::open_with_flags(
                    &self.path,
                    OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
                )?;
                c.busy_timeout(Duration::from_secs(5))?;
                // Searches touch thousands of scattered pages; mapping the file spares a syscall
                // per page and a larger cache keeps the hot FTS pages between queries. 128 MB, not
                // the whole file: mapped pages a search touched count as our resident memory, and
                // on the 1 GB benchmark a 1 GB window peaked at ~300 MB during a first index
                // against ~200 MB, with the same search p95 (docs/benchmarks.md).
                c.pragma_update(None, "mmap_size", 1i64 << 27)?;
                c.pragma_update(None, "cache_size", -16_384)?;
                c
            }
        };
        let out = f(&conn);
        let mut pool = self.readers.lock().unwrap_or_else(|p| p.into_inner());
        if pool.len() < 4 {
            pool.push(conn);
        }
        out
    }
}

/// Held while a process opens and migrates the database (released when dropped or on exit).
fn migration_lock(db: &Path) -> Result<std::fs::File> {
    let mut name = db.as_os_str().to_owned();
    name.push("-migrate.lock");
    let f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&name)
        .map_err(|e| crate::error::Error::io(format!("opening {}", Path::new(&name).display()), e))?;
    f.lock().map_err(|e| crate::error::Error::io("waiting for another process to prepare the index", e))?;
    Ok(f)
}

/// The index holds the person's chats: only they may read it. SQLite gives its `-wal` and
/// `-shm` the database file's mode, so creating (or tightening) the file is enough.
fn create_private(db: &Path) -> Result<()> {
    let io = |e| crate::error::Error::io(format!("creating {}", db.display()), e);
    crate::private::create_private(std::fs::OpenOptions::new().create(true).truncate(false).write(true))
        .open(db)
        .map_err(io)?;
    for suffix in ["", "-wal", "-shm"] {
        let mut p = db.as_os_str().to_owned();
        p.push(suffix);
        crate::private::tighten(Path::new(&p)).map_err(io)?;
    }
    Ok(())
}

fn configure(conn: &Connection) -> Result<()> {
    conn.busy_timeout(Duration::from_secs(5))?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    // NORMAL in WAL mode never corrupts on power loss or kill -9; it may only lose the last
    // transactions on power loss, and everything here can be rebuilt from Cursor except user
    // metadata, which is written in FULL-synchronous transactions (see `meta`).
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    conn.pragma_update(None, "foreign_keys", true)?;
    conn.pragma_update(None, "temp_store", "MEMORY")?;
    // What is deleted (a chat gone from Cursor, a rewritten row) is zeroed where that costs no
    // extra I/O, so it does not linger in free space of the person's index.
    conn.pragma_update_and_check(None, "secure_delete", "FAST", |_| Ok(()))?;
    // A WAL keeps the size of its biggest burst (a first index's) unless told: past a
    // checkpoint it is cut back to this.
    conn.pragma_update_and_check(None, "journal_size_limit", WAL_KEEP_BYTES, |_| Ok(()))?;
    Ok(())
}

/// How much of the write-ahead log is kept on disk once checkpointed.
const WAL_KEEP_BYTES: i64 = 8 << 20;

impl Store {
    /// Checkpoints the write-ahead log into the database and cuts the log to nothing (after a
    /// bulk write, whose log would otherwise stay on disk at its largest). Readers holding an
    /// older snapshot make it a partial checkpoint, which is fine: the next one finishes it.
    pub fn truncate_wal(&self) -> Result<()> {
        let conn = self.writer();
        conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
        Ok(())
    }
}

/// The writer's page cache (`PRAGMA cache_size`, negative: KiB) between bulk writes, and during
/// them ([`Store::bulk_cache`]).
///
/// A bulk write (a first index) keeps FTS5's merge inputs in a 32 MB cache rather than reading
/// them back through syscalls. Between them, the cache is SQLite's default 2 MB, because a large
/// one costs the small commits: SQLite's b-tree balance renames a page to the locking page's
/// number for a moment (`balance_nonroot`), which leaves the cache's highest key past the end of
/// the file, and the commit after it then walks every cached page to drop those past the end
/// (`pcache1TruncateUnsafe`). With 32 MB cached, that walk took ~0.6 ms (timed by uprobes) at
/// about one commit a second while Cursor streams; with 2 MB, ~0.1 ms.
const WRITER_CACHE_KIB: (i64, i64) = (-2_000, -32_768);

impl Store {
    /// Sizes the writer's page cache for bulk writes (`true`) or for the small commits between
    /// them (`false`); see [`WRITER_CACHE_KIB`]. Shrinking it lets go of the pages past the new
    /// size at once.
    pub fn bulk_cache(&self, bulk: bool) -> Result<()> {
        let kib = if bulk { WRITER_CACHE_KIB.1 } else { WRITER_CACHE_KIB.0 };
        self.writer().pragma_update(None, "cache_size", kib)?;
        Ok(())
    }
}

/// The schema as `CREATE` statements in a stable order, for the snapshot test and `doctor`.
pub fn dump_schema(conn: &Connection) -> Result<String> {
    let mut stmt = conn.prepare(
        "SELECT sql FROM sqlite_schema WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%'
         ORDER BY type, name",
    )?;
    let rows = stmt.query_map([], |r| r.get::<_, String>(0))?;
    let mut out = String::new();
    for sql in rows {
        out.push_str(&sql?);
        out.push_str(";\n");
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_writers_page_cache_is_large_only_for_bulk_writes() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("t.db")).unwrap();
        let size = || store.writer().query_row("PRAGMA cache_size", [], |r| r.get::<_, i64>(0)).unwrap();
        assert_eq!(size(), WRITER_CACHE_KIB.0);
        store.bulk_cache(true).unwrap();
        assert_eq!(size(), WRITER_CACHE_KIB.1);
        store.bulk_cache(false).unwrap();
        assert_eq!(size(), WRITER_CACHE_KIB.0);
    }

    #[test]
    fn a_write_is_announced_once_by_the_process_that_made_it() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("t.db");
        let (mine, theirs) = (Store::open(&db).unwrap(), Store::open(&db).unwrap());
        let bump = |s: &Store, name: &str| {
            s.durable_changes(|t| {
                t.execute("UPDATE counters SET value = value + 1 WHERE name = ?1", [name])?;
                Ok(())
            })
            .unwrap()
            .1
        };
        let heard = std::sync::Arc::new(Mutex::new(Vec::new()));
        let h = std::sync::Arc::clone(&heard);
        mine.announce_writes(move |c| h.lock().unwrap().push(c));
        assert_eq!(bump(&mine, "tasks_rev"), Changed { tasks: Some(1), ..Changed::default() });
        assert_eq!(*heard.lock().unwrap(), vec![Changed { tasks: Some(1), ..Changed::default() }]);
        assert!(!mine.foreign_changes().unwrap().any(), "my own write is not news to me");
        assert_eq!(theirs.foreign_changes().unwrap(), Changed { tasks: Some(1), ..Changed::default() });
        assert!(!theirs.foreign_changes().unwrap().any(), "and only once");
        bump(&theirs, "signals_rev");
        bump(&theirs, "runs_rev");
        assert_eq!(mine.foreign_changes().unwrap(), Changed { tasks: None, signals: Some(1), runs: Some(1) });
        assert_eq!(heard.lock().unwrap().len(), 1, "others' writes are announced by whoever watches for them");
        // A write that changes nothing on the board announces nothing.
        assert!(!mine.durable_changes(|_| Ok(())).unwrap().1.any());
    }

    /// The store watcher's filter: another connection's commit counts, this one's own do not,
    /// and the first look cannot know.
    #[test]
    fn only_another_connections_commit_says_others_wrote() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("t.db");
        let (mine, theirs) = (Store::open(&db).unwrap(), Store::open(&db).unwrap());
        let bump = |s: &Store| {
            s.writer().execute("UPDATE counters SET value = value + 1 WHERE name = 'tasks_rev'", []).unwrap();
        };
        assert!(mine.others_wrote(), "the first look cannot know");
        assert!(!mine.others_wrote());
        bump(&mine);
        bump(&mine);
        assert!(!mine.others_wrote(), "my own commits");
        bump(&theirs);
        assert!(mine.others_wrote(), "theirs");
        assert!(!mine.others_wrote(), "once");
        let held = mine.writer();
        assert!(mine.others_wrote(), "a busy writer is not waited for: cannot tell");
        drop(held);
    }

    /// Every part of the daemon that watches for other processes' writes is called back, from one
    /// OS watcher; a part that stops watching is no longer called, and the others still are.
    #[test]
    fn watchers_of_writes_share_one_os_watcher_and_each_is_called_back() {
        use std::sync::mpsc;
        use std::time::Duration;
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("t.db");
        let (mine, theirs) = (Store::open(&db).unwrap(), Store::open(&db).unwrap());
        let (tx, rx) = mpsc::channel::<&str>();
        let (a, b) = (tx.clone(), tx);
        let first = mine.watch_writes(move || a.send("first").unwrap()).unwrap();
        let second = mine.watch_writes(move || b.send("second").unwrap()).unwrap();
        let hub = |w: &WriteWatcher| Arc::clone(&w.hub.as_ref().unwrap().0);
        assert!(Arc::ptr_eq(&hub(&first), &hub(&second)), "one OS watcher for both");
        let write =
            || theirs.writer().execute("UPDATE counters SET value = value + 1 WHERE name = 'tasks_rev'", []).unwrap();
        let heard = |want: &[&str]| {
            let mut got: Vec<&str> = Vec::new();
            while !want.iter().all(|w| got.contains(w)) {
                got.push(rx.recv_timeout(Duration::from_secs(10)).expect("called back"));
            }
            got
        };
        write();
        heard(&["first", "second"]);
        drop(first);
        while rx.recv_timeout(Duration::from_millis(300)).is_ok() {}
        write();
        assert!(!heard(&["second"]).contains(&"first"), "a dropped watcher is not called");
        // Another file of the directory, through the same OS watcher: only its own watcher hears it.
        let (stx, srx) = mpsc::channel::<()>();
        let settings = mine.watch_file("settings.json", move || stx.send(()).unwrap()).unwrap();
        assert!(Arc::ptr_eq(&hub(&second), &hub(&settings)), "the directory's one OS watcher");
        while rx.recv_timeout(Duration::from_millis(300)).is_ok() {}
        std::fs::write(dir.path().join("settings.json"), "{}").unwrap();
        srx.recv_timeout(Duration::from_secs(10)).expect("the settings' watcher called back");
        while srx.recv_timeout(Duration::from_millis(300)).is_ok() {}
        assert!(rx.recv_timeout(Duration::from_millis(300)).is_err(), "not the WAL's watchers");
        write();
        heard(&["second"]);
        assert!(srx.recv_timeout(Duration::from_millis(300)).is_err(), "nor the settings' for a WAL write");
        drop((second, settings));
        assert!(mine.writes.lock().unwrap().upgrade().is_none(), "the OS watcher goes with the last one");
    }

    #[test]
    fn migrations_are_valid() {
        migrations().validate().expect("every migration applies on an empty database");
    }

    #[test]
    fn schema_snapshot() {
        let store = Store::open_in_memory().unwrap();
        let schema = dump_schema(&store.writer()).unwrap();
        insta::assert_snapshot!(schema);
    }

    #[test]
    fn many_threads_opening_a_new_store_at_once_all_succeed() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.db");
        let all: Vec<_> = (0..8)
            .map(|_| {
                let p = p.clone();
                std::thread::spawn(move || Store::open(&p).map(|_| ()))
            })
            .collect();
        for h in all {
            h.join().unwrap().expect("every opener succeeds");
        }
        if cfg!(unix) {
            assert_eq!(crate::private::mode(&std::fs::metadata(&p).unwrap()), Some(0o600));
        }
    }

    #[test]
    fn reopening_keeps_data_and_version() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.db");
        {
            let s = Store::open(&p).unwrap();
            s.writer().execute("INSERT INTO session_meta(session_id, updated_at) VALUES ('x', 1)", []).unwrap();
        }
        let s = Store::open(&p).unwrap();
        let n: i64 = s.read(|c| Ok(c.query_row("SELECT count(*) FROM session_meta", [], |r| r.get(0))?)).unwrap();
        assert_eq!(n, 1, "migrations must not re-run on an up-to-date database");
    }

    /// Every file of a data dir holding `needle`'s bytes.
    fn files_holding(dir: &Path, needle: &[u8]) -> Vec<PathBuf> {
        std::fs::read_dir(dir)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| std::fs::read(p).is_ok_and(|b| b.windows(needle.len()).any(|w| w == needle)))
            .collect()
    }

    #[test]
    fn a_cursor_key_kept_by_an_earlier_version_is_gone_from_every_file_after_opening() {
        const KEY: &str = "PLANTED-blobEncryptionKey-7d1f0c";
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.db");
        {
            let mut c = Connection::open(&p).unwrap();
            configure(&c).unwrap();
            migrations().to_version(&mut c, NO_CURSOR_KEYS - 1).unwrap();
            // What 0.x wrote for a cursor-agent chat: its store's meta row, key and all.
            let meta = format!(r#"{{"agentId":"a","latestRootBlobId":"00","blobEncryptionKey":"{KEY}"}}"#);
            c.execute_batch(
                "INSERT INTO sources(id, path, kind, fingerprint, status) VALUES (1, '/c/store.db', 'cli_store', '1:2|-|-', 'complete');
                 INSERT INTO sources(id, path, kind, fingerprint, status) VALUES (2, '/g/state.vscdb', 'global', '3:4|-|-', 'complete');",
            )
            .unwrap();
            c.execute("INSERT INTO sessions(id, source_id, origin, format, fingerprint) VALUES ('a', 1, 'cli', 'cli-store', ?1)", [&meta])
                .unwrap();
            c.execute("INSERT INTO sessions(id, source_id, origin, format, fingerprint) VALUES ('g', 2, 'ide', 'composer', '1f.2a.')", [])
                .unwrap();
            assert!(!files_holding(dir.path(), KEY.as_bytes()).is_empty(), "the key is planted");
        }
        let s = Store::open(&p).unwrap();
        let (cli, global, src): (Option<String>, Option<String>, Option<String>) = s
            .read(|c| {
                Ok(c.query_row(
                    "SELECT (SELECT fingerprint FROM sessions WHERE id = 'a'), (SELECT fingerprint FROM sessions WHERE id = 'g'),
                            (SELECT fingerprint FROM sources WHERE id = 1)",
                    [],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
                )?)
            })
            .unwrap();
        assert_eq!((cli, src), (None, None), "the chat and its store are read again on the next pass");
        assert_eq!(global.as_deref(), Some("1f.2a."), "other fingerprints stay");
        assert_eq!(files_holding(dir.path(), KEY.as_bytes()), Vec::<PathBuf>::new(), "no file keeps the key");
        drop(s);
        assert_eq!(files_holding(dir.path(), KEY.as_bytes()), Vec::<PathBuf>::new());
    }

    #[test]
    fn widening_run_status_keeps_every_run_and_its_events() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.db");
        {
            let mut c = Connection::open(&p).unwrap();
            c.pragma_update(None, "foreign_keys", true).unwrap();
            migrations().to_version(&mut c, 14).unwrap();
            c.execute_batch(
                "INSERT INTO runs(num, prompt, timeout_ms, requested_by, created_at, status, input_tokens)
                     VALUES (1, 'p', 1000, 'me', 1, 'succeeded', 7);
                 INSERT INTO run_events(run, seq, at, kind, data) VALUES (1, 1, 1, 'status', '{}');",
            )
            .unwrap();
        }
        let s = Store::open(&p).unwrap();
        let (events, source): (i64, String) = s
            .read(|c| {
                Ok(c.query_row(
                    "SELECT (SELECT count(*) FROM run_events), (SELECT usage_source FROM runs WHERE num = 1)",
                    [],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )?)
            })
            .unwrap();
        assert_eq!((events, source.as_str()), (1, "result"));
        s.writer().execute("UPDATE runs SET status = 'over_budget' WHERE num = 1", []).unwrap();
        let bad = s.writer().execute("UPDATE runs SET status = 'nonsense' WHERE num = 1", []);
        assert!(bad.is_err(), "the CHECK still holds");
    }
}
