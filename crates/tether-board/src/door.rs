//! The board's one door, area by area: `board.tasks()`, `.signals()`, `.agents()`, `.chats()`,
//! `.shared()`, `.cloud()`, `.usage()` (and `.runs()`, in `runs/handle.rs`). Each handle is a
//! small copy over the engine the [`Board`](crate::Board) runs on, and each method is one call
//! into its module's functions, which are the crate's own: a host — or a reader — follows one
//! path from a caller to the SQL.
//!
//! What is this machine's alone (its MCP sessions, `live::sessions`, over the `Store`) is no
//! board area and has no handle here.

use std::path::Path;

use tether_store::sql::Database;

use crate::agents::{self, Agent};
use crate::error::Result;
use crate::principal::Identity;
use crate::runs::{CloudSpec, Run, event::Usage};
use crate::signals::{
    self, NewSignal, PendingSummary, Recipient, Ring, Sender, Signal, SignalDetail, SignalFilter, SignalType, Wake,
};
use crate::tasks::{
    self, Actor, ClaimTarget, NewTask, QueryResult, SessionStart, Task, TaskChange, TaskDetail, TaskFilter, TaskQuery,
};
use crate::usage::{Budget, RunSpend, SpendFilter};
use crate::{cloud, live, shared, task_io, wake};

/// Tasks: created, claimed on a lease, updated, listed, imported and exported.
#[derive(Clone, Copy)]
pub struct Tasks<'b> {
    pub(crate) db: &'b dyn Database,
}

/// Signals between agents and people, their obligations and the doorbell's wakes.
#[derive(Clone, Copy)]
pub struct Signals<'b> {
    pub(crate) db: &'b dyn Database,
}

/// The agents on the board, their MCP sessions and waking an idle chat by a follow-up run.
#[derive(Clone, Copy)]
pub struct Agents<'b> {
    pub(crate) db: &'b dyn Database,
}

/// What Cursor's hooks say about each chat (shared with the team once joined).
#[derive(Clone, Copy)]
pub struct Chats<'b> {
    pub(crate) db: &'b dyn Database,
}

/// Chats shared with the team (`SH-2`).
#[derive(Clone, Copy)]
pub struct Shared<'b> {
    pub(crate) db: &'b dyn Database,
}

/// Cursor Cloud runs: what the cloud runner learnt, adoption, tokens and webhooks.
#[derive(Clone, Copy)]
pub struct Cloud<'b> {
    pub(crate) db: &'b dyn Database,
}

/// Spend: each run's figures, budgets on tasks, and holding runs for the day's budget.
#[derive(Clone, Copy)]
pub struct Spend<'b> {
    pub(crate) db: &'b dyn Database,
}

impl Tasks<'_> {
    pub fn create(self, actor: &Actor, new: &NewTask) -> Result<Task> {
        tasks::create(self.db, actor, new)
    }

    /// Claims the task the target names, or the best ready one (atomically, on a lease).
    pub fn claim(self, actor: &Actor, target: &ClaimTarget) -> Result<Task> {
        tasks::claim(self.db, actor, target)
    }

    /// Claims `id`, or the best ready task for the role and project given (else the agent's own).
    pub fn claim_for(
        self,
        actor: &Actor,
        id: Option<String>,
        role: Option<String>,
        project: Option<String>,
    ) -> Result<Task> {
        tasks::claim_for(self.db, actor, id, role, project)
    }

    /// Extends the leases of every task the agent holds (called on its activity, e.g. hooks).
    pub fn renew_leases(self, agent_id: &str, lease_ms: i64) -> Result<usize> {
        tasks::renew_leases(self.db, agent_id, lease_ms)
    }

    pub fn update(self, actor: &Actor, id: &str, change: &TaskChange) -> Result<Task> {
        tasks::update(self.db, actor, id, change)
    }

    pub fn query(self, actor: &Actor, q: &TaskQuery) -> Result<QueryResult> {
        tasks::query(self.db, actor, q)
    }

    pub fn get(self, id: &str) -> Result<TaskDetail> {
        tasks::get(self.db, id)
    }

    pub fn list(self, f: &TaskFilter) -> Result<Vec<Task>> {
        tasks::list(self.db, f)
    }

    /// The board as markdown (the MCP resource `tether://tasks`).
    pub fn markdown(self) -> Result<String> {
        tasks::board_markdown(self.db)
    }

    /// Bumped by every task write, in any process.
    pub fn revision(self) -> Result<i64> {
        tasks::revision(self.db)
    }

    pub fn export(self, format: task_io::ExportFormat) -> Result<String> {
        task_io::export(self.db, format)
    }

    /// A Taskmaster `tasks.json`, or a Backlog.md folder.
    pub fn import(self, actor: &Actor, path: &Path) -> Result<task_io::ImportReport> {
        if path.is_dir() { self.import_backlog(actor, path) } else { self.import_taskmaster(actor, path) }
    }

    pub fn import_taskmaster(self, actor: &Actor, path: &Path) -> Result<task_io::ImportReport> {
        task_io::import_taskmaster(self.db, actor, path)
    }

    pub fn import_backlog(self, actor: &Actor, dir: &Path) -> Result<task_io::ImportReport> {
        task_io::import_backlog(self.db, actor, dir)
    }

    /// Copies every task of board `from` (this machine's own) onto this one (a team's), each
    /// keeping `origin:T-n` as its external reference, so copying again refreshes.
    pub fn import_board(self, from: &dyn Database, actor: &Actor, origin: &str) -> Result<task_io::ImportReport> {
        task_io::import_board(from, self.db, actor, origin)
    }
}

impl Signals<'_> {
    pub fn send(self, from: &Sender, new: &NewSignal) -> Result<Signal> {
        signals::send(self.db, from, new)
    }

    /// [`Signals::send`] for a sender outside this machine (a cloud run's scoped bearer): marked
    /// `remote`, so a wake it causes waits for the person.
    pub fn send_remote(self, from: &Sender, new: &NewSignal) -> Result<Signal> {
        signals::send_remote(self.db, from, new)
    }

    /// Replies to a signal (to its sender, in its trace), closing its obligation.
    pub fn reply(self, from: &Sender, id: &str, body: &str) -> Result<Signal> {
        let new = NewSignal { reply_to: Some(id.to_owned()), body: body.to_owned(), ..Default::default() };
        signals::send(self.db, from, &new)
    }

    /// Returns the caller's undrained signals and marks them drained (exactly once).
    pub fn drain(self, who: &Recipient) -> Result<Vec<Signal>> {
        signals::drain(self.db, who)
    }

    /// The caller's undrained signals, left undrained.
    pub fn pending(self, who: &Recipient) -> Result<Vec<Signal>> {
        signals::pending(self.db, who)
    }

    /// How many undrained signals that want attention wait for the caller.
    pub fn pending_summary(self, who: &Recipient) -> Result<PendingSummary> {
        signals::pending_summary(self.db, who)
    }

    /// The notice a tool result carries for the caller (recorded as a `piggyback` wake).
    pub fn piggyback(self, who: &Recipient, mcp_session: Option<&str>) -> Result<PendingSummary> {
        signals::piggyback(self.db, who, mcp_session)
    }

    pub fn list(self, f: &SignalFilter) -> Result<Vec<Signal>> {
        signals::list(self.db, f)
    }

    pub fn get(self, id: &str) -> Result<SignalDetail> {
        signals::get(self.db, id)
    }

    /// Bumped by every signal write, in any process.
    pub fn revision(self) -> Result<i64> {
        signals::revision(self.db)
    }

    /// Open obligations per recipient (name), for the agents view.
    pub fn open_obligations(self) -> Result<Vec<(String, i64)>> {
        signals::open_obligations(self.db)
    }

    /// Open obligations older than `min_age_ms`, oldest first: (signal, recipient name, age ms).
    pub fn overdue(self, kind: SignalType, min_age_ms: i64) -> Result<Vec<(Signal, String, i64)>> {
        signals::overdue(self.db, kind, min_age_ms)
    }

    /// Cursor's `stop` hook for a chat: the follow-up message that makes it drain its signals
    /// (counts and types only, never a body), or `None`.
    pub fn stop_hook(self, conversation_id: &str, loop_count: u32, status: Option<&str>) -> Result<Option<String>> {
        signals::stop_hook(self.db, conversation_id, loop_count, status)
    }

    /// The deliveries no doorbell has tried yet, oldest first, with each recipient's MCP session.
    pub fn unrung(self) -> Result<Vec<Ring>> {
        signals::unrung(self.db)
    }

    /// Records push outcomes: each counts as a wake attempt on its delivery.
    pub fn record_wakes(self, wakes: &[Wake]) -> Result<()> {
        signals::record_wakes(self.db, wakes)
    }
}

impl Agents<'_> {
    pub fn list(self) -> Result<Vec<Agent>> {
        agents::list(self.db)
    }

    pub fn get(self, id: &str) -> Result<Agent> {
        agents::get(self.db, id)
    }

    /// The name an actor goes by on the board (registering it on first sight).
    pub fn label(self, who: &Identity) -> Result<String> {
        crate::principal::actor_label(self.db, who)
    }

    /// Registers the agent (or updates its role/name), returning it.
    pub fn start(self, who: &Identity, role: Option<&str>, name: Option<&str>) -> Result<Agent> {
        agents::start(self.db, who, role, name)
    }

    /// Registers the agent with a role and name, and tells it what it holds.
    pub fn start_session(self, who: &Identity, role: Option<&str>, name: Option<&str>) -> Result<SessionStart> {
        tasks::start_session(self.db, who, role, name)
    }

    /// The agent registered for an MCP session by `session_start`, if any.
    pub fn for_mcp_session(self, session: &str) -> Result<Option<String>> {
        agents::for_mcp_session(self.db, session)
    }

    /// Marks the agents of a closed MCP session as ended (their leases still run out on their own).
    pub fn end_mcp_session(self, session: &str) -> Result<()> {
        agents::end_mcp_session(self.db, session)
    }

    /// Turns waking an idle chat by a follow-up run on or off for an agent (a chain of runs).
    pub fn set_wake_by_resume(self, agent: &str, on: bool) -> Result<Agent> {
        wake::set(self.db, agent, on)
    }

    /// Queues a follow-up run for every opted-in idle chat with signals waiting; the runs queued.
    pub fn wake_idle_chats(self, policy: &wake::Policy) -> Result<Vec<Run>> {
        let mut queued = Vec::new();
        for agent in wake::due(self.db, policy.per_hour)? {
            queued.extend(wake::wake(self.db, &agent, policy)?);
        }
        Ok(queued)
    }
}

impl Chats<'_> {
    /// What a hook says about a chat, renewing the leases of what the chat holds.
    pub fn record_hook(self, ev: &live::HookEvent) -> Result<()> {
        live::record_hook(self.db, ev)
    }

    /// What the hooks last said about a chat, if anything.
    pub fn activity(self, conversation_id: &str) -> Result<Option<live::ChatActivity>> {
        live::chat_activity(self.db, conversation_id)
    }
}

impl Shared<'_> {
    pub fn share(self, new: &shared::NewShared) -> Result<shared::SharedChat> {
        shared::share(self.db, new)
    }

    pub fn get(self, id: &str) -> Result<shared::SharedChat> {
        shared::get(self.db, id)
    }

    pub fn list(self, words: Option<&str>, limit: usize) -> Result<Vec<shared::SharedSummary>> {
        shared::list(self.db, words, limit)
    }

    /// Takes a shared copy back; whether there was one.
    pub fn unshare(self, id: &str) -> Result<bool> {
        shared::unshare(self.db, id)
    }
}

impl Cloud<'_> {
    /// Saves what the cloud runner learnt about a run.
    pub fn set(self, num: i64, spec: &CloudSpec) -> Result<()> {
        cloud::set(self.db, num, spec)
    }

    /// Cloud runs still going whose runner is gone: `me` takes them over (each exactly once).
    pub fn adopt(self, me: u32, mine: &[i64], is_alive: impl Fn(u32) -> bool) -> Result<Vec<Run>> {
        cloud::adopt(self.db, me, mine, is_alive)
    }

    /// The latest cloud run bound to `task` on `repo` that launched an agent.
    pub fn earlier_for_task(self, task: i64, repo: &str) -> Result<Option<Run>> {
        cloud::earlier_for_task(self.db, task, repo)
    }

    /// A one-time bootstrap token bound to a run; only its hash is kept.
    pub fn grant_bootstrap(self, run: i64) -> Result<String> {
        cloud::grant_bootstrap(self.db, run)
    }

    /// Spends a bootstrap token (once, unexpired) for a run-scoped bearer.
    pub fn exchange(self, bootstrap: &str) -> Result<Option<(String, Run, i64)>> {
        cloud::exchange(self.db, bootstrap)
    }

    /// The run a scoped bearer speaks for, while it is valid.
    pub fn bearer_run(self, bearer: &str) -> Result<Option<Run>> {
        cloud::bearer_run(self.db, bearer)
    }

    /// Keeps a webhook delivery by its id; `false` when it was seen before (nothing to apply).
    pub fn record_webhook(self, id: &str, agent: Option<&str>, status: Option<&str>, body: &str) -> Result<bool> {
        cloud::record_webhook(self.db, id, agent, status, body)
    }

    /// The cloud run now going on a Cursor agent, if any.
    pub fn live_run_for_agent(self, agent: &str) -> Result<Option<Run>> {
        cloud::live_run_for_agent(self.db, agent)
    }
}

impl Spend<'_> {
    /// Runs' spend, oldest first (by when they started, else were queued).
    pub fn spend(self, f: &SpendFilter) -> Result<Vec<RunSpend>> {
        crate::usage::spend(self.db, f)
    }

    /// A run's figures from Cursor Cloud's usage endpoint: its tokens and, when Cursor says it, cost.
    pub fn set_cloud_usage(self, num: i64, usage: &Usage, cost_usd: Option<f64>) -> Result<()> {
        crate::usage::set_cloud_usage(self.db, num, usage, cost_usd)
    }

    pub fn set_task_budget(self, id: &str, budget: Option<Budget>) -> Result<()> {
        crate::usage::set_task_budget(self.db, id, budget)
    }

    /// A task's budget, if it has one.
    pub fn task_budget(self, num: i64) -> Result<Option<Budget>> {
        crate::usage::task_budget(self.db, num)
    }

    /// Holds every queued run because today's budget is spent (`reason`), or with `None` lets
    /// them go; how many changed.
    pub fn hold_for_daily(self, reason: Option<&str>) -> Result<usize> {
        crate::usage::hold_for_daily(self.db, reason)
    }
}
