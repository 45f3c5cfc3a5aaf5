//! Agent runs: list, start, options, one run (a page of its events), cancel, approve, follow
//! up; the cloud setup's check. Its live events are [`crate::http::sse::run_events`].

use axum::Json;
use axum::extract::{Path, Query, State};
use serde::Deserialize;
use tether_core::model::runs::{NewRun, Run, RunDetail, RunFilter, RunStatus};
use tether_core::ops::runs::{self as op, Followup, RunList};

use super::listed;
use crate::http::auth::Person;
use crate::http::error::{ApiResult, blocking};
use crate::state::Ctx;

/// `status` may repeat, or list several with commas.
#[derive(Deserialize, Default, ts_rs::TS)]
#[ts(export, export_to = "server.ts", rename = "RunListQuery", optional_fields)]
pub(crate) struct ListParams {
    #[serde(default)]
    #[ts(optional, as = "Option<Vec<RunStatus>>")]
    status: Vec<String>,
    task: Option<String>,
    chat: Option<String>,
    limit: Option<usize>,
}

pub(crate) async fn list(
    State(ctx): State<Ctx>,
    axum_extra::extract::Query(p): axum_extra::extract::Query<ListParams>,
) -> ApiResult<RunList> {
    let f = RunFilter { statuses: listed(&p.status)?, task: p.task, chat: p.chat, limit: p.limit.unwrap_or(200) };
    blocking(&ctx, move |t| Ok(RunList { runs: op::list(t, &f)? })).await
}

pub(crate) async fn start(State(ctx): State<Ctx>, Person(me): Person, Json(new): Json<NewRun>) -> ApiResult<Run> {
    blocking(&ctx, move |t| op::start(t, &me, &new)).await
}

/// What the run form offers: roles, the folders runs may use, the Cursor CLI found, defaults.
pub(crate) async fn options(State(ctx): State<Ctx>) -> ApiResult<op::Options> {
    blocking(&ctx, op::options).await
}

#[derive(Deserialize, Default, ts_rs::TS)]
#[ts(export, export_to = "server.ts", rename = "RunPageQuery", optional_fields)]
pub(crate) struct GetParams {
    /// How many events (the newest, or those before `before`); default 500, at most 5,000.
    tail: Option<usize>,
    /// Page back: events before this one.
    before: Option<i64>,
}

pub(crate) async fn get(
    State(ctx): State<Ctx>,
    Path(id): Path<String>,
    Query(p): Query<GetParams>,
) -> ApiResult<RunDetail> {
    let limit = p.tail.unwrap_or(500).min(5000);
    blocking(&ctx, move |t| op::get(t, &id, p.before, Some(limit))).await
}

pub(crate) async fn cancel(State(ctx): State<Ctx>, Person(me): Person, Path(id): Path<String>) -> ApiResult<Run> {
    blocking(&ctx, move |t| op::cancel(t, &me, &id)).await
}

pub(crate) async fn approve(State(ctx): State<Ctx>, Person(me): Person, Path(id): Path<String>) -> ApiResult<Run> {
    blocking(&ctx, move |t| op::approve(t, &me, &id)).await
}

pub(crate) async fn followup(
    State(ctx): State<Ctx>,
    Person(me): Person,
    Path(run): Path<String>,
    Json(req): Json<Followup>,
) -> ApiResult<Run> {
    blocking(&ctx, move |t| op::followup(t, &me, &Followup { run, ..req })).await
}

/// The cloud environment test (asks Cursor whether the key is valid).
pub(crate) async fn cloud_doctor(State(ctx): State<Ctx>) -> Json<tether_core::ops::cloud::CloudDoctor> {
    Json(tether_core::ops::cloud::CloudDoctor {
        checks: tether_core::ops::cloud::doctor(&ctx.tether, &Default::default()).await,
    })
}
