//! A run's worktree as the board keeps it: its life (planned → creating → ready → removed), what
//! its runs changed, merges and pull requests, and the person's comments on its diff. SQL only:
//! git itself is `tether-git`'s, driven by the runner and the operations.

use serde::{Deserialize, Serialize};
use tether_store::sql::{Sql, SqlExt};
use tether_store::values;

use super::model::*;
use super::query::{bump_rev, load, load_worktree};
use crate::clock::{iso, now_ms};
use crate::error::{Error, Result};
use tether_store::sql::Database;

pub(crate) fn worktree(store: &dyn Database, id: i64) -> Result<RunWorktree> {
    store.read(|c| load_worktree(c, id))
}

/// Git is about to make the worktree from `base_commit` (on `base_branch`, when a branch): a
/// start after kill -9 finds it `creating` and checks what git left.
pub(crate) fn worktree_creating(
    store: &dyn Database,
    id: i64,
    base_branch: Option<&str>,
    base_commit: &str,
) -> Result<()> {
    store.durable(|txn| {
        let db: &dyn Sql = txn;
        db.execute(
            "UPDATE worktrees SET state = 'creating', base_branch = ?2, base_commit = ?3 WHERE id = ?1",
            values![id, base_branch, base_commit],
        )?;
        bump_rev(db)
    })
}

pub(crate) fn worktree_ready(store: &dyn Database, id: i64) -> Result<()> {
    store.durable(|txn| {
        let db: &dyn Sql = txn;
        db.execute("UPDATE worktrees SET state = 'ready', ready_at = ?2 WHERE id = ?1", values![id, now_ms()])?;
        bump_rev(db)
    })
}

/// Back to planned: git did not make it (a start after a crash in between, or git refused).
pub(crate) fn worktree_unmade(store: &dyn Database, id: i64) -> Result<()> {
    store.durable(|txn| {
        let db: &dyn Sql = txn;
        db.execute("UPDATE worktrees SET state = 'planned' WHERE id = ?1", values![id])?;
        bump_rev(db)
    })
}

/// The worktree's folder is gone (and its branch, unless kept): `why` is discarded, merged,
/// reaped or never made.
pub(crate) fn worktree_removed(store: &dyn Database, id: i64, why: &str) -> Result<()> {
    store.durable(|txn| {
        let db: &dyn Sql = txn;
        db.execute(
            "UPDATE worktrees SET state = 'removed', removed_at = ?2, removed_why = ?3 WHERE id = ?1",
            values![id, now_ms(), why],
        )?;
        bump_rev(db)
    })
}

pub(crate) fn worktree_merged(store: &dyn Database, id: i64, into: &str, commit: &str) -> Result<()> {
    store.durable(|txn| {
        let db: &dyn Sql = txn;
        db.execute(
            "UPDATE worktrees SET merged_at = ?2, merged_into = ?3, merged_commit = ?4 WHERE id = ?1",
            values![id, now_ms(), into, commit],
        )?;
        bump_rev(db)
    })
}

pub(crate) fn worktree_pr(store: &dyn Database, id: i64, url: &str, number: i64) -> Result<()> {
    store.durable(|txn| {
        let db: &dyn Sql = txn;
        db.execute("UPDATE worktrees SET pr_url = ?2, pr_number = ?3 WHERE id = ?1", values![id, url, number])?;
        bump_rev(db)
    })
}

/// What the worktree's setup made or copied, left out of every commit of the run's work.
pub(crate) fn worktree_setup_paths(store: &dyn Database, id: i64, paths: &[String]) -> Result<()> {
    store.durable(|txn| {
        let db: &dyn Sql = txn;
        db.execute("UPDATE worktrees SET setup_paths = ?2 WHERE id = ?1", values![id, serde_json::to_string(paths)?])?;
        Ok(())
    })
}

/// What the run's branch holds when it ended: its commit and the change summary.
pub(crate) fn set_changes(store: &dyn Database, num: i64, head: &str, changes: &ChangeSummary) -> Result<()> {
    store.durable(|txn| {
        let db: &dyn Sql = txn;
        db.execute(
            "UPDATE runs SET head_commit = ?2, changes = ?3 WHERE num = ?1",
            values![num, head, serde_json::to_string(changes)?],
        )?;
        bump_rev(db)
    })
}

/// The runs working in a worktree, oldest first.
pub(crate) fn worktree_runs(store: &dyn Database, id: i64) -> Result<Vec<Run>> {
    store.read(|c| {
        let db: &dyn Sql = c;
        let nums: Vec<i64> =
            db.query_map("SELECT num FROM runs WHERE worktree = ?1 ORDER BY num", values![id], |r| r.get(0))?;
        nums.into_iter().map(|n| load(db, n)).collect()
    })
}

/// The worktree a task's next local run continues: the one its latest isolated run worked in,
/// while it is still there and not merged.
pub(crate) fn task_worktree(store: &dyn Database, task: i64, repo: &str) -> Result<Option<i64>> {
    store.read(|c| {
        SqlExt::query_opt(
            c,
            "SELECT w.id FROM runs r JOIN worktrees w ON w.id = r.worktree
             WHERE r.task = ?1 AND w.repo = ?2 AND w.state != 'removed' AND w.merged_at IS NULL
             ORDER BY r.num DESC LIMIT 1",
            values![task, repo],
            |r| r.get(0),
        )
    })
}

/// A worktree with when its last run ended and whether one is still going: what the reaper and
/// Health look at.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[ts(export, export_to = "board.ts")]
pub struct WorktreeUse {
    #[serde(flatten)]
    pub worktree: RunWorktree,
    /// Its runs, oldest first.
    pub runs: Vec<String>,
    pub active: bool,
    pub last_ended_at: Option<String>,
    #[serde(skip)]
    pub last_ended_ms: Option<i64>,
    /// Kept by the reaper however old.
    pub pinned: bool,
}

/// Worktrees not removed (folders Tether made or is about to), oldest first.
pub(crate) fn live_worktrees(store: &dyn Database) -> Result<Vec<WorktreeUse>> {
    store.read(|c| {
        let db: &dyn Sql = c;
        let rows: Vec<(i64, String, bool, Option<i64>, bool)> = db.query_map(
            "SELECT w.id, coalesce(string_agg(CAST(r.num AS TEXT), ',' ORDER BY r.num), ''),
                    coalesce(max(CASE WHEN r.status IN ('queued', 'running') THEN 1 ELSE 0 END), 0), max(r.ended_at),
                    w.pinned
             FROM worktrees w LEFT JOIN runs r ON r.worktree = w.id
             WHERE w.state != 'removed' GROUP BY w.id ORDER BY w.id",
            &[],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
        )?;
        rows.into_iter()
            .map(|(id, runs, active, ended, pinned)| {
                Ok(WorktreeUse {
                    worktree: load_worktree(db, id)?,
                    runs: runs.split(',').filter_map(|n| n.parse().ok()).map(format_id).collect(),
                    active,
                    last_ended_at: ended.map(iso),
                    last_ended_ms: ended,
                    pinned,
                })
            })
            .collect()
    })
}

/// A person's comment on lines of a run's diff.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
#[ts(export, export_to = "board.ts")]
pub struct Comment {
    pub id: i64,
    /// The run whose diff it was made on.
    pub run: String,
    pub path: String,
    pub start_line: i64,
    pub end_line: i64,
    /// The lines as they were when commented.
    pub quote: String,
    pub body: String,
    pub author: String,
    pub created_at: String,
    /// The follow-up that carried it to the agent.
    pub sent_in: Option<String>,
    pub addressed_at: Option<String>,
}

/// A comment as it is made.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema, ts_rs::TS)]
#[ts(export, export_to = "board.ts")]
pub struct NewComment {
    /// The file, as the diff names it (the new path of a renamed file).
    pub path: String,
    /// The first and last line commented, in the file as the run left it (1-based).
    pub start_line: i64,
    pub end_line: i64,
    pub body: String,
}

pub(crate) fn add_comment(
    store: &dyn Database,
    run: i64,
    author: &str,
    c: &NewComment,
    quote: &str,
) -> Result<Comment> {
    let id = store.durable(|txn| {
        let db: &dyn Sql = txn;
        let id: i64 = db.query_row(
            "INSERT INTO run_comments(run, path, start_line, end_line, quote, body, author, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) RETURNING id",
            values![run, c.path, c.start_line, c.end_line, quote, c.body, author, now_ms()],
            |r| r.get(0),
        )?;
        bump_rev(db)?;
        Ok(id)
    })?;
    comments_where(store, "c.id = ?1", id)?.pop().ok_or_else(|| Error::NotFound(format!("comment {id}")))
}

/// Every comment made on the diffs of runs in `worktree`, oldest first.
pub(crate) fn comments(store: &dyn Database, worktree: i64) -> Result<Vec<Comment>> {
    comments_where(store, "r.worktree = ?1", worktree)
}

fn comments_where(store: &dyn Database, cond: &str, key: i64) -> Result<Vec<Comment>> {
    store.read(|c| {
        SqlExt::query_map(
            c,
            &format!(
                "SELECT c.id, c.run, c.path, c.start_line, c.end_line, c.quote, c.body, c.author, c.created_at,
                    c.sent_in, c.addressed_at
             FROM run_comments c JOIN runs r ON r.num = c.run WHERE {cond} ORDER BY c.id"
            ),
            values![key],
            |r| {
                Ok(Comment {
                    id: r.get(0)?,
                    run: format_id(r.get(1)?),
                    path: r.get(2)?,
                    start_line: r.get(3)?,
                    end_line: r.get(4)?,
                    quote: r.get(5)?,
                    body: r.get(6)?,
                    author: r.get(7)?,
                    created_at: iso(r.get(8)?),
                    sent_in: r.get::<Option<i64>>(9)?.map(format_id),
                    addressed_at: r.get::<Option<i64>>(10)?.map(iso),
                })
            },
        )
    })
}

/// The comments a follow-up `run` carries to the agent are recorded as sent in it.
pub(crate) fn comments_sent(store: &dyn Database, ids: &[i64], run: i64) -> Result<()> {
    store.durable(|txn| {
        let db: &dyn Sql = txn;
        for id in ids {
            db.execute("UPDATE run_comments SET sent_in = ?2 WHERE id = ?1", values![id, run])?;
        }
        bump_rev(db)
    })
}

/// The follow-up `run` ended having done its work: the comments it carried are addressed.
pub(crate) fn comments_addressed(store: &dyn Database, run: i64) -> Result<usize> {
    store.durable(|txn| {
        let db: &dyn Sql = txn;
        let n = db.execute(
            "UPDATE run_comments SET addressed_at = ?2 WHERE sent_in = ?1 AND addressed_at IS NULL",
            values![run, now_ms()],
        )?;
        if n > 0 {
            bump_rev(db)?;
        }
        Ok(n)
    })
}

/// Team mode: a run another machine queued, as this runner found its folder (`workspace`) and,
/// for a worktree run not yet made, where its repository is here and where its worktree goes.
pub(crate) fn relocate(store: &dyn Database, num: i64, workspace: &str, worktree: Option<(&str, &str)>) -> Result<()> {
    store.durable(|txn| {
        let db: &dyn Sql = txn;
        db.execute("UPDATE runs SET workspace = ?2 WHERE num = ?1", values![num, workspace])?;
        if let Some((repo, path)) = worktree {
            db.execute(
                "UPDATE worktrees SET repo = ?2, path = ?3
                 WHERE id = (SELECT worktree FROM runs WHERE num = ?1) AND state = 'planned'",
                values![num, repo, path],
            )?;
        }
        bump_rev(db)
    })
}
