//! The worktrees Tether keeps for runs, as the person asks about them: what they use on disk
//! (Health), and reaping the old ones now. A run's git life itself — isolation, making,
//! committing, recovering, removing — is `tether-work`'s.

use std::path::Path;

use serde::Serialize;

use crate::Tether;
use crate::board::runs::{RunWorktree, WorktreeState, WorktreeUse};
use crate::error::Result;

/// Git's refusals as coded errors (where `ops::trace` has always found it).
pub(crate) use tether_work::git_err;

/// Removes worktrees whose runs all ended longer ago than the retention (the runner does this
/// every few minutes). The worktrees removed.
pub fn reap(t: &Tether) -> Result<Vec<RunWorktree>> {
    tether_work::worktree::reap(t)
}

/// The worktrees Tether keeps for runs, with the disk they use (Health).
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct WorktreesReport {
    pub count: usize,
    pub bytes: u64,
    pub worktrees: Vec<WorktreeUse>,
}

pub fn worktrees(t: &Tether) -> Result<WorktreesReport> {
    let worktrees: Vec<WorktreeUse> =
        t.board().runs().worktrees().live()?.into_iter().filter(|u| u.worktree.state == WorktreeState::Ready).collect();
    let bytes = worktrees.iter().map(|u| tether_work::worktree::dir_bytes(Path::new(&u.worktree.path))).sum();
    Ok(WorktreesReport { count: worktrees.len(), bytes, worktrees })
}
