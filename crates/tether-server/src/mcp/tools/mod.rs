//! The MCP tools, by area, each a `#[tool_router]` of its own (merged in [`super::TetherMcp`]).
//! A tool resolves its caller ([`super::caller`]), maps its arguments onto one operation, and
//! answers with the result and, when signals wait for the caller, the piggyback notice.

mod board;
mod runs;
mod sessions;

use rmcp::model::{CallToolResult, ContentBlock};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde_json::json;
use tether_core::ops;

use super::caller::{Caller, session_of};
use super::error::{as_tool_result, blocking};
use super::server::TetherMcp;

impl TetherMcp {
    pub(crate) fn tools() -> rmcp::handler::server::router::tool::ToolRouter<Self> {
        Self::sessions_tools() + Self::board_tools() + Self::runs_tools()
    }

    pub(crate) fn caller(&self, tool: &str, ctx: &RequestContext<RoleServer>, query: Option<&str>) -> Caller {
        self.server.mcp.caller.caller(&self.server.tether, tool, session_of(ctx).as_deref(), query)
    }

    /// The tool's answer, with the caller's piggyback notice when signals wait: the only way a
    /// session without a push path (stdio, a lost stream) hears of them, and a reminder for the
    /// rest. Never fails the call it rides on.
    async fn answer(&self, c: &Caller, r: Result<CallToolResult, ErrorData>) -> Result<CallToolResult, ErrorData> {
        let mut r = as_tool_result(r)?;
        let who = c.who.clone();
        if let Ok(p) = blocking(&self.server.tether, move |t| ops::signals::piggyback(t, &who)).await
            && p.count > 0
        {
            let notice = json!({
                "pending_signals": p.count,
                "notice": format!("Tether: {} waiting for you; call signals_pending to read them.", p.describe()),
            });
            r.content.push(ContentBlock::text(notice.to_string()));
        }
        Ok(r)
    }
}
