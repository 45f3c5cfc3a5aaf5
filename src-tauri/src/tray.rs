//! The tray icon: its colour says how the daemon is (running, degraded, stopped, needs
//! attention) and its menu controls it. A background thread takes a snapshot every three seconds,
//! rebuilds the menu when something changed, and lets `desktop` apply settings and notify.

use std::sync::Arc;
use std::time::Duration;

use tauri::image::Image;
use tauri::menu::{Menu, MenuBuilder, MenuItem, PredefinedMenuItem, SubmenuBuilder};
use tauri::tray::TrayIconBuilder;
use tauri::{AppHandle, Manager, Wry};
use tauri_plugin_clipboard_manager::ClipboardExt;
use tauri_plugin_shell::ShellExt;
use tether_core::model::runs::{RunFilter, RunStatus};
use tether_core::settings::Settings;

use crate::desktop::Alert;
use crate::shell::{Daemon, Shell};

const TRAY_ID: &str = "tether";
/// Menu items with this id prefix open the window on the route that follows it.
const OPEN_PREFIX: &str = "open:";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Running,
    Degraded,
    Stopped,
    Attention,
}

/// What the tray shows; the menu is rebuilt only when this changes.
#[derive(Debug, Clone, PartialEq)]
struct Snapshot {
    state: State,
    attached: bool,
    serving: bool,
    paused: bool,
    url: String,
    attention: Vec<Alert>,
    /// The daemon's own attention items (without "server down", which the person may have chosen).
    alerts: Vec<Alert>,
    /// Saved settings (Cursor folders, port) wait for a restart of the hosted daemon.
    restart_pending: bool,
    /// The saved settings, read once per tick for this and for `desktop`.
    settings: Settings,
    /// The latest runs (id, status, prompt's first line): the count going, and ends to notify.
    runs: Vec<(String, RunStatus, String)>,
    /// Today's spend in a line, when the person set a budget.
    spend: Option<String>,
}

fn snapshot(shell: &Shell) -> Snapshot {
    // The daemon hosted here holds the settings; another process's may change them on disk.
    let settings = match &shell.daemon {
        Daemon::Hosted(h) => h.tether.settings(),
        Daemon::Attached { .. } => Settings::load(&shell.paths),
    }
    .unwrap_or_else(|e| {
        tracing::warn!(error = %e, "cannot read the settings; using the defaults");
        Settings::default()
    });
    let url = shell.daemon.mcp_url(&shell.paths);
    let (attached, serving, paused, mut attention) = match &shell.daemon {
        Daemon::Hosted(h) => {
            let attention = tether_core::attention::list(&h.tether).unwrap_or_default();
            (false, h.serving(), h.indexing_paused(), attention)
        }
        Daemon::Attached { tether, .. } => {
            let up = port_of(&url).is_some_and(|p| std::net::TcpStream::connect(("127.0.0.1", p)).is_ok());
            let attention = tether.as_ref().and_then(|t| tether_core::attention::list(t).ok()).unwrap_or_default();
            (true, up, false, attention)
        }
    };
    let tether = match &shell.daemon {
        Daemon::Hosted(h) => Some(&h.tether),
        Daemon::Attached { tether, .. } => tether.as_ref(),
    };
    let runs = tether
        .and_then(|t| t.board().runs().list(&RunFilter { limit: 20, ..Default::default() }).ok())
        .unwrap_or_default()
        .into_iter()
        .map(|r| (r.id, r.status, r.prompt.lines().next().unwrap_or("").chars().take(80).collect()))
        .collect();
    let budgeted = settings.usage.daily_budget.is_some()
        || settings.usage.run_budget.is_some()
        || !settings.usage.role_budgets.is_empty();
    let spend = tether.filter(|_| budgeted).and_then(|t| {
        let me = tether_core::ops::Principal::person(&tether_core::Tether::person());
        tether_core::ops::usage::summary(t, &me).ok().map(|s| s.line)
    });
    let alerts: Vec<Alert> = attention.drain(..).map(|a| Alert::of(&a)).collect();
    let mut lines = alerts.clone();
    if !serving {
        let message = "the MCP server is down: Cursor cannot reach Tether".into();
        lines.insert(0, Alert { message, route: "health".into() });
    }
    let state = if !serving {
        State::Stopped
    } else if !lines.is_empty() {
        State::Attention
    } else if paused {
        State::Degraded
    } else {
        State::Running
    };
    let restart_pending = match &shell.daemon {
        Daemon::Hosted(h) => tether_core::ops::settings::get(&h.tether).is_ok_and(|v| !v.restart_needed.is_empty()),
        Daemon::Attached { .. } => false,
    };
    Snapshot { state, attached, serving, paused, url, attention: lines, alerts, restart_pending, settings, runs, spend }
}

fn port_of(url: &str) -> Option<u16> {
    url.rsplit_once(':')?.1.split('/').next()?.parse().ok()
}

fn icon(state: State) -> tauri::Result<Image<'static>> {
    Image::from_bytes(match state {
        State::Running => include_bytes!("../../icons/tray-running.png"),
        State::Degraded => include_bytes!("../../icons/tray-degraded.png"),
        State::Stopped => include_bytes!("../../icons/tray-stopped.png"),
        State::Attention => include_bytes!("../../icons/tray-attention.png"),
    })
}

fn menu(app: &AppHandle, s: &Snapshot) -> tauri::Result<Menu<Wry>> {
    let status = match (s.state, s.attached) {
        (State::Stopped, _) => "Stopped".to_owned(),
        (_, true) => format!("Running under `tether serve` — {}", s.url),
        (State::Degraded, _) => format!("Running, indexing paused — {}", s.url),
        _ => format!("Running — {}", s.url),
    };
    let going = s.runs.iter().filter(|r| r.1 == RunStatus::Running).count();
    let status =
        if going > 0 { format!("{status} · {going} run{} going", if going == 1 { "" } else { "s" }) } else { status };
    let owned = !s.attached;
    let item = |id: &str, text: &str, enabled: bool| MenuItem::with_id(app, id, text, enabled, None::<&str>);
    let mut attention = SubmenuBuilder::new(app, format!("Needs attention ({})", s.attention.len()));
    if s.attention.is_empty() {
        attention = attention.item(&item("attention-none", "Nothing needs attention", false)?);
    }
    for a in s.attention.iter().take(8) {
        attention = attention.item(&item(&format!("{OPEN_PREFIX}{}", a.route), &a.message, true)?);
    }
    MenuBuilder::new(app)
        .item(&item("open", "Open Tether", true)?)
        .item(&item("status", &status, false)?)
        .item(&item("copy-url", "Copy MCP URL", true)?)
        .item(&PredefinedMenuItem::separator(app)?)
        .item(&item("server-toggle", if s.serving { "Stop MCP server" } else { "Start MCP server" }, owned)?)
        .item(&item("server-restart", "Restart MCP server", owned && s.serving)?)
        .item(&item("index-toggle", if s.paused { "Resume indexing" } else { "Pause indexing" }, owned)?)
        .item(&PredefinedMenuItem::separator(app)?)
        .item(&attention.build()?)
        .item(&PredefinedMenuItem::separator(app)?)
        .item(&item("open-data", "Open data folder", true)?)
        .item(&item(
            "restart-app",
            if s.restart_pending { "Restart Tether to apply settings" } else { "Restart Tether" },
            owned,
        )?)
        .item(&item("quit", "Quit Tether", true)?)
        .build()
}

pub fn build(app: &AppHandle) -> tauri::Result<()> {
    let shell = Arc::clone(&app.state::<Arc<Shell>>());
    let first = snapshot(&shell);
    TrayIconBuilder::with_id(TRAY_ID)
        .icon(icon(first.state)?)
        .tooltip("Tether")
        .menu(&menu(app, &first)?)
        .show_menu_on_left_click(true)
        .on_menu_event(|app, ev| on_menu(app, ev.id().as_ref()))
        .build(app)?;
    let handle = app.clone();
    // Hosted here, the daemon's bus says when something the tray shows may have changed: the tray
    // sleeps until then (and looks once a minute, for what only the clock changes). Attached to
    // another process's daemon it has no bus, and looks every few seconds.
    let (wake, woken) = std::sync::mpsc::channel::<()>();
    let net = match &shell.daemon {
        Daemon::Hosted(h) => {
            let mut bus = h.tether.bus.subscribe();
            let wake = wake.clone();
            tauri::async_runtime::spawn(async move {
                use tether_core::events::Event;
                use tokio::sync::broadcast::error::RecvError;
                loop {
                    match bus.recv().await {
                        // Chats changing (Cursor writing) is nothing the tray shows.
                        Ok(Event::Sessions { .. }) => {}
                        Ok(_) | Err(RecvError::Lagged(_)) => {
                            if wake.send(()).is_err() {
                                return;
                            }
                        }
                        Err(RecvError::Closed) => return,
                    }
                }
            });
            Duration::from_secs(60)
        }
        Daemon::Attached { .. } => Duration::from_secs(3),
    };
    std::thread::Builder::new().name("tray-status".into()).spawn(move || {
        let _wake = wake;
        let mut desktop = crate::desktop::Desktop::default();
        desktop.tick(&handle, &first.settings, &first.alerts, &first.runs);
        let mut last = first;
        loop {
            if woken.recv_timeout(net).is_ok() {
                // A burst of events (a run's progress, an index pass) is one look, at most
                // one a second.
                std::thread::sleep(Duration::from_secs(1));
                while woken.try_recv().is_ok() {}
            }
            let now = snapshot(&shell);
            desktop.tick(&handle, &now.settings, &now.alerts, &now.runs);
            if now != last {
                refresh(&handle, &now);
                last = now;
            }
        }
    })?;
    Ok(())
}

fn refresh(app: &AppHandle, s: &Snapshot) {
    let Some(tray) = app.tray_by_id(TRAY_ID) else { return };
    let r = (|| -> tauri::Result<()> {
        tray.set_icon(Some(icon(s.state)?))?;
        tray.set_menu(Some(menu(app, s)?))?;
        let going = s.runs.iter().filter(|r| r.1 == RunStatus::Running).count();
        let runs =
            if going > 0 { format!(", {going} run{} going", if going == 1 { "" } else { "s" }) } else { String::new() };
        let spend = s.spend.as_deref().map(|l| format!("\n{l}")).unwrap_or_default();
        tray.set_tooltip(Some(format!("Tether — {:?}{runs}{spend}", s.state)))
    })();
    if let Err(e) = r {
        tracing::warn!(error = %e, "cannot update the tray");
    }
}

fn on_menu(app: &AppHandle, id: &str) {
    let shell = Arc::clone(&app.state::<Arc<Shell>>());
    let hosted = match &shell.daemon {
        Daemon::Hosted(h) => Some(Arc::clone(h)),
        Daemon::Attached { .. } => None,
    };
    let result: anyhow::Result<()> =
        match (id, hosted) {
            ("open", _) => crate::shell::open_window(app),
            (id, _) if id.starts_with(OPEN_PREFIX) => crate::shell::open_window_at(app, Some(&id[OPEN_PREFIX.len()..])),
            ("copy-url", _) => app.clipboard().write_text(shell.daemon.mcp_url(&shell.paths)).map_err(Into::into),
            ("server-toggle", Some(h)) => tauri::async_runtime::block_on(async move {
                if h.serving() { h.stop_server().await } else { h.start_server() }
            })
            .map_err(Into::into),
            ("server-restart", Some(h)) => tauri::async_runtime::block_on(async move {
                h.stop_server().await?;
                h.start_server()
            })
            .map_err(Into::into),
            ("index-toggle", Some(h)) => {
                let _g = tauri::async_runtime::handle().inner().enter();
                if h.indexing_paused() {
                    h.resume_indexing()
                } else {
                    h.pause_indexing()
                }
                Ok(())
            }
            ("open-data", _) => {
                #[allow(deprecated)] // the card names tauri-plugin-shell; its `open` is the scoped way to do this
                let r = app.shell().open(shell.paths.data_dir.to_string_lossy(), None);
                r.map_err(Into::into)
            }
            ("restart-app", Some(_)) => {
                crate::shell::stop_daemon(app);
                app.restart()
            }
            ("quit", _) => {
                crate::shell::stop_daemon(app);
                app.exit(0);
                Ok(())
            }
            _ => Ok(()),
        };
    if let Err(e) = result {
        tracing::warn!(error = %e, action = id, "tray action failed");
    }
    refresh(app, &snapshot(&shell));
}
