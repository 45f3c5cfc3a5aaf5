//! The runs' door: `board.runs()`, and under it `.worktrees()` and `.placements()`. Every call
//! from outside the board goes through these handles (the module functions are the crate's own),
//! so a reader — or a tool — follows a path from a host to the SQL without guessing which of two
//! idioms a caller used.
//!
//! Each method is one call into this module's functions; where a write is composed of two areas
//! (a run's end answers the questions a waking run carried) the composition is here, once.

use tether_store::sql::Database;

use super::event::RunEvent;
use super::*;
use crate::error::Result;
use crate::ids::RunId;

/// A run is named by its number, its typed id or the id a person typed (`R-3`, `3`).
pub use super::model::RunKey;

/// Agent runs on one board: the queue, a run's life and its event log.
#[derive(Clone, Copy)]
pub struct Runs<'b> {
    pub(crate) db: &'b dyn Database,
}

/// The worktrees runs work in: their life, what their runs changed, merges, pull requests and
/// the person's comments on a diff.
#[derive(Clone, Copy)]
pub struct Worktrees<'b> {
    db: &'b dyn Database,
}

/// The workspace files placed for a run, kept so they can always be put back.
#[derive(Clone, Copy)]
pub struct Placements<'b> {
    db: &'b dyn Database,
}

impl<'b> Runs<'b> {
    pub fn worktrees(self) -> Worktrees<'b> {
        Worktrees { db: self.db }
    }

    pub fn placements(self) -> Placements<'b> {
        Placements { db: self.db }
    }

    /// Bumped by every run write, in any process.
    pub fn revision(self) -> Result<i64> {
        query::revision(self.db)
    }

    /// One run, without its events.
    pub fn get_run(self, run: impl RunKey) -> Result<Run> {
        query::get_run(self.db, run)
    }

    /// A run with its last `tail` events (all when `None`).
    pub fn get(self, id: &str, tail: Option<usize>) -> Result<RunDetail> {
        query::get(self.db, id, tail)
    }

    /// A run with a page of its events: the last `limit` before event `before`.
    pub fn get_page(self, id: &str, before: Option<i64>, limit: Option<usize>) -> Result<RunDetail> {
        query::get_page(self.db, id, before, limit)
    }

    pub fn list(self, f: &RunFilter) -> Result<Vec<Run>> {
        query::list(self.db, f)
    }

    /// How many runs are queued and running now (the tray).
    pub fn active_counts(self) -> Result<(usize, usize)> {
        query::active_counts(self.db)
    }

    /// The run that started a Cursor chat, if one did.
    pub fn for_chat(self, chat: &str) -> Result<Option<String>> {
        query::for_chat(self.db, chat)
    }

    pub fn create(self, requested_by: &str, r: &ValidRun) -> Result<Run> {
        queue::create(self.db, requested_by, r)
    }

    /// A follow-up: the parent's chat continued with a new prompt, as a child run with the
    /// parent's workspace, model, mode, role and permissions.
    pub fn followup_of(self, parent: &str, prompt: &str) -> Result<ValidRun> {
        plan::followup_of(self.db, parent, prompt)
    }

    /// The prompt a task-bound run starts from when none is given.
    pub fn task_prompt(self, task: &str) -> Result<String> {
        plan::task_prompt(self.db, task)
    }

    /// Asks a run to stop (a queued one is cancelled at once).
    pub fn cancel(self, id: &str) -> Result<Run> {
        queue::request_cancel(self.db, id)
    }

    /// Lets a run held for the person's approval go.
    pub fn approve(self, id: &str) -> Result<Run> {
        queue::approve(self.db, id)
    }

    /// The next run this runner may start (within `limits`), marked running.
    pub fn claim_next(self, runner_pid: u32, limits: &Limits) -> Result<Option<Run>> {
        queue::claim_next(self.db, runner_pid, limits)
    }

    /// Whether any run waits in the queue (not held): one cheap read.
    pub fn any_waiting(self) -> Result<bool> {
        queue::any_waiting(self.db)
    }

    /// Records the agent's process (and process group) for a run.
    pub fn set_child(self, num: i64, pid: u32, started: Option<i64>) -> Result<()> {
        queue::set_child(self.db, num, pid, started)
    }

    /// Runs of `runner_pid`'s (on this machine) that were asked to stop.
    pub fn cancel_requested(self, runner_pid: u32) -> Result<Vec<i64>> {
        queue::cancel_requested(self.db, runner_pid)
    }

    /// This machine's runs whose runner died become `lost`; their orphan processes are returned.
    pub fn mark_lost(self, is_alive: impl Fn(u32) -> bool) -> Result<Vec<Orphan>> {
        recover::mark_lost(self.db, is_alive)
    }

    /// Runs running on machines gone from the team become `lost`; the ids lost.
    pub fn lose_runs_on(self, gone: &[String]) -> Result<Vec<RunId>> {
        Ok(recover::lose_runs_on(self.db, gone)?.into_iter().map(RunId::new).collect())
    }

    /// Ends a run with its outcome (once), moves its task, and — for a run that woke an idle
    /// chat — answers the questions it carried with its result. Composed here so runs and wakes
    /// do not lean on each other.
    pub fn finish(self, num: i64, outcome: &Outcome) -> Result<Run> {
        let run = finish::finish(self.db, num, outcome)?;
        crate::wake::answer_carried(self.db, &run)?;
        Ok(run)
    }

    /// Notes the chat a task-bound run works in on its task (once the stream says it).
    pub fn note_chat_on_task(self, num: i64) -> Result<()> {
        finish::note_chat_on_task(self.db, num)
    }

    /// The number of a run's last event: a runner numbers what it adds after it.
    pub fn last_seq(self, num: i64) -> Result<i64> {
        log::last_seq(self.db, num)
    }

    pub fn append_events(self, num: i64, events: &[RunEvent]) -> Result<Vec<StoredEvent>> {
        log::append_events(self.db, num, events)
    }

    /// Stores events a runner numbered (and may already have shown live).
    pub fn store_events(self, num: i64, stored: &[StoredEvent]) -> Result<()> {
        log::store_events(self.db, num, stored)
    }

    pub fn events_after(self, id: &str, seq: i64, limit: usize) -> Result<Vec<StoredEvent>> {
        log::events_after(self.db, id, seq, limit)
    }
}

impl<'b> Worktrees<'b> {
    /// One worktree by its row id.
    pub fn get(self, id: i64) -> Result<RunWorktree> {
        worktrees::worktree(self.db, id)
    }

    pub fn creating(self, id: i64, base_branch: Option<&str>, base_commit: &str) -> Result<()> {
        worktrees::worktree_creating(self.db, id, base_branch, base_commit)
    }

    pub fn ready(self, id: i64) -> Result<()> {
        worktrees::worktree_ready(self.db, id)
    }

    pub fn unmade(self, id: i64) -> Result<()> {
        worktrees::worktree_unmade(self.db, id)
    }

    pub fn removed(self, id: i64, why: &str) -> Result<()> {
        worktrees::worktree_removed(self.db, id, why)
    }

    pub fn merged(self, id: i64, into: &str, commit: &str) -> Result<()> {
        worktrees::worktree_merged(self.db, id, into, commit)
    }

    pub fn pr(self, id: i64, url: &str, number: i64) -> Result<()> {
        worktrees::worktree_pr(self.db, id, url, number)
    }

    pub fn setup_paths(self, id: i64, paths: &[String]) -> Result<()> {
        worktrees::worktree_setup_paths(self.db, id, paths)
    }

    /// What the run's branch holds when it ended: its commit and the change summary.
    pub fn set_changes(self, num: i64, head: &str, changes: &ChangeSummary) -> Result<()> {
        worktrees::set_changes(self.db, num, head, changes)
    }

    /// The runs working in a worktree, oldest first.
    pub fn runs(self, id: i64) -> Result<Vec<Run>> {
        worktrees::worktree_runs(self.db, id)
    }

    /// The worktree a task's next local run continues, while it is there and not merged.
    pub fn for_task(self, task: i64, repo: &str) -> Result<Option<i64>> {
        worktrees::task_worktree(self.db, task, repo)
    }

    /// Worktrees not removed (folders Tether made or is about to), oldest first.
    pub fn live(self) -> Result<Vec<WorktreeUse>> {
        worktrees::live_worktrees(self.db)
    }

    /// Team mode: a run another machine queued, as this runner found its folder.
    pub fn relocate(self, num: i64, workspace: &str, worktree: Option<(&str, &str)>) -> Result<()> {
        worktrees::relocate(self.db, num, workspace, worktree)
    }

    pub fn add_comment(self, run: i64, author: &str, c: &NewComment, quote: &str) -> Result<Comment> {
        worktrees::add_comment(self.db, run, author, c, quote)
    }

    pub fn comments(self, worktree: i64) -> Result<Vec<Comment>> {
        worktrees::comments(self.db, worktree)
    }

    /// The comments a follow-up `run` carries to the agent are recorded as sent in it.
    pub fn comments_sent(self, ids: &[i64], run: i64) -> Result<()> {
        worktrees::comments_sent(self.db, ids, run)
    }

    /// The follow-up `run` ended having done its work: the comments it carried are addressed.
    pub fn comments_addressed(self, run: i64) -> Result<usize> {
        worktrees::comments_addressed(self.db, run)
    }
}

impl<'b> Placements<'b> {
    pub fn record(self, f: &PlacedFile) -> Result<()> {
        placements::record_placement(self.db, f)
    }

    /// The files `run` placed that still wait to be put back (the last run out restores).
    pub fn take_restores(self, run: i64) -> Result<Vec<PlacedFile>> {
        placements::take_restores(self.db, run)
    }

    /// Runs no longer running that left placements not yet put back (a crash, a kill).
    pub fn orphaned(self) -> Result<Vec<i64>> {
        placements::orphaned_placements(self.db)
    }

    pub fn mark_restored(self, run: i64, path: &str) -> Result<()> {
        placements::mark_restored(self.db, run, path)
    }
}
