//! The queue: queueing a run, holding it for the person, cancelling it, and a runner taking the
//! next one within the limits (atomically: two runners never take the same run).

use tether_store::sql::{Sql, SqlExt};
use tether_store::values;

use super::event::RunEvent;
use super::finish::{Outcome, finish};
use super::log::append_in;
use super::model::*;
use super::query::{bump_rev, get_run};
use crate::clock::now_ms;
use crate::error::{Error, Result};
use crate::principal::{self, Actor};
use crate::tasks;
use tether_store::sql::Database;

/// Queues a run. On a team's board it remembers the machine that queued it; a run no other
/// machine could find the folder of (no repository remote, or a cloud run, which needs this
/// machine's Cursor key) is that machine's to run.
pub(crate) fn create(store: &dyn Database, requested_by: &str, r: &ValidRun) -> Result<Run> {
    let machine = store.machine();
    // Read back in the same transaction: a runner may claim the run the moment it commits, and
    // the caller is answered with the run as queued, not as whatever it became a moment later.
    store.durable(|txn| {
        let db: &dyn Sql = txn;
        if let Some(t) = r.task {
            let known = db.query_opt("SELECT 1 FROM tasks WHERE num = ?1", values![t], |_| Ok(()))?.is_some();
            if !known {
                return Err(Error::TaskNotFound(tasks::format_id(t)));
            }
        }
        let num = insert_in(db, requested_by, r)?;
        if let Some(m) = &machine {
            db.execute(
                "UPDATE runs SET origin = ?2,
                     target_machine = coalesce(target_machine, CASE WHEN repo_url IS NULL THEN ?2 END)
                 WHERE num = ?1",
                values![num, m],
            )?;
        }
        super::query::load(db, num)
    })
}

/// Queues a run inside a caller's transaction; its number.
pub(crate) fn insert_in(db: &dyn Sql, requested_by: &str, r: &ValidRun) -> Result<i64> {
    {
        let num: i64 =
            db.query_row("UPDATE counters SET value = value + 1 WHERE name = 'run_num' RETURNING value", &[], |row| {
                row.get(0)
            })?;
        let root: i64 = match r.parent {
            Some(p) => {
                db.query_row("SELECT coalesce(root, num) FROM runs WHERE num = ?1", values![p], |row| row.get(0))?
            }
            None => num,
        };
        let (worktree, in_place) = match &r.isolation {
            Isolation::Cloud => (None, None),
            Isolation::InPlace(why) => (None, Some(why.as_str())),
            Isolation::Continue(id) => (Some(*id), None),
            Isolation::New { repo, subdir, base, dir } => {
                let slug = slug(&r.prompt);
                let name = std::path::Path::new(repo).file_name().map_or("repo".into(), |n| n.to_string_lossy());
                let path = format!("{}/{name}/R-{num}-{slug}", dir.trim_end_matches('/'));
                let id: i64 = db.query_row(
                    "INSERT INTO worktrees(repo, subdir, path, branch, base_branch, created_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6) RETURNING id",
                    values![repo, subdir, path, format!("tether/R-{num}-{slug}"), base, now_ms()],
                    |row| row.get(0),
                )?;
                (Some(id), None)
            }
        };
        db.execute(
            "INSERT INTO runs(num, kind, prompt, workspace, model, mode, role, task, complete_task, permissions,
                              timeout_ms, parent, resume_chat, requested_by, created_at, root, cloud, worktree, in_place,
                              budget, target_machine, target_labels, repo_url, repo_subdir)
             VALUES (?1, ?20, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9,
                     ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19,
                     coalesce(?21, (SELECT coalesce(p.machine, p.target_machine) FROM runs p WHERE p.num = ?11)),
                     ?22, ?23, ?24)",
            values![
                num,
                r.prompt,
                r.cloud.is_none().then_some(&r.workspace),
                r.model,
                r.mode.as_str(),
                r.role,
                r.task,
                r.complete,
                serde_json::to_string(&r.permissions)?,
                r.timeout_ms,
                r.parent,
                r.resume_chat,
                requested_by,
                now_ms(),
                root,
                r.cloud.as_ref().map(serde_json::to_string).transpose()?,
                worktree,
                in_place,
                r.budget.map(|b| b.to_string()),
                // Its kind follows from the spec, decided here: PostgreSQL cannot type a bare `?16 IS NULL`.
                if r.cloud.is_some() { RunPlace::Cloud } else { RunPlace::Local }.as_str(),
                // A follow-up goes where its chat is: the machine that ran its parent.
                r.target.machine,
                (!r.target.labels.is_empty()).then(|| serde_json::to_string(&r.target.labels)).transpose()?,
                r.target.repo.as_ref().map(|g| &g.url),
                r.target.repo.as_ref().map(|g| &g.subdir)
            ],
        )?;
        append_in(db, num, &[RunEvent::status("queued", None)])?;
        // A run that went over its budget holds what follows it (its follow-ups and wakes, its
        // task's next run) until the person lets it go on.
        if let Some(over) = crate::usage::over_budget_before(db, num, r.parent, r.task)? {
            hold_in(
                db,
                num,
                "budget",
                &format!(
                    "{} went over its budget; this run waits until you allow it (tether runs approve {})",
                    format_id(over),
                    format_id(num)
                ),
            )?;
        }
        bump_rev(db)?;
        Ok(num)
    }
}

/// A branch- and folder-safe name from a prompt's first words: `fix-the-login-form`.
fn slug(prompt: &str) -> String {
    let line = prompt.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
    let text = line.strip_prefix("Work on task ").unwrap_or(line);
    let mut out = String::new();
    for word in text.split(|c: char| !c.is_ascii_alphanumeric()).filter(|w| !w.is_empty()) {
        if out.len() + word.len() > 40 {
            break;
        }
        if !out.is_empty() {
            out.push('-');
        }
        out.push_str(&word.to_ascii_lowercase());
    }
    if out.is_empty() { "run".into() } else { out }
}

/// Asks a run to stop: a queued one is cancelled at once; a running one is stopped by its runner
/// (which notices within a second, in any process). An ended run is left as it is.
pub(crate) fn request_cancel(store: &dyn Database, id: &str) -> Result<Run> {
    let num = parse_id(id)?;
    store.durable(|txn| {
        let db: &dyn Sql = txn;
        let status: String = db
            .query_opt("SELECT status FROM runs WHERE num = ?1", values![num], |r| r.get(0))?
            .ok_or_else(|| Error::RunNotFound(id.to_owned()))?;
        match status.parse()? {
            RunStatus::Queued => {
                db.execute(
                    "UPDATE runs SET status = 'cancelled', cancel_requested_at = ?2, ended_at = ?2, error = 'cancelled before it started'
                     WHERE num = ?1",
                    values![num, now_ms()],
                )?;
                append_in(db, num, &[RunEvent::status("cancelled", Some("cancelled before it started".into()))])?;
            }
            RunStatus::Running => {
                db.execute(
                    "UPDATE runs SET cancel_requested_at = coalesce(cancel_requested_at, ?2) WHERE num = ?1",
                    values![num, now_ms()],
                )?;
            }
            ended => {
                return Err(Error::RunEnded { id: format_id(num), status: ended.as_str() });
            }
        }
        bump_rev(db)
    })?;
    get_run(store, num)
}

/// Lets a held run go (the person approved it): it is queued like any other from now on.
pub(crate) fn approve(store: &dyn Database, id: &str) -> Result<Run> {
    let num = parse_id(id)?;
    store.durable(|txn| {
        let db: &dyn Sql = txn;
        let (status, held): (String, Option<String>) = db
            .query_opt("SELECT status, held FROM runs WHERE num = ?1", values![num], |r| Ok((r.get(0)?, r.get(1)?)))?
            .ok_or_else(|| Error::RunNotFound(id.to_owned()))?;
        let status: RunStatus = status.parse()?;
        if status.is_terminal() {
            return Err(Error::RunEnded { id: format_id(num), status: status.as_str() });
        }
        let Some(held) = held else {
            return Err(Error::invalid("approval", format!("{} is not waiting for approval", format_id(num))));
        };
        // On a team's board a run held for approval is the decision of the person of the machine
        // it would run on, and approving makes it that person's own request.
        let here = store.machine();
        if let Some(me) = &here {
            let runs_on: Option<String> =
                db.query_row("SELECT coalesce(machine, target_machine) FROM runs WHERE num = ?1", values![num], |r| {
                    r.get(0)
                })?;
            if let Some(there) = runs_on.filter(|m| m != me) {
                return Err(Error::NotAllowed(format!(
                    "{} would run on {there}: only the person there can approve it",
                    format_id(num)
                )));
            }
            db.execute("UPDATE runs SET origin = ?2 WHERE num = ?1", values![num, me])?;
        }
        if held == "daily" {
            return Err(Error::invalid(
                "approval",
                format!("{} waits for today's budget: raise usage.daily_budget, or it goes tomorrow", format_id(num)),
            ));
        }
        if held == "budget" {
            let (parent, task): (Option<i64>, Option<i64>) =
                db.query_row("SELECT parent, task FROM runs WHERE num = ?1", values![num], |r| {
                    Ok((r.get(0)?, r.get(1)?))
                })?;
            if let Some(over) = crate::usage::over_budget_before(db, num, parent, task)? {
                crate::usage::allow_chain_in(db, over)?;
            }
        }
        db.execute("UPDATE runs SET held = NULL WHERE num = ?1", values![num])?;
        append_in(db, num, &[RunEvent::status("queued", Some("approved by the person".into()))])?;
        bump_rev(db)
    })?;
    get_run(store, num)
}

/// Holds a queued run until the person allows it, saying why in its log.
pub(crate) fn hold_in(db: &dyn Sql, num: i64, reason: &str, why: &str) -> Result<()> {
    db.execute("UPDATE runs SET held = ?2 WHERE num = ?1 AND status = 'queued'", values![num, reason])?;
    append_in(db, num, &[RunEvent::status("held", Some(why.to_owned()))])?;
    Ok(())
}

/// Limits on how many runs go at once, and which runs a runner takes.
#[derive(Debug, Clone, Default)]
pub struct Limits {
    /// Local runs (the Cursor CLI on this machine) at once.
    pub total: usize,
    pub per_workspace: usize,
    /// Runs at once in worktrees of one repository (a worktree itself takes one at a time).
    pub per_repo: usize,
    /// Cloud runs at once (they take no local resources; one at a time per cloud agent anyway).
    pub cloud: usize,
    /// A foreground runner (`tether run` without a daemon) takes only its own run.
    pub only: Option<i64>,
    /// Team mode: this machine takes runs other machines queued for any runner (`serve
    /// --runner`); without it, only the runs it queued itself or that name it.
    pub takes_others: bool,
    /// Team mode: this runner's labels; it takes a run only when it has all the run's.
    pub labels: Vec<String>,
    /// Team mode: what this runner lets other machines' runs do here (see [`super::trust`]).
    pub policy: super::trust::RunnerPolicy,
    /// The form a repository's remote is compared in (`host/owner/name`); the URL itself when
    /// not given.
    pub repo_key: Option<fn(&str) -> String>,
}

/// How long a run queued for any runner waits for the machine that queued it before another
/// runner may take it ("this machine first").
pub const ORIGIN_FIRST_MS: i64 = 2_000;

/// Runs locked per claim: the first this machine may start is taken. Labels are decided in the
/// statement, so every candidate is one this runner could take; more than one only because the
/// trust rule (`super::trust`) may refuse the first (held for approval here, or left for another
/// runner), and a refused run at the head of the queue must not stop the ones behind it.
const CANDIDATES: i64 = 8;

/// Takes the oldest queued run that fits the limits and marks it running for `runner_pid`, in
/// one transaction (two runners never take the same run). A task-bound run claims its task here;
/// when it cannot (someone else holds it), the run fails at once with the reason.
pub(crate) fn claim_next(store: &dyn Database, runner_pid: u32, limits: &Limits) -> Result<Option<Run>> {
    // On a team's board, only runs this machine may take, and only its own running ones count
    // against its limits (on a machine's own board `machine` is NULL and every run is here).
    let machine = store.machine();
    let others_from = if limits.takes_others { now_ms() - ORIGIN_FIRST_MS } else { -1 };
    // An idle queue is the common case: a read says so without a write transaction.
    if !any_waiting(store)? {
        return Ok(None);
    }
    let labels = serde_json::to_string(&limits.labels)?;
    // Every rule of which run this runner may take is in the statement, so the one row it locks
    // (passing over runs another runner is taking, on PostgreSQL) is one it will take: a runner
    // that locked runs it then dropped would hide them from the runner that could take them.
    // The update's condition repeats that the run still waits.
    let claimed = store.claiming(|txn| {
        let db: &dyn Sql = txn;
        let (local, cloud): (i64, i64) = db.query_row(
            "SELECT coalesce(sum(CASE WHEN kind = 'local' THEN 1 ELSE 0 END), 0),
                    coalesce(sum(CASE WHEN kind = 'cloud' THEN 1 ELSE 0 END), 0)
             FROM runs WHERE status = 'running' AND machine IS NOT DISTINCT FROM CAST(?1 AS TEXT)",
            values![machine],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        // A cloud agent runs one run at a time (Cursor answers 409 agent_busy): its follow-up
        // waits in the queue until the run before it ended. (`?2` is cast where it is tested for
        // NULL: PostgreSQL types a parameter where it first meets it.)
        // A run's labels are a JSON list; this runner takes it only with them all.
        let lacks = |labels: &str, has: &str| {
            format!(
                "EXISTS (SELECT 1 FROM {} WHERE w.value NOT IN (SELECT h.value FROM {}))",
                db.json_strings(labels, "w"),
                db.json_strings(has, "h")
            )
        };
        // The queueing machine's head start is for it to take its own run: none when it lacks
        // the run's labels (or has left), so a runner that has them starts it at once. Only a
        // team's board has machines (and `machine` set); on this machine's own it is moot.
        let head_start_moot = if machine.is_some() {
            format!(
                "OR (?9 >= 0 AND NOT EXISTS (SELECT 1 FROM machines m WHERE m.name = q.origin AND NOT {}))",
                lacks("q.target_labels", "m.labels")
            )
        } else {
            String::new()
        };
        let sql = format!(
            "SELECT q.num, q.workspace, q.permissions, q.origin, q.requested_by, q.target_machine, q.repo_url
             FROM runs q
             WHERE q.status = 'queued' AND q.held IS NULL AND (CAST(?2 AS BIGINT) IS NULL OR q.num = ?2)
               AND (CAST(?8 AS TEXT) IS NULL OR q.target_machine = ?8
                    OR (q.target_machine IS NULL AND (q.origin = ?8 OR q.created_at <= ?9 {head_start_moot})))
               AND NOT {lacks_mine}
               AND ((q.kind = 'local' AND ?3 < ?4 AND q.worktree IS NULL
                     AND (SELECT count(*) FROM runs r WHERE r.status = 'running' AND r.kind = 'local'
                            AND r.machine IS NOT DISTINCT FROM CAST(?8 AS TEXT)
                            AND r.worktree IS NULL AND r.workspace IS NOT DISTINCT FROM q.workspace) < ?1)
                 OR (q.kind = 'local' AND ?3 < ?4 AND q.worktree IS NOT NULL
                     AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.status = 'running' AND r.worktree = q.worktree)
                     AND (SELECT count(*) FROM runs r JOIN worktrees w ON w.id = r.worktree
                            WHERE r.status = 'running'
                              AND w.repo = (SELECT repo FROM worktrees WHERE id = q.worktree)) < ?7)
                 OR (q.kind = 'cloud' AND ?5 < ?6
                     AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.status = 'running' AND r.kind = 'cloud'
                            AND (r.cloud ->> 'agent_id') = (q.cloud ->> 'agent_id'))))
             ORDER BY q.num LIMIT {CANDIDATES}{}",
            db.row_lock("OF q SKIP LOCKED"),
            lacks_mine = lacks("q.target_labels", "?10"),
        );
        let candidates: Vec<Candidate> = db.query_map(
            &sql,
            values![
                limits.per_workspace as i64,
                limits.only,
                local,
                limits.total as i64,
                cloud,
                limits.cloud as i64,
                limits.per_repo as i64,
                machine,
                others_from,
                labels
            ],
            |r| {
                Ok(Candidate {
                    num: r.get(0)?,
                    workspace: r.get(1)?,
                    permissions: r.get(2)?,
                    origin: r.get(3)?,
                    requested_by: r.get(4)?,
                    target_machine: r.get(5)?,
                    repo_url: r.get(6)?,
                })
            },
        )?;
        // Then who may start what here: a run this machine may not start is held for its person
        // when it names this machine, and left for another runner when it does not.
        let here =
            super::trust::Here { machine: machine.as_deref(), runner: limits.takes_others, policy: Some(&limits.policy) };
        let (mut pick, mut held) = (None, false);
        for c in candidates {
            // Unreadable permissions are taken as the most a run could ask for, never the least.
            let permissions: Permissions = serde_json::from_str(&c.permissions)
                .unwrap_or_else(|_| Permissions { allow: vec!["Shell(*)".into()], deny: Vec::new() });
            let repo = c.repo_url.as_deref().map(|u| limits.repo_key.map_or_else(|| u.to_owned(), |k| k(u)));
            let request = super::trust::Request {
                origin: c.origin.as_deref(),
                requested_by: &c.requested_by,
                permissions: &permissions,
                repo: repo.as_deref(),
            };
            match super::trust::may_start(&here, &request) {
                Ok(()) => {
                    pick = Some((c.num, c.workspace));
                    break;
                }
                Err(why) if c.target_machine.is_some() && c.target_machine == machine => {
                    let id = format_id(c.num);
                    hold_in(
                        db,
                        c.num,
                        "approval",
                        &format!(
                            "held for your approval: {why}; approve it in the Inbox or with `tether runs approve {id}`, \
                             or cancel it"
                        ),
                    )?;
                    held = true;
                }
                Err(_) => {}
            }
        }
        let Some((num, workspace)) = pick else {
            if held {
                bump_rev(db)?;
            }
            return Ok(None);
        };
        let now = now_ms();
        let took = db.execute(
            "UPDATE runs SET status = 'running', started_at = ?2, runner_pid = ?3, machine = ?4
             WHERE num = ?1 AND status = 'queued' AND held IS NULL",
            values![num, now, runner_pid, machine],
        )?;
        if took != 1 {
            return Ok(None);
        }
        // Every run is an agent (its chain's), so it can be signalled and shows on the Agents view.
        let root: i64 =
            db.query_row("SELECT coalesce(root, num) FROM runs WHERE num = ?1", values![num], |r| r.get(0))?;
        principal::ensure_in(db, &run_identity(root, workspace.as_deref()))?;
        append_in(db, num, &[RunEvent::status("running", None)])?;
        bump_rev(db)?;
        Ok(Some(num))
    })?;
    let Some(num) = claimed else { return Ok(None) };
    let run = get_run(store, num)?;
    if let Some(task) = &run.task {
        let actor =
            Actor { who: run_identity(run.root, run.workspace.as_deref()), lease_ms: Some(tasks::DEFAULT_LEASE_MS) };
        if let Err(e) = tasks::claim(store, &actor, &tasks::ClaimTarget::Id(task.clone())) {
            let msg = format!("could not claim {task}: {e}");
            finish(store, num, &Outcome { status: RunStatus::Failed, error: Some(msg), ..Default::default() })?;
            return get_run(store, num).map(Some);
        }
    }
    Ok(Some(run))
}

/// A queued run as `claim_next` weighs it.
struct Candidate {
    num: i64,
    workspace: Option<String>,
    permissions: String,
    origin: Option<String>,
    requested_by: String,
    target_machine: Option<String>,
    repo_url: Option<String>,
}

/// Whether any run waits in the queue (not held): one cheap read, so an idle runner asks nothing
/// more of the database.
pub(crate) fn any_waiting(store: &dyn Database) -> Result<bool> {
    let one = store.read(|c| {
        SqlExt::query_opt(c, "SELECT 1 FROM runs WHERE status = 'queued' AND held IS NULL LIMIT 1", &[], |_| Ok(()))
    })?;
    Ok(one.is_some())
}

/// Records the agent's process (and process group) for a run, so a later start can stop an
/// orphan it left.
pub(crate) fn set_child(store: &dyn Database, num: i64, pid: u32, started: Option<i64>) -> Result<()> {
    store.append(|db| {
        db.execute("UPDATE runs SET child_pid = ?2, child_started = ?3 WHERE num = ?1", values![num, pid, started])
    })?;
    Ok(())
}

/// Runs of `runner_pid`'s (on this machine) that were asked to stop, here or on another machine.
pub(crate) fn cancel_requested(store: &dyn Database, runner_pid: u32) -> Result<Vec<i64>> {
    let machine = store.machine();
    store.read(|c| {
        SqlExt::query_map(
            c,
            "SELECT num FROM runs WHERE status = 'running' AND runner_pid = ?1 AND cancel_requested_at IS NOT NULL
               AND machine IS NOT DISTINCT FROM CAST(?2 AS TEXT)",
            values![runner_pid, machine],
            |r| r.get(0),
        )
    })
}
