//! The daemon: status and health, the login code, the doctor, insights, a re-index, token
//! rotation, installing into a project.

use axum::Json;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{Value, json};
use tether_core::insights::{Insights, InsightsQuery};
use tether_core::ops::system::{self as op, Install, InstallPlugin, Installed};

use crate::http::auth::Person;
use crate::http::error::{ApiError, ApiResult, blocking, run};
use crate::state::Ctx;

/// Health with what the transports know: the MCP sessions.
pub(crate) async fn status(State(ctx): State<Ctx>) -> ApiResult<Value> {
    let sessions = ctx.mcp.report();
    blocking(&ctx, move |t| {
        let mut v = serde_json::to_value(op::status(t)?)?;
        v["mcp_sessions"] = json!(sessions);
        Ok(v)
    })
    .await
}

/// What `/health` shows (no token needed): nothing secret.
pub(crate) async fn health(State(ctx): State<Ctx>) -> ApiResult<Value> {
    let sessions = ctx.mcp_sessions();
    blocking(&ctx, move |t| {
        let mut v = serde_json::to_value(op::health(t))?;
        v["mcp_sessions"] = json!(sessions);
        Ok(v)
    })
    .await
}

pub(crate) async fn login_code(State(ctx): State<Ctx>) -> Json<Value> {
    Json(json!({"code": ctx.ui.new_code()}))
}

pub(crate) async fn doctor(State(ctx): State<Ctx>) -> ApiResult<tether_core::doctor::DoctorReport> {
    blocking(&ctx, op::doctor).await
}

#[derive(Deserialize, Default)]
pub(crate) struct InsightsParams {
    /// Epoch ms.
    since: Option<i64>,
    project: Option<String>,
}

pub(crate) async fn insights(State(ctx): State<Ctx>, Query(p): Query<InsightsParams>) -> ApiResult<Insights> {
    let q = InsightsQuery { since: p.since, project: p.project.filter(|s| !s.is_empty()) };
    blocking(&ctx, move |t| op::insights(t, &q)).await
}

/// `202`: the daemon's indexer runs a deep pass; progress arrives as `index` events.
pub(crate) async fn reindex(State(ctx): State<Ctx>, Person(me): Person) -> Result<Response, ApiError> {
    run(&ctx, move |t| op::reindex(t, &me)).await?;
    Ok(StatusCode::ACCEPTED.into_response())
}

/// The token itself is never sent to the GUI.
pub(crate) async fn rotate_token(State(ctx): State<Ctx>) -> ApiResult<Value> {
    let server = std::sync::Arc::clone(&ctx);
    blocking(&ctx, move |_| {
        server.rotate_token()?;
        Ok(json!({"rotated": true}))
    })
    .await
}

pub(crate) async fn install(
    State(ctx): State<Ctx>,
    Person(me): Person,
    Json(i): Json<Install>,
) -> ApiResult<Installed> {
    blocking(&ctx, move |t| op::install(t, &me, &i)).await
}

pub(crate) async fn install_plugin(
    State(ctx): State<Ctx>,
    Person(me): Person,
    Json(i): Json<InstallPlugin>,
) -> ApiResult<Installed> {
    blocking(&ctx, move |t| op::install_plugin(t, &me, &i)).await
}
