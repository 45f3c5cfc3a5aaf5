//! The one place Tether's git commands are built: every `git` this crate runs (and so every git
//! Tether runs) comes from [`git`], so no caller can forget what keeps it safe.
//!
//! Why this matters: a run's agent may write any file in its worktree — including a `.git` (a
//! file saying `gitdir: elsewhere`, or a whole directory) with a config whose keys make git run a
//! command (`core.fsmonitor`, `core.hooksPath`, `core.pager`, `diff.external`, `filter.*`,
//! `core.sshCommand`, …) — and then Tether commits what it left, as the person. So:
//!
//! - **Pinned.** A command about a checkout Tether did not just find on the person's behalf runs
//!   with an explicit `--git-dir` and `--work-tree` (see `Repo::worktree_repo`): the git dir is
//!   the one the repository keeps for that worktree, found from the person's repository, never a
//!   `.git` found in the tree. An agent's `.git` is then an ordinary path git never reads (and
//!   never adds: git refuses a path named `.git`).
//! - **Nothing executes by configuration.** Whatever config is read, these are set on the command
//!   line, which beats every file: no filesystem monitor, hooks from an empty place (so no
//!   `pre-commit`, `post-checkout`, `post-merge`, `reference-transaction`, …), no pager, no
//!   automatic gc or maintenance, no submodule recursion, no `ext::` transport, no bare repository
//!   found by walking up. Diffs and blames add `--no-ext-diff --no-textconv` where they compare.
//!   The system config is not read (`GIT_CONFIG_NOSYSTEM`); the person's global config is, as in
//!   their terminal (their identity, credential helper and ssh command are theirs to use).
//! - **A clean environment.** Our own `GIT_*` variables are removed (a hook or shell that
//!   exported `GIT_DIR` cannot point us elsewhere); no prompt, no editor, no optional locks (a
//!   status never rewrites the person's index).
//!
//! What is left, on purpose: clean/smudge filters the *person's* config defines (Git LFS, say)
//! still apply to files whose `.gitattributes` name them, as in their terminal — an agent can
//! pick among those drivers but never define one, because the config that defines them is never
//! the agent's.

use std::ffi::OsStr;
use std::path::Path;
use std::process::{Command, Output};

use crate::error::{Error, Result};

/// Hooks are looked up here, where none can exist: `/dev/null/<hook>` is no file on any system
/// (Git for Windows maps `/dev/null` too), so no hook runs and nothing needs creating.
const NO_HOOKS: &str = "/dev/null";

/// `-c` settings every command runs with: each one a way config could make git execute
/// something or write where we did not ask.
const NEUTRAL: [&str; 9] = [
    "core.fsmonitor=false",
    "core.pager=cat",
    "core.untrackedCache=false",
    "gc.auto=0",
    "maintenance.auto=false",
    "submodule.recurse=false",
    "protocol.ext.allow=never",
    "safe.bareRepository=explicit",
    "advice.detachedHead=false",
];

/// Where a command runs: `dir` (its working directory) and, when pinned, the git dir and work
/// tree it must use instead of discovering them.
pub(crate) struct Place<'a> {
    pub dir: &'a Path,
    pub git_dir: Option<&'a Path>,
}

/// A `git` command in `place`, hardened as the module says.
pub(crate) fn git(place: &Place) -> Command {
    let mut c = Command::new("git");
    for (k, _) in std::env::vars_os() {
        if k.to_string_lossy().starts_with("GIT_") {
            c.env_remove(k);
        }
    }
    c.env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_EDITOR", "true")
        .env("GIT_SEQUENCE_EDITOR", "true")
        .env("GIT_PAGER", "cat")
        .env("GIT_OPTIONAL_LOCKS", "0");
    // `-C` rather than a working directory: a folder that is gone is git's error to word, and
    // with a pinned work tree, paths given to git are then relative to its top.
    c.arg("-C").arg(place.dir);
    if let Some(g) = place.git_dir {
        c.arg("--git-dir").arg(g).arg("--work-tree").arg(place.dir);
    }
    c.arg("-c").arg(format!("core.hooksPath={NO_HOOKS}"));
    for kv in NEUTRAL {
        c.arg("-c").arg(kv);
    }
    c
}

pub(crate) fn run<I, S>(place: &Place, args: I) -> Result<Output>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let mut c = git(place);
    c.args(args);
    c.output().map_err(|e| if e.kind() == std::io::ErrorKind::NotFound { Error::NoGit(e) } else { e.into() })
}

/// Runs git and returns its stdout, trimmed; a failure carries git's own words.
pub(crate) fn ok<I, S>(place: &Place, args: I) -> Result<String>
where
    I: IntoIterator<Item = S> + Clone,
    S: AsRef<OsStr>,
{
    let out = run(place, args.clone())?;
    if !out.status.success() {
        let command = args.into_iter().map(|a| a.as_ref().to_string_lossy().into_owned()).collect::<Vec<_>>().join(" ");
        let message = String::from_utf8_lossy(&out.stderr).trim().to_owned();
        return Err(Error::Git { command, message: crate::redact_userinfo(&message) });
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim_end().to_owned())
}
