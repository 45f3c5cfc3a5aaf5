//! Runs the Cursor CLI agent headless for Tether: takes queued runs (any process may queue one)
//! within the concurrency limits, places the run's permissions and role rule in its workspace,
//! starts `agent -p --output-format stream-json …` in its own process group with only an
//! allowlisted environment, turns every output line into a typed event (stored, then broadcast
//! live), and ends the run on its result, its exit, its time limit or a cancellation — always
//! putting the workspace's files back and moving a bound task.
//!
//! The data model and every decision that must hold across processes live in tether-core
//! (`board::runs`); this crate owns processes and timers. It must not depend on axum, rmcp,
//! clap or tauri.

mod files;
pub mod nofollow;
pub mod process;
pub mod stream_json;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use stream_json::StreamParser;
use tether_core::Tether;
use tether_core::board::runs::event::RunEvent;
use tether_core::board::runs::{self, Limits, Outcome, Run, RunStatus, StoredEvent};
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::sync::{Notify, broadcast, mpsc};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// Live updates kept for subscribers: one that falls this far behind skips ahead (it is told
/// how far, and can read the rest from the store). With [`BATCH_BYTES`] this bounds what a stalled
/// subscriber can hold in memory to a few MiB.
const UPDATES: usize = 64;
const BATCH_BYTES: usize = 64 << 10;

/// How a stopped run is told apart from one that failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    Cancelled,
    TimedOut,
    /// Tether itself is shutting down.
    Shutdown,
}

/// What the runner tells live subscribers (the GUI's stream, MCP resource subscribers).
#[derive(Debug, Clone)]
pub enum RunUpdate {
    /// Events stored for a run, in order.
    Events { run: String, events: Vec<StoredEvent> },
    /// A run's status changed (queued, running, ended).
    Status { run: String, status: RunStatus },
}

/// The Cursor CLI this machine would run, and whether it answers.
#[derive(Debug, Clone, serde::Serialize)]
pub struct CliInfo {
    pub found: bool,
    pub path: Option<PathBuf>,
    /// `settings`, `TETHER_CURSOR_AGENT` or `PATH`.
    pub from: Option<&'static str>,
    pub version: Option<String>,
    /// What to do when it is missing or broken.
    pub hint: Option<String>,
}

pub const INSTALL_HINT: &str = "install the Cursor CLI (`curl https://cursor.com/install -fsS | bash`), or point Tether at \
     it: settings runs.cursor_agent, or TETHER_CURSOR_AGENT";

/// Finds the Cursor CLI and asks its version (5 s at most).
pub async fn probe(t: &Tether) -> CliInfo {
    let saved = t.settings().ok().and_then(|s| s.runs.cursor_agent);
    let Some((path, from)) = tether_core::paths::cursor_agent(saved.as_deref()) else {
        return CliInfo { found: false, path: None, from: None, version: None, hint: Some(INSTALL_HINT.into()) };
    };
    let out = tokio::time::timeout(
        Duration::from_secs(5),
        tokio::process::Command::new(&path)
            .arg("--version")
            .env_clear()
            .envs(tether_core::paths::run_environment())
            .stdin(std::process::Stdio::null())
            .kill_on_drop(true)
            .output(),
    )
    .await;
    let (version, hint) = match out {
        Ok(Ok(o)) if o.status.success() => (Some(String::from_utf8_lossy(&o.stdout).trim().to_owned()), None),
        Ok(Ok(o)) => (
            None,
            Some(format!("`{} --version` failed: {}", path.display(), String::from_utf8_lossy(&o.stderr).trim())),
        ),
        Ok(Err(e)) => (None, Some(format!("cannot run {}: {e}", path.display()))),
        Err(_) => (None, Some(format!("`{} --version` did not answer within 5 s", path.display()))),
    };
    CliInfo { found: true, path: Some(path), from: Some(from), version, hint }
}

/// Runs queued runs until stopped. One per process that runs agents (the daemon, or `tether run`
/// in the foreground when no daemon is running).
pub struct Runner {
    tether: Arc<Tether>,
    pid: u32,
    /// Set for a foreground runner: the one run it is there for.
    only: Option<i64>,
    kick: Notify,
    live: Mutex<HashMap<i64, CancellationToken>>,
    /// Cloud runs going here, rung when Cursor's webhook says one changed.
    pokes: Mutex<HashMap<i64, Arc<Notify>>>,
    updates: broadcast::Sender<RunUpdate>,
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
}

impl RunnerHandle {
    pub fn runner(&self) -> &Arc<Runner> {
        &self.runner
    }

    /// Stops taking runs and ends the ones going (as `lost`: Tether stopped), putting their
    /// files back. Returns once they are all finished.
    pub async fn stop(mut self) {
        self.stop.cancel();
        if let Some(t) = self.task.take() {
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
        let runner = Arc::new(Runner {
            tether,
            pid: std::process::id(),
            only,
            kick: Notify::new(),
            live: Mutex::default(),
            pokes: Mutex::default(),
            updates: broadcast::channel(UPDATES).0,
        });
        let stop = CancellationToken::new();
        let task = tokio::spawn(Arc::clone(&runner).schedule(stop.clone()));
        RunnerHandle { runner, stop, task: Some(task) }
    }

    /// Something may have been queued or cancelled (by this or another process).
    pub fn kick(&self) {
        self.kick.notify_one();
    }

    pub fn subscribe(&self) -> broadcast::Receiver<RunUpdate> {
        self.updates.subscribe()
    }

    /// Cancels a run: a queued one at once, a running one of ours now (others' within a second).
    pub async fn cancel(&self, id: &str) -> tether_core::Result<Run> {
        let t = Arc::clone(&self.tether);
        let key = id.to_owned();
        let run = blocking(move || t.board().cancel_run(&key)).await?;
        if let Some(tok) = self.live.lock().unwrap_or_else(|p| p.into_inner()).get(&run.num()) {
            tok.cancel();
        }
        if run.status == RunStatus::Cancelled {
            self.publish_status(&run.id, run.status);
        }
        self.kick();
        Ok(run)
    }

    /// Cursor's webhook says a cloud run changed: it reads the run's status now (no-op for a run
    /// this runner is not following).
    pub fn poke(&self, num: i64) {
        if let Some(p) = self.pokes.lock().unwrap_or_else(|p| p.into_inner()).get(&num) {
            p.notify_one();
        }
    }

    /// How many runs this runner has going now.
    pub fn running(&self) -> usize {
        self.live.lock().unwrap_or_else(|p| p.into_inner()).len()
    }

    fn publish_status(&self, run: &str, status: RunStatus) {
        let _ = self.updates.send(RunUpdate::Status { run: run.to_owned(), status });
    }

    async fn schedule(self: Arc<Self>, stop: CancellationToken) {
        let t = Arc::clone(&self.tether);
        if let Err(e) = blocking(move || recover(&t)).await {
            tracing::warn!(error = %e, "recovering runs left by an earlier start");
        }
        let mut going: Vec<JoinHandle<()>> = Vec::new();
        loop {
            going.retain(|h| !h.is_finished());
            if self.only.is_none() {
                self.adopt_cloud_runs(&stop, &mut going).await;
                self.wake_idle_chats().await;
            }
            loop {
                let t = Arc::clone(&self.tether);
                let (pid, only) = (self.pid, self.only);
                let claimed = blocking(move || {
                    let r = t.settings().unwrap_or_default().runs;
                    let limits = Limits {
                        total: r.max_total as usize,
                        per_workspace: r.max_per_workspace as usize,
                        cloud: t.settings().unwrap_or_default().cloud.max_running as usize,
                        only,
                    };
                    runs::claim_next(&t.store, pid, limits)
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
                        tracing::warn!(error = %e, "taking the next queued run");
                        break;
                    }
                }
            }
            let t = Arc::clone(&self.tether);
            let pid = self.pid;
            if let Ok(asked) = blocking(move || runs::cancel_requested(&t.store, pid)).await {
                let live = self.live.lock().unwrap_or_else(|p| p.into_inner());
                for num in asked {
                    if let Some(tok) = live.get(&num) {
                        tok.cancel();
                    }
                }
            }
            tokio::select! {
                _ = self.kick.notified() => {}
                // Runs queued or cancelled by another process are seen within a second.
                _ = tokio::time::sleep(Duration::from_secs(1)) => {}
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
        let adopted =
            blocking(move || tether_core::board::cloud::adopt(&t.store, pid, &mine, process::is_tether)).await;
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
            Err(e) => tracing::warn!(error = %e, "adopting cloud runs"),
        }
    }

    /// Queues a follow-up run for each opted-in idle chat that signals wait for (the daemon's
    /// runner only; a foreground `tether run` runs just its own).
    async fn wake_idle_chats(&self) {
        let t = Arc::clone(&self.tether);
        let woken = blocking(move || {
            let r = t.settings().unwrap_or_default().runs;
            let policy = tether_core::board::wake::Policy {
                per_hour: r.resume_wakes_per_hour,
                allow_remote: r.wake_remote_senders,
            };
            t.board().wake_idle_chats(&policy)
        })
        .await;
        match woken {
            Ok(runs) => {
                for r in runs {
                    tracing::info!(run = %r.id, chat = ?r.resume_chat, "waking an idle chat for its signals");
                    self.publish_status(&r.id, r.status);
                }
            }
            Err(e) => tracing::warn!(error = %e, "waking idle chats"),
        }
    }

    async fn execute(self: Arc<Self>, run: Run, tok: CancellationToken) {
        let num = run.num();
        let outcome = if run.is_cloud() {
            match self.drive_cloud(&run, &tok).await {
                Some(o) => o,
                None => {
                    // Tether is stopping; the run goes on at Cursor until a runner re-attaches.
                    self.live.lock().unwrap_or_else(|p| p.into_inner()).remove(&num);
                    return;
                }
            }
        } else {
            let mut held = None;
            let o = match self.drive(&run, &tok, &mut held).await {
                Ok(o) => o,
                Err(e) => Outcome { status: RunStatus::Failed, error: Some(e.to_string()), ..Default::default() },
            };
            let t = Arc::clone(&self.tether);
            // Put back in the folder the run started in (held by its handle), whatever its name
            // leads to now.
            let _ = blocking(move || {
                files::restore_run(&t, num, held.as_ref());
                Ok(())
            })
            .await;
            o
        };
        let t = Arc::clone(&self.tether);
        let ended = blocking(move || {
            if run.is_cloud() {
                files::restore_run(&t, num, None);
            }
            t.board().finish_run(num, &outcome)
        })
        .await;
        self.live.lock().unwrap_or_else(|p| p.into_inner()).remove(&num);
        if let Ok(r) = &ended
            && let Some(chat) = r.chat_id.clone().filter(|_| r.is_cloud())
        {
            let t = Arc::clone(&self.tether);
            if let Err(e) = blocking(move || tether_cloud::transcript::write_and_index(&t, &chat)).await {
                tracing::warn!(run = num, error = %e, "writing a cloud run's transcript");
            }
        }
        match ended {
            Ok(r) => {
                let tail = self.tether.board().run(&r.id, Some(1)).ok().map(|d| d.events);
                if let Some(last) = tail.and_then(|e| e.into_iter().last()) {
                    let _ = self.updates.send(RunUpdate::Events { run: r.id.clone(), events: vec![last] });
                }
                self.publish_status(&r.id, r.status);
            }
            Err(e) => tracing::warn!(run = num, error = %e, "recording the end of a run"),
        }
        self.kick();
    }

    /// Checks the workspace again and holds it, places the files, runs the agent and watches it
    /// to its end. `held` keeps the workspace's handle for putting the files back.
    async fn drive(
        &self,
        run: &Run,
        tok: &CancellationToken,
        held: &mut Option<nofollow::Dir>,
    ) -> tether_core::Result<Outcome> {
        let t = Arc::clone(&self.tether);
        let settings = t.settings()?.runs;
        let Some((bin, _)) = tether_core::paths::cursor_agent(settings.cursor_agent.as_deref()) else {
            return Ok(failed(format!("the Cursor CLI was not found: {INSTALL_HINT}")));
        };
        let workspace = PathBuf::from(run.workspace.clone().unwrap_or_default());
        let ws = {
            let (t, r) = (Arc::clone(&t), run.clone());
            match blocking(move || {
                let ws = files::open_workspace(&t, &r)?;
                if let Some(d) = &ws {
                    files::place(&t, &r, d)?;
                }
                Ok(ws)
            })
            .await
            {
                Ok(Some(ws)) => ws,
                Ok(None) => return Ok(failed("a local run needs a workspace".into())),
                Err(e) => return Ok(failed(e.to_string())),
            }
        };
        let cwd = ws.path_for_child();
        *held = Some(ws);
        let mut args: Vec<String> =
            ["-p", "--output-format", "stream-json", "--trust", "--workspace"].map(str::to_owned).into();
        args.push(workspace.to_string_lossy().into_owned());
        if let Some(m) = &run.model {
            args.extend(["--model".into(), m.clone()]);
        }
        if run.mode != runs::RunMode::Agent {
            args.extend(["--mode".into(), run.mode.as_str().into()]);
        }
        let resume = run.resume_chat.clone();
        if let Some(c) = &resume {
            args.extend(["--resume".into(), c.clone()]);
        }
        if run.mode == runs::RunMode::Agent && run.permissions.allows_writes() {
            args.push("--force".into());
        }
        let mut env = tether_core::paths::run_environment();
        if let Ok(Some((key, _))) = tether_core::token::cursor_key(&t.paths) {
            env.push(("CURSOR_API_KEY".into(), key));
        }
        let mut child = match process::spawn(&bin, &args, &env, &cwd) {
            Ok(c) => c,
            Err(e) => return Ok(failed(format!("could not start {}: {e}", bin.display()))),
        };
        if let Some(pid) = child.id() {
            let (t, num) = (Arc::clone(&t), run.num());
            let started = process::start_time(pid);
            blocking(move || runs::set_child(&t.store, num, pid, started)).await?;
        }
        if let Some(mut stdin) = child.stdin.take() {
            let prompt = run.prompt.clone().into_bytes();
            tokio::spawn(async move {
                let _ = stdin.write_all(&prompt).await;
                let _ = stdin.shutdown().await;
            });
        }
        let (tx, mut rx) = mpsc::channel::<RunEvent>(4096);
        let stderr_tail = Arc::new(Mutex::new(Vec::<String>::new()));
        let out_reader = child.stdout.take().map(|out| {
            let tx = tx.clone();
            tokio::spawn(async move {
                let mut r = BufReader::new(out);
                let mut parser = StreamParser::new(false);
                let mut buf = Vec::new();
                while let Ok(Some(())) = process::next_line(&mut r, &mut buf).await {
                    if let Some(ev) = parser.parse(&buf)
                        && tx.send(ev).await.is_err()
                    {
                        break;
                    }
                }
            })
        });
        let err_reader = child.stderr.take().map(|err| {
            let (tx, tail) = (tx.clone(), Arc::clone(&stderr_tail));
            tokio::spawn(async move {
                let mut r = BufReader::new(err);
                let mut buf = Vec::new();
                while let Ok(Some(())) = process::next_line(&mut r, &mut buf).await {
                    let text = String::from_utf8_lossy(&buf).trim_end().to_owned();
                    if text.trim().is_empty() {
                        continue;
                    }
                    {
                        let mut t = tail.lock().unwrap_or_else(|p| p.into_inner());
                        if t.len() >= 40 {
                            t.remove(0);
                        }
                        t.push(text.clone());
                    }
                    if tx.send(RunEvent::Stderr { text }).await.is_err() {
                        break;
                    }
                }
            })
        });
        drop(tx);

        let kill_grace = Duration::from_secs(u64::from(settings.kill_grace_secs));
        let result_grace = Duration::from_secs(u64::from(settings.result_grace_secs));
        let deadline = tokio::time::Instant::now() + Duration::from_millis(run.timeout_secs.max(1) as u64 * 1000);
        let seq = {
            let (t, num) = (Arc::clone(&t), run.num());
            blocking(move || runs::last_seq(&t.store, num)).await?
        };
        let mut watch = Watch::new(seq, settings.max_log_mb);
        let log = Log::start(Arc::clone(&t), run.num());
        let mut lingered = false;
        let mut stopped: Option<Stop> = None;
        let mut exit: Option<std::process::ExitStatus> = None;
        let mut events_open = true;
        loop {
            let grace_end = watch.result_at.map(|at| at + result_grace);
            tokio::select! {
                ev = rx.recv(), if events_open => match ev {
                    Some(first) => self.take_events(run, first, &mut rx, &mut watch, &log, resume.as_deref()),
                    None => events_open = false,
                },
                st = child.wait(), if exit.is_none() => {
                    exit = st.ok();
                    break;
                }
                _ = tokio::time::sleep_until(deadline), if stopped.is_none() => {
                    stopped = Some(Stop::TimedOut);
                    break;
                }
                _ = tok.cancelled(), if stopped.is_none() => {
                    // Our own cancel, or Tether shutting down (the parent token).
                    let asked = {
                        let t = Arc::clone(&t);
                        let id = run.id.clone();
                        blocking(move || runs::get_run(&t.store, &id)).await.map(|r| r.cancel_requested).unwrap_or(false)
                    };
                    stopped = Some(if asked { Stop::Cancelled } else { Stop::Shutdown });
                    break;
                }
                _ = sleep_until_opt(grace_end), if grace_end.is_some() => {
                    lingered = true;
                    break;
                }
            }
        }
        if exit.is_none() {
            process::stop_group(&mut child, kill_grace).await;
            exit = child.try_wait().ok().flatten();
        } else if let Some(pid) = child.id() {
            // The CLI is gone; anything it started in its group goes with it.
            process::signal_group(pid, process::Sig::Kill);
        }
        // What is still in the pipes belongs to the run's log: read until both readers end
        // (every line kept however much there is), unless nothing comes for 2 s (something
        // outside the process group holds the pipe open).
        while let Ok(Some(first)) = tokio::time::timeout(Duration::from_secs(2), rx.recv()).await {
            self.take_events(run, first, &mut rx, &mut watch, &log, resume.as_deref());
        }
        for r in [out_reader, err_reader].into_iter().flatten() {
            r.abort();
        }
        log.flush().await;
        let stderr = stderr_tail.lock().unwrap_or_else(|p| p.into_inner()).join("\n");
        Ok(outcome(OutcomeInput {
            stopped,
            exit,
            lingered,
            result_grace,
            watch: &watch,
            stderr: &stderr,
            timeout_secs: run.timeout_secs,
            resume: resume.as_deref(),
        }))
    }

    /// Runs a cloud run through tether-cloud's driver, taking its events like a local run's;
    /// `None` when Tether is stopping and the run was left going at Cursor.
    async fn drive_cloud(&self, run: &Run, tok: &CancellationToken) -> Option<Outcome> {
        let (tx, mut rx) = mpsc::channel::<RunEvent>(4096);
        let poke = Arc::new(Notify::new());
        self.pokes.lock().unwrap_or_else(|p| p.into_inner()).insert(run.num(), Arc::clone(&poke));
        let ctx =
            tether_cloud::drive::Ctx { tether: Arc::clone(&self.tether), events: tx, pace: Default::default(), poke };
        let seq = {
            let (t, num) = (Arc::clone(&self.tether), run.num());
            blocking(move || runs::last_seq(&t.store, num)).await.unwrap_or(0)
        };
        let max_log_mb = self.tether.settings().map(|s| s.runs.max_log_mb).unwrap_or(64);
        let mut watch = Watch::new(seq, max_log_mb);
        let log = Log::start(Arc::clone(&self.tether), run.num());
        let driving = async move {
            let end = tether_cloud::drive::drive(&ctx, run, tok).await;
            drop(ctx);
            end
        };
        let consuming = async {
            let mut written = tokio::time::Instant::now();
            while let Some(first) = rx.recv().await {
                self.take_events(run, first, &mut rx, &mut watch, &log, None);
                // The chat is searchable while the agent works, not only once it ended.
                if written.elapsed() >= Duration::from_secs(2)
                    && let Some(chat) = watch.chat.clone()
                {
                    written = tokio::time::Instant::now();
                    let t = Arc::clone(&self.tether);
                    let _ = blocking(move || tether_cloud::transcript::write_and_index(&t, &chat)).await;
                }
            }
        };
        let (end, ()) = tokio::join!(driving, consuming);
        self.pokes.lock().unwrap_or_else(|p| p.into_inner()).remove(&run.num());
        log.flush().await;
        match end {
            tether_cloud::drive::End::Done(mut o) => {
                o.log_dropped = watch.dropped();
                Some(o)
            }
            tether_cloud::drive::End::Detached => None,
        }
    }

    /// Numbers `first` and whatever else is waiting, shows them to subscribers at once, and hands
    /// them to the log's writer: a slow commit (a WAL checkpoint) never holds up the live view.
    fn take_events(
        &self,
        run: &Run,
        first: RunEvent,
        rx: &mut mpsc::Receiver<RunEvent>,
        watch: &mut Watch,
        log: &Log,
        resume: Option<&str>,
    ) {
        // Bounded in count and bytes: a subscriber that stalls holds at most the broadcast's
        // capacity of these.
        let mut bytes = first.approx_len();
        let mut batch = vec![first];
        while batch.len() < 512 && bytes < BATCH_BYTES {
            match rx.try_recv() {
                Ok(e) => {
                    bytes += e.approx_len();
                    batch.push(e);
                }
                Err(_) => break,
            }
        }
        let mut chat_seen = false;
        for e in &batch {
            match e {
                RunEvent::Init { session_id, .. } => {
                    chat_seen = watch.chat.is_none();
                    watch.chat = Some(session_id.clone());
                    if let Some(asked) = resume
                        && asked != session_id
                    {
                        watch.fresh_chat = true;
                    }
                }
                RunEvent::Result { is_error, text, .. } => {
                    watch.result_at = Some(tokio::time::Instant::now());
                    watch.result = Some((*is_error, text.clone()));
                }
                _ => {}
            }
        }
        let now = tether_core::clock::now_ms();
        let mut kept = Vec::with_capacity(batch.len());
        for event in batch {
            let len = event.approx_len() as u64;
            if watch.kept + len > watch.cap && !event.is_essential() {
                if watch.dropped_lines == 0 {
                    // Said once, where it happens, and on the run when it ends.
                    kept.push(RunEvent::status(
                        "log_truncated",
                        Some(format!(
                            "the log keeps the first {} MiB of output (runs.max_log_mb); later lines are counted, not kept",
                            watch.cap >> 20
                        )),
                    ));
                }
                watch.dropped_lines += 1;
                watch.dropped_bytes += len as i64;
                continue;
            }
            watch.kept += len;
            kept.push(event);
        }
        if kept.is_empty() {
            return;
        }
        let stored: Vec<StoredEvent> = kept
            .into_iter()
            .map(|event| {
                watch.seq += 1;
                StoredEvent { seq: watch.seq, at: tether_core::clock::iso(now), at_ms: now, event }
            })
            .collect();
        let _ = self.updates.send(RunUpdate::Events { run: run.id.clone(), events: stored.clone() });
        log.send(stored, run.task.is_some() && chat_seen);
    }
}

/// Writes a run's events to its log in the background, in order, batching what piles up.
struct Log {
    tx: mpsc::UnboundedSender<(Vec<StoredEvent>, bool)>,
    task: JoinHandle<()>,
}

impl Log {
    fn start(t: Arc<Tether>, num: i64) -> Self {
        let (tx, mut rx) = mpsc::unbounded_channel::<(Vec<StoredEvent>, bool)>();
        let task = tokio::spawn(async move {
            while let Some((mut events, mut note_chat)) = rx.recv().await {
                while let Ok((more, note)) = rx.try_recv() {
                    events.extend(more);
                    note_chat |= note;
                }
                let t = Arc::clone(&t);
                let r = blocking(move || {
                    runs::store_events(&t.store, num, &events)?;
                    if note_chat {
                        runs::note_chat_on_task(&t.store, num)?;
                    }
                    Ok(())
                })
                .await;
                if let Err(e) = r {
                    tracing::warn!(run = num, error = %e, "storing run events");
                }
            }
        });
        Self { tx, task }
    }

    fn send(&self, events: Vec<StoredEvent>, note_chat: bool) {
        let _ = self.tx.send((events, note_chat));
    }

    /// Waits until everything sent is stored.
    async fn flush(self) {
        drop(self.tx);
        let _ = self.task.await;
    }
}

/// What the stream said so far.
#[derive(Debug, Default)]
struct Watch {
    /// The last event number given out.
    seq: i64,
    /// What the log may keep (bytes), what it kept, and what it left out past that.
    cap: u64,
    kept: u64,
    dropped_lines: i64,
    dropped_bytes: i64,
    chat: Option<String>,
    /// A `--resume` that the CLI answered with another chat.
    fresh_chat: bool,
    result: Option<(bool, String)>,
    result_at: Option<tokio::time::Instant>,
}

impl Watch {
    fn new(seq: i64, max_log_mb: u32) -> Self {
        Watch { seq, cap: u64::from(max_log_mb) << 20, ..Watch::default() }
    }

    fn dropped(&self) -> Option<runs::LogDropped> {
        (self.dropped_lines > 0).then_some(runs::LogDropped { lines: self.dropped_lines, bytes: self.dropped_bytes })
    }
}

struct OutcomeInput<'a> {
    stopped: Option<Stop>,
    exit: Option<std::process::ExitStatus>,
    lingered: bool,
    result_grace: Duration,
    watch: &'a Watch,
    stderr: &'a str,
    timeout_secs: i64,
    resume: Option<&'a str>,
}

/// How the run ended, in words a person acts on.
fn outcome(i: OutcomeInput<'_>) -> Outcome {
    let exit_code = i.exit.and_then(|e| e.code()).map(i64::from);
    let mut warning = None;
    if i.watch.fresh_chat {
        warning = Some(format!(
            "asked to continue chat {}, but the Cursor CLI started a fresh chat {} (the earlier conversation is not in it)",
            i.resume.unwrap_or("?"),
            i.watch.chat.as_deref().unwrap_or("?")
        ));
    }
    match i.stopped {
        Some(Stop::Cancelled) => {
            return Outcome {
                status: RunStatus::Cancelled,
                exit_code,
                error: Some("cancelled".into()),
                warning,
                log_dropped: i.watch.dropped(),
            };
        }
        Some(Stop::TimedOut) => {
            let m = i.timeout_secs / 60;
            let limit = if m >= 1 { format!("{m} min") } else { format!("{} s", i.timeout_secs) };
            return Outcome {
                status: RunStatus::TimedOut,
                exit_code,
                error: Some(format!("ran past its time limit of {limit}; stopped")),
                warning,
                log_dropped: i.watch.dropped(),
            };
        }
        Some(Stop::Shutdown) => {
            return Outcome {
                status: RunStatus::Lost,
                exit_code,
                error: Some("Tether stopped while the run was going (its agent was stopped too)".into()),
                warning,
                log_dropped: i.watch.dropped(),
            };
        }
        None => {}
    }
    if i.lingered && warning.is_none() {
        warning = Some(format!(
            "the Cursor CLI did not exit {} s after its result; Tether ended it",
            i.result_grace.as_secs()
        ));
    }
    match &i.watch.result {
        Some((false, _)) => {
            Outcome { status: RunStatus::Succeeded, exit_code, error: None, warning, log_dropped: i.watch.dropped() }
        }
        Some((true, text)) => {
            let why =
                if text.trim().is_empty() { "the agent reported an error".to_owned() } else { text.trim().to_owned() };
            Outcome { status: RunStatus::Failed, exit_code, error: Some(why), warning, log_dropped: i.watch.dropped() }
        }
        None => {
            let first = i.stderr.lines().map(str::trim).find(|l| !l.is_empty());
            let unknown_chat = i.resume.is_some() && stream_json::is_unknown_chat_error(i.stderr);
            let why = if unknown_chat {
                format!(
                    "the Cursor CLI cannot continue chat {} ({})",
                    i.resume.unwrap_or("?"),
                    first.unwrap_or("unknown chat")
                )
            } else {
                match (stream_json::explain_failure(i.stderr), first, exit_code) {
                    (Some(plain), Some(line), _) => format!("{plain} ({line})"),
                    (Some(plain), None, _) => plain.to_owned(),
                    (None, Some(line), _) => line.to_owned(),
                    (None, None, Some(0)) => "the Cursor CLI exited without a result".to_owned(),
                    (None, None, Some(c)) => format!("the Cursor CLI exited with code {c} and said nothing"),
                    (None, None, None) => "the Cursor CLI was killed by a signal".to_owned(),
                }
            };
            Outcome { status: RunStatus::Failed, exit_code, error: Some(why), warning, log_dropped: i.watch.dropped() }
        }
    }
}

fn failed(msg: String) -> Outcome {
    Outcome { status: RunStatus::Failed, error: Some(msg), ..Default::default() }
}

async fn sleep_until_opt(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// Makes runs left `running` by a process that is gone `lost`, stops their agents if they still
/// run (the same process, not one that reused its pid), and puts their files back.
fn recover(t: &Tether) -> tether_core::Result<()> {
    let me = std::process::id();
    let orphans = runs::mark_lost(&t.store, |pid| pid == me || process::is_tether(pid))?;
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
    Ok(())
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> tether_core::Result<T> + Send + 'static,
) -> tether_core::Result<T> {
    tokio::task::spawn_blocking(f).await.unwrap_or_else(|e| {
        Err(tether_core::Error::Io { context: "a runner task".into(), source: std::io::Error::other(e) })
    })
}
