//! Tether's desktop shell: a window showing the daemon's GUI and a tray icon with the daemon's
//! state and controls. It hosts the same daemon as `tether serve` in-process
//! (`tether_daemon::Host`), or attaches to one that already holds the data dir.
//!
//! A thin host: no index, task or session logic here, only window, tray and process wiring.
//! The window loads the daemon's own GUI through a one-time login link, so the page never sees
//! the token and gets no Tauri IPC (capabilities/default.json grants nothing).

#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

// mimalloc rather than glibc's malloc: ~15% less CPU on a first index (docs/benchmarks.md).
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod desktop;
mod links;
mod shell;
mod tray;

use std::sync::Arc;
use std::time::Instant;

use tauri::Manager;
use tether_core::{CursorLocations, Paths};

use shell::{Shell, open_window, show_window, start_or_attach, stop_daemon};

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
    let port = tether_daemon::choose_port(
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
