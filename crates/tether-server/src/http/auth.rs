//! Who may come in, decided in one place per door: the MCP bearer token (`/mcp`, and scripts on
//! `/api`), the GUI's login (a one-time code from `tether open` turned into an HttpOnly cookie),
//! the mutating-request header a cross-site page cannot send, loopback Host and Origin names (DNS
//! rebinding and foreign pages end here), the hook token (`/hook`), and a cloud run's scoped
//! bearer (the callbacks). A request that proves a credential marks its connection trusted (see
//! [`super::conn`]).

use axum::extract::{FromRequestParts, Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, Method, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use tether_core::model::principal::Principal;
use tether_core::model::runs::Run;

use super::conn::Authenticated;
use super::error::ApiError;
use crate::state::Ctx;

/// The cookie `tether open`'s link sets.
pub(crate) const COOKIE: &str = "tether_ui";

/// Marks a response as answering a proven credential.
pub(crate) fn authenticated(mut res: Response) -> Response {
    res.extensions_mut().insert(Authenticated);
    res
}

/// The bearer of `Authorization: Bearer …`, or "".
pub(crate) fn bearer(h: &HeaderMap) -> &str {
    h.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()).and_then(|v| v.strip_prefix("Bearer ")).unwrap_or("")
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

/// Whether `host` (a Host header's value, or an origin's authority) names this machine: a
/// loopback address or `localhost`, with at most a numeric port.
fn loopback_authority(host: &str) -> bool {
    let (name, port) = match host.strip_prefix('[') {
        Some(v6) => match v6.split_once(']') {
            Some((ip, rest)) => (ip, rest.strip_prefix(':')),
            None => return false,
        },
        None => match host.rsplit_once(':') {
            Some((n, p)) => (n, Some(p)),
            None => (host, None),
        },
    };
    if port.is_some_and(|p| p.is_empty() || !p.chars().all(|c| c.is_ascii_digit()) || p.len() > 5) {
        return false;
    }
    name.eq_ignore_ascii_case("localhost") || name.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// An `Origin` a page of this machine sends: `http(s)://` and a loopback authority, nothing more.
/// Anything else (`http://127.0.0.1:80.evil.example.com`, a path, userinfo) is foreign.
pub(crate) fn loopback_origin(origin: &str) -> bool {
    let rest = origin.strip_prefix("http://").or_else(|| origin.strip_prefix("https://"));
    rest.is_some_and(|a| !a.contains(['/', '@', '?', '#']) && loopback_authority(a))
}

/// A browser page may only reach the GUI's routes from our own origin (or the desktop app's
/// webview), and only through a loopback host name.
pub(crate) async fn same_site_only(req: Request, next: Next) -> Response {
    let host = req.headers().get(header::HOST).and_then(|v| v.to_str().ok()).unwrap_or("");
    if !loopback_authority(host) {
        return ApiError::forbidden("this server only answers on a loopback address").into_response();
    }
    if let Some(origin) = req.headers().get(header::ORIGIN).and_then(|v| v.to_str().ok()) {
        let ours =
            origin == format!("http://{host}") || origin == "tauri://localhost" || origin == "http://tauri.localhost";
        if !ours {
            return ApiError::forbidden("cross-origin requests are refused").into_response();
        }
    }
    next.run(req).await
}

/// The GUI's API: the bearer token or the login cookie; requests that change something also
/// need `X-Tether: 1`, which a cross-site form or simple request cannot send. Minting a login
/// code is for token holders (`tether open`) only.
pub(crate) async fn gui_door(State(ctx): State<Ctx>, req: Request, next: Next) -> Response {
    let h = req.headers();
    let by_token = ctx.token_matches(bearer(h));
    let by_cookie = cookie(h, COOKIE).is_some_and(|c| ctx.ui.cookie_ok(c));
    let allowed = if req.uri().path().ends_with("/login-code") { by_token } else { by_token || by_cookie };
    if !allowed {
        return ApiError::unauthorized("not logged in: run `tether open` for a login link").into_response();
    }
    if req.method() != Method::GET && h.get("x-tether").and_then(|v| v.to_str().ok()) != Some("1") {
        return ApiError::forbidden("send the header `X-Tether: 1` with requests that change things").into_response();
    }
    authenticated(next.run(req).await)
}

/// The person, as the GUI (and a token holder's script) speaks for them.
pub struct Person(pub Principal);

impl<S: Send + Sync> FromRequestParts<S> for Person {
    type Rejection = std::convert::Infallible;
    async fn from_request_parts(_: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(Person(Principal::person(&tether_core::Tether::person())))
    }
}

/// A cloud run speaking through its scoped bearer (from the bootstrap exchange): it acts as its
/// run's agent, from outside this machine.
pub struct RunBearer {
    pub run: Run,
    pub who: Principal,
}

impl FromRequestParts<Ctx> for RunBearer {
    type Rejection = Response;
    async fn from_request_parts(parts: &mut Parts, ctx: &Ctx) -> Result<Self, Self::Rejection> {
        callbacks_on(ctx).map_err(IntoResponse::into_response)?;
        let token = bearer(&parts.headers).to_owned();
        let run = super::error::run(ctx, move |t| t.board().cloud().bearer_run(&token))
            .await
            .map_err(IntoResponse::into_response)?
            .ok_or_else(|| {
                ApiError::new(
                    axum::http::StatusCode::UNAUTHORIZED,
                    "invalid_token",
                    "a run's bearer from the exchange is needed",
                )
                .into_response()
            })?;
        let who = Principal::run(tether_core::model::ids::RunId::new(run.root), run.workspace.as_deref(), true);
        Ok(RunBearer { run, who })
    }
}

/// Callbacks exist only while the person has set a public URL: the answer when they do not.
pub(crate) fn callbacks_on(ctx: &Ctx) -> Result<(), ApiError> {
    match ctx.tether.settings().ok().and_then(|s| s.cloud.public_url) {
        Some(_) => Ok(()),
        None => Err(ApiError::not_found(
            "cloud callbacks are off (no public URL: `tether cloud webhook --public-url https://…`)",
        )),
    }
}

/// The hook token, checked before a byte of the body is read (a caller without it costs nothing).
pub(crate) fn hook_token_ok(ctx: &Ctx, h: &HeaderMap) -> bool {
    tether_core::token::matches(&ctx.hook_token, bearer(h))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_names_and_well_formed_origins_pass() {
        for ok in ["127.0.0.1:47821", "localhost", "LOCALHOST:1", "[::1]:80", "127.0.0.2", "[::1]"] {
            assert!(loopback_authority(ok), "{ok}");
        }
        for bad in
            ["evil.com", "127.0.0.1:80.evil.example.com", "127.0.0.1:", "[::1", "10.0.0.1:80", "localhost:99999a"]
        {
            assert!(!loopback_authority(bad), "{bad}");
        }
        assert!(loopback_origin("http://127.0.0.1:47821") && loopback_origin("https://localhost"));
        for bad in [
            "http://127.0.0.1:47821.evil.example.com",
            "http://127.0.0.1:47821/path",
            "http://user@127.0.0.1",
            "ftp://127.0.0.1",
            "http://evil.com",
        ] {
            assert!(!loopback_origin(bad), "{bad}");
        }
    }
}
