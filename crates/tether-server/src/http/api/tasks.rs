//! The task board: list, show, create, change, claim.

use axum::Json;
use axum::extract::{Path, State};
use axum_extra::extract::Query;
use tether_core::model::tasks::{NewTask, QueryResult, Task, TaskChange, TaskDetail};
use tether_core::ops::tasks::{self as op, BoardQuery, Claim, Update};

use crate::http::auth::Person;
use crate::http::error::{ApiResult, blocking};
use crate::state::Ctx;

/// The board's listing (every status unless some are named or only ready ones are asked for).
pub(crate) async fn list(
    State(ctx): State<Ctx>,
    Person(me): Person,
    Query(BoardQuery(q)): Query<BoardQuery>,
) -> ApiResult<QueryResult> {
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
