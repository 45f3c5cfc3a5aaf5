//! The loopback HTTP host: axum router with `/mcp` (rmcp Streamable HTTP behind the bearer
//! token), `/health` (no auth, no secrets) and `/hook` (the low-privilege hook token).

use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use futures_util::StreamExt;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::{SessionManager, SessionState, SessionStore, SessionStoreError};
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::streams::StreamGuard;
use crate::{App, Ctx, TetherMcp};

/// Documented in the README; `--port` / `TETHER_PORT` change it.
pub const DEFAULT_PORT: u16 = 47821;

/// Sessions idle this long with no open GET stream are closed (the client has gone away).
const ABANDONED_AFTER: Duration = Duration::from_secs(2 * 3600);
/// Persisted sessions nobody restored for this long are forgotten.
const PERSISTED_FOR_MS: i64 = 7 * 24 * 3600 * 1000;

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("refusing to listen on {0}: Tether's MCP endpoint only binds to loopback (127.0.0.1 or ::1)")]
    NotLoopback(String),
    #[error(
        "port {port} on {host} is already in use by another program; choose another with --port or TETHER_PORT (and run `tether init` again so Cursor learns the new URL)"
    )]
    PortInUse { host: String, port: u16 },
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
    #[error("MCP stdio: {0}")]
    Stdio(String),
}

/// Binds the MCP listener. Only loopback addresses are accepted: the token is the only guard.
pub fn bind_loopback(host: &str, port: u16) -> Result<std::net::TcpListener, ServeError> {
    let ip: IpAddr = match host {
        "localhost" => IpAddr::from([127, 0, 0, 1]),
        h => h.parse().map_err(|_| ServeError::NotLoopback(h.to_owned()))?,
    };
    if !ip.is_loopback() {
        return Err(ServeError::NotLoopback(host.to_owned()));
    }
    let l = std::net::TcpListener::bind(SocketAddr::new(ip, port)).map_err(|e| match e.kind() {
        std::io::ErrorKind::AddrInUse => ServeError::PortInUse { host: host.to_owned(), port },
        _ => ServeError::Io { context: format!("binding {host}:{port}"), source: e },
    })?;
    l.set_nonblocking(true).map_err(|e| ServeError::Io { context: "configuring the listener".into(), source: e })?;
    Ok(l)
}

/// rmcp's session store, in our SQLite: a client that initialised before a restart keeps its
/// `Mcp-Session-Id` afterwards instead of getting 404 (which Cursor shows as a red server).
struct SqliteSessions(Arc<App>);

#[async_trait::async_trait]
impl SessionStore for SqliteSessions {
    async fn load(&self, id: &str) -> Result<Option<SessionState>, SessionStoreError> {
        let t = Arc::clone(&self.0.tether);
        let id = id.to_owned();
        let raw =
            tokio::task::spawn_blocking(move || tether_core::board::live::load_mcp_session(&t.store, &id)).await??;
        Ok(raw.map(|s| serde_json::from_str(&s)).transpose()?)
    }

    async fn store(&self, id: &str, state: &SessionState) -> Result<(), SessionStoreError> {
        let t = Arc::clone(&self.0.tether);
        let (id, s) = (id.to_owned(), serde_json::to_string(state)?);
        tokio::task::spawn_blocking(move || tether_core::board::live::save_mcp_session(&t.store, &id, &s)).await??;
        Ok(())
    }

    async fn delete(&self, id: &str) -> Result<(), SessionStoreError> {
        let t = Arc::clone(&self.0.tether);
        let id = id.to_owned();
        tokio::task::spawn_blocking(move || tether_core::board::live::delete_mcp_session(&t.store, &id)).await??;
        Ok(())
    }
}

/// A client must send a request's headers within this long (also the idle limit between
/// requests on a kept-alive connection). Open streams are not affected: they are responses.
const HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// Serves until `shutdown` resolves. Every session and stream ends with it.
pub async fn serve_http(
    listener: std::net::TcpListener,
    app: Arc<App>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    let budget = crate::conn::Budget::for_descriptors(crate::conn::raise_descriptor_limit());
    // Any loopback address may be bound (`--host 127.0.0.2`); requests naming it are ours.
    let bound = listener.local_addr().map(|a| a.ip()).ok().filter(|ip| ip.is_loopback());
    let listener = tokio::net::TcpListener::from_std(listener)
        .map_err(|e| ServeError::Io { context: "adopting the listener".into(), source: e })?;
    let ct = CancellationToken::new();
    let mut sm = LocalSessionManager::default();
    // rmcp's idle timer ignores an open GET stream; Cursor then gets 404 and marks us failed.
    // We reap abandoned sessions ourselves (see `reap`).
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
        .with_cancellation_token(ct.child_token())
        .with_max_request_body_bytes(1 << 20);
    cfg.session_store = Some(Arc::new(SqliteSessions(Arc::clone(&app))));
    let factory_app = Arc::clone(&app);
    let svc = StreamableHttpService::new(move || Ok(TetherMcp::new(Arc::clone(&factory_app))), Arc::clone(&sm), cfg);
    let ctx = Ctx { app: Arc::clone(&app) };
    let router = Router::new()
        .nest_service("/mcp", svc)
        .layer(middleware::from_fn_with_state(ctx.clone(), mcp_guard))
        .route("/health", get(health))
        .route("/hook", post(hook))
        .merge(crate::callback::router())
        .merge(crate::web::router(ctx.clone()))
        .with_state(ctx.clone());
    let reaper = tokio::spawn(reap(ctx, Arc::clone(&sm)));
    let tasks = tokio::spawn(crate::watch_board(Arc::clone(&app)));
    let bell = tokio::spawn(crate::doorbell::run(Arc::clone(&app)));
    let r = accept_loop(listener, router, budget, ct.clone(), shutdown).await;
    ct.cancel();
    reaper.abort();
    tasks.abort();
    bell.abort();
    r
}

/// Accepts connections within the [`crate::conn::Budget`] and serves each with HTTP/1 and a
/// header timeout, until `shutdown`; then asks open connections to finish and gives them a
/// moment before closing them (event streams never finish on their own).
async fn accept_loop(
    listener: tokio::net::TcpListener,
    router: Router,
    budget: Arc<crate::conn::Budget>,
    stop: CancellationToken,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    use hyper_util::rt::{TokioIo, TokioTimer};
    let mut conns = tokio::task::JoinSet::new();
    tokio::pin!(shutdown);
    loop {
        let (stream, _) = tokio::select! {
            _ = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    // Out of descriptors and the like: wait a little rather than spin.
                    tracing::warn!(error = %e, "accepting a connection");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let Some(seat) = budget.admit() else {
            tracing::debug!("every connection is held by a client with a token; closing a new one");
            continue;
        };
        let seat = Arc::new(seat);
        // rmcp writes each SSE event separately; without NODELAY, Nagle + delayed ACK add ~40 ms.
        let _ = stream.set_nodelay(true);
        let (router, mine) = (router.clone(), Arc::clone(&seat));
        let svc = hyper::service::service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
            let (router, seat) = (router.clone(), Arc::clone(&mine));
            async move {
                let res = tower::ServiceExt::oneshot(router, req.map(Body::new)).await;
                if let Ok(r) = &res
                    && r.extensions().get::<crate::conn::Authenticated>().is_some()
                {
                    seat.trust();
                }
                res
            }
        });
        let stop = stop.clone();
        conns.spawn(async move {
            let conn = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(HEADER_TIMEOUT)
                .serve_connection(TokioIo::new(stream), svc);
            tokio::pin!(conn);
            tokio::select! {
                _ = conn.as_mut() => {}
                // Room was needed and this connection had proven nothing.
                _ = seat.evicted.cancelled() => {}
                _ = stop.cancelled() => {
                    conn.as_mut().graceful_shutdown();
                    let _ = tokio::time::timeout(Duration::from_secs(2), conn).await;
                }
            }
        });
        while conns.try_join_next().is_some() {}
    }
    stop.cancel();
    if tokio::time::timeout(Duration::from_secs(3), async { while conns.join_next().await.is_some() {} }).await.is_err()
    {
        conns.abort_all();
    }
    Ok(())
}

/// Bearer check (constant time; a plain 401 without `WWW-Authenticate` so Cursor does not start
/// an OAuth flow), then activity tracking for the reaper.
async fn mcp_guard(State(ctx): State<Ctx>, req: Request, next: Next) -> Response {
    let given = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or("");
    if !ctx.app.token_matches(given) {
        return (StatusCode::UNAUTHORIZED, "missing or wrong bearer token (see `tether token show`)\n").into_response();
    }
    let res = mcp_session(&ctx, req, next).await;
    authenticated(res)
}

/// Marks a response as answering a proven credential (see [`crate::conn`]).
pub(crate) fn authenticated(mut res: Response) -> Response {
    res.extensions_mut().insert(crate::conn::Authenticated);
    res
}

/// Session bookkeeping around an authenticated MCP request: unknown-session deletes, the 204
/// for a deleted session, and the GET stream guard for the reaper.
async fn mcp_session(ctx: &Ctx, req: Request, next: Next) -> Response {
    let session = req.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()).map(str::to_owned);
    let method = req.method().clone();
    if method == Method::DELETE
        && let Some(id) = &session
        && !ctx.app.knows_session(id).await
    {
        return (StatusCode::NOT_FOUND, "no such MCP session\n").into_response();
    }
    let res = next.run(req).await;
    let session =
        session.or_else(|| res.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()).map(str::to_owned));
    let Some(session) = session else { return res };
    if method == Method::DELETE && res.status().is_success() {
        ctx.app.forget_session(&session);
        // The session is gone: nothing was accepted for later, so 204 rather than rmcp's 202
        // (the Python SDK reports 202 as "Session termination failed").
        let (mut parts, body) = res.into_parts();
        parts.status = StatusCode::NO_CONTENT;
        return Response::from_parts(parts, body);
    }
    if !res.status().is_success() {
        // A request for an unknown session (404) does not make it one.
        return res;
    }
    let is_stream = method == Method::GET && res.status().is_success();
    ctx.app.session_seen(&session, is_stream);
    if !is_stream {
        return res;
    }
    let guard = StreamGuard(Arc::clone(&ctx.app), session);
    let (parts, body) = res.into_parts();
    let body = Body::from_stream(body.into_data_stream().map(move |chunk| {
        let _ = &guard;
        chunk
    }));
    Response::from_parts(parts, body)
}

/// Closes sessions whose client is gone: no open GET stream and no request for a long time.
async fn reap(ctx: Ctx, sm: Arc<LocalSessionManager>) {
    let mut tick = tokio::time::interval(Duration::from_secs(600));
    loop {
        tick.tick().await;
        for id in ctx.app.streams.take_abandoned(ABANDONED_AFTER) {
            tracing::info!(session = %id, "closing an abandoned MCP session");
            let _ = sm.close_session(&Arc::from(id.as_str())).await;
            ctx.app.forget_session(&id);
        }
        let t = Arc::clone(&ctx.app.tether);
        let _ = tokio::task::spawn_blocking(move || {
            tether_core::board::live::prune_mcp_sessions(&t.store, PERSISTED_FOR_MS)
        })
        .await;
    }
}

async fn health(State(ctx): State<Ctx>) -> Response {
    axum::Json(crate::web::health_json(&ctx).await).into_response()
}

/// A hook payload is a small JSON object; `tether hook` itself reads at most 1 MiB of stdin.
const MAX_HOOK_BODY: usize = 1 << 20;

/// Hook reports from `tether hook`: the hook token only opens this door. The token is checked
/// before a byte of the body is read, so a caller without it costs nothing.
async fn hook(State(ctx): State<Ctx>, req: Request) -> Response {
    let given = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or("");
    if !tether_core::token::matches(&ctx.app.hook_token, given) {
        return (StatusCode::UNAUTHORIZED, "missing or wrong hook token\n").into_response();
    }
    authenticated(hook_event(ctx, req).await)
}

async fn hook_event(ctx: Ctx, req: Request) -> Response {
    let body = match axum::body::to_bytes(req.into_body(), MAX_HOOK_BODY).await {
        Ok(b) => b,
        Err(_) => return (StatusCode::PAYLOAD_TOO_LARGE, "hook payload over 1 MiB\n").into_response(),
    };
    let ev: tether_core::board::live::HookEvent = match serde_json::from_slice(&body) {
        Ok(ev) => ev,
        Err(e) => {
            return (StatusCode::BAD_REQUEST, format!("hook payload is not the expected JSON: {e}\n")).into_response();
        }
    };
    let app = Arc::clone(&ctx.app);
    match tokio::task::spawn_blocking(move || app.hook(ev)).await {
        Ok(Ok(None)) => StatusCode::NO_CONTENT.into_response(),
        Ok(Ok(Some(followup))) => axum::Json(json!({"followup_message": followup})).into_response(),
        Ok(Err(e)) => (StatusCode::INTERNAL_SERVER_ERROR, format!("{e}\n")).into_response(),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, format!("{e}\n")).into_response(),
    }
}
