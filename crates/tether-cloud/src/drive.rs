//! Drives one cloud run from launch (or re-attachment) to its end: launches the agent (or the
//! follow-up run), follows the run's stream — resuming with `Last-Event-ID` when it drops,
//! polling the run when Cursor says the stream expired or it keeps failing —, turns every frame
//! into the same typed run events local runs have, and on cancel or time limit cancels the run
//! at Cursor before saying how it ended. Tether stopping leaves the run going at Cursor (the
//! next start re-attaches).

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use serde_json::Value;
use tether_board::cloud::{self, CloudSpec};
use tether_board::runs::{Outcome, Run, RunMode, RunStatus};
use tether_board::stream_json::RunEvent;
use tether_core::Tether;
use tether_core::usage::{BudgetWatch, Level};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::client::{Client, Frame, Git, Launch, Pace, RunInfo, Webhook};
use crate::error::{CloudError, Kind};

/// How a drive ended.
#[derive(Debug)]
pub enum End {
    Done(Outcome),
    /// Tether is stopping: the run goes on at Cursor, and stays `running` here until a runner
    /// re-attaches.
    Detached,
}

/// What the runner lends the driver.
pub struct Ctx {
    pub tether: Arc<Tether>,
    /// Events in order; the runner numbers, stores and broadcasts them.
    pub events: mpsc::Sender<RunEvent>,
    /// The retry pace for Cursor's API (tests record waits instead of sleeping).
    pub pace: Pace,
    /// Rung when Cursor's webhook says the run changed: its status is read at once.
    pub poke: Arc<tokio::sync::Notify>,
    /// The run's budgets (its lifecycle's watch): its spend is read against them while it goes.
    pub budget: Arc<BudgetWatch>,
}

/// How long a re-attached run whose time limit passed while Tether was down may still report.
const REATTACH_GRACE_MS: i64 = 30_000;

/// Reconnects of a dropped stream before polling takes over (the SDK's policy).
const STREAM_RECONNECTS: u32 = 6;

pub async fn drive(ctx: &Ctx, run: &Run, tok: &CancellationToken) -> End {
    let mut d = match Driver::new(ctx, run) {
        Ok(d) => d,
        Err(e) => return End::Done(failed(e.to_string())),
    };
    let started =
        run.started_at.as_deref().and_then(tether_core::clock::parse_iso).unwrap_or_else(tether_core::clock::now_ms);
    let mut left = (started + run.timeout_secs.max(1) * 1000 - tether_core::clock::now_ms()).max(0);
    if d.spec.run_id.is_some() {
        // Re-attached after Tether was down: first read what the stream kept (the transcript's
        // only copy) and how the run ended, then enforce a limit that passed meanwhile.
        left = left.max(REATTACH_GRACE_MS);
    }
    let deadline = tokio::time::Instant::now() + Duration::from_millis(left as u64);
    let raced = {
        let follow = async {
            if d.spec.run_id.is_none() {
                d.launch().await?;
            }
            d.follow().await
        };
        tokio::select! {
            r = follow => Err(r),
            _ = tokio::time::sleep_until(deadline) => Ok(Stop::TimedOut),
            _ = tok.cancelled() => Ok(Stop::Shutdown),
        }
    };
    let stop = match raced {
        Err(Err(e)) if e.kind == Kind::OverBudget => Stop::OverBudget,
        Err(r) => {
            let end = match r {
                Ok(info) => d.outcome(&info).await,
                Err(e) => failed(e.to_string()),
            };
            d.save().await;
            return End::Done(end);
        }
        Ok(Stop::Shutdown) => {
            // Our own cancel, or Tether stopping (the parent token).
            let t = Arc::clone(&ctx.tether);
            let id = run.id.clone();
            let asked =
                tokio::task::spawn_blocking(move || t.board().runs().get(&id, Some(0)).map(|d| d.run.cancel_requested))
                    .await
                    .ok()
                    .and_then(Result::ok)
                    .unwrap_or(false);
            if asked { Stop::Cancelled } else { Stop::Shutdown }
        }
        Ok(s) => s,
    };
    d.save().await;
    if stop == Stop::Shutdown {
        return End::Detached;
    }
    End::Done(d.stop(stop, run.timeout_secs).await)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    Cancelled,
    TimedOut,
    Shutdown,
    /// Over a budget (the why is the driver's `over`).
    OverBudget,
}

struct Driver<'a> {
    ctx: &'a Ctx,
    client: Client,
    run: &'a Run,
    spec: CloudSpec,
    /// Frames already taken, by (event, id): ids repeat across reconnects.
    seen: HashSet<(String, String)>,
    poll_every: Duration,
    /// The person's public URL: launches carry a webhook and a bootstrap token to call back.
    public: Option<String>,
    /// A terminal result already turned into an event.
    result_sent: bool,
    /// When the stream position was last saved (it is saved at most once a second while
    /// frames flow, so a Tether killed outright resumes close to where it was).
    saved_at: tokio::time::Instant,
    /// Cursor could not be reached at the last try (said once per outage).
    unreachable: bool,
    /// The budgets the run answers to; when its spend was last read; why it is over.
    caps: Arc<BudgetWatch>,
    spend_read_at: Option<tokio::time::Instant>,
    over: Option<String>,
    /// Cursor's usage endpoint failed (said once).
    usage_failed: bool,
}

impl<'a> Driver<'a> {
    fn new(ctx: &'a Ctx, run: &'a Run) -> Result<Self, CloudError> {
        let t = &ctx.tether;
        let settings = t.settings().map_err(|e| CloudError::config(e.to_string()))?;
        let client = crate::client::client_from(t, &settings)?.with_pace(ctx.pace.clone());
        let spec = run.cloud.clone().ok_or_else(|| CloudError::config(format!("{} is not a cloud run", run.id)))?;
        Ok(Self {
            ctx,
            client,
            run,
            spec,
            seen: HashSet::new(),
            poll_every: Duration::from_secs(u64::from(settings.cloud.poll_secs.max(1))),
            public: settings.cloud.public_url.clone(),
            result_sent: false,
            saved_at: tokio::time::Instant::now(),
            unreachable: false,
            caps: Arc::clone(&ctx.budget),
            spend_read_at: None,
            over: None,
            usage_failed: false,
        })
    }

    async fn emit(&self, e: RunEvent) {
        let _ = self.ctx.events.send(e).await;
    }

    async fn save(&mut self) {
        self.saved_at = tokio::time::Instant::now();
        let (t, num, spec) = (Arc::clone(&self.ctx.tether), self.run.num(), self.spec.clone());
        let r = tokio::task::spawn_blocking(move || t.board().cloud().set(num, &spec)).await;
        if let Ok(Err(e)) = r {
            tracing::warn!(run = num, error = %e, "saving a cloud run's state");
        }
    }

    async fn launch(&mut self) -> Result<(), CloudError> {
        self.emit(RunEvent::User { text: self.run.prompt.clone() }).await;
        let mode = (self.run.mode == RunMode::Plan).then_some("plan");
        // With a public URL the agent may call back: a one-time token only it sees (the stored
        // prompt and the transcript keep the person's words alone).
        let mut prompt = self.run.prompt.clone();
        if let Some(public) = self.public.clone() {
            let (t, num) = (Arc::clone(&self.ctx.tether), self.run.num());
            let boot = tokio::task::spawn_blocking(move || t.board().cloud().grant_bootstrap(num))
                .await
                .map_err(|e| CloudError::config(e.to_string()))?
                .map_err(|e| CloudError::config(e.to_string()))?;
            prompt.push_str(&crate::webhook::callback_block(&public, &boot, self.run.task.is_some()));
        }
        let launch = Launch {
            agent_id: self.spec.agent_id.clone(),
            prompt: prompt.clone(),
            repo: self.spec.repo.clone(),
            git_ref: self.spec.git_ref.clone(),
            branch: self.spec.branch.clone(),
            auto_pr: self.spec.auto_pr,
            model: self.run.model.clone(),
            mode: mode.map(str::to_owned),
            name: Some(format!("Tether {}", self.run.id)),
        };
        let followed = if self.spec.continues {
            match self
                .client
                .followup(&self.spec.agent_id, &prompt, self.run.model.as_deref(), mode, &self.idempotency_key())
                .await
            {
                Ok(info) => Some(info),
                // Our queue runs one run per agent, so an active run there is ours: the answer
                // to an earlier try of this follow-up was lost (or Tether stopped before saving it).
                Err(e) if e.kind == Kind::Busy => Some(self.adopt_active(e).await?),
                // A task's earlier agent that is gone (deleted, archived, expired): the task
                // gets a new agent on the same repository.
                Err(e)
                    if self.run.task.is_some()
                        && (e.kind == Kind::NotFound || e.code.as_deref() == Some("agent_archived")) =>
                {
                    self.emit(RunEvent::Notice {
                        text: format!("the task's earlier cloud agent is gone ({e}); launching a new one"),
                    })
                    .await;
                    self.spec.continues = false;
                    self.spec.agent_id = cloud::mint_agent_id();
                    self.spec.agent_url = None;
                    None
                }
                Err(e) => return Err(e),
            }
        } else {
            None
        };
        let launch = Launch { agent_id: self.spec.agent_id.clone(), ..launch };
        let info = if let Some(info) = followed {
            info
        } else if let Some(public) = self.public.clone().filter(|_| mode.is_none()) {
            // Only v0 takes a webhook; it names the agent itself, and v1 then serves its run.
            let secret = tether_core::token::webhook_secret(&self.ctx.tether.paths)
                .map_err(|e| CloudError::config(e.to_string()))?;
            let hook = Webhook { url: crate::webhook::url(&public), secret };
            let made = self.client.launch_v0(&launch, &hook).await?;
            self.spec.agent_id = made.id.clone();
            self.spec.webhook = true;
            self.save().await;
            let agent = self.client.agent(&made.id).await?;
            self.spec.agent_url = agent.url.clone();
            let run_id = agent.latest_run_id.ok_or_else(|| CloudError {
                kind: Kind::Malformed,
                message: "Cursor launched the agent but names no run of it".into(),
                ..CloudError::config("")
            })?;
            self.client.run(&made.id, &run_id).await?
        } else {
            let (agent, run) = self.client.launch(&launch).await?;
            self.spec.agent_url = agent.url.clone();
            run
        };
        self.spec.run_id = Some(info.id.clone());
        self.spec.raw_status = Some(info.status.clone());
        self.save().await;
        self.emit(RunEvent::Init {
            session_id: self.spec.agent_id.clone(),
            model: self.run.model.clone(),
            cwd: Some(self.spec.repo.clone()),
        })
        .await;
        Ok(())
    }

    /// The agent's active run, taken as this run's (see the caller).
    async fn adopt_active(&mut self, busy: CloudError) -> Result<RunInfo, CloudError> {
        let agent = self.client.agent(&self.spec.agent_id).await?;
        let Some(latest) = agent.latest_run_id else { return Err(busy) };
        let info = self.client.run(&self.spec.agent_id, &latest).await?;
        if is_terminal(&info.status) {
            return Err(busy);
        }
        self.emit(RunEvent::Notice { text: format!("following Cursor's run {latest}, already started for this run") })
            .await;
        Ok(info)
    }

    /// The run's key for Cursor's Idempotency-Key: the same run asks the same thing.
    fn idempotency_key(&self) -> String {
        format!("tether-{}-{}", self.spec.agent_id, self.run.id)
    }

    /// Follows the run to a terminal state: the stream first, polling when it cannot be had.
    async fn follow(&mut self) -> Result<RunInfo, CloudError> {
        let run_id = self.spec.run_id.clone().unwrap_or_default();
        let mut failures = 0u32;
        loop {
            if failures > STREAM_RECONNECTS {
                return self.poll(&run_id).await;
            }
            let opened = self.client.stream(&self.spec.agent_id, &run_id, self.spec.last_event_id.as_deref()).await;
            let mut frames = match opened {
                Ok(f) => f,
                Err(e) if e.kind == Kind::StreamGone => {
                    self.emit(RunEvent::Notice {
                        text: "Cursor's stream of this run expired; polling its status".into(),
                    })
                    .await;
                    return self.poll(&run_id).await;
                }
                Err(e) if e.kind == Kind::BadCursor => {
                    // Cursor no longer knows where we were: start over (frames seen are skipped).
                    self.spec.last_event_id = None;
                    failures += 1;
                    self.backoff(failures).await;
                    continue;
                }
                Err(e) if matches!(e.kind, Kind::Auth | Kind::Forbidden | Kind::NotFound | Kind::Config) => {
                    return Err(e);
                }
                Err(e) => {
                    tracing::info!(run = %self.run.id, error = %e, "the cloud stream did not open");
                    failures += 1;
                    self.backoff(failures).await;
                    continue;
                }
            };
            let before = self.spec.last_event_id.clone();
            let ctx = self.ctx;
            loop {
                tokio::select! {
                    item = frames.next() => match item {
                        Some(Ok(f)) => {
                            if let Some(end) = self.take(f).await? {
                                return Ok(end);
                            }
                            self.budget().await?;
                        }
                        Some(Err(e)) => {
                            tracing::info!(run = %self.run.id, error = %e, "the cloud stream broke");
                            break;
                        }
                        None => break,
                    },
                    _ = ctx.poke.notified() => {
                        if let Some(end) = self.webhook_said(&run_id).await? {
                            return Ok(end);
                        }
                    }
                }
            }
            self.save().await;
            // The stream ended without a result: ask the run itself.
            if let Some(info) = self.read_run(&run_id).await?
                && is_terminal(&info.status)
            {
                return Ok(info);
            }
            // A stream that delivered new frames and dropped is resumed at once; one that keeps
            // failing is retried after 1, 2, 4 … 30 s, then polled.
            if self.spec.last_event_id != before {
                failures = 0;
            } else {
                failures += 1;
                self.backoff(failures).await;
            }
        }
    }

    async fn backoff(&self, n: u32) {
        let d = Duration::from_secs(1u64 << n.saturating_sub(1).min(5)).min(Duration::from_secs(30));
        (self.ctx.pace.sleep)(d).await;
    }

    async fn poll(&mut self, run_id: &str) -> Result<RunInfo, CloudError> {
        loop {
            if let Some(info) = self.read_run(run_id).await?
                && is_terminal(&info.status)
            {
                return Ok(info);
            }
            self.budget().await?;
            let ctx = self.ctx;
            let poked = tokio::select! {
                _ = (ctx.pace.sleep)(self.poll_every) => false,
                _ = ctx.poke.notified() => true,
            };
            if poked && let Some(end) = self.webhook_said(run_id).await? {
                return Ok(end);
            }
        }
    }

    /// Cursor's webhook said the agent changed: read the run now.
    async fn webhook_said(&mut self, run_id: &str) -> Result<Option<RunInfo>, CloudError> {
        let Some(info) = self.read_run(run_id).await? else { return Ok(None) };
        self.emit(RunEvent::Notice { text: format!("Cursor's webhook: the run is {}", info.status) }).await;
        Ok(is_terminal(&info.status).then_some(info))
    }

    /// The run's state now. A network failure or a Cursor outage (after the client's own
    /// retries) is not the run's end — it goes on at Cursor — so it is said once and `None` is
    /// returned for the caller to try again later; only a refused key, a missing run or a broken
    /// answer end the run here.
    async fn read_run(&mut self, run_id: &str) -> Result<Option<RunInfo>, CloudError> {
        match self.client.run(&self.spec.agent_id, run_id).await {
            Ok(info) => {
                self.unreachable = false;
                self.note_status(&info.status).await;
                Ok(Some(info))
            }
            Err(e) if e.is_retryable() => {
                if !self.unreachable {
                    self.unreachable = true;
                    self.emit(RunEvent::Notice { text: format!("Cursor cannot be reached; still trying ({e})") }).await;
                }
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }

    async fn note_status(&mut self, status: &str) {
        if self.spec.raw_status.as_deref() != Some(status) {
            self.spec.raw_status = Some(status.to_owned());
            self.emit(RunEvent::Notice { text: format!("Cursor: {status}") }).await;
            self.save().await;
        }
    }

    /// Takes one frame; the run's end when it was the result.
    async fn take(&mut self, f: Frame) -> Result<Option<RunInfo>, CloudError> {
        if let Some(id) = &f.id {
            if !self.seen.insert((f.event.clone(), id.clone())) {
                return Ok(None);
            }
            self.spec.last_event_id = Some(id.clone());
            if self.saved_at.elapsed() >= Duration::from_secs(1) {
                self.save().await;
            }
        }
        if matches!(f.event.as_str(), "heartbeat" | "interaction_update" | "done") {
            return Ok(None);
        }
        // What the agent ran or said may carry the tokens it was given to call back (a curl with a
        // bearer, the exchange's answer): they never reach the event log or the transcript.
        let f = Frame { data: redact_tokens(&f.data), ..f };
        let data: Value = match serde_json::from_str(&f.data) {
            Ok(v) => v,
            Err(e) => {
                self.emit(RunEvent::Raw {
                    text: f.data.chars().take(4000).collect(),
                    reason: format!("a `{}` event from Cursor that is not JSON: {e}", f.event),
                })
                .await;
                return Ok(None);
            }
        };
        // The SDK also accepts a payload wrapped as {data: {…}}.
        let d = match data.get("data") {
            Some(inner @ Value::Object(_)) if f.event == "tool_call" => inner.clone(),
            _ => data,
        };
        let s = |k: &str| d.get(k).and_then(Value::as_str).map(str::to_owned);
        match f.event.as_str() {
            "status" => {
                if let Some(st) = s("status") {
                    self.note_status(&st).await;
                }
            }
            "assistant" => self.emit(RunEvent::Assistant { text: s("text").unwrap_or_default(), partial: true }).await,
            "thinking" => self.emit(RunEvent::Thinking { text: s("text"), done: false }).await,
            "tool_call" => {
                let args = d.get("args").cloned().unwrap_or(Value::Null);
                let status = s("status").unwrap_or_default();
                let arg = |k: &str| args.get(k).and_then(Value::as_str).map(str::to_owned);
                self.emit(RunEvent::ToolCall {
                    call_id: s("callId").unwrap_or_default(),
                    tool: s("name").unwrap_or_else(|| "tool".into()),
                    phase: if status == "running" { "started".into() } else { "completed".into() },
                    path: arg("path").or_else(|| arg("target_file")).or_else(|| arg("file")),
                    command: arg("command"),
                    outcome: match status.as_str() {
                        "completed" => Some("success".into()),
                        "running" => None,
                        other => Some(other.to_owned()),
                    },
                    args,
                    result: d.get("result").cloned().unwrap_or(Value::Null),
                })
                .await;
            }
            "error" => {
                let code = s("code").unwrap_or_default();
                let message = s("message").unwrap_or_default();
                self.emit(RunEvent::Notice { text: format!("Cursor error {code}: {message}") }).await;
                if matches!(code.as_str(), "unauthorized" | "forbidden" | "not_found") {
                    return Err(CloudError { kind: Kind::Auth, code: Some(code), message, ..CloudError::config("") });
                }
            }
            "result" => {
                let info = RunInfo {
                    id: s("runId").unwrap_or_default(),
                    status: s("status").unwrap_or_else(|| "FINISHED".into()),
                    result: s("text").or_else(|| s("result")),
                    error: None,
                    duration_ms: d.get("durationMs").and_then(Value::as_i64),
                    git: d.get("git").and_then(|g| serde_json::from_value(g.clone()).ok()),
                };
                self.note_status(&info.status).await;
                return Ok(Some(info));
            }
            other => {
                self.emit(RunEvent::Raw {
                    text: f.data.chars().take(4000).collect(),
                    reason: format!("unknown Cursor event `{other}`"),
                })
                .await;
            }
        }
        Ok(None)
    }

    fn take_git(&mut self, git: Option<&Git>) {
        let Some(b) = git.and_then(|g| g.branches.first()) else { return };
        if b.branch.is_some() {
            self.spec.pushed_branch.clone_from(&b.branch);
        }
        if b.pr_url.is_some() {
            self.spec.pr_url.clone_from(&b.pr_url);
        }
    }

    /// The run's outcome from its terminal state (the status mapping of the seed).
    async fn outcome(&mut self, info: &RunInfo) -> Outcome {
        self.take_git(info.git.as_ref());
        self.spec.raw_status = Some(info.status.clone());
        let text =
            info.result.clone().or_else(|| info.error.as_ref().and_then(|e| e.message.clone())).unwrap_or_default();
        let mut status = match info.status.as_str() {
            "FINISHED" => RunStatus::Succeeded,
            "CANCELLED" => RunStatus::Cancelled,
            _ => RunStatus::Failed,
        };
        // What it spent, read once it ended (over a budget: marked so).
        let over = match self.spend().await {
            Some(Level::Over(why)) => Some(why),
            _ => None,
        };
        let mut error = match info.status.as_str() {
            "FINISHED" => None,
            "CANCELLED" => Some("cancelled at Cursor".to_owned()),
            "ERROR" => {
                Some(if text.trim().is_empty() { "the cloud agent failed (ERROR)".into() } else { text.clone() })
            }
            "EXPIRED" => Some("the cloud agent expired at Cursor (EXPIRED)".into()),
            other => Some(format!("Cursor ended the run with a status Tether does not know: {other}")),
        };
        if !self.result_sent {
            self.result_sent = true;
            let ev = RunEvent::Result {
                is_error: status != RunStatus::Succeeded,
                text: if text.is_empty() { error.clone().unwrap_or_default() } else { text },
                duration_ms: info.duration_ms,
                duration_api_ms: None,
                usage: None,
            };
            self.emit(ev).await;
        }
        let warning = (status == RunStatus::Succeeded && self.spec.auto_pr && self.spec.pr_url.is_none())
            .then(|| "a pull request was asked for, but Cursor reported none".to_owned());
        if let Some(why) = over {
            status = RunStatus::OverBudget;
            error = Some(why);
        }
        Outcome { status, exit_code: None, error, warning, log_dropped: None }
    }

    /// Reads what the run spent from Cursor's usage API and keeps it on the run; where it stands
    /// against its budgets. `None` when Cursor did not say (said once in the log).
    async fn spend(&mut self) -> Option<Level> {
        let run_id = self.spec.run_id.clone()?;
        match self.client.usage(&self.spec.agent_id, &run_id).await {
            Ok(u) => {
                let (t, num, usage, cost) = (Arc::clone(&self.ctx.tether), self.run.num(), u.usage.clone(), u.cost_usd);
                let _ = tokio::task::spawn_blocking(move || t.board().usage().set_cloud_usage(num, &usage, cost)).await;
                Some(self.caps.check(&u.usage, u.cost_usd))
            }
            Err(e) => {
                if !self.usage_failed {
                    self.usage_failed = true;
                    self.emit(RunEvent::Notice { text: format!("Cursor's usage for this run could not be read: {e}") })
                        .await;
                }
                None
            }
        }
    }

    /// While the run goes, its spend is read every poll interval when it has a budget: warned
    /// once past 80 %, stopped (an `OverBudget` error) past a budget.
    async fn budget(&mut self) -> Result<(), CloudError> {
        if self.caps.is_empty() || self.spend_read_at.is_some_and(|at| at.elapsed() < self.poll_every) {
            return Ok(());
        }
        self.spend_read_at = Some(tokio::time::Instant::now());
        match self.spend().await {
            Some(Level::Over(why)) => {
                self.over = Some(why.clone());
                Err(CloudError::over_budget(why))
            }
            Some(Level::Warn(msg)) => {
                self.emit(RunEvent::status("budget_warning", Some(msg.clone()))).await;
                let (t, caps) = (Arc::clone(&self.ctx.tether), Arc::clone(&self.caps));
                let _ = tokio::task::spawn_blocking(move || caps.warn(&t, &msg)).await;
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// Cancels the run at Cursor (for a cancel or the time limit), waits a little for it to say
    /// so, and says how the run ended.
    async fn stop(&mut self, why: Stop, timeout_secs: i64) -> Outcome {
        if self.spec.run_id.is_none()
            && let Ok(agent) = self.client.agent(&self.spec.agent_id).await
            && let Some(latest) = agent.latest_run_id
        {
            // The launch reached Cursor before it was stopped here.
            self.spec.run_id = Some(latest);
        }
        let Some(run_id) = self.spec.run_id.clone() else {
            return Outcome {
                status: if why == Stop::TimedOut { RunStatus::TimedOut } else { RunStatus::Cancelled },
                error: Some("stopped before Cursor started it".into()),
                ..Default::default()
            };
        };
        let cancelled = self.client.cancel(&self.spec.agent_id, &run_id).await;
        let mut note = match &cancelled {
            Ok(true) => None,
            Ok(false) => Some("it had already ended at Cursor".to_owned()),
            Err(e) => Some(format!("cancelling it at Cursor failed: {e}")),
        };
        if let Ok(false) = cancelled
            && let Ok(info) = self.client.run(&self.spec.agent_id, &run_id).await
            && info.status == "FINISHED"
        {
            let mut o = self.outcome(&info).await;
            o.warning = Some("finished before the cancel reached Cursor".into());
            return o;
        }
        if let Ok(info) = self.client.run(&self.spec.agent_id, &run_id).await {
            self.note_status(&info.status).await;
            self.take_git(info.git.as_ref());
        } else if note.is_none() {
            note = Some("Cursor did not confirm the cancel".into());
        }
        self.save().await;
        let (status, error) = match why {
            Stop::OverBudget => {
                let _ = self.spend().await;
                (
                    RunStatus::OverBudget,
                    format!("{}; cancelled at Cursor", self.over.clone().unwrap_or_else(|| "went over budget".into())),
                )
            }
            Stop::TimedOut => {
                let m = timeout_secs / 60;
                let limit = if m >= 1 { format!("{m} min") } else { format!("{timeout_secs} s") };
                (RunStatus::TimedOut, format!("ran past its time limit of {limit}; cancelled at Cursor"))
            }
            _ => (RunStatus::Cancelled, "cancelled (at Cursor too)".to_owned()),
        };
        Outcome { status, exit_code: None, error: Some(error), warning: note, log_dropped: None }
    }
}

fn is_terminal(status: &str) -> bool {
    !matches!(status, "CREATING" | "RUNNING")
}

fn failed(msg: String) -> Outcome {
    Outcome { status: RunStatus::Failed, error: Some(msg), ..Default::default() }
}

/// Replaces every run of 64 or more hex digits (Tether's bootstrap tokens and bearers are 64) by
/// `[token]`.
pub fn redact_tokens(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    let mut last = 0;
    while i < b.len() {
        if b[i].is_ascii_hexdigit() {
            let start = i;
            while i < b.len() && b[i].is_ascii_hexdigit() {
                i += 1;
            }
            if i - start >= 64 {
                out.push_str(&s[last..start]);
                out.push_str("[token]");
                last = i;
            }
        } else {
            i += 1;
        }
    }
    out.push_str(&s[last..]);
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn tokens_are_redacted_and_nothing_else() {
        let t = "a".repeat(64);
        let s = format!("curl -H 'Authorization: Bearer {t}' x; sha 0123abcd; ünïcode {t}9");
        assert_eq!(
            super::redact_tokens(&s),
            "curl -H 'Authorization: Bearer [token]' x; sha 0123abcd; ünïcode [token]"
        );
    }
}
