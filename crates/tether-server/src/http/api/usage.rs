//! Usage and budgets (`ops::usage`): the report (JSON, or CSV with `format=csv`), the summary,
//! the prices, importing the account's usage CSV, and a task's budget.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use tether_core::model::sessions::ImportReport;
use tether_core::ops::usage::{self as op, BudgetSet, ImportUsage, TaskBudget, UsageSummary};
use tether_core::usage::PriceTable;
use tether_core::usage::report::{Dim, UsageQuery, UsageReport, to_csv};

use crate::http::auth::Person;
use crate::http::error::{ApiError, ApiResult, blocking, run};
use crate::state::Ctx;

/// `by` may repeat (`by=day&by=model`) or list several with commas (`by=day,model`).
#[derive(serde::Deserialize, Default, ts_rs::TS)]
#[ts(export, export_to = "server.ts", rename = "UsageReportQuery", optional_fields)]
pub(crate) struct ReportParams {
    since: Option<String>,
    #[serde(default)]
    #[ts(optional, as = "Option<Vec<Dim>>")]
    by: Vec<String>,
    until: Option<String>,
    source: Option<String>,
    limit: Option<usize>,
    /// `csv` for the same rows as CSV.
    format: Option<String>,
}

pub(crate) async fn report(
    State(ctx): State<Ctx>,
    Person(me): Person,
    axum_extra::extract::Query(p): axum_extra::extract::Query<ReportParams>,
) -> Result<Response, ApiError> {
    let by: Vec<Dim> = super::listed(&p.by)?;
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
) -> ApiResult<BudgetSet> {
    blocking(&ctx, move |t| op::set_task_budget(t, &me, &TaskBudget { task, ..req })).await
}
