//! The daemon: status and health, the login code, the doctor, insights, a re-index, token
//! rotation, installing into a project.

use axum::Json;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use tether_core::insights::{Insights, InsightsQuery};
use tether_core::ops::system::{self as op, Health, Install, InstallPlugin, Installed, Status};

use crate::http::auth::Person;
use crate::http::error::{ApiError, ApiResult, blocking, run};
use crate::state::Ctx;

/// The daemon's status with what only the transports know: each MCP session.
#[derive(Debug, Serialize, ts_rs::TS)]
#[ts(export, export_to = "server.ts")]
pub(crate) struct StatusReport {
    #[serde(flatten)]
    status: Status,
    mcp_sessions: Vec<crate::mcp::streams::McpSessionView>,
}

/// `/health` (no token needed, nothing secret): the engine's health and how many MCP sessions.
#[derive(Debug, Serialize)]
pub(crate) struct HealthReport {
    #[serde(flatten)]
    health: Health,
    mcp_sessions: usize,
}

/// A one-time code that opens the GUI in a browser.
#[derive(Debug, Serialize, ts_rs::TS)]
#[ts(export, export_to = "server.ts")]
pub(crate) struct LoginCode {
    code: String,
}

/// The token was rotated (it is never sent to the GUI): `{rotated: true}`.
#[derive(Debug, Serialize, ts_rs::TS)]
#[ts(export, export_to = "server.ts")]
pub(crate) struct Rotated {
    rotated: bool,
}

pub(crate) async fn status(State(ctx): State<Ctx>) -> ApiResult<StatusReport> {
    let mcp_sessions = ctx.mcp.report();
    blocking(&ctx, move |t| Ok(StatusReport { status: op::status(t)?, mcp_sessions })).await
}

pub(crate) async fn health(State(ctx): State<Ctx>) -> ApiResult<HealthReport> {
    let mcp_sessions = ctx.mcp_sessions();
    blocking(&ctx, move |t| Ok(HealthReport { health: op::health(t), mcp_sessions })).await
}

pub(crate) async fn login_code(State(ctx): State<Ctx>) -> Json<LoginCode> {
    Json(LoginCode { code: ctx.ui.new_code() })
}

pub(crate) async fn doctor(State(ctx): State<Ctx>) -> ApiResult<tether_core::doctor::DoctorReport> {
    blocking(&ctx, op::doctor).await
}

#[derive(Deserialize, Default, ts_rs::TS)]
#[ts(export, export_to = "server.ts", rename = "InsightsQuery", optional_fields)]
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
pub(crate) async fn rotate_token(State(ctx): State<Ctx>) -> ApiResult<Rotated> {
    let server = std::sync::Arc::clone(&ctx);
    blocking(&ctx, move |_| {
        server.rotate_token()?;
        Ok(Rotated { rotated: true })
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
