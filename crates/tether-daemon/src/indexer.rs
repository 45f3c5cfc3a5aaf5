//! The indexer component: the first pass at start (a deep one), then the watcher that keeps the
//! index fresh; a deep pass again when asked (the GUI's re-index); paused and resumed from the
//! tray. It publishes progress and outcomes (`index` events) and the chats it changed
//! (`sessions` events) on the bus.

use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex};

use tether_core::Tether;
use tether_core::events::{Event, IndexEvent};
use tether_history::index::{Depth, IndexReport, Progress};
use tether_history::watch::{WatchConfig, WatchEvent, WatchHandle};
use tokio::task::JoinHandle;

/// A progress sink for the first index (a terminal bar).
pub type ProgressSink = Arc<dyn Fn(&Progress) + Send + Sync>;

#[derive(Default)]
pub(crate) struct Indexer {
    watcher: Arc<Mutex<Option<WatchHandle>>>,
    pass: Mutex<Option<JoinHandle<()>>>,
    /// Set while paused, so a pass that ends meanwhile does not start watching.
    paused: Arc<AtomicBool>,
    listen: Mutex<Option<JoinHandle<()>>>,
}

/// One index pass the GUI can follow: progress and the outcome as `index` events, changed chats
/// as `sessions` events. `also` sees the progress too. Blocking.
pub fn index_reporting(
    t: &Tether,
    depth: Depth,
    also: &(dyn Fn(&Progress) + Sync),
) -> tether_core::Result<IndexReport> {
    t.daemon.start_indexing();
    t.bus.emit(Event::Index(IndexEvent { state: "indexing".into(), ..IndexEvent::default() }));
    let last_refresh = AtomicI64::new(0);
    let sink = |p: &Progress| {
        also(p);
        match p {
            Progress::Listed { sessions } if *sessions > 0 => t.bus.emit(Event::Sessions { ids: None }),
            Progress::Sessions { done, total, eta_ms, .. } => {
                t.bus.emit(Event::Index(IndexEvent {
                    state: "indexing".into(),
                    done: Some(*done),
                    total: Some(*total),
                    eta_ms: *eta_ms,
                    ..IndexEvent::default()
                }));
                // Open lists refresh as chats become searchable, at most once a second.
                let now = tether_core::clock::now_ms();
                let last = last_refresh.swap(now, Ordering::Relaxed);
                if now - last >= 1000 || done == total {
                    t.bus.emit(Event::Sessions { ids: None });
                } else {
                    last_refresh.store(last, Ordering::Relaxed);
                }
            }
            _ => {}
        }
    };
    let r = t.index(depth, &sink);
    t.daemon.stop_indexing();
    match &r {
        Ok(r) => {
            if !r.changed.is_empty() {
                t.bus.emit(Event::Sessions { ids: Some(r.changed.clone()) });
            }
            t.bus.emit(Event::Index(IndexEvent {
                state: "idle".into(),
                sessions: Some(r.sessions_total),
                messages: Some(r.messages_total),
                ..IndexEvent::default()
            }));
        }
        Err(e) => t.bus.emit(Event::Index(IndexEvent {
            state: "idle".into(),
            error: Some(e.to_string()),
            ..IndexEvent::default()
        })),
    }
    r
}

impl Indexer {
    /// Starts the first pass (then the watcher), and listens for re-index requests.
    pub(crate) fn start(self: &Arc<Self>, t: &Arc<Tether>, progress: Option<ProgressSink>) {
        self.pass_then_watch(t, progress);
        let (me, t2) = (Arc::clone(self), Arc::clone(t));
        let task = tokio::spawn(async move {
            let mut bus = t2.bus.subscribe();
            loop {
                match bus.recv().await {
                    Ok(Event::ReindexRequested) => me.reindex(&t2),
                    Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
                }
            }
        });
        *self.listen.lock().unwrap_or_else(|p| p.into_inner()) = Some(task);
    }

    /// A deep pass beside the watcher (the GUI's re-index).
    fn reindex(&self, t: &Arc<Tether>) {
        if t.daemon.indexing() {
            return;
        }
        let t = Arc::clone(t);
        tokio::task::spawn_blocking(move || {
            if let Err(e) = index_reporting(&t, Depth::Deep, &|_| {}) {
                tracing::warn!(error = %e, "re-index failed");
            }
        });
    }

    fn pass_then_watch(&self, t: &Arc<Tether>, progress: Option<ProgressSink>) {
        let (t, watcher, paused) = (Arc::clone(t), Arc::clone(&self.watcher), Arc::clone(&self.paused));
        let task = tokio::task::spawn_blocking(move || {
            let also = |p: &Progress| {
                if let Some(f) = &progress {
                    f(p);
                }
            };
            match index_reporting(&t, Depth::Deep, &also) {
                Ok(r) => {
                    tracing::info!(chats = r.sessions_total, messages = r.messages_total, ms = r.elapsed_ms, "indexed")
                }
                Err(e) => tracing::warn!(error = %e, "the initial index failed"),
            }
            if paused.load(Ordering::SeqCst) {
                return;
            }
            let bus = t.bus.clone();
            match t.watch(WatchConfig::default(), move |ev| match ev {
                WatchEvent::Indexed(r) if r.sessions_written + r.sessions_deleted > 0 => {
                    tracing::info!(
                        updated = r.sessions_written,
                        removed = r.sessions_deleted,
                        ms = r.elapsed_ms,
                        "index updated"
                    );
                    bus.emit(Event::Sessions { ids: Some(r.changed.clone()) });
                }
                WatchEvent::Indexed(_) => {}
                WatchEvent::Error(e) => tracing::warn!(error = %e, "watch pass failed"),
            }) {
                Ok(w) => *watcher.lock().unwrap_or_else(|p| p.into_inner()) = Some(w),
                Err(e) => tracing::warn!(error = %e, "cannot watch Cursor's files; the index will not update"),
            }
        });
        *self.pass.lock().unwrap_or_else(|p| p.into_inner()) = Some(task);
    }

    pub(crate) fn paused(&self) -> bool {
        self.paused.load(Ordering::SeqCst)
    }

    /// Stops watching Cursor's files; the index stays as it is and keeps being served.
    pub(crate) fn pause(&self, t: &Tether) {
        self.paused.store(true, Ordering::SeqCst);
        self.stop_watching();
        t.daemon.set_paused(true);
        t.bus.emit(Event::Index(IndexEvent { state: "paused".into(), ..IndexEvent::default() }));
    }

    /// Catches up (a deep pass) and watches again.
    pub(crate) fn resume(&self, t: &Arc<Tether>) {
        if !self.paused.swap(false, Ordering::SeqCst) || self.first_pass_running() {
            return;
        }
        t.daemon.set_paused(false);
        t.bus.emit(Event::Index(IndexEvent { state: "idle".into(), ..IndexEvent::default() }));
        self.pass_then_watch(t, None);
    }

    /// Reads Cursor's data from elsewhere: a pass under way (it read the old folders) finishes,
    /// then everything starts over.
    pub(crate) async fn restart(&self, t: &Arc<Tether>) {
        let pass = self.pass.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(p) = pass {
            let _ = p.await;
        }
        self.stop_watching();
        if !self.paused() {
            self.pass_then_watch(t, None);
        }
    }

    pub(crate) fn first_pass_running(&self) -> bool {
        self.pass.lock().unwrap_or_else(|p| p.into_inner()).as_ref().is_some_and(|t| !t.is_finished())
    }

    fn stop_watching(&self) {
        if let Some(w) = self.watcher.lock().unwrap_or_else(|p| p.into_inner()).take() {
            w.stop();
        }
    }

    /// Stops watching and listening; a pass still running is left to the process's exit (its
    /// writes are transactions).
    pub(crate) fn stop(&self) {
        self.stop_watching();
        if let Some(l) = self.listen.lock().unwrap_or_else(|p| p.into_inner()).take() {
            l.abort();
        }
    }
}
