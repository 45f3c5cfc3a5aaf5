//! The route table, in one place, each GUI route with its request and answer types: the router
//! is built from it, docs/api.md is checked against it (`API_ROUTES`, `CALLBACK_ROUTES`), and
//! the GUI's client is generated from it ([`api_client`], `scripts/gen-types`). Each door's
//! guard wraps its group: the GUI's
//! API ([`super::auth::gui_door`]), the callbacks (their own credentials per route), `/mcp`
//! ([`crate::mcp::door::mcp_door`]), and the open few (`/health`, `/hook` with its token, the
//! login page, the GUI's files).

use std::sync::Arc;

use axum::Router;
use axum::middleware;
use axum::routing::{delete, get, patch, post, put};

use tether_core::doctor::DoctorReport;
use tether_core::insights::Insights;
use tether_core::model::agents::Agent;
use tether_core::model::runs::{Comment, NewComment, NewRun, Run, RunDetail};
use tether_core::model::sessions::ImportReport as UsageImported;
use tether_core::model::sessions::{SessionDetail, SessionSummary, TagCount};
use tether_core::model::shared::SharedChat;
use tether_core::model::signals::{NewSignal, Signal, SignalDetail};
use tether_core::model::tasks::ImportReport as TaskImportReport;
use tether_core::model::tasks::{NewTask, QueryResult, Task, TaskChange, TaskDetail};
use tether_core::model::trace::{TracedRepo, WrittenBy};
use tether_core::ops::agents::{AgentList, SetWake};
use tether_core::ops::changes::{MergeRequest, MergeResult, PrRequest, PrResult, RunDiff, SendComments};
use tether_core::ops::cloud::CloudDoctor;
use tether_core::ops::runs::{Followup, Options as RunOptions, RunList};
use tether_core::ops::sessions::{Found, ProjectList, RenameTag, SessionPage, Tag, TagList, TagRemoved};
use tether_core::ops::share::{Share, SharePreview, SharedList, Unshared};
use tether_core::ops::signals::{Reply, SignalList};
use tether_core::ops::system::{Install, InstallPlugin, Installed};
use tether_core::ops::tasks::BoardQuery;
use tether_core::ops::team::{Join, TeamStatus};
use tether_core::ops::trace::{Blame, BlameResult, Export, FileTouched, Publish};
use tether_core::ops::usage::{BudgetSet, ImportUsage, TaskBudget, UsageSummary};
use tether_core::ops::worktrees::WorktreesReport;
use tether_core::settings::{SettingsPatch, SettingsView};
use tether_core::usage::PriceTable;
use tether_core::usage::report::UsageReport;

use super::api::{agents, changes, runs, sessions, settings, signals, system, tasks, team, trace, usage};
use super::contract::{self, Accepted, Download, EventStream, JsonOrFile};
use super::{auth, callback, error, hook, sse, statics};
use crate::Server;
use crate::state::Ctx;

/// The callback routes: each takes its own credentials and shapes, so only their paths are
/// declared (the docs check reads them).
macro_rules! paths {
    (
        $(#[$doc:meta])* $table:ident, $router:ident, $prefix:literal:
        $($method:ident $path:literal => $handler:expr),* $(,)?
    ) => {
        $(#[$doc])*
        pub const $table: &[(&str, &str)] = &[$((stringify!($method), concat!($prefix, $path))),*];

        fn $router() -> Router<Ctx> {
            Router::new()$(.route($path, $method($handler)))*
        }
    };
}

/// A type of the table as TypeScript: a ts-rs type, or one the GUI keeps by hand (`as "Name"`,
/// from `../types` unless `in "file"` says; `in ""` for a marker of the table or a literal type).
macro_rules! ts {
    ($t:ty) => {
        contract::TsType::of::<$t>()
    };
    ($t:ty, $name:literal) => {
        ts!($t, $name, "../types")
    };
    ($t:ty, $name:literal, $from:literal) => {{
        let _declared = std::marker::PhantomData::<$t>;
        contract::TsType::named($name, $from)
    }};
}

/// The GUI's routes, each once with its types: `method "path" query(Q) body(B) fill(field) ->
/// Answer => handler`. The router is built from it (each handler checked to answer its declared
/// type), the docs check reads its paths, and the GUI's client (`ui/src/gen/api.ts`) is
/// generated from its types: a route is one line here and one handler that maps it onto an op.
macro_rules! typed {
    (
        $(#[$doc:meta])* $table:ident, $router:ident, $client:ident, $prefix:literal:
        $(
            $method:ident $path:literal
            $(query($q:ty $(as $qts:literal $(in $qfrom:literal)?)?))?
            $(body($b:ty $(as $bts:literal $(in $bfrom:literal)?)?))?
            $(fill($fill:ident))?
            -> $answer:ty $(as $ats:literal $(in $afrom:literal)?)?
            => $handler:path
        ),* $(,)?
    ) => {
        $(#[$doc])*
        pub const $table: &[(&str, &str)] = &[$((stringify!($method), concat!($prefix, $path))),*];

        fn $router() -> Router<Ctx> {
            Router::new()$(.route($path, $method(contract::answering::<$answer, _, _>($handler))))*
        }

        /// The table as the GUI's client sees it.
        pub fn $client() -> Vec<contract::Route> {
            vec![$(contract::Route {
                method: stringify!($method),
                path: concat!($prefix, $path),
                handler: stringify!($handler),
                query: None$(.or(Some(ts!($q $(, $qts $(, $qfrom)?)?))))?,
                body: None$(.or(Some(ts!($b $(, $bts $(, $bfrom)?)?))))?,
                fill: None$(.or(Some(stringify!($fill))))?,
                answer: ts!($answer $(, $ats $(, $afrom)?)?),
            }),*]
        }
    };
}

typed! {
    /// Every route of the GUI's API as (method, path), for the docs check (paths as served,
    /// under `/api`).
    API_ROUTES, api, api_client, "/api":
    get "/status" -> system::StatusReport => system::status,
    post "/login-code" -> system::LoginCode => system::login_code,
    get "/sessions" query(sessions::ListParams) -> SessionPage => sessions::list,
    get "/search" query(sessions::SearchParams) -> Found => sessions::search,
    get "/sessions/{id}" query(sessions::ShowParams) -> SessionDetail as "SessionDetail" => sessions::show,
    patch "/sessions/{id}" body(Tag) -> SessionSummary => sessions::tag,
    get "/sessions/{id}/export" query(sessions::ExportParams) -> Download as "Download" in "" => sessions::export,
    get "/sessions/{id}/files" -> Vec<FileTouched> => trace::files,
    get "/projects" -> ProjectList => sessions::projects,
    get "/tags" -> TagList => sessions::tags,
    post "/tags/rename" body(RenameTag) -> TagCount => sessions::rename_tag,
    delete "/tags/{tag}" -> TagRemoved => sessions::delete_tag,
    get "/tasks" query(BoardQuery as "TaskQuery" in "./board") -> QueryResult => tasks::list,
    post "/tasks" body(NewTask) -> Task => tasks::create,
    get "/tasks/{id}" -> TaskDetail => tasks::get,
    patch "/tasks/{id}" body(TaskChange) -> Task => tasks::update,
    post "/tasks/{id}/claim" -> Task => tasks::claim,
    put "/tasks/{id}/budget" body(TaskBudget) fill(task) -> BudgetSet => usage::task_budget,
    get "/agents" -> AgentList => agents::list,
    patch "/agents/{id}" body(SetWake) fill(agent) -> Agent => agents::update,
    get "/runs" query(runs::ListParams) -> RunList => runs::list,
    post "/runs" body(NewRun) -> Run => runs::start,
    get "/runs/options" -> RunOptions => runs::options,
    get "/runs/{id}" query(runs::GetParams) -> RunDetail => runs::get,
    get "/runs/{id}/events" query(sse::RunEventsParams) -> EventStream as "EventStream" in "" => sse::run_events,
    post "/runs/{id}/cancel" -> Run => runs::cancel,
    post "/runs/{id}/approve" -> Run => runs::approve,
    post "/runs/{id}/followup" body(Followup) fill(run) -> Run => runs::followup,
    get "/runs/{id}/diff" query(changes::DiffParams) -> RunDiff => changes::diff,
    post "/runs/{id}/comments" body(NewComment) -> Comment => changes::comment,
    post "/runs/{id}/comments/send" body(SendComments) fill(run) -> Run => changes::send_comments,
    post "/runs/{id}/merge" body(MergeRequest) fill(run) -> MergeResult => changes::merge,
    post "/runs/{id}/pr" body(PrRequest) fill(run) -> PrResult => changes::pr,
    post "/runs/{id}/discard" -> Run => changes::discard,
    get "/worktrees" -> WorktreesReport => changes::worktrees,
    get "/cloud/doctor" -> CloudDoctor => runs::cloud_doctor,
    get "/insights" query(system::InsightsParams) -> Insights as "Insights" in "../insights" => system::insights,
    get "/usage" query(usage::ReportParams) -> JsonOrFile<UsageReport> as "UsageReport" in "./core" => usage::report,
    get "/usage/summary" -> UsageSummary => usage::summary,
    get "/usage/prices" -> PriceTable => usage::prices,
    post "/usage/import" body(ImportUsage) -> UsageImported => usage::import,
    get "/blame" query(Blame) -> BlameResult => trace::blame,
    get "/trace/repos" -> Vec<TracedRepo> => trace::repos,
    put "/trace/repos" body(Publish) -> TracedRepo => trace::publish,
    get "/trace/export" query(Export) -> Download as "Download" in "" => trace::export,
    get "/trace/written" query(trace::WrittenParams) -> Vec<WrittenBy> => trace::written,
    get "/signals" query(signals::ListParams) -> SignalList => signals::list,
    post "/signals" body(NewSignal) -> Signal => signals::send,
    post "/signals/drain" -> SignalList => signals::drain,
    get "/signals/{id}" -> SignalDetail => signals::get,
    post "/signals/{id}/reply" body(Reply) -> Signal => signals::reply,
    get "/doctor" -> DoctorReport => system::doctor,
    get "/team" -> TeamStatus => team::status,
    post "/team/join" body(Join as "{ url: string; machine?: string; password?: string; client_cert?: string; client_key?: string }" in "") -> TeamStatus => team::join,
    post "/team/leave" -> TeamStatus => team::leave,
    post "/team/import-local" -> TaskImportReport => team::import_local,
    get "/sessions/{id}/share" -> SharePreview => team::share_preview,
    post "/sessions/{id}/share" body(Share) fill(session) -> SharedChat => team::share,
    get "/shared" query(team::SharedParams) -> SharedList => team::shared,
    get "/shared/{id}" -> SharedChat => team::shared_chat,
    delete "/shared/{id}" -> Unshared => team::unshare,
    post "/index" -> Accepted as "Accepted" in "" => system::reindex,
    post "/token/rotate" -> system::Rotated => system::rotate_token,
    post "/init" body(Install) -> Installed => system::install,
    post "/init/plugin" body(InstallPlugin) -> Installed => system::install_plugin,
    get "/settings" -> SettingsView => settings::get,
    patch "/settings" body(SettingsPatch as "SettingsPatch") -> SettingsView => settings::update,
    get "/events" -> EventStream as "EventStream" in "" => sse::events,
}

paths! {
    /// The routes cloud agents and Cursor's servers reach through a public URL, as (method, path).
    CALLBACK_ROUTES, callback_routes, "":
    post "/webhooks/cursor" => callback::webhook,
    post "/api/agent-auth/exchange" => callback::exchange,
    get "/api/agent/task" => callback::task,
    patch "/api/agent/task" => callback::task_update,
    post "/api/agent/signals" => callback::signal,
    get "/api/skills/index" => callback::skills,
    get "/api/skills/{name}" => callback::skill,
}

fn callbacks() -> Router<Ctx> {
    callback_routes()
        .route_layer(middleware::map_response(callback::trusted_on_success))
        .layer(middleware::map_response(error::json_rejections))
}

/// A path under `/api` that names no route (without it the GUI's file service would answer an
/// empty 404).
async fn no_route() -> error::ApiError {
    error::ApiError::not_found("no such route")
}

/// Everything served on the port: `mcp` is the MCP service, mounted at `/mcp` behind its door.
pub(crate) fn router(server: Arc<Server>, mcp: Router) -> Router {
    let ctx: Ctx = server;
    let gui = Router::new()
        .nest("/api", api().fallback(no_route).layer(middleware::from_fn_with_state(Arc::clone(&ctx), auth::gui_door)))
        .layer(middleware::map_response(error::json_rejections))
        .route("/login", get(statics::login));
    let gui = match tether_core::paths::ui_dir() {
        Some(dir) => gui.fallback_service(tower_http::services::ServeDir::new(dir)),
        None => gui.route("/", get(statics::no_ui)),
    };
    let gui = gui.layer(middleware::from_fn(auth::same_site_only));
    Router::new()
        .nest_service("/mcp", mcp.layer(middleware::from_fn_with_state(Arc::clone(&ctx), crate::mcp::door::mcp_door)))
        .route("/health", get(system::health))
        .route("/hook", post(hook::hook))
        .merge(callbacks())
        .merge(gui)
        .layer(middleware::from_fn(statics::no_overlong_paths))
        .with_state(ctx)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The GUI's client, written where ts-rs writes the types it imports (`scripts/gen-types`
    /// runs it with them: it is named like theirs).
    #[test]
    fn export_bindings_api_client() {
        let dir = std::env::var("TS_RS_EXPORT_DIR").unwrap_or_else(|_| "bindings".into());
        std::fs::create_dir_all(&dir).expect("the export folder");
        std::fs::write(std::path::Path::new(&dir).join("api.ts"), contract::client_ts(&api_client()))
            .expect("api.ts written");
    }
}
