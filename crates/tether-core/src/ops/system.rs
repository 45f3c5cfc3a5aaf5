//! The daemon and the data dir: status (and the unauthenticated health subset), what needs the
//! person's attention, the doctor's report, insights, installing Tether into a project, asking
//! for a re-index, and the how-tos cloud agents may fetch.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::Tether;
use crate::attention::{self, Attention};
use crate::board::principal::Principal;
use crate::board::roles;
use crate::error::{Error, ErrorCode, Result};
use crate::events::Event;
use crate::{doctor, init, insights};

/// What `/health` shows: no secrets, nothing that needs a token.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct Health {
    pub status: &'static str,
    pub version: &'static str,
    pub uptime_s: u64,
    pub index: IndexCounts,
}

#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct IndexCounts {
    /// `indexing` or `idle`.
    pub state: &'static str,
    pub sessions: i64,
    pub messages: i64,
}

pub fn health(t: &Tether) -> Health {
    let counts = t.store.read(|c| {
        Ok(c.query_row("SELECT count(*), coalesce(sum(message_count), 0) FROM sessions", [], |r| {
            Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?))
        })?)
    });
    let (sessions, messages) = counts.unwrap_or((-1, -1));
    Health {
        status: "ok",
        version: env!("CARGO_PKG_VERSION"),
        uptime_s: t.daemon.uptime().as_secs(),
        index: IndexCounts { state: if t.daemon.indexing() { "indexing" } else { "idle" }, sessions, messages },
    }
}

/// The daemon's state for the GUI and the tray: health, where it serves, whether watching is
/// paused, the port it moved from, and what needs the person.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct Status {
    #[serde(flatten)]
    pub health: Health,
    pub url: Option<String>,
    pub paused: bool,
    pub moved_from: Option<MovedFrom>,
    pub attention: Vec<Attention>,
}

#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct MovedFrom {
    pub port: u16,
    pub at: String,
}

pub fn status(t: &Tether) -> Result<Status> {
    Ok(Status {
        health: health(t),
        url: crate::daemon::running(&t.paths).and_then(|d| d.url),
        paused: t.daemon.paused(),
        moved_from: t.daemon.moved_from().map(|(port, at)| MovedFrom { port, at: crate::clock::iso(at) }),
        attention: attention::list(t).unwrap_or_default(),
    })
}

pub fn doctor(t: &Tether) -> Result<doctor::DoctorReport> {
    doctor::doctor(t)
}

pub fn insights(t: &Tether, q: &insights::InsightsQuery) -> Result<insights::Insights> {
    insights::insights(&t.store, q)
}

/// Asks the daemon's indexer for a deep pass now; `busy` when one is running.
pub fn reindex(t: &Tether, who: &Principal) -> Result<()> {
    if !who.is_person() {
        return Err(Error::NotAllowed("re-indexing is the person's to ask for".into()));
    }
    if t.daemon.indexing() {
        return Err(Error::Busy("indexing is already running".into()));
    }
    t.bus.emit(Event::ReindexRequested);
    Ok(())
}

/// Installing Tether into a project from the GUI.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct Install {
    pub project: PathBuf,
    /// Show what would change and write nothing.
    #[serde(default)]
    #[ts(optional, as = "Option<bool>")]
    pub dry_run: bool,
}

#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct Installed {
    pub diff: String,
    pub changed: Vec<String>,
    pub skipped: Vec<String>,
    pub applied: bool,
}

/// Writes Tether's MCP entry, hooks, rule and commands into a project's `.cursor/` (the person's
/// explicit request for those files).
pub fn install(t: &Tether, who: &Principal, i: &Install) -> Result<Installed> {
    if !who.is_person() {
        return Err(Error::NotAllowed("writing Cursor's config is the person's to ask for".into()));
    }
    if !i.project.is_dir() {
        return Err(Error::invalid("project", format!("{} is not a folder", i.project.display())));
    }
    let port = t.daemon.listening().map_or(crate::settings::DEFAULT_PORT, |p| p.port);
    let req = init::Request { project: Some(i.project.clone()), port, ..Default::default() };
    run_plan(&init::plan_request(&t.paths, &t.cursor(), &req)?, i.dry_run)
}

/// Installing (or removing) Tether as a Cursor 3 local plugin from the GUI.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct InstallPlugin {
    /// Show what would change and write nothing.
    #[serde(default)]
    #[ts(optional, as = "Option<bool>")]
    pub dry_run: bool,
    /// Remove the plugin folder instead (`tether uninit --plugin`).
    #[serde(default)]
    #[ts(optional, as = "Option<bool>")]
    pub remove: bool,
}

/// Writes (or removes) `~/.cursor/plugins/local/tether`: the MCP entry (token by environment),
/// hooks, rule, skill and commands, and nothing else of Cursor's.
pub fn install_plugin(t: &Tether, who: &Principal, i: &InstallPlugin) -> Result<Installed> {
    if !who.is_person() {
        return Err(Error::NotAllowed("writing Cursor's config is the person's to ask for".into()));
    }
    let port = t.daemon.listening().map_or(crate::settings::DEFAULT_PORT, |p| p.port);
    let req = init::Request { plugin: true, remove: i.remove, port, ..Default::default() };
    run_plan(&init::plan_request(&t.paths, &t.cursor(), &req)?, i.dry_run)
}

fn run_plan(plan: &init::Plan, dry_run: bool) -> Result<Installed> {
    if !dry_run {
        plan.apply()?;
    }
    Ok(Installed {
        diff: plan.diff(),
        changed: plan.effective().map(|c| c.path.display().to_string()).collect(),
        skipped: plan.skipped.clone(),
        applied: !dry_run,
    })
}

/// How-tos a cloud agent may fetch on demand: Tether's own (how to work with its board through
/// the callback API) and every role's rule.
pub fn skills(t: &Tether) -> Result<Vec<roles::Role>> {
    let mut out = vec![roles::Role {
        name: "tether".into(),
        description: "Working with Tether's board from a cloud agent: your task, signals, when to ask".into(),
    }];
    out.extend(roles::list(&t.paths.roles_dir())?);
    Ok(out)
}

/// One how-to's text (Markdown).
pub fn skill(t: &Tether, name: &str) -> Result<String> {
    if name == "tether" {
        return Ok(TETHER_SKILL.to_owned());
    }
    roles::rule(&t.paths.roles_dir(), name).map_err(|e| match e.code() {
        ErrorCode::Internal => e,
        _ => Error::NotFound(format!("no skill {name:?} (GET /api/skills/index lists them)")),
    })
}

const TETHER_SKILL: &str = "# Working with Tether from a cloud agent

Tether is the person's agent board. With the bearer from `POST /api/agent-auth/exchange`:

- `GET /api/agent/task`: your task (title, description, acceptance criteria, notes and handoffs
  from earlier agents). Read it first.
- `PATCH /api/agent/task` with `{\"comment\": \"...\"}` reports progress; `{\"status\": \"blocked\",
  \"comment\": \"...\", \"handoff\": true}` says what stops you; `{\"status\": \"in_review\", \"summary\":
  \"...\"}` when the work is done (Tether also moves it when your run ends).
- `POST /api/agent/signals` with `{\"to\": \"human\", \"type\": \"question\", \"body\": \"...\"}` asks the
  person; `status_update` tells without asking. Ask when a decision is theirs, not to report.
- `GET /api/skills/index` and `GET /api/skills/{name}`: role rules (planner, backend, frontend,
  reviewer, and the person's own) when a role fits your work.

The bearer works only for these calls, only for this run, and expires.
";
