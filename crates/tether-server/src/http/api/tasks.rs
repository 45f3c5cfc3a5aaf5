//! The task board: list, show, create, change, claim.

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::Uri;
use serde::Deserialize;
use tether_core::board::tasks::{self, NewTask, QueryResult, Task, TaskChange, TaskDetail, TaskQuery};
use tether_core::ops::tasks::{self as op, Claim, Update};

use super::{flag, repeated};
use crate::http::auth::Person;
use crate::http::error::{ApiResult, blocking};
use crate::state::Ctx;

/// `status` may repeat; it is read from the raw query.
#[derive(Deserialize, Default)]
pub(crate) struct ListParams {
    assignee: Option<String>,
    role: Option<String>,
    project: Option<String>,
    label: Option<String>,
    ready: Option<String>,
    limit: Option<usize>,
}

/// Every status unless some are named (or only ready ones are asked for).
pub(crate) async fn list(
    State(ctx): State<Ctx>,
    Person(me): Person,
    Query(p): Query<ListParams>,
    uri: Uri,
) -> ApiResult<QueryResult> {
    let mut statuses = repeated(&uri, "status");
    if statuses.is_empty() && !flag(&p.ready) {
        statuses = tasks::Status::ALL.iter().map(|s| s.as_str().to_owned()).collect();
    }
    let q = TaskQuery {
        id: None,
        statuses,
        assignee: p.assignee,
        role: p.role,
        project: p.project,
        label: p.label,
        ready: flag(&p.ready),
        limit: p.limit.unwrap_or(500),
    };
    blocking(&ctx, move |t| op::query(t, &me, &q)).await
}

pub(crate) async fn get(State(ctx): State<Ctx>, Path(id): Path<String>) -> ApiResult<TaskDetail> {
    blocking(&ctx, move |t| op::get(t, &id)).await
}

pub(crate) async fn create(State(ctx): State<Ctx>, Person(me): Person, Json(new): Json<NewTask>) -> ApiResult<Task> {
    blocking(&ctx, move |t| op::create(t, &me, &new)).await
}

pub(crate) async fn update(
    State(ctx): State<Ctx>,
    Person(me): Person,
    Path(id): Path<String>,
    Json(change): Json<TaskChange>,
) -> ApiResult<Task> {
    blocking(&ctx, move |t| op::update(t, &me, &Update { id, change })).await
}

pub(crate) async fn claim(State(ctx): State<Ctx>, Person(me): Person, Path(id): Path<String>) -> ApiResult<Task> {
    blocking(&ctx, move |t| op::claim(t, &me, Claim { id: Some(id), ..Claim::default() })).await
}
