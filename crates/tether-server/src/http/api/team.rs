//! The team database: where the board is (and how it answers), joining one and leaving it.

use axum::Json;
use axum::extract::State;
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
