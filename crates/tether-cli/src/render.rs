//! Terminal output shared by several verbs: stdout that tolerates a closed pipe, `--json`,
//! colours, columns, local times, paths, and the indexing progress bar. What only one verb shows
//! is rendered in that verb's file. JSON output is serde's, straight from core types.

use std::io::IsTerminal;

use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use tether_core::model::sessions::Progress;
use tether_core::model::sessions::Tally;

/// Behind this crate's `println!` and `print!` (see main.rs): a closed stdout (`tether … | head
/// -c 1`) ends the process quietly instead of panicking, as std's do.
pub fn write_stdout(args: std::fmt::Arguments<'_>) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_fmt(args).and_then(|()| out.flush()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("error: writing to stdout: {e}");
        std::process::exit(1);
    }
}

#[derive(Debug, Args)]
pub struct JsonFlag {
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

impl JsonFlag {
    /// `v` as JSON with `--json`, else as `text` renders it.
    pub fn print<T: serde::Serialize + ?Sized>(&self, v: &T, text: impl FnOnce(&T)) -> anyhow::Result<()> {
        if self.json {
            json(v)
        } else {
            text(v);
            Ok(())
        }
    }
}

pub fn json<T: serde::Serialize + ?Sized>(v: &T) -> anyhow::Result<()> {
    println!("{}", serde_json::to_string_pretty(v)?);
    Ok(())
}

/// An export: to the file when one is given (saying so on stderr), else to stdout.
pub fn to_file_or_stdout(path: Option<&std::path::Path>, text: &str) -> anyhow::Result<()> {
    use anyhow::Context;
    match path {
        Some(p) => {
            std::fs::write(p, text).with_context(|| format!("writing {}", p.display()))?;
            eprintln!("Wrote {}", p.display());
        }
        None if text.ends_with('\n') => print!("{text}"),
        None => println!("{text}"),
    }
    Ok(())
}

pub fn color() -> bool {
    std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none()
}

pub fn bold(s: &str) -> String {
    if color() { format!("\x1b[1m{s}\x1b[0m") } else { s.to_owned() }
}

pub fn dim(s: &str) -> String {
    if color() { format!("\x1b[2m{s}\x1b[0m") } else { s.to_owned() }
}

/// RFC 3339 → local `YYYY-MM-DD HH:MM`.
pub fn local_time(iso: Option<&str>) -> String {
    iso.and_then(|s| chrono::DateTime::parse_from_rfc3339(s).ok())
        .map(|d| d.with_timezone(&chrono::Local).format("%Y-%m-%d %H:%M").to_string())
        .unwrap_or_else(|| "—".into())
}

pub fn home_short(p: &str) -> String {
    match std::env::var("HOME") {
        Ok(h) if !h.is_empty() && p.starts_with(&h) => format!("~{}", &p[h.len()..]),
        _ => p.to_owned(),
    }
}

/// A path shortened to `max` characters for a column (home as `~`, the end kept).
pub fn cut_path(p: &str, max: usize) -> String {
    let h = home_short(p);
    let n = h.chars().count();
    if n <= max { h } else { format!("…{}", h.chars().skip(n + 1 - max).collect::<String>()) }
}

pub fn cut(s: &str, max: usize) -> String {
    tether_core::model::sessions::truncate_chars(s, max)
}

/// Counted reasons, `unreadable×2, truncated×1`.
pub fn tally(t: &Tally) -> String {
    t.0.iter().map(|(k, v)| format!("{k}×{v}")).collect::<Vec<_>>().join(", ")
}

pub fn progress_bar() -> ProgressBar {
    let bar = ProgressBar::new(0);
    bar.set_style(
        ProgressStyle::with_template("{spinner} {msg:40!} [{bar:30}] {pos}/{len}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar
}

/// The chats of a Cursor DB: listed, then read newest first, with a count and an ETA.
pub fn show_progress(bar: &ProgressBar, p: &Progress) {
    match p {
        Progress::Listed { sessions } if *sessions > 0 => {
            bar.println(format!("tether: {sessions} chats listed; reading them, newest first"));
        }
        Progress::Sessions { done, total, eta_ms, .. } => {
            bar.set_length(*total);
            bar.set_position(*done);
            let eta = eta_ms.filter(|_| done < total).map(|ms| format!(", about {} s left", ms.div_ceil(1000)));
            bar.set_message(format!("indexing chats{}", eta.unwrap_or_default()));
        }
        Progress::Finished { .. } => bar.finish_and_clear(),
        _ => {}
    }
}
