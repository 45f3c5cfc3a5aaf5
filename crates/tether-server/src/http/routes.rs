//! The route table, in one place: the router is built from it and docs/api.md is checked
//! against it (`ROUTES`). Each door's guard wraps its group: the GUI's API ([`super::auth::gui_door`]),
//! the callbacks (their own credentials per route), `/mcp` ([`super::auth::mcp_door`]), and the
//! open few (`/health`, `/hook` with its token, the login page, the GUI's files).

use std::sync::Arc;

use axum::Router;
use axum::middleware;
use axum::routing::{delete, get, patch, post};

use super::api::{agents, runs, sessions, settings, signals, system, tasks};
use super::{auth, callback, error, hook, sse, statics};
use crate::Server;
use crate::state::Ctx;

macro_rules! table {
    ($($method:ident $path:literal => $handler:expr),* $(,)?) => {
        /// Every route of the GUI's API as (method, path), for the docs check.
        pub const API_ROUTES: &[(&str, &str)] = &[$((stringify!($method), concat!("/api", $path))),*];

        fn api() -> Router<Ctx> {
            Router::new()$(.route($path, $method($handler)))*
        }
    };
}

table! {
    get "/status" => system::status,
    post "/login-code" => system::login_code,
    get "/sessions" => sessions::list,
    get "/search" => sessions::search,
    get "/sessions/{id}" => sessions::show,
    patch "/sessions/{id}" => sessions::tag,
    get "/sessions/{id}/export" => sessions::export,
    get "/projects" => sessions::projects,
    get "/tags" => sessions::tags,
    post "/tags/rename" => sessions::rename_tag,
    delete "/tags/{tag}" => sessions::delete_tag,
    get "/tasks" => tasks::list,
    post "/tasks" => tasks::create,
    get "/tasks/{id}" => tasks::get,
    patch "/tasks/{id}" => tasks::update,
    post "/tasks/{id}/claim" => tasks::claim,
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
    get "/cloud/doctor" => runs::cloud_doctor,
    get "/insights" => system::insights,
    get "/signals" => signals::list,
    post "/signals" => signals::send,
    post "/signals/drain" => signals::drain,
    get "/signals/{id}" => signals::get,
    post "/signals/{id}/reply" => signals::reply,
    get "/doctor" => system::doctor,
    post "/index" => system::reindex,
    post "/token/rotate" => system::rotate_token,
    post "/init" => system::install,
    get "/settings" => settings::get,
    patch "/settings" => settings::update,
    get "/events" => sse::events,
}

/// The routes cloud agents and Cursor's servers reach through a public URL.
pub const CALLBACK_ROUTES: &[(&str, &str)] = &[
    ("post", "/webhooks/cursor"),
    ("post", "/api/agent-auth/exchange"),
    ("get", "/api/agent/task"),
    ("patch", "/api/agent/task"),
    ("post", "/api/agent/signals"),
    ("get", "/api/skills/index"),
    ("get", "/api/skills/{name}"),
];

fn callbacks() -> Router<Ctx> {
    Router::new()
        .route("/webhooks/cursor", post(callback::webhook))
        .route("/api/agent-auth/exchange", post(callback::exchange))
        .route("/api/agent/task", get(callback::task).patch(callback::task_update))
        .route("/api/agent/signals", post(callback::signal))
        .route("/api/skills/index", get(callback::skills))
        .route("/api/skills/{name}", get(callback::skill))
        .route_layer(middleware::map_response(callback::trusted_on_success))
        .layer(middleware::map_response(error::json_rejections))
}

/// Everything served on the port: `mcp` is the MCP service, mounted at `/mcp` behind its door.
pub(crate) fn router(server: Arc<Server>, mcp: Router) -> Router {
    let ctx: Ctx = server;
    let gui = Router::new()
        .nest("/api", api().layer(middleware::from_fn_with_state(Arc::clone(&ctx), auth::gui_door)))
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
