//! Where a local run works and its worktree's life: a worktree of its own on a git repository
//! (or in place, and why), made and recorded before git makes it, its work committed when the run
//! ends, what a crash left found at the next start, old worktrees reaped, and what they use on
//! disk. Git itself is `tether-git`'s; the board keeps what was decided. Below `runs` and
//! `changes`, which both use it.
//!
//! Tether makes the worktree itself (`git worktree add -b`) instead of passing the Cursor CLI's
//! `--worktree`: the path and the branch are then decided and recorded before anything exists
//! (a run's number names both, so two runs never share one), the base is the one the person
//! chose, a start after kill -9 finds exactly what to resume or clean, and clean-up does not
//! depend on where a CLI version chose to put things.

use std::path::{Path, PathBuf};

use serde::Serialize;
use tether_git::Repo;

use crate::Tether;
use crate::board::runs::{
    self, ChangeSummary, Isolation, NewRun, Run, RunStatus, RunWorktree, WorktreeState, WorktreeUse,
};
use crate::error::{Error, Result};
use crate::settings::RunSettings;

/// Git's refusals are the caller's to act on (a conflict, a dirty checkout); anything else is
/// git failing.
pub(crate) fn git_err(e: tether_git::Error) -> Error {
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

/// Where a new local run works: a worktree of its own on a git repository (a task's next run
/// continues the task's), else in place, saying why.
pub(crate) fn isolation(
    t: &Tether,
    rs: &RunSettings,
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
        && let Some(id) = runs::task_worktree(&*t.board_db(), task, &root_s)?
    {
        return Ok(Isolation::Continue(id));
    }
    let dir = worktrees_dir(t, rs)?;
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
pub(crate) fn worktrees_dir(t: &Tether, rs: &RunSettings) -> Result<PathBuf> {
    let dir = rs.worktrees_dir.clone().unwrap_or_else(|| t.paths.worktrees_dir());
    std::fs::create_dir_all(&dir).map_err(|e| Error::io(format!("making {}", dir.display()), e))?;
    dir.canonicalize().map_err(|e| Error::io(format!("reading {}", dir.display()), e))
}

/// Makes the run's worktree when it has none yet (recorded `creating` first, so a crash in
/// between is found), from the base the person named or the checkout's branch now. Returns it
/// ready.
pub fn make_worktree(t: &Tether, run: &Run) -> Result<RunWorktree> {
    let w = run.worktree.clone().ok_or_else(|| no_worktree(run))?;
    match w.state {
        WorktreeState::Ready if Path::new(&w.path).is_dir() => return Ok(w),
        WorktreeState::Ready | WorktreeState::Removed => {
            return Err(Error::Conflict(format!(
                "{}'s worktree {} is gone ({}); start a new run",
                run.id,
                w.path,
                w.removed_why.as_deref().unwrap_or("removed by hand")
            )));
        }
        WorktreeState::Planned | WorktreeState::Creating => {}
    }
    let repo = Repo::open(Path::new(&w.repo)).map_err(git_err)?;
    if w.state == WorktreeState::Creating {
        forget_unmade(&repo, &w)?;
    }
    let (branch, commit) = match &w.base_branch {
        Some(b) => {
            let c = repo.resolve(b).map_err(git_err)?;
            (repo.branch_exists(b).map_err(git_err)?.then(|| b.clone()), c)
        }
        None => {
            let h = repo.head().map_err(git_err)?;
            (h.branch, h.commit)
        }
    };
    runs::worktree_creating(&*t.board_db(), w.id, branch.as_deref(), &commit)?;
    if let Err(e) = repo.add_worktree(Path::new(&w.path), &w.branch, &commit) {
        runs::worktree_unmade(&*t.board_db(), w.id)?;
        return Err(git_err(e));
    }
    runs::worktree_ready(&*t.board_db(), w.id)?;
    runs::worktree(&*t.board_db(), w.id)
}

/// What a crash while git made a worktree left: a half-made folder and branch go (the branch
/// only while it holds nothing but its base).
fn forget_unmade(repo: &Repo, w: &RunWorktree) -> Result<()> {
    let wt = tether_git::Worktree {
        path: PathBuf::from(&w.path),
        branch: w.branch.clone(),
        base: w.base_commit.clone().unwrap_or_default(),
    };
    let pristine = w.base_commit.as_deref().is_some_and(|b| repo.resolve(&w.branch).is_ok_and(|h| h == b));
    repo.remove_worktree(&wt, pristine).map_err(git_err)
}

/// A run ended (or was found lost): what it left uncommitted in its worktree is committed to its
/// branch (the message from its prompt), and the branch's changes against the base are kept on
/// the run. A follow-up that carried comments and succeeded marks them addressed.
pub fn record_end(t: &Tether, run: &Run) -> Result<Option<ChangeSummary>> {
    let Some(w) = &run.worktree else { return Ok(None) };
    if w.state != WorktreeState::Ready || !Path::new(&w.path).is_dir() {
        return Ok(None);
    }
    let base = w.base_commit.clone().ok_or_else(|| no_worktree(run))?;
    let wt = tether_git::Worktree { path: PathBuf::from(&w.path), branch: w.branch.clone(), base: base.clone() };
    let repo = Repo::open(Path::new(&w.repo)).map_err(git_err)?;
    let committed = repo.commit_worktree(&wt, &commit_message(run), &w.setup_paths).map_err(git_err)?;
    if let Some(what) = committed.replaced_git_link {
        // An agent's `.git` is the clearest sign of a run trying git against the person: said
        // where they read the run, not just in a log.
        let text = format!(
            "{} replaced its worktree's .git with {what}; Tether ignored it (every git command is pinned to the \
             repository it made), put git's link back and committed none of it",
            run.id
        );
        let stored = runs::append_events(&*t.board_db(), run.num(), &[runs::event::RunEvent::Notice { text }])?;
        t.bus.run_log(crate::events::RunLog::Events { run: run.id.clone(), events: stored.into() });
    }
    let head = repo.resolve(&w.branch).map_err(git_err)?;
    let d = repo.diff(&base, &head, false).map_err(git_err)?;
    let sum = summarize(&d);
    runs::set_changes(&*t.board_db(), run.num(), &head, &sum)?;
    if run.status == RunStatus::Succeeded {
        runs::comments_addressed(&*t.board_db(), run.num())?;
    }
    Ok(Some(sum))
}

/// A run's commit: its prompt's first line, the rest of the prompt below, and who made it.
fn commit_message(run: &Run) -> String {
    let first = run.prompt.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("work");
    let title: String = first.chars().take(72).collect();
    format!("{title}\n\n{}\n\nTether-Run: {}\n", run.prompt.trim(), run.id)
}

pub(crate) fn summarize(d: &tether_git::Diff) -> ChangeSummary {
    ChangeSummary {
        files: d.files.len() as u32,
        added: d.added(),
        deleted: d.deleted(),
        binary: d.files.iter().filter(|f| f.is_binary()).count() as u32,
    }
}

pub(crate) fn no_worktree(run: &Run) -> Error {
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

/// Removes a worktree's folder (and its branch when asked) and records why.
pub(crate) fn remove(t: &Tether, repo: &Repo, w: &RunWorktree, delete_branch: bool, why: &str) -> Result<()> {
    if w.state != WorktreeState::Removed {
        let wt = tether_git::Worktree {
            path: PathBuf::from(&w.path),
            branch: w.branch.clone(),
            base: w.base_commit.clone().unwrap_or_default(),
        };
        repo.remove_worktree(&wt, delete_branch).map_err(git_err)?;
        runs::worktree_removed(&*t.board_db(), w.id, why)?;
    } else if delete_branch && repo.branch_exists(&w.branch).map_err(git_err)? {
        repo.remove_worktree(
            &tether_git::Worktree { path: PathBuf::from(&w.path), branch: w.branch.clone(), base: String::new() },
            true,
        )
        .map_err(git_err)?;
    }
    Ok(())
}

/// Removes worktrees whose runs all ended longer ago than the retention (kept: pinned ones and
/// any with a run queued or going); their branches stay. A worktree never made is forgotten.
/// The worktrees removed.
pub fn reap(t: &Tether) -> Result<Vec<RunWorktree>> {
    let days = i64::from(t.settings()?.runs.worktree_retention_days);
    let cutoff = crate::clock::now_ms() - days * 86_400_000;
    let mut out = Vec::new();
    for u in runs::live_worktrees(&*t.board_db())? {
        if u.active || u.pinned {
            continue;
        }
        let w = &u.worktree;
        if w.state == WorktreeState::Planned {
            runs::worktree_removed(&*t.board_db(), w.id, "never made")?;
            continue;
        }
        if u.last_ended_ms.is_none_or(|e| e > cutoff) {
            continue;
        }
        match Repo::open(Path::new(&w.repo)) {
            Ok(repo) => remove(t, &repo, w, false, "reaped")?,
            // The repository itself is gone: so is anything git would need to prune.
            Err(_) => {
                let _ = std::fs::remove_dir_all(&w.path);
                runs::worktree_removed(&*t.board_db(), w.id, "reaped")?;
            }
        }
        out.push(w.clone());
    }
    Ok(out)
}

/// A start after a crash: a worktree git was making when Tether died is made again by its run's
/// next try or forgotten; runs that were lost with a ready worktree get what they left committed.
pub fn recover(t: &Tether) -> Result<()> {
    for u in runs::live_worktrees(&*t.board_db())? {
        let w = &u.worktree;
        if w.state == WorktreeState::Creating && !u.active {
            if let Ok(repo) = Repo::open(Path::new(&w.repo)) {
                forget_unmade(&repo, w)?;
            }
            runs::worktree_unmade(&*t.board_db(), w.id)?;
        }
    }
    for r in runs::list(
        &*t.board_db(),
        &runs::RunFilter { statuses: vec![RunStatus::Lost], limit: 50, ..Default::default() },
    )? {
        if r.head_commit.is_none()
            && r.worktree.as_ref().is_some_and(|w| w.state == WorktreeState::Ready)
            && let Err(e) = record_end(t, &r)
        {
            tracing::warn!(run = %r.id, error = %e, "committing what a lost run left in its worktree");
        }
    }
    Ok(())
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
    let worktrees: Vec<WorktreeUse> = runs::live_worktrees(&*t.board_db())?
        .into_iter()
        .filter(|u| u.worktree.state == WorktreeState::Ready)
        .collect();
    let bytes = worktrees.iter().map(|u| dir_bytes(Path::new(&u.worktree.path))).sum();
    Ok(WorktreesReport { count: worktrees.len(), bytes, worktrees })
}

/// A folder's size, not following links.
fn dir_bytes(p: &Path) -> u64 {
    let Ok(meta) = std::fs::symlink_metadata(p) else { return 0 };
    if !meta.is_dir() {
        return meta.len();
    }
    std::fs::read_dir(p).map_or(0, |rd| rd.flatten().map(|e| dir_bytes(&e.path())).sum())
}
