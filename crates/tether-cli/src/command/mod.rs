//! One module per verb of `tether`: its arguments (clap derive), its `run` and its text output.
//! A verb maps its arguments onto an operation of `tether_core::ops` and the result back; what
//! is not an operation (the daemon, the MCP server, tokens, Cursor's config) it calls directly.
//! Verbs do not depend on main.rs; what several share lives in `render` and `rt`.

pub mod agents;
pub mod cloud;
pub mod cursor_key;
pub mod doctor;
pub mod github;
pub mod hook;
pub mod index;
pub mod init;
pub mod mcp;
pub mod open;
pub mod run;
pub mod runs;
pub mod serve;
pub mod sessions;
pub mod settings;
pub mod signal;
pub mod signals;
pub mod stats;
pub mod task;
pub mod team;
pub mod token;
pub mod trace;
pub mod usage;

use tether_core::Tether;
use tether_core::ops::Principal;

/// The person at the CLI: `--as` where a verb takes it, else who [`Tether::person`] says
/// (`TETHER_USER`, the login name, `me`). The CLI always acts as the person.
pub fn me(as_user: Option<&str>) -> Principal {
    let name = as_user.map(str::trim).filter(|n| !n.is_empty()).map_or_else(Tether::person, str::to_owned);
    Principal::person(&name)
}

/// The daemon holding this data dir, when one runs. A change it holds in memory (settings, the
/// team's board, the MCP token) is made through its API, so it holds there when the command
/// returns; written here instead, the daemon would follow only later (a file watch) or not at
/// all until it restarts (the board it is on).
pub fn daemon(paths: &tether_core::Paths) -> anyhow::Result<Option<tether_server::client::Daemon>> {
    Ok(tether_server::client::Daemon::running(paths)?)
}

/// Saves a settings patch (the JSON `PATCH /api/settings` takes): through the running daemon,
/// else here. The settings as saved.
pub fn save_settings(t: &Tether, patch: serde_json::Value) -> anyhow::Result<tether_core::settings::Settings> {
    if let Some(d) = daemon(&t.paths)? {
        let view = d.call("PATCH", "/api/settings", Some(&patch))?;
        return Ok(serde_json::from_value(view["settings"].clone())?);
    }
    let patch: tether_core::settings::SettingsPatch =
        serde_json::from_value(patch).map_err(|e| tether_core::Error::invalid("settings", e.to_string()))?;
    Ok(tether_core::ops::settings::update(t, &me(None), &patch)?.settings)
}
