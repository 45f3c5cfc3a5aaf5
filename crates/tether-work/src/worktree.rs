//! A run's worktree from making to removal: made (recorded `creating` first, so a crash in
//! between is found), what the run left committed to its branch when it ends, what a crash left
//! recovered at the next start, old worktrees reaped. The rule "commit what is left in a
//! worktree" is [`commit_left`], here once: a run's end and the person's merge or pull request
//! both use it. Uses the board's records and git; who may ask is `tether_core::ops`'s.

use std::path::{Path, PathBuf};

use tether_board::Board;
use tether_board::runs::{self, ChangeSummary, Run, RunStatus, RunWorktree, WorktreeState};
use tether_git::Repo;
use tether_store::error::{Error, Result};

use crate::{Context, git_err, no_worktree, summarize};

/// Makes the run's worktree when it has none yet (recorded `creating` first, so a crash in
/// between is found), from the base the person named or the checkout's branch now. Returns it
/// ready.
pub fn make_worktree(cx: &dyn Context, run: &Run) -> Result<RunWorktree> {
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
    let board = Board::on(cx.board());
    let worktrees = board.runs().worktrees();
    worktrees.creating(w.id, branch.as_deref(), &commit)?;
    if let Err(e) = repo.add_worktree(Path::new(&w.path), &w.branch, &commit) {
        worktrees.unmade(w.id)?;
        return Err(git_err(e));
    }
    worktrees.ready(w.id)?;
    worktrees.get(w.id)
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

/// Commits what is left uncommitted in `run`'s worktree `w` (what its setup placed excepted) to
/// its branch with `message`; nothing when the worktree is not there. A `.git` the agent wrote
/// in place of git's link is put back and said in the run's log. The repository, when the
/// worktree was there.
pub fn commit_left(cx: &dyn Context, run: &Run, w: &RunWorktree, message: &str) -> Result<Option<Repo>> {
    if w.state != WorktreeState::Ready || !Path::new(&w.path).is_dir() {
        return Ok(None);
    }
    let wt = tether_git::Worktree {
        path: PathBuf::from(&w.path),
        branch: w.branch.clone(),
        base: w.base_commit.clone().unwrap_or_default(),
    };
    let repo = Repo::open(Path::new(&w.repo)).map_err(git_err)?;
    let committed = repo.commit_worktree(&wt, message, &w.setup_paths).map_err(git_err)?;
    if let Some(what) = committed.replaced_git_link {
        // An agent's `.git` is the clearest sign of a run trying git against the person: said
        // where they read the run, not just in a log.
        let text = format!(
            "{} replaced its worktree's .git with {what}; Tether ignored it (every git command is pinned to the \
             repository it made), put git's link back and committed none of it",
            run.id
        );
        let stored =
            Board::on(cx.board()).runs().append_events(run.num(), &[runs::event::RunEvent::Notice { text }])?;
        cx.appended(&run.id, stored);
    }
    Ok(Some(repo))
}

/// A run ended (or was found lost): what it left uncommitted in its worktree is committed to its
/// branch (the message from its prompt), and the branch's changes against the base are kept on
/// the run. A follow-up that carried comments and succeeded marks them addressed.
pub fn record_end(cx: &dyn Context, run: &Run) -> Result<Option<ChangeSummary>> {
    let Some(w) = &run.worktree else { return Ok(None) };
    if w.state == WorktreeState::Ready && w.base_commit.is_none() && Path::new(&w.path).is_dir() {
        return Err(no_worktree(run));
    }
    let Some(repo) = commit_left(cx, run, w, &commit_message(run))? else { return Ok(None) };
    let base = w.base_commit.clone().unwrap_or_default();
    let head = repo.resolve(&w.branch).map_err(git_err)?;
    let d = repo.diff(&base, &head, false).map_err(git_err)?;
    let sum = summarize(&d);
    Board::on(cx.board()).runs().worktrees().set_changes(run.num(), &head, &sum)?;
    if run.status == RunStatus::Succeeded {
        Board::on(cx.board()).runs().worktrees().comments_addressed(run.num())?;
    }
    Ok(Some(sum))
}

/// A run's commit: its prompt's first line, the rest of the prompt below, and who made it.
fn commit_message(run: &Run) -> String {
    let first = run.prompt.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("work");
    let title: String = first.chars().take(72).collect();
    format!("{title}\n\n{}\n\nTether-Run: {}\n", run.prompt.trim(), run.id)
}

/// Removes a worktree's folder (and its branch when asked) and records why.
pub fn remove(cx: &dyn Context, repo: &Repo, w: &RunWorktree, delete_branch: bool, why: &str) -> Result<()> {
    if w.state != WorktreeState::Removed {
        let wt = tether_git::Worktree {
            path: PathBuf::from(&w.path),
            branch: w.branch.clone(),
            base: w.base_commit.clone().unwrap_or_default(),
        };
        repo.remove_worktree(&wt, delete_branch).map_err(git_err)?;
        Board::on(cx.board()).runs().worktrees().removed(w.id, why)?;
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
pub fn reap(cx: &dyn Context) -> Result<Vec<RunWorktree>> {
    let days = i64::from(cx.settings()?.worktree_retention_days);
    let cutoff = tether_store::clock::now_ms() - days * 86_400_000;
    let mut out = Vec::new();
    for u in Board::on(cx.board()).runs().worktrees().live()? {
        if u.active || u.pinned {
            continue;
        }
        let w = &u.worktree;
        if w.state == WorktreeState::Planned {
            Board::on(cx.board()).runs().worktrees().removed(w.id, "never made")?;
            continue;
        }
        if u.last_ended_ms.is_none_or(|e| e > cutoff) {
            continue;
        }
        match Repo::open(Path::new(&w.repo)) {
            Ok(repo) => remove(cx, &repo, w, false, "reaped")?,
            // The repository itself is gone: so is anything git would need to prune.
            Err(_) => {
                let _ = std::fs::remove_dir_all(&w.path);
                Board::on(cx.board()).runs().worktrees().removed(w.id, "reaped")?;
            }
        }
        out.push(w.clone());
    }
    Ok(out)
}

/// A start after a crash: a worktree git was making when Tether died is made again by its run's
/// next try or forgotten; runs that were lost with a ready worktree get what they left committed.
pub fn recover(cx: &dyn Context) -> Result<()> {
    for u in Board::on(cx.board()).runs().worktrees().live()? {
        let w = &u.worktree;
        if w.state == WorktreeState::Creating && !u.active {
            if let Ok(repo) = Repo::open(Path::new(&w.repo)) {
                forget_unmade(&repo, w)?;
            }
            Board::on(cx.board()).runs().worktrees().unmade(w.id)?;
        }
    }
    for r in Board::on(cx.board()).runs().list(&runs::RunFilter {
        statuses: vec![RunStatus::Lost],
        limit: 50,
        ..Default::default()
    })? {
        if r.head_commit.is_none()
            && r.worktree.as_ref().is_some_and(|w| w.state == WorktreeState::Ready)
            && let Err(e) = record_end(cx, &r)
        {
            tracing::warn!(run = %r.id, error = %e, "committing what a lost run left in its worktree");
        }
    }
    Ok(())
}

/// A folder's size, not following links.
pub fn dir_bytes(p: &Path) -> u64 {
    let Ok(meta) = std::fs::symlink_metadata(p) else { return 0 };
    if !meta.is_dir() {
        return meta.len();
    }
    std::fs::read_dir(p).map_or(0, |rd| rd.flatten().map(|e| dir_bytes(&e.path())).sum())
}
