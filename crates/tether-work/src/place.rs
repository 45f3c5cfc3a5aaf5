//! Where a local run works: a worktree of its own on a git repository (a task's next run
//! continues the task's), else in place and why; its folder checked to be inside the allowed
//! roots; and, in team mode, another machine's run placed on this machine's checkout of its
//! repository (found, or cloned into the data dir). Uses the board's run records and git; the
//! worktree itself is [`crate::worktree`]'s.

use std::path::{Path, PathBuf};

use tether_board::Board;
use tether_board::runs::{self, Isolation, NewRun, Run, WorktreeState};
use tether_git::Repo;
use tether_store::error::{Error, Result};

use crate::{Context, WorkSettings, git_err};

/// Where a new local run works: a worktree of its own on a git repository (a task's next run
/// continues the task's), else in place, saying why.
pub fn isolation(
    cx: &dyn Context,
    rs: &WorkSettings,
    workspace: &Path,
    new: &NewRun,
    task: Option<i64>,
) -> Result<Isolation> {
    if new.in_place || !rs.isolate {
        if new.git_ref.is_some() {
            return Err(Error::invalid(
                "ref",
                "a run in place works on the checkout as it is; ref is for worktree runs",
            ));
        }
        let why = if new.in_place { "asked to work in place" } else { "runs.isolate is off in the settings" };
        return Ok(Isolation::InPlace(why.into()));
    }
    let repo = match Repo::discover(workspace) {
        Ok(Some(r)) => r,
        Ok(None) => return Ok(Isolation::InPlace("not a git repository".into())),
        Err(tether_git::Error::NoGit(_)) => return Ok(Isolation::InPlace("git is not installed".into())),
        Err(e) => return Err(git_err(e)),
    };
    let root = repo.root.canonicalize().map_err(|e| Error::io(format!("reading {}", repo.root.display()), e))?;
    let subdir = workspace.strip_prefix(&root).unwrap_or(Path::new("")).to_string_lossy().into_owned();
    match &new.git_ref {
        Some(r) => {
            repo.resolve(r).map_err(|_| {
                Error::invalid("ref", format!("{r:?} is not a branch, tag or commit of {}", root.display()))
            })?;
        }
        None => {
            if repo.head().is_err() {
                return Ok(Isolation::InPlace("the repository has no commit yet".into()));
            }
        }
    }
    let root_s = root.to_string_lossy().into_owned();
    if new.git_ref.is_none()
        && let Some(task) = task
        && let Some(id) = Board::on(cx.board()).runs().worktrees().for_task(task, &root_s)?
    {
        return Ok(Isolation::Continue(id));
    }
    let dir = worktrees_dir(cx, rs)?;
    if dir.starts_with(&root) {
        return Err(Error::invalid(
            "worktrees folder",
            format!("{} is inside the repository {}; pick a folder outside it", dir.display(), root.display()),
        ));
    }
    Ok(Isolation::New { repo: root_s, subdir, base: new.git_ref.clone(), dir: dir.to_string_lossy().into_owned() })
}

/// The worktrees' base folder, made (private) and canonical: a run's files are placed there
/// through handles opened from its canonical path.
pub fn worktrees_dir(cx: &dyn Context, rs: &WorkSettings) -> Result<PathBuf> {
    let dir = rs.worktrees_dir.clone().unwrap_or_else(|| cx.default_worktrees_dir());
    std::fs::create_dir_all(&dir).map_err(|e| Error::io(format!("making {}", dir.display()), e))?;
    dir.canonicalize().map_err(|e| Error::io(format!("reading {}", dir.display()), e))
}

/// A run's folder, canonical, checked to be inside `roots`: when a run is queued, and again when
/// it starts (a folder may be replaced by a link in between).
pub fn check_workspace(roots: &[PathBuf], ws: &Path) -> Result<PathBuf> {
    let canon = ws
        .canonicalize()
        .map_err(|e| Error::invalid("workspace", format!("{}: {e} (give an existing project folder)", ws.display())))?;
    if !canon.is_dir() {
        return Err(Error::invalid("workspace", format!("{} is not a folder", canon.display())));
    }
    if roots.iter().any(|r| canon.starts_with(r)) {
        Ok(canon)
    } else {
        Err(Error::OutsideRoots { path: canon, roots: roots.iter().map(|r| r.display().to_string()).collect() })
    }
}

/// Team mode: the repository a run's folder belongs to, named so another machine can find it:
/// its `origin` (never with the person's password or token) and the folder inside it.
pub fn repo_ref(workspace: &Path) -> Option<runs::RepoRef> {
    let r = Repo::discover(workspace).ok().flatten()?;
    // Shared with every machine of the team: never with the person's password or token.
    let url = tether_git::without_credentials(&r.remote_url("origin").ok()?);
    let root = r.root.canonicalize().ok()?;
    let subdir = workspace.strip_prefix(&root).ok()?.to_string_lossy().into_owned();
    Some(runs::RepoRef { url, subdir })
}

/// Team mode: the run as this machine runs it. A run another machine queued names its folder by
/// its repository's remote: this machine's own checkout of it (under its allowed roots) is used,
/// else it is cloned into the data dir's `repos/`. A follow-up stays where its parent worked.
pub fn resolve_workspace(cx: &dyn Context, run: &Run) -> Result<Run> {
    let here = cx.board().machine();
    if run.is_cloud() || here.is_none() || run.origin.is_none() || run.origin == here || run.parent.is_some() {
        return Ok(run.clone());
    }
    let origin = run.origin.clone().unwrap_or_default();
    let Some(repo) = &run.repo else {
        return Err(Error::invalid(
            "workspace",
            format!("{}'s folder is on {origin:?} and has no repository remote this machine could find", run.id),
        ));
    };
    let root = find_or_clone(cx, &repo.url)?;
    let workspace = root.join(&repo.subdir);
    let workspace = check_workspace(&cx.roots()?, &workspace)?;
    let worktree = match &run.worktree {
        Some(w) if w.state == WorktreeState::Planned => {
            let leaf: Vec<&str> =
                Path::new(&w.path).components().rev().take(2).filter_map(|c| c.as_os_str().to_str()).collect();
            let dir = worktrees_dir(cx, &cx.settings()?)?;
            let path = leaf.iter().rev().fold(dir, |p, c| p.join(c));
            Some((root.to_string_lossy().into_owned(), path.to_string_lossy().into_owned()))
        }
        _ => None,
    };
    Board::on(cx.board()).runs().worktrees().relocate(
        run.num(),
        &workspace.to_string_lossy(),
        worktree.as_ref().map(|(r, p)| (r.as_str(), p.as_str())),
    )?;
    tracing::info!(run = %run.id, from = %origin, workspace = %workspace.display(), "running another machine's run here");
    Board::on(cx.board()).runs().get_run(run.num())
}

/// Folders looked at per search for a checkout of a remote.
const SEARCH_LIMIT: usize = 4000;

/// This machine's checkout of `url` (one cloned before, brought up to date, or one of its roots,
/// or a folder up to two levels inside one), else a fresh clone in `repos/`.
fn find_or_clone(cx: &dyn Context, url: &str) -> Result<PathBuf> {
    let key = tether_git::remote_key(url);
    let matches = |dir: &Path| {
        dir.join(".git").exists()
            && Repo::discover(dir)
                .ok()
                .flatten()
                .filter(|r| r.root == dir)
                .and_then(|r| r.remote_url("origin").ok())
                .is_some_and(|u| tether_git::remote_key(&u) == key)
    };
    let clone_dir = cx.clones_dir().join(
        key.trim_start_matches('/')
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') { c } else { '_' })
            .collect::<String>(),
    );
    if matches(&clone_dir) {
        // Tether's own clone: brought up to what the team pushed since (a person's checkout
        // found below is theirs, and left as it is).
        match Repo::open(&clone_dir).and_then(|r| r.fast_forward_from("origin")) {
            Ok(moved) => tracing::debug!(clone = %clone_dir.display(), moved, "runner clone fetched"),
            Err(e) => {
                tracing::warn!(clone = %clone_dir.display(), error = %e, "could not fetch the runner's clone; the run uses it as it is")
            }
        }
        return Ok(clone_dir);
    }
    let mut queue: std::collections::VecDeque<(PathBuf, usize)> = cx.roots()?.into_iter().map(|r| (r, 0)).collect();
    let mut looked = 0;
    while let Some((dir, depth)) = queue.pop_front() {
        looked += 1;
        if looked > SEARCH_LIMIT {
            break;
        }
        if matches(&dir) {
            return Ok(dir);
        }
        if depth < 2
            && let Ok(rd) = std::fs::read_dir(&dir)
        {
            for e in rd.flatten() {
                let name = e.file_name();
                let hidden = name.to_string_lossy().starts_with('.');
                if !hidden && name != "node_modules" && e.file_type().is_ok_and(|f| f.is_dir()) {
                    queue.push_back((e.path(), depth + 1));
                }
            }
        }
    }
    Repo::clone_into(url, &clone_dir)
        .map_err(|e| Error::Git(format!("no checkout of {url} here, and cloning it failed: {e}")))?;
    clone_dir.canonicalize().map_err(|e| Error::io(format!("reading {}", clone_dir.display()), e))
}
