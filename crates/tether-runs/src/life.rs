//! One run's life, once and in order, whatever runs it: [`begin`] (placed on this machine — another
//! machine's run on this machine's checkout —, the executor able to start it, a budget already
//! spent stops it there, its worktree made and set up), the registered executor drives it, then
//! [`end`] (what it placed put back, what it left in its worktree committed to its branch, the
//! run finished and its task moved, the person told when it went over a budget, its end
//! published on the bus). The runner only schedules; an executor only runs the agent.
//!
//! Here, beside the runner, and not in tether-work or core: a run's start writes the worktree's
//! setup into the run's log under the log's one size limit ([`crate::log`]) and runs the
//! repository's setup commands as processes ([`crate::setup`]), both this crate's; the git life
//! it calls is tether-work's, the budgets core's.

use std::sync::Arc;

use tether_board::runs::{Outcome, Run, RunStatus};
use tether_core::Tether;
use tether_core::events::RunLog;
use tether_core::executor::{Executor, LogUsed, Prepared};
use tether_core::usage::{BudgetWatch, Budgets};

use crate::log::Watch;
use crate::{blocking, files, setup};

/// The executor kind a run needs.
pub(crate) fn kind_of(run: &Run) -> &'static str {
    if run.is_cloud() { "cloud" } else { "local" }
}

/// Makes `run` ready for `exec`: the run as this machine runs it, with its budget watch; or how it
/// ended without starting.
pub(crate) async fn begin(
    t: &Arc<Tether>,
    exec: &dyn Executor,
    run: &Run,
) -> Result<(Prepared, Arc<BudgetWatch>), Outcome> {
    // Another machine's run: its folder as this machine has it (found or cloned).
    let (t2, r) = (Arc::clone(t), run.clone());
    let run = blocking(move || tether_work::place::resolve_workspace(&*t2, &r))
        .await
        .map_err(|e| failed(format!("could not find the run's folder on this machine: {e}")))?;
    if let Some(why) = exec.preflight(t) {
        return Err(failed(why));
    }
    let (t2, r) = (Arc::clone(t), run.clone());
    let budget = Arc::new(blocking(move || Budgets::of(&t2).watch(&r)).await.map_err(|e| failed(e.to_string()))?);
    // A cloud run a runner re-attaches to is going at Cursor already: its driver reads its spend
    // and cancels it there when it is over.
    let going = run.cloud.as_ref().is_some_and(|c| c.run_id.is_some());
    if let Some(why) = budget.spent_before_start().filter(|_| !going) {
        return Err(Outcome {
            status: RunStatus::OverBudget,
            error: Some(format!("did not start: {why}")),
            ..Default::default()
        });
    }
    // What the worktree's setup writes counts against the same log limit as the agent's output.
    let max_log_mb = t.settings().map(|s| s.runs.max_log_mb).unwrap_or(64);
    let mut used = Watch::new(0, max_log_mb);
    let run = setup::worktree(t, &run, &mut used).await.map_err(failed)?;
    let log = LogUsed { kept: used.kept, dropped_lines: used.dropped_lines, dropped_bytes: used.dropped_bytes };
    Ok((Prepared { run, log }, budget))
}

/// Ends run `num` with `outcome`: what it placed put back, what it left in its worktree committed
/// (before it ends, so a merge never sees half of it), the run finished (its task moved), the
/// person told when it went over a budget, and its last event and status published.
pub(crate) async fn end(t: &Arc<Tether>, num: i64, outcome: Outcome) -> tether_core::Result<Run> {
    let t2 = Arc::clone(t);
    let ended = blocking(move || {
        files::restore_run(&t2, num, None);
        let mut at_end = t2.board().runs().get_run(num)?;
        at_end.status = outcome.status;
        // A run that never got its worktree has nothing to commit.
        if let Err(e) = tether_work::worktree::record_end(&*t2, &at_end) {
            tracing::warn!(run = num, error = %e, "committing the run's work to its branch");
        }
        t2.board().runs().finish(num, &outcome)
    })
    .await?;
    if ended.status == RunStatus::OverBudget {
        let (t2, r) = (Arc::clone(t), ended.clone());
        if let Err(e) = blocking(move || Budgets::of(&t2).went_over(&r)).await {
            tracing::warn!(run = num, error = %e, "telling the person a run went over budget");
        }
    }
    let tail = t.board().runs().get(&ended.id, Some(1)).ok().map(|d| d.events);
    if let Some(last) = tail.and_then(|e| e.into_iter().last()) {
        t.bus.run_log(RunLog::Events { run: ended.id.clone(), events: vec![last].into() });
    }
    t.bus.run_log(RunLog::Status { run: ended.id.clone(), status: ended.status });
    Ok(ended)
}

fn failed(msg: String) -> Outcome {
    Outcome { status: RunStatus::Failed, error: Some(msg), ..Default::default() }
}
