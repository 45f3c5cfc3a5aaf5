//! The routes Cursor's servers and cloud agents reach through the person's public URL (a tunnel
//! of theirs to this loopback port; `cloud.public_url`): Cursor's webhook, the bootstrap
//! exchange, and what a run-scoped bearer may do — read and update its run's task, send signals
//! as its run, fetch skills. Off (404) while no public URL is set.
//!
//! These take neither the MCP token nor the GUI's cookie and answer whatever Host the tunnel
//! sends; they open no other door: a scoped bearer is not the MCP token, so `/mcp` and the GUI's
//! API refuse it, and these routes take nothing but their own credentials.

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};
use tether_core::board::cloud;
use tether_core::board::runs::Run;

use crate::Ctx;
use crate::web::core_error;

pub(crate) fn router() -> Router<Ctx> {
    Router::new()
        .route("/webhooks/cursor", post(webhook))
        .route("/api/agent-auth/exchange", post(exchange))
        .route("/api/agent/task", get(task).patch(task_update))
        .route("/api/agent/signals", post(signal))
        .route("/api/skills/index", get(skills))
        .route("/api/skills/{name}", get(skill))
        .route_layer(axum::middleware::map_response(trusted_on_success))
}

/// Each of these routes answers 2xx only to a proven credential (a signature, a bootstrap
/// token, a run's bearer): the connection is trusted from then on (see [`crate::conn`]).
async fn trusted_on_success(res: Response) -> Response {
    if res.status().is_success() { crate::http::authenticated(res) } else { res }
}

/// What a public caller may send, and how long it may take: these routes answer anyone the
/// tunnel lets through, so a body that trickles in or never comes costs seconds, not a seat.
const MAX_BODY: usize = 256 * 1024;
const BODY_DEADLINE: std::time::Duration = std::time::Duration::from_secs(5);

/// The body of a public request, read only after the route decided it wants one.
async fn body(req: Request) -> Result<Bytes, Response> {
    match tokio::time::timeout(BODY_DEADLINE, axum::body::to_bytes(req.into_body(), MAX_BODY)).await {
        Ok(Ok(b)) => Ok(b),
        Ok(Err(_)) => Err(answer(StatusCode::PAYLOAD_TOO_LARGE, "invalid_input", "the body is over 256 KiB")),
        Err(_) => Err(answer(StatusCode::REQUEST_TIMEOUT, "invalid_input", "the body did not arrive within 5 s")),
    }
}

fn answer(status: StatusCode, code: &str, message: &str) -> Response {
    (status, axum::Json(json!({"code": code, "message": message}))).into_response()
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> tether_core::Result<T> + Send + 'static,
) -> tether_core::Result<T> {
    tokio::task::spawn_blocking(f).await.unwrap_or_else(|e| {
        Err(tether_core::Error::Io { context: "a callback".into(), source: std::io::Error::other(e) })
    })
}

/// Callbacks exist only while the person has set a public URL: the answer when they do not.
fn off(ctx: &Ctx) -> Option<Response> {
    match ctx.app.tether.settings().ok().and_then(|s| s.cloud.public_url) {
        Some(_) => None,
        None => Some(answer(
            StatusCode::NOT_FOUND,
            "not_found",
            "cloud callbacks are off (no public URL: `tether cloud webhook --public-url https://…`)",
        )),
    }
}

/// Cursor's `statusChange`: signature over the raw body first (401), then shape (400), then kept
/// by its delivery id (a duplicate is answered, not applied twice), then the run is told.
async fn webhook(State(ctx): State<Ctx>, req: Request) -> Response {
    if let Some(r) = off(&ctx) {
        return r;
    }
    let headers = req.headers().clone();
    let body = match body(req).await {
        Ok(b) => b,
        Err(r) => return r,
    };
    let h = |k: &str| headers.get(k).and_then(|v| v.to_str().ok()).map(str::to_owned);
    let Some(secret) = webhook_secret(&ctx).await else {
        return answer(StatusCode::UNAUTHORIZED, "bad_signature", "this Tether has no webhook secret yet");
    };
    if !tether_cloud::webhook::verify(&secret, &h("x-webhook-signature").unwrap_or_default(), &body) {
        return answer(StatusCode::UNAUTHORIZED, "bad_signature", "the signature does not match this Tether's secret");
    }
    if h("x-webhook-event").as_deref() != Some("statusChange") {
        return answer(StatusCode::BAD_REQUEST, "invalid_input", "X-Webhook-Event must be statusChange");
    }
    let Some(id) = h("x-webhook-id").filter(|i| !i.trim().is_empty() && i.len() <= 200) else {
        return answer(StatusCode::BAD_REQUEST, "invalid_input", "X-Webhook-ID is missing");
    };
    let change = match tether_cloud::webhook::parse(&body) {
        Ok(c) => c,
        Err(why) => return answer(StatusCode::BAD_REQUEST, "invalid_input", &why),
    };
    let t = std::sync::Arc::clone(&ctx.app.tether);
    let raw = String::from_utf8_lossy(&body).into_owned();
    let (agent, status) = (change.id.clone(), change.status.clone());
    let kept = blocking(move || {
        let new = cloud::record_webhook(&t.store, &id, Some(&agent), Some(&status), &raw)?;
        let run = if new { cloud::live_run_for_agent(&t.store, &agent)? } else { None };
        Ok((new, run))
    })
    .await;
    match kept {
        Ok((false, _)) => axum::Json(json!({"ok": true, "duplicate": true})).into_response(),
        Ok((true, run)) => {
            if let (Some(r), Some(runner)) = (&run, ctx.app.runner()) {
                runner.poke(r.num());
            }
            axum::Json(json!({"ok": true, "run": run.map(|r| r.id)})).into_response()
        }
        Err(e) => core_error(&e),
    }
}

/// The secret, read once per data dir and kept: an unchecked caller never makes Tether touch the
/// keyring (or create a secret) again and again.
async fn webhook_secret(ctx: &Ctx) -> Option<String> {
    static CACHE: std::sync::Mutex<Option<(std::path::PathBuf, String)>> = std::sync::Mutex::new(None);
    let dir = ctx.app.tether.paths.data_dir.clone();
    if let Some((d, s)) = CACHE.lock().unwrap_or_else(|p| p.into_inner()).as_ref()
        && *d == dir
    {
        return Some(s.clone());
    }
    let paths = ctx.app.tether.paths.clone();
    let s = blocking(move || tether_core::token::existing_webhook_secret(&paths)).await.ok().flatten()?;
    *CACHE.lock().unwrap_or_else(|p| p.into_inner()) = Some((dir, s.clone()));
    Some(s)
}

async fn exchange(State(ctx): State<Ctx>, req: Request) -> Response {
    if let Some(r) = off(&ctx) {
        return r;
    }
    let body = match body(req).await {
        Ok(b) => b,
        Err(r) => return r,
    };
    let token = serde_json::from_slice::<Value>(&body)
        .ok()
        .and_then(|v| v.get("bootstrap_token").and_then(Value::as_str).map(str::to_owned));
    let Some(token) = token else {
        return answer(StatusCode::BAD_REQUEST, "invalid_input", "send {\"bootstrap_token\": \"…\"}");
    };
    let t = std::sync::Arc::clone(&ctx.app.tether);
    match blocking(move || cloud::exchange(&t.store, &token)).await {
        Ok(Some((bearer, run, expires))) => axum::Json(json!({
            "token": bearer, "run": run.id, "task": run.task, "expires_at": tether_core::clock::iso(expires)
        }))
        .into_response(),
        Ok(None) => answer(
            StatusCode::UNAUTHORIZED,
            "invalid_token",
            "this bootstrap token is unknown, expired or already used",
        ),
        Err(e) => core_error(&e),
    }
}

/// The run a request's scoped bearer speaks for.
async fn scoped(ctx: &Ctx, headers: &HeaderMap) -> Result<Run, Response> {
    if let Some(r) = off(ctx) {
        return Err(r);
    }
    let bearer = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::to_owned)
        .unwrap_or_default();
    let t = std::sync::Arc::clone(&ctx.app.tether);
    match blocking(move || cloud::bearer_run(&t.store, &bearer)).await {
        Ok(Some(run)) => Ok(run),
        Ok(None) => {
            Err(answer(StatusCode::UNAUTHORIZED, "invalid_token", "a run's bearer from the exchange is needed"))
        }
        Err(e) => Err(core_error(&e)),
    }
}

async fn task(State(ctx): State<Ctx>, headers: HeaderMap) -> Response {
    let run = match scoped(&ctx, &headers).await {
        Ok(r) => r,
        Err(r) => return r,
    };
    let t = std::sync::Arc::clone(&ctx.app.tether);
    match blocking(move || cloud::scoped_task(&t.store, &run)).await {
        Ok(d) => axum::Json(d).into_response(),
        Err(e) => core_error(&e),
    }
}

async fn task_update(State(ctx): State<Ctx>, req: Request) -> Response {
    let run = match scoped(&ctx, req.headers()).await {
        Ok(r) => r,
        Err(r) => return r,
    };
    let body = match body(req).await {
        Ok(b) => b,
        Err(r) => return r,
    };
    let change: cloud::ScopedTaskChange = match serde_json::from_slice(&body) {
        Ok(c) => c,
        Err(e) => return answer(StatusCode::BAD_REQUEST, "invalid_input", &e.to_string()),
    };
    let t = std::sync::Arc::clone(&ctx.app.tether);
    match blocking(move || cloud::scoped_update(&t.store, &run, &change)).await {
        Ok(task) => {
            ctx.app.emit("tasks", json!({"task": task.id}));
            axum::Json(task).into_response()
        }
        Err(e) => core_error(&e),
    }
}

async fn signal(State(ctx): State<Ctx>, req: Request) -> Response {
    let run = match scoped(&ctx, req.headers()).await {
        Ok(r) => r,
        Err(r) => return r,
    };
    let body = match body(req).await {
        Ok(b) => b,
        Err(r) => return r,
    };
    let new: tether_core::board::signals::NewSignal = match serde_json::from_slice(&body) {
        Ok(n) => n,
        Err(e) => return answer(StatusCode::BAD_REQUEST, "invalid_input", &e.to_string()),
    };
    let t = std::sync::Arc::clone(&ctx.app.tether);
    match blocking(move || cloud::scoped_signal(&t.store, &run, &new)).await {
        Ok(s) => {
            ctx.app.signals_sent();
            (StatusCode::CREATED, axum::Json(s)).into_response()
        }
        Err(e) => core_error(&e),
    }
}

async fn skills(State(ctx): State<Ctx>, headers: HeaderMap) -> Response {
    if let Err(r) = scoped(&ctx, &headers).await {
        return r;
    }
    let t = std::sync::Arc::clone(&ctx.app.tether);
    match blocking(move || t.skills()).await {
        Ok(list) => axum::Json(json!({"skills": list})).into_response(),
        Err(e) => core_error(&e),
    }
}

async fn skill(State(ctx): State<Ctx>, headers: HeaderMap, Path(name): Path<String>) -> Response {
    if let Err(r) = scoped(&ctx, &headers).await {
        return r;
    }
    let t = std::sync::Arc::clone(&ctx.app.tether);
    match blocking(move || t.skill(&name)).await {
        Ok(text) => ([(header::CONTENT_TYPE, "text/markdown; charset=utf-8")], text).into_response(),
        // Said without the roles folder's path: this route answers the public host.
        Err(_) => answer(StatusCode::NOT_FOUND, "not_found", "no such skill (GET /api/skills/index lists them)"),
    }
}
