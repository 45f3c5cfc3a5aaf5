//! A run's git life: where a local run works ([`place`]: a worktree of its own, or in place and
//! why; another machine's run found or cloned here), its worktree made, its work committed when
//! it ends, what a crash left recovered, old worktrees reaped ([`worktree`]), and what the person
//! does with its work afterwards — diff, comments' quotes, merge, pull request, discard, and pull
//! requests merged on GitHub ([`review`]).
//!
//! Below tether-core, beside the board: it depends on the board (what was decided), git and
//! GitHub (doing it) and the store (errors, clock, paths), never on tether-core, a host or an
//! executor. It reaches the engine through [`Context`], the few things a run's git life needs:
//! the board, the settings it reads, where worktrees and clones go, the GitHub credentials, and
//! a way to say what it appended to a run's log. Who may ask for any of this is decided above,
//! in `tether_core::ops`.
//!
//! Tether makes the worktree itself (`git worktree add -b`) instead of passing the Cursor CLI's
//! `--worktree`: the path and the branch are then decided and recorded before anything exists
//! (a run's number names both, so two runs never share one), the base is the one the person
//! chose, a start after kill -9 finds exactly what to resume or clean, and clean-up does not
//! depend on where a CLI version chose to put things.

pub mod place;
pub mod review;
pub mod worktree;

use std::path::PathBuf;

use tether_board::Engine;
use tether_board::runs::{ChangeSummary, Run, StoredEvent};
use tether_store::error::{Error, Result};

/// What a run's git life needs from the engine it runs in (tether-core's `Tether` is one).
pub trait Context {
    /// The board, wherever it is now.
    fn board(&self) -> Engine<'_>;
    /// The settings read here, as they are now.
    fn settings(&self) -> Result<WorkSettings>;
    /// Where worktrees go when the settings name no folder.
    fn default_worktrees_dir(&self) -> PathBuf;
    /// Where this machine clones another machine's repository to run its runs.
    fn clones_dir(&self) -> PathBuf;
    /// The folders runs may work in, canonical.
    fn roots(&self) -> Result<Vec<PathBuf>>;
    /// GitHub's API and the token kept for it; `None` without a token.
    fn github(&self) -> Result<Option<GitHub>>;
    /// Events were appended to a run's log here (the host tells whoever follows it).
    fn appended(&self, run: &str, events: Vec<StoredEvent>);
}

/// The run settings a run's git life reads.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WorkSettings {
    /// A run on a git repository gets a worktree of its own.
    pub isolate: bool,
    /// Where worktrees go (`None`: the data dir's `worktrees/`).
    pub worktrees_dir: Option<PathBuf>,
    pub worktree_retention_days: u32,
    pub keep_branch_after_merge: bool,
}

/// Where GitHub is and how to talk to it as the person.
#[derive(Debug, Clone)]
pub struct GitHub {
    pub api: String,
    pub token: String,
}

/// Git's refusals are the caller's to act on (a conflict, a dirty checkout); anything else is
/// git failing.
pub fn git_err(e: tether_git::Error) -> Error {
    use tether_git::Error as G;
    match e {
        G::NothingToMerge { .. }
        | G::StagedChanges(_)
        | G::DirtyFiles { .. }
        | G::Conflicts(_)
        | G::BranchExists(_)
        | G::IgnoredFiles { .. }
        | G::Refused { .. }
        | G::PushRefused(_)
        | G::Unsupported(_) => Error::Conflict(e.to_string()),
        G::NotAWorktree(_) => Error::Conflict(e.to_string()),
        G::NotARepo(_) => Error::NotFound(e.to_string()),
        G::NotABranch(_) => Error::invalid("into", e.to_string()),
        G::NoRemote(_) => Error::invalid("remote", e.to_string()),
        e => Error::Git(e.to_string()),
    }
}

/// GitHub's refusals as the person's to fix (a token, a repository); the rest as GitHub failing.
pub fn github_err(e: tether_github::Error) -> Error {
    use tether_github::Error as G;
    match e {
        G::Unauthorized | G::Forbidden(_) => Error::NotAllowed(e.to_string()),
        G::NoRepo(_) => Error::NotFound(e.to_string()),
        G::Invalid(_) | G::NotGitHub(_) | G::Credentials(_) => Error::invalid("pull request", e.to_string()),
        e => Error::Git(e.to_string()),
    }
}

/// Why a run has no worktree to act on: a cloud run's work is at Cursor, an in-place run worked
/// on the checkout, and a run that never started has none yet.
pub fn no_worktree(run: &Run) -> Error {
    let why = match (&run.cloud, &run.in_place) {
        (Some(c), _) => format!(
            "{} is a Cursor Cloud run: its work is on {} of {}{}",
            run.id,
            c.pushed_branch.as_deref().or(c.branch.as_deref()).unwrap_or("the branch Cursor pushed"),
            c.repo,
            c.pr_url.as_ref().map(|u| format!(" ({u})")).unwrap_or_default()
        ),
        (None, Some(why)) => format!("{} worked in place ({why}); it has no worktree or branch of its own", run.id),
        (None, None) => format!("{} has no worktree (it never started)", run.id),
    };
    Error::NotFound(why)
}

/// A diff's counts, as a run keeps them.
pub fn summarize(d: &tether_git::Diff) -> ChangeSummary {
    ChangeSummary {
        files: d.files.len() as u32,
        added: d.added(),
        deleted: d.deleted(),
        binary: d.files.iter().filter(|f| f.is_binary()).count() as u32,
    }
}
