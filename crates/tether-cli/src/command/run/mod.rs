//! `tether run`: queue a run of the Cursor CLI agent on a prompt or a task (`ops::runs::start`).
//! The daemon's runner takes it; without a daemon this process runs it until it ends (`follow`).
//! [`RunOpts`] are the options a cloud launch takes too.

pub mod follow;
pub mod review;

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use tether_core::Tether;
use tether_core::model::runs::{NewRun, Permissions};
use tether_core::ops;

use crate::render::JsonFlag;

#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub run: RunOpts,
    /// The project folder to work in (default: the task's project, else the working directory).
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// Allow a Cursor permission token (repeatable), e.g. 'Write(**)', 'Shell(cargo)'. Writes and
    /// commands run only when allowed.
    #[arg(long = "allow", value_name = "TOKEN")]
    pub allow: Vec<String>,
    /// Deny a permission token (repeatable), e.g. 'Shell(rm)'.
    #[arg(long = "deny", value_name = "TOKEN")]
    pub deny: Vec<String>,
    /// Work in the folder itself instead of a worktree of its own (the run then shares the
    /// checkout with you and other in-place runs).
    #[arg(long)]
    pub in_place: bool,
    /// The branch, tag or commit the run's worktree starts from [default: the checkout's branch].
    #[arg(long = "ref", value_name = "REF", conflicts_with = "in_place")]
    pub git_ref: Option<String>,
    /// Team mode: the machine that runs it (its name in the team) [default: any runner, this
    /// machine first].
    #[arg(long, value_name = "MACHINE")]
    pub on: Option<String>,
    /// Team mode: labels the runner must have (comma-separated, e.g. gpu,linux).
    #[arg(long, value_delimiter = ',', value_name = "LABELS")]
    pub labels: Vec<String>,
}

/// What `tether run` and `tether cloud launch` both take, worded for a local run; a cloud launch
/// words the ones whose defaults differ there itself (`mut_arg` on `CloudLaunchArgs`).
#[derive(Debug, Args)]
pub struct RunOpts {
    /// What the agent should do (may be left out with --task: the task is the prompt).
    pub prompt: Option<String>,
    /// A Cursor model id (see `agent models`).
    #[arg(long, value_name = "MODEL")]
    pub model: Option<String>,
    /// plan or ask instead of the agent (no writes).
    #[arg(long, value_parser = ["agent", "plan", "ask"])]
    pub mode: Option<String>,
    /// A role whose rule guides the agent (planner, backend, frontend, reviewer, or your own in
    /// the data dir's roles/).
    #[arg(long, value_name = "ROLE")]
    pub role: Option<String>,
    /// A task to work on, e.g. T-3: the run claims it and moves it to in_review on success.
    #[arg(long, value_name = "ID")]
    pub task: Option<String>,
    /// On success, move the task to done instead of in_review.
    #[arg(long, requires = "task")]
    pub complete: bool,
    /// Wall-clock limit, e.g. 90s, 10m, 1h [default: the settings', 10m].
    #[arg(long, value_name = "DURATION")]
    pub timeout: Option<String>,
    /// What the run may spend: tokens (200k) or estimated dollars ($2); it stops when it goes
    /// over [default: usage.run_budget].
    #[arg(long, value_name = "BUDGET")]
    pub budget: Option<String>,
    /// Stay and print the run's events as they come, until it ends.
    #[arg(long)]
    pub follow: bool,
    #[command(flatten)]
    pub out: JsonFlag,
}

impl RunOpts {
    /// The run these options ask for; where it runs is the caller's to add.
    pub fn new_run(&self) -> anyhow::Result<NewRun> {
        Ok(NewRun {
            prompt: self.prompt.clone(),
            task: self.task.clone(),
            model: self.model.clone(),
            mode: self.mode.as_deref().map(str::parse).transpose()?,
            role: self.role.clone(),
            timeout_secs: self.timeout.as_deref().map(parse_duration).transpose()?,
            complete: self.complete,
            budget: self.budget.as_deref().map(str::parse).transpose()?,
            ..Default::default()
        })
    }
}

pub fn run(t: Tether, a: RunArgs) -> anyhow::Result<()> {
    let workspace = match (&a.workspace, &a.run.task) {
        (Some(w), _) => Some(w.to_string_lossy().into_owned()),
        (None, Some(_)) => None,
        (None, None) => {
            Some(std::env::current_dir().context("reading the working directory")?.to_string_lossy().into_owned())
        }
    };
    let new = NewRun {
        workspace,
        permissions: Permissions { allow: a.allow, deny: a.deny },
        in_place: a.in_place,
        git_ref: a.git_ref,
        on: a.on,
        labels: a.labels,
        ..a.run.new_run()?
    };
    let me = super::me(None);
    let r = ops::runs::start(&t, &me, &new)?;
    follow::start_or_follow(t, &me, r, a.run.follow, a.run.out.json)
}

/// `90s`, `10m`, `1h`, or plain seconds.
fn parse_duration(s: &str) -> anyhow::Result<u64> {
    let s = s.trim();
    let (n, unit) = s.split_at(s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len()));
    let n: u64 = n.parse().with_context(|| format!("{s:?} is not a duration (e.g. 90s, 10m, 1h)"))?;
    Ok(match unit {
        "" | "s" => n,
        "m" => n * 60,
        "h" => n * 3600,
        _ => anyhow::bail!("{s:?} is not a duration (e.g. 90s, 10m, 1h)"),
    })
}
