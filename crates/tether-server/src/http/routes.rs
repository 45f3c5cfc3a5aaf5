//! The route table, in one place: the router is built from it and docs/api.md is checked
//! against it (`API_ROUTES`, `CALLBACK_ROUTES`). Each door's guard wraps its group: the GUI's
//! API ([`super::auth::gui_door`]), the callbacks (their own credentials per route), `/mcp`
//! ([`crate::mcp::door::mcp_door`]), and the open few (`/health`, `/hook` with its token, the
//! login page, the GUI's files).

use std::sync::Arc;

use axum::Router;
use axum::middleware;
use axum::routing::{delete, get, patch, post, put};

use super::api::{agents, changes, runs, sessions, settings, signals, system, tasks, team, trace, usage};
use super::{auth, callback, error, hook, sse, statics};
use crate::Server;
use crate::state::Ctx;

macro_rules! table {
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

table! {
    /// Every route of the GUI's API as (method, path), for the docs check (paths as served,
    /// under `/api`).
    API_ROUTES, api, "/api":
    get "/status" => system::status,
    post "/login-code" => system::login_code,
    get "/sessions" => sessions::list,
    get "/search" => sessions::search,
    get "/sessions/{id}" => sessions::show,
    patch "/sessions/{id}" => sessions::tag,
    get "/sessions/{id}/export" => sessions::export,
    get "/sessions/{id}/files" => trace::files,
    get "/projects" => sessions::projects,
    get "/tags" => sessions::tags,
    post "/tags/rename" => sessions::rename_tag,
    delete "/tags/{tag}" => sessions::delete_tag,
    get "/tasks" => tasks::list,
    post "/tasks" => tasks::create,
    get "/tasks/{id}" => tasks::get,
    patch "/tasks/{id}" => tasks::update,
    post "/tasks/{id}/claim" => tasks::claim,
    put "/tasks/{id}/budget" => usage::task_budget,
    get "/agents" => agents::list,
    patch "/agents/{id}" => agents::update,
    get "/runs" => runs::list,
    post "/runs" => runs::start,
    get "/runs/options" => runs::options,
    get "/runs/{id}" => runs::get,
    get "/runs/{id}/events" => sse::run_events,
    post "/runs/{id}/cancel" => runs::cancel,
    post "/runs/{id}/approve" => runs::approve,
    post "/runs/{id}/followup" => runs::followup,
    get "/runs/{id}/diff" => changes::diff,
    post "/runs/{id}/comments" => changes::comment,
    post "/runs/{id}/comments/send" => changes::send_comments,
    post "/runs/{id}/merge" => changes::merge,
    post "/runs/{id}/pr" => changes::pr,
    post "/runs/{id}/discard" => changes::discard,
    get "/worktrees" => changes::worktrees,
    get "/cloud/doctor" => runs::cloud_doctor,
    get "/insights" => system::insights,
    get "/usage" => usage::report,
    get "/usage/summary" => usage::summary,
    get "/usage/prices" => usage::prices,
    post "/usage/import" => usage::import,
    get "/blame" => trace::blame,
    get "/trace/repos" => trace::repos,
    put "/trace/repos" => trace::publish,
    get "/trace/export" => trace::export,
    get "/trace/written" => trace::written,
    get "/signals" => signals::list,
    post "/signals" => signals::send,
    post "/signals/drain" => signals::drain,
    get "/signals/{id}" => signals::get,
    post "/signals/{id}/reply" => signals::reply,
    get "/doctor" => system::doctor,
    get "/team" => team::status,
    post "/team/join" => team::join,
    post "/team/leave" => team::leave,
    post "/team/import-local" => team::import_local,
    get "/sessions/{id}/share" => team::share_preview,
    post "/sessions/{id}/share" => team::share,
    get "/shared" => team::shared,
    get "/shared/{id}" => team::shared_chat,
    delete "/shared/{id}" => team::unshare,
    post "/index" => system::reindex,
    post "/token/rotate" => system::rotate_token,
    post "/init" => system::install,
    post "/init/plugin" => system::install_plugin,
    get "/settings" => settings::get,
    patch "/settings" => settings::update,
    get "/events" => sse::events,
}

table! {
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
