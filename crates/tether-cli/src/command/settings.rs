//! `tether settings`: the saved settings, one dotted key at a time (`ops::settings`). A change is
//! made by the running daemon when there is one (so it holds there as the command returns), else
//! saved to `settings.json` here.

use std::time::{Duration, Instant};

use anyhow::Context;
use clap::Subcommand;
use serde_json::Value;
use tether_core::settings::{Settings, SettingsPatch};
use tether_core::{Paths, Tether, ops};

use crate::render::{self, JsonFlag};

#[derive(Debug, Subcommand)]
pub enum SettingsCmd {
    /// Print every setting.
    Show(JsonFlag),
    /// Print one setting, e.g. `runs.max_total`.
    Get { key: String },
    /// Change one setting: `port 48000`, `runs.max_total 4`, `signal_sla_minutes.question 15`,
    /// `cursor_home ~/elsewhere/.cursor`, `runs.roots '["/src/a","/src/b"]'`. An empty value
    /// ("") puts a folder, the port or the Cursor CLI back to the default.
    Set {
        key: String,
        #[arg(allow_hyphen_values = true)]
        value: String,
    },
}

pub fn run(t: &Tether, cmd: SettingsCmd) -> anyhow::Result<()> {
    match cmd {
        SettingsCmd::Show(o) => {
            let s = serde_json::to_value(ops::settings::get(t)?.settings)?;
            if o.json {
                return render::json(&s);
            }
            let mut lines = Vec::new();
            flatten("", &s, &mut lines);
            for (k, v) in lines {
                println!("{k} = {v}");
            }
            Ok(())
        }
        SettingsCmd::Get { key } => {
            let s = serde_json::to_value(ops::settings::get(t)?.settings)?;
            let v = key
                .split('.')
                .try_fold(&s, |v, k| v.get(k))
                .with_context(|| format!("no setting “{key}” (see `tether settings show`)"))?;
            match v {
                Value::String(text) => println!("{text}"),
                other => println!("{other}"),
            }
            Ok(())
        }
        SettingsCmd::Set { key, value } => {
            let before = ops::settings::get(t)?.settings;
            let (patch, _) = SettingsPatch::key_json(&key, &value)?;
            let after = super::save_settings(t, patch)?;
            println!("Saved {key} in {}.", t.paths.settings_json().display());
            report_daemon(&t.paths, &before, &after);
            Ok(())
        }
    }
}

/// `runs.max_total = 3` lines, in the file's order.
fn flatten(prefix: &str, v: &Value, out: &mut Vec<(String, String)>) {
    match v {
        Value::Object(m) if !m.is_empty() => {
            for (k, child) in m {
                let key = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                flatten(&key, child, out);
            }
        }
        Value::Null => out.push((prefix.to_owned(), "(default)".into())),
        Value::String(s) => out.push((prefix.to_owned(), s.clone())),
        other => out.push((prefix.to_owned(), other.to_string())),
    }
}

/// A running daemon moves to a new saved port by itself: wait briefly and say where it is.
fn report_daemon(paths: &Paths, before: &Settings, after: &Settings) {
    let Some(daemon) = tether_core::daemon::running(paths) else { return };
    if before.port == after.port {
        if before.cursor_dirs() != after.cursor_dirs() {
            println!(
                "The running daemon reads Cursor's chats from the new folder now (unless it was started with one)."
            );
        }
        return;
    }
    let wanted = after.port.unwrap_or(tether_core::settings::DEFAULT_PORT);
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        match tether_core::daemon::running(paths) {
            Some(d) if d.port == Some(wanted) => {
                println!(
                    "The daemon moved to {}. Cursor still names the old URL: run `tether init` again where you ran it.",
                    d.url.unwrap_or_default()
                );
                return;
            }
            Some(_) => std::thread::sleep(Duration::from_millis(100)),
            None => return,
        }
    }
    println!(
        "The daemon still listens on port {} (started with --port or TETHER_PORT, or port {wanted} is taken: see its log).",
        daemon.port.map_or_else(|| "?".into(), |p| p.to_string())
    );
}
