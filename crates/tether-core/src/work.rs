//! The engine as a run's git life sees it: [`Tether`] is a [`tether_work::Context`] (the board
//! wherever it is, the run settings, where worktrees and clones go, the GitHub credentials, and
//! the bus for what it appends to a run's log), so `tether-work` needs nothing else of core; and
//! the folders runs may work in, which it and `ops::runs` both ask for.

use std::path::PathBuf;

use tether_work::{GitHub, WorkSettings};

use crate::board::runs::StoredEvent;
use crate::error::Result;
use crate::settings::RunSettings;
use crate::{Tether, board};

impl tether_work::Context for Tether {
    fn board(&self) -> board::Engine<'_> {
        self.board_db()
    }

    fn settings(&self) -> Result<WorkSettings> {
        Ok(work_settings(&Tether::settings(self)?.runs))
    }

    fn default_worktrees_dir(&self) -> PathBuf {
        self.paths.worktrees_dir()
    }

    fn clones_dir(&self) -> PathBuf {
        self.paths.team_repos_dir()
    }

    fn roots(&self) -> Result<Vec<PathBuf>> {
        roots(self)
    }

    fn github(&self) -> Result<Option<GitHub>> {
        let Some((token, _)) = crate::token::github_token(&self.paths)? else { return Ok(None) };
        Ok(Some(GitHub { api: Tether::settings(self)?.github_api()?, token }))
    }

    fn appended(&self, run: &str, events: Vec<StoredEvent>) {
        self.bus.run_log(crate::events::RunLog::Events { run: run.to_owned(), events: events.into() });
    }
}

/// The part of the run settings a run's git life reads.
pub(crate) fn work_settings(rs: &RunSettings) -> WorkSettings {
    WorkSettings {
        isolate: rs.isolate,
        worktrees_dir: rs.worktrees_dir.clone(),
        worktree_retention_days: rs.worktree_retention_days,
        keep_branch_after_merge: rs.keep_branch_after_merge,
    }
}

/// Folders runs may work in: the saved roots, and the projects Cursor's history knows that
/// exist on this machine; canonical, without duplicates.
pub(crate) fn roots(t: &Tether) -> Result<Vec<PathBuf>> {
    let saved = t.settings()?.runs.roots;
    let seen = crate::history::sessions::projects(&t.store)?.into_iter().map(|p| PathBuf::from(p.path));
    // Team mode: what this machine cloned to run other machines' runs (Tether's own folder).
    let cloned = t.in_team().then(|| t.paths.team_repos_dir());
    let mut out: Vec<PathBuf> = Vec::new();
    for p in saved.into_iter().chain(seen).chain(cloned) {
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
