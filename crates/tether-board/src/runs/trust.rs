//! Who may start what on this machine: the trust rule every run passes before a runner here
//! takes it.
//!
//! A run that will execute here with write or shell permissions starts only when this machine's
//! own person asked for it (it was queued here, or the person here approved it), or when this
//! machine serves as a runner (`serve --runner`) and its [`RunnerPolicy`] allows the requester,
//! the permissions and the repository. Anything else that names this machine (`run --on`, a
//! follow-up of a run that ran here, a wake caused by a teammate's signals) is held
//! (`approval`) for this machine's person, asked in its Inbox and tray; a run queued for any
//! runner that this runner's policy refuses is left for another runner.
//!
//! Where a request came from is data, never a convention: a run's `origin` is the machine whose
//! daemon queued it (set on the team database by the queueing machine), a signal's `machine`
//! the machine whose daemon wrote it (stamped by the database session), and a cloud agent's
//! signals are `remote`. On a machine's own board (no team) everything is this machine's.
//!
//! Board only: pure rules over a run's row; no processes, settings files or hosts.

use serde::{Deserialize, Serialize};

use super::model::Permissions;

/// How far a runner lets other machines' requests go on it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema, ts_rs::TS)]
#[ts(export, export_to = "board.ts")]
#[serde(default)]
pub struct RunnerPolicy {
    /// Who may start runs here: machine names, the people working there (as a run names its
    /// requester), or `*` for everyone on the team.
    pub people: Vec<String>,
    /// The most a teammate's run may do here: `read` (no writes, no commands), `write` (files,
    /// no commands) or `shell` (files and commands).
    pub max_permissions: PermissionLevel,
    /// Repositories runs from others may work in (remotes as `host/owner/name`, e.g.
    /// `github.com/acme/shop`); empty: any.
    pub repos: Vec<String>,
}

impl Default for RunnerPolicy {
    /// A machine that opted in as a runner takes its team's runs, as `--runner` always meant.
    fn default() -> Self {
        Self { people: vec!["*".into()], max_permissions: PermissionLevel::Shell, repos: Vec::new() }
    }
}

/// What a run may do, ordered.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema, ts_rs::TS,
)]
#[ts(export, export_to = "board.ts")]
#[serde(rename_all = "snake_case")]
pub enum PermissionLevel {
    Read,
    Write,
    #[default]
    Shell,
}

impl PermissionLevel {
    pub fn of(p: &Permissions) -> Self {
        if p.allow.iter().any(|t| t.starts_with("Shell(")) {
            PermissionLevel::Shell
        } else if p.allow.iter().any(|t| t.starts_with("Write(")) {
            PermissionLevel::Write
        } else {
            PermissionLevel::Read
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            PermissionLevel::Read => "read",
            PermissionLevel::Write => "write",
            PermissionLevel::Shell => "shell",
        }
    }
}

/// What this machine is, for the rule.
#[derive(Debug, Clone, Default)]
pub struct Here<'a> {
    /// This machine's name on the team's board; `None` on its own board.
    pub machine: Option<&'a str>,
    /// It serves as a runner for others (`serve --runner`).
    pub runner: bool,
    pub policy: Option<&'a RunnerPolicy>,
}

/// A queued run as the rule sees it.
#[derive(Debug, Clone)]
pub struct Request<'a> {
    pub origin: Option<&'a str>,
    pub requested_by: &'a str,
    pub permissions: &'a Permissions,
    /// The repository's remote, compared by `remote_key` form (`host/owner/name`).
    pub repo: Option<&'a str>,
}

/// Whether `r` may start here now; `Err` says why not, in the words the person reads.
pub fn may_start(here: &Here, r: &Request) -> Result<(), String> {
    let level = PermissionLevel::of(r.permissions);
    let Some(me) = here.machine else { return Ok(()) };
    if level == PermissionLevel::Read || r.origin.is_none_or(|o| o == me) {
        return Ok(());
    }
    let from = r.origin.unwrap_or("another machine");
    if !here.runner {
        return Err(format!(
            "{} asked from {from} to run here with {} permissions; this machine is not a runner for the team",
            r.requested_by,
            level.as_str()
        ));
    }
    let policy = here.policy.cloned().unwrap_or_default();
    let who_ok = policy.people.iter().any(|p| p == "*" || p == r.requested_by || Some(p.as_str()) == r.origin);
    if !who_ok {
        return Err(format!("{} ({from}) is not among the people this runner takes runs from", r.requested_by));
    }
    if level > policy.max_permissions {
        return Err(format!(
            "{} permissions are more than this runner allows others ({})",
            level.as_str(),
            policy.max_permissions.as_str()
        ));
    }
    if !policy.repos.is_empty() && !r.repo.is_some_and(|repo| policy.repos.iter().any(|p| p == repo)) {
        return Err(format!(
            "the repository {} is not one this runner works in for others",
            r.repo.unwrap_or("(none: a folder without a remote)")
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn perms(allow: &[&str]) -> Permissions {
        Permissions { allow: allow.iter().map(|s| (*s).to_owned()).collect(), ..Default::default() }
    }

    #[test]
    fn a_teammates_write_or_shell_run_starts_only_where_its_person_or_a_runners_policy_allows() {
        let (w, s, r) = (perms(&["Write(**)"]), perms(&["Write(**)", "Shell(npm)"]), perms(&["Read(**)"]));
        let req = |origin, p| Request { origin, requested_by: "bob", permissions: p, repo: Some("github.com/a/shop") };
        let laptop = Here { machine: Some("alice-laptop"), runner: false, policy: None };
        // Its own board, its own person, or nothing that changes anything: always.
        assert!(may_start(&Here::default(), &req(Some("bob-desk"), &s)).is_ok());
        assert!(may_start(&laptop, &req(Some("alice-laptop"), &s)).is_ok());
        assert!(may_start(&laptop, &req(None, &s)).is_ok());
        assert!(may_start(&laptop, &req(Some("bob-desk"), &r)).is_ok());
        // A teammate's writes on a machine that is no runner: held.
        let why = may_start(&laptop, &req(Some("bob-desk"), &w)).unwrap_err();
        assert!(why.contains("not a runner"), "{why}");
        // A runner: its policy decides.
        let open = RunnerPolicy::default();
        let runner = |policy| Here { machine: Some("ci-box"), runner: true, policy };
        assert!(may_start(&runner(Some(&open)), &req(Some("bob-desk"), &s)).is_ok());
        let strict = RunnerPolicy {
            people: vec!["carol".into(), "bob-desk".into()],
            max_permissions: PermissionLevel::Write,
            repos: vec!["github.com/a/shop".into()],
        };
        assert!(may_start(&runner(Some(&strict)), &req(Some("bob-desk"), &w)).is_ok());
        assert!(may_start(&runner(Some(&strict)), &req(Some("bob-desk"), &s)).unwrap_err().contains("more than"));
        let stranger = Request { origin: Some("eve-box"), requested_by: "eve", permissions: &w, repo: None };
        assert!(may_start(&runner(Some(&strict)), &stranger).unwrap_err().contains("not among"));
        let elsewhere = Request { repo: Some("github.com/a/other"), ..req(Some("bob-desk"), &w) };
        assert!(may_start(&runner(Some(&strict)), &elsewhere).unwrap_err().contains("repository"));
    }
}
