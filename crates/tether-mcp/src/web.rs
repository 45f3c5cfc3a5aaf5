//! The GUI's side of the loopback server (contract: docs/api.md): a JSON API over the same core
//! functions the CLI and MCP tools call, a Server-Sent Events stream of live changes, the one-time
//! login that turns `tether open`'s link into an HttpOnly cookie, and the built UI's files.
//!
//! Each handler parses, calls one core function and shapes the answer; no logic of its own.

use std::collections::HashMap;
use std::convert::Infallible;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Json;
use axum::Router;
use axum::extract::{Path, Query, Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use futures_util::Stream;
use serde::Deserialize;
use serde_json::{Value, json};
use tether_core::board::signals::{NewSignal, Recipient, Sender, SignalFilter};
use tether_core::board::tasks::{self, Actor, NewTask, TaskChange, TaskQuery};
use tether_core::history::sessions::{ListQuery, ProjectFilter, SearchQuery, ShowOptions, TagUpdate};

use crate::Ctx;

/// The cookie `tether open`'s link sets.
const COOKIE: &str = "tether_ui";
const CODE_TTL: Duration = Duration::from_secs(60);
const COOKIE_TTL: Duration = Duration::from_secs(30 * 24 * 3600);
/// Search snippets mark matches with these; the UI escapes the text first, then turns them into `<mark>`.
const MARK: (&str, &str) = ("\u{2}", "\u{3}");

/// One-time login codes and the browser sessions they became. In memory: a restarted daemon
/// asks the browser to log in again, which `tether open` makes one command.
#[derive(Default)]
pub(crate) struct UiAuth {
    codes: Mutex<HashMap<String, Instant>>,
    cookies: Mutex<HashMap<String, Instant>>,
}

fn random_token() -> String {
    let mut b = [0u8; 24];
    getrandom::fill(&mut b).unwrap_or_else(|e| panic!("the OS random source failed: {e}"));
    b.iter().map(|x| format!("{x:02x}")).collect()
}

impl UiAuth {
    fn new_code(&self) -> String {
        let code = random_token();
        let mut codes = self.codes.lock().unwrap_or_else(|p| p.into_inner());
        codes.retain(|_, at| at.elapsed() < CODE_TTL);
        codes.insert(code.clone(), Instant::now());
        code
    }

    /// Spends a code (once) and returns the new cookie value.
    fn redeem(&self, code: &str) -> Option<String> {
        let at = self.codes.lock().unwrap_or_else(|p| p.into_inner()).remove(code)?;
        (at.elapsed() < CODE_TTL).then(|| {
            let cookie = random_token();
            self.cookies.lock().unwrap_or_else(|p| p.into_inner()).insert(cookie.clone(), Instant::now());
            cookie
        })
    }

    fn cookie_ok(&self, value: &str) -> bool {
        let mut cookies = self.cookies.lock().unwrap_or_else(|p| p.into_inner());
        cookies.retain(|_, at| at.elapsed() < COOKIE_TTL);
        // Compare in constant time against each: the set is tiny.
        cookies.keys().any(|k| tether_core::token::matches(k, value))
    }
}

pub(crate) fn router(ctx: Ctx) -> Router<Ctx> {
    let api = Router::new()
        .route("/status", get(status))
        .route("/login-code", post(login_code))
        .route("/sessions", get(sessions))
        .route("/search", get(search))
        .route("/sessions/{id}", get(session).patch(session_tag))
        .route("/sessions/{id}/export", get(session_export))
        .route("/projects", get(projects))
        .route("/tags", get(tags))
        .route("/tags/rename", post(tag_rename))
        .route("/tags/{tag}", axum::routing::delete(tag_delete))
        .route("/tasks", get(task_list).post(task_create))
        .route("/tasks/{id}", get(task_get).patch(task_update))
        .route("/tasks/{id}/claim", post(task_claim))
        .route("/agents", get(agents))
        .route("/agents/{id}", axum::routing::patch(agent_update))
        .route("/runs", get(run_list).post(run_start))
        .route("/runs/options", get(run_options))
        .route("/cloud/doctor", get(cloud_doctor))
        .route("/insights", get(insights))
        .route("/runs/{id}", get(run_get))
        .route("/runs/{id}/events", get(run_events))
        .route("/runs/{id}/cancel", post(run_cancel))
        .route("/runs/{id}/approve", post(run_approve))
        .route("/runs/{id}/followup", post(run_followup))
        .route("/signals", get(signal_list).post(signal_send))
        .route("/signals/drain", post(signal_drain))
        .route("/signals/{id}", get(signal_get))
        .route("/signals/{id}/reply", post(signal_reply))
        .route("/doctor", get(doctor))
        .route("/index", post(reindex))
        .route("/token/rotate", post(token_rotate))
        .route("/init", post(init))
        .route("/settings", get(settings).patch(settings_update))
        .route("/events", get(events))
        .layer(middleware::map_response(json_rejections))
        .layer(middleware::from_fn_with_state(ctx.clone(), api_guard));
    let mut r = Router::new().nest("/api", api).route("/login", get(login));
    r = match tether_core::paths::ui_dir() {
        Some(dir) => r.fallback_service(tower_http::services::ServeDir::new(dir)),
        None => r.route("/", get(no_ui)),
    };
    r.layer(middleware::from_fn(no_overlong_paths)).layer(middleware::from_fn(same_site_only))
}

/// A browser page may only reach us from our own origin (or the desktop app's webview), and
/// only through a loopback host name: DNS rebinding and cross-site requests end here.
async fn same_site_only(req: Request, next: Next) -> Response {
    let host = req.headers().get(header::HOST).and_then(|v| v.to_str().ok()).unwrap_or("");
    let name =
        host.rsplit_once(':').map_or(host, |(h, p)| if p.chars().all(|c| c.is_ascii_digit()) { h } else { host });
    let loopback_ip =
        name.trim_start_matches('[').trim_end_matches(']').parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback());
    if !(name == "localhost" || loopback_ip) {
        return error(StatusCode::FORBIDDEN, None, "this server only answers on a loopback address");
    }
    if let Some(origin) = req.headers().get(header::ORIGIN).and_then(|v| v.to_str().ok()) {
        let ours =
            origin == format!("http://{host}") || origin == "tauri://localhost" || origin == "http://tauri.localhost";
        if !ours {
            return error(StatusCode::FORBIDDEN, None, "cross-origin requests are refused");
        }
    }
    next.run(req).await
}

/// A path segment longer than any file name can be is not a file of ours: a clear 404, instead of
/// the static file service's 500 (`File name too long`).
async fn no_overlong_paths(req: Request, next: Next) -> Response {
    if req.uri().path().split('/').any(|seg| seg.len() > 255) {
        return error(StatusCode::NOT_FOUND, Some(json!("not_found")), "no such page");
    }
    next.run(req).await
}

/// Bearer token or login cookie; state changes also need `X-Tether: 1`, which a cross-site
/// form or simple request cannot send.
async fn api_guard(State(ctx): State<Ctx>, req: Request, next: Next) -> Response {
    let h = req.headers();
    let bearer = h.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()).and_then(|v| v.strip_prefix("Bearer "));
    let by_token = bearer.is_some_and(|t| ctx.app.token_matches(t));
    let by_cookie = cookie(h, COOKIE).is_some_and(|c| ctx.app.ui_auth.cookie_ok(c));
    // Minting a login link is for token holders (the `tether open` command) only.
    let allowed = if req.uri().path() == "/login-code" { by_token } else { by_token || by_cookie };
    if !allowed {
        return error(StatusCode::UNAUTHORIZED, None, "not logged in: run `tether open` for a login link");
    }
    if req.method() != Method::GET && h.get("x-tether").and_then(|v| v.to_str().ok()) != Some("1") {
        return error(StatusCode::FORBIDDEN, None, "send the header `X-Tether: 1` with requests that change things");
    }
    crate::http::authenticated(next.run(req).await)
}

/// axum answers a malformed query or body in plain text, and a wrong method with an empty body;
/// the API always speaks `{code, message}`.
async fn json_rejections(res: Response) -> Response {
    let plain = res.headers().get(header::CONTENT_TYPE).is_some_and(|v| v.as_bytes().starts_with(b"text/plain"));
    if res.status() == StatusCode::METHOD_NOT_ALLOWED && !plain {
        let allow = res.headers().get(header::ALLOW).cloned();
        let mut r = error(StatusCode::METHOD_NOT_ALLOWED, None, "this route does not take that method");
        if let Some(a) = allow {
            r.headers_mut().insert(header::ALLOW, a);
        }
        return r;
    }
    if !(res.status().is_client_error() && plain) {
        return res;
    }
    let status = res.status();
    let body = axum::body::to_bytes(res.into_body(), 64 * 1024).await.unwrap_or_default();
    error(status, Some(json!("invalid_input")), String::from_utf8_lossy(&body).trim())
}

fn cookie<'a>(h: &'a HeaderMap, name: &str) -> Option<&'a str> {
    h.get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|kv| kv.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v)
}

fn error(status: StatusCode, code: Option<Value>, message: &str) -> Response {
    let body = match code {
        Some(c) => json!({"code": c, "message": message}),
        None => json!({"message": message}),
    };
    (status, Json(body)).into_response()
}

/// A core error as `{code, message}` with the status a caller expects.
pub(crate) fn core_error(e: &tether_core::Error) -> Response {
    use tether_core::ErrorCode as C;
    let code = e.code();
    let status = match code {
        C::NotFound => StatusCode::NOT_FOUND,
        C::InvalidInput => StatusCode::BAD_REQUEST,
        C::Forbidden => StatusCode::FORBIDDEN,
        C::Busy => StatusCode::SERVICE_UNAVAILABLE,
        C::Internal => StatusCode::INTERNAL_SERVER_ERROR,
        _ => StatusCode::CONFLICT,
    };
    let code = (code != C::Internal).then(|| serde_json::to_value(code).unwrap_or(Value::Null));
    error(status, code, &e.to_string())
}

/// Runs core work off the async threads and answers with its JSON or its error.
async fn run<T: serde::Serialize + Send + 'static>(
    f: impl FnOnce() -> tether_core::Result<T> + Send + 'static,
) -> Response {
    match tokio::task::spawn_blocking(f).await {
        Ok(Ok(v)) => Json(v).into_response(),
        Ok(Err(e)) => core_error(&e),
        Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, None, &e.to_string()),
    }
}

async fn no_ui() -> Response {
    (
        StatusCode::NOT_FOUND,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        "Tether's GUI is not there. In a source checkout run `scripts/setup` (it builds ui/dist); the .deb installs it \
         in /usr/share/tether/ui (reinstall the package); or point TETHER_UI_DIR at a built GUI.\n",
    )
        .into_response()
}

async fn status(State(ctx): State<Ctx>) -> Response {
    let mut v = health_json(&ctx).await;
    v["url"] = json!(tether_core::daemon::running(&ctx.app.tether.paths).and_then(|d| d.url));
    v["mcp_sessions"] = json!(ctx.app.streams.report());
    v["paused"] = json!(ctx.app.indexing_paused());
    v["moved_from"] =
        json!(ctx.app.moved_from().map(|(port, at)| json!({"port": port, "at": tether_core::clock::iso(at)})));
    let t = Arc::clone(&ctx.app.tether);
    let attention = tokio::task::spawn_blocking(move || tether_core::attention::list(&t)).await;
    v["attention"] = json!(attention.ok().and_then(Result::ok).unwrap_or_default());
    Json(v).into_response()
}

/// What `/health` shows: no secrets, nothing that needs the token.
pub(crate) async fn health_json(ctx: &Ctx) -> serde_json::Value {
    let t = Arc::clone(&ctx.app.tether);
    let counts = tokio::task::spawn_blocking(move || {
        t.store.read(|c| {
            Ok(c.query_row("SELECT count(*), coalesce(sum(message_count), 0) FROM sessions", [], |r| {
                Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?))
            })?)
        })
    })
    .await;
    let (sessions, messages) = match counts {
        Ok(Ok(c)) => c,
        _ => (-1, -1),
    };
    let indexing = ctx.app.indexing.load(std::sync::atomic::Ordering::Relaxed);
    json!({
        "status": "ok",
        "version": env!("CARGO_PKG_VERSION"),
        "uptime_s": ctx.app.uptime().as_secs(),
        "index": {"state": if indexing { "indexing" } else { "idle" }, "sessions": sessions, "messages": messages},
        "mcp_sessions": ctx.app.mcp_sessions(),
    })
}

async fn login_code(State(ctx): State<Ctx>) -> Response {
    Json(json!({"code": ctx.app.ui_auth.new_code()})).into_response()
}

#[derive(Deserialize)]
struct LoginQuery {
    code: String,
}

async fn login(State(ctx): State<Ctx>, Query(q): Query<LoginQuery>) -> Response {
    match ctx.app.ui_auth.redeem(&q.code) {
        Some(c) => {
            let set = format!("{COOKIE}={c}; HttpOnly; SameSite=Strict; Path=/; Max-Age={}", COOKIE_TTL.as_secs());
            let mut r = Redirect::to("/").into_response();
            if let Ok(v) = HeaderValue::from_str(&set) {
                r.headers_mut().insert(header::SET_COOKIE, v);
            }
            r
        }
        None => (
            StatusCode::UNAUTHORIZED,
            [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
            "This login link is used up or older than a minute. Run `tether open` for a fresh one.\n",
        )
            .into_response(),
    }
}

fn project_filter(p: Option<&str>) -> ProjectFilter {
    match p.map(str::trim) {
        None | Some("" | "all") => ProjectFilter::All,
        Some(p) => ProjectFilter::Path(p.to_owned()),
    }
}

#[derive(Deserialize, Default)]
struct SessionsQuery {
    project: Option<String>,
    source: Option<String>,
    tag: Option<String>,
    bookmarked: Option<String>,
    limit: Option<usize>,
    offset: Option<usize>,
}

fn flag(v: &Option<String>) -> bool {
    matches!(v.as_deref(), Some("1" | "true" | "yes"))
}

async fn sessions(State(ctx): State<Ctx>, Query(q): Query<SessionsQuery>) -> Response {
    let t = Arc::clone(&ctx.app.tether);
    run(move || {
        let l = ListQuery {
            project: project_filter(q.project.as_deref()),
            tag: q.tag.filter(|s| !s.is_empty()),
            bookmarked: flag(&q.bookmarked),
            source: q.source.filter(|s| !s.is_empty()),
            limit: q.limit.unwrap_or(200).clamp(1, 100_000),
            offset: q.offset.unwrap_or(0),
        };
        Ok(json!({"sessions": t.list(&l)?}))
    })
    .await
}

#[derive(Deserialize)]
struct SearchParams {
    q: Option<String>,
    project: Option<String>,
    limit: Option<usize>,
}

async fn search(State(ctx): State<Ctx>, Query(p): Query<SearchParams>) -> Response {
    let Some(text) = p.q.filter(|q| !q.trim().is_empty()) else {
        return error(StatusCode::BAD_REQUEST, Some(json!("invalid_input")), "give the words to search for as `q`");
    };
    let t = Arc::clone(&ctx.app.tether);
    run(move || {
        let q = SearchQuery {
            project: project_filter(p.project.as_deref()),
            limit: p.limit.unwrap_or(50).clamp(1, 500),
            highlight: (MARK.0.into(), MARK.1.into()),
            ..SearchQuery::new(text)
        };
        Ok(json!({"hits": t.search(&q)?, "coverage": t.coverage()?}))
    })
    .await
}

#[derive(Deserialize)]
struct ShowParams {
    offset: Option<usize>,
    limit: Option<usize>,
    tools: Option<String>,
}

async fn session(State(ctx): State<Ctx>, Path(id): Path<String>, Query(p): Query<ShowParams>) -> Response {
    let t = Arc::clone(&ctx.app.tether);
    let o = ShowOptions { offset: p.offset.unwrap_or(0), limit: p.limit.unwrap_or(0), include_tools: flag(&p.tools) };
    run(move || t.show(&id, &o)).await
}

#[derive(Deserialize)]
struct SessionPatch {
    /// Absent: unchanged; `null` or "": cleared.
    #[serde(default, deserialize_with = "some_or_null")]
    nickname: Option<Option<String>>,
    #[serde(default)]
    add_tags: Vec<String>,
    #[serde(default)]
    remove_tags: Vec<String>,
    bookmarked: Option<bool>,
    no_index: Option<bool>,
}

fn some_or_null<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Option<String>>, D::Error> {
    Ok(Some(Option::<String>::deserialize(d)?.filter(|s| !s.trim().is_empty())))
}

async fn session_tag(State(ctx): State<Ctx>, Path(id): Path<String>, Json(p): Json<SessionPatch>) -> Response {
    let app = Arc::clone(&ctx.app);
    let u = TagUpdate {
        nickname: p.nickname,
        add_tags: p.add_tags,
        remove_tags: p.remove_tags,
        bookmarked: p.bookmarked,
        no_index: p.no_index,
    };
    run(move || {
        let s = app.tether.tag(&id, &u)?;
        app.sessions_changed(std::slice::from_ref(&s.id));
        Ok(s)
    })
    .await
}

#[derive(Deserialize)]
struct ExportParams {
    format: Option<String>,
}

async fn session_export(State(ctx): State<Ctx>, Path(id): Path<String>, Query(p): Query<ExportParams>) -> Response {
    let fmt = p.format.unwrap_or_else(|| "md".into());
    let format: tether_core::history::export::Format = match fmt.parse() {
        Ok(f) => f,
        Err(e) => return core_error(&e),
    };
    let t = Arc::clone(&ctx.app.tether);
    let key = id.clone();
    match tokio::task::spawn_blocking(move || t.export(&key, format)).await {
        Ok(Ok(text)) => {
            let (mime, ext) = match fmt.as_str() {
                "json" => ("application/json", "json"),
                "html" => ("text/html; charset=utf-8", "html"),
                _ => ("text/markdown; charset=utf-8", "md"),
            };
            let safe: String = id.chars().filter(|c| c.is_ascii_alphanumeric() || *c == '-').take(64).collect();
            let disposition = format!("attachment; filename=\"tether-{safe}.{ext}\"");
            ([(header::CONTENT_TYPE, mime.to_owned()), (header::CONTENT_DISPOSITION, disposition)], text)
                .into_response()
        }
        Ok(Err(e)) => core_error(&e),
        Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, None, &e.to_string()),
    }
}

async fn projects(State(ctx): State<Ctx>) -> Response {
    let t = Arc::clone(&ctx.app.tether);
    run(move || Ok(json!({"projects": t.projects()?}))).await
}

async fn tags(State(ctx): State<Ctx>) -> Response {
    let t = Arc::clone(&ctx.app.tether);
    run(move || Ok(json!({"tags": t.tags()?}))).await
}

#[derive(Deserialize)]
struct Rename {
    from: String,
    to: String,
}

async fn tag_rename(State(ctx): State<Ctx>, Json(r): Json<Rename>) -> Response {
    let app = Arc::clone(&ctx.app);
    run(move || {
        let c = app.tether.rename_tag(&r.from, &r.to)?;
        app.emit("sessions", json!({"ids": []}));
        Ok(c)
    })
    .await
}

async fn tag_delete(State(ctx): State<Ctx>, Path(tag): Path<String>) -> Response {
    let app = Arc::clone(&ctx.app);
    run(move || {
        let n = app.tether.delete_tag(&tag)?;
        app.emit("sessions", json!({"ids": []}));
        Ok(json!({"removed_from": n}))
    })
    .await
}

/// The person the GUI acts as on the task board.
fn ui_actor() -> Actor {
    Actor::person(&std::env::var("TETHER_USER").ok().filter(|u| !u.trim().is_empty()).unwrap_or_else(|| "ui".into()))
}

/// `status` may repeat (`?status=todo&status=done`), so it is read from the raw query instead.
#[derive(Deserialize, Default)]
struct TaskListParams {
    assignee: Option<String>,
    role: Option<String>,
    project: Option<String>,
    label: Option<String>,
    ready: Option<String>,
    limit: Option<usize>,
}

async fn task_list(State(ctx): State<Ctx>, Query(p): Query<TaskListParams>, uri: axum::http::Uri) -> Response {
    let mut statuses: Vec<String> = uri
        .query()
        .unwrap_or("")
        .split('&')
        .filter_map(|kv| kv.strip_prefix("status="))
        .flat_map(|v| v.split(','))
        .filter(|v| !v.is_empty())
        .map(str::to_owned)
        .collect();
    if statuses.is_empty() && !flag(&p.ready) {
        statuses = tasks::Status::ALL.iter().map(|s| s.as_str().to_owned()).collect();
    }
    let q = TaskQuery {
        id: None,
        statuses,
        assignee: p.assignee,
        role: p.role,
        project: p.project,
        label: p.label,
        ready: flag(&p.ready),
        limit: p.limit.unwrap_or(500),
    };
    let t = Arc::clone(&ctx.app.tether);
    run(move || t.board().query_tasks(&ui_actor(), &q)).await
}

async fn task_get(State(ctx): State<Ctx>, Path(id): Path<String>) -> Response {
    let t = Arc::clone(&ctx.app.tether);
    run(move || t.board().task(&id)).await
}

async fn task_create(State(ctx): State<Ctx>, Json(new): Json<NewTask>) -> Response {
    let t = Arc::clone(&ctx.app.tether);
    run(move || t.board().create_task(&ui_actor(), &new)).await
}

#[derive(Deserialize, Default)]
struct TaskPatch {
    status: Option<String>,
    title: Option<String>,
    description: Option<String>,
    priority: Option<String>,
    #[serde(default, deserialize_with = "some_or_null")]
    role: Option<Option<String>>,
    #[serde(default, deserialize_with = "some_or_null")]
    project: Option<Option<String>>,
    #[serde(default)]
    add_labels: Vec<String>,
    #[serde(default)]
    remove_labels: Vec<String>,
    #[serde(default)]
    add_depends_on: Vec<String>,
    #[serde(default)]
    remove_depends_on: Vec<String>,
    acceptance: Option<Vec<String>>,
    #[serde(default, deserialize_with = "some_or_null")]
    assignee: Option<Option<String>>,
    comment: Option<String>,
    #[serde(default)]
    handoff: bool,
    summary: Option<String>,
    #[serde(default)]
    release: bool,
    #[serde(default)]
    force: bool,
}

async fn task_update(State(ctx): State<Ctx>, Path(id): Path<String>, Json(p): Json<TaskPatch>) -> Response {
    let status = match p.status.as_deref().map(str::parse).transpose() {
        Ok(s) => s,
        Err(e) => return core_error(&e),
    };
    let ch = TaskChange {
        status,
        title: p.title,
        description: p.description,
        priority: p.priority,
        role: p.role,
        project: p.project,
        add_labels: p.add_labels,
        remove_labels: p.remove_labels,
        add_deps: p.add_depends_on,
        remove_deps: p.remove_depends_on,
        acceptance: p.acceptance,
        assignee: p.assignee,
        comment: p.comment,
        handoff: p.handoff,
        summary: p.summary,
        release: p.release,
        force: p.force,
    };
    let app = Arc::clone(&ctx.app);
    run(move || {
        let task = app.tether.board().update_task(&ui_actor(), &id, &ch)?;
        // An assignment sends the agent a signal.
        app.signals_sent();
        Ok(task)
    })
    .await
}

async fn task_claim(State(ctx): State<Ctx>, Path(id): Path<String>) -> Response {
    let t = Arc::clone(&ctx.app.tether);
    run(move || t.board().claim(&ui_actor(), Some(id), None, None)).await
}

async fn agents(State(ctx): State<Ctx>) -> Response {
    let t = Arc::clone(&ctx.app.tether);
    run(move || Ok(json!({"agents": t.agents()?}))).await
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AgentPatch {
    wake_by_resume: bool,
}

async fn agent_update(State(ctx): State<Ctx>, Path(id): Path<String>, Json(p): Json<AgentPatch>) -> Response {
    let app = Arc::clone(&ctx.app);
    run(move || {
        let a = app.tether.board().set_wake_by_resume(&id, p.wake_by_resume)?;
        app.emit("agents", json!({}));
        Ok(a)
    })
    .await
}

#[derive(Deserialize, Default)]
struct SignalListParams {
    to: Option<String>,
    from: Option<String>,
    agent: Option<String>,
    trace: Option<String>,
    open: Option<String>,
    limit: Option<usize>,
}

async fn signal_list(State(ctx): State<Ctx>, Query(p): Query<SignalListParams>) -> Response {
    let t = Arc::clone(&ctx.app.tether);
    let f = SignalFilter {
        to: p.to,
        from: p.from,
        agent: p.agent,
        trace: p.trace,
        open: flag(&p.open),
        limit: p.limit.unwrap_or(200).clamp(1, 2000),
    };
    run(move || Ok(json!({"signals": t.board().signals(&f)?}))).await
}

async fn signal_get(State(ctx): State<Ctx>, Path(id): Path<String>) -> Response {
    let t = Arc::clone(&ctx.app.tether);
    run(move || t.board().signal(&id)).await
}

/// The person sends as `human`.
async fn signal_send(State(ctx): State<Ctx>, Json(new): Json<NewSignal>) -> Response {
    let app = Arc::clone(&ctx.app);
    run(move || {
        let s = app.tether.board().send_signal(&Sender::Human, &new)?;
        app.signals_sent();
        Ok(s)
    })
    .await
}

#[derive(Deserialize)]
struct ReplyBody {
    body: String,
    #[serde(rename = "type")]
    kind: Option<String>,
}

async fn signal_reply(State(ctx): State<Ctx>, Path(id): Path<String>, Json(b): Json<ReplyBody>) -> Response {
    let app = Arc::clone(&ctx.app);
    run(move || {
        let new = NewSignal { reply_to: Some(id), kind: b.kind, body: b.body, ..Default::default() };
        let s = app.tether.board().send_signal(&Sender::Human, &new)?;
        app.signals_sent();
        Ok(s)
    })
    .await
}

/// Marks the person's unread signals read, returning them.
async fn signal_drain(State(ctx): State<Ctx>) -> Response {
    let app = Arc::clone(&ctx.app);
    run(move || {
        let got = app.tether.board().drain_signals(&Recipient::Human)?;
        if !got.is_empty() {
            app.emit("signals", json!({}));
        }
        Ok(json!({"signals": got}))
    })
    .await
}

async fn doctor(State(ctx): State<Ctx>) -> Response {
    let t = Arc::clone(&ctx.app.tether);
    let cli = tether_runs::probe(&t).await;
    run(move || {
        let mut v = serde_json::to_value(t.doctor()?)?;
        v["cursor_cli"] = json!(cli);
        Ok(v)
    })
    .await
}

#[derive(Deserialize, Default)]
struct RunListParams {
    task: Option<String>,
    chat: Option<String>,
    limit: Option<usize>,
}

async fn run_list(State(ctx): State<Ctx>, Query(p): Query<RunListParams>, uri: axum::http::Uri) -> Response {
    let statuses: Result<Vec<tether_core::board::runs::RunStatus>, _> = uri
        .query()
        .unwrap_or("")
        .split('&')
        .filter_map(|kv| kv.strip_prefix("status="))
        .flat_map(|v| v.split(','))
        .filter(|v| !v.is_empty())
        .map(str::parse)
        .collect();
    let statuses = match statuses {
        Ok(s) => s,
        Err(e) => return core_error(&e),
    };
    let t = Arc::clone(&ctx.app.tether);
    let f = tether_core::board::runs::RunFilter { statuses, task: p.task, chat: p.chat, limit: p.limit.unwrap_or(200) };
    run(move || Ok(json!({"runs": t.board().runs(&f)?}))).await
}

/// The person starts a run from the GUI.
async fn run_start(State(ctx): State<Ctx>, Json(new): Json<tether_core::board::runs::NewRun>) -> Response {
    let app = Arc::clone(&ctx.app);
    run(move || {
        let r = app.tether.queue_run(&ui_actor().who.id.replacen("cli:", "", 1), &new)?;
        if let Some(runner) = app.runner() {
            runner.kick();
        }
        app.emit("runs", json!({"run": r.id, "status": r.status}));
        Ok(r)
    })
    .await
}

/// What the run form offers: roles, the folders runs may use, the Cursor CLI found, defaults.
async fn run_options(State(ctx): State<Ctx>) -> Response {
    let t = Arc::clone(&ctx.app.tether);
    let cli = tether_runs::probe(&t).await;
    run(move || {
        let settings = t.settings()?;
        let key = tether_core::token::cursor_key(&t.paths).ok().flatten().is_some();
        Ok(json!({"roles": t.roles()?, "roots": t.run_roots()?, "cursor_cli": cli, "defaults": settings.runs,
                  "cloud": {"key": key, "defaults": settings.cloud}}))
    })
    .await
}

#[derive(Deserialize, Default)]
struct InsightsParams {
    /// Epoch ms.
    since: Option<i64>,
    project: Option<String>,
}

async fn insights(State(ctx): State<Ctx>, Query(p): Query<InsightsParams>) -> Response {
    let t = Arc::clone(&ctx.app.tether);
    let q = tether_core::insights::InsightsQuery { since: p.since, project: p.project.filter(|s| !s.is_empty()) };
    run(move || t.insights(&q)).await
}

/// The cloud environment test (asks Cursor whether the key is valid).
async fn cloud_doctor(State(ctx): State<Ctx>) -> Response {
    let checks = tether_cloud::doctor::run(&ctx.app.tether, &Default::default()).await;
    Json(json!({"checks": checks})).into_response()
}

#[derive(Deserialize, Default)]
struct RunGetParams {
    /// How many events (the newest, or those before `before`); default 500, at most 5,000.
    tail: Option<usize>,
    /// Page back: events before this one.
    before: Option<i64>,
}

/// Events a run view gets per page: a big run's log is never sent whole.
const RUN_PAGE_DEFAULT: usize = 500;
const RUN_PAGE_MAX: usize = 5000;

async fn run_get(State(ctx): State<Ctx>, Path(id): Path<String>, Query(p): Query<RunGetParams>) -> Response {
    let t = Arc::clone(&ctx.app.tether);
    let limit = p.tail.unwrap_or(RUN_PAGE_DEFAULT).min(RUN_PAGE_MAX);
    run(move || t.board().run_page(&id, p.before, Some(limit))).await
}

async fn run_cancel(State(ctx): State<Ctx>, Path(id): Path<String>) -> Response {
    let app = Arc::clone(&ctx.app);
    match app.runner() {
        Some(r) => match r.cancel(&id).await {
            Ok(run) => Json(run).into_response(),
            Err(e) => core_error(&e),
        },
        None => run(move || app.tether.board().cancel_run(&id)).await,
    }
}

async fn run_approve(State(ctx): State<Ctx>, Path(id): Path<String>) -> Response {
    let app = Arc::clone(&ctx.app);
    let r = run(move || app.tether.board().approve_run(&id)).await;
    if let Some(runner) = ctx.app.runner() {
        runner.kick();
    }
    r
}

#[derive(Deserialize)]
struct FollowupBody {
    prompt: String,
}

async fn run_followup(State(ctx): State<Ctx>, Path(id): Path<String>, Json(b): Json<FollowupBody>) -> Response {
    let app = Arc::clone(&ctx.app);
    run(move || {
        let r = app.tether.followup_run(&ui_actor().who.id.replacen("cli:", "", 1), &id, &b.prompt)?;
        if let Some(runner) = app.runner() {
            runner.kick();
        }
        Ok(r)
    })
    .await
}

#[derive(Deserialize, Default)]
struct RunEventsParams {
    /// Replay events after this one (0: from the start).
    after: Option<i64>,
}

/// A run's events as Server-Sent Events (`events`: a batch of stored events, `status` when it
/// changes, `lagged` when this subscriber fell behind the live stream): what is stored after
/// `after` first, read from the store a page at a time, then live until the run ends. A
/// subscriber that falls behind is told so and caught up from the store, so it holds at most a
/// page and the live buffer in memory, however big the run.
async fn run_events(
    State(ctx): State<Ctx>,
    Path(id): Path<String>,
    Query(p): Query<RunEventsParams>,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, Response> {
    // Subscribe before reading the backlog, so nothing falls between the two.
    let live = ctx.app.runner().map(|r| r.subscribe());
    let t = Arc::clone(&ctx.app.tether);
    let key = id.clone();
    let run = match tokio::task::spawn_blocking(move || t.board().run(&key, Some(0))).await {
        Ok(Ok(d)) => d.run,
        Ok(Err(e)) => return Err(core_error(&e)),
        Err(e) => return Err(error(StatusCode::INTERNAL_SERVER_ERROR, None, &e.to_string())),
    };
    let follow = RunFollow {
        tether: Arc::clone(&ctx.app.tether),
        live: live.filter(|_| !run.status.is_terminal()),
        run: run.id,
        status: Some(run.status),
        last: p.after.unwrap_or(0),
        catching_up: true,
    };
    let stream = futures_util::stream::unfold(follow, |mut f| async move {
        let ev = f.next().await?;
        Some((Ok(ev), f))
    });
    Ok(Sse::new(stream).keep_alive(KeepAlive::new().interval(Duration::from_secs(15))))
}

/// Events read from the store per step while catching up.
const RUN_EVENTS_PAGE: usize = 500;

struct RunFollow {
    tether: Arc<tether_core::Tether>,
    live: Option<tokio::sync::broadcast::Receiver<tether_runs::RunUpdate>>,
    run: String,
    /// The status to say once caught up (then cleared).
    status: Option<tether_core::board::runs::RunStatus>,
    last: i64,
    catching_up: bool,
}

impl RunFollow {
    async fn stored_after(&self, after: i64, limit: usize) -> Vec<tether_core::board::runs::StoredEvent> {
        let (t, id) = (Arc::clone(&self.tether), self.run.clone());
        tokio::task::spawn_blocking(move || t.board().run_events_after(&id, after, limit))
            .await
            .ok()
            .and_then(Result::ok)
            .unwrap_or_default()
    }

    fn batch(&mut self, events: &[tether_core::board::runs::StoredEvent]) -> Option<Event> {
        let end = events.last()?.seq;
        self.last = end;
        let items: Vec<String> = events.iter().filter_map(|e| serde_json::to_string(e).ok()).collect();
        Some(Event::default().event("events").id(end.to_string()).data(format!("[{}]", items.join(","))))
    }

    async fn next(&mut self) -> Option<Event> {
        use tokio::sync::broadcast::error::RecvError;
        loop {
            if self.catching_up {
                let page = self.stored_after(self.last, RUN_EVENTS_PAGE).await;
                if page.len() < RUN_EVENTS_PAGE {
                    self.catching_up = false;
                }
                if let Some(ev) = self.batch(&page) {
                    return Some(ev);
                }
                continue;
            }
            if let Some(st) = self.status.take() {
                return Event::default().event("status").json_data(json!({"run": self.run, "status": st})).ok();
            }
            let rx = self.live.as_mut()?;
            match rx.recv().await {
                Ok(tether_runs::RunUpdate::Events { run, events }) if run == self.run => {
                    let fresh: Vec<_> = events.into_iter().filter(|e| e.seq > self.last).collect();
                    let Some(first) = fresh.first().map(|e| e.seq) else { continue };
                    if first > self.last + 1 {
                        // Shown live before this subscriber came: the store has them (or will
                        // in a moment: the log is written right behind the live view).
                        let mut gap = self.stored_after(self.last, (first - self.last - 1) as usize).await;
                        gap.retain(|e| e.seq < first);
                        gap.extend(fresh);
                        return self.batch(&gap);
                    }
                    return self.batch(&fresh);
                }
                Ok(tether_runs::RunUpdate::Status { run, status }) if run == self.run => {
                    if status.is_terminal() {
                        // Whatever was stored before the end, then the end.
                        self.live = None;
                        self.catching_up = true;
                    }
                    self.status = Some(status);
                    if !status.is_terminal() {
                        continue;
                    }
                }
                Ok(_) => {}
                Err(RecvError::Lagged(n)) => {
                    self.catching_up = true;
                    return Event::default()
                        .event("lagged")
                        .json_data(json!({"run": self.run, "skipped_updates": n, "after": self.last}))
                        .ok();
                }
                Err(RecvError::Closed) => return None,
            }
        }
    }
}

async fn reindex(State(ctx): State<Ctx>) -> Response {
    if ctx.app.indexing.swap(true, std::sync::atomic::Ordering::SeqCst) {
        return error(StatusCode::CONFLICT, Some(json!("busy")), "indexing is already running");
    }
    let app = Arc::clone(&ctx.app);
    tokio::task::spawn_blocking(move || {
        if let Err(e) = app.index_reporting(tether_core::history::index::Depth::Deep, &|_| {}) {
            tracing::warn!(error = %e, "re-index failed");
        }
    });
    StatusCode::ACCEPTED.into_response()
}

async fn token_rotate(State(ctx): State<Ctx>) -> Response {
    let app = Arc::clone(&ctx.app);
    run(move || {
        app.rotate_token()?;
        Ok(json!({"rotated": true}))
    })
    .await
}

async fn settings(State(ctx): State<Ctx>) -> Response {
    let app = Arc::clone(&ctx.app);
    run(move || Ok(app.settings_view(app.tether.settings()?))).await
}

async fn settings_update(State(ctx): State<Ctx>, Json(p): Json<tether_core::settings::SettingsPatch>) -> Response {
    let app = Arc::clone(&ctx.app);
    run(move || {
        // This daemon moves to a newly saved port at once: refuse one it could not listen on.
        let moving = app.listening().filter(|r| matches!(r.from, "settings" | "default"));
        if let (Some(Some(port)), Some(now)) = (p.port, moving)
            && port != now.port
            && std::net::TcpListener::bind(("127.0.0.1", port)).is_err()
        {
            return Err(tether_core::Error::Invalid {
                what: "port",
                reason: format!("{port} is in use by another program"),
            });
        }
        let v = app.settings_view(app.tether.update_settings(&p)?);
        app.emit("settings", json!({}));
        Ok(v)
    })
    .await
}

#[derive(Deserialize)]
struct InitBody {
    project: PathBuf,
    #[serde(default)]
    dry_run: bool,
}

async fn init(State(ctx): State<Ctx>, Json(b): Json<InitBody>) -> Response {
    let t = Arc::clone(&ctx.app.tether);
    run(move || {
        let req =
            tether_core::init::Request { project: Some(b.project), port: crate::DEFAULT_PORT, ..Default::default() };
        let plan = tether_core::init::plan_request(&t.paths, &t.cursor(), &req)?;
        if !b.dry_run {
            plan.apply()?;
        }
        let changed: Vec<String> = plan.effective().map(|c| c.path.display().to_string()).collect();
        Ok(json!({"diff": plan.diff(), "changed": changed, "skipped": plan.skipped, "applied": !b.dry_run}))
    })
    .await
}

async fn events(State(ctx): State<Ctx>) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let rx = ctx.app.events.subscribe();
    let hello = Event::default().event("hello").json_data(json!({"version": env!("CARGO_PKG_VERSION")}));
    let first = futures_util::stream::iter(hello.ok().map(Ok));
    let rest = futures_util::stream::unfold(rx, |mut rx| async move {
        loop {
            match rx.recv().await {
                Ok(ev) => {
                    if let Ok(e) = Event::default().event(ev.name).json_data(ev.data) {
                        return Some((Ok(e), rx));
                    }
                }
                // A slow reader missed some: tell it to refetch everything.
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                    let e = Event::default().event("sessions").data("{\"ids\":[]}");
                    return Some((Ok(e), rx));
                }
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return None,
            }
        }
    });
    Sse::new(futures_util::StreamExt::chain(first, rest)).keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
}
