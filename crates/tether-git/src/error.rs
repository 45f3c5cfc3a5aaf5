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
    #[error(transparent)]
    Io(#[from] std::io::Error),
}
