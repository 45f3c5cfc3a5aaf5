//! The daemon as a value: what `tether serve` and the desktop app both run. It holds the data
//! dir's lock, serves HTTP (MCP + GUI API) on loopback, runs the initial index and then the
//! watcher, runs queued agent runs, and stops each of them on request. The server and the indexing can be stopped and
//! started on their own (the tray menu does); dropping the `Host` stops everything.
//!
//! Needs a tokio runtime (it spawns onto the current one); no CLI or tauri types here.

use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use tether_core::daemon::{DaemonInfo, DaemonLock};
use tether_core::history::index::{Depth, Progress};
use tether_core::history::watch::{WatchConfig, WatchEvent, WatchHandle};
use tether_core::{CursorLocations, Paths, Tether};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::{App, ServeError, bind_loopback, serve_http};

/// Where to listen: a loopback host and a port (0 = any free one).
#[derive(Debug, Clone)]
pub struct HostOptions {
    pub host: String,
    pub port: u16,
    /// What chose the port: `--port/TETHER_PORT`, `settings` or `default` (the settings page
    /// shows whether a saved port is overridden or waits for a restart).
    pub port_from: &'static str,
}

/// The port to listen on and what chose it: an explicit one (named `explicit_from`), else the
/// saved settings, else [`crate::DEFAULT_PORT`].
pub fn choose_port(
    explicit: Option<u16>,
    explicit_from: &'static str,
    settings: &tether_core::settings::Settings,
) -> (u16, &'static str) {
    match (explicit, settings.port) {
        (Some(p), _) => (p, explicit_from),
        (None, Some(p)) => (p, "settings"),
        (None, None) => (crate::DEFAULT_PORT, "default"),
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
struct Server {
    stop: watch::Sender<bool>,
    task: JoinHandle<Result<(), ServeError>>,
}

/// A progress sink for the initial index (a terminal bar, GUI events).
pub type ProgressSink = Arc<dyn Fn(&Progress) + Send + Sync>;

pub struct Host {
    pub app: Arc<App>,
    pub tether: Arc<Tether>,
    /// What `daemon.json` says (the URL and port move with the settings).
    info: Mutex<DaemonInfo>,
    pub token_backend: tether_core::token::Backend,
    host: String,
    /// Held until `shutdown`, so a process that restarts itself hands the data dir over.
    lock: Mutex<Option<DaemonLock>>,
    server: Mutex<Option<Server>>,
    watcher: Arc<Mutex<Option<WatchHandle>>>,
    initial: Mutex<Option<JoinHandle<()>>>,
    /// Set while paused, so an initial pass that ends meanwhile does not start watching.
    paused: Arc<std::sync::atomic::AtomicBool>,
    /// Agent runs, and the task forwarding their updates.
    runner: Mutex<Option<(tether_runs::RunnerHandle, JoinHandle<()>)>>,
    /// Follows `settings.json`, so saved changes apply without a restart.
    settings_watch: Mutex<Option<SettingsWatch>>,
}

/// Watches the data dir for `settings.json` being written; stops when dropped.
struct SettingsWatch {
    _watcher: notify::RecommendedWatcher,
    task: JoinHandle<()>,
}

impl Drop for SettingsWatch {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// What applying the saved settings changed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Applied {
    /// The new port, when the listener moved.
    pub port: Option<u16>,
    /// Cursor's folders were re-pointed (and are being re-read).
    pub cursor: bool,
}

impl std::fmt::Debug for Host {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Host").field("url", &self.url()).finish_non_exhaustive()
    }
}

impl Host {
    /// Takes the data dir (failing if another daemon holds it), binds, writes `daemon.json`,
    /// serves, and starts indexing in the background (then watching for changes).
    pub fn start(
        paths: Paths,
        cursor: CursorLocations,
        opts: &HostOptions,
        progress: Option<ProgressSink>,
    ) -> Result<Arc<Self>, HostError> {
        let lock = DaemonLock::acquire(&paths)?;
        let (token, token_backend) = tether_core::token::mcp_token(&paths).map_err(HostError::Token)?;
        let hook_token = tether_core::token::hook_token(&paths)?;
        let listener = bind_loopback(&opts.host, opts.port)?;
        let port =
            listener.local_addr().map_err(|e| ServeError::Io { context: "reading the port".into(), source: e })?.port();
        let info = DaemonInfo {
            pid: std::process::id(),
            version: env!("CARGO_PKG_VERSION").into(),
            started_at: chrono_now(),
            url: Some(mcp_url(&opts.host, port)),
            port: Some(port),
        };
        lock.write_info(&info)?;
        let tether = Arc::new(Tether::open(paths, cursor)?);
        // No client holds a stream to a daemon that has just started, whatever a killed one left.
        tether_core::board::live::reset_streams(&tether.store)?;
        let app = App::new(Arc::clone(&tether), token, hook_token);
        app.set_listening(tether_core::settings::RunningPort { port, from: opts.port_from });
        let h = Arc::new(Self {
            app,
            tether,
            info: Mutex::new(info),
            token_backend,
            host: opts.host.clone(),
            lock: Mutex::new(Some(lock)),
            server: Mutex::default(),
            watcher: Arc::default(),
            initial: Mutex::default(),
            paused: Arc::default(),
            runner: Mutex::default(),
            settings_watch: Mutex::default(),
        });
        *h.runner.lock().unwrap_or_else(|p| p.into_inner()) = Some(h.app.start_runner());
        h.serve_on(listener);
        h.start_indexing(progress);
        match h.watch_settings() {
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

    /// Applies saved settings to the running daemon: Cursor's folders (unless a flag or variable
    /// chose them) are re-pointed and re-read, and the port (unless one was given) moves — the
    /// new listener is bound before the old one closes, and `daemon.json` names the new URL.
    pub async fn apply_settings(self: &Arc<Self>) -> Result<Applied, HostError> {
        let settings = self.tether.settings()?;
        let mut applied = Applied::default();
        let current = self.tether.cursor();
        let ours = |from: &str| matches!(from, "detected" | "settings");
        if ours(current.user_dir_from) && ours(current.home_from) {
            let wanted = CursorLocations::discover(None, &settings.cursor_dirs());
            if wanted.user_dirs != current.user_dirs || wanted.cursor_homes != current.cursor_homes {
                tracing::info!(user_dirs = ?wanted.user_dirs, homes = ?wanted.cursor_homes, "Cursor's folders changed; re-reading");
                self.tether.set_cursor(wanted);
                // A pass already under way read the old folders: let it finish, then start over.
                let initial = self.initial.lock().unwrap_or_else(|p| p.into_inner()).take();
                if let Some(t) = initial {
                    let _ = t.await;
                }
                if let Some(w) = self.watcher.lock().unwrap_or_else(|p| p.into_inner()).take() {
                    w.stop();
                }
                if !self.indexing_paused() {
                    self.start_indexing(None);
                }
                applied.cursor = true;
            }
        }
        let running = self.app.listening();
        if let Some(run) = running.filter(|r| matches!(r.from, "settings" | "default")) {
            let wanted = settings.port.unwrap_or(crate::DEFAULT_PORT);
            if wanted != run.port {
                let listener = bind_loopback(&self.host, wanted)?;
                let port = listener
                    .local_addr()
                    .map_err(|e| ServeError::Io { context: "reading the port".into(), source: e })?
                    .port();
                let was_serving = self.serving();
                // Open pages follow the daemon to its new port (their streams end with the old one).
                self.app.emit("settings", serde_json::json!({"moving_to": port}));
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
                self.app.set_listening(tether_core::settings::RunningPort {
                    port,
                    from: if settings.port.is_some() { "settings" } else { "default" },
                });
                if was_serving {
                    self.serve_on(listener);
                }
                tracing::info!(port, "moved to the saved port");
                applied.port = Some(port);
            }
        }
        if applied != Applied::default() {
            self.app.emit("settings", serde_json::json!({"applied": {"port": applied.port, "cursor": applied.cursor}}));
        }
        Ok(applied)
    }

    fn watch_settings(self: &Arc<Self>) -> Result<SettingsWatch, notify::Error> {
        use notify::Watcher;
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<()>();
        let name = self.tether.paths.settings_json().file_name().map(|n| n.to_owned());
        let mut w = notify::recommended_watcher(move |res: notify::Result<notify::Event>| {
            let Ok(ev) = res else { return };
            let writes = matches!(ev.kind, notify::EventKind::Modify(_) | notify::EventKind::Create(_));
            if writes && ev.paths.iter().any(|p| p.file_name() == name.as_deref()) {
                let _ = tx.send(());
            }
        })?;
        w.watch(&self.tether.paths.data_dir, notify::RecursiveMode::NonRecursive)?;
        let host = Arc::downgrade(self);
        let task = tokio::spawn(async move {
            while rx.recv().await.is_some() {
                // A save is a write and a rename: take the burst as one change.
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                while rx.try_recv().is_ok() {}
                let Some(h) = host.upgrade() else { break };
                if let Err(e) = h.apply_settings().await {
                    tracing::warn!(error = %e, "applying the saved settings");
                    h.app.emit("settings", serde_json::json!({"error": e.to_string()}));
                }
            }
        });
        Ok(SettingsWatch { _watcher: w, task })
    }

    fn serve_on(&self, listener: TcpListener) {
        let (stop, mut rx) = watch::channel(false);
        let task = tokio::spawn(serve_http(listener, Arc::clone(&self.app), async move {
            let _ = rx.wait_for(|s| *s).await;
        }));
        *self.server.lock().unwrap_or_else(|p| p.into_inner()) = Some(Server { stop, task });
    }

    pub fn serving(&self) -> bool {
        self.server.lock().unwrap_or_else(|p| p.into_inner()).as_ref().is_some_and(|s| !s.task.is_finished())
    }

    /// Stops serving HTTP (MCP clients then see the server as down); indexing goes on.
    pub async fn stop_server(&self) -> Result<(), ServeError> {
        let s = self.server.lock().unwrap_or_else(|p| p.into_inner()).take();
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
        self.paused.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Stops watching Cursor's files; the index stays as it is and keeps being served.
    pub fn pause_indexing(&self) {
        self.paused.store(true, std::sync::atomic::Ordering::SeqCst);
        if let Some(w) = self.watcher.lock().unwrap_or_else(|p| p.into_inner()).take() {
            w.stop();
        }
        self.app.set_indexing_paused(true);
    }

    /// Catches up (a deep pass) and watches again.
    pub fn resume_indexing(&self) {
        if !self.paused.swap(false, std::sync::atomic::Ordering::SeqCst) || self.initial_index_running() {
            return;
        }
        self.app.set_indexing_paused(false);
        self.start_indexing(None);
    }

    fn start_indexing(&self, progress: Option<ProgressSink>) {
        let (app, tether, watcher) = (Arc::clone(&self.app), Arc::clone(&self.tether), Arc::clone(&self.watcher));
        let paused = Arc::clone(&self.paused);
        let rt = tokio::runtime::Handle::current();
        let task = tokio::task::spawn_blocking(move || {
            let _g = rt.enter();
            let also = |p: &Progress| {
                if let Some(f) = &progress {
                    f(p);
                }
            };
            match app.index_reporting(Depth::Deep, &also) {
                Ok(r) => {
                    tracing::info!(chats = r.sessions_total, messages = r.messages_total, ms = r.elapsed_ms, "indexed")
                }
                Err(e) => tracing::warn!(error = %e, "the initial index failed"),
            }
            if paused.load(std::sync::atomic::Ordering::SeqCst) {
                return;
            }
            let notify = Arc::clone(&app);
            let handle = rt.clone();
            match tether.watch(WatchConfig::default(), move |ev| match ev {
                WatchEvent::Indexed(r) if r.sessions_written + r.sessions_deleted > 0 => {
                    tracing::info!(
                        updated = r.sessions_written,
                        removed = r.sessions_deleted,
                        ms = r.elapsed_ms,
                        "index updated"
                    );
                    let _g = handle.enter();
                    notify.sessions_changed(&r.changed);
                }
                WatchEvent::Indexed(_) => {}
                WatchEvent::Error(e) => tracing::warn!(error = %e, "watch pass failed"),
            }) {
                Ok(w) => *watcher.lock().unwrap_or_else(|p| p.into_inner()) = Some(w),
                Err(e) => tracing::warn!(error = %e, "cannot watch Cursor's files; the index will not update"),
            }
        });
        *self.initial.lock().unwrap_or_else(|p| p.into_inner()) = Some(task);
    }

    /// Whether the initial index pass is still running.
    pub fn initial_index_running(&self) -> bool {
        self.initial.lock().unwrap_or_else(|p| p.into_inner()).as_ref().is_some_and(|t| !t.is_finished())
    }

    /// Stops serving and watching, then removes `daemon.json` and releases the data dir.
    /// An initial index still running is left to the process's exit: its writes are transactions.
    pub async fn shutdown(&self) -> Result<(), ServeError> {
        drop(self.settings_watch.lock().unwrap_or_else(|p| p.into_inner()).take());
        let served = self.stop_server().await;
        let runner = self.runner.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some((r, forward)) = runner {
            r.stop().await;
            forward.abort();
        }
        if let Some(w) = self.watcher.lock().unwrap_or_else(|p| p.into_inner()).take() {
            w.stop();
        }
        drop(self.lock.lock().unwrap_or_else(|p| p.into_inner()).take());
        served
    }
}

/// The MCP endpoint's URL on `host` (an IPv6 address in brackets).
fn mcp_url(host: &str, port: u16) -> String {
    if host.contains(':') { format!("http://[{host}]:{port}/mcp") } else { format!("http://{host}:{port}/mcp") }
}

fn chrono_now() -> String {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64);
    tether_core::clock::iso(secs)
}
