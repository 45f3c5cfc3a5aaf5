//! Keeping the index fresh: the system's file events on Cursor's data (from
//! `tether_store::file_events`, where systems differ), gathered until the writer goes quiet,
//! mapped to the sources that changed, each re-indexed on the quick path; plus a periodic deep
//! pass that catches in-place updates and folders that appeared after start.
//!
//! Owns one background thread (and the feed's); the returned [`WatchHandle`] stops them (on drop,
//! too).

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc::{RecvTimeoutError, Sender, channel};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::cursor::{self, Source, SourceKind};
use crate::error::Result;
use crate::index::{Depth, IndexReport};
use crate::paths::CursorLocations;

use tether_store::file_events::{self as feed, News};

/// What the watcher drives: where Cursor's data is now, and index passes over all of it or some
/// sources. The engine's context implements it; the watcher knows nothing more of it.
pub trait Indexer: Send + Sync + 'static {
    fn locations(&self) -> CursorLocations;
    fn index(&self, depth: Depth) -> Result<IndexReport>;
    fn index_sources(&self, sources: &[Source], depth: Depth) -> Result<IndexReport>;
}

#[derive(Debug, Clone)]
pub struct WatchConfig {
    /// Quiet window: Cursor writes in bursts; a pass starts once no event came for this long
    /// (and at the latest `BURST_CAP` after the burst's first event).
    pub debounce: Duration,
    /// How often to run a deep pass regardless of events.
    pub deep_every: Duration,
}

impl Default for WatchConfig {
    fn default() -> Self {
        Self { debounce: Duration::from_millis(20), deep_every: Duration::from_secs(300) }
    }
}

/// Events the watcher reports (for logs and, later, the GUI).
#[derive(Debug, Clone)]
pub enum WatchEvent {
    Indexed(Box<IndexReport>),
    Error(String),
}

pub struct WatchHandle {
    stop: Option<Sender<Msg>>,
    thread: Option<JoinHandle<()>>,
}

impl WatchHandle {
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(Msg::Stop);
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for WatchHandle {
    fn drop(&mut self) {
        self.shutdown();
    }
}

enum Msg {
    Paths(Vec<PathBuf>),
    /// The system lost events: a pass over everything.
    Rescan,
    Error(String),
    Stop,
}

/// Start watching. `on_event` is called from the watcher thread after each pass.
pub fn start<I: Indexer>(
    tether: Arc<I>,
    cfg: WatchConfig,
    on_event: impl Fn(WatchEvent) + Send + 'static,
) -> Result<WatchHandle> {
    let (tx, rx) = channel::<Msg>();
    let stop_tx = tx.clone();
    let ev_tx = tx.clone();
    // The feed's own thread only forwards; the quiet window is measured on ours, by the arrival
    // of the next message, so nothing wakes on a tick while idle (a debouncer's tick also delayed
    // every change by up to one more window).
    // A commit of Cursor's is several events on one file (one per page written): a path already
    // on its way to the next pass is not sent again, so our thread wakes once per file per pass,
    // not once per event. The thread clears this before each pass reads.
    let pending: Arc<std::sync::Mutex<HashSet<PathBuf>>> = Arc::default();
    let on_its_way = Arc::clone(&pending);
    let roots: Vec<(PathBuf, bool)> =
        cursor::watch_roots(&tether.locations()).into_iter().filter(|(dir, _)| dir.is_dir()).collect();
    let feed = feed::start(&roots, move |news| {
        let msg = match news {
            News::Paths(paths) => {
                let mut p = on_its_way.lock().unwrap_or_else(|p| p.into_inner());
                let fresh: Vec<PathBuf> =
                    paths.into_iter().filter(|path| carries_data(path) && p.insert(path.clone())).collect();
                if fresh.is_empty() {
                    return;
                }
                Msg::Paths(fresh)
            }
            News::Rescan => Msg::Rescan,
            News::Error(e) => Msg::Error(e),
        };
        let _ = ev_tx.send(msg);
    })?;
    tracing::info!(dirs = roots.len(), "watching Cursor data");
    let thread = std::thread::Builder::new()
        .name("tether-watch".into())
        .spawn(move || {
            let _feed = feed;
            let mut last_deep = Instant::now();
            // One more look at the sources of the last event-driven pass, shortly after it: a
            // commit whose WAL frames (the event) were written before it became visible in the
            // `-shm` index (no event: shared memory) is otherwise seen only by the deep pass.
            let mut recheck: Option<(Instant, Vec<Source>)> = None;
            // The sources as last discovered: a change maps to one of them without walking
            // every Cursor folder again; only a path none of them explains (a new chat file, a
            // new folder) sends the walk out again.
            let mut known: Vec<Source> = cursor::discover(&tether.locations());
            // When to close the connections to Cursor's files that passes keep between them
            // (`CursorDb::open_kept`): once the watcher has been quiet a moment, so no handle on
            // Cursor's files stays open while nothing happens. Also what the first index kept.
            let mut release: Option<Instant> = Some(Instant::now() + KEEP_OPEN);
            // The thread's end (a stop, or the channel gone) closes them too.
            let _closes = ReleaseOnDrop;
            loop {
                // Sleeps until a change, a stop, a recheck, the release or the next deep pass:
                // nothing wakes it idle.
                let mut timeout = cfg.deep_every.saturating_sub(last_deep.elapsed());
                for at in recheck.as_ref().map(|(at, _)| *at).into_iter().chain(release) {
                    timeout = timeout.min(at.saturating_duration_since(Instant::now()));
                }
                let got = rx.recv_timeout(timeout);
                if matches!(got, Ok(Msg::Paths(_) | Msg::Rescan) | Err(RecvTimeoutError::Timeout)) {
                    release = Some(Instant::now() + KEEP_OPEN);
                }
                match got {
                    Ok(Msg::Stop) => return,
                    Ok(first @ (Msg::Paths(_) | Msg::Rescan)) => {
                        let (mut paths, mut rescan) = match first {
                            Msg::Paths(paths) => (paths, false),
                            _ => (Vec::new(), true),
                        };
                        // Gather the rest of the burst into this pass; a stop among it ends the
                        // thread without the pass.
                        let burst = Instant::now() + BURST_CAP;
                        loop {
                            // What the feed held back before handing the burst on counts as waited.
                            let quiet = cfg.debounce.saturating_sub(feed::GATHERS);
                            let wait = quiet.min(burst.saturating_duration_since(Instant::now()));
                            match rx.recv_timeout(wait) {
                                Ok(Msg::Paths(more)) => paths.extend(more),
                                Ok(Msg::Rescan) => rescan = true,
                                Ok(Msg::Error(e)) => on_event(WatchEvent::Error(e)),
                                Ok(Msg::Stop) | Err(RecvTimeoutError::Disconnected) => return,
                                Err(RecvTimeoutError::Timeout) => break,
                            }
                            if Instant::now() >= burst {
                                break;
                            }
                        }
                        // From here on an event on these paths is news for the next pass.
                        pending.lock().unwrap_or_else(|p| p.into_inner()).clear();
                        paths.sort();
                        paths.dedup();
                        let sources = affected_sources(tether.as_ref(), &mut known, &paths);
                        // A journal or WAL that came and went is a commit, not a deletion: in
                        // rollback-journal mode (most real Cursor databases) every commit
                        // deletes its `-journal`, and taking that for a vanished source made
                        // every write of Cursor's a pass over everything.
                        if rescan || vanished(&paths) {
                            // Something was deleted, or events were lost: a pass over everything
                            // (unchanged files are not opened) drops the sessions of vanished
                            // sources.
                            known = cursor::discover(&tether.locations());
                            on_event(match tether.index(Depth::Quick) {
                                Ok(r) => WatchEvent::Indexed(Box::new(r)),
                                Err(e) => WatchEvent::Error(e.to_string()),
                            });
                        } else if !sources.is_empty() {
                            let r = tether.index_sources(&sources, Depth::Quick);
                            // A chat put off (Cursor streams into it) is read once its time
                            // comes, when no later change brings a pass sooner.
                            let again = r.as_ref().ok().and_then(|r| r.retry_after_ms).map(Duration::from_millis);
                            on_event(match r {
                                Ok(r) => WatchEvent::Indexed(Box::new(r)),
                                Err(e) => WatchEvent::Error(e.to_string()),
                            });
                            // A chat put off is looked at again when the stream stops (no event
                            // for `STREAM_STOPPED`: read at once) or its time comes, whichever is
                            // first; while Cursor streams, events come sooner and this is moved on.
                            let after = match again {
                                Some(t) => t.min(STREAM_STOPPED),
                                None => RECHECK_AFTER,
                            };
                            recheck = Some((Instant::now() + after, sources));
                        }
                    }
                    Ok(Msg::Error(e)) => on_event(WatchEvent::Error(e)),
                    Err(RecvTimeoutError::Timeout) => {
                        if recheck.is_none() && last_deep.elapsed() < cfg.deep_every {
                            // Nothing to look at: the quiet moment has come.
                            cursor::sqlite::release_kept();
                            release = None;
                            continue;
                        }
                        if let Some((_, sources)) = recheck.take_if(|(at, _)| *at <= Instant::now()) {
                            // Nothing came since the last pass: a stream that was put off stopped.
                            crate::index::streams_stopped(&sources);
                            // Unchanged files are not opened (their fingerprint includes the
                            // `-shm` header), so this costs a few stats when nothing was missed.
                            if let Ok(r) = tether.index_sources(&sources, Depth::Quick) {
                                if let Some(ms) = r.retry_after_ms {
                                    recheck = Some((Instant::now() + Duration::from_millis(ms), sources));
                                }
                                if r.sessions_written + r.sessions_deleted > 0 {
                                    on_event(WatchEvent::Indexed(Box::new(r)));
                                }
                            }
                        }
                        if last_deep.elapsed() >= cfg.deep_every {
                            last_deep = Instant::now();
                            on_event(match tether.index(Depth::Deep) {
                                Ok(r) => WatchEvent::Indexed(Box::new(r)),
                                Err(e) => WatchEvent::Error(e.to_string()),
                            });
                        }
                    }
                    Err(RecvTimeoutError::Disconnected) => return,
                }
            }
        })
        .map_err(|e| crate::error::Error::io("starting the watcher thread", e))?;
    drop(tx);
    Ok(WatchHandle { stop: Some(stop_tx), thread: Some(thread) })
}

/// The longest a burst of events delays its pass: a chat streaming its answer stays live.
const BURST_CAP: Duration = Duration::from_millis(250);

/// No event for this long after a pass that put a chat off: Cursor stopped streaming into it
/// (it commits several times a second while it streams).
const STREAM_STOPPED: Duration = Duration::from_millis(200);

/// How long the watcher keeps its connections to Cursor's files after its last pass.
const KEEP_OPEN: Duration = Duration::from_secs(2);

struct ReleaseOnDrop;

impl Drop for ReleaseOnDrop {
    fn drop(&mut self) {
        cursor::sqlite::release_kept();
    }
}

/// How long after an event-driven pass its sources are looked at once more; see `recheck`.
const RECHECK_AFTER: Duration = Duration::from_millis(250);

/// Whether a change to this path can mean new data. A `-shm` change never does (SQLite readers
/// record read marks there, ours included): reacting to it made every pass trigger the next one, a
/// busy loop while idle. Nor does a rollback journal's: a commit in that mode also writes the
/// database file itself (an event of its own), and the journal's create, writes and delete were
/// most of the events of each of Cursor's commits, each a wake-up of the watcher's thread. (Opens
/// and reads, which our own passes do, are not reported at all: see `feed`.)
fn carries_data(p: &Path) -> bool {
    let s = p.as_os_str().as_encoded_bytes();
    !(s.ends_with(b"-shm") || s.ends_with(b"-journal"))
}

/// Map changed paths to the sources to re-index (a `-wal` change means its database), from the
/// sources `known` (discovered again, and kept, when a path is not one of theirs).
fn affected_sources<I: Indexer>(tether: &I, known: &mut Vec<Source>, paths: &[PathBuf]) -> Vec<Source> {
    let explained = |all: &[Source], p: &Path| {
        let base = strip_sidecar(p);
        all.iter().any(|s| s.path == base || s.path.parent() == Some(base.as_path()))
    };
    if !paths.iter().all(|p| explained(known, p)) {
        *known = cursor::discover(&tether.locations());
    }
    let all = &*known;
    let mut out: Vec<Source> = Vec::new();
    for p in paths {
        let base = strip_sidecar(p);
        // An SDK agent's blob store (`agents/<id>/store.db`) is read with its catalog.
        let hit = all.iter().find(|s| {
            s.path == base
                || (s.kind == SourceKind::Workspace && s.path.parent() == Some(base.as_path()))
                || (s.kind == SourceKind::SdkAgent
                    && s.path.parent().is_some_and(|d| base.starts_with(d.join("agents"))))
        });
        let hit = hit.or_else(|| {
            // A new store.db or transcript, or one inside a folder that was just created.
            all.iter().find(|s| {
                s.path.starts_with(&base)
                    && matches!(
                        s.kind,
                        SourceKind::CliStore
                            | SourceKind::CliMeta
                            | SourceKind::SdkAgent
                            | SourceKind::Transcript
                            | SourceKind::Workspace
                            | SourceKind::Cloud
                            | SourceKind::ClaudeCode
                            | SourceKind::Codex
                            | SourceKind::Gemini
                    )
            })
        });
        if let Some(s) = hit
            && !out.contains(s)
        {
            out.push(s.clone());
        }
    }
    out
}

/// Whether a file of Cursor's data went away (a chat deleted, a folder removed). A sidecar gone
/// is no such thing: see the caller.
fn vanished(paths: &[PathBuf]) -> bool {
    paths.iter().any(|p| !p.exists() && strip_sidecar(p) == *p)
}

fn strip_sidecar(p: &Path) -> PathBuf {
    let s = p.to_string_lossy();
    for suffix in ["-wal", "-shm", "-journal"] {
        if let Some(base) = s.strip_suffix(suffix) {
            return PathBuf::from(base);
        }
    }
    p.to_path_buf()
}

#[cfg(test)]
mod sdk_tests {
    use super::*;

    struct Stub(CursorLocations);
    impl Indexer for Stub {
        fn locations(&self) -> CursorLocations {
            self.0.clone()
        }
        fn index(&self, _: Depth) -> Result<IndexReport> {
            unreachable!()
        }
        fn index_sources(&self, _: &[Source], _: Depth) -> Result<IndexReport> {
            unreachable!()
        }
    }

    /// Every commit in rollback-journal mode creates and deletes `-journal`: a commit, which
    /// reads the chats that changed, not a deletion, which passes over every source.
    #[test]
    fn a_journal_that_came_and_went_is_a_commit_and_a_vanished_database_a_deletion() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("state.vscdb");
        std::fs::write(&db, b"").unwrap();
        assert!(!vanished(&[db.clone(), dir.path().join("state.vscdb-journal")]));
        assert!(!vanished(&[dir.path().join("state.vscdb-wal"), dir.path().join("state.vscdb-shm")]));
        std::fs::remove_file(&db).unwrap();
        assert!(vanished(&[db, dir.path().join("state.vscdb-journal")]));
    }

    #[test]
    fn an_sdk_agents_blob_store_changing_reindexes_its_catalog() {
        let home = tempfile::tempdir().unwrap();
        let store = home.path().join("projects/home-u-p/sdk-agent-store/abc");
        std::fs::create_dir_all(store.join("agents/a1")).unwrap();
        std::fs::write(store.join("index.db"), b"").unwrap();
        std::fs::write(store.join("agents/a1/store.db"), b"").unwrap();
        let loc = CursorLocations { cursor_homes: vec![home.path().to_owned()], ..Default::default() };
        let hit = affected_sources(&Stub(loc), &mut Vec::new(), &[store.join("agents/a1/store.db-wal")]);
        assert_eq!(
            hit.iter().map(|s| (s.kind, s.path.clone())).collect::<Vec<_>>(),
            [(SourceKind::SdkAgent, store.join("index.db"))]
        );
    }
}
