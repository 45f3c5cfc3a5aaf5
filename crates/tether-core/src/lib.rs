//! Tether's engine: reads Cursor's chat history (read-only, every storage era) into our own
//! SQLite + FTS5 index and keeps it fresh (`history`), and keeps the board people and agents share
//! (`board`: tasks, agents, signals).
//!
//! Hosts (the CLI, the MCP server, the desktop app) are thin layers over [`Tether`] and the
//! facades it hands out ([`Tether::board`]). This crate must not depend on tauri, clap, axum or
//! rmcp, and prints nothing: it logs through `tracing`.

pub mod attention;
pub mod daemon;
pub mod doctor;
pub mod events;
pub mod init;
pub mod insights;
pub mod ops;
pub mod settings;
pub mod token;

pub use tether_board as board;
pub use tether_history as history;
pub use tether_store::{clock, error, paths, store};

use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use board::Board;
pub use error::{Error, ErrorCode, Result};
pub use paths::{CursorLocations, Paths};

use history::index::{Depth, IndexReport, ProgressFn};
use history::sessions::{
    ListQuery, ProjectFilter, SearchHit, SearchQuery, SessionDetail, SessionSummary, ShowOptions, TagUpdate,
};
use history::{cursor, export, sessions, watch};
use store::Store;

/// The engine for one data dir and one set of Cursor locations: what every operation runs
/// against. It holds the settings (read once, swapped when they are saved or the file changes)
/// and the event bus its writes announce themselves on.
#[derive(Debug)]
pub struct Tether {
    pub paths: Paths,
    /// Where Cursor's data is; a running daemon re-points it when the settings change.
    cursor: std::sync::RwLock<CursorLocations>,
    pub store: Store,
    /// The saved settings as last read, or why they could not be.
    settings: std::sync::RwLock<std::result::Result<settings::Settings, String>>,
    pub bus: events::Bus,
    /// What the daemon in this process is doing (nothing, in a one-shot CLI process).
    pub daemon: daemon::State,
}

impl Tether {
    pub fn open(paths: Paths, mut cursor: CursorLocations) -> Result<Self> {
        paths.ensure()?;
        let store = Store::open(&paths.db())?;
        cursor.cloud_dir = Some(paths.cloud_dir());
        // Made here so the daemon's watcher sees the first transcript a cloud run writes.
        let _ = std::fs::create_dir(paths.cloud_dir());
        let bus = events::Bus::default();
        let announce = bus.clone();
        store.announce_writes(move |c| announce.announce(c));
        let settings = settings::Settings::load(&paths).map_err(|e| e.to_string());
        Ok(Self {
            paths,
            cursor: std::sync::RwLock::new(cursor),
            store,
            settings: std::sync::RwLock::new(settings),
            bus,
            daemon: daemon::State::default(),
        })
    }

    /// Reads `settings.json` again (it changed on disk); true when what it says changed.
    pub fn reload_settings(&self) -> bool {
        let now = settings::Settings::load(&self.paths).map_err(|e| e.to_string());
        let mut held = self.settings.write().unwrap_or_else(|p| p.into_inner());
        let changed = *held != now;
        *held = now;
        changed
    }

    /// The person at this machine, by the name they go by on the board: `TETHER_USER`, else the
    /// login name, else `me`. The CLI (unless `--as` says otherwise) and the GUI both act as them.
    pub fn person() -> String {
        ["TETHER_USER", "USER", "USERNAME"]
            .iter()
            .find_map(|k| std::env::var(k).ok().map(|v| v.trim().to_owned()).filter(|v| !v.is_empty()))
            .unwrap_or_else(|| "me".into())
    }

    /// Where Cursor's data is now.
    pub fn cursor(&self) -> CursorLocations {
        self.cursor.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Reads Cursor's data from elsewhere from now on (the next index pass and watcher use it).
    pub fn set_cursor(&self, mut loc: CursorLocations) {
        loc.cloud_dir = Some(self.paths.cloud_dir());
        *self.cursor.write().unwrap_or_else(|p| p.into_inner()) = loc;
    }

    /// Tasks, agents and signals.
    pub fn board(&self) -> Board<'_> {
        Board::new(&self.store)
    }

    pub fn index(&self, depth: Depth, progress: ProgressFn<'_>) -> Result<IndexReport> {
        history::index::run(&self.store, &self.cursor(), &self.paths.scratch_dir(), depth, progress)
    }

    pub fn index_sources(&self, sources: &[cursor::Source], depth: Depth) -> Result<IndexReport> {
        history::index::run_sources(
            &self.store,
            sources,
            &self.paths.scratch_dir(),
            depth,
            &history::index::no_progress,
            false,
        )
    }

    pub fn list(&self, q: &ListQuery) -> Result<Vec<SessionSummary>> {
        sessions::list(&self.store, q)
    }

    pub fn search(&self, q: &SearchQuery) -> Result<Vec<SearchHit>> {
        sessions::search(&self.store, q)
    }

    /// Chats searchable of all listed: less than all while a first index runs.
    pub fn coverage(&self) -> Result<sessions::Coverage> {
        sessions::coverage(&self.store)
    }

    /// One chat's list entry, by id, nickname or id prefix (also while its messages are not indexed).
    pub fn summary(&self, key: &str) -> Result<SessionSummary> {
        self.store.read(|c| sessions::summary(c, &sessions::resolve(c, key)?))
    }

    /// Which chats a caller means by `project`: `all` (or empty), `current` (the caller's
    /// workspace, else all when it is not known), or a path.
    pub fn project_scope(&self, project: Option<&str>, caller_roots: &[String]) -> ProjectFilter {
        match project.map(str::trim).unwrap_or("current") {
            "all" | "" => ProjectFilter::All,
            "current" => caller_roots.first().map_or(ProjectFilter::All, |r| ProjectFilter::Path(r.clone())),
            p => ProjectFilter::Path(p.to_owned()),
        }
    }

    pub fn show(&self, key: &str, o: &ShowOptions) -> Result<SessionDetail> {
        sessions::show(&self.store, key, o)
    }

    pub fn read_window(&self, key: &str, o: &sessions::WindowOptions) -> Result<sessions::Window> {
        sessions::read_window(&self.store, key, o)
    }

    pub fn tag(&self, key: &str, u: &TagUpdate) -> Result<SessionSummary> {
        sessions::tag(&self.store, key, u)
    }

    pub fn projects(&self) -> Result<Vec<sessions::ProjectCount>> {
        sessions::projects(&self.store)
    }

    pub fn tags(&self) -> Result<Vec<sessions::TagCount>> {
        sessions::tags(&self.store)
    }

    pub fn rename_tag(&self, from: &str, to: &str) -> Result<sessions::TagCount> {
        sessions::rename_tag(&self.store, from, to)
    }

    pub fn delete_tag(&self, tag: &str) -> Result<usize> {
        sessions::delete_tag(&self.store, tag)
    }

    pub fn export(&self, key: &str, format: export::Format) -> Result<String> {
        export::export(&self.store, key, format)
    }

    pub fn doctor(&self) -> Result<doctor::DoctorReport> {
        doctor::doctor(self)
    }

    /// Every agent, with live status and surface support. With no daemon running nothing can
    /// reach an agent, so every surface reads `degraded`.
    pub fn agents(&self) -> Result<Vec<board::agents::Agent>> {
        let mut all = self.board().agents()?;
        if daemon::running(&self.paths).is_none() {
            for a in all.iter_mut().filter(|a| a.surface.is_some()) {
                a.surface = Some("degraded");
            }
        }
        Ok(all)
    }

    /// Folders runs may work in: the saved roots, and the projects Cursor's history knows that
    /// exist on this machine; canonical, without duplicates.
    pub fn run_roots(&self) -> Result<Vec<PathBuf>> {
        let saved = self.settings()?.runs.roots;
        let seen = self.projects()?.into_iter().map(|p| PathBuf::from(p.path));
        let mut out: Vec<PathBuf> = Vec::new();
        for p in saved.into_iter().chain(seen) {
            if let Ok(c) = p.canonicalize()
                && c.is_dir()
                && c.parent().is_some()
                && !out.contains(&c)
            {
                out.push(c);
            }
        }
        Ok(out)
    }

    /// Checks a run (prompt or task, a workspace inside the allowed roots — canonical, so a
    /// symlink cannot lead out —, a known role) and queues it.
    pub fn queue_run(&self, requested_by: &str, new: &board::runs::NewRun) -> Result<board::runs::Run> {
        use board::runs;
        runs::check(new)?;
        let place: runs::RunPlace = new.place.as_deref().unwrap_or_default().parse()?;
        if place == runs::RunPlace::Cloud {
            return self.queue_cloud_run(requested_by, new);
        }
        if new.repo.is_some() || new.git_ref.is_some() || new.branch.is_some() || new.auto_pr {
            return Err(Error::invalid("run", "repo, ref, branch and auto_pr are for cloud runs (where: cloud)"));
        }
        let settings = self.settings()?;
        let (task, prompt) = self.run_prompt(new)?;
        let ws = new
            .workspace
            .clone()
            .filter(|w| !w.trim().is_empty())
            .or_else(|| task.as_ref().and_then(|t| t.task.project.clone()))
            .ok_or_else(|| Error::invalid("workspace", "say which project folder the agent works in"))?;
        let workspace = self.check_run_workspace(Path::new(&ws))?;
        if let Some(r) = &new.role {
            board::roles::rule(&self.paths.roles_dir(), r)?;
        }
        let valid = runs::ValidRun {
            prompt,
            task: task.map(|t| board::tasks::parse_id(&t.task.id)).transpose()?,
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
        };
        runs::create(&self.store, requested_by, &valid)
    }

    /// The prompt of a run: the task's text (when bound to one) and the person's words.
    fn run_prompt(&self, new: &board::runs::NewRun) -> Result<(Option<board::tasks::TaskDetail>, String)> {
        let task = new.task.as_deref().map(|t| self.board().task(t)).transpose()?;
        let task_text = task.as_ref().map(|t| board::runs::task_prompt(&self.store, &t.task.id)).transpose()?;
        let prompt = match (new.prompt.as_deref().map(str::trim).filter(|p| !p.is_empty()), task_text) {
            (Some(p), Some(t)) => format!("{t}\n{p}\n"),
            (Some(p), None) => p.to_owned(),
            (None, Some(t)) => t,
            (None, None) => return Err(Error::invalid("run", "give a prompt, a task, or both")),
        };
        Ok((task, prompt))
    }

    /// Queues a Cursor Cloud run: the repository given, else the `origin` of the workspace (or
    /// the task's project); a task whose earlier cloud run worked on the same repository
    /// continues that agent. A role's rule goes into the prompt (there is no workspace to put
    /// it in); local permissions do not apply.
    fn queue_cloud_run(&self, requested_by: &str, new: &board::runs::NewRun) -> Result<board::runs::Run> {
        use board::{cloud, runs};
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
        let settings = self.settings()?;
        let (task, mut prompt) = self.run_prompt(new)?;
        let repo = match new.repo.as_deref().map(str::trim).filter(|r| !r.is_empty()) {
            Some(r) => cloud::normalize_repo(r)?,
            None => {
                let dir = new
                    .workspace
                    .clone()
                    .filter(|w| !w.trim().is_empty())
                    .or_else(|| task.as_ref().and_then(|t| t.task.project.clone()))
                    .ok_or_else(|| {
                        Error::invalid("repository", "say which GitHub repository the agent works on (repo)")
                    })?;
                cloud::git_origin(Path::new(&dir)).ok_or_else(|| {
                    Error::invalid("repository", format!("{dir} has no git origin remote; say which repository (repo)"))
                })?
            }
        };
        if let Some(r) = &new.role {
            let rule = board::roles::rule(&self.paths.roles_dir(), r)?;
            prompt = format!("{}\n\n---\n\n{prompt}", rule.trim());
        }
        let task_num = task.as_ref().map(|t| board::tasks::parse_id(&t.task.id)).transpose()?;
        let earlier = match task_num {
            Some(n) => cloud::earlier_for_task(&self.store, n, &repo)?,
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
            timeout_ms: new
                .timeout_secs
                .map_or(i64::from(settings.cloud.timeout_minutes) * 60_000, |s| s as i64 * 1000),
            permissions: runs::Permissions::default(),
            complete: new.complete,
            parent,
            resume_chat: earlier.and_then(|e| e.chat_id),
            cloud: spec,
        };
        runs::create(&self.store, requested_by, &valid)
    }

    /// A follow-up run continuing `id`'s Cursor chat with a new prompt.
    pub fn followup_run(&self, requested_by: &str, id: &str, prompt: &str) -> Result<board::runs::Run> {
        let valid = board::runs::followup_of(&self.store, id, prompt)?;
        if valid.cloud.is_none() {
            self.check_run_workspace(Path::new(&valid.workspace))?;
        }
        board::runs::create(&self.store, requested_by, &valid)
    }

    /// A run's folder, canonical, checked to be inside the allowed roots: when a run is queued,
    /// and again when it starts (a folder may be replaced by a link in between).
    pub fn check_run_workspace(&self, ws: &Path) -> Result<PathBuf> {
        let canon = ws.canonicalize().map_err(|e| {
            Error::invalid("workspace", format!("{}: {e} (give an existing project folder)", ws.display()))
        })?;
        if !canon.is_dir() {
            return Err(Error::invalid("workspace", format!("{} is not a folder", canon.display())));
        }
        let roots = self.run_roots()?;
        if roots.iter().any(|r| canon.starts_with(r)) {
            Ok(canon)
        } else {
            Err(Error::OutsideRoots { path: canon, roots: roots.iter().map(|r| r.display().to_string()).collect() })
        }
    }

    /// How-tos a cloud agent may fetch on demand (`GET /api/skills/index`): Tether's own (how to
    /// work with its board through the callback API) and every role's rule.
    pub fn skills(&self) -> Result<Vec<board::roles::Role>> {
        let mut out = vec![board::roles::Role {
            name: "tether".into(),
            description: "Working with Tether's board from a cloud agent: your task, signals, when to ask".into(),
        }];
        out.extend(self.roles()?);
        Ok(out)
    }

    /// One how-to's text (Markdown).
    pub fn skill(&self, name: &str) -> Result<String> {
        if name == "tether" {
            return Ok(TETHER_SKILL.to_owned());
        }
        board::roles::rule(&self.paths.roles_dir(), name)
    }

    /// Activity, projects, models, tokens where recorded, tasks and runs (the Insights view).
    pub fn insights(&self, q: &insights::InsightsQuery) -> Result<insights::Insights> {
        insights::insights(&self.store, q)
    }

    /// The roles a run can take (seeded on first use).
    pub fn roles(&self) -> Result<Vec<board::roles::Role>> {
        board::roles::list(&self.paths.roles_dir())
    }

    /// The settings as held (read at open, swapped when saved or when the file changes), or the
    /// defaults; an unreadable file is an error here until it is fixed.
    pub fn settings(&self) -> Result<settings::Settings> {
        match &*self.settings.read().unwrap_or_else(|p| p.into_inner()) {
            Ok(s) => Ok(s.clone()),
            Err(why) => Err(Error::Invalid { what: "settings file", reason: why.clone() }),
        }
    }

    /// Saves a change to the settings (validated as a whole first) and holds the result.
    pub fn update_settings(&self, patch: &settings::SettingsPatch) -> Result<settings::Settings> {
        let s = settings::Settings::update(&self.paths, patch)?;
        *self.settings.write().unwrap_or_else(|p| p.into_inner()) = Ok(s.clone());
        self.bus.emit(events::Event::Settings(events::SettingsEvent::default()));
        Ok(s)
    }

    pub fn watch(
        self: &Arc<Self>,
        cfg: watch::WatchConfig,
        on_event: impl Fn(watch::WatchEvent) + Send + 'static,
    ) -> Result<watch::WatchHandle> {
        watch::start(Arc::clone(self), cfg, on_event)
    }
}

impl watch::Indexer for Tether {
    fn locations(&self) -> CursorLocations {
        self.cursor()
    }

    fn index(&self, depth: Depth) -> Result<IndexReport> {
        Tether::index(self, depth, &history::index::no_progress)
    }

    fn index_sources(&self, sources: &[cursor::Source], depth: Depth) -> Result<IndexReport> {
        Tether::index_sources(self, sources, depth)
    }
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
