//! Chats: list, search, read, tag, export; projects and tags.

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use tether_core::model::sessions::{ListQuery, SearchQuery, SessionDetail, SessionSummary, ShowOptions, TagCount};
use tether_core::ops::sessions::{self, Found, ProjectList, RenameTag, SessionPage, Tag, TagList, TagRemoved};

use super::flag;
use crate::http::error::{ApiError, ApiResult, blocking, run};
use crate::state::Ctx;

/// Search snippets mark matches with these; the UI escapes the text first, then turns them into `<mark>`.
const MARK: (&str, &str) = ("\u{2}", "\u{3}");

#[derive(Deserialize, Default, ts_rs::TS)]
#[ts(export, export_to = "server.ts", rename = "SessionListQuery", optional_fields)]
pub(crate) struct ListParams {
    project: Option<String>,
    source: Option<String>,
    agent: Option<String>,
    tag: Option<String>,
    #[ts(as = "Option<bool>")]
    bookmarked: Option<String>,
    since: Option<i64>,
    until: Option<i64>,
    model: Option<String>,
    limit: Option<usize>,
    offset: Option<usize>,
}

pub(crate) async fn list(State(ctx): State<Ctx>, Query(q): Query<ListParams>) -> ApiResult<SessionPage> {
    let l = ListQuery {
        project: sessions::scope(q.project.as_deref(), "all", &[]),
        tag: q.tag.filter(|s| !s.is_empty()),
        bookmarked: flag(&q.bookmarked),
        source: q.source.filter(|s| !s.is_empty()),
        agent: q.agent.filter(|s| !s.is_empty()),
        since: q.since,
        until: q.until,
        model: q.model.filter(|s| !s.trim().is_empty()),
        limit: q.limit.unwrap_or(200).clamp(1, 100_000),
        offset: q.offset.unwrap_or(0),
    };
    blocking(&ctx, move |t| sessions::page(t, &l)).await
}

#[derive(Deserialize, Default, ts_rs::TS)]
#[ts(export, export_to = "server.ts", rename = "SearchQuery", optional_fields)]
pub(crate) struct SearchParams {
    q: Option<String>,
    project: Option<String>,
    limit: Option<usize>,
}

pub(crate) async fn search(State(ctx): State<Ctx>, Query(p): Query<SearchParams>) -> ApiResult<Found> {
    let text =
        p.q.filter(|q| !q.trim().is_empty()).ok_or_else(|| ApiError::invalid("give the words to search for as `q`"))?;
    let q = SearchQuery {
        project: sessions::scope(p.project.as_deref(), "all", &[]),
        limit: p.limit.unwrap_or(50).clamp(1, 500),
        highlight: (MARK.0.into(), MARK.1.into()),
        ..SearchQuery::new(text)
    };
    blocking(&ctx, move |t| sessions::search(t, &q)).await
}

#[derive(Deserialize, Default, ts_rs::TS)]
#[ts(export, export_to = "server.ts", rename = "SessionQuery", optional_fields)]
pub(crate) struct ShowParams {
    offset: Option<usize>,
    limit: Option<usize>,
    #[ts(as = "Option<bool>")]
    tools: Option<String>,
}

pub(crate) async fn show(
    State(ctx): State<Ctx>,
    Path(id): Path<String>,
    Query(p): Query<ShowParams>,
) -> ApiResult<SessionDetail> {
    let o = ShowOptions { offset: p.offset.unwrap_or(0), limit: p.limit.unwrap_or(0), include_tools: flag(&p.tools) };
    blocking(&ctx, move |t| sessions::show(t, &id, &o)).await
}

pub(crate) async fn tag(
    State(ctx): State<Ctx>,
    Path(id): Path<String>,
    Json(u): Json<Tag>,
) -> ApiResult<SessionSummary> {
    blocking(&ctx, move |t| sessions::tag(t, &id, u)).await
}

#[derive(Deserialize, Default, ts_rs::TS)]
#[ts(export, export_to = "server.ts", rename = "SessionExportQuery", optional_fields)]
pub(crate) struct ExportParams {
    format: Option<String>,
}

pub(crate) async fn export(
    State(ctx): State<Ctx>,
    Path(id): Path<String>,
    Query(p): Query<ExportParams>,
) -> Result<Response, ApiError> {
    use tether_core::model::sessions::Format;
    let format: Format = p.format.as_deref().unwrap_or("md").parse()?;
    let key = id.clone();
    let text = run(&ctx, move |t| sessions::export(t, &key, format)).await?;
    let mime = match format {
        Format::Json => "application/json",
        Format::Html => "text/html; charset=utf-8",
        Format::Markdown => "text/markdown; charset=utf-8",
    };
    let ext = format.extension();
    let safe: String = id.chars().filter(|c| c.is_ascii_alphanumeric() || *c == '-').take(64).collect();
    let disposition = format!("attachment; filename=\"tether-{safe}.{ext}\"");
    Ok(([(header::CONTENT_TYPE, mime.to_owned()), (header::CONTENT_DISPOSITION, disposition)], text).into_response())
}

pub(crate) async fn projects(State(ctx): State<Ctx>) -> ApiResult<ProjectList> {
    blocking(&ctx, |t| Ok(ProjectList { projects: sessions::projects(t)? })).await
}

pub(crate) async fn tags(State(ctx): State<Ctx>) -> ApiResult<TagList> {
    blocking(&ctx, |t| Ok(TagList { tags: sessions::tags(t)? })).await
}

pub(crate) async fn rename_tag(State(ctx): State<Ctx>, Json(r): Json<RenameTag>) -> ApiResult<TagCount> {
    blocking(&ctx, move |t| sessions::rename_tag(t, r)).await
}

pub(crate) async fn delete_tag(State(ctx): State<Ctx>, Path(tag): Path<String>) -> ApiResult<TagRemoved> {
    blocking(&ctx, move |t| sessions::delete_tag(t, &tag)).await
}
