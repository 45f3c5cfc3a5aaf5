//! Which MCP sessions are alive on the HTTP transport: when each last made a request and how many
//! GET streams (the only way a server can push to the client) it holds open right now. The reaper
//! closes sessions that went quiet; the doorbell rings only sessions with a stream.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Instant;

use serde::Serialize;

/// One MCP session on the HTTP transport as the GUI's health view shows it.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[ts(export, export_to = "server.ts")]
pub(crate) struct McpSessionView {
    pub id: String,
    /// Always `streamable-http` (stdio sessions are their own process's).
    pub transport: &'static str,
    /// ISO 8601, the session's last request or stream change.
    pub last_activity: String,
    /// GET streams open now (the only way to push to it; the doorbell needs one).
    pub streams: usize,
}

/// Per session: last request, open GET streams.
#[derive(Default)]
pub(crate) struct Streams(Mutex<HashMap<String, (Instant, usize)>>);

/// What a change did to a session's streams: the first stream opened or the last one closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Edge {
    None,
    Opened,
    Closed,
}

impl Streams {
    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<String, (Instant, usize)>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A request from `session`; `opens_stream` when it is a GET whose SSE body is now open.
    pub(crate) fn seen(&self, session: &str, opens_stream: bool) -> Edge {
        let mut m = self.map();
        let e = m.entry(session.to_owned()).or_insert((Instant::now(), 0));
        e.0 = Instant::now();
        if opens_stream {
            e.1 += 1;
            if e.1 == 1 {
                return Edge::Opened;
            }
        }
        Edge::None
    }

    pub(crate) fn stream_closed(&self, session: &str) -> Edge {
        let mut m = self.map();
        match m.get_mut(session) {
            Some(e) => {
                e.0 = Instant::now();
                let was = e.1;
                e.1 = e.1.saturating_sub(1);
                if was == 1 { Edge::Closed } else { Edge::None }
            }
            None => Edge::None,
        }
    }

    pub(crate) fn forget(&self, session: &str) {
        self.map().remove(session);
    }

    pub(crate) fn has_session(&self, session: &str) -> bool {
        self.map().contains_key(session)
    }

    pub(crate) fn has_stream(&self, session: &str) -> bool {
        self.map().get(session).is_some_and(|e| e.1 > 0)
    }

    /// Sessions with no stream and no request for `idle`; they are forgotten here.
    pub(crate) fn take_abandoned(&self, idle: std::time::Duration) -> Vec<String> {
        let mut m = self.map();
        let stale: Vec<String> =
            m.iter().filter(|(_, (at, open))| *open == 0 && at.elapsed() > idle).map(|(k, _)| k.clone()).collect();
        for k in &stale {
            m.remove(k);
        }
        stale
    }

    /// How many sessions are alive (the figure `/health` gives; the same map as [`Self::report`]).
    pub(crate) fn count(&self) -> usize {
        self.map().len()
    }

    /// Each session with its last request and open GET streams, newest first (the health view).
    pub(crate) fn report(&self) -> Vec<McpSessionView> {
        let m = self.map();
        let now = tether_core::clock::now_ms();
        let mut v: Vec<(u128, McpSessionView)> = m
            .iter()
            .map(|(id, (at, streams))| {
                let idle = at.elapsed().as_millis();
                let last_activity = tether_core::clock::iso(now - idle as i64);
                (
                    idle,
                    McpSessionView { id: id.clone(), transport: "streamable-http", last_activity, streams: *streams },
                )
            })
            .collect();
        v.sort_by_key(|(idle, _)| *idle);
        v.into_iter().map(|(_, s)| s).collect()
    }
}
