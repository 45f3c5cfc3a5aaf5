//! Bookkeeping of HTTP sessions around authenticated `/mcp` requests: which sessions exist, the
//! GET streams each holds open (a session with one is `full`: the doorbell can reach it), a
//! delete of an unknown session, the 204 for a deleted one.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::Request;
use axum::http::Method;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt;

use super::error;
use super::streams::Edge;
use crate::Server;

/// Session bookkeeping around an authenticated `/mcp` request: a delete of an unknown session,
/// the 204 for a deleted one, and the GET stream's guard (the reaper and the doorbell read it).
pub(crate) async fn track(server: &Arc<Server>, req: Request, next: Next) -> Response {
    let session = req.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()).map(str::to_owned);
    let method = req.method().clone();
    if method == Method::DELETE
        && let Some(id) = &session
        && !knows(server, id).await
    {
        return (axum::http::StatusCode::NOT_FOUND, "no such MCP session\n").into_response();
    }
    let res = next.run(req).await;
    let session =
        session.or_else(|| res.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()).map(str::to_owned));
    let Some(session) = session else { return res };
    if method == Method::DELETE && res.status().is_success() {
        server.mcp.forget(&session);
        // The session is gone: nothing was accepted for later, so 204 rather than rmcp's 202
        // (the Python SDK reports 202 as "Session termination failed").
        let (mut parts, body) = res.into_parts();
        parts.status = axum::http::StatusCode::NO_CONTENT;
        return Response::from_parts(parts, body);
    }
    if !res.status().is_success() {
        // A request for an unknown session (404) does not make it one.
        return res;
    }
    let is_stream = method == Method::GET;
    seen(server, &session, is_stream);
    if !is_stream {
        return res;
    }
    let guard = StreamGuard(Arc::clone(server), session);
    let (parts, body) = res.into_parts();
    let body = Body::from_stream(body.into_data_stream().map(move |chunk| {
        let _ = &guard;
        chunk
    }));
    Response::from_parts(parts, body)
}

/// Whether `session` is an MCP session of ours: live in this process or persisted from an
/// earlier one (a client may come back after a restart).
async fn knows(server: &Arc<Server>, session: &str) -> bool {
    if server.mcp.streams.has_session(session) {
        return true;
    }
    let id = session.to_owned();
    error::blocking(&server.tether, move |t| t.mcp_sessions().load(&id)).await.ok().flatten().is_some()
}

/// A request from an HTTP session; a GET that opened its first stream promotes it to `full`.
pub(crate) fn seen(server: &Arc<Server>, session: &str, opens_stream: bool) {
    if server.mcp.streams.seen(session, opens_stream) == Edge::Opened {
        surface_changed(server, session, 1);
    }
}

/// Keeps the session's stream count where other processes read it (`tether agents list`), and
/// tells the GUI.
fn surface_changed(server: &Arc<Server>, session: &str, streams: usize) {
    let (t, session) = (Arc::clone(&server.tether), session.to_owned());
    let write = move || {
        if let Err(e) = t.mcp_sessions().set_streams(&session, streams) {
            tracing::debug!(error = %e, "recording a session's streams");
        }
        t.bus.emit(tether_core::events::Event::Agents {});
    };
    match tokio::runtime::Handle::try_current() {
        Ok(h) => drop(h.spawn_blocking(write)),
        Err(_) => write(),
    }
}

/// Lives as long as one GET stream's body; when it closes, the session is `degraded` until it
/// opens another.
pub(crate) struct StreamGuard(pub(crate) Arc<Server>, pub(crate) String);

impl Drop for StreamGuard {
    fn drop(&mut self) {
        if self.0.mcp.streams.stream_closed(&self.1) == Edge::Closed {
            surface_changed(&self.0, &self.1, 0);
        }
    }
}
