//! The team database: where the board is (and how it answers), joining one and leaving it; and
//! the chats shared with the team (a preview with secrets replaced, sharing, reading, taking back).

use axum::Json;
use axum::extract::{Path, Query, State};
use tether_core::model::shared::SharedChat;
use tether_core::model::tasks::ImportReport;
use tether_core::ops::share::{self, SharePreview, SharedList, Unshared};
use tether_core::ops::team::{self as op, Join, TeamStatus};

use crate::http::auth::Person;
use crate::http::error::{ApiResult, blocking};
use crate::state::Ctx;

pub(crate) async fn status(State(ctx): State<Ctx>) -> ApiResult<TeamStatus> {
    blocking(&ctx, op::status).await
}

pub(crate) async fn join(State(ctx): State<Ctx>, Person(me): Person, Json(j): Json<Join>) -> ApiResult<TeamStatus> {
    blocking(&ctx, move |t| op::join(t, &me, j)).await
}

pub(crate) async fn leave(State(ctx): State<Ctx>, Person(me): Person) -> ApiResult<TeamStatus> {
    blocking(&ctx, move |t| op::leave(t, &me)).await
}

pub(crate) async fn import_local(State(ctx): State<Ctx>, Person(me): Person) -> ApiResult<ImportReport> {
    blocking(&ctx, move |t| op::import_local(t, &me)).await
}

/// What sharing a chat would copy to the team (secrets replaced): shown before the person shares.
pub(crate) async fn share_preview(State(ctx): State<Ctx>, Path(id): Path<String>) -> ApiResult<SharePreview> {
    blocking(&ctx, move |t| share::preview(t, &id)).await
}

pub(crate) async fn share(
    State(ctx): State<Ctx>,
    Person(me): Person,
    Path(id): Path<String>,
    Json(s): Json<share::Share>,
) -> ApiResult<SharedChat> {
    blocking(&ctx, move |t| share::share(t, &me, share::Share { session: id, ..s })).await
}

#[derive(serde::Deserialize, Default, ts_rs::TS)]
#[ts(export, export_to = "server.ts", rename = "SharedQuery", optional_fields)]
pub(crate) struct SharedParams {
    q: Option<String>,
    limit: Option<usize>,
}

pub(crate) async fn shared(State(ctx): State<Ctx>, Query(p): Query<SharedParams>) -> ApiResult<SharedList> {
    let limit = p.limit.unwrap_or(50);
    blocking(&ctx, move |t| Ok(SharedList { shared: share::list(t, p.q.as_deref(), limit)? })).await
}

pub(crate) async fn shared_chat(State(ctx): State<Ctx>, Path(id): Path<String>) -> ApiResult<SharedChat> {
    blocking(&ctx, move |t| share::get(t, &id)).await
}

pub(crate) async fn unshare(State(ctx): State<Ctx>, Person(me): Person, Path(id): Path<String>) -> ApiResult<Unshared> {
    blocking(&ctx, move |t| share::unshare(t, &me, &id)).await
}
