//! `tether index`: index Cursor's chats once (with a progress bar on a terminal) and report each
//! source's status.

use std::io::IsTerminal;

use clap::Args;
use tether_core::Tether;
use tether_core::model::sessions::{Depth, IndexReport, Progress};

use crate::render::{self, JsonFlag, home_short, tally};

#[derive(Debug, Args)]
pub struct IndexArgs {
    /// Re-read every session, ignoring what is unchanged.
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub out: JsonFlag,
}

pub fn run(t: &Tether, a: IndexArgs) -> anyhow::Result<()> {
    let depth = if a.force { Depth::Force } else { Depth::Deep };
    let report = with_progress(!a.out.json, |p| t.index(depth, p))?;
    a.out.print(&report, print_report)
}

/// Run `f` with a progress bar on a terminal; plain otherwise.
fn with_progress<T>(show: bool, f: impl FnOnce(&(dyn Fn(&Progress) + Sync)) -> T) -> T {
    if !show || !std::io::stderr().is_terminal() {
        return f(&|_| {});
    }
    let bar = render::progress_bar();
    let cb = |p: &Progress| match p {
        Progress::Started { sources } => {
            bar.set_length(*sources as u64);
            bar.set_message("indexing");
        }
        Progress::Source { index, path, kind } => {
            bar.set_position(*index as u64);
            bar.set_message(format!("{}: {}", kind.as_str(), path.rsplit('/').nth(1).unwrap_or(path)));
        }
        other => render::show_progress(&bar, other),
    };
    f(&cb)
}

fn print_report(r: &IndexReport) {
    for s in &r.sources {
        let mut line = format!(
            "{:<9} {:<10} {:>5} chats {:>7} msgs  {}",
            s.status,
            s.kind.as_str(),
            s.sessions,
            s.messages,
            home_short(&s.path)
        );
        if !s.reasons.is_empty() {
            line.push_str(&format!("  [{}]", tally(&s.reasons)));
        }
        if let Some(e) = &s.error {
            line.push_str(&format!("  error: {e}"));
        }
        println!("{line}");
    }
    println!(
        "{} chats, {} messages indexed; {} updated, {} removed in {:.1}s.",
        r.sessions_total,
        r.messages_total,
        r.sessions_written,
        r.sessions_deleted,
        r.elapsed_ms as f64 / 1000.0
    );
    if r.sources.is_empty() {
        println!("No Cursor data found. See `tether doctor` for the places Tether looked, or pass --cursor-dir.");
    }
}
