//! Integration tests for tether-core over generated Cursor data dirs.

mod agents;
mod code_origin;
mod cursor3;
mod cursor_tracking;
mod eras;
mod incremental;
mod readonly;
mod search;
mod task_io;
mod tasks;
mod team;

use tether_core::{CursorLocations, Paths, Tether};
use tether_history::index::{Depth, IndexReport, no_progress};
use tether_history::sessions::{ListQuery, SearchQuery};
use tether_testkit::CursorFixture;

pub struct Env {
    pub fx: CursorFixture,
    pub data: tempfile::TempDir,
    pub t: Tether,
}

impl Env {
    pub fn new(fx: CursorFixture) -> Self {
        let data = tempfile::tempdir().unwrap();
        let loc = CursorLocations::explicit(Some(fx.user_dir.clone()), Some(fx.cursor_home.clone()));
        let t = Tether::open(Paths::at(data.path()), loc).unwrap();
        Self { fx, data, t }
    }

    /// Indexes, then has FTS5 check that both full-text indexes match their content tables (the
    /// indexer maintains them by hand, so every test doubles as a consistency test).
    pub fn index(&self) -> IndexReport {
        let r = self.t.index(Depth::Deep, &no_progress).unwrap();
        let w = self.t.store.writer();
        for t in ["messages_fts", "titles_fts"] {
            w.execute(&format!("INSERT INTO {t}({t}, rank) VALUES ('integrity-check', 1)"), [])
                .unwrap_or_else(|e| panic!("{t} disagrees with its content table: {e}"));
        }
        r
    }

    pub fn search_ids(&self, q: &str) -> Vec<String> {
        tether_history::sessions::search(&self.t.store, &SearchQuery::new(q))
            .unwrap()
            .into_iter()
            .map(|h| h.session_id)
            .collect()
    }

    pub fn all(&self) -> Vec<tether_history::sessions::SessionSummary> {
        tether_history::sessions::list(&self.t.store, &ListQuery { limit: 1000, ..Default::default() }).unwrap()
    }
}
