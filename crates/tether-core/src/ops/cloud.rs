//! Cursor Cloud as the person and Cursor ask about it: Cursor's webhook saying an agent changed,
//! a cloud run's bootstrap token exchanged for its bearer, the cloud environment test (the
//! registered cloud executor's doctor), and a cloud run checked and queued (asked for through
//! `ops::runs::start`, which hands it here).

use crate::Tether;
use std::path::Path;

use crate::board::runs::Run;
use crate::board::runs::{self, NewRun};
use crate::board::{cloud, roles, tasks};
use crate::error::{Error, Result};
use crate::events::Event;
use crate::executor::{Check, DoctorAsk};

/// Cursor's webhook said a cloud agent changed (its signature checked): kept by its delivery id
/// (a delivery seen again changes nothing), and the runner following that agent's run reads it
/// now. The run, when a new delivery concerns one that runs.
pub fn cloud_webhook(t: &Tether, delivery: &str, agent: &str, status: &str, raw: &str) -> Result<Option<Run>> {
    if !t.board().cloud().record_webhook(delivery, Some(agent), Some(status), raw)? {
        return Err(Error::Conflict(format!("webhook delivery {delivery} was seen already")));
    }
    let run = t.board().cloud().live_run_for_agent(agent)?;
    if let Some(r) = &run {
        t.bus.emit(Event::CloudRunChanged { run: r.num() });
    }
    Ok(run)
}

/// A cloud run's one-time bootstrap token exchanged for its scoped bearer: (bearer, run, expiry ms).
pub fn exchange(t: &Tether, bootstrap: &str) -> Result<Option<(String, Run, i64)>> {
    t.board().cloud().exchange(bootstrap)
}

/// `GET /api/cloud/doctor`'s answer: the cloud environment test's checks.
#[derive(Debug, Clone, serde::Serialize, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct CloudDoctor {
    pub checks: Vec<Check>,
}

/// The cloud environment test: the API URL, the key (kept, and valid), the repository and model
/// asked about, the public URL when one is set; empty when nothing here runs cloud runs.
pub async fn doctor(t: &Tether, ask: &DoctorAsk) -> Vec<Check> {
    match t.executors.get("cloud") {
        Some(e) => e.doctor(t, ask).await,
        None => Vec::new(),
    }
}

/// A Cursor Cloud run (`ops::runs::start` hands it here once it is asked for): the repository given, else the `origin` of the workspace (or the task's
/// project); a task whose earlier cloud run worked on the same repository continues that agent.
/// A role's rule goes into the prompt (there is no workspace to put it in); local permissions
/// do not apply.
pub(super) fn start(t: &Tether, by: &str, new: &NewRun) -> Result<Run> {
    if !new.permissions.is_empty() {
        return Err(Error::invalid(
            "permissions",
            "cloud agents run with Cursor's own sandbox; permissions are for local runs",
        ));
    }
    if new.mode == Some(runs::RunMode::Ask) {
        return Err(Error::invalid("run mode", "cloud agents take agent or plan"));
    }
    if new.git_ref.is_some() && new.branch.is_some() {
        return Err(Error::invalid(
            "branch",
            "give --ref (start from it, push a new branch) or --branch (work on it), not both",
        ));
    }
    let settings = t.settings()?;
    let (task, mut prompt) = super::tasks::run_prompt(t, new)?;
    let repo = match new.repo.as_deref().map(str::trim).filter(|r| !r.is_empty()) {
        Some(r) => cloud::normalize_repo(r)?,
        None => {
            let dir = new
                .workspace
                .clone()
                .filter(|w| !w.trim().is_empty())
                .or_else(|| task.as_ref().and_then(|t| t.task.project.clone()))
                .ok_or_else(|| Error::invalid("repository", "say which GitHub repository the agent works on (repo)"))?;
            cloud::git_origin(Path::new(&dir)).ok_or_else(|| {
                Error::invalid("repository", format!("{dir} has no git origin remote; say which repository (repo)"))
            })?
        }
    };
    if let Some(r) = &new.role {
        let rule = roles::rule(&t.paths.roles_dir(), r)?;
        prompt = format!("{}\n\n---\n\n{prompt}", rule.trim());
    }
    let task_num = task.as_ref().map(|d| tasks::parse_id(&d.task.id)).transpose()?;
    let earlier = match task_num {
        Some(n) => t.board().cloud().earlier_for_task(n, &repo)?,
        None => None,
    };
    let (spec, parent) = match &earlier {
        Some(e) => (e.cloud.as_ref().map(cloud::CloudSpec::followup), Some(e.num())),
        None => (Some(cloud::CloudSpec::new(repo, new.git_ref.clone(), new.branch.clone(), new.auto_pr)), None),
    };
    let valid = runs::ValidRun {
        prompt,
        task: task_num,
        workspace: String::new(),
        model: new.model.clone(),
        mode: new.mode.unwrap_or_default(),
        role: new.role.clone(),
        timeout_ms: new.timeout_secs.map_or(i64::from(settings.cloud.timeout_minutes) * 60_000, |s| s as i64 * 1000),
        permissions: runs::Permissions::default(),
        complete: new.complete,
        parent,
        resume_chat: earlier.and_then(|e| e.chat_id),
        cloud: spec,
        isolation: runs::Isolation::Cloud,
        budget: new.budget.or(settings.usage.run_budget),
        target: runs::RunTarget::default(),
    };
    crate::usage::Budgets::of(t).check_queued(&valid)?;
    t.board().runs().create(by, &valid)
}
