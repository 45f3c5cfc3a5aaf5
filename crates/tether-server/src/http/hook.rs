//! `/hook`: what `tether hook` forwards from Cursor's hooks (the hook token only opens this
//! door). A `beforeMCPExecution` for one of our tools also tells the MCP server which chat the
//! coming call is from; a `stop` may answer with the follow-up message that makes the chat read
//! its signals; an `afterFileEdit` / `afterTabFileEdit` carries the edit's trace (code origin),
//! recorded once Cursor has its answer, by one thread behind a bounded queue (`crate::edits`).

use axum::Json;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;
use tether_core::model::agents::HookEvent;
use tether_core::ops;

use super::auth::{authenticated, hook_token_ok};
use super::error::{ApiError, run};
use crate::state::Ctx;

/// A hook payload is a small JSON object; `tether hook` itself reads at most 1 MiB of stdin and
/// sends ranges, not whole edits.
const MAX_HOOK_BODY: usize = 1 << 20;

pub(crate) async fn hook(State(ctx): State<Ctx>, req: Request) -> Response {
    if !hook_token_ok(&ctx, req.headers()) {
        return (StatusCode::UNAUTHORIZED, "missing or wrong hook token\n").into_response();
    }
    authenticated(match event(&ctx, req).await {
        Ok(None) => StatusCode::NO_CONTENT.into_response(),
        Ok(Some(followup)) => Json(json!({"followup_message": followup})).into_response(),
        Err(e) => e.into_response(),
    })
}

async fn event(ctx: &Ctx, req: Request) -> Result<Option<String>, ApiError> {
    let body = axum::body::to_bytes(req.into_body(), MAX_HOOK_BODY)
        .await
        .map_err(|_| ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, "invalid_input", "hook payload over 1 MiB"))?;
    // An object only: serde would also take an array as the fields in order.
    let ev: HookEvent = match serde_json::from_slice(&body) {
        Ok(v @ serde_json::Value::Object(_)) => serde_json::from_value(v),
        Ok(_) => return Err(ApiError::invalid("hook payload is not a JSON object")),
        Err(e) => Err(e),
    }
    .map_err(|e| ApiError::invalid(format!("hook payload is not the expected JSON: {e}")))?;
    ctx.mcp.caller.announced(&ev);
    if ev.trace.is_some() {
        // An edit (or a part of a big one) is recorded after Cursor has its answer: an edit hook
        // gates nothing, and its parts must not queue behind each other's writes.
        ctx.edits.push(ev);
        return Ok(None);
    }
    run(ctx, move |t| ops::agents::hook(t, &ev)).await
}
