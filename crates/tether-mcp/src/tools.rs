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
use tether_core::board::signals::{NewSignal, Recipient, Sender};
use tether_core::history::sessions::{ListQuery, ProjectFilter, SearchQuery, TagUpdate, WindowOptions};

use crate::App;

pub const SESSION_URI_PREFIX: &str = "tether://session/";
/// One agent run: status and recent events; subscribers hear as it goes.
pub const RUN_URI_PREFIX: &str = "tether://run/";
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

#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
pub struct PendingArgs {}

#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
pub struct RunArgs {
    #[serde(flatten)]
    pub run: tether_core::board::runs::NewRun,
    /// Continue this run's Cursor chat instead (e.g. "R-3"), with `prompt` as the next message.
    #[serde(default)]
    pub followup_of: Option<String>,
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

/// Adds the piggyback notice to a tool result when the caller has undrained signals: the only
/// way a session without a push path (stdio, a lost stream) hears of them, and a reminder for
/// the rest. Never fails the call it rides on.
async fn with_notice(
    app: &Arc<App>,
    who: Option<String>,
    session: Option<String>,
    r: Result<CallToolResult, ErrorData>,
) -> Result<CallToolResult, ErrorData> {
    let mut r = as_tool_result(r)?;
    let Some(who) = who else { return Ok(r) };
    let t = Arc::clone(&app.tether);
    let summary = tokio::task::spawn_blocking(move || {
        t.board().piggyback(&tether_core::board::signals::Recipient::Agent(who), session.as_deref())
    })
    .await;
    if let Ok(Ok(p)) = summary
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

    /// The caller as a board actor, with its MCP session: `query` helps match the hook's
    /// announcement of this call.
    fn caller(&self, tool: &str, ctx: &RequestContext<RoleServer>, query: &Option<String>) -> Caller {
        let session = session_id_of(ctx);
        let chat = self.app.caller(tool, session.as_deref(), query);
        let roots = chat.as_ref().map(|c| c.workspace_roots.clone()).unwrap_or_default();
        let actor = self.app.actor_of(chat, session.as_deref());
        Caller { actor, session, roots }
    }

    /// Shapes the answer and adds the caller's piggyback notice.
    async fn answer(&self, c: &Caller, r: Result<CallToolResult, ErrorData>) -> Result<CallToolResult, ErrorData> {
        with_notice(&self.app, Some(c.actor.who.id.clone()), c.session.clone(), r).await
    }

    #[tool(
        description = "Find PAST or OTHER Cursor chats (not this one): full-text search when `query` is given, else the most recent chats. Filters: project (`current` workspace by default, `all`, or a path), tag, nickname, bookmarked. Returns compact rows with ids to pass to session_read."
    )]
    async fn sessions_find(
        &self,
        Parameters(a): Parameters<FindArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let c = self.caller("sessions_find", &ctx, &a.query);
        let r = async {
            let t = Arc::clone(&self.app.tether);
            let project = t.project_scope(a.project.as_deref(), &c.roots);
            let limit = a.limit.unwrap_or(10).clamp(1, 50);
            let scope = match &project {
                ProjectFilter::All => "all projects".to_owned(),
                ProjectFilter::Path(p) => p.clone(),
            };
            if let Some(nick) = a.nickname {
                let s = blocking(move || t.summary(&nick)).await?;
                return json_result(&json!({"sessions": [s]}));
            }
            match a.query.filter(|q| !q.trim().is_empty()) {
                Some(q) => {
                    let (hits, cov) = blocking(move || {
                        Ok((t.search(&SearchQuery { project, limit, ..SearchQuery::new(q) })?, t.coverage()?))
                    })
                    .await?;
                    match cov.notice() {
                        Some(n) => json_result(&json!({"scope": scope, "hits": hits, "still_indexing": n})),
                        None => json_result(&json!({"scope": scope, "hits": hits})),
                    }
                }
                None => {
                    let (tag, bookmarked) = (a.tag, a.bookmarked.unwrap_or(false));
                    let rows =
                        blocking(move || t.list(&ListQuery { project, tag, bookmarked, limit, ..Default::default() }))
                            .await?;
                    json_result(&json!({"scope": scope, "sessions": rows}))
                }
            }
        }
        .await;
        self.answer(&c, r).await
    }

    #[tool(
        description = "Read a PAST Cursor chat found with sessions_find, by id or nickname. Returns a window of messages (offset/limit, or `around` a matching word) within a token budget; tool calls and thinking are left out unless include_tools is true. Use next_offset to page."
    )]
    async fn session_read(
        &self,
        Parameters(a): Parameters<ReadArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let c = self.caller("session_read", &ctx, &None);
        let t = Arc::clone(&self.app.tether);
        let r = blocking(move || {
            t.read_window(
                &a.session,
                &WindowOptions {
                    offset: a.offset.unwrap_or(0),
                    limit: a.limit.unwrap_or(40).clamp(1, 200),
                    around: a.around,
                    include_tools: a.include_tools.unwrap_or(false),
                    max_tokens: a.max_tokens.unwrap_or(4000).clamp(200, 50_000),
                },
            )
        })
        .await
        .and_then(|w| json_result(&w));
        self.answer(&c, r).await
    }

    #[tool(
        description = "Set a nickname, add/remove tags, or bookmark a Cursor chat. Without `session` it applies to the chat that is calling this tool. Nicknames are unique."
    )]
    async fn session_tag(
        &self,
        Parameters(a): Parameters<TagArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let session = session_id_of(&ctx);
        let chat = self.app.caller("session_tag", session.as_deref(), &None);
        let key = match (a.session, &chat) {
            (Some(s), _) => Some(s),
            (None, Some(c)) => Some(c.conversation_id.clone()),
            (None, None) => None,
        };
        let c = Caller { actor: self.app.actor_of(chat, session.as_deref()), session, roots: Vec::new() };
        let r = async {
            let Some(key) = key else {
                return Err(ErrorData::invalid_params(
                    "which chat? pass `session`: the calling chat is unknown because Tether's Cursor hooks are not installed (run `tether init`)",
                    Some(json!({"code": "caller_unknown"})),
                ));
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
        .await;
        self.answer(&c, r).await
    }

    #[tool(
        description = "Start or resume your agent session for Tether's shared task board: register your role and get your name, the tasks you hold, your signal surface and how to work. Call once at the start of a chat that works on tasks."
    )]
    async fn session_start(
        &self,
        Parameters(a): Parameters<StartArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let c = self.caller("session_start", &ctx, &None);
        let (t, who) = (Arc::clone(&self.app.tether), c.actor.who.clone());
        let r = blocking(move || t.board().start_session(&who, a.role.as_deref(), a.name.as_deref())).await;
        self.app.signals_sent();
        self.answer(&c, r.and_then(|r| json_result(&r))).await
    }

    #[tool(
        description = "Create a task on the shared board (title, markdown description, priority, role, labels, dependencies, acceptance criteria). Returns it with its id, e.g. T-7."
    )]
    async fn task_create(
        &self,
        Parameters(new): Parameters<tether_core::board::tasks::NewTask>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let c = self.caller("task_create", &ctx, &None);
        let (t, actor) = (Arc::clone(&self.app.tether), c.actor.clone());
        let r = blocking(move || t.board().create_task(&actor, &new)).await.and_then(|r| json_result(&r));
        self.answer(&c, r).await
    }

    #[tool(
        description = "List tasks on the shared board with filters (status, assignee `me`/name/`none`, role, project, label, ready), or one task with its notes, handoffs and history when `id` is given."
    )]
    async fn task_list(
        &self,
        Parameters(q): Parameters<tether_core::board::tasks::TaskQuery>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let c = self.caller("task_list", &ctx, &None);
        let (t, actor) = (Arc::clone(&self.app.tether), c.actor.clone());
        let r = blocking(move || t.board().query_tasks(&actor, &q)).await.and_then(|r| json_result(&r));
        self.answer(&c, r).await
    }

    #[tool(
        description = "Claim a task atomically (never two holders): the given id, or the best ready task for your role when no id is given. It becomes in_progress and yours on a lease that your activity renews; finish with task_update."
    )]
    async fn task_claim(
        &self,
        Parameters(a): Parameters<ClaimArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let c = self.caller("task_claim", &ctx, &None);
        let mut actor = c.actor.clone();
        if let Some(m) = a.lease_minutes {
            actor.lease_ms = Some(i64::from(m.clamp(1, 1440)) * 60_000);
        }
        let t = Arc::clone(&self.app.tether);
        let r = blocking(move || t.board().claim(&actor, a.id, a.role, a.project)).await.and_then(|r| json_result(&r));
        self.answer(&c, r).await
    }

    #[tool(
        description = "Change a task: status, fields, labels, dependencies, assignee; add a comment or a handoff note; complete it with a summary; or release it for someone else. Tasks another agent holds accept comments only."
    )]
    async fn task_update(
        &self,
        Parameters(a): Parameters<UpdateArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let c = self.caller("task_update", &ctx, &None);
        let (t, actor) = (Arc::clone(&self.app.tether), c.actor.clone());
        let r = async move {
            let id = a.id.clone();
            let change = a.try_into().map_err(core_err)?;
            let r = blocking(move || t.board().update_task(&actor, &id, &change)).await?;
            json_result(&r)
        }
        .await;
        // An assignment sends the new holder a signal.
        self.app.signals_sent();
        self.answer(&c, r).await
    }

    #[tool(
        description = "Read (and mark read) the signals waiting for you: questions, assigned tasks, review requests, status updates from agents and the user. Call it when Tether tells you signals are waiting, at the start of a task and before you stop. Questions, task_assigned and review_requested need a reply (signal_send with reply_to)."
    )]
    async fn signals_pending(
        &self,
        Parameters(_): Parameters<PendingArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let c = self.caller("signals_pending", &ctx, &None);
        let (t, me) = (Arc::clone(&self.app.tether), Recipient::Agent(c.actor.who.id.clone()));
        let r = blocking(move || t.board().drain_signals(&me)).await;
        if let (Ok(got), Some(s)) = (&r, &c.session)
            && !got.is_empty()
        {
            self.app.doorbell.rearm(s);
            self.app.emit("signals", json!({}));
        }
        let r = r.and_then(|signals| {
            let hint = if signals.iter().any(|s| s.reply_required) {
                "Reply where one is needed: signal_send with reply_to set to the signal's id."
            } else {
                "Nothing here needs a reply."
            };
            json_result(&json!({"signals": signals, "hint": hint}))
        });
        self.answer(&c, r).await
    }

    #[tool(
        description = "Start an agent for a prompt or a board task (it claims the task and moves it to in_review when it succeeds). where: local (default) runs the Cursor CLI on this machine in a project folder, with a model, mode (agent/plan/ask), role and permission tokens (e.g. allow [\"Write(**)\", \"Shell(cargo)\"]: without them it can only read); where: cloud launches a Cursor Cloud agent on a GitHub repository (repo, ref or branch, auto_pr; needs the user's Cursor API key). Or continue an earlier run's chat with followup_of. Returns the run id at once; read tether://run/{id} for its progress."
    )]
    async fn agent_run(
        &self,
        Parameters(a): Parameters<RunArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let c = self.caller("agent_run", &ctx, &None);
        let t = Arc::clone(&self.app.tether);
        let who = c.actor.who.clone();
        let r = blocking(move || {
            let name = tether_core::board::tasks::actor_label(&t.store, &who)?;
            start_run(&t, &name, a)
        })
        .await;
        let r = r.and_then(|run| {
            let mut v = serde_json::to_value(&run).map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
            match self.app.runner() {
                Some(runner) => runner.kick(),
                None if tether_core::daemon::running(&self.app.tether.paths).is_none() => {
                    v["note"] =
                        json!("queued; no Tether daemon is running to start it: start the app or `tether serve`");
                }
                None => {}
            }
            json_result(&v)
        });
        self.answer(&c, r).await
    }

    #[tool(
        description = "Send a signal to another agent (by name), to every live agent with a role, or to the user (`human`): a question, a review request, a status update or an acknowledgment. To answer a signal, give reply_to (then `to` may be left out); a reply closes the obligation of what it answers."
    )]
    async fn signal_send(
        &self,
        Parameters(new): Parameters<NewSignal>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let c = self.caller("signal_send", &ctx, &None);
        let (t, from) = (Arc::clone(&self.app.tether), Sender::Agent(c.actor.who.clone()));
        let r = blocking(move || t.board().send_signal(&from, &new)).await;
        if r.is_ok() {
            self.app.signals_sent();
        }
        self.answer(&c, r.and_then(|s| json_result(&s))).await
    }
}

/// The run started for a tool call: a follow-up of an earlier run, or a new one (local only).
fn start_run(t: &tether_core::Tether, who: &str, a: RunArgs) -> tether_core::Result<tether_core::board::runs::Run> {
    match a.followup_of.filter(|f| !f.trim().is_empty()) {
        Some(parent) => t.followup_run(who, &parent, a.run.prompt.as_deref().unwrap_or("")),
        None => t.queue_run(who, &a.run),
    }
}

/// Who called a tool: as a board actor, with the MCP session and the chat's workspace.
struct Caller {
    actor: tether_core::board::tasks::Actor,
    session: Option<String>,
    roots: Vec<String>,
}

impl TryFrom<UpdateArgs> for tether_core::board::tasks::TaskChange {
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

/// The inbox resource: what waits, in the order it came, and how to take it.
fn inbox_markdown(signals: &[tether_core::board::signals::Signal]) -> String {
    if signals.is_empty() {
        return "No signals are waiting for you.\n".into();
    }
    let mut out =
        format!("# {} signal(s) waiting\n\nCall `signals_pending` to read and mark them read.\n\n", signals.len());
    for s in signals {
        out.push_str(&format!("- {} {} from {} ({})\n", s.id, s.kind, s.from, s.created_at));
    }
    out
}

/// A run as the agent that started it reads it: status, result or error, the last events.
fn run_markdown(d: &tether_core::board::runs::RunDetail) -> String {
    use tether_core::board::stream_json::RunEvent as E;
    let r = &d.run;
    let mut out = format!("# {} — {}\n\n", r.id, r.status);
    out.push_str(&format!("- workspace: {}\n", r.workspace.as_deref().unwrap_or("—")));
    if let Some(c) = &r.chat_id {
        out.push_str(&format!("- Cursor chat: {c}\n"));
    }
    if let Some(t) = &r.task {
        out.push_str(&format!("- task: {t}\n"));
    }
    if let Some(e) = &r.error {
        out.push_str(&format!("- error: {e}\n"));
    }
    if let Some(w) = &r.warning {
        out.push_str(&format!("- note: {w}\n"));
    }
    if let Some(res) = &r.result {
        out.push_str(&format!("\n## Result\n\n{res}\n"));
    }
    out.push_str("\n## Last events\n\n");
    for e in &d.events {
        let line = match &e.event {
            E::Assistant { text, .. } => format!("assistant: {}", text.trim()),
            E::ToolCall { tool, phase, command, path, outcome, .. } => format!(
                "tool {tool} {phase} {} {}",
                command.as_deref().or(path.as_deref()).unwrap_or(""),
                outcome.as_deref().unwrap_or("")
            ),
            E::Status { status, message } => format!("[{status}] {}", message.as_deref().unwrap_or("")),
            E::Stderr { text } => format!("stderr: {text}"),
            other => other.kind().to_owned(),
        };
        out.push_str(&format!("- {}\n", line.trim()));
    }
    out
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
             (comment, hand off, complete with a summary). Agents and the user talk through signals: \
             signals_pending reads what waits for you (call it whenever Tether says signals are waiting), \
             signal_send asks or answers an agent, a role or the user (`human`). agent_run starts the Cursor \
             CLI agent on this machine, or a Cursor Cloud agent on a GitHub repository, for a prompt or a task.",
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
        let inbox = Resource::new(crate::INBOX_URI, "Your signal inbox")
            .with_description(
                "Signals waiting for you (read without marking them read); subscribe to hear when one arrives, \
                 then call signals_pending",
            )
            .with_mime_type("text/markdown");
        let items = [board, inbox]
            .into_iter()
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
            ResourceTemplate::new(format!("{RUN_URI_PREFIX}{{id}}"), "Agent run")
                .with_description(
                    "A run of the Cursor CLI (agent_run): status, result and recent events; subscribe to follow it",
                )
                .with_mime_type("text/markdown"),
        ]))
    }

    async fn read_resource(
        &self,
        r: ReadResourceRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let t = Arc::clone(&self.app.tether);
        let md = if r.uri == TASKS_URI {
            blocking(move || t.board().markdown()).await?
        } else if let Some(id) = r.uri.strip_prefix(RUN_URI_PREFIX).map(str::to_owned) {
            blocking(move || t.board().run(&id, Some(40))).await.map(|d| run_markdown(&d))?
        } else if r.uri == crate::INBOX_URI {
            let me = Recipient::Agent(self.app.actor("inbox", session_id_of(&ctx).as_deref()).who.id);
            blocking(move || t.board().pending_signals(&me)).await.map(|s| inbox_markdown(&s))?
        } else if let Some(id) = r.uri.strip_prefix(SESSION_URI_PREFIX).map(str::to_owned) {
            blocking(move || t.export(&id, tether_core::history::export::Format::Markdown)).await?
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
