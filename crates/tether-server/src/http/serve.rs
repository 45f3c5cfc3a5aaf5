//! Serving: binding loopback only, the accept loop within the connection budget, and the MCP
//! service's background tasks for as long as the server runs.

use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use tokio_util::sync::CancellationToken;

use super::{conn, routes};
use crate::Server;

/// A client must send a request's headers within this long (also the idle limit between
/// requests on a kept-alive connection). Open streams are not affected: they are responses.
const HEADER_TIMEOUT: Duration = Duration::from_secs(10);

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

/// Serves until `shutdown` resolves; every session and stream ends with it. The MCP sessions'
/// reaper, the doorbell and the notifier of subscribed resources run as long as the server does.
pub async fn serve_http(
    listener: std::net::TcpListener,
    server: Arc<Server>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    let budget = conn::Budget::for_descriptors(conn::raise_descriptor_limit());
    // Any loopback address may be bound (`--host 127.0.0.2`); requests naming it are ours.
    let bound = listener.local_addr().map(|a| a.ip()).ok().filter(|ip| ip.is_loopback());
    let listener = tokio::net::TcpListener::from_std(listener)
        .map_err(|e| ServeError::Io { context: "adopting the listener".into(), source: e })?;
    let ct = CancellationToken::new();
    let (mcp, background) = crate::mcp::service::http_service(&server, bound, ct.child_token());
    let router = routes::router(Arc::clone(&server), mcp);
    let r = accept_loop(listener, router, budget, ct.clone(), shutdown).await;
    ct.cancel();
    for t in background {
        t.abort();
    }
    r
}

/// Accepts connections within the [`conn::Budget`] and serves each with HTTP/1 and a
/// header timeout, until `shutdown`; then asks open connections to finish and gives them a
/// moment before closing them (event streams never finish on their own).
async fn accept_loop(
    listener: tokio::net::TcpListener,
    router: Router,
    budget: Arc<conn::Budget>,
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
                    && r.extensions().get::<conn::Authenticated>().is_some()
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
