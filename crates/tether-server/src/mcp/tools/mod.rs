//! The MCP tools, by area, each a `#[tool_router]` of its own (merged in [`super::TetherMcp`]).
//! A tool resolves its caller ([`super::caller`]), maps its arguments onto one operation, and
//! answers with the result and, when signals wait for the caller, the piggyback notice.

mod board;
mod runs;
mod sessions;

use std::sync::Arc;

use rmcp::model::{CallToolResult, ContentBlock};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use tether_core::ops::signals::Notice;
use tether_core::{Tether, ops};

use super::caller::{Caller, session_of};
use super::error::{as_tool_result, engine, json_result};
use super::server::TetherMcp;

/// What a tool's operation may fail with: the engine's error, or a refusal of the tool's own.
pub(crate) trait Failure {
    fn into_error(self) -> ErrorData;
}

impl Failure for tether_core::Error {
    fn into_error(self) -> ErrorData {
        engine(self)
    }
}

impl Failure for ErrorData {
    fn into_error(self) -> ErrorData {
        self
    }
}

impl TetherMcp {
    pub(crate) fn tools() -> rmcp::handler::server::router::tool::ToolRouter<Self> {
        Self::sessions_tools() + Self::board_tools() + Self::runs_tools()
    }

    pub(crate) fn caller(&self, tool: &str, ctx: &RequestContext<RoleServer>, query: Option<&str>) -> Caller {
        self.server.mcp.caller.caller(&self.server.tether, tool, session_of(ctx).as_deref(), query)
    }

    /// One tool call: its caller resolved (`query` helps match the hook's announcement), `op`
    /// run on that caller, and the answer with the caller's piggyback notice when signals wait
    /// (the only way a session without a push path hears of them; it never fails the call it
    /// rides on). All of it in one hop off the async workers: a hop each cost a third of the
    /// endpoint's throughput in thread wake-ups.
    pub(crate) async fn respond<T, E>(
        &self,
        tool: &'static str,
        ctx: &RequestContext<RoleServer>,
        query: Option<String>,
        op: impl FnOnce(&Tether, &Caller) -> Result<T, E> + Send + 'static,
    ) -> Result<CallToolResult, ErrorData>
    where
        T: serde::Serialize,
        E: Failure,
    {
        let server = Arc::clone(&self.server);
        let session = session_of(ctx);
        let (r, pending) = tokio::task::spawn_blocking(move || {
            let t = &server.tether;
            let c = server.mcp.caller.caller(t, tool, session.as_deref(), query.as_deref());
            let r = op(t, &c).map_err(Failure::into_error).and_then(|v| json_result(&v));
            (r, ops::signals::piggyback(t, &c.who).ok())
        })
        .await
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        let mut r = as_tool_result(r)?;
        if let Some(notice) = pending.as_ref().and_then(Notice::of) {
            let text = serde_json::to_string(&notice).map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
            r.content.push(ContentBlock::text(text));
        }
        Ok(r)
    }
}
