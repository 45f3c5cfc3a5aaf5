//! Tether's desktop shell: a window showing the daemon's GUI and a tray icon with the daemon's
//! state and controls. It hosts the same daemon as `tether serve` in-process
//! (`tether_mcp::host::Host`), or attaches to one that already holds the data dir.
//!
//! A thin host: no index, task or session logic here, only window, tray and process wiring.
//! The window loads the daemon's own GUI through a one-time login link, so the page never sees
//! the token and gets no Tauri IPC (capabilities/default.json grants nothing).

#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

mod desktop;
mod tray;

use std::sync::Arc;
use std::time::Instant;

use tauri::{Manager, WebviewUrl, WebviewWindowBuilder};
use tether_core::{CursorLocations, Paths};
use tether_mcp::host::{Host, HostError, HostOptions};

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

fn main() {
    let started = Instant::now();
    let filter = tracing_subscriber::EnvFilter::try_from_env("TETHER_LOG").unwrap_or_else(|_| "warn".into());
    tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).init();
    if let Err(e) = run(started) {
        eprintln!("tether-app: {e:#}");
        std::process::exit(1);
    }
}

fn run(started: Instant) -> anyhow::Result<()> {
    let paths = Paths::from_env()?;
    let settings = tether_core::settings::Settings::load(&paths)?;
    let cursor = CursorLocations::discover(None, &settings.cursor_dirs());
    let port = tether_mcp::host::choose_port(
        std::env::var("TETHER_PORT").ok().and_then(|p| p.parse().ok()),
        "TETHER_PORT",
        &settings,
    );
    let minimized = std::env::args().any(|a| a == desktop::MINIMIZED_ARG);
    tauri::Builder::default()
        .plugin(tauri_plugin_single_instance::init(|app, _args, _cwd| show_window(app)))
        .plugin(tauri_plugin_shell::init())
        .plugin(tauri_plugin_clipboard_manager::init())
        .plugin(tauri_plugin_notification::init())
        .plugin(tauri_plugin_autostart::Builder::new().args([desktop::MINIMIZED_ARG]).build())
        .setup(move |app| {
            let daemon = tauri::async_runtime::block_on(async { start_or_attach(&paths, cursor, port) })?;
            app.manage(Arc::new(Shell { paths, daemon }));
            desktop::follow_notification_clicks(app.handle());
            tray::build(app.handle())?;
            if !minimized {
                open_window(app.handle())?;
            }
            eprintln!("tether-app: ready in {} ms", started.elapsed().as_millis());
            Ok(())
        })
        .on_window_event(|window, event| {
            // Closing the window keeps Tether running in the tray.
            if let tauri::WindowEvent::CloseRequested { api, .. } = event {
                api.prevent_close();
                let _ = window.hide();
            }
        })
        .build(tauri::generate_context!())?
        .run(|app, event| {
            if let tauri::RunEvent::ExitRequested { api, code, .. } = event {
                // The last window closing must not end the app; only Quit does (with a code).
                if code.is_none() {
                    api.prevent_exit();
                } else {
                    stop_daemon(app);
                }
            }
        });
    Ok(())
}

/// Hosts the daemon unless `tether serve` (or another app instance's daemon) holds the data dir.
fn start_or_attach(paths: &Paths, cursor: CursorLocations, port: (u16, &'static str)) -> anyhow::Result<Daemon> {
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
        &HostOptions { host: "127.0.0.1".into(), port: port.0, port_from: port.1 },
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
    let url = match tether_mcp::login_link(&shell.paths) {
        Ok(link) => WebviewUrl::External(format!("{link}{}", hash.as_deref().unwrap_or("")).parse()?),
        Err(e) => {
            tracing::warn!(error = %e, "no login link; showing the start page");
            WebviewUrl::App("index.html".into())
        }
    };
    let (nav_app, new_app) = (app.clone(), app.clone());
    WebviewWindowBuilder::new(app, "main", url)
        .on_navigation(move |u| desktop::route_link(&nav_app, u))
        .on_new_window(move |u, _| {
            // Links that ask for a new window (those in chats do) open outside, never in a second webview.
            desktop::route_link(&new_app, &u);
            tauri::webview::NewWindowResponse::Deny
        })
        .on_download(|webview, event| desktop::on_download(&webview, event))
        .title("Tether")
        .inner_size(1280.0, 800.0)
        .min_inner_size(720.0, 480.0)
        .build()?;
    Ok(())
}

fn show_window(app: &tauri::AppHandle) {
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
