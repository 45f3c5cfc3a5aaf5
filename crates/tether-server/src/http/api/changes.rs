//! A run's work after the run: its diff, comments on it and the follow-up that carries them,
//! merge, a pull request, discard, and the worktrees kept (`ops::changes`). The run is the path's; the body is
//! the rest of the request.

use axum::Json;
use axum::extract::{Path, Query, State};
use tether_core::model::runs::{Comment, NewComment, Run};
use tether_core::ops::changes::{
    self as op, CommentRequest, DiffRequest, MergeRequest, MergeResult, PrRequest, PrResult, RunDiff, SendComments,
};
use tether_core::ops::worktrees::{self, WorktreesReport};

use crate::http::auth::Person;
use crate::http::error::{ApiResult, blocking};
use crate::state::Ctx;

#[derive(serde::Deserialize, Default, ts_rs::TS)]
#[ts(export, export_to = "server.ts", rename = "DiffQuery")]
pub(crate) struct DiffParams {
    #[serde(default)]
    #[ts(optional, as = "Option<bool>")]
    stat: bool,
}

pub(crate) async fn diff(
    State(ctx): State<Ctx>,
    Person(me): Person,
    Path(run): Path<String>,
    Query(p): Query<DiffParams>,
) -> ApiResult<RunDiff> {
    blocking(&ctx, move |t| op::diff(t, &me, &DiffRequest { run, stat: p.stat })).await
}

pub(crate) async fn comment(
    State(ctx): State<Ctx>,
    Person(me): Person,
    Path(run): Path<String>,
    Json(comment): Json<NewComment>,
) -> ApiResult<Comment> {
    blocking(&ctx, move |t| op::comment(t, &me, &CommentRequest { run, comment })).await
}

pub(crate) async fn send_comments(
    State(ctx): State<Ctx>,
    Person(me): Person,
    Path(run): Path<String>,
    Json(req): Json<SendComments>,
) -> ApiResult<Run> {
    blocking(&ctx, move |t| op::send_comments(t, &me, &SendComments { run, ..req })).await
}

pub(crate) async fn merge(
    State(ctx): State<Ctx>,
    Person(me): Person,
    Path(run): Path<String>,
    Json(req): Json<MergeRequest>,
) -> ApiResult<MergeResult> {
    blocking(&ctx, move |t| op::merge(t, &me, &MergeRequest { run, ..req })).await
}

pub(crate) async fn pr(
    State(ctx): State<Ctx>,
    Person(me): Person,
    Path(run): Path<String>,
    Json(req): Json<PrRequest>,
) -> ApiResult<PrResult> {
    blocking(&ctx, move |t| op::pr(t, &me, &PrRequest { run, ..req })).await
}

pub(crate) async fn discard(State(ctx): State<Ctx>, Person(me): Person, Path(run): Path<String>) -> ApiResult<Run> {
    blocking(&ctx, move |t| op::discard(t, &me, &run)).await
}

pub(crate) async fn worktrees(State(ctx): State<Ctx>) -> ApiResult<WorktreesReport> {
    blocking(&ctx, worktrees::worktrees).await
}
