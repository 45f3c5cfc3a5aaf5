//! `/mcp`'s door: a malformed or foreign `Origin` is refused before the MCP server parses it,
//! then the bearer token; an authenticated request's session is tracked (its GET streams, the
//! 204 for a deleted session).

use axum::extract::{Request, State};
use axum::http::header;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::http::auth::{authenticated, bearer, loopback_origin};
use crate::state::Ctx;

/// `/mcp`: a malformed or foreign `Origin` is refused before the MCP server parses it, then the
/// bearer (constant time; a plain 401 without `WWW-Authenticate`, so Cursor does not start an
/// OAuth flow).
pub(crate) async fn mcp_door(State(ctx): State<Ctx>, req: Request, next: Next) -> Response {
    if let Some(origin) = req.headers().get(header::ORIGIN) {
        let ok = origin.to_str().is_ok_and(|o| o == "null" || loopback_origin(o));
        if !ok {
            return (axum::http::StatusCode::FORBIDDEN, "foreign or malformed Origin\n").into_response();
        }
    }
    if !ctx.token_matches(bearer(req.headers())) {
        return (axum::http::StatusCode::UNAUTHORIZED, "missing or wrong bearer token (see `tether token show`)\n")
            .into_response();
    }
    authenticated(super::track::track(&ctx, req, next).await)
}
