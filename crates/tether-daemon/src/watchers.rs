//! Small components that follow files and the team database: the store watcher (our database's
//! WAL, or a team's revisions: what another process or machine wrote to the board is announced
//! on the bus, once — this process's own writes announce themselves), the settings watcher (`settings.json` saved by another process, or by hand:
//! the held settings are swapped and the daemon applies them), the trace publisher (new
//! commits in a repository whose person asked for Agent Trace records in it get them) and the
//! team heartbeat (a daemon on a team's board checks in). Each stops when dropped.

use std::sync::{Arc, Weak};
use std::time::Duration;

use tether_core::Tether;
use tokio::task::JoinHandle;

/// The team board's identity while this instance is on one (a new join is a new board).
fn team_board_id(t: &Tether) -> Option<usize> {
    match t.board_db() {
        tether_board::Engine::Shared(db) => Some(Arc::as_ptr(&db) as *const () as usize),
        tether_board::Engine::Borrowed(_) => None,
    }
}

/// How often the board is checked when the database's file cannot be watched (no file events).
/// While it is watched, nothing is polled: a write is an event.
const FALLBACK_POLL: Duration = Duration::from_secs(5);
/// How often a team's board is checked for other machines' writes when no notification came:
/// only a net (the listener itself reports once after each reconnect, for what it may have
/// missed), kept long because every idle machine pays it to the database.
const TEAM_POLL: Duration = Duration::from_secs(30);

pub(crate) struct Watching {
    _watcher: Option<Box<dyn std::any::Any + Send>>,
    task: JoinHandle<()>,
}

impl Drop for Watching {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Announces the board writes of other processes (the CLI, another daemon's tools) and, on a
/// team's board, of other machines. Sleeps until a write, a notification or a move of the board:
/// an idle daemon is not woken by it.
pub(crate) fn store(t: &Arc<Tether>) -> Watching {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<()>();
    let w = t
        .store
        .watch_writes(move || {
            let _ = tx.send(());
        })
        .map_err(|e| tracing::warn!(error = %e, "cannot watch the database; polling only"))
        .ok();
    let mut watched = w.is_some();
    let t = Arc::clone(t);
    let task = tokio::spawn(async move {
        let mut last = tokio::time::Instant::now();
        let mut moves = t.team_moves();
        // A team's board says when another machine wrote (LISTEN/NOTIFY): a wake-up, not the
        // truth, so the poll below stays as the net under it.
        let heard = Arc::new(tokio::sync::Notify::new());
        let mut listening: Option<(usize, tether_core::sql::Listening)> = None;
        loop {
            let board = team_board_id(&t);
            if listening.as_ref().map(|(id, _)| *id) != board {
                listening = board.and_then(|id| {
                    let h = Arc::clone(&heard);
                    t.board_db().listen(Arc::new(move || h.notify_one())).map(|l| (id, l))
                });
            }
            let net = match (t.in_team(), watched) {
                (true, _) => Some(TEAM_POLL),
                (false, true) => None,
                (false, false) => Some(FALLBACK_POLL),
            };
            let deadline = net.map(|every| last + every);
            tokio::select! {
                got = async {
                    if watched { rx.recv().await } else { std::future::pending().await }
                } => {
                    if got.is_none() {
                        // The file watcher is gone: the poll takes over.
                        watched = false;
                        continue;
                    }
                    // On a team's board this machine's file holds no board: its writes (the
                    // index, sessions) say nothing of the board's, and asking the team's
                    // database for each would make every idle machine cost it.
                    if t.in_team() {
                        continue;
                    }
                    // The WAL is written before the commit is published in the -shm index; a
                    // moment later the write is visible, and a burst is folded into one check.
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    while rx.try_recv().is_ok() {}
                    // The daemon's own writes (an index pass, several a second while Cursor
                    // streams) announce themselves: only another connection's commit is looked at.
                    if !t.store.others_wrote() {
                        continue;
                    }
                }
                _ = heard.notified() => {}
                // Joined or left: listen where the board is now (and look at it once).
                r = moves.changed() => {
                    if r.is_err() {
                        return;
                    }
                }
                _ = async {
                    match deadline {
                        Some(d) => tokio::time::sleep_until(d).await,
                        None => std::future::pending().await,
                    }
                } => {}
            }
            last = tokio::time::Instant::now();
            while rx.try_recv().is_ok() {}
            let t2 = Arc::clone(&t);
            if let Ok(Ok(c)) = tokio::task::spawn_blocking(move || t2.board_db().foreign_changes()).await {
                t.bus.announce(c);
            }
        }
    });
    Watching { _watcher: w.map(|w| Box::new(w) as Box<dyn std::any::Any + Send>), task }
}

/// How often repositories that asked for trace records are checked for new commits.
const PUBLISH_EVERY: Duration = Duration::from_secs(10);
/// How often the publisher looks whether any repository asks for them, while none does and
/// nothing was written: one SQL read a minute is what an idle daemon pays for the feature.
const PUBLISH_IDLE: Duration = Duration::from_secs(60);
/// While no repository asks, a write to the database (a `tether trace enable` in another
/// process, or the GUI's in this one, is one) wakes the publisher to look again at once; a
/// burst of writes (an index pass) is one look per this long.
const PUBLISH_WAKE_GAP: Duration = Duration::from_secs(1);

/// Writes trace records for new commits into the repositories that asked for them (one SQL
/// read when none did). With none asking it sleeps until the database is written (which is how
/// a repository comes to ask) or a minute passes, so turning publishing on takes effect for the
/// next commit, not a minute later.
pub(crate) fn trace_publisher(t: &Arc<Tether>) -> Watching {
    let written = Arc::new(tokio::sync::Notify::new());
    let w = {
        let written = Arc::clone(&written);
        t.store.watch_writes(move || written.notify_one()).ok()
    };
    let t = Arc::clone(t);
    let task = tokio::spawn(async move {
        let mut idle = false;
        loop {
            if idle {
                tokio::select! {
                    _ = tokio::time::sleep(PUBLISH_IDLE) => {}
                    _ = written.notified() => {
                        // The WAL is written before the commit is visible (as in the store
                        // watcher); a moment later it is, and the rest of the burst is one look.
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        let _ = tokio::time::timeout(Duration::ZERO, written.notified()).await;
                    }
                }
            } else {
                tokio::time::sleep(PUBLISH_EVERY).await;
            }
            let t2 = Arc::clone(&t);
            let done = tokio::task::spawn_blocking(move || tether_core::code_origin::publish(&t2)).await;
            idle = false;
            match done {
                Ok(Err(e)) => tracing::warn!(error = %e, "writing trace records into a repository"),
                Ok(Ok(p)) if p.repos == 0 => {
                    idle = true;
                    // At most one look a second however often the database is written; a write
                    // meanwhile is still heard (its wake-up waits for the loop).
                    tokio::time::sleep(PUBLISH_WAKE_GAP).await;
                }
                Ok(Ok(p)) if p.records > 0 => {
                    tracing::info!(records = p.records, commits = p.commits, "trace records written")
                }
                _ => {}
            }
        }
    });
    Watching { _watcher: w.map(|w| Box::new(w) as Box<dyn std::any::Any + Send>), task }
}

/// Checks in with the team database while this instance is in a team (and ends the runs of
/// runner machines that stopped checking in), saying once when it cannot be reached and once
/// when it can again.
pub(crate) fn team_heartbeat(t: &Arc<Tether>) -> Watching {
    let t = Arc::clone(t);
    let task = tokio::spawn(async move {
        let mut down = false;
        let mut moves = t.team_moves();
        loop {
            // Outside a team there is nobody to check in with: sleep until the board moves.
            if !t.in_team() {
                if moves.changed().await.is_err() {
                    return;
                }
                continue;
            }
            let t2 = Arc::clone(&t);
            match tokio::task::spawn_blocking(move || tether_core::team::heartbeat(&t2)).await {
                Ok(Err(e)) if !down => {
                    down = true;
                    tracing::warn!(error = %e, "the team database cannot be reached; the board waits for it");
                }
                Ok(Ok(lost)) => {
                    if down {
                        down = false;
                        tracing::warn!("the team database is reachable again");
                    }
                    if !lost.is_empty() {
                        tracing::warn!(?lost, "runs of a runner machine that stopped answering are lost");
                    }
                }
                _ => {}
            }
            tokio::select! {
                _ = tokio::time::sleep(tether_core::team::heartbeat_every()) => {}
                r = moves.changed() => {
                    if r.is_err() {
                        return;
                    }
                }
            }
        }
    });
    Watching { _watcher: None, task }
}

/// Follows `settings.json`: when it changes on disk, `apply` runs with the daemon (held weakly:
/// the watcher never keeps it alive). Through the store's one watcher of the data directory.
pub(crate) fn settings<H: Send + Sync + 'static>(
    t: &Arc<Tether>,
    host: Weak<H>,
    apply: impl Fn(Arc<H>) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>> + Send + Sync + 'static,
) -> Result<Watching, tether_core::Error> {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<()>();
    let name = t.paths.settings_json().file_name().map(|n| n.to_owned()).unwrap_or_default();
    debug_assert_eq!(t.paths.settings_json().parent(), t.store.path().parent(), "one directory, one watcher");
    let w = t.store.watch_file(name, move || {
        let _ = tx.send(());
    })?;
    let task = tokio::spawn(async move {
        while rx.recv().await.is_some() {
            // A save is a write and a rename: take the burst as one change.
            tokio::time::sleep(Duration::from_millis(100)).await;
            while rx.try_recv().is_ok() {}
            let Some(h) = host.upgrade() else { break };
            apply(h).await;
        }
    });
    Ok(Watching { _watcher: Some(Box::new(w)), task })
}
