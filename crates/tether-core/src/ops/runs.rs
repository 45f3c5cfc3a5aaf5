//! Agent runs: start one (the Cursor CLI here, or a Cursor Cloud agent) for a prompt or a task,
//! follow one up in its chat, cancel, approve a held one, list and read them. A run is checked
//! here (the workspace inside the allowed roots, canonical, so a link cannot lead out; a known
//! role; the task's prompt) and queued; the runner (`tether-runs`) takes it from the queue.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub use super::cloud::{cloud_webhook, exchange};
use crate::Tether;
use crate::board::principal::{Principal, TETHER};
use crate::board::runs::{self, NewRun, Run, RunDetail, RunFilter, StoredEvent};
use crate::board::{roles, tasks};
use crate::error::{Error, Result};
use crate::events::Event;

/// The name a run records as who asked for it.
pub(crate) fn requester(t: &Tether, who: &Principal) -> Result<String> {
    match who {
        Principal::Person(name) => Ok(name.clone()),
        Principal::Agent { who, .. } => t.board().agents().label(who),
        Principal::Tether => Ok(TETHER.into()),
    }
}

fn not_remote(who: &Principal, what: &str) -> Result<()> {
    if who.is_remote() {
        return Err(Error::NotAllowed(format!("{what} is not for agents outside this machine")));
    }
    Ok(())
}

/// Checks a run (prompt or task; a workspace inside the allowed roots; a known role) and queues
/// it; the runner starts it.
pub fn start(t: &Tether, who: &Principal, new: &NewRun) -> Result<Run> {
    not_remote(who, "starting a run")?;
    let by = requester(t, who)?;
    runs::check(new)?;
    let place: runs::RunPlace = new.place.as_deref().unwrap_or_default().parse()?;
    if place == runs::RunPlace::Cloud {
        if new.on.is_some() || !new.labels.is_empty() {
            return Err(Error::invalid("on", "cloud runs run at Cursor; on and labels are for local runs"));
        }
        return super::cloud::start(t, &by, new);
    }
    if new.repo.is_some() || new.branch.is_some() || new.auto_pr {
        return Err(Error::invalid("run", "repo, branch and auto_pr are for cloud runs (where: cloud)"));
    }
    if (new.on.is_some() || !new.labels.is_empty()) && !t.in_team() {
        return Err(Error::invalid(
            "on",
            "runs go to other machines only in a team: join one first (tether team join)",
        ));
    }
    let settings = t.settings()?;
    let (task, prompt) = super::tasks::run_prompt(t, new)?;
    let ws = new
        .workspace
        .clone()
        .filter(|w| !w.trim().is_empty())
        .or_else(|| task.as_ref().and_then(|t| t.task.project.clone()))
        .ok_or_else(|| Error::invalid("workspace", "say which project folder the agent works in"))?;
    let workspace = check_workspace(t, Path::new(&ws))?;
    if let Some(r) = &new.role {
        roles::rule(&t.paths.roles_dir(), r)?;
    }
    let task = task.map(|t| tasks::parse_id(&t.task.id)).transpose()?;
    let target = target_of(t, new, &workspace)?;
    let valid = runs::ValidRun {
        target,
        isolation: tether_work::place::isolation(
            t,
            &crate::work::work_settings(&settings.runs),
            &workspace,
            new,
            task,
        )?,
        prompt,
        task,
        workspace: workspace.to_string_lossy().into_owned(),
        model: new.model.clone(),
        mode: new.mode.unwrap_or_default(),
        role: new.role.clone(),
        timeout_ms: new.timeout_secs.map_or(i64::from(settings.runs.timeout_minutes) * 60_000, |s| s as i64 * 1000),
        permissions: new.permissions.clone(),
        complete: new.complete,
        parent: None,
        resume_chat: None,
        cloud: None,
        budget: new.budget.or(settings.usage.run_budget),
    };
    crate::usage::Budgets::of(t).check_queued(&valid)?;
    t.board().runs().create(&by, &valid)
}

/// Where a local run may go. Outside a team, here (naming a machine or labels is an error); in
/// one, the machine and labels asked for, and the workspace named by its repository's remote so
/// another machine can find it (a folder without one can only run here).
fn target_of(t: &Tether, new: &NewRun, workspace: &Path) -> Result<runs::RunTarget> {
    let mut labels: Vec<String> = new.labels.iter().map(|l| l.trim().to_owned()).filter(|l| !l.is_empty()).collect();
    labels.sort();
    labels.dedup();
    if let Some(bad) = labels.iter().find(|l| l.chars().any(|c| c.is_control() || c == ',')) {
        return Err(Error::invalid("labels", format!("{bad:?} is not a label")));
    }
    let on = new.on.as_deref().map(str::trim).filter(|m| !m.is_empty()).map(str::to_owned);
    let Some(here) = t.board_db().machine() else { return Ok(runs::RunTarget::default()) };
    let repo = tether_work::place::repo_ref(workspace);
    if let Some(m) = on.as_deref().filter(|m| *m != here) {
        let seen = super::team::machines(t)?;
        if !seen.iter().any(|s| s.name == m) {
            let names: Vec<&str> = seen.iter().map(|s| s.name.as_str()).collect();
            return Err(Error::invalid(
                "on",
                format!("no machine named {m:?} in the team (seen: {})", names.join(", ")),
            ));
        }
        if repo.is_none() {
            return Err(Error::invalid(
                "on",
                format!("{} has no origin remote, so {m:?} cannot find it; run it here", workspace.display()),
            ));
        }
    }
    Ok(runs::RunTarget { machine: on, labels, repo })
}

/// The next prompt of an earlier run's Cursor chat.
#[derive(Debug, Clone, Default, Deserialize, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct Followup {
    /// The run to continue, e.g. "R-3" (a route names it in its path).
    #[serde(default)]
    #[ts(optional, as = "Option<String>")]
    pub run: String,
    pub prompt: String,
}

/// A follow-up run continuing a run's Cursor chat with a new prompt.
pub fn followup(t: &Tether, who: &Principal, req: &Followup) -> Result<Run> {
    not_remote(who, "following up a run")?;
    let by = requester(t, who)?;
    let valid = t.board().runs().followup_of(&req.run, &req.prompt)?;
    // A follow-up runs where its chat is; its folder is that machine's to check.
    let here = valid.target.machine.is_none() || valid.target.machine == t.board_db().machine();
    if valid.cloud.is_none() && here {
        check_workspace(t, Path::new(&valid.workspace))?;
    }
    crate::usage::Budgets::of(t).check_queued(&valid)?;
    t.board().runs().create(&by, &valid)
}

/// Asks a run to stop: a queued one is cancelled at once; a running one is stopped by its
/// runner (now when it is this process's, within a second otherwise).
pub fn cancel(t: &Tether, who: &Principal, id: &str) -> Result<Run> {
    not_remote(who, "cancelling a run")?;
    let r = t.board().runs().cancel(id)?;
    t.bus.emit(Event::RunCancelRequested { run: r.num() });
    Ok(r)
}

/// Lets a run held for the person's approval go (a wake that signals from outside this machine
/// caused, with write or shell permissions). The person's decision only.
pub fn approve(t: &Tether, who: &Principal, id: &str) -> Result<Run> {
    if !who.is_person() {
        return Err(Error::NotAllowed("approving a held run is the person's decision".into()));
    }
    t.board().runs().approve(id)
}

pub fn list(t: &Tether, f: &RunFilter) -> Result<Vec<Run>> {
    t.board().runs().list(f)
}

/// A run an agent started, with a note when no daemon is running to start it (it waits queued).
#[derive(Debug, Clone, Serialize)]
pub struct Started {
    #[serde(flatten)]
    pub run: Run,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<&'static str>,
}

impl Started {
    pub fn of(t: &Tether, run: Run) -> Self {
        let idle = crate::daemon::running(&t.paths).is_none();
        let note = idle.then_some("queued; no Tether daemon is running to start it: start the app or `tether serve`");
        Self { run, note }
    }
}

/// The run list as the GUI reads it: `{runs}`.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct RunList {
    pub runs: Vec<Run>,
}

/// A run with the last `limit` events before `before` (the newest when `None`).
pub fn get(t: &Tether, id: &str, before: Option<i64>, limit: Option<usize>) -> Result<RunDetail> {
    t.board().runs().get_page(id, before, limit)
}

/// Events after `seq`, oldest first (following a run).
pub fn events_after(t: &Tether, id: &str, seq: i64, limit: usize) -> Result<Vec<StoredEvent>> {
    t.board().runs().events_after(id, seq, limit)
}

/// Folders runs may work in: the saved roots, and the projects Cursor's history knows that
/// exist on this machine; canonical, without duplicates.
pub fn roots(t: &Tether) -> Result<Vec<PathBuf>> {
    crate::work::roots(t)
}

/// A run's folder, canonical, checked to be inside the allowed roots: when a run is queued,
/// and again when it starts (a folder may be replaced by a link in between).
pub fn check_workspace(t: &Tether, ws: &Path) -> Result<PathBuf> {
    tether_work::place::check_workspace(&roots(t)?, ws)
}

/// What a run form offers: roles, the folders runs may use, defaults, whether a Cursor API key
/// is kept, and the Cursor CLI found (the local executor's probe).
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct Options {
    pub roles: Vec<roles::Role>,
    pub roots: Vec<PathBuf>,
    pub defaults: crate::settings::RunSettings,
    pub cloud: CloudOptions,
    pub cursor_cli: crate::executor::ExecutorInfo,
}

#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct CloudOptions {
    pub key: bool,
    pub defaults: crate::settings::CloudSettings,
}

pub fn options(t: &Tether) -> Result<Options> {
    let settings = t.settings()?;
    let key = crate::token::cursor_key(&t.paths).ok().flatten().is_some();
    Ok(Options {
        roles: roles::list(&t.paths.roles_dir())?,
        roots: roots(t)?,
        defaults: settings.runs,
        cloud: CloudOptions { key, defaults: settings.cloud },
        cursor_cli: t.executors.probe(t, "local"),
    })
}
