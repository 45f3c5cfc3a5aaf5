//! Reading runs: one run (with a page of its events), lists, and the revision every run write
//! bumps.

use tether_store::sql::{Sql, SqlExt, ToValue, Value};
use tether_store::values;

use super::event::Usage;
use super::log::event_row;
use super::model::*;
use crate::clock::iso;
use crate::error::{Error, Result};
use tether_store::sql::Database;

pub(crate) fn bump_rev(db: &dyn Sql) -> Result<()> {
    db.execute("UPDATE counters SET value = value + 1 WHERE name = 'runs_rev'", &[])?;
    Ok(())
}

/// Changes whenever any run is queued, started, cancelled or ends, in any process.
pub(crate) fn revision(store: &dyn Database) -> Result<i64> {
    store.read(|c| SqlExt::query_row(c, "SELECT value FROM counters WHERE name = 'runs_rev'", &[], |r| r.get(0)))
}

pub(crate) fn get_run(store: &dyn Database, num_or_id: impl RunKey) -> Result<Run> {
    let num = num_or_id.num()?;
    store.read(|c| load(c, num))
}

/// A run with its events: all, or the last `tail` ones.
pub(crate) fn get(store: &dyn Database, id: &str, tail: Option<usize>) -> Result<RunDetail> {
    get_page(store, id, None, tail)
}

/// A run with the last `limit` events (all when `None`) before event `before` (the newest when
/// `None`): a view pages back through a big log instead of loading it whole.
pub(crate) fn get_page(store: &dyn Database, id: &str, before: Option<i64>, limit: Option<usize>) -> Result<RunDetail> {
    let num = parse_id(id)?;
    store.read(|c| {
        let db: &dyn Sql = c;
        let run = load(db, num)?;
        // No limit is the largest one: PostgreSQL refuses SQLite's `LIMIT -1`.
        let limit = limit.map_or(i64::MAX, |t| t as i64);
        let mut events: Vec<StoredEvent> = db.query_map(
            "SELECT seq, at, data FROM run_events WHERE run = ?1 AND seq < ?3 ORDER BY seq DESC LIMIT ?2",
            values![num, limit, before.unwrap_or(i64::MAX)],
            event_row,
        )?;
        let events_total: i64 =
            db.query_row("SELECT count(*) FROM run_events WHERE run = ?1", values![num], |r| r.get(0))?;
        events.reverse();
        let children = db.query_map("SELECT num FROM runs WHERE parent = ?1 ORDER BY num", values![num], |r| {
            r.get::<i64>(0).map(format_id)
        })?;
        let signals =
            db.query_map("SELECT signal FROM run_signals WHERE run = ?1 ORDER BY signal", values![num], |r| {
                r.get::<i64>(0).map(crate::signals::format_id)
            })?;
        Ok(RunDetail { run, events, events_total, children, signals })
    })
}

/// Runs, newest first.
pub(crate) fn list(store: &dyn Database, f: &RunFilter) -> Result<Vec<Run>> {
    let statuses: Vec<&str> = f.statuses.iter().map(|s| s.as_str()).collect();
    let task = f.task.as_deref().map(crate::tasks::parse_id).transpose()?;
    let limit = if f.limit == 0 { 200 } else { f.limit.min(10_000) } as i64;
    // No status asked for is every status; otherwise one placeholder each, after the three fixed
    // parameters. Parameters tested for NULL are cast: PostgreSQL types a parameter where it first
    // meets it.
    let mut params: Vec<Value> = vec![task.to_value(), f.chat.to_value(), limit.to_value()];
    let mut in_statuses = String::new();
    if !statuses.is_empty() {
        let marks: Vec<String> = (0..statuses.len()).map(|i| format!("?{}", i + 4)).collect();
        in_statuses = format!("status IN ({}) AND ", marks.join(", "));
        params.extend(statuses.iter().map(ToValue::to_value));
    }
    let sql = format!(
        "SELECT num FROM runs
         WHERE {in_statuses}(CAST(?1 AS BIGINT) IS NULL OR task = ?1) AND (CAST(?2 AS TEXT) IS NULL OR chat_id = ?2)
         ORDER BY num DESC LIMIT ?3"
    );
    store.read(|c| {
        let db: &dyn Sql = c;
        let nums: Vec<i64> = db.query_map(&sql, &params, |r| r.get(0))?;
        nums.into_iter().map(|n| load(db, n)).collect()
    })
}

/// How many runs are queued and running now (the tray).
pub(crate) fn active_counts(store: &dyn Database) -> Result<(usize, usize)> {
    store.read(|c| {
        SqlExt::query_row(
            c,
            "SELECT coalesce(sum(CASE WHEN status = 'queued' THEN 1 ELSE 0 END), 0),
                    coalesce(sum(CASE WHEN status = 'running' THEN 1 ELSE 0 END), 0)
             FROM runs WHERE status IN ('queued', 'running')",
            &[],
            |r| Ok((r.get::<i64>(0)? as usize, r.get::<i64>(1)? as usize)),
        )
    })
}

/// The run that started a Cursor chat, if one did (the reader's "started by run R-n").
pub(crate) fn for_chat(store: &dyn Database, chat: &str) -> Result<Option<String>> {
    store.read(|c| {
        SqlExt::query_opt(c, "SELECT num FROM runs WHERE chat_id = ?1 ORDER BY num LIMIT 1", values![chat], |r| {
            r.get::<i64>(0).map(format_id)
        })
    })
}

const RUN_COLS: &str = "num, kind, prompt, workspace, model, mode, role, task, complete_task, permissions, timeout_ms,
    parent, status, chat_id, exit_code, result, error, warning, duration_ms, duration_api_ms, input_tokens,
    output_tokens, cache_read_tokens, cache_write_tokens, requested_by, cancel_requested_at, created_at, started_at,
    ended_at, resume_chat, coalesce(root, num), cloud, held, log_dropped_lines, log_dropped_bytes, worktree, in_place,
    head_commit, changes, budget, cost_usd, usage_source, budget_allowed, machine, origin, target_machine, target_labels,
    repo_url, repo_subdir";

pub(crate) fn load(db: &dyn Sql, num: i64) -> Result<Run> {
    let mut run = db
        .query_opt(&format!("SELECT {RUN_COLS} FROM runs WHERE num = ?1"), values![num], |r| {
            let perms: String = r.get(9)?;
            let tokens: Option<i64> = r.get(20)?;
            Ok(Run {
                id: format_id(r.get(0)?),
                kind: r.get(1)?,
                prompt: r.get(2)?,
                workspace: r.get(3)?,
                model: r.get(4)?,
                mode: r.get::<String>(5)?.parse().unwrap_or_default(),
                role: r.get(6)?,
                task: r.get::<Option<i64>>(7)?.map(crate::tasks::format_id),
                complete_task: r.get(8)?,
                permissions: serde_json::from_str(&perms).unwrap_or_default(),
                timeout_secs: r.get::<i64>(10)? / 1000,
                parent: r.get::<Option<i64>>(11)?.map(format_id),
                status: r.get::<String>(12)?.parse().unwrap_or(RunStatus::Lost),
                chat_id: r.get(13)?,
                exit_code: r.get(14)?,
                result: r.get(15)?,
                error: r.get(16)?,
                warning: r.get(17)?,
                duration_ms: r.get(18)?,
                duration_api_ms: r.get(19)?,
                usage: match tokens {
                    Some(input_tokens) => Some(Usage {
                        input_tokens,
                        output_tokens: r.get::<Option<i64>>(21)?.unwrap_or(0),
                        cache_read_tokens: r.get::<Option<i64>>(22)?.unwrap_or(0),
                        cache_write_tokens: r.get::<Option<i64>>(23)?.unwrap_or(0),
                    }),
                    None => None,
                },
                requested_by: r.get(24)?,
                cancel_requested: r.get::<Option<i64>>(25)?.is_some(),
                created_at: iso(r.get(26)?),
                started_at: r.get::<Option<i64>>(27)?.map(iso),
                ended_at: r.get::<Option<i64>>(28)?.map(iso),
                resume_chat: r.get(29)?,
                root: r.get(30)?,
                cloud: r.get::<Option<String>>(31)?.and_then(|c| serde_json::from_str(&c).ok()),
                held: r.get(32)?,
                log_dropped: match r.get::<Option<i64>>(33)? {
                    Some(lines) => Some(LogDropped { lines, bytes: r.get::<Option<i64>>(34)?.unwrap_or(0) }),
                    None => None,
                },
                // Filled below from its own row.
                worktree: r.get::<Option<i64>>(35)?.map(|id| RunWorktree { id, ..RunWorktree::default() }),
                in_place: r.get(36)?,
                head_commit: r.get(37)?,
                changes: r.get::<Option<String>>(38)?.and_then(|c| serde_json::from_str(&c).ok()),
                budget: r.get::<Option<String>>(39)?.and_then(|b| b.parse().ok()),
                cost_usd: r.get(40)?,
                usage_source: r.get(41)?,
                budget_allowed: r.get(42)?,
                machine: r.get(43)?,
                origin: r.get(44)?,
                on: r.get(45)?,
                labels: r.get::<Option<String>>(46)?.and_then(|l| serde_json::from_str(&l).ok()).unwrap_or_default(),
                repo: match r.get::<Option<String>>(47)? {
                    Some(url) => Some(RepoRef { url, subdir: r.get::<Option<String>>(48)?.unwrap_or_default() }),
                    None => None,
                },
            })
        })?
        .ok_or_else(|| Error::RunNotFound(format_id(num)))?;
    if let Some(w) = &run.worktree {
        run.worktree = Some(load_worktree(db, w.id)?);
    }
    Ok(run)
}

const WORKTREE_COLS: &str = "id, repo, subdir, path, branch, base_branch, base_commit, state, created_at, removed_at,
    removed_why, merged_at, merged_commit, merged_into, pr_url, pr_number, setup_paths";

pub(crate) fn load_worktree(db: &dyn Sql, id: i64) -> Result<RunWorktree> {
    db.query_row(&format!("SELECT {WORKTREE_COLS} FROM worktrees WHERE id = ?1"), values![id], |r| {
        Ok(RunWorktree {
            id: r.get(0)?,
            repo: r.get(1)?,
            subdir: r.get(2)?,
            path: r.get(3)?,
            branch: r.get(4)?,
            base_branch: r.get(5)?,
            base_commit: r.get(6)?,
            state: r.get::<String>(7)?.parse().unwrap_or_default(),
            created_at: iso(r.get(8)?),
            removed_at: r.get::<Option<i64>>(9)?.map(iso),
            removed_why: r.get(10)?,
            merged_at: r.get::<Option<i64>>(11)?.map(iso),
            merged_commit: r.get(12)?,
            merged_into: r.get(13)?,
            pr_url: r.get(14)?,
            pr_number: r.get(15)?,
            setup_paths: serde_json::from_str(&r.get::<String>(16)?).unwrap_or_default(),
        })
    })
}
