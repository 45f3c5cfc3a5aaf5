//! Errors on MCP, mapped once: a failure of the work goes back as a tool result with `isError`
//! and `{code, message}` (the model reads it; `code` is there when a caller can branch on it);
//! JSON-RPC errors are for malformed requests, which rmcp reports itself. And the one way tools
//! run blocking engine work.

use std::sync::Arc;

use rmcp::ErrorData;
use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::json;
use tether_core::Tether;

pub(crate) fn engine(e: tether_core::Error) -> ErrorData {
    let data = Some(json!({"code": e.code().as_str()}));
    match e.code() {
        tether_core::ErrorCode::Internal => ErrorData::internal_error(e.to_string(), data),
        _ => ErrorData::invalid_params(e.to_string(), data),
    }
}

/// A tool's outcome as the model reads it: the result, or its failure as an `isError` result.
pub(crate) fn as_tool_result(r: Result<CallToolResult, ErrorData>) -> Result<CallToolResult, ErrorData> {
    Ok(r.unwrap_or_else(|e| {
        let code = e.data.as_ref().and_then(|d| d.get("code")).filter(|c| c.as_str() != Some("internal"));
        let body = match code {
            Some(c) => json!({"code": c, "message": e.message}),
            None => json!({"message": e.message}),
        };
        CallToolResult::error(vec![ContentBlock::text(body.to_string())])
    }))
}

pub(crate) fn json_result(v: &impl serde::Serialize) -> Result<CallToolResult, ErrorData> {
    let text = serde_json::to_string(v).map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
    Ok(CallToolResult::success(vec![ContentBlock::text(text)]))
}

/// Runs engine work off the async executor.
pub(crate) async fn blocking<T: Send + 'static>(
    t: &Arc<Tether>,
    f: impl FnOnce(&Tether) -> tether_core::Result<T> + Send + 'static,
) -> Result<T, ErrorData> {
    let t = Arc::clone(t);
    tokio::task::spawn_blocking(move || f(&t))
        .await
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?
        .map_err(engine)
}

/// A failed result whose text is not ours (rmcp's own words for arguments that do not parse)
/// gets our shape: `{code: "invalid_input", message}`.
pub(crate) fn coded(r: &mut CallToolResult) {
    let Some(first) = r.content.first() else { return };
    let Some(text) = first.as_text().map(|t| t.text.clone()) else { return };
    if serde_json::from_str::<serde_json::Value>(&text).is_ok_and(|v| v.get("message").is_some()) {
        return;
    }
    let message = text.strip_prefix("failed to deserialize parameters: ").unwrap_or(&text);
    r.content[0] = ContentBlock::text(json!({"code": "invalid_input", "message": message}).to_string());
}
