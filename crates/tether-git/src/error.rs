//! The crate's errors: git missing, a folder that is not a repository, and a git command that
//! failed, with what it said.

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("git was not found: install git to give runs worktrees of their own ({0})")]
    NoGit(std::io::Error),
    #[error("{0} is not inside a git repository")]
    NotARepo(String),
    #[error("the branch {0} exists already")]
    BranchExists(String),
    #[error("git {command} failed: {message}")]
    Git { command: String, message: String },
    #[error("git printed what Tether cannot read ({0})")]
    Parse(String),
    #[error("{branch} has nothing that {into} does not have already")]
    NothingToMerge { branch: String, into: String },
    #[error("{} has staged changes; commit or unstage them first (a merge never sweeps them into a commit)", .0.display())]
    StagedChanges(std::path::PathBuf),
    #[error("{} has uncommitted changes in files the run changed: {}; commit or stash them first", checkout.display(), files.join(", "))]
    DirtyFiles { checkout: std::path::PathBuf, files: Vec<String> },
    #[error("the merge would conflict in {}; nothing was changed", .0.join(", "))]
    Conflicts(Vec<String>),
    #[error("{0}")]
    Unsupported(String),
    #[error("{0} is not a branch; a run's work is merged into a branch (git branch --list)")]
    NotABranch(String),
    #[error("{0} is not a checkout of this repository")]
    NotAWorktree(String),
    #[error("{} has ignored files the merge would overwrite: {}; move them aside first (they are yours, and git would not keep them)", checkout.display(), files.join(", "))]
    IgnoredFiles { checkout: std::path::PathBuf, files: Vec<String> },
    #[error("git refused to move {} to the merged commit, so nothing changed: {message}", checkout.display())]
    Refused { checkout: std::path::PathBuf, message: String },
    #[error("git did not finish within {0} s and was stopped (a file git waits on, or a lock held elsewhere)")]
    TimedOut(u64),
    #[error("the push was refused: {0}")]
    PushRefused(String),
    #[error("the repository has no remote {0:?}; add one (git remote add {0} URL) to push the run's branch")]
    NoRemote(String),
    #[error(transparent)]
    Io(#[from] std::io::Error),
}
