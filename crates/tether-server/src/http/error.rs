//! Errors on HTTP, mapped once: every error answer is `{code, message}` with the status a caller
//! expects (docs/api.md), whatever produced it — an operation, axum's own rejections of a
//! malformed body or query, a wrong method, a path that names nothing. And the one way handlers
//! run blocking engine work.

use axum::Json;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde_json::json;
use tether_core::{Error, ErrorCode, Tether};

use crate::state::Ctx;

/// An error answer: `{code, message}`.
#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
}

impl ApiError {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        Self { status, code, message: message.into() }
    }

    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "invalid_input", message)
    }

    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, "not_found", message)
    }

    pub fn unauthorized(message: impl Into<String>) -> Self {
        Self::new(StatusCode::UNAUTHORIZED, "unauthorized", message)
    }

    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::new(StatusCode::FORBIDDEN, "forbidden", message)
    }
}

/// The code and status each engine error kind answers with.
pub fn status_of(code: ErrorCode) -> (StatusCode, &'static str) {
    let status = match code {
        ErrorCode::NotFound => StatusCode::NOT_FOUND,
        ErrorCode::InvalidInput => StatusCode::BAD_REQUEST,
        ErrorCode::Forbidden => StatusCode::FORBIDDEN,
        ErrorCode::Busy => StatusCode::SERVICE_UNAVAILABLE,
        ErrorCode::Internal => StatusCode::INTERNAL_SERVER_ERROR,
        _ => StatusCode::CONFLICT,
    };
    (status, code.as_str())
}

impl From<Error> for ApiError {
    fn from(e: Error) -> Self {
        let (status, code) = status_of(e.code());
        Self { status, code, message: e.to_string() }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status, Json(json!({"code": self.code, "message": self.message}))).into_response()
    }
}

pub type ApiResult<T> = Result<Json<T>, ApiError>;

/// Runs engine work off the async threads; its result as JSON, or its error.
pub async fn blocking<T: Serialize + Send + 'static>(
    ctx: &Ctx,
    f: impl FnOnce(&Tether) -> tether_core::Result<T> + Send + 'static,
) -> ApiResult<T> {
    run(ctx, f).await.map(Json)
}

/// [`blocking`] for a value that is not the answer itself.
pub async fn run<T: Send + 'static>(
    ctx: &Ctx,
    f: impl FnOnce(&Tether) -> tether_core::Result<T> + Send + 'static,
) -> Result<T, ApiError> {
    let t = std::sync::Arc::clone(&ctx.tether);
    match tokio::task::spawn_blocking(move || f(&t)).await {
        Ok(r) => r.map_err(ApiError::from),
        Err(e) => Err(ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", e.to_string())),
    }
}

/// axum answers a malformed query or body in plain text, a wrong method with an empty body and
/// an unknown path under `/api` with nothing: here they become `{code, message}` too.
pub async fn json_rejections(res: Response) -> Response {
    let status = res.status();
    if !(status.is_client_error() || status.is_server_error()) {
        return res;
    }
    let is_json =
        res.headers().get(header::CONTENT_TYPE).is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
    if is_json {
        return res;
    }
    let allow = res.headers().get(header::ALLOW).cloned();
    let body = axum::body::to_bytes(res.into_body(), 64 * 1024).await.unwrap_or_default();
    let text = String::from_utf8_lossy(&body).trim().to_owned();
    let mut r = match status {
        StatusCode::METHOD_NOT_ALLOWED => {
            ApiError::new(status, "invalid_input", "this route does not take that method").into_response()
        }
        StatusCode::NOT_FOUND => {
            ApiError::not_found(if text.is_empty() { "no such route".into() } else { text }).into_response()
        }
        s if s.is_client_error() => ApiError::new(s, "invalid_input", text).into_response(),
        s => ApiError::new(s, "internal", if text.is_empty() { "the server failed".into() } else { text })
            .into_response(),
    };
    if let Some(a) = allow {
        r.headers_mut().insert(header::ALLOW, a);
    }
    r
}
