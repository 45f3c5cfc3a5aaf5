//! Edit hooks recorded off the request: one thread of its own behind a bounded queue, which
//! drops and counts what does not fit. Below `state` (which holds one) and `http::hook` (which
//! fills it); depends on the core's operations only.

use tether_core::model::agents::HookEvent;
use tether_core::ops;

/// Edit hooks waiting to be recorded at most; past this they are dropped and counted.
const EDITS_QUEUED: usize = 1024;

/// Records edit hooks off the request, one at a time on one thread of its own, from a bounded
/// queue: a burst of edits (or an edit whose recording is slow) costs at most the queue, never a
/// thread per hook (those filled the runtime's blocking pool, and then every route waited). What
/// does not fit is dropped and counted: code origin loses an edit, the daemon keeps answering.
pub(crate) struct Edits {
    tx: std::sync::mpsc::SyncSender<HookEvent>,
    dropped: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

impl Edits {
    pub(crate) fn start(t: std::sync::Arc<tether_core::Tether>) -> Self {
        Self::with(EDITS_QUEUED, move |ev| {
            if let Err(e) = tether_core::code_origin::from_hook(&t, &ev) {
                tracing::warn!(error = %e, "an edit's trace was not recorded");
            }
            if let Err(e) = ops::agents::hook(&t, &ev) {
                tracing::warn!(error = %e, "an edit hook's activity was not recorded");
            }
        })
    }

    fn with(capacity: usize, record: impl Fn(HookEvent) + Send + 'static) -> Self {
        let (tx, rx) = std::sync::mpsc::sync_channel::<HookEvent>(capacity);
        // Ends when the server (the sender) goes.
        let spawned = std::thread::Builder::new().name("tether-edit-hooks".into()).spawn(move || {
            for ev in rx {
                record(ev);
            }
        });
        if let Err(e) = spawned {
            tracing::warn!(error = %e, "no thread for recording edit hooks; they are dropped");
        }
        Self { tx, dropped: Default::default() }
    }

    pub(crate) fn push(&self, ev: HookEvent) {
        use std::sync::atomic::Ordering;
        if self.tx.try_send(ev).is_err() {
            let n = self.dropped.fetch_add(1, Ordering::Relaxed) + 1;
            // Said at the first and then at every power of two: a flood does not flood the log.
            if n.is_power_of_two() {
                tracing::warn!(dropped = n, "edit hooks arrive faster than they are recorded; dropped");
            }
        }
    }

    /// Edit hooks dropped since the daemon started.
    pub(crate) fn dropped(&self) -> u64 {
        self.dropped.load(std::sync::atomic::Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A recording that never ends holds one thread and the queue, nothing more: the rest is
    /// dropped and counted, and pushing never waits.
    #[test]
    fn a_stuck_recording_costs_one_thread_and_the_queue() {
        let (started_tx, started) = std::sync::mpsc::channel();
        let (_release, hold) = std::sync::mpsc::channel::<()>();
        let hold = std::sync::Mutex::new(hold);
        let edits = Edits::with(4, move |_| {
            let _ = started_tx.send(());
            let _ = hold.lock().unwrap().recv();
        });
        let ev = || HookEvent { hook_event_name: "afterFileEdit".into(), ..Default::default() };
        edits.push(ev());
        started.recv_timeout(std::time::Duration::from_secs(10)).unwrap();
        let at = std::time::Instant::now();
        for _ in 0..1000 {
            edits.push(ev());
        }
        assert!(at.elapsed() < std::time::Duration::from_secs(5), "pushing never waits");
        assert_eq!(edits.dropped(), 1000 - 4, "the queue holds 4; the rest is counted");
    }
}
