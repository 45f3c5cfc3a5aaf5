//! Agents, and whether an idle chain of runs is woken by resume.

use axum::Json;
use axum::extract::{Path, State};
use serde::Deserialize;
use serde_json::{Value, json};
use tether_core::board::agents::Agent;
use tether_core::ops::agents as op;

use crate::http::auth::Person;
use crate::http::error::{ApiResult, blocking};
use crate::state::Ctx;

pub(crate) async fn list(State(ctx): State<Ctx>) -> ApiResult<Value> {
    blocking(&ctx, |t| Ok(json!({"agents": op::list(t)?}))).await
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Patch {
    wake_by_resume: bool,
}

pub(crate) async fn update(
    State(ctx): State<Ctx>,
    Person(me): Person,
    Path(id): Path<String>,
    Json(p): Json<Patch>,
) -> ApiResult<Agent> {
    blocking(&ctx, move |t| op::set_wake(t, &me, &id, p.wake_by_resume)).await
}
