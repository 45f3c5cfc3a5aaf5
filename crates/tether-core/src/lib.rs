//! Tether's engine: reads Cursor's chat history (read-only, every storage era) into our own
//! SQLite + FTS5 index and keeps it fresh (`history`), and keeps the board people and agents share
//! (`board`: tasks, agents, signals).
//!
//! [`Tether`] is the engine for one data dir: the store, the settings held in memory, the event
//! bus. What people and agents do with it is [`ops`]: one function per operation, deciding
//! authority on the caller's `Principal`; hosts (the CLI, the servers, the desktop app) only map
//! their arguments onto those. This crate must not depend on tauri, clap, axum or rmcp, and
//! prints nothing: it logs through `tracing`.

pub mod attention;
pub mod code_origin;
pub mod daemon;
pub mod doctor;
pub mod events;
pub mod executor;
pub mod init;
pub mod insights;
pub mod model;
pub mod nofollow;
pub mod ops;
pub mod settings;
pub mod team;
pub mod token;
pub mod usage;
mod work;

// The domains are core's to use, not to hand on: a host speaks `model`, `ops`, `events` and
// `Tether`; a crate below the hosts that needs a domain names it in its own Cargo.toml.
pub(crate) use tether_board as board;
pub(crate) use tether_history as history;
pub use tether_store::{clock, error, paths, sql, store};

use std::sync::Arc;

pub use board::Board;
pub use error::{Error, ErrorCode, Result};
pub use paths::{CursorLocations, Paths};

use history::index::{Depth, IndexReport, ProgressFn};
use history::{cursor, watch};
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
    /// What runs agents here, registered by the host at start (none: runs are not driven).
    pub executors: executor::Executors,
    /// The team's database when this instance has joined one: the board lives there instead of
    /// in `store` (swapped on join and leave, without a restart).
    team: std::sync::RwLock<Option<Arc<dyn sql::Database>>>,
    /// Counts the board's moves (join, leave), so components that only act on a team's board
    /// sleep until one instead of looking on a timer.
    team_moves: tokio::sync::watch::Sender<u64>,
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
        // Back on the team's board if this data dir joined one. A team.json or password that
        // cannot be read leaves the board local, said loudly: `tether team status` shows why.
        let team = Self::rejoin(&paths, &bus).unwrap_or_else(|e| {
            tracing::warn!("the team database could not be restored, so the board is this machine's: {e}");
            None
        });
        Ok(Self {
            paths,
            cursor: std::sync::RwLock::new(cursor),
            store,
            settings: std::sync::RwLock::new(settings),
            bus,
            daemon: daemon::State::default(),
            executors: executor::Executors::default(),
            team: std::sync::RwLock::new(team),
            team_moves: tokio::sync::watch::Sender::new(0),
        })
    }

    /// The board on the team database this data dir joined, if any, with the secrets the keyring
    /// keeps for it (read only when there is a team to reach).
    fn rejoin(paths: &Paths, bus: &events::Bus) -> Result<Option<Arc<dyn sql::Database>>> {
        let Some(j) = tether_team::Joined::read(&paths.data_dir)? else { return Ok(None) };
        let (identity, password) = (token::team_identity(paths)?, token::team_password(paths)?);
        let bus = bus.clone();
        let board = tether_team::board::rejoin(&j, identity.as_deref(), password, move |c| bus.announce(c))?;
        Ok(Some(Arc::new(board)))
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

    /// What is this machine's, whatever the board's engine: the chat history and its index, code
    /// origin, MCP sessions, the tokens' state. Never a teammate's to see; what is shared is
    /// [`Self::board`].
    pub fn local(&self) -> &Store {
        &self.store
    }

    /// This machine's MCP sessions (persisted for the transport; never the team's).
    pub fn mcp_sessions(&self) -> board::live::McpSessions<'_> {
        board::live::McpSessions::new(self.local())
    }

    /// Tasks, agents, signals and runs, wherever the board is now.
    pub fn board(&self) -> Board<'_> {
        Board::on(self.board_db())
    }

    /// The database the board is on now: the team's once joined, else this machine's store.
    /// Every board read and write goes through this, so joining or leaving moves them all.
    pub fn board_db(&self) -> board::Engine<'_> {
        match &*self.team.read().unwrap_or_else(|p| p.into_inner()) {
            Some(db) => board::Engine::Shared(Arc::clone(db)),
            None => board::Engine::Borrowed(&self.store),
        }
    }

    /// Moves the board to `team` (joined) or back to this machine's store (`None`: left).
    pub fn set_team(&self, team: Option<Arc<dyn sql::Database>>) {
        *self.team.write().unwrap_or_else(|p| p.into_inner()) = team;
        self.team_moves.send_modify(|n| *n += 1);
    }

    /// Changes each time the board moves to a team's database or back (see [`Self::set_team`]).
    pub fn team_moves(&self) -> tokio::sync::watch::Receiver<u64> {
        self.team_moves.subscribe()
    }

    /// Whether the board is on a team's database.
    pub fn in_team(&self) -> bool {
        self.team.read().unwrap_or_else(|p| p.into_inner()).is_some()
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
