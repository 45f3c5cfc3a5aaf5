//! Git for Tether's runs: a run's own worktree and branch beside the person's checkout
//! ([`Repo::add_worktree`]), what it left uncommitted committed to that branch
//! ([`Worktree::commit_all`]), its diff against its base ([`Repo::diff`]) and its removal
//! ([`Repo::remove_worktree`]).
//!
//! Through the `git` CLI rather than a library: the person's own git, config and object formats
//! (worktrees, partial clones, new hash formats) work as they do in their terminal, and a
//! worktree made here is one `git worktree list` shows and `git worktree prune` understands. Every
//! command runs with the `GIT_*` variables of our own environment removed, so that a hook or a
//! shell that exported `GIT_DIR` cannot point us at another repository.
//!
//! What it must never do on its own: change the person's checkout — its files, index, HEAD,
//! stash, or any branch but the run's own. Every command here names the worktree it acts in, and
//! the only refs it writes are the run's branch (created with `-b`, refused if it exists), except
//! [`Repo::merge`], which is the person's explicit action: it moves the branch they merge into
//! (and a checkout that has it out, as `git merge --ff-only` does), refusing — with nothing
//! changed — whatever would lose or sweep up their own work.
//!
//! For code origin it also reads: a file's blame ([`Repo::blame`]) and commits' files, and writes
//! git notes (`refs/notes/agent-trace`) when the person turned that on for the repository.
//!
//! Depends on nothing of Tether's.

mod blame;
mod diff;
mod error;
mod merge;
mod repo;

pub use blame::{BlameLine, UNCOMMITTED};
pub use diff::{ChangeKind, Diff, FileChange};
pub use error::{Error, Result};
pub use merge::{Merged, Strategy};
pub use repo::{Head, Repo, Worktree, remote_key};
