//! The daemon as a value, what `tether serve` and the desktop app both run: it holds the data
//! dir's lock, serves HTTP (MCP, the GUI, the callbacks) on loopback, and starts its components
//! on the event bus — the indexer (first pass, then the watcher), the runner of agent runs, the
//! store watcher (other processes' board writes), the settings watcher (saved settings applied
//! live: Cursor's folders re-pointed, the port moved). Each is owned by a handle that stops it;
//! the server and the indexing can be stopped and started on their own (the tray does).
//!
//! Needs a tokio runtime (it spawns onto the current one); no CLI or tauri types here.

mod indexer;
mod watchers;

use std::net::TcpListener;
use std::sync::{Arc, Mutex};

pub use indexer::{ProgressSink, index_reporting};
use tether_core::daemon::{DaemonInfo, DaemonLock};
use tether_core::events::{Applied, Event, SettingsEvent};
use tether_core::settings::{DEFAULT_PORT, RunningPort, Settings};
use tether_core::{CursorLocations, Paths, Tether};
/// Registers the executors this build runs agents with (the Cursor CLI, Cursor Cloud) on an engine;
/// the daemon does at start, and a one-shot CLI process so its operations can describe them.
pub use tether_runs::register as register_executors;
use tether_server::{ServeError, Server, bind_loopback, serve_http};
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// Where to listen: a loopback host and a port (0 = any free one).
#[derive(Debug, Clone)]
pub struct HostOptions {
    pub host: String,
    pub port: u16,
    /// What chose the port: `--port/TETHER_PORT`, `settings` or `default` (the settings page
    /// shows whether a saved port is overridden or waits for a restart).
    pub port_from: &'static str,
    /// Team mode: whether this daemon takes other machines' runs (`serve --runner`), and its labels.
    pub runner: tether_core::daemon::RunnerRole,
}

/// The port to listen on and what chose it: an explicit one (named `explicit_from`), else the
/// saved settings, else [`DEFAULT_PORT`].
pub fn choose_port(explicit: Option<u16>, explicit_from: &'static str, settings: &Settings) -> (u16, &'static str) {
    match (explicit, settings.port) {
        (Some(p), _) => (p, explicit_from),
        (None, Some(p)) => (p, "settings"),
        (None, None) => (DEFAULT_PORT, "default"),
    }
}

#[derive(Debug, thiserror::Error)]
pub enum HostError {
    #[error(transparent)]
    Core(#[from] tether_core::Error),
    #[error(transparent)]
    Serve(#[from] ServeError),
    #[error("getting the MCP token: {0}")]
    Token(tether_core::Error),
}

/// A running server: its stop signal and task.
struct Serving {
    stop: watch::Sender<bool>,
    task: JoinHandle<Result<(), ServeError>>,
}

pub struct Host {
    pub tether: Arc<Tether>,
    pub server: Arc<Server>,
    /// What `daemon.json` says (the URL and port move with the settings).
    info: Mutex<DaemonInfo>,
    pub token_backend: tether_core::token::Backend,
    host: String,
    /// Held until `shutdown`, so a process that restarts itself hands the data dir over.
    lock: Mutex<Option<DaemonLock>>,
    serving: Mutex<Option<Serving>>,
    indexer: Arc<indexer::Indexer>,
    runner: Mutex<Option<tether_runs::RunnerHandle>>,
    store_watch: Mutex<Option<watchers::Watching>>,
    settings_watch: Mutex<Option<watchers::Watching>>,
    trace_publisher: Mutex<Option<watchers::Watching>>,
    team_heartbeat: Mutex<Option<watchers::Watching>>,
}

impl std::fmt::Debug for Host {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Host").field("url", &self.url()).finish_non_exhaustive()
    }
}

impl Host {
    /// Takes the data dir (failing if another daemon holds it), binds, writes `daemon.json`,
    /// serves, and starts the components.
    pub fn start(
        paths: Paths,
        cursor: CursorLocations,
        opts: &HostOptions,
        progress: Option<ProgressSink>,
    ) -> Result<Arc<Self>, HostError> {
        tether_cloud::install_tls_provider();
        let lock = DaemonLock::acquire(&paths)?;
        let (token, token_backend) =
            tether_core::token::mcp_token(&paths, tether_core::token::NoKeyring::saved(&paths))
                .map_err(HostError::Token)?;
        let hook_token = tether_core::token::hook_token(&paths)?;
        let listener = bind_loopback(&opts.host, opts.port)?;
        let port = port_of(&listener)?;
        let info = DaemonInfo {
            pid: std::process::id(),
            version: env!("CARGO_PKG_VERSION").into(),
            started_at: tether_core::clock::iso(tether_core::clock::now_ms()),
            url: Some(mcp_url(&opts.host, port)),
            port: Some(port),
        };
        lock.write_info(&info)?;
        let tether = Arc::new(Tether::open(paths, cursor)?);
        tether.daemon.set_runner_role(opts.runner.clone());
        // What runs agents here: the operations describe them (the doctor, the run form), the runner
        // drives runs through them.
        register_executors(&tether);
        // No client holds a stream to a daemon that has just started, whatever a killed one left.
        tether.mcp_sessions().reset_streams()?;
        tether.daemon.set_listening(RunningPort { port, from: opts.port_from });
        let server = Server::new(Arc::clone(&tether), token, hook_token);
        let h = Arc::new(Self {
            tether: Arc::clone(&tether),
            server,
            info: Mutex::new(info),
            token_backend,
            host: opts.host.clone(),
            lock: Mutex::new(Some(lock)),
            serving: Mutex::default(),
            indexer: Arc::default(),
            runner: Mutex::default(),
            store_watch: Mutex::default(),
            settings_watch: Mutex::default(),
            trace_publisher: Mutex::default(),
            team_heartbeat: Mutex::default(),
        });
        *h.store_watch.lock().unwrap_or_else(|p| p.into_inner()) = Some(watchers::store(&tether));
        *h.trace_publisher.lock().unwrap_or_else(|p| p.into_inner()) = Some(watchers::trace_publisher(&tether));
        *h.team_heartbeat.lock().unwrap_or_else(|p| p.into_inner()) = Some(watchers::team_heartbeat(&tether));
        *h.runner.lock().unwrap_or_else(|p| p.into_inner()) = Some(tether_runs::Runner::start(Arc::clone(&tether)));
        h.serve_on(listener);
        h.indexer.start(&tether, progress);
        let apply = |h: Arc<Host>| -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>> {
            Box::pin(async move {
                if let Err(e) = h.apply_settings().await {
                    tracing::warn!(error = %e, "applying the saved settings");
                    h.tether.bus.emit(Event::Settings(SettingsEvent {
                        error: Some(e.to_string()),
                        ..SettingsEvent::default()
                    }));
                }
            })
        };
        match watchers::settings(&tether, Arc::downgrade(&h), apply) {
            Ok(w) => *h.settings_watch.lock().unwrap_or_else(|p| p.into_inner()) = Some(w),
            Err(e) => tracing::warn!(error = %e, "cannot follow settings.json; saved changes apply at the next start"),
        }
        Ok(h)
    }

    /// `http://127.0.0.1:PORT/mcp`.
    pub fn url(&self) -> String {
        self.info.lock().unwrap_or_else(|p| p.into_inner()).url.clone().unwrap_or_default()
    }

    pub fn port(&self) -> u16 {
        self.info.lock().unwrap_or_else(|p| p.into_inner()).port.unwrap_or_default()
    }

    /// Applies the saved settings to the running daemon: Cursor's folders (unless a flag or
    /// variable chose them) are re-pointed and re-read, and the port (unless one was given)
    /// moves — the new listener is bound before the old one closes, and `daemon.json` names the
    /// new URL.
    pub async fn apply_settings(self: &Arc<Self>) -> Result<Applied, HostError> {
        self.tether.reload_settings();
        let settings = self.tether.settings()?;
        let mut applied = Applied::default();
        let current = self.tether.cursor();
        let ours = |from: &str| matches!(from, "detected" | "settings");
        if ours(current.user_dir_from) && ours(current.home_from) {
            let wanted = CursorLocations::discover(None, &settings.cursor_dirs());
            if wanted.user_dirs != current.user_dirs || wanted.cursor_homes != current.cursor_homes {
                tracing::info!(user_dirs = ?wanted.user_dirs, homes = ?wanted.cursor_homes, "Cursor's folders changed; re-reading");
                self.tether.set_cursor(wanted);
                self.indexer.restart(&self.tether).await;
                applied.cursor = true;
            }
        }
        // Other agents turned on or off: their folders (found under the home whatever chose
        // Cursor's) are looked for again, the index and watcher follow.
        let current = self.tether.cursor();
        if current.agents_off != settings.agents.off() {
            let wanted = CursorLocations::discover(None, &settings.cursor_dirs());
            let mut loc = current;
            (loc.claude_dirs, loc.codex_homes, loc.gemini_dirs, loc.agents_off) =
                (wanted.claude_dirs, wanted.codex_homes, wanted.gemini_dirs, wanted.agents_off);
            tracing::info!(off = ?loc.agents_off, "the agents read changed; re-reading");
            self.tether.set_cursor(loc);
            self.indexer.restart(&self.tether).await;
            applied.cursor = true;
        }
        if let Some(run) = self.tether.daemon.listening().filter(|r| matches!(r.from, "settings" | "default")) {
            let wanted = settings.port.unwrap_or(DEFAULT_PORT);
            if wanted != run.port {
                applied.port = Some(self.move_to(wanted, settings.port.is_some()).await?);
            }
        }
        if applied != Applied::default() {
            self.tether
                .bus
                .emit(Event::Settings(SettingsEvent { applied: Some(applied.clone()), ..SettingsEvent::default() }));
        }
        Ok(applied)
    }

    async fn move_to(&self, wanted: u16, saved: bool) -> Result<u16, HostError> {
        let listener = bind_loopback(&self.host, wanted)?;
        let port = port_of(&listener)?;
        let was_serving = self.serving();
        // Open pages follow the daemon to its new port (their streams end with the old one).
        self.tether.bus.emit(Event::Settings(SettingsEvent { moving_to: Some(port), ..SettingsEvent::default() }));
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        self.stop_server().await?;
        let info = {
            let mut info = self.info.lock().unwrap_or_else(|p| p.into_inner());
            info.url = Some(mcp_url(&self.host, port));
            info.port = Some(port);
            info.clone()
        };
        if let Some(lock) = self.lock.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
            lock.write_info(&info)?;
        }
        self.tether.daemon.set_listening(RunningPort { port, from: if saved { "settings" } else { "default" } });
        if was_serving {
            self.serve_on(listener);
        }
        tracing::info!(port, "moved to the saved port");
        Ok(port)
    }

    fn serve_on(&self, listener: TcpListener) {
        let (stop, mut rx) = watch::channel(false);
        let task = tokio::spawn(serve_http(listener, Arc::clone(&self.server), async move {
            let _ = rx.wait_for(|s| *s).await;
        }));
        *self.serving.lock().unwrap_or_else(|p| p.into_inner()) = Some(Serving { stop, task });
    }

    pub fn serving(&self) -> bool {
        self.serving.lock().unwrap_or_else(|p| p.into_inner()).as_ref().is_some_and(|s| !s.task.is_finished())
    }

    /// Stops serving HTTP (MCP clients then see the server as down); indexing goes on.
    pub async fn stop_server(&self) -> Result<(), ServeError> {
        let s = self.serving.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(s) = s {
            let _ = s.stop.send(true);
            return s.task.await.unwrap_or(Ok(()));
        }
        Ok(())
    }

    /// Serves again on the same port.
    pub fn start_server(&self) -> Result<(), ServeError> {
        if self.serving() {
            return Ok(());
        }
        self.serve_on(bind_loopback(&self.host, self.port())?);
        Ok(())
    }

    pub fn indexing_paused(&self) -> bool {
        self.indexer.paused()
    }

    /// Stops watching Cursor's files; the index stays as it is and keeps being served.
    pub fn pause_indexing(&self) {
        self.indexer.pause(&self.tether);
    }

    /// Catches up (a deep pass) and watches again.
    pub fn resume_indexing(&self) {
        self.indexer.resume(&self.tether);
    }

    /// Whether the first index pass is still running.
    pub fn initial_index_running(&self) -> bool {
        self.indexer.first_pass_running()
    }

    /// Stops serving, running and watching, then removes `daemon.json` and releases the data
    /// dir. An index pass still running is left to the process's exit: its writes are
    /// transactions.
    pub async fn shutdown(&self) -> Result<(), ServeError> {
        drop(self.settings_watch.lock().unwrap_or_else(|p| p.into_inner()).take());
        let served = self.stop_server().await;
        let runner = self.runner.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(r) = runner {
            r.stop().await;
        }
        self.indexer.stop();
        drop(self.store_watch.lock().unwrap_or_else(|p| p.into_inner()).take());
        drop(self.team_heartbeat.lock().unwrap_or_else(|p| p.into_inner()).take());
        drop(self.trace_publisher.lock().unwrap_or_else(|p| p.into_inner()).take());
        drop(self.lock.lock().unwrap_or_else(|p| p.into_inner()).take());
        served
    }
}

fn port_of(l: &TcpListener) -> Result<u16, ServeError> {
    Ok(l.local_addr().map_err(|e| ServeError::Io { context: "reading the port".into(), source: e })?.port())
}

/// The MCP endpoint's URL on `host` (an IPv6 address in brackets).
fn mcp_url(host: &str, port: u16) -> String {
    if host.contains(':') { format!("http://[{host}]:{port}/mcp") } else { format!("http://{host}:{port}/mcp") }
}
