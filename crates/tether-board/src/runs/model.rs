//! A run's data model: what hosts ask for ([`NewRun`]), what the board keeps ([`Run`], its
//! status, mode, permissions; a cloud run's [`CloudSpec`]), and its stored events. Types and
//! their parsing only: no SQL.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::event::{RunEvent, Usage};
use crate::error::{Error, Result};
use crate::principal::Identity;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, ts_rs::TS)]
#[ts(export, export_to = "board.ts")]
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
    /// Stopped (or, when its spend was known only at its end, marked) for going over a budget.
    OverBudget,
}

impl RunStatus {
    pub const ALL: [RunStatus; 8] = [
        RunStatus::Queued,
        RunStatus::Running,
        RunStatus::Succeeded,
        RunStatus::Failed,
        RunStatus::TimedOut,
        RunStatus::Cancelled,
        RunStatus::Lost,
        RunStatus::OverBudget,
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
            RunStatus::OverBudget => "over_budget",
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
                format!("{s:?}: use queued, running, succeeded, failed, timed_out, cancelled, lost or over_budget"),
            )
        })
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema, ts_rs::TS)]
#[ts(export, export_to = "board.ts")]
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
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema, ts_rs::TS)]
#[ts(export, export_to = "board.ts")]
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

    pub(super) fn validate(&self) -> Result<()> {
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
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema, ts_rs::TS)]
#[ts(export, export_to = "board.ts", optional_fields = nullable)]
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
    #[ts(optional, as = "Option<Permissions>")]
    pub permissions: Permissions,
    /// On success the bound task goes to done instead of in_review.
    #[serde(default)]
    #[ts(optional, as = "Option<bool>")]
    pub complete: bool,
    /// `local` (default): the Cursor CLI on this machine, in `workspace`. `cloud`: a Cursor Cloud
    /// agent working on a GitHub repository (`repo`), which needs a Cursor API key.
    #[serde(default, rename = "where")]
    pub place: Option<String>,
    /// Cloud runs: the GitHub repository, e.g. https://github.com/org/repo (default: the
    /// workspace's or the task's project's `origin` remote).
    #[serde(default)]
    pub repo: Option<String>,
    /// The branch, tag or commit to start from. Local runs: the base of the run's worktree
    /// (default: the checkout's current branch). Cloud runs: default the repository's default.
    #[serde(default, rename = "ref")]
    pub git_ref: Option<String>,
    /// Cloud runs: an existing branch to work on and push to (instead of a new `cursor/…` one).
    #[serde(default)]
    pub branch: Option<String>,
    /// Cloud runs: open a pull request when done.
    #[serde(default)]
    #[ts(optional, as = "Option<bool>")]
    pub auto_pr: bool,
    /// Local runs: work in the folder itself instead of a worktree of its own (the old way; two
    /// runs and the person then share the checkout).
    #[serde(default)]
    #[ts(optional, as = "Option<bool>")]
    pub in_place: bool,
    /// What this run may spend: tokens (`200k`) or estimated dollars (`$2`). The run stops when
    /// it goes over (at its end when the spend is known only then). Default: `usage.run_budget`,
    /// else the role's.
    #[serde(default)]
    #[ts(optional, as = "Option<String>")]
    pub budget: Option<crate::usage::Budget>,
    /// Team mode: the machine that runs it (by its name in the team); default any runner, this
    /// machine first when it runs a daemon.
    #[serde(default)]
    pub on: Option<String>,
    /// Team mode: labels a runner must have to take it (e.g. `gpu`, `linux`).
    #[serde(default)]
    #[ts(optional, as = "Option<Vec<String>>")]
    pub labels: Vec<String>,
}

/// Where a run may go on a team's board (on this machine's own board, anywhere is here).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunTarget {
    /// The machine it must run on.
    pub machine: Option<String>,
    /// What a runner must have to take it.
    pub labels: Vec<String>,
    /// The workspace as another machine finds it; without it, only the machine that queued the
    /// run can run it.
    pub repo: Option<RepoRef>,
}

/// A workspace named the way every machine can find it: its repository's remote and the folder
/// inside the repository (`""`: the top).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RepoRef {
    pub url: String,
    pub subdir: String,
}

/// Where a local run works, decided when it is queued.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Isolation {
    /// A cloud run: Cursor's machine, not this one.
    #[default]
    Cloud,
    /// In the workspace itself, with the reason said on the run.
    InPlace(String),
    /// A new worktree of `repo` (the checkout's top folder), under `dir`, from `base` (a branch,
    /// tag or commit; default the checkout's branch when the run starts); the agent works in
    /// `subdir` of it.
    New { repo: String, subdir: String, base: Option<String>, dir: String },
    /// The worktree an earlier run of the chain or the task made.
    Continue(i64),
}

/// A worktree's life: planned (path and branch decided), creating (git is making it), ready,
/// removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[ts(export, export_to = "board.ts")]
#[serde(rename_all = "snake_case")]
pub enum WorktreeState {
    #[default]
    Planned,
    Creating,
    Ready,
    Removed,
}

impl WorktreeState {
    pub fn as_str(self) -> &'static str {
        match self {
            WorktreeState::Planned => "planned",
            WorktreeState::Creating => "creating",
            WorktreeState::Ready => "ready",
            WorktreeState::Removed => "removed",
        }
    }
}

impl FromStr for WorktreeState {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        [WorktreeState::Planned, WorktreeState::Creating, WorktreeState::Ready, WorktreeState::Removed]
            .into_iter()
            .find(|w| w.as_str() == s)
            .ok_or_else(|| Error::invalid("worktree state", s.to_owned()))
    }
}

/// The worktree and branch a local run works on, beside the person's checkout.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, ts_rs::TS)]
#[ts(export, export_to = "board.ts")]
pub struct RunWorktree {
    pub id: i64,
    /// The person's checkout.
    pub repo: String,
    /// Where in the checkout the run's workspace is ("" for its top).
    pub subdir: String,
    pub path: String,
    pub branch: String,
    /// The branch it started from (`None`: a detached checkout or a tag/commit).
    pub base_branch: Option<String>,
    pub base_commit: Option<String>,
    pub state: WorktreeState,
    pub created_at: String,
    pub removed_at: Option<String>,
    /// Why it was removed: discarded, merged, reaped, never made.
    pub removed_why: Option<String>,
    pub merged_at: Option<String>,
    pub merged_commit: Option<String>,
    pub merged_into: Option<String>,
    pub pr_url: Option<String>,
    pub pr_number: Option<i64>,
    /// What the worktree's setup made or copied (never committed as the run's work).
    pub setup_paths: Vec<String>,
}

impl RunWorktree {
    /// Where the agent works: the worktree's counterpart of the person's workspace.
    pub fn workspace(&self) -> String {
        if self.subdir.is_empty() {
            self.path.clone()
        } else {
            format!("{}/{}", self.path.trim_end_matches('/'), self.subdir)
        }
    }
}

/// What a run's branch changed against its base, in numbers (the files and the patch are the
/// diff's).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[ts(export, export_to = "board.ts")]
pub struct ChangeSummary {
    pub files: u32,
    pub added: u64,
    pub deleted: u64,
    /// Files whose lines git does not count.
    pub binary: u32,
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
    pub isolation: Isolation,
    pub budget: Option<crate::usage::Budget>,
    pub target: RunTarget,
}

#[derive(Debug, Clone, Serialize, PartialEq, ts_rs::TS)]
#[ts(export, export_to = "board.ts")]
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
    /// A local run's own worktree and branch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worktree: Option<RunWorktree>,
    /// Why a local run works in the person's folder itself.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub in_place: Option<String>,
    /// The branch's commit when the run ended.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub head_commit: Option<String>,
    /// What the branch changed against its base when the run ended.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub changes: Option<ChangeSummary>,
    /// This run's own budget.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional, as = "Option<String>")]
    pub budget: Option<crate::usage::Budget>,
    /// What Cursor said the run cost (cloud runs), US dollars; absent when it did not say.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub cost_usd: Option<f64>,
    /// Where `usage` came from: `result` (the CLI's final figures), `turns` (summed per turn, the
    /// run has not ended), `cloud` (Cursor Cloud's usage API).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub usage_source: Option<String>,
    /// Over budget, and the person let its chain go on.
    pub budget_allowed: bool,
    /// Team mode: the machine whose runner took it.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub machine: Option<String>,
    /// Team mode: the machine that queued it.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub origin: Option<String>,
    /// Team mode: the machine it must run on.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub on: Option<String>,
    /// Team mode: the labels a runner needs to take it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[ts(optional, as = "Option<Vec<String>>")]
    pub labels: Vec<String>,
    /// The workspace as another machine finds it.
    #[serde(skip)]
    pub repo: Option<RepoRef>,
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
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[ts(export, export_to = "board.ts")]
pub struct LogDropped {
    pub lines: i64,
    pub bytes: i64,
}

/// An event as stored: its place in the run's log and when it was seen.
#[derive(Debug, Clone, Serialize, PartialEq, ts_rs::TS)]
#[ts(export, export_to = "board.ts")]
pub struct StoredEvent {
    pub seq: i64,
    pub at: String,
    #[serde(skip)]
    pub at_ms: i64,
    #[serde(flatten)]
    pub event: RunEvent,
}

#[derive(Debug, Clone, Serialize, PartialEq, ts_rs::TS)]
#[ts(export, export_to = "board.ts")]
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
    crate::ids::RunId::parse(s).map(crate::ids::RunId::num)
}

pub fn format_id(num: i64) -> String {
    crate::ids::RunId::new(num).to_string()
}

/// The agent a run acts as on the board: one per chain (a run and its follow-ups), named after
/// the chain's first run, `root`.
pub fn run_identity(root: i64, workspace: Option<&str>) -> Identity {
    Identity::run(crate::ids::RunId::new(root), workspace)
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

impl RunKey for crate::ids::RunId {
    fn num(&self) -> Result<i64> {
        Ok(crate::ids::RunId::num(*self))
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

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[ts(export, export_to = "board.ts")]
pub struct CloudSpec {
    /// `https://github.com/org/repo`.
    pub repo: String,
    /// The ref the agent starts from.
    #[serde(default, rename = "ref", skip_serializing_if = "Option::is_none")]
    pub git_ref: Option<String>,
    /// An existing branch the agent works on and pushes to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    #[serde(default)]
    #[ts(optional, as = "Option<bool>")]
    pub auto_pr: bool,
    /// Cursor's agent id, minted by Tether before launching (`bc-<uuid>`): a launch retried
    /// after a crash or a lost answer finds the agent instead of starting a second one.
    pub agent_id: String,
    /// This run continues an agent an earlier run launched (a follow-up), rather than launching.
    #[serde(default)]
    pub continues: bool,
    /// Cursor's id of this run (`run-<uuid>`), once launched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// The agent's page at cursor.com.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_url: Option<String>,
    /// The status as Cursor last said it (`CREATING`, `RUNNING`, `FINISHED`, `EXPIRED`, or
    /// anything new), kept as given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_status: Option<String>,
    /// The branch the agent pushed (Cursor's per-agent git state).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pushed_branch: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pr_url: Option<String>,
    /// The last stream event id seen: a re-attached runner resumes the stream from it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_event_id: Option<String>,
    /// Launched through v0 with a webhook to Tether's public URL.
    #[serde(default)]
    pub webhook: bool,
}

impl CloudSpec {
    pub fn new(repo: String, git_ref: Option<String>, branch: Option<String>, auto_pr: bool) -> Self {
        Self { repo, git_ref, branch, auto_pr, agent_id: mint_agent_id(), ..Self::default() }
    }

    /// The spec of a follow-up: the same agent (its repository and git state), a new run.
    pub fn followup(&self) -> Self {
        Self {
            repo: self.repo.clone(),
            git_ref: self.git_ref.clone(),
            branch: self.branch.clone(),
            auto_pr: self.auto_pr,
            agent_id: self.agent_id.clone(),
            continues: true,
            agent_url: self.agent_url.clone(),
            pushed_branch: self.pushed_branch.clone(),
            pr_url: self.pr_url.clone(),
            ..Self::default()
        }
    }
}

/// A fresh `bc-<uuid v4>`.
pub fn mint_agent_id() -> String {
    let mut b = [0u8; 16];
    getrandom::fill(&mut b).expect("the OS random source");
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!("bc-{}-{}-{}-{}-{}", &h[..8], &h[8..12], &h[12..16], &h[16..20], &h[20..])
}
