//! The benchmark's command line (a leaf: the suites read their options from it).

use std::path::PathBuf;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(about = "Tether benchmarks: index MB/s, peak RSS, search percentiles, change-to-searchable latency")]
pub(crate) struct Args {
    #[command(subcommand)]
    pub(crate) cmd: Option<Cmd>,
    /// Size of the generated Cursor DB in MB.
    #[arg(long, default_value_t = 1024)]
    pub(crate) size_mb: u64,
    /// Where generated data lives (reused between runs when the size and seed match).
    #[arg(long, default_value = "target/bench-data")]
    pub(crate) dir: PathBuf,
    /// Markdown report to write; `-` for none.
    #[arg(long, default_value = "docs/benchmarks.md")]
    pub(crate) out: String,
    /// Rounds over the fixed query set.
    #[arg(long, default_value_t = 20)]
    pub(crate) rounds: usize,
    /// Files in the worktree benchmark's repository (10,000 for the goal; fewer for a smoke).
    #[arg(long, default_value_t = 10_000)]
    pub(crate) worktree_files: usize,
    /// Messages appended for the change-to-searchable measurement.
    #[arg(long, default_value_t = 40)]
    pub(crate) changes: usize,
    #[arg(long, default_value_t = 42)]
    pub(crate) seed: u64,
    /// Which benchmarks to run: the index and search (`index`), the MCP endpoint (`mcp`), the
    /// signals doorbell (`signals`, needs no generated data), team mode on PostgreSQL (`team`:
    /// claims, a bell across machines, idle runners' cost), a run's worktree and diff
    /// (`worktrees`), code origin's blame and capture (`trace`), or all of them. `engines` (FTS5 next to tantivy, see bench/engines) and
    /// `usage` (the usage report over a heavy user's year, in a store of its own) and `gui` (the
    /// GUI at scale in Chromium) only run when asked for. `live` (what Tether costs while the
    /// person works: idle, and Cursor streaming an answer) is part of `all`.
    #[arg(long, default_value = "all", value_parser = ["all", "index", "mcp", "signals", "team", "runs", "worktrees", "trace", "usage", "engines", "gui", "live"])]
    pub(crate) suite: String,
    /// Seconds of each window of the `live` suite (idle, then Cursor streaming an answer).
    #[arg(long, default_value_t = 60.0)]
    pub(crate) live_secs: f64,
    /// The GUI benchmark: chats in the generated history, messages of its one long chat, events of
    /// its one run, times each view is opened, and the built UI it serves.
    #[arg(long, default_value_t = 50_000)]
    pub(crate) gui_chats: u64,
    #[arg(long, default_value_t = 5000)]
    pub(crate) gui_long_chat: usize,
    #[arg(long, default_value_t = 100_000)]
    pub(crate) gui_run_events: usize,
    #[arg(long, default_value_t = 10)]
    pub(crate) gui_reps: usize,
    #[arg(long, default_value = "ui/dist")]
    pub(crate) gui_ui_dir: PathBuf,
    /// Times each usage query is measured (after 3 warm-ups) in the usage benchmark.
    #[arg(long, default_value_t = 40)]
    pub(crate) usage_reps: usize,
    /// Events the fake Cursor CLI writes in the runs benchmark, and at what rate (per second).
    #[arg(long, default_value_t = 6000)]
    pub(crate) run_events: usize,
    #[arg(long, default_value_t = 2000)]
    pub(crate) run_rate: usize,
    /// MCP sessions holding GET streams in the signals benchmark.
    #[arg(long, default_value_t = 200)]
    pub(crate) signal_sessions: usize,
    /// Signals sent one at a time in the signals benchmark.
    #[arg(long, default_value_t = 1000)]
    pub(crate) signal_sends: usize,
    /// Runner daemons idling over an empty queue in the team benchmark, and for how long (s).
    #[arg(long, default_value_t = 50)]
    pub(crate) team_runners: usize,
    #[arg(long, default_value_t = 20.0)]
    pub(crate) team_secs: f64,
    /// Single task claims, and signals sent across machines, in the team benchmark.
    #[arg(long, default_value_t = 500)]
    pub(crate) team_claims: usize,
    #[arg(long, default_value_t = 200)]
    pub(crate) team_bells: usize,
    /// Sequential MCP tool calls measured on tether (a quarter of that on the Python server).
    #[arg(long, default_value_t = 4000)]
    pub(crate) mcp_calls: usize,
    /// Seconds of calls at concurrency 8, per server.
    #[arg(long, default_value_t = 5.0)]
    pub(crate) mcp_secs: f64,
}

#[derive(Subcommand)]
pub(crate) enum Cmd {
    /// Internal: index in a child process so its peak RSS is measured alone.
    IndexChild {
        home: PathBuf,
        user_dir: PathBuf,
        #[arg(long, default_value_t = 42)]
        seed: u64,
    },
    /// Only the search rounds, on the index the last full run left in `<dir>/home` (for quick
    /// iterations on search; the report comes from a full run).
    SearchOnly,
    /// Only the change → searchable rounds (`--changes`), on the index the last full run left
    /// in `<dir>/home` (for quick iterations and profiles of the watcher's passes).
    ChangeOnly,
    /// Only generate (or reuse) the Cursor DB in `<dir>/cursor/User` (for scripts/bench-profile).
    Generate,
}
