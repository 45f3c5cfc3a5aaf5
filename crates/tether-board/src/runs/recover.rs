//! Runs a runner that is gone left `running`: they become `lost`, and their agents are handed
//! back to be stopped.

use super::finish::{Outcome, finish};
use super::model::RunStatus;
use crate::error::Result;
use tether_store::sql::Database;
use tether_store::sql::SqlExt;
use tether_store::values;

/// A run left `running` by a process that is gone, with its agent's process to stop if it lives.
#[derive(Debug, Clone, PartialEq)]
pub struct Orphan {
    pub num: i64,
    pub child_pid: Option<u32>,
    pub child_started: Option<i64>,
}

/// This machine's runs marked running by runners that are not alive any more: they become
/// `lost` (with the reason), and their orphan processes are returned for the caller to stop.
/// (Another machine's runner is not this machine's to judge: see [`lose_runs_on`].)
pub(crate) fn mark_lost(store: &dyn Database, is_alive: impl Fn(u32) -> bool) -> Result<Vec<Orphan>> {
    let machine = store.machine();
    let running: Vec<(Option<u32>, Orphan)> = store.read(|c| {
        // Cloud runs outlive their runner (they run at Cursor): a new runner adopts them instead.
        SqlExt::query_map(
            c,
            "SELECT num, runner_pid, child_pid, child_started FROM runs
             WHERE status = 'running' AND kind = 'local' AND machine IS NOT DISTINCT FROM CAST(?1 AS TEXT)",
            values![machine],
            |r| Ok((r.get(1)?, Orphan { num: r.get(0)?, child_pid: r.get(2)?, child_started: r.get(3)? })),
        )
    })?;
    let mut out = Vec::new();
    for (runner, orphan) in running {
        if runner.is_some_and(&is_alive) {
            continue;
        }
        let num = orphan.num;
        let o = Outcome {
            status: RunStatus::Lost,
            error: Some("Tether stopped while the run was going (its agent was stopped too)".into()),
            ..Default::default()
        };
        finish(store, num, &o)?;
        out.push(orphan);
    }
    Ok(out)
}

/// Team mode: the local runs of machines that stopped checking in (`gone`, decided by the team
/// database's clock) become `lost`, saying so, which hands their tasks back. Each run ends once
/// whichever machine notices first.
pub(crate) fn lose_runs_on(store: &dyn Database, gone: &[String]) -> Result<Vec<i64>> {
    let mut lost = Vec::new();
    for m in gone {
        let nums: Vec<i64> = store.read(|c| {
            SqlExt::query_map(
                c,
                "SELECT num FROM runs WHERE status = 'running' AND kind = 'local' AND machine = ?1",
                values![m],
                |r| r.get(0),
            )
        })?;
        for num in nums {
            let o = Outcome {
                status: RunStatus::Lost,
                error: Some(format!("the runner machine {m:?} stopped answering while the run was going")),
                ..Default::default()
            };
            if finish(store, num, &o)?.status == RunStatus::Lost {
                lost.push(num);
            }
        }
    }
    Ok(lost)
}
