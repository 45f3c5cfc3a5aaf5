//! Tether's engine: reads Cursor's chat history (read-only, every storage era) into our own
//! SQLite + FTS5 index, keeps it fresh, and answers list/search/show/tag/export queries.
//!
//! Hosts (the CLI, the MCP server, the desktop app) are thin layers over [`Tether`]. This crate
//! must not depend on tauri, clap, axum or rmcp, and prints nothing: it logs through `tracing`.

pub mod agents;
pub mod attention;
pub mod cursor;
pub mod daemon;
pub mod doctor;
pub mod error;
pub mod export;
pub mod index;
pub mod init;
pub mod live;
pub mod model;
pub mod paths;
pub mod sessions;
pub mod settings;
pub mod store;
pub mod task_io;
pub mod tasks;
pub mod terms;
pub mod token;
pub mod watch;

use std::sync::Arc;

pub use error::{Error, ErrorCode, Result};
pub use paths::{CursorLocations, Paths};

use index::{Depth, IndexReport, ProgressFn};
use sessions::{ListQuery, SearchHit, SearchQuery, SessionDetail, SessionSummary, ShowOptions, TagUpdate};
use store::Store;

/// The engine for one data dir and one set of Cursor locations.
#[derive(Debug)]
pub struct Tether {
    pub paths: Paths,
    pub cursor: CursorLocations,
    pub store: Store,
}

impl Tether {
    pub fn open(paths: Paths, cursor: CursorLocations) -> Result<Self> {
        paths.ensure()?;
        let store = Store::open(&paths.db())?;
        Ok(Self { paths, cursor, store })
    }

    pub fn index(&self, depth: Depth, progress: ProgressFn<'_>) -> Result<IndexReport> {
        index::run(&self.store, &self.cursor, &self.paths.scratch_dir(), depth, progress)
    }

    pub fn index_sources(&self, sources: &[cursor::Source], depth: Depth) -> Result<IndexReport> {
        index::run_sources(&self.store, sources, &self.paths.scratch_dir(), depth, &index::no_progress, false)
    }

    pub fn list(&self, q: &ListQuery) -> Result<Vec<SessionSummary>> {
        sessions::list(&self.store, q)
    }

    pub fn search(&self, q: &SearchQuery) -> Result<Vec<SearchHit>> {
        sessions::search(&self.store, q)
    }

    pub fn show(&self, key: &str, o: &ShowOptions) -> Result<SessionDetail> {
        sessions::show(&self.store, key, o)
    }

    pub fn tag(&self, key: &str, u: &TagUpdate) -> Result<SessionSummary> {
        sessions::tag(&self.store, key, u)
    }

    pub fn export(&self, key: &str, format: export::Format) -> Result<String> {
        export::export(&self.store, key, format)
    }

    pub fn doctor(&self) -> Result<doctor::DoctorReport> {
        doctor::doctor(self)
    }

    pub fn watch(
        self: &Arc<Self>,
        cfg: watch::WatchConfig,
        on_event: impl Fn(watch::WatchEvent) + Send + 'static,
    ) -> Result<watch::WatchHandle> {
        watch::start(Arc::clone(self), cfg, on_event)
    }
}
