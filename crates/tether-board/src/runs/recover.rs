//! Runs a runner that is gone left `running`: they become `lost`, and their agents are handed
//! back to be stopped.

use super::finish::{Outcome, finish};
use super::model::RunStatus;
use crate::error::Result;
use tether_store::sql::Database;
use tether_store::sql::SqlExt;

/// A run left `running` by a process that is gone, with its agent's process to stop if it lives.
#[derive(Debug, Clone, PartialEq)]
pub struct Orphan {
    pub num: i64,
    pub child_pid: Option<u32>,
    pub child_started: Option<i64>,
}

/// Runs marked running by runners other than `alive` that are not alive any more: they become
/// `lost` (with the reason), and their orphan processes are returned for the caller to stop.
pub fn mark_lost(store: &dyn Database, is_alive: impl Fn(u32) -> bool) -> Result<Vec<Orphan>> {
    let running: Vec<(Option<u32>, Orphan)> = store.read(|c| {
        // Cloud runs outlive their runner (they run at Cursor): a new runner adopts them instead.
        SqlExt::query_map(
            c,
            "SELECT num, runner_pid, child_pid, child_started FROM runs WHERE status = 'running' AND kind = 'local'",
            &[],
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
