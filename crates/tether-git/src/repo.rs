//! A repository found from a folder, and the worktrees Tether makes in it for runs.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::error::{Error, Result};

/// A git repository as seen from one of its checkouts: `root` is that checkout's top folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repo {
    pub root: PathBuf,
}

/// What a checkout has out: its commit, and its branch unless HEAD is detached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Head {
    pub commit: String,
    pub branch: Option<String>,
}

/// A worktree Tether made for a run: its folder, its branch and the commit it started from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Worktree {
    pub path: PathBuf,
    pub branch: String,
    pub base: String,
}

/// `git` in `dir`, with our own environment's `GIT_*` variables removed.
pub(crate) fn git(dir: &Path) -> Command {
    let mut c = Command::new("git");
    c.arg("-C").arg(dir);
    for (k, _) in std::env::vars_os() {
        if k.to_string_lossy().starts_with("GIT_") {
            c.env_remove(k);
        }
    }
    // Never wait on a terminal for a password or an editor.
    c.env("GIT_TERMINAL_PROMPT", "0").env("GIT_EDITOR", "true");
    c
}

pub(crate) fn run<I, S>(dir: &Path, args: I) -> Result<Output>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let mut c = git(dir);
    c.args(args);
    let out =
        c.output().map_err(|e| if e.kind() == std::io::ErrorKind::NotFound { Error::NoGit(e) } else { e.into() })?;
    Ok(out)
}

/// Runs git and returns its stdout, trimmed; a failure carries git's own words.
pub(crate) fn ok<I, S>(dir: &Path, args: I) -> Result<String>
where
    I: IntoIterator<Item = S> + Clone,
    S: AsRef<OsStr>,
{
    let out = run(dir, args.clone())?;
    if !out.status.success() {
        let command = args.into_iter().map(|a| a.as_ref().to_string_lossy().into_owned()).collect::<Vec<_>>().join(" ");
        let message = String::from_utf8_lossy(&out.stderr).trim().to_owned();
        return Err(Error::Git { command, message });
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim_end().to_owned())
}

impl Repo {
    /// The repository `dir` is in, or `None` when it is in none (a run there works in place).
    pub fn discover(dir: &Path) -> Result<Option<Repo>> {
        let out = run(dir, ["rev-parse", "--show-toplevel"])?;
        if !out.status.success() {
            return Ok(None);
        }
        let root = String::from_utf8_lossy(&out.stdout).trim_end().to_owned();
        if root.is_empty() {
            // Inside a `.git` folder or a bare repository: nothing to check out.
            return Ok(None);
        }
        Ok(Some(Repo { root: PathBuf::from(root) }))
    }

    /// Like [`Repo::discover`], but a folder outside any repository is an error.
    pub fn open(dir: &Path) -> Result<Repo> {
        Self::discover(dir)?.ok_or_else(|| Error::NotARepo(dir.display().to_string()))
    }

    pub fn head(&self) -> Result<Head> {
        let commit = ok(&self.root, ["rev-parse", "--verify", "HEAD^{commit}"])?;
        let out = run(&self.root, ["symbolic-ref", "--quiet", "--short", "HEAD"])?;
        let branch = out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned());
        Ok(Head { commit, branch })
    }

    /// The commit `rev` names (a branch, a tag, a hash).
    pub fn resolve(&self, rev: &str) -> Result<String> {
        ok(&self.root, ["rev-parse", "--verify", "--end-of-options", &format!("{rev}^{{commit}}")])
    }

    pub fn branch_exists(&self, branch: &str) -> Result<bool> {
        let out = run(&self.root, ["show-ref", "--verify", "--quiet", &format!("refs/heads/{branch}")])?;
        Ok(out.status.success())
    }

    /// A new worktree at `path` on a new branch `branch` from commit `base`. Refuses a branch
    /// that exists (two runs never share one) and a `path` that exists (git does).
    pub fn add_worktree(&self, path: &Path, branch: &str, base: &str) -> Result<Worktree> {
        ok(&self.root, ["check-ref-format", "--branch", branch])?;
        if self.branch_exists(branch)? {
            return Err(Error::BranchExists(branch.to_owned()));
        }
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let path_s = path.to_string_lossy();
        ok(&self.root, ["worktree", "add", "--quiet", "-b", branch, &*path_s, base])?;
        Ok(Worktree { path: path.to_owned(), branch: branch.to_owned(), base: base.to_owned() })
    }

    /// Removes a run's worktree (with whatever is in it) and, when asked, its branch. A worktree
    /// already gone by hand is pruned from git's list instead.
    pub fn remove_worktree(&self, wt: &Worktree, delete_branch: bool) -> Result<()> {
        if wt.path.exists() {
            ok(&self.root, ["worktree", "remove", "--force", "--force", &*wt.path.to_string_lossy()])?;
        } else {
            ok(&self.root, ["worktree", "prune"])?;
        }
        if delete_branch && self.branch_exists(&wt.branch)? {
            ok(&self.root, ["branch", "-D", "--", &wt.branch])?;
        }
        Ok(())
    }

    /// The URL a remote fetches from (its push URL may differ; `push` uses git's choice).
    pub fn remote_url(&self, remote: &str) -> Result<String> {
        let out = run(&self.root, ["remote", "get-url", "--", remote])?;
        if !out.status.success() {
            return Err(Error::NoRemote(remote.to_owned()));
        }
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
    }

    /// Clones `url` into `dest` (which must not exist yet), with the person's own credentials
    /// (their helper or ssh agent; never a prompt).
    pub fn clone_into(url: &str, dest: &Path) -> Result<Repo> {
        let parent = dest.parent().ok_or_else(|| Error::NotARepo(dest.display().to_string()))?;
        std::fs::create_dir_all(parent)?;
        ok(parent, [OsStr::new("clone"), OsStr::new("--quiet"), OsStr::new("--"), OsStr::new(url), dest.as_os_str()])?;
        Repo::open(dest)
    }

    /// Brings a clone Tether made up to date: fetches `remote`, then fast-forwards the checked-out
    /// branch to its upstream when the checkout is clean and has not diverged (work a run left
    /// in it is never thrown away). Whether HEAD moved.
    pub fn fast_forward_from(&self, remote: &str) -> Result<bool> {
        ok(&self.root, ["fetch", "--quiet", "--prune", "--", remote])?;
        let status = ok(&self.root, ["status", "--porcelain=v1", "--untracked-files=normal"])?;
        if !status.is_empty() {
            return Ok(false);
        }
        let before = self.resolve("HEAD")?;
        if ok(&self.root, ["merge", "--ff-only", "--quiet", "@{upstream}"]).is_err() {
            return Ok(false);
        }
        Ok(self.resolve("HEAD")? != before)
    }

    /// Pushes `branch` to the same name at `remote`, with the person's own credentials (their
    /// helper or ssh agent; never a prompt).
    pub fn push(&self, remote: &str, branch: &str) -> Result<()> {
        self.remote_url(remote)?;
        let spec = format!("refs/heads/{branch}:refs/heads/{branch}");
        ok(&self.root, ["push", "--quiet", "--no-verify", "--", remote, &spec]).map(|_| ())
    }

    /// A file's text at a commit, `None` when it is not there (or not text).
    pub fn file_at(&self, commit: &str, path: &str) -> Result<Option<String>> {
        let out = run(&self.root, ["show", &format!("{commit}:{path}")])?;
        if !out.status.success() {
            return Ok(None);
        }
        Ok(String::from_utf8(out.stdout).ok())
    }

    /// The folders of this repository's worktrees, the main checkout first.
    pub fn worktrees(&self) -> Result<Vec<PathBuf>> {
        let out = ok(&self.root, ["worktree", "list", "--porcelain", "-z"])?;
        Ok(out.split('\0').filter_map(|l| l.strip_prefix("worktree ")).map(PathBuf::from).collect())
    }
}

impl Worktree {
    /// Commits everything the run left in its worktree (new, changed and deleted files) to its
    /// branch; the new commit, or `None` when there was nothing to commit. The person's hooks
    /// are not run (`--no-verify`): they guard the person's commits, and a failing one would
    /// leave the run's work uncommitted where a later clean-up could lose it.
    pub fn commit_all(&self, message: &str) -> Result<Option<String>> {
        self.commit_all_except(message, &[])
    }

    /// Like [`Worktree::commit_all`], leaving out `except` (paths relative to the worktree,
    /// folders with a trailing `/`): what the worktree's setup made or copied is not the run's work.
    pub fn commit_all_except(&self, message: &str, except: &[String]) -> Result<Option<String>> {
        let mut add: Vec<String> = ["add", "--all", "--", "."].map(str::to_owned).into();
        add.extend(except.iter().map(|p| format!(":(exclude,literal){}", p.trim_end_matches('/'))));
        ok(&self.path, &add)?;
        let staged = run(&self.path, ["diff", "--cached", "--quiet"])?;
        if staged.status.success() {
            return Ok(None);
        }
        let mut args = identity_args(&self.path);
        args.extend(["commit", "--quiet", "--no-verify", "--no-gpg-sign", "-m", message].map(str::to_owned));
        ok(&self.path, &args)?;
        ok(&self.path, ["rev-parse", "HEAD"]).map(Some)
    }
}

impl Worktree {
    /// Paths that are new or changed against the worktree's HEAD (untracked folders as one
    /// `dir/`), relative to it: what a setup left, before the agent starts.
    pub fn dirty_paths(&self) -> Result<Vec<String>> {
        let out = ok(&self.path, ["status", "--porcelain=v1", "-z", "--untracked-files=normal", "--no-renames"])?;
        Ok(out.split('\0').filter(|l| l.len() > 3).map(|l| l[3..].to_owned()).collect())
    }
}

/// `-c user.…` for what git's config lacks: a machine without a git identity still gets the
/// run's work committed, under Tether's.
pub(crate) fn identity_args(dir: &Path) -> Vec<String> {
    let mut args: Vec<String> = Vec::new();
    if ok(dir, ["config", "user.email"]).is_err() {
        args.extend(["-c".into(), "user.email=tether@localhost".into()]);
    }
    if ok(dir, ["config", "user.name"]).is_err() {
        args.extend(["-c".into(), "user.name=Tether".into()]);
    }
    args
}

/// A remote URL in the form two machines compare: `git@host:a/b.git`, `ssh://git@host/a/b`
/// and `https://host/a/b/` all read `host/a/b`; a local path stays a path.
pub fn remote_key(url: &str) -> String {
    let u = url.trim().trim_end_matches('/');
    let u = u.strip_suffix(".git").unwrap_or(u);
    let rest = match u.split_once("://") {
        Some((scheme, rest)) if scheme != "file" => rest,
        Some((_, path)) => return path.to_owned(),
        // scp-like `user@host:path` (a path with a colon before any slash).
        None => match u.split_once(':') {
            Some((host, path)) if !host.contains('/') && !u.starts_with('/') => {
                return format!(
                    "{}/{}",
                    host.rsplit('@').next().unwrap_or(host).to_ascii_lowercase(),
                    path.trim_start_matches('/')
                );
            }
            _ => return u.to_owned(),
        },
    };
    // Drop the user and the port: the same repository whoever reaches it, however.
    let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
    let host = host.rsplit('@').next().unwrap_or(host);
    let host = host.split(':').next().unwrap_or(host);
    format!("{}/{}", host.to_ascii_lowercase(), path)
}

#[cfg(test)]
mod remote_tests {
    use super::remote_key;

    #[test]
    fn one_repository_reads_the_same_however_its_remote_is_written() {
        let want = "github.com/org/app";
        for url in [
            "git@github.com:org/app.git",
            "ssh://git@github.com/org/app",
            "ssh://git@github.com:22/org/app.git",
            "https://github.com/org/app/",
            "https://user@GitHub.com/org/app.git",
        ] {
            assert_eq!(remote_key(url), want, "{url}");
        }
        assert_eq!(remote_key("/srv/git/app.git"), "/srv/git/app");
        assert_eq!(remote_key("file:///srv/git/app.git"), "/srv/git/app");
        assert_ne!(remote_key("git@github.com:org/app2.git"), want);
    }
}
