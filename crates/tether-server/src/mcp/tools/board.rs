//! The task board and signals: start a session, create, list, claim and change tasks, read and
//! send signals.

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, schemars, tool, tool_router};
use serde::Deserialize;
use serde_json::json;
use tether_core::board::signals::NewSignal;
use tether_core::board::tasks::{NewTask, TaskQuery};
use tether_core::ops::agents::Start;
use tether_core::ops::tasks::{Claim, Update};
use tether_core::ops::{agents, signals, tasks};

use crate::mcp::error::{blocking, json_result};
use crate::mcp::server::TetherMcp;

#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
pub(crate) struct Nothing {}

#[tool_router(router = board_tools, vis = "pub(crate)")]
impl TetherMcp {
    #[tool(
        description = "Start or resume your agent session for Tether's shared task board: register your role and get your name, the tasks you hold, your signal surface and how to work. Call once at the start of a chat that works on tasks."
    )]
    async fn session_start(
        &self,
        Parameters(a): Parameters<Start>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let c = self.caller("session_start", &ctx, None);
        let who = c.who.clone();
        let r = blocking(&self.server.tether, move |t| agents::start_session(t, &who, &a))
            .await
            .and_then(|r| json_result(&r));
        self.answer(&c, r).await
    }

    #[tool(
        description = "Create a task on the shared board (title, markdown description, priority, role, labels, dependencies, acceptance criteria). Returns it with its id, e.g. T-7."
    )]
    async fn task_create(
        &self,
        Parameters(new): Parameters<NewTask>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let c = self.caller("task_create", &ctx, None);
        let who = c.who.clone();
        let r =
            blocking(&self.server.tether, move |t| tasks::create(t, &who, &new)).await.and_then(|r| json_result(&r));
        self.answer(&c, r).await
    }

    #[tool(
        description = "List tasks on the shared board with filters (status, assignee `me`/name/`none`, role, project, label, ready), or one task with its notes, handoffs and history when `id` is given."
    )]
    async fn task_list(
        &self,
        Parameters(q): Parameters<TaskQuery>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let c = self.caller("task_list", &ctx, None);
        let who = c.who.clone();
        let r = blocking(&self.server.tether, move |t| tasks::query(t, &who, &q)).await.and_then(|r| json_result(&r));
        self.answer(&c, r).await
    }

    #[tool(
        description = "Claim a task atomically (never two holders): the given id, or the best ready task for your role when no id is given. It becomes in_progress and yours on a lease that your activity renews; finish with task_update."
    )]
    async fn task_claim(
        &self,
        Parameters(a): Parameters<Claim>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let c = self.caller("task_claim", &ctx, None);
        let who = c.who.clone();
        let r = blocking(&self.server.tether, move |t| tasks::claim(t, &who, a)).await.and_then(|r| json_result(&r));
        self.answer(&c, r).await
    }

    #[tool(
        description = "Change a task: status, fields, labels, dependencies, assignee; add a comment or a handoff note; complete it with a summary; or release it for someone else. Tasks another agent holds accept comments only."
    )]
    async fn task_update(
        &self,
        Parameters(u): Parameters<Update>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let c = self.caller("task_update", &ctx, None);
        let who = c.who.clone();
        let r = blocking(&self.server.tether, move |t| tasks::update(t, &who, &u)).await.and_then(|r| json_result(&r));
        self.answer(&c, r).await
    }

    #[tool(
        description = "Read (and mark read) the signals waiting for you: questions, assigned tasks, review requests, status updates from agents and the user. Call it when Tether tells you signals are waiting, at the start of a task and before you stop. Questions, task_assigned and review_requested need a reply (signal_send with reply_to)."
    )]
    async fn signals_pending(
        &self,
        Parameters(_): Parameters<Nothing>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let c = self.caller("signals_pending", &ctx, None);
        let who = c.who.clone();
        let r = blocking(&self.server.tether, move |t| signals::drain(t, &who)).await.and_then(|got| {
            let hint = if got.iter().any(|s| s.reply_required) {
                "Reply where one is needed: signal_send with reply_to set to the signal's id."
            } else {
                "Nothing here needs a reply."
            };
            json_result(&json!({"signals": got, "hint": hint}))
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
        let c = self.caller("signal_send", &ctx, None);
        let who = c.who.clone();
        let r =
            blocking(&self.server.tether, move |t| signals::send(t, &who, &new)).await.and_then(|s| json_result(&s));
        self.answer(&c, r).await
    }
}
