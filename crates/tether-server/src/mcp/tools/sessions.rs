//! Past Cursor chats: find, read, tag; and which chat wrote a line of code.

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, schemars, tool, tool_router};
use serde::Deserialize;
use serde_json::json;
use tether_core::ops::sessions::{self, Find, Read, Tag};
use tether_core::ops::trace::{self, Blame};

use crate::mcp::error::engine;
use crate::mcp::server::TetherMcp;

/// `session_tag`'s arguments: which chat (the calling one when left out) and the change.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
pub(crate) struct TagArgs {
    /// Session id or nickname. Omit to tag the chat that is calling (known through Tether's hooks).
    #[serde(default)]
    session: Option<String>,
    #[serde(flatten)]
    tag: Tag,
}

#[tool_router(router = sessions_tools, vis = "pub(crate)")]
impl TetherMcp {
    #[tool(
        description = "Find PAST or OTHER chats (not this one) of Cursor, Claude Code, Codex or Gemini CLI: full-text search when `query` is given, else the most recent chats. Filters: project (`current` workspace by default, `all`, or a path), tag, nickname, bookmarked, agent (`cursor`, `claude-code`, `codex`, `gemini`, …); scope `team` searches the chats teammates shared with the team instead (redacted copies, with who shared them). Returns compact rows with ids to pass to session_read."
    )]
    async fn sessions_find(
        &self,
        Parameters(a): Parameters<Find>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        self.respond("sessions_find", &ctx, a.query.clone(), move |t, c| sessions::find(t, &c.roots, a)).await
    }

    #[tool(
        description = "Read a PAST chat (Cursor's or another agent's: Claude Code, Codex, Gemini CLI) found with sessions_find, by id or nickname (or a team-shared chat by its SH- id: a stretch of its Markdown, paged by offset). Returns a window of messages (offset/limit, or `around` a matching word) within a token budget; tool calls and thinking are left out unless include_tools is true. Use next_offset to page."
    )]
    async fn session_read(
        &self,
        Parameters(a): Parameters<Read>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        self.respond("session_read", &ctx, None, move |t, _| sessions::read_chat(t, a)).await
    }

    #[tool(
        description = "Which chat wrote this code? For a file (absolute, or relative to your workspace) and a line or range: each line's origin — `ai` (the Cursor chat or Tether run that wrote it, with model and date), `mixed` (AI-written, edited since), `human`, or `unknown` (no record) — and the words of the turn that made the edit. Pass an excerpt's session and offset to session_read to read on."
    )]
    async fn code_origin(
        &self,
        Parameters(a): Parameters<Blame>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        self.respond("code_origin", &ctx, None, move |t, c| trace::code_origin(t, &c.who, &c.roots, &a)).await
    }

    #[tool(
        description = "Set a nickname, add/remove tags, or bookmark a Cursor chat. Without `session` it applies to the chat that is calling this tool. Nicknames are unique."
    )]
    async fn session_tag(
        &self,
        Parameters(a): Parameters<TagArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        self.respond("session_tag", &ctx, None, move |t, c| {
            let calling = c.who.identity().filter(|i| i.kind == tether_core::model::principal::AgentKind::Cursor);
            let Some(key) = a.session.or_else(|| calling.map(|i| i.id.clone())) else {
                return Err(ErrorData::invalid_params(
                    "which chat? pass `session`: the calling chat is unknown because Tether's Cursor hooks are not installed (run `tether init`)",
                    Some(json!({"code": "caller_unknown"})),
                ));
            };
            sessions::tag(t, &key, a.tag).map_err(engine)
        })
        .await
    }
}
