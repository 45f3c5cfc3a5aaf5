//! Code origin (`ops::trace`): a file's lines with their origin (the Code view), the files a chat
//! changed (the reader), the traced repositories and writing records into one, the Agent Trace
//! export (JSON lines) and the lines agents wrote (the insights).

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use tether_core::model::trace::to_jsonl;
use tether_core::model::trace::{TracedRepo, WrittenBy};
use tether_core::ops::trace::{self as op, Blame, BlameResult, Export, FileTouched, Publish};

use crate::http::auth::Person;
use crate::http::error::{ApiError, ApiResult, blocking, run};
use crate::state::Ctx;

pub(crate) async fn blame(
    State(ctx): State<Ctx>,
    Person(me): Person,
    Query(q): Query<Blame>,
) -> ApiResult<BlameResult> {
    blocking(&ctx, move |t| op::blame(t, &me, &q)).await
}

pub(crate) async fn files(State(ctx): State<Ctx>, Path(id): Path<String>) -> ApiResult<Vec<FileTouched>> {
    blocking(&ctx, move |t| op::files_of(t, &id)).await
}

pub(crate) async fn repos(State(ctx): State<Ctx>) -> ApiResult<Vec<TracedRepo>> {
    blocking(&ctx, op::repos).await
}

pub(crate) async fn publish(
    State(ctx): State<Ctx>,
    Person(me): Person,
    Json(req): Json<Publish>,
) -> ApiResult<TracedRepo> {
    blocking(&ctx, move |t| op::set_publish(t, &me, &req)).await
}

/// JSON lines, one Agent Trace record each.
pub(crate) async fn export(
    State(ctx): State<Ctx>,
    Person(me): Person,
    Query(q): Query<Export>,
) -> Result<Response, ApiError> {
    let body = run(&ctx, move |t| Ok(to_jsonl(&op::export(t, &me, &q)?)?)).await?;
    Ok(([(header::CONTENT_TYPE, "application/jsonl; charset=utf-8")], body).into_response())
}

#[derive(serde::Deserialize, Default, ts_rs::TS)]
#[ts(export, export_to = "server.ts", rename = "WrittenQuery", optional_fields)]
pub(crate) struct WrittenParams {
    since: Option<String>,
}

pub(crate) async fn written(State(ctx): State<Ctx>, Query(p): Query<WrittenParams>) -> ApiResult<Vec<WrittenBy>> {
    blocking(&ctx, move |t| {
        let since = p.since.as_deref().map(op::parse_since).transpose()?;
        op::written(t, since)
    })
    .await
}
