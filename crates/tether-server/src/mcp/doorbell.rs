//! The doorbell: tells an MCP session that its inbox (`tether://inbox`) has signals, with a
//! `notifications/resources/updated` on the session's GET stream. Doorbell, not payload: the
//! notification names the inbox and nothing else; the drain (`signals_pending`) is the payload.
//!
//! At most one bell is outstanding per session: signals arriving before the drain are coalesced,
//! and a drain re-arms it (said on the bus before the drain's write is, so no read that follows
//! the drain finds the bell still taken). System signals never ring. Every outcome (rang,
//! coalesced, filtered, uncaptured, send_failed) is recorded with the signal through the core.
//! One task rings, woken by the event bus: every signal write (in this process, or another's
//! seen by the daemon's store watcher) and every drain that re-arms a bell.

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use rmcp::model::ResourceUpdatedNotificationParam;
use tether_core::model::signals::{Ring, Wake, WakePath, WakeResult};

use tether_core::events::Event;
use tokio::sync::broadcast::error::RecvError;

use crate::Server;

/// The calling session's inbox; subscribers (and every session with a stream) hear of new signals.
pub const INBOX_URI: &str = "tether://inbox";
/// On a team's board, how long a delivery to another machine's MCP session is left to that
/// machine's doorbell before any machine records it as not captured.
const ELSEWHERE_GRACE_MS: i64 = 60_000;
/// A client that does not take a notification within this long counts as a failed send.
const SEND_TIMEOUT: Duration = Duration::from_secs(2);
/// In case a write from another process was missed (on a team's board the database's
/// notifications wake the doorbell, so the net is wider: each idle machine pays it).
const FALLBACK_POLL: Duration = Duration::from_secs(5);
const TEAM_FALLBACK_POLL: Duration = Duration::from_secs(30);

/// Rings for every untried delivery until aborted: at start (deliveries written while no daemon
/// ran still get their outcome recorded), on every signal write, and every few seconds in case.
pub(crate) async fn run(server: Arc<Server>) {
    let mut bus = server.tether.bus.subscribe();
    loop {
        // Drains said before now re-arm their bells before the deliveries are read: a signal
        // sent right after a drain (seen here through another machine's write) must find the
        // bell armed, not coalesce into the one just answered.
        while let Ok(ev) = bus.try_recv() {
            if let Event::SignalsDrained { session } = ev {
                server.mcp.doorbell.rearm(&session);
            }
        }
        let t = Arc::clone(&server.tether);
        match tokio::task::spawn_blocking(move || t.board().signals().unrung().map(|r| mine(&t, r))).await {
            Ok(Ok(rings)) if !rings.is_empty() => {
                let wakes = ring_all(&server, rings).await;
                let t = Arc::clone(&server.tether);
                match tokio::task::spawn_blocking(move || t.board().signals().record_wakes(&wakes)).await {
                    Ok(Ok(())) => {}
                    Ok(Err(e)) => tracing::warn!(error = %e, "recording doorbell outcomes"),
                    Err(e) => tracing::warn!(error = %e, "recording doorbell outcomes"),
                }
                continue;
            }
            Ok(Ok(_)) => {}
            // A team database that cannot be reached is said once, by the daemon's heartbeat.
            Ok(Err(e)) if e.is_unavailable() => tracing::debug!(error = %e, "reading undelivered signals"),
            Ok(Err(e)) => tracing::warn!(error = %e, "reading undelivered signals"),
            Err(e) => tracing::warn!(error = %e, "reading undelivered signals"),
        }
        // Until something may have been sent (a drain re-arms a bell on the way).
        let deadline = tokio::time::sleep(if server.tether.in_team() { TEAM_FALLBACK_POLL } else { FALLBACK_POLL });
        tokio::pin!(deadline);
        loop {
            tokio::select! {
                ev = bus.recv() => match ev {
                    Ok(Event::Signals { .. }) | Err(RecvError::Lagged(_)) => break,
                    Ok(Event::SignalsDrained { session }) => server.mcp.doorbell.rearm(&session),
                    Ok(_) => {}
                    Err(RecvError::Closed) => return,
                },
                _ = &mut deadline => break,
            }
        }
    }
}

/// The deliveries this daemon is to ring: on a team's board, those to MCP sessions of another
/// machine are that machine's doorbell's (for a while: a session no machine answers for is then
/// recorded as not captured by whichever sees it).
fn mine(t: &tether_core::Tether, rings: Vec<Ring>) -> Vec<Ring> {
    if !t.in_team() {
        return rings;
    }
    let now = tether_core::clock::now_ms();
    rings
        .into_iter()
        .filter(|r| match r.mcp_session.as_deref() {
            None => true,
            Some(s) => now - r.sent_at > ELSEWHERE_GRACE_MS || t.mcp_sessions().load(s).ok().flatten().is_some(),
        })
        .collect()
}

/// Decides each delivery's outcome and sends the bells (concurrently: a stalled client must not
/// hold up the others).
async fn ring_all(server: &Arc<Server>, rings: Vec<Ring>) -> Vec<Wake> {
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
        let peer =
            r.mcp_session.as_deref().filter(|s| server.mcp.streams.has_stream(s)).and_then(|s| server.mcp.peer(s));
        let (Some(session), Some(peer)) = (r.mcp_session.clone(), peer) else {
            wakes.push(wake(WakeResult::Uncaptured));
            continue;
        };
        if !server.mcp.doorbell.take(&session) {
            wakes.push(wake(WakeResult::Coalesced));
            continue;
        }
        let mut w = wake(WakeResult::Rang);
        let server = Arc::clone(server);
        sends.push(async move {
            let note = peer.notify_resource_updated(ResourceUpdatedNotificationParam::new(INBOX_URI));
            let ok = matches!(tokio::time::timeout(SEND_TIMEOUT, note).await, Ok(Ok(())));
            if !ok {
                tracing::debug!(session = %session, signal = w.signal, "doorbell send failed");
                server.mcp.doorbell.rearm(&session);
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
