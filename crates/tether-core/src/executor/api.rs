//! The executor trait and what crosses it: what an executor is on this machine, a prepared run,
//! how a drive ended.

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;

use serde::Serialize;
use tokio_util::sync::CancellationToken;

use crate::Tether;
use crate::board::runs::{Outcome, Run};
use crate::usage::BudgetWatch;

/// An executor's future: boxed, so the trait stays object-safe.
pub type Boxed<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What an executor is on this machine: found or not, where, its version, and what to do when
/// it is missing or broken.
#[derive(Debug, Clone, Default, Serialize, PartialEq, ts_rs::TS)]
#[ts(export, export_to = "core.ts", rename = "CliInfo")]
pub struct ExecutorInfo {
    pub found: bool,
    pub path: Option<PathBuf>,
    /// `settings`, `TETHER_CURSOR_AGENT` or `PATH`.
    pub from: Option<&'static str>,
    pub version: Option<String>,
    /// What to do when it is missing or broken.
    pub hint: Option<String>,
}

/// One check an executor's doctor made, and what to do when it failed.
#[derive(Debug, Clone, Serialize, PartialEq, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct Check {
    pub name: &'static str,
    /// `ok`, `warn` or `fail`.
    pub status: &'static str,
    pub detail: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

impl Check {
    pub fn ok(name: &'static str, detail: impl Into<String>) -> Self {
        Self { name, status: "ok", detail: detail.into(), fix: None }
    }
    pub fn warn(name: &'static str, detail: impl Into<String>, fix: impl Into<String>) -> Self {
        Self { name, status: "warn", detail: detail.into(), fix: Some(fix.into()) }
    }
    pub fn fail(name: &'static str, detail: impl Into<String>, fix: impl Into<String>) -> Self {
        Self { name, status: "fail", detail: detail.into(), fix: Some(fix.into()) }
    }
}

/// What an executor's doctor is asked to look at beyond itself.
#[derive(Debug, Clone, Default)]
pub struct DoctorAsk {
    pub repo: Option<String>,
    pub model: Option<String>,
    /// Ask the service whether it reaches the repository (it may rate-limit that call).
    pub verify_repo: bool,
    /// Without `repo`, check the working folder's git origin (the CLI; the GUI has no folder).
    pub cwd_repo: bool,
}

/// A run made ready by its lifecycle's begin: placed on this machine, its worktree made and set
/// up, with what the setup took of the run's log (the whole log answers to one limit).
#[derive(Debug, Clone)]
pub struct Prepared {
    pub run: Run,
    pub log: LogUsed,
}

/// What a part of a run's log kept and left out.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LogUsed {
    pub kept: u64,
    pub dropped_lines: i64,
    pub dropped_bytes: i64,
}

/// How a drive ended.
#[derive(Debug)]
pub enum Drive {
    /// The run ended, and how.
    Ended(Outcome),
    /// Tether is stopping and the run goes on elsewhere (a cloud agent): it stays `running`
    /// until a runner re-attaches, and its lifecycle does not end it.
    Detached,
}

/// A way to run agents.
pub trait Executor: Send + Sync {
    /// The runs it takes, by their `kind` (`local`, `cloud`).
    fn kind(&self) -> &'static str;

    /// What it is on this machine (blocking for a few seconds at most: it may ask a program
    /// its version).
    fn probe(&self, t: &Tether) -> ExecutorInfo;

    /// Its own environment test (a service's key and reach, a repository, a model), each check
    /// saying what to do when it fails.
    fn doctor<'a>(&'a self, _t: &'a Tether, _ask: &'a DoctorAsk) -> Boxed<'a, Vec<Check>> {
        Box::pin(async { Vec::new() })
    }

    /// Why no run of this kind can start here now, asked before anything is made for a run.
    fn preflight(&self, _t: &Tether) -> Option<String> {
        None
    }

    /// Runs the prepared run to its end: stopped on `cancel` (a cancel asked, or Tether
    /// stopping), kept to its budgets by `budget`, its events stored in the run's log as they
    /// come. Whatever it placed in the workspace it puts back before it returns.
    fn drive<'a>(
        &'a self,
        t: &'a Arc<Tether>,
        run: &'a Prepared,
        cancel: &'a CancellationToken,
        budget: &'a Arc<BudgetWatch>,
    ) -> Boxed<'a, Drive>;
}
