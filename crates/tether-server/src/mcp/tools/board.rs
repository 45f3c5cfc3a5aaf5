//! The task board and signals: start a session, create, list, claim and change tasks, read and
//! send signals.

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, schemars, tool, tool_router};
use serde::Deserialize;
use tether_core::model::signals::NewSignal;
use tether_core::model::tasks::{NewTask, TaskQuery};
use tether_core::ops::agents::Start;
use tether_core::ops::tasks::{Claim, Update};
use tether_core::ops::{agents, signals, tasks};

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
        self.respond("session_start", &ctx, None, move |t, c| agents::start_session(t, &c.who, &a)).await
    }

    #[tool(
        description = "Create a task on the shared board (title, markdown description, priority, role, labels, dependencies, acceptance criteria). Returns it with its id, e.g. T-7."
    )]
    async fn task_create(
        &self,
        Parameters(new): Parameters<NewTask>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        self.respond("task_create", &ctx, None, move |t, c| tasks::create(t, &c.who, &new)).await
    }

    #[tool(
        description = "List tasks on the shared board with filters (status, assignee `me`/name/`none`, role, project, label, ready), or one task with its notes, handoffs and history when `id` is given."
    )]
    async fn task_list(
        &self,
        Parameters(q): Parameters<TaskQuery>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        self.respond("task_list", &ctx, None, move |t, c| tasks::query(t, &c.who, &q)).await
    }

    #[tool(
        description = "Claim a task atomically (never two holders): the given id, or the best ready task for your role when no id is given. It becomes in_progress and yours on a lease that your activity renews; finish with task_update."
    )]
    async fn task_claim(
        &self,
        Parameters(a): Parameters<Claim>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        self.respond("task_claim", &ctx, None, move |t, c| tasks::claim(t, &c.who, a)).await
    }

    #[tool(
        description = "Change a task: status, fields, labels, dependencies, assignee; add a comment or a handoff note; complete it with a summary; or release it for someone else. Tasks another agent holds accept comments only."
    )]
    async fn task_update(
        &self,
        Parameters(u): Parameters<Update>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        self.respond("task_update", &ctx, None, move |t, c| tasks::update(t, &c.who, &u)).await
    }

    #[tool(
        description = "Read (and mark read) the signals waiting for you: questions, assigned tasks, review requests, status updates from agents and the user. Call it when Tether tells you signals are waiting, at the start of a task and before you stop. Questions, task_assigned and review_requested need a reply (signal_send with reply_to)."
    )]
    async fn signals_pending(
        &self,
        Parameters(_): Parameters<Nothing>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        self.respond("signals_pending", &ctx, None, move |t, c| signals::drain(t, &c.who).map(signals::Drained::from))
            .await
    }

    #[tool(
        description = "Send a signal to another agent (by name), to every live agent with a role, or to the user (`human`): a question, a review request, a status update or an acknowledgment. To answer a signal, give reply_to (then `to` may be left out); a reply closes the obligation of what it answers."
    )]
    async fn signal_send(
        &self,
        Parameters(new): Parameters<NewSignal>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        self.respond("signal_send", &ctx, None, move |t, c| signals::send(t, &c.who, &new)).await
    }
}
