//! The shell's state: the daemon it shows (hosted here, or attached to one `tether serve` runs)
//! and the window that shows its GUI through a one-time login link. The tray and the desktop
//! integration act on these.

use std::sync::Arc;

use tauri::{Manager, WebviewUrl, WebviewWindowBuilder};
use tether_core::{CursorLocations, Paths};
use tether_daemon::{Host, HostError, HostOptions};

use crate::links;

/// The daemon this window shows: ours, or one that `tether serve` already runs.
pub enum Daemon {
    Hosted(Arc<Host>),
    /// Another process serves; we read the same index (SQLite WAL) for the tray's status.
    Attached {
        url: String,
        tether: Option<Arc<tether_core::Tether>>,
    },
}

impl Daemon {
    /// The URL now: a daemon moves when its saved port changes.
    pub fn mcp_url(&self, paths: &Paths) -> String {
        match self {
            Daemon::Hosted(h) => h.url(),
            Daemon::Attached { url, .. } => {
                tether_core::daemon::running(paths).and_then(|d| d.url).unwrap_or_else(|| url.clone())
            }
        }
    }
}

pub struct Shell {
    pub paths: Paths,
    pub daemon: Daemon,
}

/// Hosts the daemon unless `tether serve` (or another app instance's daemon) holds the data dir.
pub fn start_or_attach(paths: &Paths, cursor: CursorLocations, port: (u16, &'static str)) -> anyhow::Result<Daemon> {
    let attach = |url: String, cursor: CursorLocations| {
        let tether = tether_core::Tether::open(paths.clone(), cursor).ok().map(Arc::new);
        Daemon::Attached { url, tether }
    };
    if let Some(url) = tether_core::daemon::running(paths).and_then(|d| d.url) {
        return Ok(attach(url, cursor));
    }
    match Host::start(
        paths.clone(),
        cursor.clone(),
        &HostOptions { host: "127.0.0.1".into(), port: port.0, port_from: port.1, runner: Default::default() },
        None,
    ) {
        Ok(h) => Ok(Daemon::Hosted(h)),
        Err(HostError::Core(tether_core::Error::AlreadyRunning { .. })) => {
            let url = tether_core::daemon::running(paths).and_then(|d| d.url);
            let url = url.ok_or_else(|| anyhow::anyhow!("another daemon holds the data dir but serves no URL"))?;
            Ok(attach(url, cursor))
        }
        Err(e) => Err(e.into()),
    }
}

/// The main window, logged in to the daemon's GUI.
pub fn open_window(app: &tauri::AppHandle) -> anyhow::Result<()> {
    open_window_at(app, None)
}

/// The main window showing `route` (the GUI's hash route, e.g. `inbox/S-4`), if one is given.
pub fn open_window_at(app: &tauri::AppHandle, route: Option<&str>) -> anyhow::Result<()> {
    let hash = route.map(|r| format!("#/{}", r.trim_start_matches(['#', '/'])));
    if let Some(w) = app.get_webview_window("main") {
        w.show()?;
        w.set_focus()?;
        if let Some(h) = &hash {
            // The page routes on its hash; setting it shows the view without a reload.
            w.eval(format!("location.hash = {}", serde_json::to_string(h)?))?;
        }
        return Ok(());
    }
    let shell = app.state::<Arc<Shell>>();
    // The login redirect keeps the fragment, so the page opens on the route.
    let url = match tether_server::login_link(&shell.paths) {
        Ok(link) => WebviewUrl::External(format!("{link}{}", hash.as_deref().unwrap_or("")).parse()?),
        Err(e) => {
            tracing::warn!(error = %e, "no login link; showing the start page");
            WebviewUrl::App("index.html".into())
        }
    };
    let (nav_app, new_app) = (app.clone(), app.clone());
    WebviewWindowBuilder::new(app, "main", url)
        .on_navigation(move |u| links::route_link(&nav_app, &daemon_url(&nav_app), u))
        .on_new_window(move |u, _| {
            // Links that ask for a new window (those in chats do) open outside, never in a second webview.
            links::route_link(&new_app, &daemon_url(&new_app), &u);
            tauri::webview::NewWindowResponse::Deny
        })
        .on_download(|webview, event| links::on_download(&webview, event))
        .title("Tether")
        .inner_size(1280.0, 800.0)
        .min_inner_size(720.0, 480.0)
        .build()?;
    Ok(())
}

/// Asked at each navigation: the daemon moves when its saved port changes, and the page follows.
fn daemon_url(app: &tauri::AppHandle) -> String {
    let shell = app.state::<Arc<Shell>>();
    shell.daemon.mcp_url(&shell.paths)
}

pub fn show_window(app: &tauri::AppHandle) {
    if let Err(e) = open_window(app) {
        tracing::warn!(error = %e, "cannot show the window");
    }
}

pub fn stop_daemon(app: &tauri::AppHandle) {
    if let Daemon::Hosted(h) = &app.state::<Arc<Shell>>().daemon {
        let h = Arc::clone(h);
        let _ = tauri::async_runtime::block_on(async move { h.shutdown().await });
    }
}
