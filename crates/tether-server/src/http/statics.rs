//! The built GUI's files (`ui/dist`), the login link's landing page, and what a browser sees when
//! the GUI is not installed.

use axum::extract::{Query, Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Redirect, Response};
use serde::Deserialize;

use super::auth::COOKIE;
use super::error::ApiError;
use super::login::COOKIE_TTL;
use crate::state::Ctx;

/// A path longer than a URL should be, or a segment longer than any file name can be, names
/// nothing of ours: a clear 414 or 404 instead of the file service's failure.
pub(crate) async fn no_overlong_paths(req: Request, next: Next) -> Response {
    let path = req.uri().path();
    if path.len() > 4096 {
        return ApiError::new(StatusCode::URI_TOO_LONG, "invalid_input", "the path is longer than 4 KiB")
            .into_response();
    }
    if path.split('/').any(|seg| seg.len() > 255) {
        return ApiError::not_found("no such page").into_response();
    }
    next.run(req).await
}

pub(crate) async fn no_ui() -> Response {
    (
        StatusCode::NOT_FOUND,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        "Tether's GUI is not there. In a source checkout run `scripts/setup` (it builds ui/dist); the .deb installs it \
         in /usr/share/tether/ui (reinstall the package); or point TETHER_UI_DIR at a built GUI.\n",
    )
        .into_response()
}

#[derive(Deserialize)]
pub(crate) struct LoginQuery {
    code: String,
}

/// `tether open`'s link: spends the one-time code, sets the cookie, goes to the GUI.
pub(crate) async fn login(State(ctx): State<Ctx>, Query(q): Query<LoginQuery>) -> Response {
    match ctx.ui.redeem(&q.code) {
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
