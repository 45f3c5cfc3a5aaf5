//! The person's settings, kept in `settings.json` in the data dir: where Cursor's data is, the
//! port, desktop notifications and launch at login.
//!
//! Precedence is flag > environment > this file > default, so a test or a server started with
//! `TETHER_CURSOR_DIR` or `--port` is never redirected by a file. The desktop shell reads
//! `notifications` and `launch_at_login` itself; this module only stores and validates.
//! No host types here (no axum, clap or tauri).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::board::usage::Budget;
use crate::error::{Error, Result};
use crate::paths::{CursorLocations, Paths, SavedCursorDirs};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
#[serde(default)]
pub struct Settings {
    /// Cursor's `User` folder (holding `globalStorage/`), instead of the detected one.
    pub cursor_user_dir: Option<PathBuf>,
    /// Cursor's home (`~/.cursor`, the CLI's chats and transcripts), instead of the detected one.
    pub cursor_home: Option<PathBuf>,
    /// The loopback port for MCP and the GUI, instead of the default 47821.
    pub port: Option<u16>,
    /// Desktop notifications when something needs attention (desktop app only).
    pub notifications: bool,
    /// Start the desktop app when the person logs in.
    pub launch_at_login: bool,
    /// Never keep the MCP token in a file: with no OS keyring reachable, refuse to start instead
    /// of falling back to a 0600 file in the data dir (the default, with a warning).
    pub keyring_only: bool,
    /// Minutes a signal's obligation may stay open, per signal type, before it needs attention.
    pub signal_sla_minutes: BTreeMap<String, u32>,
    /// How Tether runs the Cursor CLI.
    pub runs: RunSettings,
    /// How Tether runs Cursor Cloud agents.
    pub cloud: CloudSettings,
    /// Where runs' pull requests go.
    pub github: GithubSettings,
    /// Budgets and prices.
    pub usage: UsageSettings,
    /// Which other agents' chats are read beside Cursor's.
    pub agents: AgentSettings,
}

/// Other agents whose chats Tether reads (read only) beside Cursor's: each on unless turned off.
/// An agent turned off is neither indexed nor watched, and its chats leave the index.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
#[serde(default)]
pub struct AgentSettings {
    /// Claude Code (`~/.claude/projects`).
    pub claude_code: bool,
    /// Codex CLI (`~/.codex/sessions`).
    pub codex: bool,
    /// Gemini CLI (`~/.gemini/tmp/<project>/chats`).
    pub gemini: bool,
}

impl Default for AgentSettings {
    fn default() -> Self {
        Self { claude_code: true, codex: true, gemini: true }
    }
}

impl AgentSettings {
    /// The agents turned off, by their `source` name, sorted.
    pub fn off(&self) -> Vec<String> {
        [("claude-code", self.claude_code), ("codex", self.codex), ("gemini", self.gemini)]
            .into_iter()
            .filter(|(_, on)| !on)
            .map(|(a, _)| a.to_owned())
            .collect()
    }
}

/// A change to [`AgentSettings`].
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentSettingsPatch {
    pub claude_code: Option<bool>,
    pub codex: Option<bool>,
    pub gemini: Option<bool>,
}

/// Budgets (tokens like `200k`, or estimated dollars like `$2`) and the price table's overrides.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
#[serde(default)]
pub struct UsageSettings {
    /// Each run's budget unless it sets its own.
    #[ts(as = "Option<String>")]
    pub run_budget: Option<Budget>,
    /// What all runs may spend in a day (the person's local day). Once spent, new runs wait in
    /// the queue until the next day or until it is raised, and running ones stop.
    #[ts(as = "Option<String>")]
    pub daily_budget: Option<Budget>,
    /// What the runs of a role may spend in a day, by role name.
    #[ts(as = "BTreeMap<String, String>")]
    pub role_budgets: BTreeMap<String, Budget>,
    /// Cache reads count towards token budgets (they are most of an agent's tokens, and cost a
    /// tenth of fresh input); off: input, output and cache writes only.
    pub count_cache_reads: bool,
    /// Prices per million tokens by model id, over the table Tether ships (`tether usage prices`).
    pub prices: BTreeMap<String, crate::usage::Price>,
}

impl Default for UsageSettings {
    fn default() -> Self {
        Self {
            run_budget: None,
            daily_budget: None,
            role_budgets: BTreeMap::new(),
            count_cache_reads: true,
            prices: BTreeMap::new(),
        }
    }
}

/// A change to the usage settings; each field as in [`SettingsPatch`]. Role budgets and prices
/// merge into the saved ones (`null` removes one).
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UsageSettingsPatch {
    #[serde(default, deserialize_with = "double_option")]
    pub run_budget: Option<Option<Budget>>,
    #[serde(default, deserialize_with = "double_option")]
    pub daily_budget: Option<Option<Budget>>,
    pub role_budgets: Option<BTreeMap<String, Option<Budget>>>,
    pub count_cache_reads: Option<bool>,
    pub prices: Option<BTreeMap<String, Option<crate::usage::Price>>>,
}

/// GitHub, for runs' pull requests.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
#[serde(default)]
pub struct GithubSettings {
    /// GitHub's REST API base (an Enterprise server's is `https://HOST/api/v3`); default
    /// api.github.com. `TETHER_GITHUB_API_URL` wins over it.
    pub api_url: Option<String>,
}

/// A change to the GitHub settings; each field as in [`SettingsPatch`].
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GithubSettingsPatch {
    #[serde(default, deserialize_with = "double_option")]
    pub api_url: Option<Option<String>>,
}

impl Settings {
    /// GitHub's API base: `TETHER_GITHUB_API_URL`, else the setting, else api.github.com; https,
    /// or http to this machine only (a fake, a proxy).
    pub fn github_api(&self) -> Result<String> {
        let env = std::env::var("TETHER_GITHUB_API_URL").ok().filter(|v| !v.trim().is_empty());
        match env.or_else(|| self.github.api_url.clone()) {
            Some(u) => check_remote_url("GitHub API URL", &u),
            None => Ok(tether_github::DEFAULT_API.to_owned()),
        }
    }
}

/// The loopback port of MCP and the GUI unless `--port`, `TETHER_PORT` or the settings say
/// otherwise (documented in the README).
pub const DEFAULT_PORT: u16 = 47821;

/// Runs of Cursor Cloud agents.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
#[serde(default)]
pub struct CloudSettings {
    /// Cursor's API, instead of https://api.cursor.com (`TETHER_CURSOR_API_URL` wins): https, or
    /// http to this machine only.
    pub api_url: Option<String>,
    /// Cloud runs at once.
    pub max_running: u32,
    /// How often a cloud run's status is read when its stream is gone (seconds).
    pub poll_secs: u32,
    /// A cloud run's wall-clock limit unless it asks for another.
    pub timeout_minutes: u32,
    /// Where Cursor's servers reach this Tether (a tunnel of yours), for webhooks and agents
    /// calling back; unset: stream and polling only.
    pub public_url: Option<String>,
}

impl Default for CloudSettings {
    fn default() -> Self {
        Self { api_url: None, max_running: 5, poll_secs: 10, timeout_minutes: 60, public_url: None }
    }
}

/// A change to the cloud settings; each field as in [`SettingsPatch`].
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CloudSettingsPatch {
    #[serde(default, deserialize_with = "double_option")]
    pub api_url: Option<Option<String>>,
    pub max_running: Option<u32>,
    pub poll_secs: Option<u32>,
    pub timeout_minutes: Option<u32>,
    #[serde(default, deserialize_with = "double_option")]
    pub public_url: Option<Option<String>>,
}

/// Cursor's API unless told otherwise.
pub const CURSOR_API_URL: &str = "https://api.cursor.com";

/// Checks a base URL for Cursor's API or our public URL: `https:` anywhere, `http:` only to a
/// loopback address (a local fake or proxy) — nothing that would send the API key in the clear
/// or let a setting aim requests at the local network. Returns it without a trailing `/`.
pub fn check_remote_url(what: &'static str, raw: &str) -> Result<String> {
    // The URL as given, its user and password (if any) left out: a refusal is shown and logged.
    let shown = tether_github::redact_userinfo(raw.trim());
    let bad = |why: &str| Error::invalid(what, format!("{shown:?}: {why}"));
    let u = url::Url::parse(raw.trim()).map_err(|e| bad(&e.to_string()))?;
    if !u.username().is_empty() || u.password().is_some() {
        return Err(bad("no user or password in the URL"));
    }
    if u.query().is_some() || u.fragment().is_some() {
        return Err(bad("no query or fragment"));
    }
    let loopback = match u.host() {
        Some(url::Host::Ipv4(a)) => a.is_loopback(),
        Some(url::Host::Ipv6(a)) => a.is_loopback(),
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        None => return Err(bad("no host")),
    };
    match u.scheme() {
        "https" => {}
        "http" if loopback => {}
        "http" => return Err(bad("http only to this machine (127.0.0.1, ::1, localhost); use https")),
        s => return Err(bad(&format!("{s}: use https"))),
    }
    Ok(u.as_str().trim_end_matches('/').to_owned())
}

/// Runs of the Cursor CLI agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
#[serde(default)]
pub struct RunSettings {
    /// The Cursor CLI binary, instead of `TETHER_CURSOR_AGENT` or `cursor-agent` / `agent` on PATH.
    pub cursor_agent: Option<PathBuf>,
    /// Folders runs may work in, besides the projects Tether has seen in Cursor's history.
    pub roots: Vec<PathBuf>,
    /// Runs at once in one workspace.
    pub max_per_workspace: u32,
    /// Runs at once in all.
    pub max_total: u32,
    /// A run's wall-clock limit unless it asks for another.
    pub timeout_minutes: u32,
    /// How long the CLI may linger after its result before Tether ends it.
    pub result_grace_secs: u32,
    /// How long a stopped run has between SIGTERM and SIGKILL.
    pub kill_grace_secs: u32,
    /// How often an hour at most one agent (an idle chat Tether ran) is woken by a follow-up run
    /// for the signals waiting for it, when its person turned that on.
    pub resume_wakes_per_hour: u32,
    /// Senders outside this machine (agent names, e.g. `run R-7` for a cloud run) whose signals
    /// may wake a chat with write or shell permissions without asking first. Anyone else's wait
    /// in the Inbox for the person's approval.
    pub wake_remote_senders: Vec<String>,
    /// How much of a run's output is kept (MiB); past it lines are counted, not stored, and the
    /// run says how many were left out. Its start, result and status changes are always kept.
    pub max_log_mb: u32,
    /// A local run on a git repository works in a worktree of its own (off: in the folder itself,
    /// as `--in-place` asks for one run).
    pub isolate: bool,
    /// Runs at once in worktrees of one repository.
    pub max_per_repo: u32,
    /// Where runs' worktrees go (default: `worktrees/` in Tether's data folder); never inside a
    /// repository.
    pub worktrees_dir: Option<PathBuf>,
    /// Files copied (never linked) from the checkout into a new worktree, e.g. `.env`; paths
    /// inside the repository.
    pub copy_files: Vec<String>,
    /// How long the setup commands of `.cursor/worktrees.json` may take in a new worktree.
    pub setup_timeout_secs: u32,
    /// Worktrees of runs that ended longer ago than this are removed (their branches kept).
    pub worktree_retention_days: u32,
    /// A merged run's branch stays after its worktree goes.
    pub keep_branch_after_merge: bool,
    /// Team mode, on a runner (`serve --runner`): which teammates' runs it takes, with what
    /// permissions at most, in which repositories. A teammate's run that would write or run
    /// commands on a machine that is no runner, or that this policy refuses, waits for this
    /// machine's person.
    pub runner_policy: crate::board::runs::trust::RunnerPolicy,
}

impl Default for RunSettings {
    fn default() -> Self {
        Self {
            cursor_agent: None,
            roots: Vec::new(),
            max_per_workspace: 1,
            max_total: 3,
            timeout_minutes: 10,
            result_grace_secs: 20,
            kill_grace_secs: 5,
            resume_wakes_per_hour: crate::board::wake::DEFAULT_PER_HOUR,
            wake_remote_senders: Vec::new(),
            max_log_mb: 64,
            isolate: true,
            max_per_repo: 3,
            worktrees_dir: None,
            copy_files: Vec::new(),
            setup_timeout_secs: 300,
            worktree_retention_days: 7,
            keep_branch_after_merge: true,
            runner_policy: Default::default(),
        }
    }
}

/// A change to the run settings; each field as in [`SettingsPatch`].
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunSettingsPatch {
    #[serde(default, deserialize_with = "double_option")]
    pub cursor_agent: Option<Option<PathBuf>>,
    pub roots: Option<Vec<PathBuf>>,
    pub max_per_workspace: Option<u32>,
    pub max_total: Option<u32>,
    pub timeout_minutes: Option<u32>,
    pub result_grace_secs: Option<u32>,
    pub kill_grace_secs: Option<u32>,
    pub resume_wakes_per_hour: Option<u32>,
    pub wake_remote_senders: Option<Vec<String>>,
    pub max_log_mb: Option<u32>,
    pub isolate: Option<bool>,
    pub max_per_repo: Option<u32>,
    #[serde(default, deserialize_with = "double_option")]
    pub worktrees_dir: Option<Option<PathBuf>>,
    pub copy_files: Option<Vec<String>>,
    pub setup_timeout_secs: Option<u32>,
    pub worktree_retention_days: Option<u32>,
    pub keep_branch_after_merge: Option<bool>,
    pub runner_policy: Option<crate::board::runs::trust::RunnerPolicy>,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            cursor_user_dir: None,
            cursor_home: None,
            port: None,
            notifications: true,
            launch_at_login: false,
            keyring_only: false,
            signal_sla_minutes: default_slas(),
            runs: RunSettings::default(),
            cloud: CloudSettings::default(),
            github: GithubSettings::default(),
            usage: UsageSettings::default(),
            agents: AgentSettings::default(),
        }
    }
}

fn default_slas() -> BTreeMap<String, u32> {
    [("question", 10), ("review_requested", 30), ("task_assigned", 60)]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect()
}

/// A change to some settings; `Some(None)` clears an optional one back to its default.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SettingsPatch {
    #[serde(default, deserialize_with = "double_option")]
    pub cursor_user_dir: Option<Option<PathBuf>>,
    #[serde(default, deserialize_with = "double_option")]
    pub cursor_home: Option<Option<PathBuf>>,
    #[serde(default, deserialize_with = "double_option")]
    pub port: Option<Option<u16>>,
    pub notifications: Option<bool>,
    pub launch_at_login: Option<bool>,
    pub keyring_only: Option<bool>,
    /// Per signal type; merged into the saved ones.
    pub signal_sla_minutes: Option<BTreeMap<String, u32>>,
    pub runs: Option<RunSettingsPatch>,
    pub cloud: Option<CloudSettingsPatch>,
    pub github: Option<GithubSettingsPatch>,
    pub usage: Option<UsageSettingsPatch>,
    pub agents: Option<AgentSettingsPatch>,
}

impl SettingsPatch {
    /// A patch setting one dotted key (`port`, `runs.max_total`, `signal_sla_minutes.question`)
    /// from text as typed: JSON when it parses as the field wants (`4`, `true`, `["/a"]`), else
    /// the text itself; an empty value clears the setting back to its default.
    pub fn from_key(key: &str, value: &str) -> Result<Self> {
        Ok(Self::key_json(key, value)?.1)
    }

    /// [`SettingsPatch::from_key`] with the patch also as the JSON it was read from, for sending
    /// to a running daemon's `PATCH /api/settings`.
    pub fn key_json(key: &str, value: &str) -> Result<(serde_json::Value, Self)> {
        let parts: Vec<&str> = key.split('.').map(str::trim).collect();
        if parts.iter().any(|p| p.is_empty()) {
            return Err(Error::invalid(
                "setting",
                format!("“{key}” is not a setting name (e.g. port, runs.max_total)"),
            ));
        }
        let nest = |leaf: serde_json::Value| parts.iter().rev().fold(leaf, |inner, k| serde_json::json!({ *k: inner }));
        let value = value.trim();
        let text = if value.is_empty() { serde_json::Value::Null } else { serde_json::Value::String(value.to_owned()) };
        let typed = serde_json::from_str::<serde_json::Value>(value).ok();
        if let Some(json) = typed.map(nest)
            && let Ok(patch) = serde_json::from_value(json.clone())
        {
            return Ok((json, patch));
        }
        let json = nest(text);
        let patch =
            serde_json::from_value(json.clone()).map_err(|e| Error::invalid("setting", format!("{key}: {e}")))?;
        Ok((json, patch))
    }
}

/// Distinguishes a missing field (`None`) from an explicit `null` (`Some(None)`).
fn double_option<'de, T: Deserialize<'de>, D: serde::Deserializer<'de>>(
    d: D,
) -> std::result::Result<Option<Option<T>>, D::Error> {
    Option::<T>::deserialize(d).map(Some)
}

impl Settings {
    /// The saved Cursor folders, for [`CursorLocations::discover`].
    pub fn cursor_dirs(&self) -> SavedCursorDirs {
        SavedCursorDirs {
            user_dir: self.cursor_user_dir.clone(),
            home: self.cursor_home.clone(),
            agents_off: self.agents.off(),
        }
    }

    /// The saved settings, or the defaults when there is no file yet.
    pub fn load(paths: &Paths) -> Result<Self> {
        let file = paths.settings_json();
        match std::fs::read(&file) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| Error::Invalid {
                what: "settings file",
                reason: format!("{}: {e} (fix or delete it)", file.display()),
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Self::default()),
            Err(e) => Err(Error::io(format!("reading {}", file.display()), e)),
        }
    }

    /// Loads, applies the patch (validated as a whole: nothing is saved if any part is wrong),
    /// and saves atomically. Returns the new settings.
    pub fn update(paths: &Paths, patch: &SettingsPatch) -> Result<Self> {
        let mut s = Self::load(paths)?;
        if let Some(v) = &patch.cursor_user_dir {
            s.cursor_user_dir = v.clone().filter(|p| !p.as_os_str().is_empty());
        }
        if let Some(v) = &patch.cursor_home {
            s.cursor_home = v.clone().filter(|p| !p.as_os_str().is_empty());
        }
        if let Some(v) = patch.port {
            s.port = v;
        }
        if let Some(v) = patch.notifications {
            s.notifications = v;
        }
        if let Some(v) = patch.launch_at_login {
            s.launch_at_login = v;
        }
        if let Some(v) = patch.keyring_only {
            s.keyring_only = v;
        }
        if let Some(v) = &patch.signal_sla_minutes {
            s.signal_sla_minutes.extend(v.iter().map(|(k, m)| (k.trim().to_owned(), *m)));
        }
        if let Some(r) = &patch.runs {
            let runs = &mut s.runs;
            if let Some(v) = &r.cursor_agent {
                runs.cursor_agent = v.clone().filter(|p| !p.as_os_str().is_empty());
            }
            if let Some(v) = &r.roots {
                runs.roots = v.clone();
            }
            runs.max_per_workspace = r.max_per_workspace.unwrap_or(runs.max_per_workspace);
            runs.max_total = r.max_total.unwrap_or(runs.max_total);
            runs.timeout_minutes = r.timeout_minutes.unwrap_or(runs.timeout_minutes);
            runs.result_grace_secs = r.result_grace_secs.unwrap_or(runs.result_grace_secs);
            runs.kill_grace_secs = r.kill_grace_secs.unwrap_or(runs.kill_grace_secs);
            runs.resume_wakes_per_hour = r.resume_wakes_per_hour.unwrap_or(runs.resume_wakes_per_hour);
            runs.max_log_mb = r.max_log_mb.unwrap_or(runs.max_log_mb);
            runs.isolate = r.isolate.unwrap_or(runs.isolate);
            runs.max_per_repo = r.max_per_repo.unwrap_or(runs.max_per_repo);
            if let Some(v) = &r.worktrees_dir {
                runs.worktrees_dir = v.clone().filter(|p| !p.as_os_str().is_empty());
            }
            if let Some(v) = &r.copy_files {
                runs.copy_files = v.iter().map(|n| n.trim().to_owned()).filter(|n| !n.is_empty()).collect();
            }
            runs.setup_timeout_secs = r.setup_timeout_secs.unwrap_or(runs.setup_timeout_secs);
            runs.worktree_retention_days = r.worktree_retention_days.unwrap_or(runs.worktree_retention_days);
            runs.keep_branch_after_merge = r.keep_branch_after_merge.unwrap_or(runs.keep_branch_after_merge);
            if let Some(p) = &r.runner_policy {
                let clean = |v: &[String]| v.iter().map(|n| n.trim().to_owned()).filter(|n| !n.is_empty()).collect();
                runs.runner_policy = crate::board::runs::trust::RunnerPolicy {
                    people: clean(&p.people),
                    max_permissions: p.max_permissions,
                    repos: clean(&p.repos),
                };
            }
            if let Some(v) = &r.wake_remote_senders {
                runs.wake_remote_senders = v.iter().map(|n| n.trim().to_owned()).filter(|n| !n.is_empty()).collect();
            }
        }
        if let Some(c) = &patch.cloud {
            let cloud = &mut s.cloud;
            if let Some(v) = &c.api_url {
                cloud.api_url = v.clone().filter(|u| !u.trim().is_empty());
            }
            if let Some(v) = &c.public_url {
                cloud.public_url = v.clone().filter(|u| !u.trim().is_empty());
            }
            cloud.max_running = c.max_running.unwrap_or(cloud.max_running);
            cloud.poll_secs = c.poll_secs.unwrap_or(cloud.poll_secs);
            cloud.timeout_minutes = c.timeout_minutes.unwrap_or(cloud.timeout_minutes);
        }
        if let Some(g) = &patch.github
            && let Some(v) = &g.api_url
        {
            s.github.api_url = v.clone().filter(|u| !u.trim().is_empty());
        }
        if let Some(u) = &patch.usage {
            let usage = &mut s.usage;
            if let Some(v) = u.run_budget {
                usage.run_budget = v;
            }
            if let Some(v) = u.daily_budget {
                usage.daily_budget = v;
            }
            for (role, b) in u.role_budgets.iter().flatten() {
                match b {
                    Some(b) => usage.role_budgets.insert(role.trim().to_owned(), *b),
                    None => usage.role_budgets.remove(role.trim()),
                };
            }
            usage.count_cache_reads = u.count_cache_reads.unwrap_or(usage.count_cache_reads);
            for (model, p) in u.prices.iter().flatten() {
                match p {
                    Some(p) => usage.prices.insert(model.trim().to_ascii_lowercase(), p.clone()),
                    None => usage.prices.remove(&model.trim().to_ascii_lowercase()),
                };
            }
        }
        if let Some(a) = &patch.agents {
            s.agents.claude_code = a.claude_code.unwrap_or(s.agents.claude_code);
            s.agents.codex = a.codex.unwrap_or(s.agents.codex);
            s.agents.gemini = a.gemini.unwrap_or(s.agents.gemini);
        }
        s.validate()?;
        s.save(paths)?;
        Ok(s)
    }

    fn validate(&self) -> Result<()> {
        for (what, dir) in [("Cursor User folder", &self.cursor_user_dir), ("Cursor home", &self.cursor_home)] {
            if let Some(d) = dir {
                check_dir(what, d)?;
            }
        }
        let r = &self.runs;
        for root in &r.roots {
            check_dir("run root", root)?;
        }
        if let Some(a) = &r.cursor_agent
            && !a.is_file()
        {
            return Err(Error::invalid("Cursor CLI", format!("{} is not a file", a.display())));
        }
        for (what, v, range) in [
            ("runs per workspace", r.max_per_workspace, 1..=16),
            ("runs at once", r.max_total, 1..=64),
            ("run time limit (minutes)", r.timeout_minutes, 1..=1440),
            ("grace after the result (seconds)", r.result_grace_secs, 0..=600),
            ("grace before SIGKILL (seconds)", r.kill_grace_secs, 0..=120),
            ("wakes by resume per hour", r.resume_wakes_per_hour, 1..=60),
            ("run log size (MiB)", r.max_log_mb, 1..=4096),
            ("runs per repository", r.max_per_repo, 1..=16),
            ("worktree setup time limit (seconds)", r.setup_timeout_secs, 1..=3600),
            ("worktree retention (days)", r.worktree_retention_days, 1..=3650),
            ("cloud runs at once", self.cloud.max_running, 1..=64),
            ("cloud poll interval (seconds)", self.cloud.poll_secs, 1..=3600),
            ("cloud run time limit (minutes)", self.cloud.timeout_minutes, 1..=1440),
        ] {
            if !range.contains(&v) {
                return Err(Error::invalid(
                    "run setting",
                    format!("{what}: {v} is out of range ({} to {})", range.start(), range.end()),
                ));
            }
        }
        for f in &r.copy_files {
            let p = std::path::Path::new(f);
            if p.is_absolute() || p.components().any(|c| !matches!(c, std::path::Component::Normal(_))) {
                return Err(Error::invalid("files to copy", format!("{f:?}: give a path inside the repository")));
            }
        }
        if let Some(u) = &self.cloud.api_url {
            check_remote_url("Cursor API URL", u)?;
        }
        if let Some(u) = &self.github.api_url {
            check_remote_url("GitHub API URL", u)?;
        }
        if let Some(u) = &self.cloud.public_url {
            check_remote_url("public URL", u)?;
        }
        for (kind, minutes) in &self.signal_sla_minutes {
            let t: crate::board::signals::SignalType = kind.parse()?;
            if t.is_system() {
                return Err(Error::invalid("signal SLA", format!("{kind} signals carry no obligation")));
            }
            if !(1..=10_080).contains(minutes) {
                return Err(Error::invalid("signal SLA", format!("{minutes} minutes for {kind}: give 1 to 10080")));
            }
        }
        for (model, p) in &self.usage.prices {
            p.check(model)?;
        }
        if let Some(p) = self.port
            && p < 1024
        {
            return Err(Error::Invalid {
                what: "port",
                reason: format!("{p} is below 1024 (a privileged port); choose one from 1024 to 65535"),
            });
        }
        Ok(())
    }

    fn save(&self, paths: &Paths) -> Result<()> {
        paths.ensure()?;
        let file = paths.settings_json();
        let tmp = file.with_extension("json.tmp");
        let io = |e| Error::io(format!("writing {}", file.display()), e);
        std::fs::write(&tmp, serde_json::to_string_pretty(self)?).map_err(io)?;
        std::fs::File::open(&tmp).and_then(|f| f.sync_all()).map_err(io)?;
        std::fs::rename(&tmp, &file).map_err(io)
    }
}

/// What the settings page shows: the saved settings next to what the running daemon uses.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct SettingsView {
    pub settings: Settings,
    /// The port the daemon listens on now.
    pub port: u16,
    pub cursor_user_dirs: Vec<PathBuf>,
    pub cursor_homes: Vec<PathBuf>,
    /// Saved settings that a flag or an environment variable overrides, with its name.
    pub overridden: std::collections::BTreeMap<&'static str, &'static str>,
    /// Saved settings that the running daemon does not use yet (they apply at its next start).
    pub restart_needed: Vec<&'static str>,
}

/// The port a daemon listens on and what chose it (`settings`, `default`, or the flag or
/// variable that overrides the settings).
#[derive(Debug, Clone, Copy)]
pub struct RunningPort {
    pub port: u16,
    pub from: &'static str,
}

impl Settings {
    /// These settings next to what a daemon started with `running` and `port` uses (no I/O).
    pub fn compare(self, running: &CursorLocations, port: RunningPort, default_port: u16) -> SettingsView {
        let mut overridden = std::collections::BTreeMap::new();
        let mut restart_needed = Vec::new();
        let mut folder = |field, from: &'static str, in_use: &[PathBuf], saved: &Option<PathBuf>| match from {
            "detected" | "settings" => {
                let now = (from == "settings").then(|| in_use.first().cloned()).flatten();
                if now != *saved {
                    restart_needed.push(field);
                }
            }
            _ if saved.is_some() => {
                overridden.insert(field, from);
            }
            _ => {}
        };
        folder("cursor_user_dir", running.user_dir_from, &running.user_dirs, &self.cursor_user_dir);
        folder("cursor_home", running.home_from, &running.cursor_homes, &self.cursor_home);
        if running.agents_off != self.agents.off() {
            restart_needed.push("agents");
        }
        let chosen_by_us = matches!(port.from, "settings" | "default");
        if chosen_by_us && self.port.unwrap_or(default_port) != port.port {
            restart_needed.push("port");
        } else if !chosen_by_us && self.port.is_some() {
            overridden.insert("port", port.from);
        }
        SettingsView {
            settings: self,
            port: port.port,
            cursor_user_dirs: running.user_dirs.clone(),
            cursor_homes: running.cursor_homes.clone(),
            overridden,
            restart_needed,
        }
    }
}

fn check_dir(what: &'static str, d: &Path) -> Result<()> {
    if !d.is_absolute() {
        return Err(Error::Invalid { what, reason: format!("{} is not an absolute path", d.display()) });
    }
    if !d.is_dir() {
        return Err(Error::Invalid { what, reason: format!("{} is not a folder on this machine", d.display()) });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn patch(json: serde_json::Value) -> SettingsPatch {
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn defaults_then_a_round_trip_through_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let paths = Paths::at(dir.path());
        assert_eq!(Settings::load(&paths).unwrap(), Settings::default());
        let cursor = dir.path().join("User");
        std::fs::create_dir(&cursor).unwrap();
        let s = Settings::update(
            &paths,
            &patch(serde_json::json!({"cursor_user_dir": cursor, "port": 48000, "notifications": false})),
        )
        .unwrap();
        assert_eq!(Settings::load(&paths).unwrap(), s);
        assert_eq!((s.port, s.notifications, s.launch_at_login), (Some(48000), false, false));
        // null clears; an absent field is left alone.
        let s = Settings::update(&paths, &patch(serde_json::json!({"port": null}))).unwrap();
        assert_eq!((s.port, s.cursor_user_dir.as_deref()), (None, Some(cursor.as_path())));
    }

    #[test]
    fn an_agent_turned_off_is_left_out_of_the_folders_looked_for_and_the_daemon_is_told() {
        let dir = tempfile::tempdir().unwrap();
        let paths = Paths::at(dir.path());
        assert!(Settings::load(&paths).unwrap().cursor_dirs().agents_off.is_empty(), "every agent on by default");
        let s = Settings::update(&paths, &SettingsPatch::from_key("agents.codex", "false").unwrap()).unwrap();
        assert_eq!((s.agents.claude_code, s.agents.codex, s.agents.gemini), (true, false, true));
        assert_eq!(s.cursor_dirs().agents_off, ["codex"]);
        let running = CursorLocations { user_dir_from: "detected", home_from: "detected", ..Default::default() };
        let v = s.clone().compare(&running, RunningPort { port: 47821, from: "default" }, 47821);
        assert!(v.restart_needed.contains(&"agents"), "{:?}", v.restart_needed);
        let now = CursorLocations { agents_off: vec!["codex".into()], ..running };
        assert!(
            !s.compare(&now, RunningPort { port: 47821, from: "default" }, 47821).restart_needed.contains(&"agents")
        );
    }

    #[test]
    fn a_runners_policy_is_set_as_one_key_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let paths = Paths::at(dir.path());
        assert_eq!(Settings::load(&paths).unwrap().runs.runner_policy.people, ["*"], "a runner takes its team's runs");
        let p = SettingsPatch::from_key(
            "runs.runner_policy",
            r#"{"people": [" alice ", "", "ci-box"], "max_permissions": "write", "repos": ["github.com/acme/shop"]}"#,
        )
        .unwrap();
        let s = Settings::update(&paths, &p).unwrap();
        let want = crate::board::runs::trust::RunnerPolicy {
            people: vec!["alice".into(), "ci-box".into()],
            max_permissions: crate::board::runs::trust::PermissionLevel::Write,
            repos: vec!["github.com/acme/shop".into()],
        };
        assert_eq!((&s.runs.runner_policy, &Settings::load(&paths).unwrap().runs.runner_policy), (&want, &want));
        assert!(SettingsPatch::from_key("runs.runner_policy", r#"{"max_permissions": "root"}"#).is_err());
    }

    #[test]
    fn bad_values_are_refused_and_nothing_is_saved() {
        let dir = tempfile::tempdir().unwrap();
        let paths = Paths::at(dir.path());
        Settings::update(&paths, &patch(serde_json::json!({"port": 48000}))).unwrap();
        for bad in [
            serde_json::json!({"port": 80, "notifications": false}),
            serde_json::json!({"cursor_user_dir": "relative/dir"}),
            serde_json::json!({"cursor_home": dir.path().join("nope")}),
        ] {
            let e = Settings::update(&paths, &patch(bad.clone())).unwrap_err();
            assert_eq!(e.code(), crate::ErrorCode::InvalidInput, "{bad}: {e}");
        }
        let s = Settings::load(&paths).unwrap();
        assert_eq!((s.port, s.notifications), (Some(48000), true));
        assert!(serde_json::from_value::<SettingsPatch>(serde_json::json!({"prot": 1})).is_err(), "typos are refused");
    }

    #[test]
    fn the_view_says_what_waits_for_a_restart_and_what_is_overridden() {
        let dir = tempfile::tempdir().unwrap();
        let paths = Paths::at(dir.path());
        let cursor = dir.path().join("User");
        std::fs::create_dir(&cursor).unwrap();
        let detected = CursorLocations { user_dir_from: "detected", home_from: "detected", ..Default::default() };
        let default = RunningPort { port: 47821, from: "default" };
        let v = Settings::load(&paths).unwrap().compare(&detected, default, 47821);
        assert!(v.restart_needed.is_empty() && v.overridden.is_empty(), "{v:?}");
        Settings::update(&paths, &patch(serde_json::json!({"cursor_user_dir": cursor, "port": 48000}))).unwrap();
        let v = Settings::load(&paths).unwrap().compare(&detected, default, 47821);
        assert_eq!(v.restart_needed, ["cursor_user_dir", "port"]);
        let by_env = RunningPort { port: 5000, from: "TETHER_PORT" };
        assert_eq!(
            Settings::load(&paths).unwrap().compare(&detected, by_env, 47821).overridden.get("port"),
            Some(&"TETHER_PORT")
        );
        // After a restart that used them, nothing waits.
        let from_settings = CursorLocations::discover(None, &Settings::load(&paths).unwrap().cursor_dirs());
        if from_settings.user_dir_from == "settings" {
            let saved = RunningPort { port: 48000, from: "settings" };
            assert!(Settings::load(&paths).unwrap().compare(&from_settings, saved, 47821).restart_needed.is_empty());
        }
        let given = CursorLocations::explicit(Some(dir.path().into()), None);
        let v = Settings::load(&paths).unwrap().compare(
            &CursorLocations { user_dir_from: "TETHER_CURSOR_DIR", ..given },
            by_env,
            47821,
        );
        assert_eq!(v.overridden.get("cursor_user_dir"), Some(&"TETHER_CURSOR_DIR"));
    }

    #[test]
    fn one_key_from_the_command_line() {
        let dir = tempfile::tempdir().unwrap();
        let paths = Paths::at(dir.path());
        let set = |k: &str, v: &str| Settings::update(&paths, &SettingsPatch::from_key(k, v).unwrap()).unwrap();
        assert_eq!(set("port", "48000").port, Some(48000));
        assert_eq!(set("runs.max_total", "4").runs.max_total, 4);
        assert_eq!(set("signal_sla_minutes.question", "15").signal_sla_minutes["question"], 15);
        assert!(!set("notifications", "false").notifications);
        let root = dir.path().join("proj");
        std::fs::create_dir(&root).unwrap();
        // A path is text, not JSON; a list may be JSON.
        let r = root.display().to_string();
        assert_eq!(set("cursor_home", &r).cursor_home.as_deref(), Some(root.as_path()));
        assert_eq!(set("runs.roots", &serde_json::json!([r]).to_string()).runs.roots, std::slice::from_ref(&root));
        assert_eq!(set("port", "").port, None, "empty is back to the default");
        assert_eq!(set("cursor_home", "").cursor_home, None);
        for (k, v) in [("prot", "1"), ("port", "many"), ("runs.max_total", "x"), ("runs..x", "1"), ("", "1")] {
            let e = SettingsPatch::from_key(k, v).unwrap_err();
            assert_eq!(e.code(), crate::ErrorCode::InvalidInput, "{k}={v}: {e}");
        }
        let e = SettingsPatch::from_key("prot", "1").unwrap_err().to_string();
        assert!(e.contains("prot") && e.contains("port"), "names the typo and the choices: {e}");
    }

    #[test]
    fn a_corrupt_file_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let paths = Paths::at(dir.path());
        std::fs::write(paths.settings_json(), "{not json").unwrap();
        let e = Settings::load(&paths).unwrap_err().to_string();
        assert!(e.contains("settings.json") && e.contains("fix or delete"), "{e}");
    }
}
