//! Tether's loopback server: the MCP endpoint (rmcp's Streamable HTTP service inside axum: bearer
//! token, Host/Origin checks, sessions persisted across restarts, GET-stream push; plus stdio),
//! and the GUI's JSON API, event stream and static files (`web`).
//!
//! A thin host over `tether-core`: no index or query logic here. Must not depend on tauri or clap.

mod callback;
mod conn;
mod doorbell;
pub mod host;
mod http;
mod streams;
mod tools;
mod web;

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::ResourceUpdatedNotificationParam;
use rmcp::{Peer, RoleServer};
use tether_core::Tether;
use tether_core::board::live::{ChatActivity, HookEvent};

pub use doorbell::INBOX_URI;
pub use http::{DEFAULT_PORT, ServeError, bind_loopback, serve_http};
pub use tools::{RUN_URI_PREFIX, SESSION_URI_PREFIX, TASKS_URI, TetherMcp};

/// State shared by every MCP session of one daemon.
pub struct App {
    pub tether: Arc<Tether>,
    /// The MCP bearer token; `rotate_token` replaces it while serving.
    token: std::sync::RwLock<String>,
    hook_token: String,
    started: Instant,
    peers: Mutex<HashMap<String, Peer<RoleServer>>>,
    subscriptions: Mutex<HashMap<String, HashSet<String>>>,
    /// `beforeMCPExecution` events for our tools, waiting for the call they announce.
    pending_calls: Mutex<VecDeque<(Instant, HookEvent)>>,
    /// The chat each MCP session last called from.
    bindings: Mutex<HashMap<String, String>>,
    pub(crate) indexing: std::sync::atomic::AtomicBool,
    /// Watching Cursor's files is paused (the desktop app's tray can do that).
    paused: std::sync::atomic::AtomicBool,
    /// Live updates for the GUI's event stream.
    events: tokio::sync::broadcast::Sender<UiEvent>,
    pub(crate) ui_auth: web::UiAuth,
    /// The port served on and what chose it (`--port/TETHER_PORT`, `settings`, `default`), set by
    /// the host; the settings page says whether a saved port waits for a restart or is overridden.
    listening: Mutex<Option<tether_core::settings::RunningPort>>,
    /// The port this daemon last moved away from, and when (ms): clients set up with it are lost.
    moved_from: Mutex<Option<(u16, i64)>>,
    /// HTTP sessions: last request and open GET streams.
    pub(crate) streams: streams::Streams,
    pub(crate) doorbell: doorbell::Doorbell,
    /// The runner of agent runs in this process, set by the host.
    runner: std::sync::OnceLock<Arc<tether_runs::Runner>>,
    /// When each run's resource was last announced to subscribers (events are many; updates
    /// are sent at most every half second per run).
    run_notified: Mutex<HashMap<String, Instant>>,
}

/// The HTTP routes' state.
#[derive(Clone)]
pub(crate) struct Ctx {
    pub(crate) app: Arc<App>,
}

/// One event on the GUI's stream: a name and a JSON payload (see docs/api.md).
#[derive(Debug, Clone)]
pub struct UiEvent {
    pub name: &'static str,
    pub data: serde_json::Value,
}

impl std::fmt::Debug for App {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("App").finish_non_exhaustive()
    }
}

/// How long a `beforeMCPExecution` report waits for its call.
const PENDING_TTL: Duration = Duration::from_secs(30);

impl App {
    pub fn new(tether: Arc<Tether>, token: String, hook_token: String) -> Arc<Self> {
        Arc::new(Self {
            tether,
            token: std::sync::RwLock::new(token),
            hook_token,
            started: Instant::now(),
            peers: Mutex::default(),
            subscriptions: Mutex::default(),
            pending_calls: Mutex::default(),
            bindings: Mutex::default(),
            indexing: std::sync::atomic::AtomicBool::new(false),
            paused: std::sync::atomic::AtomicBool::new(false),
            events: tokio::sync::broadcast::channel(256).0,
            ui_auth: web::UiAuth::default(),
            listening: Mutex::new(None),
            moved_from: Mutex::new(None),
            streams: streams::Streams::default(),
            doorbell: doorbell::Doorbell::default(),
            runner: std::sync::OnceLock::new(),
            run_notified: Mutex::default(),
        })
    }

    /// Starts this process's runner of agent runs and forwards what it does to the GUI's stream
    /// and MCP subscribers. The returned handles stop them.
    pub fn start_runner(self: &Arc<Self>) -> (tether_runs::RunnerHandle, tokio::task::JoinHandle<()>) {
        let handle = tether_runs::Runner::start(Arc::clone(&self.tether));
        let _ = self.runner.set(Arc::clone(handle.runner()));
        let mut rx = handle.runner().subscribe();
        let app = Arc::clone(self);
        let forward = tokio::spawn(async move {
            loop {
                match rx.recv().await {
                    Ok(u) => app.run_updated(&u),
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => break,
                }
            }
        });
        (handle, forward)
    }

    pub fn runner(&self) -> Option<&Arc<tether_runs::Runner>> {
        self.runner.get()
    }

    fn run_updated(&self, u: &tether_runs::RunUpdate) {
        use tether_runs::RunUpdate;
        let (run, now) = match u {
            RunUpdate::Status { run, status } => {
                self.emit("runs", serde_json::json!({"run": run, "status": status}));
                // An ended run may have moved its task or sent signals.
                self.signals_sent();
                (run, true)
            }
            RunUpdate::Events { run, .. } => (run, false),
        };
        let due = {
            let mut m = self.run_notified.lock().unwrap_or_else(|p| p.into_inner());
            let due = now || m.get(run).is_none_or(|at| at.elapsed() >= Duration::from_millis(500));
            if due {
                m.insert(run.clone(), Instant::now());
            }
            due
        };
        if due {
            self.resources_changed(HashSet::from([format!("{RUN_URI_PREFIX}{run}")]));
        }
    }

    pub fn set_indexing(&self, on: bool) {
        self.indexing.store(on, std::sync::atomic::Ordering::Relaxed);
        self.emit("index", serde_json::json!({"state": if on { "indexing" } else { "idle" }}));
    }

    pub fn set_indexing_paused(&self, on: bool) {
        self.paused.store(on, std::sync::atomic::Ordering::Relaxed);
        self.emit("index", serde_json::json!({"state": if on { "paused" } else { "idle" }}));
    }

    pub fn indexing_paused(&self) -> bool {
        self.paused.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// One index pass the GUI can follow: progress and the outcome as `index` events, changed
    /// chats as `sessions` events (and to MCP subscribers). `also` sees the progress too (a
    /// terminal bar). Call from a blocking thread inside the runtime.
    pub fn index_reporting(
        &self,
        depth: tether_core::history::index::Depth,
        also: &(dyn Fn(&tether_core::history::index::Progress) + Sync),
    ) -> tether_core::Result<tether_core::history::index::IndexReport> {
        use serde_json::json;
        use tether_core::history::index::Progress;
        self.set_indexing(true);
        let last_refresh = std::sync::atomic::AtomicI64::new(0);
        let sink = |p: &Progress| {
            also(p);
            match p {
                Progress::Listed { sessions } if *sessions > 0 => self.emit("sessions", json!({"ids": null})),
                Progress::Sessions { done, total, eta_ms, .. } => {
                    self.emit("index", json!({"state": "indexing", "done": done, "total": total, "eta_ms": eta_ms}));
                    // Open lists refresh as chats become searchable, at most once a second.
                    let now = tether_core::clock::now_ms();
                    let last = last_refresh.swap(now, std::sync::atomic::Ordering::Relaxed);
                    if now - last >= 1000 || done == total {
                        self.emit("sessions", json!({"ids": null}));
                    } else {
                        last_refresh.store(last, std::sync::atomic::Ordering::Relaxed);
                    }
                }
                _ => {}
            }
        };
        let r = self.tether.index(depth, &sink);
        self.set_indexing(false);
        match &r {
            Ok(r) => {
                self.sessions_changed(&r.changed);
                self.emit(
                    "index",
                    json!({"state": "idle", "sessions": r.sessions_total, "messages": r.messages_total}),
                );
            }
            Err(e) => self.emit("index", json!({"state": "idle", "error": e.to_string()})),
        }
        r
    }

    /// The port served on and what chose it (`--port/TETHER_PORT`, `settings`, `default`): the
    /// settings page says whether a saved port is overridden, and the host moves the listener
    /// when a saved one changes.
    pub fn listening(&self) -> Option<tether_core::settings::RunningPort> {
        *self.listening.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn set_listening(&self, port: tether_core::settings::RunningPort) {
        let old = self.listening.lock().unwrap_or_else(|p| p.into_inner()).replace(port);
        if let Some(old) = old.filter(|o| o.port != port.port) {
            *self.moved_from.lock().unwrap_or_else(|p| p.into_inner()) = Some((old.port, tether_core::clock::now_ms()));
        }
    }

    /// The port this daemon moved away from, and when (ms since the epoch).
    pub fn moved_from(&self) -> Option<(u16, i64)> {
        *self.moved_from.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// `settings` next to what this daemon uses (the settings page, the tray's restart item).
    pub fn settings_view(&self, settings: tether_core::settings::Settings) -> tether_core::settings::SettingsView {
        let port = self.listening().unwrap_or_else(|| {
            let port = tether_core::daemon::running(&self.tether.paths).and_then(|d| d.port).unwrap_or(DEFAULT_PORT);
            tether_core::settings::RunningPort { port, from: "default" }
        });
        settings.compare(&self.tether.cursor(), port, DEFAULT_PORT)
    }

    /// Sends an event to every open GUI stream (none open: dropped).
    pub fn emit(&self, name: &'static str, data: serde_json::Value) {
        let _ = self.events.send(UiEvent { name, data });
    }

    pub(crate) fn token_matches(&self, given: &str) -> bool {
        tether_core::token::matches(&self.token.read().unwrap_or_else(|p| p.into_inner()), given)
    }

    /// Replaces the token in its store and in this server at once.
    pub fn rotate_token(&self) -> tether_core::Result<()> {
        let (new, _) = tether_core::token::rotate(&self.tether.paths)?;
        *self.token.write().unwrap_or_else(|p| p.into_inner()) = new;
        Ok(())
    }

    pub(crate) fn uptime(&self) -> Duration {
        self.started.elapsed()
    }

    pub(crate) fn mcp_sessions(&self) -> usize {
        self.peers.lock().unwrap_or_else(|p| p.into_inner()).len()
    }

    /// Whether `session` is an MCP session of ours: live in this process or persisted from an
    /// earlier one (a client may come back after a restart).
    pub(crate) async fn knows_session(&self, session: &str) -> bool {
        if self.streams.has_session(session) {
            return true;
        }
        let (t, id) = (Arc::clone(&self.tether), session.to_owned());
        tokio::task::spawn_blocking(move || tether_core::board::live::load_mcp_session(&t.store, &id))
            .await
            .ok()
            .and_then(Result::ok)
            .flatten()
            .is_some()
    }

    pub(crate) fn peer(&self, session: &str) -> Option<Peer<RoleServer>> {
        self.peers.lock().unwrap_or_else(|p| p.into_inner()).get(session).cloned()
    }

    /// A request from an HTTP session; a GET that opened its first stream promotes it to `full`.
    pub(crate) fn session_seen(self: &Arc<Self>, session: &str, opens_stream: bool) {
        if self.streams.seen(session, opens_stream) == streams::Edge::Opened {
            self.surface_changed(session, 1);
        }
    }

    /// Its last stream closed: the session is `degraded` until it opens another.
    pub(crate) fn stream_closed(self: &Arc<Self>, session: &str) {
        if self.streams.stream_closed(session) == streams::Edge::Closed {
            self.surface_changed(session, 0);
        }
    }

    /// Keeps the session's stream count where other processes read it (`tether agents list`).
    fn surface_changed(self: &Arc<Self>, session: &str, streams: usize) {
        let app = Arc::clone(self);
        let session = session.to_owned();
        let write = move || {
            if let Err(e) = tether_core::board::live::set_streams(&app.tether.store, &session, streams) {
                tracing::debug!(error = %e, "recording a session's streams");
            }
            app.emit("agents", serde_json::json!({}));
        };
        match tokio::runtime::Handle::try_current() {
            Ok(h) => drop(h.spawn_blocking(write)),
            Err(_) => write(),
        }
    }

    /// Something may have been sent to someone: ring whoever has not been rung.
    pub(crate) fn signals_sent(&self) {
        self.doorbell.kick();
        self.emit("signals", serde_json::json!({}));
    }

    fn register_peer(&self, session: &str, peer: Peer<RoleServer>) {
        self.peers.lock().unwrap_or_else(|p| p.into_inner()).insert(session.to_owned(), peer);
    }

    pub(crate) fn forget_session(&self, session: &str) {
        self.streams.forget(session);
        self.doorbell.forget(session);
        self.peers.lock().unwrap_or_else(|p| p.into_inner()).remove(session);
        self.subscriptions.lock().unwrap_or_else(|p| p.into_inner()).remove(session);
        self.bindings.lock().unwrap_or_else(|p| p.into_inner()).remove(session);
    }

    fn subscribe(&self, session: &str, uri: &str) {
        self.subscriptions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(session.to_owned())
            .or_default()
            .insert(uri.to_owned());
    }

    fn unsubscribe(&self, session: &str, uri: &str) {
        if let Some(s) = self.subscriptions.lock().unwrap_or_else(|p| p.into_inner()).get_mut(session) {
            s.remove(uri);
        }
    }

    /// Tells subscribers that these chats changed.
    pub fn sessions_changed(&self, ids: &[String]) {
        if !ids.is_empty() {
            self.emit("sessions", serde_json::json!({"ids": ids}));
        }
        self.resources_changed(ids.iter().map(|id| format!("{SESSION_URI_PREFIX}{id}")).collect());
    }

    /// Tells subscribers of the task board that tasks changed (in any process); `rev` is the
    /// board's revision after the change.
    pub fn tasks_changed(&self, rev: i64) {
        self.emit("tasks", serde_json::json!({"rev": rev}));
        self.resources_changed(HashSet::from([TASKS_URI.to_owned()]));
    }

    /// Sends `resources/updated` from spawned tasks: a client that stops reading its stream must
    /// not stall the caller (the watcher).
    fn resources_changed(&self, uris: HashSet<String>) {
        if uris.is_empty() {
            return;
        }
        let targets: Vec<(String, Peer<RoleServer>, Vec<String>)> = {
            let subs = self.subscriptions.lock().unwrap_or_else(|p| p.into_inner());
            let peers = self.peers.lock().unwrap_or_else(|p| p.into_inner());
            subs.iter()
                .filter_map(|(sid, set)| {
                    let hit: Vec<String> = set.intersection(&uris).cloned().collect();
                    let peer = peers.get(sid)?.clone();
                    (!hit.is_empty()).then(|| (sid.clone(), peer, hit))
                })
                .collect()
        };
        for (sid, peer, hit) in targets {
            tokio::spawn(async move {
                for uri in hit {
                    if let Err(e) = peer.notify_resource_updated(ResourceUpdatedNotificationParam::new(uri)).await {
                        tracing::debug!(session = %sid, error = %e, "dropping a notification for a closed session");
                        break;
                    }
                }
            });
        }
    }

    /// Who is calling, as a task actor: the Cursor chat when the hooks told us, else the agent
    /// that `session_start` registered for this MCP session, else the MCP session itself.
    fn actor(&self, tool: &str, session: Option<&str>) -> tether_core::board::tasks::Actor {
        self.actor_of(self.caller(tool, session, &None), session)
    }

    /// The actor for a caller already looked up (a lookup spends the hook's announcement).
    fn actor_of(&self, chat: Option<ChatActivity>, session: Option<&str>) -> tether_core::board::tasks::Actor {
        use tether_core::board::agents::{AgentKind, Identity};
        let mcp_session = session.map(str::to_owned);
        let who = match chat {
            Some(chat) => Identity {
                id: chat.conversation_id,
                kind: AgentKind::Cursor,
                mcp_session,
                project: chat.workspace_roots.first().cloned(),
            },
            None => {
                let key = session.map_or_else(|| format!("stdio-{}", std::process::id()), str::to_owned);
                let known = session
                    .and_then(|s| tether_core::board::agents::for_mcp_session(&self.tether.store, s).ok().flatten());
                Identity {
                    id: known.unwrap_or_else(|| format!("mcp:{key}")),
                    kind: AgentKind::Mcp,
                    mcp_session,
                    project: None,
                }
            }
        };
        tether_core::board::tasks::Actor { who, lease_ms: Some(tether_core::board::tasks::DEFAULT_LEASE_MS) }
    }

    /// Records a Cursor hook event: chat status for everyone, and for `beforeMCPExecution` of one
    /// of our tools, a pending call that tells the next matching tool call which chat it is from.
    /// For `stop`, the answer for Cursor: a follow-up message that makes the chat drain its
    /// signals, when it has some and was not asked yet in this drain cycle.
    pub fn hook(&self, ev: HookEvent) -> tether_core::Result<Option<String>> {
        tether_core::board::live::record_hook(&self.tether.store, &ev)?;
        self.emit("agents", serde_json::json!({}));
        if ev.hook_event_name == "stop" {
            let msg = tether_core::board::signals::stop_hook(
                &self.tether.store,
                &ev.conversation_id,
                ev.loop_count.unwrap_or(0),
                ev.status.as_deref(),
            )?;
            if msg.is_some() {
                self.emit("signals", serde_json::json!({}));
            }
            return Ok(msg);
        }
        if ev.hook_event_name == "beforeMCPExecution" && !ev.conversation_id.is_empty() {
            let mut q = self.pending_calls.lock().unwrap_or_else(|p| p.into_inner());
            q.retain(|(at, _)| at.elapsed() < PENDING_TTL);
            q.push_back((Instant::now(), ev));
        }
        Ok(None)
    }

    /// The chat behind a tool call: a fresh `beforeMCPExecution` for this tool (its query, when it
    /// has one, must match) binds the MCP session; otherwise the session's last binding holds.
    /// One Cursor window shares a session across chats, so a fresh announcement always wins.
    fn caller(&self, tool: &str, session: Option<&str>, query: &Option<String>) -> Option<ChatActivity> {
        let announced = {
            let mut q = self.pending_calls.lock().unwrap_or_else(|p| p.into_inner());
            q.retain(|(at, _)| at.elapsed() < PENDING_TTL);
            let pos = q.iter().position(|(_, ev)| {
                let name_ok = ev
                    .tool_name
                    .as_deref()
                    .is_some_and(|n| n == tool || n.ends_with(&format!("_{tool}")) || n.ends_with(&format!("-{tool}")));
                let input_query = ev.tool_input.as_ref().and_then(|v| v.get("query")).and_then(|v| v.as_str());
                name_ok && (input_query.is_none() || input_query == query.as_deref())
            });
            pos.and_then(|i| q.remove(i)).map(|(_, ev)| ev.conversation_id)
        };
        let conversation = match (announced, session) {
            (Some(c), Some(s)) => {
                self.bindings.lock().unwrap_or_else(|p| p.into_inner()).insert(s.to_owned(), c.clone());
                Some(c)
            }
            (Some(c), None) => Some(c),
            (None, Some(s)) => self.bindings.lock().unwrap_or_else(|p| p.into_inner()).get(s).cloned(),
            (None, None) => None,
        }?;
        match tether_core::board::live::chat_activity(&self.tether.store, &conversation) {
            Ok(Some(a)) => Some(a),
            _ => Some(ChatActivity {
                conversation_id: conversation,
                workspace_roots: Vec::new(),
                status: "working".into(),
                last_event: String::new(),
                last_at: String::new(),
            }),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum LinkError {
    #[error("the daemon is not running; start it with `tether serve` (or the desktop app)")]
    NotRunning,
    #[error("getting the token to ask the daemon: {0}")]
    Token(tether_core::Error),
    #[error("asking the daemon at {url} for a login code: {reason}")]
    Http { url: String, reason: String },
}

/// A one-time GUI login link from the daemon running for this data dir (valid 60 s, usable once).
pub fn login_link(paths: &tether_core::Paths) -> Result<String, LinkError> {
    let info = tether_core::daemon::running(paths).ok_or(LinkError::NotRunning)?;
    let base = info.url.as_deref().and_then(|u| u.strip_suffix("/mcp")).ok_or(LinkError::NotRunning)?.to_owned();
    let (token, _) = tether_core::token::mcp_token(paths).map_err(LinkError::Token)?;
    let http = |reason: String| LinkError::Http { url: base.clone(), reason };
    let mut res = ureq::post(&format!("{base}/api/login-code"))
        .header("Authorization", &format!("Bearer {token}"))
        .header("X-Tether", "1")
        .send_empty()
        .map_err(|e| http(e.to_string()))?;
    let body = res.body_mut().read_to_string().map_err(|e| http(e.to_string()))?;
    let v: serde_json::Value = serde_json::from_str(&body).map_err(|e| http(e.to_string()))?;
    let code = v["code"].as_str().ok_or_else(|| http("no code in the answer".into()))?;
    Ok(format!("{base}/login?code={code}"))
}

/// Follows the board's revisions (one cheap read) so task subscribers and the doorbell hear of
/// changes made by any process, the CLI included. Runs until aborted.
pub(crate) async fn watch_board(app: Arc<App>) {
    let revs = |app: &Arc<App>| {
        let t = Arc::clone(&app.tether);
        async move {
            tokio::task::spawn_blocking(move || {
                let b = t.board();
                Ok::<_, tether_core::Error>((b.revision()?, b.signals_revision()?, b.runs_revision()?))
            })
            .await
            .ok()?
            .ok()
        }
    };
    // Woken by writes to the database from any process (the CLI, another daemon's tools), with a
    // slow poll in case a file event is missed; idle, nothing runs.
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<()>();
    let _writes = app
        .tether
        .store
        .watch_writes(move || {
            let _ = tx.send(());
        })
        .map_err(|e| tracing::warn!(error = %e, "cannot watch the database; polling only"))
        .ok();
    let mut last = revs(&app).await;
    // Deliveries written while no daemon ran still get their outcome recorded.
    app.doorbell.kick();
    loop {
        tokio::select! {
            _ = rx.recv() => {
                // The WAL is written before the commit is published in the -shm index; a moment
                // later the write is visible, and a burst of writes is folded into one check.
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            _ = tokio::time::sleep(BOARD_FALLBACK_POLL) => {}
        }
        while rx.try_recv().is_ok() {}
        let Some(now) = revs(&app).await else { continue };
        if last.is_some_and(|l| l.0 != now.0) || last.is_none() {
            app.tasks_changed(now.0);
        }
        if last.is_some_and(|l| l.1 != now.1) || last.is_none() {
            app.signals_sent();
        }
        if last.is_some_and(|l| l.2 != now.2) || last.is_none() {
            // Queued or cancelled by another process (the CLI): the runner takes it now.
            if let Some(r) = app.runner() {
                r.kick();
            }
            app.emit("runs", serde_json::json!({}));
        }
        last = Some(now);
    }
}

/// How often the board is checked when no write was seen (a missed file event).
const BOARD_FALLBACK_POLL: Duration = Duration::from_secs(5);

/// Serves MCP over stdin/stdout until the client closes it. Logs must go to stderr.
pub async fn serve_stdio(app: Arc<App>) -> Result<(), ServeError> {
    use rmcp::ServiceExt;
    // No doorbell and no runner here: stdio cannot push (Cursor ignores it there), and runs must
    // not die with a chat's stdio process. The daemon rings and runs; this process still
    // answers with the piggyback notice.
    let tasks = tokio::spawn(watch_board(Arc::clone(&app)));
    let svc =
        TetherMcp::new(app).serve(rmcp::transport::stdio()).await.map_err(|e| ServeError::Stdio(e.to_string()))?;
    let r = svc.waiting().await.map_err(|e| ServeError::Stdio(e.to_string()));
    tasks.abort();
    r?;
    Ok(())
}
