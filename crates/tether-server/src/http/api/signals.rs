//! Signals: the person's inbox, sending, replying, marking read, and every signal's thread and
//! wake telemetry.

use axum::Json;
use axum::extract::{Path, Query, State};
use serde::Deserialize;
use tether_core::model::signals::{NewSignal, Signal, SignalDetail, SignalFilter};
use tether_core::ops::signals::{self as op, Reply, SignalList};

use super::flag;
use crate::http::auth::Person;
use crate::http::error::{ApiResult, blocking};
use crate::state::Ctx;

#[derive(Deserialize, Default, ts_rs::TS)]
#[ts(export, export_to = "server.ts", rename = "SignalListQuery", optional_fields)]
pub(crate) struct ListParams {
    to: Option<String>,
    from: Option<String>,
    agent: Option<String>,
    trace: Option<String>,
    #[ts(as = "Option<bool>")]
    open: Option<String>,
    limit: Option<usize>,
}

pub(crate) async fn list(State(ctx): State<Ctx>, Query(p): Query<ListParams>) -> ApiResult<SignalList> {
    let f = SignalFilter {
        to: p.to,
        from: p.from,
        agent: p.agent,
        trace: p.trace,
        open: flag(&p.open),
        limit: p.limit.unwrap_or(200).clamp(1, 2000),
    };
    blocking(&ctx, move |t| Ok(SignalList { signals: op::list(t, &f)? })).await
}

pub(crate) async fn get(State(ctx): State<Ctx>, Path(id): Path<String>) -> ApiResult<SignalDetail> {
    blocking(&ctx, move |t| op::get(t, &id)).await
}

/// The person sends as `human`.
pub(crate) async fn send(State(ctx): State<Ctx>, Person(me): Person, Json(new): Json<NewSignal>) -> ApiResult<Signal> {
    blocking(&ctx, move |t| op::send(t, &me, &new)).await
}

pub(crate) async fn reply(
    State(ctx): State<Ctx>,
    Person(me): Person,
    Path(id): Path<String>,
    Json(r): Json<Reply>,
) -> ApiResult<Signal> {
    blocking(&ctx, move |t| op::reply(t, &me, &id, r)).await
}

/// Marks the person's unread signals read, returning them.
pub(crate) async fn drain(State(ctx): State<Ctx>, Person(me): Person) -> ApiResult<SignalList> {
    blocking(&ctx, move |t| Ok(SignalList { signals: op::drain(t, &me)? })).await
}
