//! The doorbell: tells an MCP session that its inbox (`tether://inbox`) has signals, with a
//! `notifications/resources/updated` on the session's GET stream. Doorbell, not payload: the
//! notification names the inbox and nothing else; the drain (`signals_pending`) is the payload.
//!
//! At most one bell is outstanding per session: signals arriving before the drain are coalesced,
//! and a drain that returns signals re-arms it. System signals never ring. Every outcome (rang,
//! coalesced, filtered, uncaptured, send_failed) is recorded with the signal through the core.
//! One task rings, woken by sends in this process and by writes from any other (the CLI).

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::StreamExt;
use rmcp::model::ResourceUpdatedNotificationParam;
use tether_core::board::signals::{self, Ring, Wake, WakePath, WakeResult};

use crate::App;

/// The calling session's inbox; subscribers (and every session with a stream) hear of new signals.
pub const INBOX_URI: &str = "tether://inbox";
/// A client that does not take a notification within this long counts as a failed send.
const SEND_TIMEOUT: Duration = Duration::from_secs(2);
/// In case a write from another process was missed.
const FALLBACK_POLL: Duration = Duration::from_secs(5);

#[derive(Default)]
pub(crate) struct Doorbell {
    /// Sessions whose bell rang and was not answered by a drain yet.
    outstanding: Mutex<HashSet<String>>,
    kick: tokio::sync::Notify,
}

impl Doorbell {
    /// Something may have been sent: look for deliveries no bell has tried.
    pub(crate) fn kick(&self) {
        self.kick.notify_one();
    }

    /// The session drained signals: its next signal may ring again.
    pub(crate) fn rearm(&self, session: &str) {
        self.outstanding.lock().unwrap_or_else(|p| p.into_inner()).remove(session);
    }

    pub(crate) fn forget(&self, session: &str) {
        self.rearm(session);
    }

    /// Takes the bell of `session` if it is armed.
    fn take(&self, session: &str) -> bool {
        self.outstanding.lock().unwrap_or_else(|p| p.into_inner()).insert(session.to_owned())
    }
}

/// Rings for every untried delivery until aborted.
pub(crate) async fn run(app: Arc<App>) {
    loop {
        let t = Arc::clone(&app.tether);
        match tokio::task::spawn_blocking(move || signals::unrung(&t.store)).await {
            Ok(Ok(rings)) if !rings.is_empty() => {
                let wakes = ring_all(&app, rings).await;
                let t = Arc::clone(&app.tether);
                match tokio::task::spawn_blocking(move || signals::record_wakes(&t.store, &wakes)).await {
                    Ok(Ok(())) => {}
                    Ok(Err(e)) => tracing::warn!(error = %e, "recording doorbell outcomes"),
                    Err(e) => tracing::warn!(error = %e, "recording doorbell outcomes"),
                }
                continue;
            }
            Ok(Ok(_)) => {}
            Ok(Err(e)) => tracing::warn!(error = %e, "reading undelivered signals"),
            Err(e) => tracing::warn!(error = %e, "reading undelivered signals"),
        }
        tokio::select! {
            _ = app.doorbell.kick.notified() => {}
            _ = tokio::time::sleep(FALLBACK_POLL) => {}
        }
    }
}

/// Decides each delivery's outcome and sends the bells (concurrently: a stalled client must not
/// hold up the others).
async fn ring_all(app: &Arc<App>, rings: Vec<Ring>) -> Vec<Wake> {
    let mut wakes = Vec::with_capacity(rings.len());
    let mut sends = futures_util::stream::FuturesUnordered::new();
    for r in rings {
        let wake = |result| Wake {
            signal: r.signal,
            recipient: r.recipient.clone(),
            path: WakePath::Sse,
            result,
            mcp_session: r.mcp_session.clone(),
        };
        if r.kind.is_system() {
            wakes.push(wake(WakeResult::Filtered));
            continue;
        }
        let peer = r.mcp_session.as_deref().filter(|s| app.streams.has_stream(s)).and_then(|s| app.peer(s));
        let (Some(session), Some(peer)) = (r.mcp_session.clone(), peer) else {
            wakes.push(wake(WakeResult::Uncaptured));
            continue;
        };
        if !app.doorbell.take(&session) {
            wakes.push(wake(WakeResult::Coalesced));
            continue;
        }
        let mut w = wake(WakeResult::Rang);
        let app = Arc::clone(app);
        sends.push(async move {
            let note = peer.notify_resource_updated(ResourceUpdatedNotificationParam::new(INBOX_URI));
            let ok = matches!(tokio::time::timeout(SEND_TIMEOUT, note).await, Ok(Ok(())));
            if !ok {
                tracing::debug!(session = %session, signal = w.signal, "doorbell send failed");
                app.doorbell.rearm(&session);
                w.result = WakeResult::SendFailed;
            }
            w
        });
    }
    while let Some(w) = sends.next().await {
        wakes.push(w);
    }
    wakes
}
