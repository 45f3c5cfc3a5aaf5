//! The MCP surface: tools, resources and prompts over `tether-core`. Each handler parses its
//! arguments, calls one core function and shapes the answer; logic lives in the core.

use std::sync::Arc;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolResult, ContentBlock, GetPromptRequestParams, GetPromptResponse, GetPromptResult, Implementation,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, PaginatedRequestParams, Prompt,
    PromptArgument, PromptMessage, ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult, Resource, ResourceContents, ResourceTemplate, Role, ServerCapabilities, ServerConfig,
    SubscribeRequestParams, UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ErrorData, RoleServer, ServerHandler, schemars, tool, tool_handler, tool_router};
use serde::Deserialize;
use serde_json::{Value, json};
use tether_core::sessions::{ListQuery, ProjectFilter, SearchQuery, ShowOptions, TagUpdate};

use crate::App;

pub const SESSION_URI_PREFIX: &str = "tether://session/";
/// The task board, as markdown; subscribers hear of every task change.
pub const TASKS_URI: &str = "tether://tasks";

#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
pub struct FindArgs {
    /// Words to search for in past chats (full text; all words must occur). Omit to list recent chats.
    pub query: Option<String>,
    /// `current` (default: the calling chat's workspace), `all`, or a project path.
    pub project: Option<String>,
    /// Only chats with this tag.
    pub tag: Option<String>,
    /// The chat with this nickname.
    pub nickname: Option<String>,
    /// Only bookmarked chats.
    pub bookmarked: Option<bool>,
    /// At most this many rows (default 10, max 50).
    pub limit: Option<usize>,
}

#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
pub struct ReadArgs {
    /// Session id (or a unique prefix) or nickname, from `sessions_find`.
    pub session: String,
    /// First message to return (0-based). Ignored when `around` is given.
    pub offset: Option<usize>,
    /// At most this many messages (default 40).
    pub limit: Option<usize>,
    /// Centre the window on the first message matching these words.
    pub around: Option<String>,
    /// Include tool calls and thinking (default false: only the conversation).
    pub include_tools: Option<bool>,
    /// Stop before the answer exceeds roughly this many tokens (default 4000).
    pub max_tokens: Option<usize>,
}

#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
pub struct TagArgs {
    /// Session id or nickname. Omit to tag the chat that is calling (known through Tether's hooks).
    pub session: Option<String>,
    /// A unique, memorable name; empty string clears it.
    pub nickname: Option<String>,
    /// Tags to add.
    #[serde(default)]
    pub add_tags: Vec<String>,
    /// Tags to remove.
    #[serde(default)]
    pub remove_tags: Vec<String>,
    /// Bookmark (true) or unbookmark (false).
    pub bookmark: Option<bool>,
}

#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
pub struct StartArgs {
    /// Your role, e.g. `dev`, `reviewer`, `tester`: claim-next prefers tasks for it.
    pub role: Option<String>,
    /// A name to be known by (unique); omit for a generated one such as `brisk-otter`.
    pub name: Option<String>,
}

#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
pub struct ClaimArgs {
    /// The task to claim, e.g. "T-4". Omit to claim the best ready task for your role.
    pub id: Option<String>,
    /// With no id: prefer tasks for this role (default: the role given to session_start).
    pub role: Option<String>,
    /// With no id: only tasks of this project (or of none).
    pub project: Option<String>,
    /// How long the claim holds without activity from you (default 30, at most 1440 minutes).
    pub lease_minutes: Option<u32>,
}

#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
pub struct UpdateArgs {
    /// The task, e.g. "T-4".
    pub id: String,
    /// New status: todo, in_progress, blocked, in_review, done, cancelled.
    pub status: Option<String>,
    pub title: Option<String>,
    pub description: Option<String>,
    pub priority: Option<String>,
    #[serde(default)]
    pub add_labels: Vec<String>,
    #[serde(default)]
    pub remove_labels: Vec<String>,
    #[serde(default)]
    pub add_depends_on: Vec<String>,
    #[serde(default)]
    pub remove_depends_on: Vec<String>,
    /// Give it to an agent (by name) or a person; empty string unassigns.
    pub assignee: Option<String>,
    /// A note on the task.
    pub comment: Option<String>,
    /// The comment is a handoff note for whoever picks the task up next.
    pub handoff: Option<bool>,
    /// What was done: completes the task (status done unless another status is given).
    pub summary: Option<String>,
    /// Give the task back (unassigned, todo), e.g. with a handoff comment.
    pub release: Option<bool>,
}

/// One MCP session's handler; the factory makes one per client session, sharing `App`.
#[derive(Clone)]
pub struct TetherMcp {
    pub(crate) app: Arc<App>,
    tool_router: ToolRouter<Self>,
}

fn core_err(e: tether_core::Error) -> ErrorData {
    let data = Some(json!({"code": e.code()}));
    match e.code() {
        tether_core::ErrorCode::NotFound | tether_core::ErrorCode::InvalidInput | tether_core::ErrorCode::Conflict => {
            ErrorData::invalid_params(e.to_string(), data)
        }
        _ => ErrorData::internal_error(e.to_string(), data),
    }
}

/// Failures of the work itself go back as tool results with `isError`, so the model reads them
/// (JSON-RPC errors are for malformed requests, which rmcp reports itself).
/// The text is `{code, message}`; `code` is there only when a caller can branch on it.
fn as_tool_result(r: Result<CallToolResult, ErrorData>) -> Result<CallToolResult, ErrorData> {
    Ok(r.unwrap_or_else(|e| {
        let code = e.data.as_ref().and_then(|d| d.get("code")).filter(|c| c.as_str() != Some("internal"));
        let body = match code {
            Some(c) => json!({"code": c, "message": e.message}),
            None => json!({"message": e.message}),
        };
        CallToolResult::error(vec![ContentBlock::text(body.to_string())])
    }))
}

fn json_result(v: &impl serde::Serialize) -> Result<CallToolResult, ErrorData> {
    let text = serde_json::to_string(v).map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
    Ok(CallToolResult::success(vec![ContentBlock::text(text)]))
}

/// Runs blocking core work off the async executor.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> tether_core::Result<T> + Send + 'static,
) -> Result<T, ErrorData> {
    tokio::task::spawn_blocking(f).await.map_err(|e| ErrorData::internal_error(e.to_string(), None))?.map_err(core_err)
}

fn session_id_of(ctx: &RequestContext<RoleServer>) -> Option<String> {
    ctx.extensions
        .get::<http::request::Parts>()
        .and_then(|p| p.headers.get("mcp-session-id"))
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

#[tool_router]
impl TetherMcp {
    pub fn new(app: Arc<App>) -> Self {
        Self { app, tool_router: Self::tool_router() }
    }

    #[tool(
        description = "Find PAST or OTHER Cursor chats (not this one): full-text search when `query` is given, else the most recent chats. Filters: project (`current` workspace by default, `all`, or a path), tag, nickname, bookmarked. Returns compact rows with ids to pass to session_read."
    )]
    async fn sessions_find(
        &self,
        Parameters(a): Parameters<FindArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        as_tool_result(
            async move {
                let caller = self.app.caller("sessions_find", session_id_of(&ctx).as_deref(), &a.query);
                let project = match a.project.as_deref().unwrap_or("current") {
                    "all" | "" => ProjectFilter::All,
                    "current" => match caller.as_ref().and_then(|c| c.workspace_roots.first().cloned()) {
                        Some(root) => ProjectFilter::Path(root),
                        None => ProjectFilter::All,
                    },
                    p => ProjectFilter::Path(p.to_owned()),
                };
                let limit = a.limit.unwrap_or(10).clamp(1, 50);
                let t = Arc::clone(&self.app.tether);
                let scope = match &project {
                    ProjectFilter::All => "all projects".to_owned(),
                    ProjectFilter::Path(p) => p.clone(),
                };
                if let Some(nick) = a.nickname {
                    let d = blocking(move || t.show(&nick, &ShowOptions { offset: 0, limit: 1, include_tools: false }))
                        .await?;
                    return json_result(&json!({"sessions": [d.session]}));
                }
                match a.query.filter(|q| !q.trim().is_empty()) {
                    Some(q) => {
                        let hits =
                            blocking(move || t.search(&SearchQuery { project, limit, ..SearchQuery::new(q) })).await?;
                        json_result(&json!({"scope": scope, "hits": hits}))
                    }
                    None => {
                        let tag = a.tag;
                        let bookmarked = a.bookmarked.unwrap_or(false);
                        let rows = blocking(move || {
                            t.list(&ListQuery { project, tag, bookmarked, limit, ..Default::default() })
                        })
                        .await?;
                        json_result(&json!({"scope": scope, "sessions": rows}))
                    }
                }
            }
            .await,
        )
    }

    #[tool(
        description = "Read a PAST Cursor chat found with sessions_find, by id or nickname. Returns a window of messages (offset/limit, or `around` a matching word) within a token budget; tool calls and thinking are left out unless include_tools is true. Use next_offset to page."
    )]
    async fn session_read(&self, Parameters(a): Parameters<ReadArgs>) -> Result<CallToolResult, ErrorData> {
        as_tool_result(
            async move {
                let t = Arc::clone(&self.app.tether);
                let r = blocking(move || {
                    tether_core::sessions::read_window(
                        &t.store,
                        &a.session,
                        &tether_core::sessions::WindowOptions {
                            offset: a.offset.unwrap_or(0),
                            limit: a.limit.unwrap_or(40).clamp(1, 200),
                            around: a.around,
                            include_tools: a.include_tools.unwrap_or(false),
                            max_tokens: a.max_tokens.unwrap_or(4000).clamp(200, 50_000),
                        },
                    )
                })
                .await?;
                json_result(&r)
            }
            .await,
        )
    }

    #[tool(
        description = "Set a nickname, add/remove tags, or bookmark a Cursor chat. Without `session` it applies to the chat that is calling this tool. Nicknames are unique."
    )]
    async fn session_tag(
        &self,
        Parameters(a): Parameters<TagArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        as_tool_result(async move {
            let caller = self.app.caller("session_tag", session_id_of(&ctx).as_deref(), &None);
            let key = match (a.session, caller) {
                (Some(s), _) => s,
                (None, Some(c)) => c.conversation_id,
                (None, None) => {
                    return Err(ErrorData::invalid_params(
                        "which chat? pass `session`: the calling chat is unknown because Tether's Cursor hooks are not installed (run `tether init`)",
                        Some(json!({"code": "caller_unknown"})),
                    ));
                }
            };
            let update = TagUpdate {
                nickname: a.nickname.map(|n| if n.trim().is_empty() { None } else { Some(n) }),
                add_tags: a.add_tags,
                remove_tags: a.remove_tags,
                bookmarked: a.bookmark,
                no_index: None,
            };
            let t = Arc::clone(&self.app.tether);
            let s = blocking(move || t.tag(&key, &update)).await?;
            // The session's resource shows its nickname and tags, so subscribers hear of it.
            self.app.sessions_changed(std::slice::from_ref(&s.id));
            json_result(&s)
        }
        .await)
    }
    #[tool(
        description = "Start or resume your agent session for Tether's shared task board: register your role and get your name, the tasks you hold and how to work. Call once at the start of a chat that works on tasks."
    )]
    async fn session_start(
        &self,
        Parameters(a): Parameters<StartArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let actor = self.app.actor("session_start", session_id_of(&ctx).as_deref());
        let t = Arc::clone(&self.app.tether);
        as_tool_result(
            blocking(move || {
                tether_core::tasks::start_session(&t.store, &actor.who, a.role.as_deref(), a.name.as_deref())
            })
            .await
            .and_then(|r| json_result(&r)),
        )
    }

    #[tool(
        description = "Create a task on the shared board (title, markdown description, priority, role, labels, dependencies, acceptance criteria). Returns it with its id, e.g. T-7."
    )]
    async fn task_create(
        &self,
        Parameters(new): Parameters<tether_core::tasks::NewTask>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let actor = self.app.actor("task_create", session_id_of(&ctx).as_deref());
        let t = Arc::clone(&self.app.tether);
        as_tool_result(
            blocking(move || tether_core::tasks::create(&t.store, &actor, &new)).await.and_then(|r| json_result(&r)),
        )
    }

    #[tool(
        description = "List tasks on the shared board with filters (status, assignee `me`/name/`none`, role, project, label, ready), or one task with its notes, handoffs and history when `id` is given."
    )]
    async fn task_list(
        &self,
        Parameters(q): Parameters<tether_core::tasks::TaskQuery>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let actor = self.app.actor("task_list", session_id_of(&ctx).as_deref());
        let t = Arc::clone(&self.app.tether);
        as_tool_result(
            blocking(move || tether_core::tasks::query(&t.store, &actor, &q)).await.and_then(|r| json_result(&r)),
        )
    }

    #[tool(
        description = "Claim a task atomically (never two holders): the given id, or the best ready task for your role when no id is given. It becomes in_progress and yours on a lease that your activity renews; finish with task_update."
    )]
    async fn task_claim(
        &self,
        Parameters(a): Parameters<ClaimArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let mut actor = self.app.actor("task_claim", session_id_of(&ctx).as_deref());
        if let Some(m) = a.lease_minutes {
            actor.lease_ms = Some(i64::from(m.clamp(1, 1440)) * 60_000);
        }
        let t = Arc::clone(&self.app.tether);
        as_tool_result(
            blocking(move || tether_core::tasks::claim_for(&t.store, &actor, a.id, a.role, a.project))
                .await
                .and_then(|r| json_result(&r)),
        )
    }

    #[tool(
        description = "Change a task: status, fields, labels, dependencies, assignee; add a comment or a handoff note; complete it with a summary; or release it for someone else. Tasks another agent holds accept comments only."
    )]
    async fn task_update(
        &self,
        Parameters(a): Parameters<UpdateArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let actor = self.app.actor("task_update", session_id_of(&ctx).as_deref());
        let t = Arc::clone(&self.app.tether);
        as_tool_result(
            async move {
                let id = a.id.clone();
                let change = a.try_into().map_err(core_err)?;
                let r = blocking(move || tether_core::tasks::update(&t.store, &actor, &id, &change)).await?;
                json_result(&r)
            }
            .await,
        )
    }
}

impl TryFrom<UpdateArgs> for tether_core::tasks::TaskChange {
    type Error = tether_core::Error;
    fn try_from(a: UpdateArgs) -> Result<Self, Self::Error> {
        Ok(Self {
            status: a.status.as_deref().map(str::parse).transpose()?,
            title: a.title,
            description: a.description,
            priority: a.priority,
            add_labels: a.add_labels,
            remove_labels: a.remove_labels,
            add_deps: a.add_depends_on,
            remove_deps: a.remove_depends_on,
            assignee: a.assignee.map(|n| Some(n).filter(|n| !n.trim().is_empty())),
            comment: a.comment,
            handoff: a.handoff.unwrap_or(false),
            summary: a.summary,
            release: a.release.unwrap_or(false),
            ..Default::default()
        })
    }
}

fn prompts() -> Vec<Prompt> {
    vec![
        Prompt::new(
            "continue_session",
            Some("Continue the work of a past Cursor chat: reads its end and picks up from there"),
            Some(vec![required_arg("session", "Session id or nickname")]),
        ),
        Prompt::new(
            "summarize_work",
            Some("Summarise what past chats did about a topic"),
            Some(vec![required_arg("topic", "What to look for, e.g. a feature or a file")]),
        ),
    ]
}

fn required_arg(name: &str, description: &str) -> PromptArgument {
    let mut a = PromptArgument::new(name);
    a.description = Some(description.into());
    a.required = Some(true);
    a
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for TetherMcp {
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
             (comment, hand off, complete with a summary).",
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
            self.app.register_peer(&id, ctx.peer.clone());
        }
    }

    async fn list_resources(
        &self,
        _r: Option<PaginatedRequestParams>,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let t = Arc::clone(&self.app.tether);
        let rows = blocking(move || t.list(&ListQuery { limit: 50, ..Default::default() })).await?;
        let board = Resource::new(TASKS_URI, "Task board")
            .with_description("Tether's shared task board (markdown); subscribe to hear of every change")
            .with_mime_type("text/markdown");
        let items = std::iter::once(board)
            .chain(rows.into_iter().map(|s| {
                Resource::new(
                    format!("{SESSION_URI_PREFIX}{}", s.id),
                    s.title.clone().unwrap_or_else(|| "(untitled chat)".into()),
                )
                .with_description(format!(
                    "Cursor chat, {} messages, updated {}",
                    s.messages,
                    s.updated_at.unwrap_or_default()
                ))
                .with_mime_type("text/markdown")
            }))
            .collect();
        Ok(ListResourcesResult::with_all_items(items))
    }

    async fn list_resource_templates(
        &self,
        _r: Option<PaginatedRequestParams>,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(ListResourceTemplatesResult::with_all_items(vec![
            ResourceTemplate::new(format!("{SESSION_URI_PREFIX}{{id}}"), "Cursor chat")
                .with_description("A past Cursor chat as markdown")
                .with_mime_type("text/markdown"),
        ]))
    }

    async fn read_resource(
        &self,
        r: ReadResourceRequestParams,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let t = Arc::clone(&self.app.tether);
        let md = if r.uri == TASKS_URI {
            blocking(move || tether_core::tasks::board_markdown(&t.store)).await?
        } else if let Some(id) = r.uri.strip_prefix(SESSION_URI_PREFIX).map(str::to_owned) {
            blocking(move || t.export(&id, tether_core::export::Format::Markdown)).await?
        } else {
            return Err(ErrorData::resource_not_found(format!("unknown resource {}", r.uri), None));
        };
        let mut c = ResourceContents::text(md, r.uri);
        if let ResourceContents::TextResourceContents { mime_type, .. } = &mut c {
            *mime_type = Some("text/markdown".into());
        }
        Ok(ReadResourceResult::new(vec![c]).into())
    }

    #[allow(deprecated)]
    async fn subscribe(&self, r: SubscribeRequestParams, ctx: RequestContext<RoleServer>) -> Result<(), ErrorData> {
        let sid = session_id_of(&ctx).unwrap_or_else(|| "stdio".into());
        self.app.register_peer(&sid, ctx.peer.clone());
        self.app.subscribe(&sid, &r.uri);
        Ok(())
    }

    #[allow(deprecated)]
    async fn unsubscribe(&self, r: UnsubscribeRequestParams, ctx: RequestContext<RoleServer>) -> Result<(), ErrorData> {
        let sid = session_id_of(&ctx).unwrap_or_else(|| "stdio".into());
        self.app.unsubscribe(&sid, &r.uri);
        Ok(())
    }

    async fn list_prompts(
        &self,
        _r: Option<PaginatedRequestParams>,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(ListPromptsResult::with_all_items(prompts()))
    }

    async fn get_prompt(
        &self,
        r: GetPromptRequestParams,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let arg = |k: &str| -> Result<String, ErrorData> {
            r.arguments
                .as_ref()
                .and_then(|a| a.get(k))
                .and_then(Value::as_str)
                .filter(|s| !s.trim().is_empty())
                .map(str::to_owned)
                .ok_or_else(|| ErrorData::invalid_params(format!("missing argument `{k}`"), None))
        };
        let text = match r.name.as_str() {
            "continue_session" => {
                let s = arg("session")?;
                format!(
                    "Continue the work of the earlier Cursor chat `{s}`. First call the tether tool session_read \
                     with session=\"{s}\" (read its last messages; page back with offset if needed), summarise \
                     where it stopped and what was left to do, then carry on from there."
                )
            }
            "summarize_work" => {
                let topic = arg("topic")?;
                format!(
                    "Summarise what my past Cursor chats did about \"{topic}\". Use the tether tool \
                     sessions_find with query=\"{topic}\" and project=\"all\", read the most relevant hits with \
                     session_read (small windows, `around` the topic), and give a dated summary with the chat ids."
                )
            }
            other => return Err(ErrorData::invalid_params(format!("unknown prompt {other:?}"), None)),
        };
        Ok(GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)]).into())
    }
}
