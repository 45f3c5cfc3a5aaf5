//! Agent runs: the Cursor CLI started by Tether for a prompt or a task — the data model, the
//! queue, the typed event log, the workspace files placed for a run (kept so they can always be
//! put back), and how a run moves the task it is bound to.
//!
//! Starting processes is not done here: the runs crate (`tether-runs`) claims queued runs, runs
//! the CLI and reports back through these functions. Writes that decide something (create, claim
//! to start, cancel, finish, file placement) are durable transactions; event batches are plain
//! transactions (they survive kill -9, and can be rebuilt from nothing else). Knows nothing about
//! processes, MCP, HTTP or the CLI.

use std::fmt;
use std::str::FromStr;

use rusqlite::{OptionalExtension, Transaction, params};
use serde::{Deserialize, Serialize};

use super::agents::{self, AgentKind, Identity};
pub use super::cloud::CloudSpec;
use super::stream_json::{RunEvent, Usage};
use super::tasks::{self, Actor, Status, TaskChange};
use crate::clock::{iso, now_ms};
use crate::error::{Error, Result};
use crate::store::Store;

/// A run bound to a task renews the task's lease on its events at most this often.
const LEASE_RENEW_EVERY_MS: i64 = 60_000;
/// A task-bound run's result, as the task's summary, is cut to this.
const SUMMARY_CHARS: usize = 4000;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    Queued,
    Running,
    Succeeded,
    /// The default of an [`Outcome`]: a run that ends without saying better failed.
    #[default]
    Failed,
    TimedOut,
    Cancelled,
    Lost,
}

impl RunStatus {
    pub const ALL: [RunStatus; 7] = [
        RunStatus::Queued,
        RunStatus::Running,
        RunStatus::Succeeded,
        RunStatus::Failed,
        RunStatus::TimedOut,
        RunStatus::Cancelled,
        RunStatus::Lost,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Queued => "queued",
            RunStatus::Running => "running",
            RunStatus::Succeeded => "succeeded",
            RunStatus::Failed => "failed",
            RunStatus::TimedOut => "timed_out",
            RunStatus::Cancelled => "cancelled",
            RunStatus::Lost => "lost",
        }
    }

    pub fn is_terminal(self) -> bool {
        !matches!(self, RunStatus::Queued | RunStatus::Running)
    }
}

impl fmt::Display for RunStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for RunStatus {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        RunStatus::ALL.into_iter().find(|t| t.as_str() == s.trim()).ok_or_else(|| {
            Error::invalid(
                "run status",
                format!("{s:?}: use queued, running, succeeded, failed, timed_out, cancelled or lost"),
            )
        })
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RunMode {
    #[default]
    Agent,
    Plan,
    Ask,
}

impl RunMode {
    pub fn as_str(self) -> &'static str {
        match self {
            RunMode::Agent => "agent",
            RunMode::Plan => "plan",
            RunMode::Ask => "ask",
        }
    }
}

impl FromStr for RunMode {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s.trim() {
            "agent" | "" => Ok(RunMode::Agent),
            "plan" => Ok(RunMode::Plan),
            "ask" => Ok(RunMode::Ask),
            other => Err(Error::invalid("run mode", format!("{other:?}: use agent, plan or ask"))),
        }
    }
}

/// Cursor CLI permission tokens (`Shell(git)`, `Read(src/**)`, `Write(**)`, `WebFetch(x.com)`,
/// `Mcp(server:tool)`), written to the workspace's `.cursor/cli.json` for the run.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Permissions {
    #[serde(default)]
    pub allow: Vec<String>,
    #[serde(default)]
    pub deny: Vec<String>,
}

impl Permissions {
    /// Whether the run may change things (files or commands): then, and only then, the CLI gets
    /// `--force`, without which it rejects every write and command in print mode.
    pub fn allows_writes(&self) -> bool {
        self.allow.iter().any(|t| t.starts_with("Write(") || t.starts_with("Shell("))
    }

    pub fn is_empty(&self) -> bool {
        self.allow.is_empty() && self.deny.is_empty()
    }

    fn validate(&self) -> Result<()> {
        for t in self.allow.iter().chain(&self.deny) {
            let kind = t.split('(').next().unwrap_or_default();
            let shaped = t.ends_with(')') && matches!(kind, "Shell" | "Read" | "Write" | "WebFetch" | "Mcp");
            if !shaped || t.chars().any(char::is_control) {
                return Err(Error::invalid(
                    "permission",
                    format!(
                        "{t:?}: use Cursor's tokens, e.g. Shell(git), Read(src/**), Write(**), WebFetch(docs.rs), Mcp(server:tool)"
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// A run as hosts ask for it. Its docs are also the MCP tool's argument descriptions.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
pub struct NewRun {
    /// What the agent should do. May be left out when `task` is given: the task becomes the prompt.
    #[serde(default)]
    pub prompt: Option<String>,
    /// A task to work on, e.g. "T-3": the run claims it, and moves it to in_review when it succeeds.
    #[serde(default)]
    pub task: Option<String>,
    /// The project folder to run in (default: the task's project). Must be inside the allowed roots.
    #[serde(default)]
    pub workspace: Option<String>,
    /// A Cursor model id (e.g. `gpt-5.3-codex`); default: the CLI's.
    #[serde(default)]
    pub model: Option<String>,
    /// agent (default), plan or ask.
    #[serde(default)]
    pub mode: Option<RunMode>,
    /// A role whose rule file guides the agent (planner, backend, frontend, reviewer, or your own).
    #[serde(default)]
    pub role: Option<String>,
    /// Wall-clock limit in seconds (default from the settings, 600).
    #[serde(default)]
    pub timeout_secs: Option<u64>,
    /// Permission tokens: `allow` (e.g. "Write(**)", "Shell(cargo)") and `deny`. Writes and
    /// commands run only when allowed.
    #[serde(default)]
    pub permissions: Permissions,
    /// On success the bound task goes to done instead of in_review.
    #[serde(default)]
    pub complete: bool,
    /// `local` (default): the Cursor CLI on this machine, in `workspace`. `cloud`: a Cursor Cloud
    /// agent working on a GitHub repository (`repo`), which needs a Cursor API key.
    #[serde(default, rename = "where")]
    pub place: Option<String>,
    /// Cloud runs: the GitHub repository, e.g. https://github.com/org/repo (default: the
    /// workspace's or the task's project's `origin` remote).
    #[serde(default)]
    pub repo: Option<String>,
    /// Cloud runs: the branch, tag or commit to start from (default: the repository's default).
    #[serde(default, rename = "ref")]
    pub git_ref: Option<String>,
    /// Cloud runs: an existing branch to work on and push to (instead of a new `cursor/…` one).
    #[serde(default)]
    pub branch: Option<String>,
    /// Cloud runs: open a pull request when done.
    #[serde(default)]
    pub auto_pr: bool,
}

/// Where a run's agent works.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum RunPlace {
    #[default]
    Local,
    Cloud,
}

impl RunPlace {
    pub fn as_str(self) -> &'static str {
        match self {
            RunPlace::Local => "local",
            RunPlace::Cloud => "cloud",
        }
    }
}

impl FromStr for RunPlace {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s.trim() {
            "local" | "" => Ok(RunPlace::Local),
            "cloud" => Ok(RunPlace::Cloud),
            other => Err(Error::invalid("where", format!("{other:?}: use local or cloud"))),
        }
    }
}

/// A run checked by the facade: the workspace canonical and inside the allowed roots, the prompt
/// known.
#[derive(Debug, Clone)]
pub struct ValidRun {
    pub prompt: String,
    pub task: Option<i64>,
    pub workspace: String,
    pub model: Option<String>,
    pub mode: RunMode,
    pub role: Option<String>,
    pub timeout_ms: i64,
    pub permissions: Permissions,
    pub complete: bool,
    pub parent: Option<i64>,
    pub resume_chat: Option<String>,
    /// Set for a Cursor Cloud run (kind `cloud`); `workspace` is then empty.
    pub cloud: Option<CloudSpec>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Run {
    pub id: String,
    pub kind: String,
    pub prompt: String,
    pub workspace: Option<String>,
    pub model: Option<String>,
    pub mode: RunMode,
    pub role: Option<String>,
    pub task: Option<String>,
    pub complete_task: bool,
    pub permissions: Permissions,
    pub timeout_secs: i64,
    pub parent: Option<String>,
    /// The Cursor chat a follow-up continues (`--resume`).
    pub resume_chat: Option<String>,
    pub status: RunStatus,
    /// The Cursor chat (the CLI's `session_id`), once the stream said it.
    pub chat_id: Option<String>,
    pub exit_code: Option<i64>,
    pub result: Option<String>,
    pub error: Option<String>,
    pub warning: Option<String>,
    pub duration_ms: Option<i64>,
    pub duration_api_ms: Option<i64>,
    pub usage: Option<Usage>,
    pub requested_by: String,
    pub cancel_requested: bool,
    /// Queued but held until the person allows it: `approval` (a wake that signals from outside
    /// this machine caused, with write or shell permissions). `None`: not held.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub held: Option<String>,
    /// Output past the log's size limit (`runs.max_log_mb`): counted, not kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log_dropped: Option<LogDropped>,
    pub created_at: String,
    pub started_at: Option<String>,
    pub ended_at: Option<String>,
    /// The first run of its chain: the chain acts as one agent (`run R-<root>`).
    #[serde(skip)]
    pub root: i64,
    /// A Cursor Cloud run's repository, Cursor's ids, branch and PR.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cloud: Option<CloudSpec>,
}

impl Run {
    pub fn is_cloud(&self) -> bool {
        self.cloud.is_some()
    }
}

impl Run {
    pub fn num(&self) -> i64 {
        parse_id(&self.id).unwrap_or(0)
    }
}

/// How much of a run's output its log left out (past `runs.max_log_mb`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogDropped {
    pub lines: i64,
    pub bytes: i64,
}

/// An event as stored: its place in the run's log and when it was seen.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct StoredEvent {
    pub seq: i64,
    pub at: String,
    #[serde(skip)]
    pub at_ms: i64,
    #[serde(flatten)]
    pub event: RunEvent,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RunDetail {
    #[serde(flatten)]
    pub run: Run,
    /// The newest events (or those before `before` when paging back), oldest first.
    pub events: Vec<StoredEvent>,
    /// How many events the run's log holds in all (`events` may be a page of them).
    pub events_total: i64,
    /// Follow-ups of this run.
    pub children: Vec<String>,
    /// The signals it carried, when Tether started it to wake an idle chat.
    pub signals: Vec<String>,
}

#[derive(Debug, Clone, Default)]
pub struct RunFilter {
    pub statuses: Vec<RunStatus>,
    pub task: Option<String>,
    pub chat: Option<String>,
    pub limit: usize,
}

pub fn parse_id(s: &str) -> Result<i64> {
    let t = s.trim();
    let n = t.strip_prefix("R-").or_else(|| t.strip_prefix("r-")).unwrap_or(t);
    n.parse::<i64>().ok().filter(|n| *n > 0).ok_or_else(|| Error::RunNotFound(s.to_owned()))
}

pub fn format_id(num: i64) -> String {
    format!("R-{num}")
}

/// The agent a run acts as on the board: one per chain (a run and its follow-ups), named after
/// the chain's first run, `root`.
pub fn run_identity(root: i64, workspace: Option<&str>) -> Identity {
    Identity {
        id: format!("run:{}", format_id(root)),
        kind: AgentKind::Run,
        mcp_session: None,
        project: workspace.map(str::to_owned),
    }
}

fn bump_rev(txn: &Transaction<'_>) -> Result<()> {
    txn.execute("UPDATE counters SET value = value + 1 WHERE name = 'runs_rev'", [])?;
    Ok(())
}

/// Changes whenever any run is queued, started, cancelled or ends, in any process.
pub fn revision(store: &Store) -> Result<i64> {
    store.read(|c| Ok(c.query_row("SELECT value FROM counters WHERE name = 'runs_rev'", [], |r| r.get(0))?))
}

/// The prompt a task-bound run starts from when none is given: the task with its criteria and
/// the notes earlier agents left.
pub fn task_prompt(store: &Store, task: &str) -> Result<String> {
    let d = tasks::get(store, task)?;
    let t = &d.task;
    let mut p = format!("Work on task {}: {}\n", t.id, t.title);
    if !t.description.trim().is_empty() {
        p.push_str(&format!("\n{}\n", t.description.trim()));
    }
    if !t.acceptance.is_empty() {
        p.push_str("\nIt is done when:\n");
        for a in &t.acceptance {
            p.push_str(&format!("- {a}\n"));
        }
    }
    let notes: Vec<String> = d
        .notes
        .iter()
        .filter_map(|n| {
            n.detail.get("text").and_then(|v| v.as_str()).map(|txt| format!("- {} ({}): {txt}", n.actor, n.kind))
        })
        .collect();
    if !notes.is_empty() {
        p.push_str("\nNotes from earlier work:\n");
        p.push_str(&notes.join("\n"));
        p.push('\n');
    }
    p.push_str("\nWhen you finish, end with a short summary of what you did and what is left.\n");
    Ok(p)
}

/// Checks what can be checked without the file system (the facade checks the workspace).
pub fn check(new: &NewRun) -> Result<()> {
    new.permissions.validate()?;
    if let Some(r) = &new.role
        && (r.trim().is_empty() || !r.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'))
    {
        return Err(Error::invalid("role", format!("{r:?}: use letters, digits, - and _")));
    }
    if let Some(m) = &new.model
        && (m.trim().is_empty() || m.starts_with('-') || m.chars().any(char::is_whitespace))
    {
        return Err(Error::invalid("model", format!("{m:?} is not a model id")));
    }
    if new.timeout_secs.is_some_and(|t| !(1..=24 * 3600).contains(&t)) {
        return Err(Error::invalid("timeout", "give 1 second to 24 hours"));
    }
    if new.prompt.as_deref().is_none_or(|p| p.trim().is_empty()) && new.task.is_none() {
        return Err(Error::invalid("run", "give a prompt, a task, or both"));
    }
    Ok(())
}

/// Queues a run.
pub fn create(store: &Store, requested_by: &str, r: &ValidRun) -> Result<Run> {
    let num = store.durable(|txn| {
        if let Some(t) = r.task {
            let known = txn.query_row("SELECT 1 FROM tasks WHERE num = ?1", [t], |_| Ok(())).optional()?.is_some();
            if !known {
                return Err(Error::TaskNotFound(tasks::format_id(t)));
            }
        }
        insert_in(txn, requested_by, r)
    })?;
    get_run(store, num)
}

/// Queues a run inside a caller's transaction; its number.
pub(crate) fn insert_in(txn: &Transaction<'_>, requested_by: &str, r: &ValidRun) -> Result<i64> {
    {
        let num: i64 =
            txn.query_row("UPDATE counters SET value = value + 1 WHERE name = 'run_num' RETURNING value", [], |row| {
                row.get(0)
            })?;
        let root: i64 = match r.parent {
            Some(p) => txn.query_row("SELECT coalesce(root, num) FROM runs WHERE num = ?1", [p], |row| row.get(0))?,
            None => num,
        };
        txn.execute(
            "INSERT INTO runs(num, kind, prompt, workspace, model, mode, role, task, complete_task, permissions,
                              timeout_ms, parent, resume_chat, requested_by, created_at, root, cloud)
             VALUES (?1, CASE WHEN ?16 IS NULL THEN 'local' ELSE 'cloud' END, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9,
                     ?10, ?11, ?12, ?13, ?14, ?15, ?16)",
            params![
                num,
                r.prompt,
                r.cloud.is_none().then_some(&r.workspace),
                r.model,
                r.mode.as_str(),
                r.role,
                r.task,
                r.complete,
                serde_json::to_string(&r.permissions)?,
                r.timeout_ms,
                r.parent,
                r.resume_chat,
                requested_by,
                now_ms(),
                root,
                r.cloud.as_ref().map(serde_json::to_string).transpose()?
            ],
        )?;
        append_in(txn, num, &[RunEvent::status("queued", None)])?;
        bump_rev(txn)?;
        Ok(num)
    }
}

/// A follow-up: the parent's chat continued (`--resume`) with a new prompt, as a child run with
/// the parent's workspace, model, mode, role and permissions.
pub fn followup_of(store: &Store, parent: &str, prompt: &str) -> Result<ValidRun> {
    followup_from(&get_run(store, parse_id(parent)?)?, prompt)
}

/// A follow-up of `p` (see [`followup_of`]).
pub(crate) fn followup_from(p: &Run, prompt: &str) -> Result<ValidRun> {
    let chat = p.chat_id.clone().ok_or_else(|| {
        Error::invalid("follow-up", format!("{} has no Cursor chat to continue (it never started)", p.id))
    })?;
    if prompt.trim().is_empty() {
        return Err(Error::invalid("follow-up", "say what the agent should do next"));
    }
    Ok(ValidRun {
        cloud: p.cloud.as_ref().map(CloudSpec::followup),
        prompt: prompt.to_owned(),
        task: None,
        workspace: p.workspace.clone().unwrap_or_default(),
        model: p.model.clone(),
        mode: p.mode,
        role: p.role.clone(),
        timeout_ms: p.timeout_secs * 1000,
        permissions: p.permissions.clone(),
        complete: false,
        parent: Some(p.num()),
        resume_chat: Some(chat),
    })
}

/// Asks a run to stop: a queued one is cancelled at once; a running one is stopped by its runner
/// (which notices within a second, in any process). An ended run is left as it is.
pub fn request_cancel(store: &Store, id: &str) -> Result<Run> {
    let num = parse_id(id)?;
    store.durable(|txn| {
        let status: String = txn
            .query_row("SELECT status FROM runs WHERE num = ?1", [num], |r| r.get(0))
            .optional()?
            .ok_or_else(|| Error::RunNotFound(id.to_owned()))?;
        match status.parse()? {
            RunStatus::Queued => {
                txn.execute(
                    "UPDATE runs SET status = 'cancelled', cancel_requested_at = ?2, ended_at = ?2, error = 'cancelled before it started'
                     WHERE num = ?1",
                    params![num, now_ms()],
                )?;
                append_in(txn, num, &[RunEvent::status("cancelled", Some("cancelled before it started".into()))])?;
            }
            RunStatus::Running => {
                txn.execute(
                    "UPDATE runs SET cancel_requested_at = coalesce(cancel_requested_at, ?2) WHERE num = ?1",
                    params![num, now_ms()],
                )?;
            }
            ended => {
                return Err(Error::RunEnded { id: format_id(num), status: ended.as_str() });
            }
        }
        bump_rev(txn)
    })?;
    get_run(store, num)
}

/// Lets a held run go (the person approved it): it is queued like any other from now on.
pub fn approve(store: &Store, id: &str) -> Result<Run> {
    let num = parse_id(id)?;
    store.durable(|txn| {
        let (status, held): (String, Option<String>) = txn
            .query_row("SELECT status, held FROM runs WHERE num = ?1", [num], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?
            .ok_or_else(|| Error::RunNotFound(id.to_owned()))?;
        let status: RunStatus = status.parse()?;
        if status.is_terminal() {
            return Err(Error::RunEnded { id: format_id(num), status: status.as_str() });
        }
        if held.is_none() {
            return Err(Error::invalid("approval", format!("{} is not waiting for approval", format_id(num))));
        }
        txn.execute("UPDATE runs SET held = NULL WHERE num = ?1", [num])?;
        append_in(txn, num, &[RunEvent::status("queued", Some("approved by the person".into()))])?;
        bump_rev(txn)
    })?;
    get_run(store, num)
}

/// Holds a queued run until the person allows it, saying why in its log.
pub(crate) fn hold_in(txn: &Transaction<'_>, num: i64, reason: &str, why: &str) -> Result<()> {
    txn.execute("UPDATE runs SET held = ?2 WHERE num = ?1 AND status = 'queued'", params![num, reason])?;
    append_in(txn, num, &[RunEvent::status("held", Some(why.to_owned()))])?;
    Ok(())
}

/// Limits on how many runs go at once, and which runs a runner takes.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Local runs (the Cursor CLI on this machine) at once.
    pub total: usize,
    pub per_workspace: usize,
    /// Cloud runs at once (they take no local resources; one at a time per cloud agent anyway).
    pub cloud: usize,
    /// A foreground runner (`tether run` without a daemon) takes only its own run.
    pub only: Option<i64>,
}

/// Takes the oldest queued run that fits the limits and marks it running for `runner_pid`, in
/// one transaction (two runners never take the same run). A task-bound run claims its task here;
/// when it cannot (someone else holds it), the run fails at once with the reason.
pub fn claim_next(store: &Store, runner_pid: u32, limits: Limits) -> Result<Option<Run>> {
    let claimed = store.durable(|txn| {
        let (local, cloud): (i64, i64) = txn.query_row(
            "SELECT coalesce(sum(kind = 'local'), 0), coalesce(sum(kind = 'cloud'), 0) FROM runs WHERE status = 'running'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        // A cloud agent runs one run at a time (Cursor answers 409 agent_busy): its follow-up
        // waits in the queue until the run before it ended.
        let next: Option<(i64, Option<String>)> = txn
            .query_row(
                "SELECT q.num, q.workspace FROM runs q
                 WHERE q.status = 'queued' AND q.held IS NULL AND (?2 IS NULL OR q.num = ?2)
                   AND ((q.kind = 'local' AND ?3 < ?4
                         AND (SELECT count(*) FROM runs r WHERE r.status = 'running' AND r.kind = 'local'
                                AND r.workspace IS q.workspace) < ?1)
                     OR (q.kind = 'cloud' AND ?5 < ?6
                         AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.status = 'running' AND r.kind = 'cloud'
                                AND json_extract(r.cloud, '$.agent_id') = json_extract(q.cloud, '$.agent_id'))))
                 ORDER BY q.num LIMIT 1",
                params![
                    limits.per_workspace as i64,
                    limits.only,
                    local,
                    limits.total as i64,
                    cloud,
                    limits.cloud as i64
                ],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        let Some((num, workspace)) = next else { return Ok(None) };
        let now = now_ms();
        txn.execute(
            "UPDATE runs SET status = 'running', started_at = ?2, runner_pid = ?3 WHERE num = ?1 AND status = 'queued'",
            params![num, now, runner_pid],
        )?;
        // Every run is an agent (its chain's), so it can be signalled and shows on the Agents view.
        let root: i64 = txn.query_row("SELECT coalesce(root, num) FROM runs WHERE num = ?1", [num], |r| r.get(0))?;
        agents::ensure_in(txn, &run_identity(root, workspace.as_deref()))?;
        append_in(txn, num, &[RunEvent::status("running", None)])?;
        bump_rev(txn)?;
        Ok(Some(num))
    })?;
    let Some(num) = claimed else { return Ok(None) };
    let run = get_run(store, num)?;
    if let Some(task) = &run.task {
        let actor =
            Actor { who: run_identity(run.root, run.workspace.as_deref()), lease_ms: Some(tasks::DEFAULT_LEASE_MS) };
        if let Err(e) = tasks::claim(store, &actor, &tasks::ClaimTarget::Id(task.clone())) {
            let msg = format!("could not claim {task}: {e}");
            finish(store, num, &Outcome { status: RunStatus::Failed, error: Some(msg), ..Default::default() })?;
            return get_run(store, num).map(Some);
        }
    }
    Ok(Some(run))
}

/// Records the agent's process (and process group) for a run, so a later start can stop an
/// orphan it left.
pub fn set_child(store: &Store, num: i64, pid: u32, started: Option<i64>) -> Result<()> {
    store
        .writer()
        .execute("UPDATE runs SET child_pid = ?2, child_started = ?3 WHERE num = ?1", params![num, pid, started])?;
    Ok(())
}

/// The number of a run's last event: a runner numbers what it adds after it.
pub fn last_seq(store: &Store, num: i64) -> Result<i64> {
    store.read(|c| Ok(c.query_row("SELECT coalesce(max(seq), 0) FROM run_events WHERE run = ?1", [num], |r| r.get(0))?))
}

/// Numbers events after the run's last one (for callers that do not number their own).
pub fn append_events(store: &Store, num: i64, events: &[RunEvent]) -> Result<Vec<StoredEvent>> {
    let from = last_seq(store, num)?;
    let now = now_ms();
    let stored: Vec<StoredEvent> = events
        .iter()
        .zip(from + 1..)
        .map(|(e, seq)| StoredEvent { seq, at: iso(now), at_ms: now, event: e.clone() })
        .collect();
    store_events(store, num, &stored)?;
    Ok(stored)
}

/// Stores events a runner numbered (and may already have shown live), taking what they say
/// about the run: the chat id from `init`, the result, durations and tokens from `result`. A
/// task-bound run's events renew its lease.
pub fn store_events(store: &Store, num: i64, stored: &[StoredEvent]) -> Result<()> {
    if stored.is_empty() {
        return Ok(());
    }
    let mut conn = store.writer();
    let txn = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    {
        let mut stmt = txn
            .prepare_cached("INSERT OR IGNORE INTO run_events(run, seq, at, kind, data) VALUES (?1, ?2, ?3, ?4, ?5)")?;
        for e in stored {
            stmt.execute(params![num, e.seq, e.at_ms, e.event.kind(), serde_json::to_string(&e.event)?])?;
        }
    }
    for e in stored.iter().map(|s| &s.event) {
        match e {
            RunEvent::Init { session_id, .. } => {
                txn.execute("UPDATE runs SET chat_id = ?2 WHERE num = ?1", params![num, session_id])?;
            }
            RunEvent::Result { is_error, text, duration_ms, duration_api_ms, usage } => {
                let u = usage.clone().unwrap_or_default();
                txn.execute(
                    "UPDATE runs SET result = ?2, duration_ms = ?3, duration_api_ms = ?4, input_tokens = ?5,
                         output_tokens = ?6, cache_read_tokens = ?7, cache_write_tokens = ?8,
                         error = CASE WHEN ?9 THEN coalesce(error, ?2) ELSE error END
                     WHERE num = ?1",
                    params![
                        num,
                        text,
                        duration_ms,
                        duration_api_ms,
                        usage.as_ref().map(|_| u.input_tokens),
                        usage.as_ref().map(|_| u.output_tokens),
                        usage.as_ref().map(|_| u.cache_read_tokens),
                        usage.as_ref().map(|_| u.cache_write_tokens),
                        is_error
                    ],
                )?;
            }
            _ => {}
        }
    }
    let now = now_ms();
    txn.execute(
        "UPDATE tasks SET lease_until = ?2
         WHERE assignee_agent = (SELECT 'run:R-' || coalesce(root, num) FROM runs WHERE num = ?1)
           AND status = 'in_progress' AND lease_until IS NOT NULL AND lease_until < ?3",
        params![num, now + tasks::DEFAULT_LEASE_MS, now + tasks::DEFAULT_LEASE_MS - LEASE_RENEW_EVERY_MS],
    )?;
    txn.commit()?;
    Ok(())
}

fn append_in(txn: &Transaction<'_>, num: i64, events: &[RunEvent]) -> Result<Vec<StoredEvent>> {
    let mut seq: i64 =
        txn.query_row("SELECT coalesce(max(seq), 0) FROM run_events WHERE run = ?1", [num], |r| r.get(0))?;
    let now = now_ms();
    let mut stmt =
        txn.prepare_cached("INSERT INTO run_events(run, seq, at, kind, data) VALUES (?1, ?2, ?3, ?4, ?5)")?;
    let mut out = Vec::with_capacity(events.len());
    for e in events {
        seq += 1;
        stmt.execute(params![num, seq, now, e.kind(), serde_json::to_string(e)?])?;
        out.push(StoredEvent { seq, at: iso(now), at_ms: now, event: e.clone() });
    }
    Ok(out)
}

/// How a run ended.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    pub status: RunStatus,
    pub exit_code: Option<i64>,
    pub error: Option<String>,
    pub warning: Option<String>,
    pub log_dropped: Option<LogDropped>,
}

/// Ends a run (once: a run that already ended keeps its first outcome) and moves its task: on
/// success to in_review with the result as the summary (done when asked), otherwise back to the
/// board with a handoff note that carries the error.
pub fn finish(store: &Store, num: i64, o: &Outcome) -> Result<Run> {
    let ended = store.durable(|txn| {
        let changed = txn.execute(
            "UPDATE runs SET status = ?2, exit_code = coalesce(?3, exit_code), error = coalesce(?4, error),
                 warning = coalesce(?5, warning), ended_at = ?6,
                 log_dropped_lines = coalesce(?7, log_dropped_lines), log_dropped_bytes = coalesce(?8, log_dropped_bytes)
             WHERE num = ?1 AND status IN ('queued', 'running')",
            params![
                num,
                o.status.as_str(),
                o.exit_code,
                o.error,
                o.warning,
                now_ms(),
                o.log_dropped.map(|d| d.lines),
                o.log_dropped.map(|d| d.bytes)
            ],
        )?;
        if changed == 1 {
            append_in(txn, num, &[RunEvent::status(o.status.as_str(), o.error.clone())])?;
            bump_rev(txn)?;
        }
        Ok(changed == 1)
    })?;
    let run = get_run(store, num)?;
    if ended && let Some(task) = &run.task {
        move_task(store, &run, task)?;
    }
    if ended {
        super::wake::answer_carried(store, &run)?;
    }
    Ok(run)
}

fn move_task(store: &Store, run: &Run, task: &str) -> Result<()> {
    let who = run_identity(run.root, run.workspace.as_deref());
    let holder = store
        .read(|c| Ok(c.query_row("SELECT name FROM agents WHERE id = ?1", [&who.id], |r| r.get(0)).optional()?))?;
    let holds = holder.is_some() && tasks::get(store, task)?.task.assignee == holder;
    let actor = Actor { who, lease_ms: Some(tasks::DEFAULT_LEASE_MS) };
    if !holds {
        return Ok(());
    }
    let change = if run.status == RunStatus::Succeeded {
        let summary: String = run.result.as_deref().unwrap_or("").trim().chars().take(SUMMARY_CHARS).collect();
        TaskChange {
            status: Some(if run.complete_task { Status::Done } else { Status::InReview }),
            summary: Some(if summary.is_empty() { format!("{} finished without a summary", run.id) } else { summary }),
            comment: run.chat_id.as_ref().map(|c| format!("{} succeeded in Cursor chat {c}", run.id)),
            ..Default::default()
        }
    } else {
        let why = run.error.clone().unwrap_or_else(|| run.status.to_string());
        TaskChange {
            release: true,
            handoff: true,
            comment: Some(format!("{} {}: {why}", run.id, run.status)),
            ..Default::default()
        }
    };
    tasks::update(store, &actor, task, &change).map(|_| ())
}

/// Notes the chat a task-bound run works in on its task (once the stream says it).
pub fn note_chat_on_task(store: &Store, num: i64) -> Result<()> {
    let run = get_run(store, num)?;
    if let (Some(task), Some(chat)) = (&run.task, &run.chat_id) {
        let actor =
            Actor { who: run_identity(run.root, run.workspace.as_deref()), lease_ms: Some(tasks::DEFAULT_LEASE_MS) };
        let ch = TaskChange { comment: Some(format!("{} works in Cursor chat {chat}", run.id)), ..Default::default() };
        tasks::update(store, &actor, task, &ch)?;
    }
    Ok(())
}

/// Runs of `runner_pid`'s that were asked to stop.
pub fn cancel_requested(store: &Store, runner_pid: u32) -> Result<Vec<i64>> {
    store.read(|c| {
        Ok(c.prepare_cached(
            "SELECT num FROM runs WHERE status = 'running' AND runner_pid = ?1 AND cancel_requested_at IS NOT NULL",
        )?
        .query_map([runner_pid], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?)
    })
}

/// A workspace file a run placed, with what was there before: a file's bytes (`original`), a
/// symbolic link's target (`original_link`), or nothing. A path ending in `/` is a folder the
/// run created.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PlacedFile {
    pub run: i64,
    pub path: String,
    pub original: Option<Vec<u8>>,
    pub original_link: Option<String>,
    pub placed: Vec<u8>,
    /// The run's workspace (read with the placement; not written by [`record_placement`]).
    pub workspace: Option<String>,
}

/// Records, durably and before the file is touched, what a run is about to write and what the
/// file held. Runs sharing a workspace share the path's placement, counted by their records:
/// the first record's original is the person's and every later one carries it; every record
/// for the path learns what is on disk now (this run's bytes), so whichever run ends last puts
/// the person's own file back.
pub fn record_placement(store: &Store, f: &PlacedFile) -> Result<()> {
    store.durable(|txn| {
        let earlier: Option<(Option<Vec<u8>>, Option<String>)> = txn
            .query_row(
                "SELECT original, original_link FROM run_files WHERE path = ?1 AND restored_at IS NULL
                 ORDER BY rowid LIMIT 1",
                [&f.path],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        let (original, link) = earlier.unwrap_or_else(|| (f.original.clone(), f.original_link.clone()));
        txn.execute(
            "INSERT OR REPLACE INTO run_files(run, path, original, original_link, placed) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![f.run, f.path, original, link, f.placed],
        )?;
        txn.execute(
            "UPDATE run_files SET placed = ?2 WHERE path = ?1 AND restored_at IS NULL AND placed != ?2",
            params![f.path, f.placed],
        )?;
        Ok(())
    })
}

const PLACED: &str = "SELECT f.run, f.path, f.original, f.original_link, f.placed, r.workspace
                      FROM run_files f JOIN runs r ON r.num = f.run";

fn placed_file(r: &rusqlite::Row<'_>) -> rusqlite::Result<PlacedFile> {
    Ok(PlacedFile {
        run: r.get(0)?,
        path: r.get(1)?,
        original: r.get(2)?,
        original_link: r.get(3)?,
        placed: r.get(4)?,
        workspace: r.get(5)?,
    })
}

/// The files `run` placed that still wait to be put back, unless another running run shares
/// the path: then this run's record is done (the other carries the person's original and the
/// bytes on disk) and the last run out restores.
pub fn take_restores(store: &Store, run: i64) -> Result<Vec<PlacedFile>> {
    store.durable(|txn| {
        let mine: Vec<PlacedFile> = txn
            .prepare_cached(&format!("{PLACED} WHERE f.run = ?1 AND f.restored_at IS NULL"))?
            .query_map([run], placed_file)?
            .collect::<rusqlite::Result<_>>()?;
        let mut out = Vec::new();
        for f in mine {
            let shared = txn
                .query_row(
                    "SELECT 1 FROM run_files f JOIN runs r ON r.num = f.run
                     WHERE f.path = ?1 AND f.run != ?2 AND f.restored_at IS NULL AND r.status = 'running' LIMIT 1",
                    params![f.path, run],
                    |_| Ok(()),
                )
                .optional()?
                .is_some();
            if shared {
                txn.execute(
                    "UPDATE run_files SET restored_at = ?3 WHERE run = ?1 AND path = ?2",
                    params![run, f.path, now_ms()],
                )?;
            } else {
                out.push(f);
            }
        }
        Ok(out)
    })
}

/// Runs that are no longer running but left placements not yet put back (a crash, a kill):
/// what a starting runner restores, each through [`take_restores`].
pub fn orphaned_placements(store: &Store) -> Result<Vec<i64>> {
    store.read(|c| {
        Ok(c.prepare_cached(
            "SELECT DISTINCT f.run FROM run_files f JOIN runs r ON r.num = f.run
             WHERE f.restored_at IS NULL AND r.status != 'running' ORDER BY f.run",
        )?
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?)
    })
}

pub fn mark_restored(store: &Store, run: i64, path: &str) -> Result<()> {
    store
        .writer()
        .execute("UPDATE run_files SET restored_at = ?3 WHERE run = ?1 AND path = ?2", params![run, path, now_ms()])?;
    Ok(())
}

/// A run left `running` by a process that is gone, with its agent's process to stop if it lives.
#[derive(Debug, Clone, PartialEq)]
pub struct Orphan {
    pub num: i64,
    pub child_pid: Option<u32>,
    pub child_started: Option<i64>,
}

/// Runs marked running by runners other than `alive` that are not alive any more: they become
/// `lost` (with the reason), and their orphan processes are returned for the caller to stop.
pub fn mark_lost(store: &Store, is_alive: impl Fn(u32) -> bool) -> Result<Vec<Orphan>> {
    let running: Vec<(Option<u32>, Orphan)> = store.read(|c| {
        // Cloud runs outlive their runner (they run at Cursor): a new runner adopts them instead.
        Ok(c.prepare(
            "SELECT num, runner_pid, child_pid, child_started FROM runs WHERE status = 'running' AND kind = 'local'",
        )?
        .query_map([], |r| Ok((r.get(1)?, Orphan { num: r.get(0)?, child_pid: r.get(2)?, child_started: r.get(3)? })))?
        .collect::<rusqlite::Result<_>>()?)
    })?;
    let mut out = Vec::new();
    for (runner, orphan) in running {
        if runner.is_some_and(&is_alive) {
            continue;
        }
        let num = orphan.num;
        let o = Outcome {
            status: RunStatus::Lost,
            error: Some("Tether stopped while the run was going (its agent was stopped too)".into()),
            ..Default::default()
        };
        finish(store, num, &o)?;
        out.push(orphan);
    }
    Ok(out)
}

pub fn get_run(store: &Store, num_or_id: impl RunKey) -> Result<Run> {
    let num = num_or_id.num()?;
    store.read(|c| load(c, num))
}

/// `R-3`, `3` or a number.
pub trait RunKey {
    fn num(&self) -> Result<i64>;
}

impl RunKey for i64 {
    fn num(&self) -> Result<i64> {
        Ok(*self)
    }
}

impl RunKey for &str {
    fn num(&self) -> Result<i64> {
        parse_id(self)
    }
}

impl RunKey for &String {
    fn num(&self) -> Result<i64> {
        parse_id(self)
    }
}

impl RunKey for String {
    fn num(&self) -> Result<i64> {
        parse_id(self)
    }
}

/// A run with its events: all, or the last `tail` ones.
pub fn get(store: &Store, id: &str, tail: Option<usize>) -> Result<RunDetail> {
    get_page(store, id, None, tail)
}

/// A run with the last `limit` events (all when `None`) before event `before` (the newest when
/// `None`): a view pages back through a big log instead of loading it whole.
pub fn get_page(store: &Store, id: &str, before: Option<i64>, limit: Option<usize>) -> Result<RunDetail> {
    let num = parse_id(id)?;
    store.read(|c| {
        let run = load(c, num)?;
        let limit = limit.map_or(-1, |t| t as i64);
        let mut events: Vec<StoredEvent> = c
            .prepare_cached(
                "SELECT seq, at, data FROM run_events WHERE run = ?1 AND seq < ?3 ORDER BY seq DESC LIMIT ?2",
            )?
            .query_map(params![num, limit, before.unwrap_or(i64::MAX)], event_row)?
            .collect::<rusqlite::Result<_>>()?;
        let events_total: i64 = c.query_row("SELECT count(*) FROM run_events WHERE run = ?1", [num], |r| r.get(0))?;
        events.reverse();
        let children = c
            .prepare_cached("SELECT num FROM runs WHERE parent = ?1 ORDER BY num")?
            .query_map([num], |r| r.get::<_, i64>(0).map(format_id))?
            .collect::<rusqlite::Result<_>>()?;
        let signals = c
            .prepare_cached("SELECT signal FROM run_signals WHERE run = ?1 ORDER BY signal")?
            .query_map([num], |r| r.get::<_, i64>(0).map(super::signals::format_id))?
            .collect::<rusqlite::Result<_>>()?;
        Ok(RunDetail { run, events, events_total, children, signals })
    })
}

/// Events after `seq`, oldest first (for following a run).
pub fn events_after(store: &Store, id: &str, seq: i64, limit: usize) -> Result<Vec<StoredEvent>> {
    let num = parse_id(id)?;
    store.read(|c| {
        let known = c.query_row("SELECT 1 FROM runs WHERE num = ?1", [num], |_| Ok(())).optional()?.is_some();
        if !known {
            return Err(Error::RunNotFound(id.to_owned()));
        }
        Ok(c.prepare_cached("SELECT seq, at, data FROM run_events WHERE run = ?1 AND seq > ?2 ORDER BY seq LIMIT ?3")?
            .query_map(params![num, seq, limit as i64], event_row)?
            .collect::<rusqlite::Result<_>>()?)
    })
}

fn event_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<StoredEvent> {
    let data: String = r.get(2)?;
    let event = serde_json::from_str(&data)
        .unwrap_or_else(|e| RunEvent::Raw { text: data.clone(), reason: format!("unreadable stored event: {e}") });
    let at_ms: i64 = r.get(1)?;
    Ok(StoredEvent { seq: r.get(0)?, at: iso(at_ms), at_ms, event })
}

/// Runs, newest first.
pub fn list(store: &Store, f: &RunFilter) -> Result<Vec<Run>> {
    let statuses: Vec<&str> = f.statuses.iter().map(|s| s.as_str()).collect();
    let task = f.task.as_deref().map(tasks::parse_id).transpose()?;
    let limit = if f.limit == 0 { 200 } else { f.limit.min(10_000) } as i64;
    store.read(|c| {
        let nums: Vec<i64> = c
            .prepare_cached(
                "SELECT num FROM runs
                 WHERE (?1 = '[]' OR status IN (SELECT value FROM json_each(?1)))
                   AND (?2 IS NULL OR task = ?2) AND (?3 IS NULL OR chat_id = ?3)
                 ORDER BY num DESC LIMIT ?4",
            )?
            .query_map(params![serde_json::to_string(&statuses)?, task, f.chat, limit], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        nums.into_iter().map(|n| load(c, n)).collect()
    })
}

/// How many runs are queued and running now (the tray).
pub fn active_counts(store: &Store) -> Result<(usize, usize)> {
    store.read(|c| {
        Ok(c.query_row(
            "SELECT coalesce(sum(status = 'queued'), 0), coalesce(sum(status = 'running'), 0) FROM runs
             WHERE status IN ('queued', 'running')",
            [],
            |r| Ok((r.get::<_, i64>(0)? as usize, r.get::<_, i64>(1)? as usize)),
        )?)
    })
}

/// The run that started a Cursor chat, if one did (the reader's "started by run R-n").
pub fn for_chat(store: &Store, chat: &str) -> Result<Option<String>> {
    store.read(|c| {
        Ok(c.query_row("SELECT num FROM runs WHERE chat_id = ?1 ORDER BY num LIMIT 1", [chat], |r| r.get::<_, i64>(0))
            .optional()?
            .map(format_id))
    })
}

const RUN_COLS: &str = "num, kind, prompt, workspace, model, mode, role, task, complete_task, permissions, timeout_ms,
    parent, status, chat_id, exit_code, result, error, warning, duration_ms, duration_api_ms, input_tokens,
    output_tokens, cache_read_tokens, cache_write_tokens, requested_by, cancel_requested_at, created_at, started_at,
    ended_at, resume_chat, coalesce(root, num), cloud, held, log_dropped_lines, log_dropped_bytes";

pub(crate) fn load(c: &rusqlite::Connection, num: i64) -> Result<Run> {
    c.prepare_cached(&format!("SELECT {RUN_COLS} FROM runs WHERE num = ?1"))?
        .query_row([num], |r| {
            let perms: String = r.get(9)?;
            let tokens: Option<i64> = r.get(20)?;
            Ok(Run {
                id: format_id(r.get(0)?),
                kind: r.get(1)?,
                prompt: r.get(2)?,
                workspace: r.get(3)?,
                model: r.get(4)?,
                mode: r.get::<_, String>(5)?.parse().unwrap_or_default(),
                role: r.get(6)?,
                task: r.get::<_, Option<i64>>(7)?.map(tasks::format_id),
                complete_task: r.get(8)?,
                permissions: serde_json::from_str(&perms).unwrap_or_default(),
                timeout_secs: r.get::<_, i64>(10)? / 1000,
                parent: r.get::<_, Option<i64>>(11)?.map(format_id),
                status: r.get::<_, String>(12)?.parse().unwrap_or(RunStatus::Lost),
                chat_id: r.get(13)?,
                exit_code: r.get(14)?,
                result: r.get(15)?,
                error: r.get(16)?,
                warning: r.get(17)?,
                duration_ms: r.get(18)?,
                duration_api_ms: r.get(19)?,
                usage: match tokens {
                    Some(input_tokens) => Some(Usage {
                        input_tokens,
                        output_tokens: r.get::<_, Option<i64>>(21)?.unwrap_or(0),
                        cache_read_tokens: r.get::<_, Option<i64>>(22)?.unwrap_or(0),
                        cache_write_tokens: r.get::<_, Option<i64>>(23)?.unwrap_or(0),
                    }),
                    None => None,
                },
                requested_by: r.get(24)?,
                cancel_requested: r.get::<_, Option<i64>>(25)?.is_some(),
                created_at: iso(r.get(26)?),
                started_at: r.get::<_, Option<i64>>(27)?.map(iso),
                ended_at: r.get::<_, Option<i64>>(28)?.map(iso),
                resume_chat: r.get(29)?,
                root: r.get(30)?,
                cloud: r.get::<_, Option<String>>(31)?.and_then(|c| serde_json::from_str(&c).ok()),
                held: r.get(32)?,
                log_dropped: match r.get::<_, Option<i64>>(33)? {
                    Some(lines) => Some(LogDropped { lines, bytes: r.get::<_, Option<i64>>(34)?.unwrap_or(0) }),
                    None => None,
                },
            })
        })
        .optional()?
        .ok_or_else(|| Error::RunNotFound(format_id(num)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn valid(prompt: &str, ws: &str) -> ValidRun {
        ValidRun {
            prompt: prompt.into(),
            task: None,
            workspace: ws.into(),
            model: None,
            mode: RunMode::Agent,
            role: None,
            timeout_ms: 60_000,
            permissions: Permissions::default(),
            complete: false,
            parent: None,
            resume_chat: None,
            cloud: None,
        }
    }

    #[test]
    fn the_queue_respects_both_limits_and_order() {
        let s = Store::open_in_memory().unwrap();
        for (p, ws) in [("a", "/w1"), ("b", "/w1"), ("c", "/w2"), ("d", "/w3")] {
            create(&s, "me", &valid(p, ws)).unwrap();
        }
        let limits = Limits { total: 2, per_workspace: 1, cloud: 2, only: None };
        let first = claim_next(&s, 1, limits).unwrap().unwrap();
        let second = claim_next(&s, 1, limits).unwrap().unwrap();
        assert_eq!((first.prompt.as_str(), second.prompt.as_str()), ("a", "c"), "b waits for /w1");
        assert!(claim_next(&s, 1, limits).unwrap().is_none(), "two in all");
        finish(&s, first.num(), &Outcome { status: RunStatus::Succeeded, exit_code: Some(0), ..Default::default() })
            .unwrap();
        assert_eq!(claim_next(&s, 1, limits).unwrap().unwrap().prompt, "b");
    }

    #[test]
    fn events_carry_the_chat_and_the_result_and_cancel_is_exactly_once() {
        let s = Store::open_in_memory().unwrap();
        let r = create(&s, "me", &valid("go", "/w")).unwrap();
        claim_next(&s, 7, Limits { total: 3, per_workspace: 1, cloud: 2, only: None }).unwrap();
        let ev = append_events(
            &s,
            r.num(),
            &[
                RunEvent::Init { session_id: "chat-1".into(), model: None, cwd: None },
                RunEvent::Result {
                    is_error: false,
                    text: "all done".into(),
                    duration_ms: Some(5),
                    duration_api_ms: Some(4),
                    usage: Some(Usage { input_tokens: 10, output_tokens: 2, ..Default::default() }),
                },
            ],
        )
        .unwrap();
        assert_eq!(ev.iter().map(|e| e.seq).collect::<Vec<_>>(), vec![3, 4], "after queued and running");
        let got = get_run(&s, r.num()).unwrap();
        assert_eq!((got.chat_id.as_deref(), got.result.as_deref()), (Some("chat-1"), Some("all done")));
        assert_eq!(got.usage.unwrap().input_tokens, 10);
        assert_eq!(cancel_requested(&s, 7).unwrap(), Vec::<i64>::new());
        request_cancel(&s, &r.id).unwrap();
        assert_eq!(cancel_requested(&s, 7).unwrap(), vec![r.num()]);
        finish(&s, r.num(), &Outcome { status: RunStatus::Cancelled, ..Default::default() }).unwrap();
        finish(&s, r.num(), &Outcome { status: RunStatus::Succeeded, ..Default::default() }).unwrap();
        assert_eq!(get_run(&s, r.num()).unwrap().status, RunStatus::Cancelled, "the first ending stands");
        assert_eq!(request_cancel(&s, &r.id).unwrap_err().code(), crate::error::ErrorCode::Conflict);
    }

    #[test]
    fn a_dead_runner_leaves_lost_runs_and_files_to_restore() {
        let s = Store::open_in_memory().unwrap();
        let r = create(&s, "me", &valid("go", "/w")).unwrap();
        claim_next(&s, 4242, Limits { total: 3, per_workspace: 1, cloud: 2, only: None }).unwrap();
        set_child(&s, r.num(), 999, Some(12)).unwrap();
        let f = PlacedFile {
            run: r.num(),
            path: "/w/.cursor/cli.json".into(),
            original: Some(b"mine".to_vec()),
            placed: b"run".to_vec(),
            ..PlacedFile::default()
        };
        record_placement(&s, &f).unwrap();
        assert!(orphaned_placements(&s).unwrap().is_empty(), "its run still runs");
        let lost = mark_lost(&s, |pid| pid != 4242).unwrap();
        assert_eq!(lost, vec![Orphan { num: r.num(), child_pid: Some(999), child_started: Some(12) }]);
        assert_eq!(get_run(&s, r.num()).unwrap().status, RunStatus::Lost);
        assert_eq!(orphaned_placements(&s).unwrap(), vec![r.num()]);
        let back = take_restores(&s, r.num()).unwrap();
        assert_eq!(back, vec![PlacedFile { workspace: Some("/w".into()), ..f }]);
    }

    /// Runs sharing a workspace share a placement: whichever order they end in, only the last one
    /// out restores, and it restores the person's bytes (or their link) over the bytes on disk.
    #[test]
    fn overlapping_placements_are_counted_and_the_last_run_out_restores_the_persons_file() {
        let limits = Limits { total: 3, per_workspace: 3, cloud: 2, only: None };
        for order in [[0, 1, 2], [2, 1, 0], [1, 2, 0]] {
            let s = Store::open_in_memory().unwrap();
            let runs: Vec<Run> = (0..3).map(|i| create(&s, "me", &valid(&format!("r{i}"), "/w")).unwrap()).collect();
            for _ in 0..3 {
                claim_next(&s, 1, limits).unwrap().unwrap();
            }
            let path = "/w/.cursor/cli.json".to_owned();
            for (i, r) in runs.iter().enumerate() {
                // Each run reads what is on disk: the person's link first, then the earlier run's bytes.
                let (original, original_link) =
                    if i == 0 { (None, Some("/home/me/.ssh/key".to_owned())) } else { (Some(vec![i as u8]), None) };
                let f = PlacedFile {
                    run: r.num(),
                    path: path.clone(),
                    original,
                    original_link,
                    placed: vec![10 + i as u8],
                    workspace: None,
                };
                record_placement(&s, &f).unwrap();
            }
            for (n, i) in order.iter().enumerate() {
                let r = &runs[*i];
                let back = take_restores(&s, r.num()).unwrap();
                finish(&s, r.num(), &Outcome { status: RunStatus::Succeeded, ..Default::default() }).unwrap();
                if n < 2 {
                    assert!(back.is_empty(), "{order:?}: run {i} ended while others still run");
                    continue;
                }
                assert_eq!(back.len(), 1, "{order:?}");
                let last = &back[0];
                assert_eq!(last.original_link.as_deref(), Some("/home/me/.ssh/key"), "the person's link, {order:?}");
                assert_eq!(last.original, None);
                assert_eq!(last.placed, vec![12], "what is on disk: the last placement, {order:?}");
            }
        }
    }
}
