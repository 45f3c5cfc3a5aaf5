//! `/mcp` over Streamable HTTP: rmcp's service with its sessions persisted in our store (a
//! client keeps its session across a restart), and the tasks that live as long as it — the
//! reaper of abandoned sessions, the doorbell, the notifier of subscribed resources.

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use rmcp::transport::streamable_http_server::session::SessionManager;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::server::TetherMcp;
use super::{doorbell, error, notify, store};
use crate::Server;

/// Sessions idle this long with no open GET stream are closed (the client has gone away).
const ABANDONED_AFTER: Duration = Duration::from_secs(2 * 3600);
/// Persisted sessions nobody restored for this long are forgotten.
const PERSISTED_FOR_MS: i64 = 7 * 24 * 3600 * 1000;

/// The Streamable HTTP service for `/mcp` (sessions persisted in our store, so a client keeps
/// its session across a restart), and the tasks that live as long as it: the reaper of
/// abandoned sessions, the doorbell, and the notifier of subscribed resources.
pub(crate) fn http_service(
    server: &Arc<Server>,
    bound: Option<IpAddr>,
    ct: CancellationToken,
) -> (axum::Router, Vec<JoinHandle<()>>) {
    let mut sm = LocalSessionManager::default();
    // rmcp's idle timer ignores an open GET stream; Cursor then gets 404 and marks us failed.
    // Abandoned sessions are reaped here instead (see `reap`).
    sm.session_config.keep_alive = None;
    let sm = Arc::new(sm);
    let mut hosts = vec!["localhost".to_owned(), "127.0.0.1".to_owned(), "::1".to_owned()];
    let mut origins =
        vec!["http://localhost:*".to_owned(), "http://127.0.0.1:*".to_owned(), "http://[::1]:*".to_owned()];
    if let Some(ip) = bound.filter(|ip| !hosts.contains(&ip.to_string())) {
        hosts.push(ip.to_string());
        origins.push(format!("http://{ip}:*"));
    }
    let mut cfg = StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts)
        .with_allowed_origins(origins)
        .with_cancellation_token(ct)
        .with_max_request_body_bytes(1 << 20);
    cfg.session_store = Some(Arc::new(store::SqliteSessions(Arc::clone(&server.tether))));
    let factory = Arc::clone(server);
    let svc = StreamableHttpService::new(move || Ok(TetherMcp::new(Arc::clone(&factory))), Arc::clone(&sm), cfg);
    let background = vec![
        tokio::spawn(reap(Arc::clone(server), sm)),
        tokio::spawn(doorbell::run(Arc::clone(server))),
        tokio::spawn(notify::run(Arc::clone(server))),
    ];
    (axum::Router::new().fallback_service(svc), background)
}

/// Closes sessions whose client is gone: no open GET stream and no request for a long time.
async fn reap(server: Arc<Server>, sm: Arc<LocalSessionManager>) {
    let mut tick = tokio::time::interval(Duration::from_secs(600));
    loop {
        tick.tick().await;
        for id in server.mcp.streams.take_abandoned(ABANDONED_AFTER) {
            tracing::info!(session = %id, "closing an abandoned MCP session");
            let _ = sm.close_session(&Arc::from(id.as_str())).await;
            server.mcp.forget(&id);
        }
        let _ = error::blocking(&server.tether, |t| t.mcp_sessions().prune(PERSISTED_FOR_MS)).await;
    }
}
