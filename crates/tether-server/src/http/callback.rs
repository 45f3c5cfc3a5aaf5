//! What Cursor's servers and cloud agents reach through the person's public URL (a tunnel of
//! theirs to this loopback port; `cloud.public_url`): Cursor's webhook, the bootstrap exchange,
//! and what a run-scoped bearer may do — read and update its run's task, send signals as its run
//! (marked as coming from outside this machine), fetch skills. Off (404, before any body is read)
//! while no public URL is set.
//!
//! These take neither the MCP token nor the GUI's cookie and answer whatever Host the tunnel
//! sends; they open no other door: a scoped bearer is not the MCP token, so `/mcp` and the GUI's
//! API refuse it, and these routes take nothing but their own credentials. Bodies are read only
//! once a route wants one, within 5 s and 256 KiB.

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, Request, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use tether_core::model::signals::{NewSignal, Signal};
use tether_core::model::tasks::{Task, TaskChange, TaskDetail};
use tether_core::ops;

use super::auth::{RunBearer, authenticated, callbacks_on};
use super::error::{ApiError, ApiResult, blocking, run};
use crate::state::Ctx;

const MAX_BODY: usize = 256 * 1024;
const BODY_DEADLINE: std::time::Duration = std::time::Duration::from_secs(5);

async fn body(req: Request) -> Result<Bytes, ApiError> {
    match tokio::time::timeout(BODY_DEADLINE, axum::body::to_bytes(req.into_body(), MAX_BODY)).await {
        Ok(Ok(b)) => Ok(b),
        Ok(Err(_)) => Err(ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, "invalid_input", "the body is over 256 KiB")),
        Err(_) => {
            Err(ApiError::new(StatusCode::REQUEST_TIMEOUT, "invalid_input", "the body did not arrive within 5 s"))
        }
    }
}

fn json_body<T: serde::de::DeserializeOwned>(b: &Bytes) -> Result<T, ApiError> {
    serde_json::from_slice(b).map_err(|e| ApiError::invalid(e.to_string()))
}

/// Cursor's `statusChange`: signature over the raw body first (401), then shape (400), then kept
/// by its delivery id (a duplicate is answered, not applied twice), then the run is told.
pub(crate) async fn webhook(State(ctx): State<Ctx>, req: Request) -> Result<Response, Response> {
    callbacks_on(&ctx).map_err(IntoResponse::into_response)?;
    let h = req.headers().clone();
    let raw = body(req).await.map_err(IntoResponse::into_response)?;
    let header = |k: &str| h.get(k).and_then(|v| v.to_str().ok()).map(str::to_owned);
    let bad = |status, code, msg: &str| ApiError::new(status, code, msg).into_response();
    let secret = webhook_secret(&ctx)
        .await
        .ok_or_else(|| bad(StatusCode::UNAUTHORIZED, "bad_signature", "this Tether has no webhook secret yet"))?;
    if !tether_cloud::webhook::verify(&secret, &header("x-webhook-signature").unwrap_or_default(), &raw) {
        return Err(bad(
            StatusCode::UNAUTHORIZED,
            "bad_signature",
            "the signature does not match this Tether's secret",
        ));
    }
    if header("x-webhook-event").as_deref() != Some("statusChange") {
        return Err(bad(StatusCode::BAD_REQUEST, "invalid_input", "X-Webhook-Event must be statusChange"));
    }
    let Some(id) = header("x-webhook-id").filter(|i| !i.trim().is_empty() && i.len() <= 200) else {
        return Err(bad(StatusCode::BAD_REQUEST, "invalid_input", "X-Webhook-ID is missing"));
    };
    let change =
        tether_cloud::webhook::parse(&raw).map_err(|why| bad(StatusCode::BAD_REQUEST, "invalid_input", &why))?;
    let text = String::from_utf8_lossy(&raw).into_owned();
    let kept = run(&ctx, move |t| ops::runs::cloud_webhook(t, &id, &change.id, &change.status, &text)).await;
    let answer = match kept {
        Ok(r) => json!({"ok": true, "run": r.map(|r| r.id)}),
        Err(e) if e.code == "conflict" => json!({"ok": true, "duplicate": true}),
        Err(e) => return Err(e.into_response()),
    };
    Ok(authenticated(Json(answer).into_response()))
}

/// The secret, read once it exists and kept.
async fn webhook_secret(ctx: &Ctx) -> Option<String> {
    if let Some(s) = ctx.webhook_secret.lock().unwrap_or_else(|p| p.into_inner()).clone() {
        return Some(s);
    }
    let paths = ctx.tether.paths.clone();
    let s = run(ctx, move |_| tether_core::token::existing_webhook_secret(&paths)).await.ok().flatten()?;
    *ctx.webhook_secret.lock().unwrap_or_else(|p| p.into_inner()) = Some(s.clone());
    Some(s)
}

pub(crate) async fn exchange(State(ctx): State<Ctx>, req: Request) -> Result<Response, Response> {
    callbacks_on(&ctx).map_err(IntoResponse::into_response)?;
    let raw = body(req).await.map_err(IntoResponse::into_response)?;
    let token = serde_json::from_slice::<Value>(&raw)
        .ok()
        .and_then(|v| v.get("bootstrap_token").and_then(Value::as_str).map(str::to_owned))
        .ok_or_else(|| ApiError::invalid("send {\"bootstrap_token\": \"…\"}").into_response())?;
    match run(&ctx, move |t| ops::runs::exchange(t, &token)).await.map_err(IntoResponse::into_response)? {
        Some((bearer, run, expires)) => Ok(authenticated(
            Json(json!({
                "token": bearer, "run": run.id, "task": run.task, "expires_at": tether_core::clock::iso(expires)
            }))
            .into_response(),
        )),
        None => Err(ApiError::new(
            StatusCode::UNAUTHORIZED,
            "invalid_token",
            "this bootstrap token is unknown, expired or already used",
        )
        .into_response()),
    }
}

pub(crate) async fn task(State(ctx): State<Ctx>, me: RunBearer) -> ApiResult<TaskDetail> {
    blocking(&ctx, move |t| ops::tasks::of_run(t, &me.run)).await
}

pub(crate) async fn task_update(State(ctx): State<Ctx>, me: RunBearer, req: Request) -> ApiResult<Task> {
    let change: TaskChange = json_body(&body(req).await?)?;
    blocking(&ctx, move |t| ops::tasks::update_by_run(t, &me.who, &me.run, &change)).await
}

pub(crate) async fn signal(State(ctx): State<Ctx>, me: RunBearer, req: Request) -> Result<Response, ApiError> {
    let new: NewSignal = json_body(&body(req).await?)?;
    let s: Json<Signal> = blocking(&ctx, move |t| ops::signals::send(t, &me.who, &new)).await?;
    Ok((StatusCode::CREATED, s).into_response())
}

pub(crate) async fn skills(State(ctx): State<Ctx>, _me: RunBearer) -> ApiResult<Value> {
    blocking(&ctx, |t| Ok(json!({"skills": ops::system::skills(t)?}))).await
}

pub(crate) async fn skill(
    State(ctx): State<Ctx>,
    _me: RunBearer,
    Path(name): Path<String>,
) -> Result<Response, ApiError> {
    let text = run(&ctx, move |t| ops::system::skill(t, &name)).await?;
    Ok(([(header::CONTENT_TYPE, "text/markdown; charset=utf-8")], text).into_response())
}

/// Each of these routes answers 2xx only to a proven credential (a signature, a bootstrap
/// token, a run's bearer): the connection is trusted from then on.
pub(crate) async fn trusted_on_success(res: Response) -> Response {
    if res.status().is_success() { authenticated(res) } else { res }
}
