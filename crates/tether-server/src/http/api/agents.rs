//! Agents, and whether an idle chain of runs is woken by resume.

use axum::Json;
use axum::extract::{Path, State};
use tether_core::model::agents::Agent;
use tether_core::ops::agents::{self as op, AgentList, SetWake};

use crate::http::auth::Person;
use crate::http::error::{ApiResult, blocking};
use crate::state::Ctx;

pub(crate) async fn list(State(ctx): State<Ctx>) -> ApiResult<AgentList> {
    blocking(&ctx, |t| Ok(AgentList { agents: op::list(t)? })).await
}

pub(crate) async fn update(
    State(ctx): State<Ctx>,
    Person(me): Person,
    Path(agent): Path<String>,
    Json(req): Json<SetWake>,
) -> ApiResult<Agent> {
    blocking(&ctx, move |t| op::set_wake(t, &me, &SetWake { agent, ..req })).await
}
