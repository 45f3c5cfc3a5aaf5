//! The runner: a scheduler. Takes queued runs (any process may queue one) within the limits,
//! claimed atomically, and gives each its life — [`crate::life::begin`], the registered
//! executor of its kind drives it, [`crate::life::end`] — on a task of its own. Woken by the event bus (a run queued, approved or cancelled in this process, or seen in
//! another's by the daemon's store watcher), and every second in case; it publishes each run's
//! status on the bus's run log. At start it makes runs of dead runners `lost`, stops their
//! orphans and restores their files; it re-attaches to cloud runs a stopped runner left going,
//! and wakes idle chats that asked to be.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tether_board::runs::{self, Limits, Outcome, Run, RunStatus};
use tether_core::Tether;
use tether_core::events::{Event, RunLog};
use tether_core::executor::Drive;
use tether_core::usage::Budgets;
use tokio::sync::Notify;
use tokio::sync::broadcast::error::RecvError;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::{blocking, files, life, process};

/// How often the daemon's runner looks for worktrees past their retention.
const REAP_EVERY: Duration = Duration::from_secs(600);
/// How often a runner looks at the queue unwoken. The daemon's runner is woken by the bus: its
/// own writes, other processes' (the daemon's store watcher announces them) and, on a team's
/// board, other machines' (the database's notifications) — so its look is only the net under a
/// missed wake-up and the clock's own changes (a day's budget renewed at midnight), once a
/// minute, which is all an idle daemon pays. A foreground `tether run` has no store watcher: it
/// looks every second for a cancel asked from another process.
const DAEMON_IDLE: Duration = Duration::from_secs(60);
const FOREGROUND_IDLE: Duration = Duration::from_secs(1);
const TEAM_IDLE: Duration = Duration::from_secs(30);
/// How often the daemon's runner looks for cloud runs a stopped runner left going.
const ADOPT_EVERY: Duration = Duration::from_secs(60);

/// Runs queued runs until stopped. One per process that runs agents (the daemon, or `tether run`
/// in the foreground when no daemon is running).
pub struct Runner {
    tether: Arc<Tether>,
    pid: u32,
    /// Set for a foreground runner: the one run it is there for.
    only: Option<i64>,
    kick: Notify,
    live: Mutex<HashMap<i64, CancellationToken>>,
    /// Look again then: a run another machine queued becomes this runner's to take once the
    /// machine that queued it had its head start.
    recheck_at: Mutex<Option<tokio::time::Instant>>,
}

impl std::fmt::Debug for Runner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runner").field("pid", &self.pid).finish_non_exhaustive()
    }
}

/// Owns the runner's scheduling task; `stop` ends it and the runs it holds.
pub struct RunnerHandle {
    runner: Arc<Runner>,
    stop: CancellationToken,
    task: Option<JoinHandle<()>>,
    listen: Option<JoinHandle<()>>,
}

impl RunnerHandle {
    pub fn runner(&self) -> &Arc<Runner> {
        &self.runner
    }

    /// Stops taking runs and ends the ones going (as `lost`: Tether stopped), putting their
    /// files back. Returns once they are all finished.
    pub async fn stop(mut self) {
        self.stop.cancel();
        for t in [self.task.take(), self.listen.take()].into_iter().flatten() {
            let _ = t.await;
        }
    }
}

impl Drop for RunnerHandle {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

impl Runner {
    /// Recovers what a previous process left (runs it was running become `lost`, their agents
    /// are stopped, their files put back), then starts taking queued runs. Call inside a Tokio
    /// runtime.
    pub fn start(tether: Arc<Tether>) -> RunnerHandle {
        Self::start_with(tether, None)
    }

    /// A runner for one run only (`tether run` when no daemon is running): other processes'
    /// queued runs wait for their own runner.
    pub fn start_for(tether: Arc<Tether>, run: &Run) -> RunnerHandle {
        Self::start_with(tether, Some(run.num()))
    }

    fn start_with(tether: Arc<Tether>, only: Option<i64>) -> RunnerHandle {
        // A host that registered its own executors keeps them.
        crate::register(&tether);
        let runner = Arc::new(Runner {
            tether,
            pid: std::process::id(),
            only,
            kick: Notify::new(),
            live: Mutex::default(),
            recheck_at: Mutex::default(),
        });
        let stop = CancellationToken::new();
        let listen = tokio::spawn(Arc::clone(&runner).listen(stop.clone()));
        let task = tokio::spawn(Arc::clone(&runner).schedule(stop.clone()));
        RunnerHandle { runner, stop, task: Some(task), listen: Some(listen) }
    }

    /// What the bus asks of this runner: look at the queue again (a run was queued, approved or
    /// ended anywhere), stop a run now.
    async fn listen(self: Arc<Self>, stop: CancellationToken) {
        let mut bus = self.tether.bus.subscribe();
        loop {
            let ev = tokio::select! {
                ev = bus.recv() => ev,
                _ = stop.cancelled() => return,
            };
            match ev {
                Ok(Event::Runs { .. }) | Err(RecvError::Lagged(_)) => {
                    let then = tokio::time::Instant::now() + Duration::from_millis(runs::ORIGIN_FIRST_MS as u64 + 100);
                    *self.recheck_at.lock().unwrap_or_else(|p| p.into_inner()) = Some(then);
                    self.kick();
                }
                // Signals may wake an idle chat (a follow-up run), as may an agent opting in;
                // a raised budget or limit may free held runs.
                Ok(Event::Signals { .. } | Event::Agents {} | Event::Settings(_)) => self.kick(),
                Ok(Event::RunCancelRequested { run }) => {
                    if let Some(tok) = self.live.lock().unwrap_or_else(|p| p.into_inner()).get(&run) {
                        tok.cancel();
                    }
                    self.kick();
                }
                Ok(_) => {}
                Err(RecvError::Closed) => return,
            }
        }
    }

    /// Something may have been queued or cancelled (by this or another process).
    pub fn kick(&self) {
        self.kick.notify_one();
    }

    /// How many runs this runner has going now.
    pub fn running(&self) -> usize {
        self.live.lock().unwrap_or_else(|p| p.into_inner()).len()
    }

    fn publish_status(&self, run: &str, status: RunStatus) {
        self.tether.bus.run_log(RunLog::Status { run: run.to_owned(), status });
    }

    async fn schedule(self: Arc<Self>, stop: CancellationToken) {
        let t = Arc::clone(&self.tether);
        if let Err(e) = blocking(move || recover(&t)).await {
            tracing::warn!(error = %e, "recovering runs left by an earlier start");
        }
        let mut going: Vec<JoinHandle<()>> = Vec::new();
        let mut reaped_at: Option<tokio::time::Instant> = None;
        let mut adopted_at: Option<tokio::time::Instant> = None;
        loop {
            going.retain(|h| !h.is_finished());
            if self.only.is_none() {
                // Cloud runs a stopped runner left: at start, then now and then (a foreground
                // runner that died); not on every look, which each idle machine pays for.
                if adopted_at.is_none_or(|at| at.elapsed() >= ADOPT_EVERY) {
                    adopted_at = Some(tokio::time::Instant::now());
                    self.adopt_cloud_runs(&stop, &mut going).await;
                }
                self.wake_idle_chats().await;
                if reaped_at.is_none_or(|at| at.elapsed() >= REAP_EVERY) {
                    reaped_at = Some(tokio::time::Instant::now());
                    self.reap().await;
                }
            }
            // Today's budget spent: queued runs wait (held `daily`) until tomorrow or a raise.
            let t = Arc::clone(&self.tether);
            if let Err(e) = blocking(move || Budgets::of(&t).hold_if_spent_today()).await {
                warn_of("checking today's budget", &e);
            }
            // (An idle queue costs one read: `claim_next` asks whether anything waits first.)
            loop {
                let t = Arc::clone(&self.tether);
                let (pid, only) = (self.pid, self.only);
                let claimed = blocking(move || {
                    let r = t.settings().unwrap_or_default().runs;
                    let role = t.daemon.runner_role();
                    let limits = Limits {
                        total: r.max_total as usize,
                        per_workspace: r.max_per_workspace as usize,
                        per_repo: r.max_per_repo as usize,
                        cloud: t.settings().unwrap_or_default().cloud.max_running as usize,
                        only,
                        takes_others: role.takes_others && only.is_none(),
                        labels: role.labels,
                        policy: r.runner_policy,
                        repo_key: Some(tether_git::remote_key),
                    };
                    t.board().runs().claim_next(pid, &limits)
                })
                .await;
                match claimed {
                    Ok(Some(run)) if run.status == RunStatus::Running => {
                        let tok = stop.child_token();
                        self.live.lock().unwrap_or_else(|p| p.into_inner()).insert(run.num(), tok.clone());
                        self.publish_status(&run.id, run.status);
                        going.push(tokio::spawn(Arc::clone(&self).execute(run, tok)));
                    }
                    Ok(Some(run)) => self.publish_status(&run.id, run.status),
                    Ok(None) => break,
                    Err(e) => {
                        warn_of("taking the next queued run", &e);
                        break;
                    }
                }
            }
            let t = Arc::clone(&self.tether);
            let pid = self.pid;
            if self.running() > 0
                && let Ok(asked) = blocking(move || t.board().runs().cancel_requested(pid)).await
            {
                let live = self.live.lock().unwrap_or_else(|p| p.into_inner());
                for num in asked {
                    if let Some(tok) = live.get(&num) {
                        tok.cancel();
                    }
                }
            }
            let idle = match (self.only, self.tether.in_team()) {
                (Some(_), _) => FOREGROUND_IDLE,
                (None, true) => TEAM_IDLE,
                (None, false) => DAEMON_IDLE,
            };
            let mut until = tokio::time::Instant::now() + idle;
            {
                let mut at = self.recheck_at.lock().unwrap_or_else(|p| p.into_inner());
                if let Some(r) = at.take_if(|r| *r > tokio::time::Instant::now()) {
                    until = until.min(r);
                    *at = Some(r);
                }
            }
            tokio::select! {
                _ = self.kick.notified() => {}
                // Runs queued or cancelled by another process (or machine) are seen by then.
                _ = tokio::time::sleep_until(until) => {
                    let mut at = self.recheck_at.lock().unwrap_or_else(|p| p.into_inner());
                    at.take_if(|r| *r <= tokio::time::Instant::now());
                }
                _ = stop.cancelled() => break,
            }
        }
        for h in going {
            let _ = h.await;
        }
    }

    /// Re-attaches to cloud runs a stopped runner left going (they run on at Cursor).
    async fn adopt_cloud_runs(self: &Arc<Self>, stop: &CancellationToken, going: &mut Vec<JoinHandle<()>>) {
        let t = Arc::clone(&self.tether);
        let pid = self.pid;
        let mine: Vec<i64> = self.live.lock().unwrap_or_else(|p| p.into_inner()).keys().copied().collect();
        let adopted = blocking(move || t.board().cloud().adopt(pid, &mine, process::is_tether)).await;
        match adopted {
            Ok(runs) => {
                for run in runs {
                    tracing::info!(run = %run.id, "re-attaching to a cloud run");
                    let tok = stop.child_token();
                    self.live.lock().unwrap_or_else(|p| p.into_inner()).insert(run.num(), tok.clone());
                    self.publish_status(&run.id, run.status);
                    going.push(tokio::spawn(Arc::clone(self).execute(run, tok)));
                }
            }
            Err(e) => warn_of("adopting cloud runs", &e),
        }
    }

    /// Removes worktrees of runs that ended longer ago than the retention, and of runs whose
    /// pull requests were merged on GitHub.
    async fn reap(&self) {
        let t = Arc::clone(&self.tether);
        match blocking(move || tether_work::worktree::reap(&*t)).await {
            Ok(gone) => {
                for w in gone {
                    tracing::info!(path = %w.path, branch = %w.branch, "removed an old run's worktree (its branch is kept)");
                }
            }
            Err(e) => tracing::warn!(error = %e, "removing old worktrees"),
        }
        let t = Arc::clone(&self.tether);
        match blocking(move || tether_work::review::sync_pulls(&*t)).await {
            Ok(runs) if !runs.is_empty() => {
                tracing::info!(?runs, "pull requests merged on GitHub; their worktrees removed")
            }
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, "asking GitHub about runs' pull requests"),
        }
    }

    /// Queues a follow-up run for each opted-in idle chat that signals wait for (the daemon's
    /// runner only; a foreground `tether run` runs just its own).
    async fn wake_idle_chats(&self) {
        let t = Arc::clone(&self.tether);
        let woken = blocking(move || {
            let r = t.settings().unwrap_or_default().runs;
            let policy =
                tether_board::wake::Policy { per_hour: r.resume_wakes_per_hour, allow_remote: r.wake_remote_senders };
            t.board().agents().wake_idle_chats(&policy)
        })
        .await;
        match woken {
            Ok(runs) => {
                for r in runs {
                    tracing::info!(run = %r.id, chat = ?r.resume_chat, "waking an idle chat for its signals");
                    self.publish_status(&r.id, r.status);
                }
            }
            Err(e) => warn_of("waking idle chats", &e),
        }
    }

    /// A run's life: begin, the executor of its kind drives it, end. A drive that leaves the run
    /// going elsewhere (Tether stopping during a cloud run) does not end it.
    async fn execute(self: Arc<Self>, run: Run, tok: CancellationToken) {
        let num = run.num();
        let outcome = match self.tether.executors.get(life::kind_of(&run)) {
            None => Outcome {
                status: RunStatus::Failed,
                error: Some(format!("nothing here runs {} runs", life::kind_of(&run))),
                ..Default::default()
            },
            Some(exec) => match life::begin(&self.tether, &*exec, &run).await {
                Err(o) => o,
                Ok((prepared, budget)) => match exec.drive(&self.tether, &prepared, &tok, &budget).await {
                    Drive::Ended(o) => o,
                    Drive::Detached => {
                        // Tether is stopping; the run goes on at Cursor until a runner re-attaches.
                        self.live.lock().unwrap_or_else(|p| p.into_inner()).remove(&num);
                        return;
                    }
                },
            },
        };
        if let Err(e) = life::end(&self.tether, num, outcome).await {
            tracing::warn!(run = num, error = %e, "recording the end of a run");
        }
        self.live.lock().unwrap_or_else(|p| p.into_inner()).remove(&num);
        self.kick();
    }
}

/// Makes runs left `running` by a process that is gone `lost`, stops their agents if they still
/// run (the same process, not one that reused its pid), and puts their files back.
fn recover(t: &Tether) -> tether_core::Result<()> {
    let me = std::process::id();
    let orphans = t.board().runs().mark_lost(|pid| pid == me || process::is_tether(pid))?;
    for o in orphans {
        if let Some(pid) = o.child_pid
            && process::same_process(pid, o.child_started)
        {
            tracing::info!(run = o.num, pid, "stopping the agent a stopped Tether left running");
            process::signal_group(pid, process::Sig::Term);
            std::thread::sleep(Duration::from_millis(500));
            process::signal_group(pid, process::Sig::Kill);
        }
    }
    files::restore_orphans(t);
    tether_work::worktree::recover(t)
}

/// A loop's failure, said as a warning, unless it is a team database that cannot be reached
/// (the daemon's team heartbeat says that once, instead of every loop every second).
fn warn_of(what: &str, e: &tether_core::Error) {
    if e.is_unavailable() {
        tracing::debug!(error = %e, "{what}");
    } else {
        tracing::warn!(error = %e, "{what}");
    }
}
