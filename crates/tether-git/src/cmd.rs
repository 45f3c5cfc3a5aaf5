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
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use wait_timeout::ChildExt;

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

/// How long one git command may take. A command that talks to a remote gets the network's time;
/// any other is local work, and one that takes longer is stuck — on a FIFO where git expected a
/// file (a `HEAD`, a ref, an object an agent made one), or a lock it waits on — and is ended
/// rather than holding a thread of the daemon for good.
fn limit(args: &[std::ffi::OsString]) -> Duration {
    let verb = args.iter().find(|a| !a.to_string_lossy().starts_with('-')).map(|a| a.to_string_lossy().into_owned());
    match verb.as_deref() {
        Some("clone" | "fetch" | "push" | "pull" | "ls-remote") => Duration::from_secs(600),
        _ => Duration::from_secs(120),
    }
}

pub(crate) fn run<I, S>(place: &Place, args: I) -> Result<Output>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let args: Vec<std::ffi::OsString> = args.into_iter().map(|a| a.as_ref().to_owned()).collect();
    let mut c = git(place);
    c.args(&args);
    output_within(c, limit(&args))
}

/// `c`'s output, or [`Error::TimedOut`] (the process killed) past `within`. Its output is read
/// on two threads as it comes, so a talkative command never blocks on a full pipe; they are
/// left to end on their own after a time-out (a process git started may hold the pipes a while).
pub(crate) fn output_within(mut c: Command, within: Duration) -> Result<Output> {
    c.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child =
        c.spawn().map_err(|e| if e.kind() == std::io::ErrorKind::NotFound { Error::NoGit(e) } else { e.into() })?;
    let drain = |pipe: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut b = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut b);
            }
            b
        })
    };
    let out = drain(child.stdout.take().map(|p| Box::new(p) as _));
    let err = drain(child.stderr.take().map(|p| Box::new(p) as _));
    let Some(status) = child.wait_timeout(within)? else {
        let _ = child.kill();
        let _ = child.wait();
        return Err(Error::TimedOut(within.as_secs()));
    };
    Ok(Output { status, stdout: out.join().unwrap_or_default(), stderr: err.join().unwrap_or_default() })
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_past_its_time_is_ended_and_said() {
        let t0 = std::time::Instant::now();
        let mut sleep = Command::new("sleep");
        sleep.arg("30");
        let r = output_within(sleep, Duration::from_millis(200));
        assert!(matches!(r, Err(Error::TimedOut(_))), "{r:?}");
        assert!(t0.elapsed() < Duration::from_secs(5));
        let mut talk = Command::new("sh");
        talk.args(["-c", "head -c 3000000 /dev/zero; echo done >&2"]);
        let big = output_within(talk, Duration::from_secs(30)).unwrap();
        assert_eq!((big.stdout.len(), big.stderr.as_slice()), (3_000_000, &b"done\n"[..]), "no pipe fills up");
    }
}
