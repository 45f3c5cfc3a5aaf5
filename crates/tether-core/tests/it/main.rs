//! Integration tests for tether-core over generated Cursor data dirs.

mod eras;
mod incremental;
mod readonly;

use tether_core::index::{Depth, IndexReport, no_progress};
use tether_core::sessions::{ListQuery, SearchQuery};
use tether_core::{CursorLocations, Paths, Tether};
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

    pub fn index(&self) -> IndexReport {
        self.t.index(Depth::Deep, &no_progress).unwrap()
    }

    pub fn search_ids(&self, q: &str) -> Vec<String> {
        self.t.search(&SearchQuery::new(q)).unwrap().into_iter().map(|h| h.session_id).collect()
    }

    pub fn all(&self) -> Vec<tether_core::sessions::SessionSummary> {
        self.t.list(&ListQuery { limit: 1000, ..Default::default() }).unwrap()
    }
}
