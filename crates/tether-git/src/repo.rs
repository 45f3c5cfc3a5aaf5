//! A repository found from a folder, and the worktrees Tether makes in it for runs.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::cmd::{self, Place};
use crate::error::{Error, Result};

/// A git repository as seen from one of its checkouts: `root` is that checkout's top folder.
/// Found from a folder ([`Repo::discover`], [`Repo::open`], [`Repo::at`]) git discovers the
/// repository as the person's terminal would; pinned ([`Repo::worktree_repo`]) every command
/// names the git dir the repository keeps for that checkout, whatever `.git` the folder has now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repo {
    pub root: PathBuf,
    git_dir: Option<PathBuf>,
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

/// What committing a run's worktree did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Committed {
    /// The new commit, `None` when there was nothing to commit.
    pub commit: Option<String>,
    /// The worktree's `.git` was not git's link any more (something in the run replaced it with
    /// a file, folder or link of its own): what it was. Tether ignored it, put git's link back
    /// and committed nothing of it.
    pub replaced_git_link: Option<String>,
}

/// git in `dir`, found from there (unpinned).
pub(crate) fn run<I, S>(dir: &Path, args: I) -> Result<Output>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    cmd::run(&Place { dir, git_dir: None }, args)
}

/// Like [`run`], stdout trimmed; a failure carries git's own words.
pub(crate) fn ok<I, S>(dir: &Path, args: I) -> Result<String>
where
    I: IntoIterator<Item = S> + Clone,
    S: AsRef<OsStr>,
{
    cmd::ok(&Place { dir, git_dir: None }, args)
}

impl Repo {
    /// The checkout whose top folder is `root`, as git finds it from there (a person's checkout
    /// Tether was told about; never a run's worktree: see [`Repo::worktree_repo`]).
    pub fn at(root: impl Into<PathBuf>) -> Repo {
        Repo { root: root.into(), git_dir: None }
    }

    fn place(&self) -> Place<'_> {
        Place { dir: &self.root, git_dir: self.git_dir.as_deref() }
    }

    /// A git command in this checkout (pinned when the repo is).
    pub(crate) fn git(&self) -> Command {
        cmd::git(&self.place())
    }

    pub(crate) fn run<I, S>(&self, args: I) -> Result<Output>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        cmd::run(&self.place(), args)
    }

    pub(crate) fn ok<I, S>(&self, args: I) -> Result<String>
    where
        I: IntoIterator<Item = S> + Clone,
        S: AsRef<OsStr>,
    {
        cmd::ok(&self.place(), args)
    }

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
        Ok(Some(Repo::at(root)))
    }

    /// Like [`Repo::discover`], but a folder outside any repository is an error.
    pub fn open(dir: &Path) -> Result<Repo> {
        Self::discover(dir)?.ok_or_else(|| Error::NotARepo(dir.display().to_string()))
    }

    /// The git dir every worktree of this repository shares (absolute).
    fn common_dir(&self) -> Result<PathBuf> {
        let d = self.ok(["rev-parse", "--path-format=absolute", "--git-common-dir"])?;
        Ok(PathBuf::from(d))
    }

    /// The checkout at `path` — this repository's main checkout or one of its linked worktrees —
    /// pinned to the git dir this repository keeps for it. The pairing is read from this
    /// repository's own records (`<common>/worktrees/*/gitdir`), never from `path/.git`, which
    /// whatever worked in `path` may have rewritten. A folder that is no checkout of this
    /// repository is an error.
    pub fn worktree_repo(&self, path: &Path) -> Result<Repo> {
        let common = self.common_dir()?;
        let want = path.canonicalize()?;
        // The main checkout: a non-bare repository's git dir is its `.git`.
        if common.file_name() == Some(OsStr::new(".git"))
            && let Some(top) = common.parent()
            && top.canonicalize().is_ok_and(|t| t == want)
        {
            return Ok(Repo { root: want, git_dir: Some(common) });
        }
        for entry in std::fs::read_dir(common.join("worktrees")).into_iter().flatten().flatten() {
            let Ok(text) = std::fs::read_to_string(entry.path().join("gitdir")) else { continue };
            // `gitdir` says `<worktree>/.git`; its parent is the worktree (the `.git` itself is
            // never resolved: it may be a link now).
            let recorded = PathBuf::from(text.trim_end_matches(['\n', '\r']));
            if recorded.parent().and_then(|p| p.canonicalize().ok()).is_some_and(|p| p == want) {
                return Ok(Repo { root: want, git_dir: Some(entry.path()) });
            }
        }
        Err(Error::NotAWorktree(path.display().to_string()))
    }

    /// Puts git's link back when `.git` in this pinned linked worktree is not it any more: what
    /// was there instead, if anything. Never follows a link: a link, a folder or a file of
    /// other words is removed as itself.
    fn restore_link(&self) -> Result<Option<String>> {
        let Some(admin) = &self.git_dir else { return Ok(None) };
        if admin.file_name() == Some(OsStr::new(".git")) {
            return Ok(None); // a main checkout: its `.git` is the repository itself
        }
        let link = self.root.join(".git");
        let found = match std::fs::symlink_metadata(&link) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => "nothing",
            Err(e) => return Err(e.into()),
            Ok(m) if m.file_type().is_symlink() => {
                std::fs::remove_file(&link)?;
                "a link"
            }
            Ok(m) if m.is_dir() => {
                std::fs::remove_dir_all(&link)?;
                "a folder"
            }
            Ok(m) if m.is_file() => {
                let same = m.len() < 4096
                    && std::fs::read_to_string(&link).is_ok_and(|t| {
                        t.trim_end().strip_prefix("gitdir:").map(str::trim).is_some_and(|g| {
                            Path::new(g) == admin.as_path()
                                || Path::new(g).canonicalize().ok() == admin.canonicalize().ok()
                        })
                    });
                if same {
                    return Ok(None);
                }
                std::fs::remove_file(&link)?;
                "a file of other words"
            }
            Ok(_) => {
                std::fs::remove_file(&link)?;
                "a special file"
            }
        };
        let mut f = std::fs::OpenOptions::new().write(true).create_new(true).open(&link)?;
        std::io::Write::write_all(&mut f, format!("gitdir: {}\n", admin.display()).as_bytes())?;
        Ok(Some(found.to_owned()))
    }

    pub fn head(&self) -> Result<Head> {
        let commit = self.ok(["rev-parse", "--verify", "HEAD^{commit}"])?;
        let out = self.run(["symbolic-ref", "--quiet", "--short", "HEAD"])?;
        let branch = out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned());
        Ok(Head { commit, branch })
    }

    /// The commit `rev` names (a branch, a tag, a hash).
    pub fn resolve(&self, rev: &str) -> Result<String> {
        self.ok(["rev-parse", "--verify", "--end-of-options", &format!("{rev}^{{commit}}")])
    }

    pub fn branch_exists(&self, branch: &str) -> Result<bool> {
        let out = self.run(["show-ref", "--verify", "--quiet", &format!("refs/heads/{branch}")])?;
        Ok(out.status.success())
    }

    /// A new worktree at `path` on a new branch `branch` from commit `base`. Refuses a branch
    /// that exists (two runs never share one) and a `path` that exists (git does).
    pub fn add_worktree(&self, path: &Path, branch: &str, base: &str) -> Result<Worktree> {
        self.ok(["check-ref-format", "--branch", branch])?;
        if self.branch_exists(branch)? {
            return Err(Error::BranchExists(branch.to_owned()));
        }
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let path_s = path.to_string_lossy();
        self.ok(["worktree", "add", "--quiet", "-b", branch, &*path_s, base])?;
        Ok(Worktree { path: path.to_owned(), branch: branch.to_owned(), base: base.to_owned() })
    }

    /// Removes a run's worktree (with whatever is in it) and, when asked, its branch. A worktree
    /// already gone by hand is pruned from git's list instead.
    pub fn remove_worktree(&self, wt: &Worktree, delete_branch: bool) -> Result<()> {
        // A folder swapped for a link, or for one git does not know as this repository's
        // worktree, is not removed through git (nor followed): the person is told instead.
        let swapped = std::fs::symlink_metadata(&wt.path).is_ok_and(|m| !m.is_dir())
            || (wt.path.exists() && self.worktree_repo(&wt.path).is_err());
        if swapped {
            return Err(Error::NotAWorktree(format!(
                "{} (it was moved or replaced since Tether made it; remove it by hand)",
                wt.path.display()
            )));
        }
        if wt.path.exists() {
            self.ok(["worktree", "remove", "--force", "--force", &*wt.path.to_string_lossy()]).map_err(
                |e| match e {
                    // Git would not: its `.git` is gone or not git's (replaced by hand).
                    Error::Git { message, .. } => Error::NotAWorktree(format!("{} ({message})", wt.path.display())),
                    e => e,
                },
            )?;
        } else {
            self.ok(["worktree", "prune"])?;
        }
        if delete_branch && self.branch_exists(&wt.branch)? {
            self.ok(["branch", "-D", "--", &wt.branch])?;
        }
        Ok(())
    }

    /// The URL a remote fetches from (its push URL may differ; `push` uses git's choice).
    pub fn remote_url(&self, remote: &str) -> Result<String> {
        let out = self.run(["remote", "get-url", "--", remote])?;
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
        self.ok(["fetch", "--quiet", "--prune", "--", remote])?;
        let status = self.ok(["status", "--porcelain=v1", "--untracked-files=normal", "--ignore-submodules=all"])?;
        if !status.is_empty() {
            return Ok(false);
        }
        let before = self.resolve("HEAD")?;
        if self.ok(["merge", "--ff-only", "--quiet", "@{upstream}"]).is_err() {
            return Ok(false);
        }
        Ok(self.resolve("HEAD")? != before)
    }

    /// Pushes `branch` to the same name at `remote`, with the person's own credentials (their
    /// helper or ssh agent; never a prompt). A refusal (the remote's, or no way in) carries
    /// git's words, with any password in a URL cut out.
    pub fn push(&self, remote: &str, branch: &str) -> Result<()> {
        self.remote_url(remote)?;
        let spec = format!("refs/heads/{branch}:refs/heads/{branch}");
        match self.ok(["push", "--quiet", "--no-verify", "--", remote, &spec]) {
            Ok(_) => Ok(()),
            Err(Error::Git { message, .. }) => Err(Error::PushRefused(message)),
            Err(e) => Err(e),
        }
    }

    /// A file's text at a commit (`""`: the index), `None` when it is not there (or not text).
    pub fn file_at(&self, commit: &str, path: &str) -> Result<Option<String>> {
        let out = self.run(["cat-file", "blob", &format!("{commit}:{path}")])?;
        if !out.status.success() {
            return Ok(None);
        }
        Ok(String::from_utf8(out.stdout).ok())
    }

    /// The folders of this repository's worktrees, the main checkout first.
    pub fn worktrees(&self) -> Result<Vec<PathBuf>> {
        let out = self.ok(["worktree", "list", "--porcelain", "-z"])?;
        Ok(out.split('\0').filter_map(|l| l.strip_prefix("worktree ")).map(PathBuf::from).collect())
    }

    /// Commits everything the run left in its worktree `wt` (new, changed and deleted files) to
    /// its branch, leaving out `except` (paths relative to the worktree, folders with a trailing
    /// `/`: what the worktree's setup made or copied is not the run's work). Every command is
    /// pinned to the git dir this repository keeps for `wt`, and a `.git` the run wrote is put
    /// back to git's link first (said in [`Committed::replaced_git_link`]). The person's hooks
    /// are not run: they guard the person's commits, and a failing one would leave the run's
    /// work uncommitted where a later clean-up could lose it.
    pub fn commit_worktree(&self, wt: &Worktree, message: &str, except: &[String]) -> Result<Committed> {
        let pinned = self.worktree_repo(&wt.path)?;
        let replaced_git_link = pinned.restore_link()?;
        let mut add: Vec<String> = ["add", "--all", "--", "."].map(str::to_owned).into();
        add.extend(except.iter().map(|p| format!(":(exclude,literal){}", p.trim_end_matches('/'))));
        pinned.ok(&add)?;
        let staged = pinned.run(["diff", "--cached", "--quiet", "--no-ext-diff", "--ignore-submodules=all"])?;
        if staged.status.success() {
            return Ok(Committed { commit: None, replaced_git_link });
        }
        let mut args = pinned.identity_args();
        args.extend(["commit", "--quiet", "--no-verify", "--no-gpg-sign", "-m", message].map(str::to_owned));
        pinned.ok(&args)?;
        let commit = pinned.ok(["rev-parse", "HEAD"])?;
        Ok(Committed { commit: Some(commit), replaced_git_link })
    }

    /// Paths of the worktree `wt` that are new or changed against its HEAD (untracked folders as
    /// one `dir/`), relative to it: what a setup left, before the agent starts. Pinned as
    /// [`Repo::commit_worktree`] is.
    pub fn worktree_dirty_paths(&self, wt: &Worktree) -> Result<Vec<String>> {
        let pinned = self.worktree_repo(&wt.path)?;
        let out = pinned.ok([
            "status",
            "--porcelain=v1",
            "-z",
            "--untracked-files=normal",
            "--no-renames",
            "--ignore-submodules=all",
        ])?;
        Ok(out.split('\0').filter(|l| l.len() > 3).map(|l| l[3..].to_owned()).collect())
    }

    /// `-c user.…` for what git's config lacks: a machine without a git identity still gets the
    /// run's work committed, under Tether's.
    pub(crate) fn identity_args(&self) -> Vec<String> {
        let mut args: Vec<String> = Vec::new();
        if self.ok(["config", "user.email"]).is_err() {
            args.extend(["-c".into(), "user.email=tether@localhost".into()]);
        }
        if self.ok(["config", "user.name"]).is_err() {
            args.extend(["-c".into(), "user.name=Tether".into()]);
        }
        args
    }
}

/// Whether git ignores `path` as seen from `dir` (`git check-ignore`): `None` when git cannot
/// tell (no git, not a repository).
pub fn is_ignored(dir: &Path, path: &Path) -> Option<bool> {
    let out = run(dir, [OsStr::new("check-ignore"), OsStr::new("-q"), OsStr::new("--"), path.as_os_str()]).ok()?;
    match out.status.code() {
        Some(0) => Some(true),
        Some(1) => Some(false),
        _ => None,
    }
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
