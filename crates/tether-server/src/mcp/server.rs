//! The MCP handler: one [`TetherMcp`] per client session over the shared server — its tools
//! ([`super::tools`]), prompts ([`super::prompts`]) and resources ([`super::resources`]).

use std::sync::Arc;

use rmcp::handler::server::router::prompt::PromptRouter;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, ListResourceTemplatesResult,
    ListResourcesResult, PaginatedRequestParams, ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse,
    ServerCapabilities, ServerConfig, SubscribeRequestParams, UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ErrorData, RoleServer, ServerHandler, tool_handler};

use super::caller::session_of;
use super::resources;
use crate::Server;

/// One MCP session's handler; the factory makes one per client session, sharing the server.
#[derive(Clone)]
pub struct TetherMcp {
    pub(crate) server: Arc<Server>,
    tool_router: ToolRouter<Self>,
    prompt_router: PromptRouter<Self>,
}

impl TetherMcp {
    pub fn new(server: Arc<Server>) -> Self {
        Self { server, tool_router: Self::tools(), prompt_router: Self::prompts() }
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for TetherMcp {
    async fn list_prompts(
        &self,
        _r: Option<PaginatedRequestParams>,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListPromptsResult, ErrorData> {
        Ok(rmcp::model::ListPromptsResult::with_all_items(self.prompt_router.list_all()))
    }

    /// An unknown prompt is named in the words clients have always seen (`unknown prompt "x"`).
    async fn get_prompt(
        &self,
        request: rmcp::model::GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetPromptResponse, ErrorData> {
        if !self.prompt_router.has_route(&request.name) {
            return Err(ErrorData::invalid_params(format!("unknown prompt {:?}", request.name), None));
        }
        let pc = rmcp::handler::server::prompt::PromptContext::new(self, request.name, request.arguments, context);
        self.prompt_router.get_prompt(pc).await
    }

    /// Arguments that do not fit a tool's schema (an unknown status, a string for a number)
    /// are answered like any other failure of the call — `{code: "invalid_input", message}` in
    /// a result with `isError` — not in rmcp's own plain words.
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // A tool that does not exist stays a protocol error.
        let known = self.tool_router.has_route(&request.name);
        let tcc = rmcp::handler::server::tool::ToolCallContext::new(self, request, context);
        match self.tool_router.call(tcc).await {
            Ok(CallToolResponse::Complete(mut r)) if known && r.is_error == Some(true) => {
                super::error::coded(&mut r);
                Ok(CallToolResponse::Complete(r))
            }
            Err(e) if known && e.code == rmcp::model::ErrorCode::INVALID_PARAMS => {
                let mut r = CallToolResult::error(vec![rmcp::model::ContentBlock::text(e.message.to_string())]);
                super::error::coded(&mut r);
                Ok(r.into())
            }
            other => other,
        }
    }

    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .enable_resources_subscribe()
                .enable_prompts()
                .build(),
        )
        .with_server_info(Implementation::new("tether", env!("CARGO_PKG_VERSION")))
        .with_instructions(
            "Tether knows the user's PAST Cursor chats. Use sessions_find to look up earlier work, \
             session_read to read it in small windows, session_tag to name or tag chats. \
             It also keeps a task board shared by agents and people: session_start once, then \
             task_list / task_claim (never work on a task you have not claimed) / task_update \
             (comment, hand off, complete with a summary). Agents and the user talk through signals: \
             signals_pending reads what waits for you (call it whenever Tether says signals are waiting), \
             signal_send asks or answers an agent, a role or the user (`human`). agent_run starts the Cursor \
             CLI agent on this machine, or a Cursor Cloud agent on a GitHub repository, for a prompt or a task; \
             run_diff shows what a run changed. code_origin says which chat wrote a line of code, with that \
             chat's words.",
        )
    }

    fn supported_protocol_versions(&self) -> std::borrow::Cow<'static, [ProtocolVersion]> {
        // 2026-07-28 changes the transport (no GET stream for subscriptions); Cursor speaks 2025-06-18.
        std::borrow::Cow::Borrowed(ProtocolVersion::known_up_to(&ProtocolVersion::V_2025_11_25))
    }

    async fn on_initialized(&self, ctx: NotificationContext<RoleServer>) {
        if let Some(id) = ctx
            .extensions
            .get::<http::request::Parts>()
            .and_then(|p| p.headers.get("mcp-session-id").and_then(|v| v.to_str().ok()).map(str::to_owned))
        {
            self.server.mcp.register_peer(&id, ctx.peer.clone());
        }
    }

    async fn list_resources(
        &self,
        _r: Option<PaginatedRequestParams>,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        resources::list(&self.server).await
    }

    async fn list_resource_templates(
        &self,
        _r: Option<PaginatedRequestParams>,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(resources::templates())
    }

    async fn read_resource(
        &self,
        r: ReadResourceRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let who = self.caller("inbox", &ctx, None).who;
        resources::read(&self.server, &r.uri, &who).await
    }

    #[allow(deprecated)]
    async fn subscribe(&self, r: SubscribeRequestParams, ctx: RequestContext<RoleServer>) -> Result<(), ErrorData> {
        let sid = session_of(&ctx).unwrap_or_else(|| "stdio".into());
        self.server.mcp.register_peer(&sid, ctx.peer.clone());
        self.server.mcp.subscribe(&sid, &r.uri);
        Ok(())
    }

    #[allow(deprecated)]
    async fn unsubscribe(&self, r: UnsubscribeRequestParams, ctx: RequestContext<RoleServer>) -> Result<(), ErrorData> {
        let sid = session_of(&ctx).unwrap_or_else(|| "stdio".into());
        self.server.mcp.unsubscribe(&sid, &r.uri);
        Ok(())
    }
}
