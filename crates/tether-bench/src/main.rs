//! `tether-bench`: generates an era-mixed Cursor DB and measures what users feel — full index
//! throughput (against a raw SQLite scan of the same file, side by side), peak RSS of the indexer,
//! search latency percentiles over a fixed query set, and how long a committed message takes to
//! become searchable while the watcher runs; the other suites (MCP, signals, runs, worktrees, code origin, usage)
//! measure their own areas. Writes the figures to `docs/benchmarks.md`.
//!
//! Uses only tether-core's public API and the test kit's generator; never touches real Cursor data.

use std::path::PathBuf;

use clap::Parser;
use serde_json::{Value, json};

mod args;
mod engines;
mod gui;
mod index;
mod live;
mod mcp;
mod report;
mod runs;
mod signals;
mod team;
mod trace;
mod usage;
mod worktrees;

// The shipped binaries' allocator, so the figures are theirs.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

use args::{Args, Cmd};
use report::{render_section, replace_section};

fn main() -> anyhow::Result<()> {
    // The MCP and run suites build HTTP clients (rmcp's, reqwest's).
    tether_cloud::install_tls_provider();
    let args = Args::parse();
    if let Some(Cmd::IndexChild { home, user_dir, seed }) = &args.cmd {
        return index::index_child(home, user_dir, *seed);
    }
    if let Some(Cmd::SearchOnly) = &args.cmd {
        return index::search_only(&args);
    }
    if let Some(Cmd::ChangeOnly) = &args.cmd {
        return index::change_only(&args);
    }
    if let Some(Cmd::Generate) = &args.cmd {
        std::fs::create_dir_all(&args.dir)?;
        let dir = std::fs::canonicalize(&args.dir)?;
        let stats = index::generated(&args, &dir)?;
        println!("{}", json!({"user_dir": dir.join("cursor/User"), "stats": stats}));
        return Ok(());
    }
    run(&args)
}

fn run(args: &Args) -> anyhow::Result<()> {
    std::fs::create_dir_all(&args.dir)?;
    let dir = std::fs::canonicalize(&args.dir)?;
    let user_dir = dir.join("cursor/User");
    let db = user_dir.join("globalStorage/state.vscdb");
    let gen_stats =
        if matches!(args.suite.as_str(), "signals" | "team" | "runs" | "worktrees" | "usage" | "trace" | "gui") {
            Value::Null
        } else {
            index::generated(args, &dir)?
        };
    let mut sections = Vec::new();
    if matches!(args.suite.as_str(), "all" | "index") {
        sections.push(("index", index::index_suite(args, &dir, &user_dir, &db, &gen_stats)?));
    }
    if args.suite == "engines" {
        sections.push(("engines", engines::run(&dir, &user_dir, args.seed)?));
    }
    if matches!(args.suite.as_str(), "all" | "live") {
        let f = live::run(&dir, &user_dir, args.live_secs, args.size_mb)?;
        sections
            .push(("live", render_section("While the person works: idle, and Cursor streaming", &f.setup, &f.rows)));
    }
    if matches!(args.suite.as_str(), "all" | "mcp") {
        let f = mcp::run(&dir, &user_dir, args.mcp_calls, args.mcp_secs)?;
        sections.push(("mcp", mcp::render(&f)));
    }
    if matches!(args.suite.as_str(), "all" | "signals") {
        let f = signals::run(&dir, args.signal_sessions, args.signal_sends)?;
        sections.push(("signals", render_section("Signals: the doorbell", &f.setup, &f.rows)));
    }
    if matches!(args.suite.as_str(), "all" | "team") {
        let f = team::run(&dir, args.team_runners, args.team_secs, args.team_claims, args.team_bells)?;
        sections.push(("team", render_section("Team mode on PostgreSQL", &f.setup, &f.rows)));
    }
    if matches!(args.suite.as_str(), "all" | "runs") {
        let f = runs::run(&dir, args.run_events, args.run_rate)?;
        sections.push(("runs", render_section("Agent runs: events to the GUI", &f.setup, &f.rows)));
    }
    if matches!(args.suite.as_str(), "all" | "worktrees") {
        let f = worktrees::run(&dir, args.rounds.clamp(1, 5), args.worktree_files)?;
        sections.push(("worktrees", render_section("Run worktrees: making one, and a run's diff", &f.setup, &f.rows)));
    }
    if matches!(args.suite.as_str(), "all" | "trace") {
        let f = trace::run(&dir, args.rounds.clamp(1, 10))?;
        sections.push(("trace", render_section("Code origin: blame and capture", &f.setup, &f.rows)));
    }
    // Not part of `all`: while the report misses its goal, 40 rounds of each query take minutes.
    if args.suite == "usage" {
        let f = usage::run(&dir, args.seed, args.usage_reps)?;
        sections.push(("usage", render_section("Usage queries", &f.setup, &f.rows)));
    }
    if args.suite == "gui" {
        let o = gui::GuiOptions {
            chats: args.gui_chats,
            long_chat: args.gui_long_chat,
            run_events: args.gui_run_events,
            reps: args.gui_reps,
            ui_dir: args.gui_ui_dir.clone(),
            seed: args.seed,
        };
        let f = gui::run(&dir, &o)?;
        sections.push(("gui", render_section("GUI at scale", &f.setup, &f.rows)));
    }
    for (_, text) in &sections {
        println!("{text}");
    }
    if args.out != "-" {
        let path = PathBuf::from(&args.out);
        if let Some(p) = path.parent() {
            std::fs::create_dir_all(p)?;
        }
        let mut doc = std::fs::read_to_string(&path).unwrap_or_default();
        for (name, text) in &sections {
            doc = replace_section(&doc, name, text);
        }
        std::fs::write(&path, doc)?;
        eprintln!("wrote {}", path.display());
    }
    Ok(())
}
