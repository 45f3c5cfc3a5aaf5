//! The operating system's file events, handed on as batches of paths: what tells the history
//! watcher that Cursor's files changed, and the store that another process wrote to it
//! (`Store::watch_file`). The one module where file watching differs between systems. Depends on
//! std, notify, and on Linux the `inotify` crate (notify's own) with mio; knows nothing of
//! Cursor or of the store.
//!
//! On Linux, inotify is read here rather than through notify, for what notify 8 cannot be asked:
//! - **fewer events**: notify watches every directory for opens and attribute changes too, so our
//!   own read-only passes over Cursor's files raised events; here only what writes data is asked
//!   for (creates, writes, closes after writing, deletes, moves);
//! - **fewer wake-ups**: notify's thread wakes for each event as it arrives. One commit of
//!   Cursor's is some 26 of them (its journal's create, writes, close and delete, a write per page
//!   of the database), ~260 wake-ups a second while Cursor streams an answer: a quarter of what
//!   Tether cost then (perf, `docs/benchmarks.md`); the store's own watch woke for each write of
//!   the index's WAL. Here a burst is read once, then again after [`BATCH`]: a few wake-ups per
//!   commit. The kernel queues what comes meanwhile.
//!
//! Elsewhere notify's recommended watcher (FSEvents on macOS, which already batches, and
//! `ReadDirectoryChangesW` on Windows). It builds on Linux too, so that its tests run here.

use std::path::PathBuf;
use std::time::Duration;

use crate::error::Result;

/// What the system said.
#[derive(Debug)]
pub enum News {
    /// These paths changed (created, written, deleted or moved; a directory's own path when it
    /// went away or arrived with what it holds).
    Paths(Vec<PathBuf>),
    /// Events were lost (the system's queue overflowed): anything may have changed.
    Rescan,
    Error(String),
}

/// Watching; dropping it stops watching and ends its thread.
pub struct Feed {
    _inner: Box<dyn Send + Sync>,
}

/// Start watching `roots` (a directory, and whether its subdirectories are watched too); `sink`
/// is called from the feed's own thread. A root that cannot be watched is logged and skipped.
pub fn start(roots: &[(PathBuf, bool)], sink: impl Fn(News) + Send + 'static) -> Result<Feed> {
    #[cfg(target_os = "linux")]
    let inner: Box<dyn Send + Sync> = Box::new(inotify_feed::start(roots, sink)?);
    #[cfg(not(target_os = "linux"))]
    let inner: Box<dyn Send + Sync> = Box::new(notify_feed::start(roots, sink)?);
    Ok(Feed { _inner: inner })
}

#[cfg_attr(target_os = "linux", allow(dead_code))]
mod notify_feed {
    use std::path::PathBuf;

    use notify::{EventKind, RecursiveMode, Watcher};

    use super::News;
    use crate::error::Result;

    pub(super) fn start(
        roots: &[(PathBuf, bool)],
        sink: impl Fn(News) + Send + 'static,
    ) -> Result<notify::RecommendedWatcher> {
        let mut watcher = notify::recommended_watcher(move |res: notify::Result<notify::Event>| match res {
            Ok(e) if e.need_rescan() => sink(News::Rescan),
            // Opening and reading a file (our own passes do) never means new data.
            Ok(e) if matches!(e.kind, EventKind::Access(_)) => {}
            Ok(e) => sink(News::Paths(e.paths)),
            Err(e) => sink(News::Error(e.to_string())),
        })?;
        for (dir, recursive) in roots {
            let mode = if *recursive { RecursiveMode::Recursive } else { RecursiveMode::NonRecursive };
            if let Err(e) = watcher.watch(dir, mode) {
                tracing::warn!(dir = %dir.display(), error = %e, "cannot watch");
            }
        }
        Ok(watcher)
    }
}

#[cfg(target_os = "linux")]
mod inotify_feed {
    use std::collections::HashMap;
    use std::io::ErrorKind;
    use std::os::fd::AsRawFd;
    use std::path::{Path, PathBuf};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::thread::JoinHandle;

    use inotify::{EventMask, Inotify, WatchDescriptor, WatchMask};
    use mio::unix::SourceFd;
    use mio::{Events, Interest, Poll, Token, Waker};

    use super::{BATCH, News};
    use crate::error::{Error, Result};

    const INOTIFY: Token = Token(0);
    const STOP: Token = Token(1);

    /// What writes data, and a watched directory's own end. Not opens, reads, closes after reading
    /// or attribute changes: none of them is new data.
    fn mask() -> WatchMask {
        WatchMask::CREATE
            | WatchMask::MODIFY
            | WatchMask::CLOSE_WRITE
            | WatchMask::DELETE
            | WatchMask::MOVED_FROM
            | WatchMask::MOVED_TO
            | WatchMask::DELETE_SELF
            | WatchMask::MOVE_SELF
            | WatchMask::ONLYDIR
    }

    /// The watched directories: where each is, and whether its new subdirectories are watched.
    struct Dirs {
        ino: Inotify,
        at: HashMap<WatchDescriptor, (PathBuf, bool)>,
    }

    impl Dirs {
        /// Watch `dir`, and if `recursive` every directory under it (symlinks are not followed:
        /// Cursor's folders are real ones, and a link could lead anywhere, or round).
        fn add(&mut self, dir: &Path, recursive: bool) {
            match self.ino.watches().add(dir, mask()) {
                Ok(wd) => {
                    self.at.insert(wd, (dir.to_path_buf(), recursive));
                }
                Err(e) => {
                    tracing::warn!(dir = %dir.display(), error = %e, "cannot watch");
                    return;
                }
            }
            if !recursive {
                return;
            }
            let Ok(entries) = std::fs::read_dir(dir) else { return };
            for entry in entries.flatten() {
                if entry.file_type().is_ok_and(|t| t.is_dir()) {
                    self.add(&entry.path(), true);
                }
            }
        }

        /// Read what is queued, without waiting, adding the paths it names to `news`; whether the
        /// system's queue overflowed.
        fn drain(&mut self, buf: &mut [u8], news: &mut Vec<PathBuf>) -> std::io::Result<bool> {
            let mut overflow = false;
            loop {
                let events = match self.ino.read_events(buf) {
                    Ok(events) => events,
                    Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(overflow),
                    Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                    Err(e) => return Err(e),
                };
                let mut new_dirs = Vec::new();
                for ev in events {
                    if ev.mask.contains(EventMask::Q_OVERFLOW) {
                        overflow = true;
                        continue;
                    }
                    if ev.mask.contains(EventMask::IGNORED) {
                        // The directory is gone (or unmounted): its watch with it.
                        self.at.remove(&ev.wd);
                        continue;
                    }
                    let Some((dir, recursive)) = self.at.get(&ev.wd) else { continue };
                    let path = match ev.name {
                        Some(name) => dir.join(name),
                        None => dir.clone(),
                    };
                    if *recursive
                        && ev.mask.contains(EventMask::ISDIR)
                        && ev.mask.intersects(EventMask::CREATE | EventMask::MOVED_TO)
                    {
                        new_dirs.push(path.clone());
                    }
                    news.push(path);
                }
                // A directory that arrived is watched with what is under it; what was written in
                // it before its watch is found by the pass its own path brings.
                for dir in new_dirs {
                    self.add(&dir, true);
                }
            }
        }
    }

    pub(super) struct InotifyFeed {
        stop: Arc<AtomicBool>,
        waker: Waker,
        thread: Option<JoinHandle<()>>,
    }

    impl Drop for InotifyFeed {
        fn drop(&mut self) {
            self.stop.store(true, Ordering::SeqCst);
            let _ = self.waker.wake();
            if let Some(t) = self.thread.take() {
                let _ = t.join();
            }
        }
    }

    pub(super) fn start(roots: &[(PathBuf, bool)], sink: impl Fn(News) + Send + 'static) -> Result<InotifyFeed> {
        let io = |what: &str, e| Error::io(format!("watching files: {what}"), e);
        let ino = Inotify::init().map_err(|e| io("inotify_init", e))?;
        let mut poll = Poll::new().map_err(|e| io("epoll", e))?;
        poll.registry()
            .register(&mut SourceFd(&ino.as_raw_fd()), INOTIFY, Interest::READABLE)
            .map_err(|e| io("epoll", e))?;
        let waker = Waker::new(poll.registry(), STOP).map_err(|e| io("eventfd", e))?;
        let mut dirs = Dirs { ino, at: HashMap::new() };
        for (dir, recursive) in roots {
            dirs.add(dir, *recursive);
        }
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("tether-inotify".into())
            .spawn(move || {
                let mut events = Events::with_capacity(4);
                let mut buf = vec![0u8; 64 * 1024];
                let mut news = Vec::new();
                loop {
                    // Sleeps until the first event of a burst, or a stop.
                    if let Err(e) = poll.poll(&mut events, None)
                        && e.kind() != ErrorKind::Interrupted
                    {
                        sink(News::Error(format!("waiting for file events: {e}")));
                        return;
                    }
                    // Then reads the burst every `BATCH` until a read finds nothing (mio's
                    // readiness is edge-triggered: what came while asleep is read now, and
                    // the next wait returns at once and finds nothing, harmless).
                    loop {
                        if stopped.load(Ordering::SeqCst) {
                            return;
                        }
                        match dirs.drain(&mut buf, &mut news) {
                            Ok(true) => sink(News::Rescan),
                            Ok(false) => {}
                            Err(e) => {
                                sink(News::Error(format!("reading file events: {e}")));
                                return;
                            }
                        }
                        if news.is_empty() {
                            break;
                        }
                        sink(News::Paths(std::mem::take(&mut news)));
                        std::thread::sleep(BATCH);
                    }
                }
            })
            .map_err(|e| io("starting its thread", e))?;
        Ok(InotifyFeed { stop, waker, thread: Some(thread) })
    }
}

/// How long a burst of events gathers in the system's queue before it is read again.
const BATCH: Duration = Duration::from_millis(10);

/// How long the feed itself may hold a change back before handing it on, which the watcher's
/// quiet window counts as waited. On Linux a commit in rollback-journal mode begins with its
/// journal's events, which the history watcher drops: the database file's own come with the
/// next read, a `BATCH` later.
pub const GATHERS: Duration = if cfg!(target_os = "linux") { BATCH } else { Duration::ZERO };

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};
    use std::sync::mpsc::{Receiver, channel};
    use std::time::Instant;

    use super::*;

    type Starter = fn(&[(PathBuf, bool)], Box<dyn Fn(News) + Send>) -> Box<dyn Send + Sync>;

    fn starters() -> Vec<(&'static str, Starter)> {
        #[cfg_attr(not(target_os = "linux"), allow(unused_mut))]
        let mut out: Vec<(&'static str, Starter)> =
            vec![("notify", |roots, sink| Box::new(notify_feed::start(roots, sink).unwrap()))];
        #[cfg(target_os = "linux")]
        out.push(("inotify", |roots, sink| Box::new(inotify_feed::start(roots, sink).unwrap())));
        out
    }

    /// Waits until every path of `want` was reported (or fails after a few seconds).
    fn expect(rx: &Receiver<News>, want: &[&Path], name: &str) {
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut seen: Vec<PathBuf> = Vec::new();
        while !want.iter().all(|w| seen.iter().any(|s| s == w)) {
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok(News::Paths(p)) => seen.extend(p),
                Ok(other) => panic!("{name}: {other:?}"),
                Err(_) => panic!("{name}: {want:?} not all reported; saw {seen:?}"),
            }
        }
    }

    /// Each backend reports a write, a file in a directory made after the start (watched under a
    /// recursive root), and a deletion; and stops when dropped.
    #[test]
    fn each_backend_reports_writes_new_folders_and_deletions() {
        for (name, start) in starters() {
            let root = tempfile::tempdir().unwrap();
            let file = root.path().join("state.vscdb");
            std::fs::write(&file, b"one").unwrap();
            let (tx, rx) = channel();
            let tx = std::sync::Mutex::new(tx);
            let feed = start(
                &[(root.path().to_path_buf(), true)],
                Box::new(move |n| {
                    let _ = tx.lock().unwrap().send(n);
                }),
            );
            std::fs::write(&file, b"two").unwrap();
            expect(&rx, &[&file], name);
            let sub = root.path().join("ws1");
            std::fs::create_dir(&sub).unwrap();
            expect(&rx, &[&sub], name);
            // notify puts its watch on a new folder after reporting it (ours before).
            std::thread::sleep(Duration::from_millis(100));
            let inner = sub.join("state.vscdb");
            std::fs::write(&inner, b"x").unwrap();
            expect(&rx, &[&inner], name);
            std::fs::remove_file(&file).unwrap();
            expect(&rx, &[&file], name);
            let t = Instant::now();
            drop(feed);
            assert!(t.elapsed() < Duration::from_secs(2), "{name}: stopping took {:?}", t.elapsed());
        }
    }

    /// Our own passes open and read Cursor's files: on Linux that raises no event at all.
    #[cfg(target_os = "linux")]
    #[test]
    fn reading_a_file_is_no_news_on_linux() {
        let root = tempfile::tempdir().unwrap();
        let file = root.path().join("state.vscdb");
        std::fs::write(&file, b"data").unwrap();
        let (tx, rx) = channel();
        let tx = std::sync::Mutex::new(tx);
        let _feed = inotify_feed::start(&[(root.path().to_path_buf(), false)], move |n| {
            let _ = tx.lock().unwrap().send(n);
        })
        .unwrap();
        for _ in 0..5 {
            assert_eq!(std::fs::read(&file).unwrap(), b"data");
        }
        std::fs::write(root.path().join("marker"), b"").unwrap();
        // The marker's events come after the reads' in the queue: none of the reads' came first.
        match rx.recv_timeout(Duration::from_secs(5)).unwrap() {
            News::Paths(p) => assert!(p.iter().all(|p| p.ends_with("marker")), "{p:?}"),
            other => panic!("{other:?}"),
        }
    }
}
