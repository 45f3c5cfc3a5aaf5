//! Starting agents: the Cursor CLI here or a Cursor Cloud agent, or a follow-up of an earlier
//! run; reading what a run changed. No tool merges, pushes or approves: those are the person's.

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, schemars, tool, tool_router};
use serde::Deserialize;
use tether_core::model::runs::NewRun;
use tether_core::ops::changes::{self, DiffRequest};
use tether_core::ops::runs::{self, Followup, Started};

use crate::mcp::server::TetherMcp;

/// `agent_run`'s arguments: a new run, or with `followup_of` the next prompt of an earlier one.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
pub(crate) struct RunArgs {
    #[serde(flatten)]
    run: NewRun,
    /// Continue this run's Cursor chat instead (e.g. "R-3"), with `prompt` as the next message.
    #[serde(default)]
    followup_of: Option<String>,
}

#[tool_router(router = runs_tools, vis = "pub(crate)")]
impl TetherMcp {
    #[tool(
        description = "What a run changed: the files its branch added, modified, deleted or renamed against its base, with line counts, and the unified diff (stat: true leaves the diff out), with the person's comments on it. For reviewing an agent's work; merging is the person's.",
        annotations(read_only_hint = true)
    )]
    async fn run_diff(
        &self,
        Parameters(a): Parameters<DiffRequest>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        self.respond("run_diff", &ctx, None, move |t, c| changes::diff(t, &c.who, &a)).await
    }

    #[tool(
        description = "Start an agent for a prompt or a board task (it claims the task and moves it to in_review when it succeeds). where: local (default) runs the Cursor CLI on this machine in a project folder, with a model, mode (agent/plan/ask), role and permission tokens (e.g. allow [\"Write(**)\", \"Shell(cargo)\"]: without them it can only read); where: cloud launches a Cursor Cloud agent on a GitHub repository (repo, ref or branch, auto_pr; needs the user's Cursor API key). Or continue an earlier run's chat with followup_of. A budget (tokens like 200k, or dollars like $2) stops the run when it goes over. Returns the run id at once; read tether://run/{id} for its progress, and tether://usage for what runs spent today."
    )]
    async fn agent_run(
        &self,
        Parameters(a): Parameters<RunArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        self.respond("agent_run", &ctx, None, move |t, c| {
            let run = match a.followup_of.filter(|f| !f.trim().is_empty()) {
                Some(run) => runs::followup(t, &c.who, &Followup { run, prompt: a.run.prompt.unwrap_or_default() }),
                None => runs::start(t, &c.who, &a.run),
            }?;
            Ok::<_, tether_core::Error>(Started::of(t, run))
        })
        .await
    }
}
