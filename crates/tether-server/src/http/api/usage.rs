//! Usage and budgets (`ops::usage`): the report (JSON, or CSV with `format=csv`), the summary,
//! the prices, importing the account's usage CSV, and a task's budget.

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::{Uri, header};
use axum::response::{IntoResponse, Response};
use tether_core::history::usage::ImportReport;
use tether_core::ops::usage::{self as op, ImportUsage, TaskBudget, UsageSummary};
use tether_core::usage::PriceTable;
use tether_core::usage::report::{UsageQuery, UsageReport, to_csv};

use crate::http::auth::Person;
use crate::http::error::{ApiError, ApiResult, blocking, run};
use crate::state::Ctx;

#[derive(serde::Deserialize, Default)]
pub(crate) struct ReportParams {
    since: Option<String>,
    until: Option<String>,
    source: Option<String>,
    limit: Option<usize>,
    /// `csv` for the same rows as CSV.
    format: Option<String>,
}

/// `?by=` repeats (`by=day&by=model` or `by=day,model`).
pub(crate) async fn report(
    State(ctx): State<Ctx>,
    Person(me): Person,
    Query(p): Query<ReportParams>,
    uri: Uri,
) -> Result<Response, ApiError> {
    let by = super::repeated(&uri, "by").iter().map(|b| b.parse()).collect::<Result<Vec<_>, _>>()?;
    let q = UsageQuery { since: p.since, until: p.until, by, source: p.source, limit: p.limit };
    let r: UsageReport = run(&ctx, move |t| op::report(t, &me, &q)).await?;
    Ok(match p.format.as_deref() {
        Some("csv") => ([(header::CONTENT_TYPE, "text/csv; charset=utf-8")], to_csv(&r)).into_response(),
        _ => Json(r).into_response(),
    })
}

pub(crate) async fn summary(State(ctx): State<Ctx>, Person(me): Person) -> ApiResult<UsageSummary> {
    blocking(&ctx, move |t| op::summary(t, &me)).await
}

pub(crate) async fn prices(State(ctx): State<Ctx>) -> ApiResult<PriceTable> {
    blocking(&ctx, op::prices).await
}

pub(crate) async fn import(
    State(ctx): State<Ctx>,
    Person(me): Person,
    Json(req): Json<ImportUsage>,
) -> ApiResult<ImportReport> {
    blocking(&ctx, move |t| op::import(t, &me, &req)).await
}

/// The task is the path's; the body is `{budget}`.
pub(crate) async fn task_budget(
    State(ctx): State<Ctx>,
    Person(me): Person,
    Path(task): Path<String>,
    Json(req): Json<TaskBudget>,
) -> ApiResult<serde_json::Value> {
    blocking(&ctx, move |t| {
        let budget = op::set_task_budget(t, &me, &TaskBudget { task: task.clone(), ..req })?;
        Ok(serde_json::json!({ "task": task, "budget": budget }))
    })
    .await
}
