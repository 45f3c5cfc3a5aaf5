//! What the desktop adds to the daemon: it applies the person's desktop settings (launch at
//! login, notifications for new "needs attention" items and for runs that end, which open the
//! window on what they are about when clicked). The settings live in the data dir (`tether_core::settings`) and may be
//! changed by any GUI, ours or a browser's, so they are re-read on every tray tick.
//!
//! No daemon logic here; nothing in the page can reach these functions (it has no IPC).

use std::collections::HashSet;

use tauri::AppHandle;
use tauri_plugin_autostart::ManagerExt;
use tauri_plugin_notification::NotificationExt;
use tether_core::model::runs::RunStatus;
use tether_core::settings::Settings;

/// Passed by the login entry, so a start at login stays in the tray.
pub const MINIMIZED_ARG: &str = "--minimized";

/// Reconciles the desktop settings with the system, once per tray tick.
#[derive(Default)]
pub struct Desktop {
    autostart_applied: Option<bool>,
    seen: HashSet<String>,
    started: bool,
    /// Runs that were queued or running on the last tick: when one ends, the person hears of it.
    going: HashSet<String>,
}

/// Something that needs the person, and the GUI route that shows it (e.g. `inbox/S-4`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Alert {
    pub message: String,
    pub route: String,
}

impl Alert {
    pub fn of(a: &tether_core::attention::Attention) -> Self {
        let route = match a.kind {
            "question_for_human" | "obligation_overdue" => format!("inbox/{}", a.subject),
            "idle_with_task" => "agents".to_owned(),
            _ => "health".to_owned(),
        };
        Self { message: a.message.clone(), route }
    }
}

/// The route a notification carries, so a click on it can open the window there.
const ROUTE: &str = "route";

/// A click on one of our notifications opens the window on what it is about.
pub fn follow_notification_clicks(app: &AppHandle) {
    let handle = app.clone();
    let r = app.notification().on_action(move |done| {
        if done.action_id() != "tap" {
            return;
        }
        let route = done.notification().and_then(|n| n.extra().get(ROUTE)).and_then(|v| v.as_str()).map(str::to_owned);
        let app = handle.clone();
        let shown = handle.run_on_main_thread(move || {
            if let Err(e) = crate::shell::open_window_at(&app, route.as_deref()) {
                tracing::warn!(error = %e, "cannot open the window a notification is about");
            }
        });
        if let Err(e) = shown {
            tracing::warn!(error = %e, "cannot open the window a notification is about");
        }
    });
    if let Err(e) = r {
        tracing::warn!(error = %e, "notification clicks will not open the window");
    }
}

fn notify(app: &AppHandle, title: &str, body: &str, route: &str) {
    let r = app.notification().builder().title(title).body(body).extra(ROUTE, route).show();
    if let Err(e) = r {
        tracing::warn!(error = %e, "cannot show a notification");
    }
}

impl Desktop {
    /// `alerts` are the daemon's attention items now; the ones not seen on the last tick are
    /// notified (not those already there when the app started: the tray lists them).
    pub fn tick(
        &mut self,
        app: &AppHandle,
        settings: &Settings,
        alerts: &[Alert],
        runs: &[(String, RunStatus, String)],
    ) {
        if self.autostart_applied != Some(settings.launch_at_login) {
            match apply_autostart(app, settings.launch_at_login) {
                Ok(()) => self.autostart_applied = Some(settings.launch_at_login),
                Err(e) => {
                    tracing::warn!(error = %e, "cannot change launch at login");
                    // Do not retry every tick; a later change of the setting tries again.
                    self.autostart_applied = Some(settings.launch_at_login);
                }
            }
        }
        if self.started && settings.notifications {
            for a in alerts.iter().filter(|a| !self.seen.contains(&a.message)) {
                notify(app, "Tether needs attention", &a.message, &a.route);
            }
            for (id, status, prompt) in runs.iter().filter(|r| r.1.is_terminal() && self.going.contains(&r.0)) {
                let title = format!("Run {id} {}", status.as_str().replace('_', " "));
                notify(app, &title, prompt, &format!("runs/{id}"));
            }
        }
        self.going = runs.iter().filter(|r| !r.1.is_terminal()).map(|r| r.0.clone()).collect();
        self.seen = alerts.iter().map(|a| a.message.clone()).collect();
        self.started = true;
    }
}

/// Only touches the login entry when it differs, so a person who never enabled it never gets a
/// file written into their autostart folder.
fn apply_autostart(app: &AppHandle, on: bool) -> Result<(), tauri_plugin_autostart::Error> {
    let al = app.autolaunch();
    match (on, al.is_enabled()?) {
        (true, false) => al.enable(),
        (false, true) => al.disable(),
        _ => Ok(()),
    }
}
