//! The `tether` binary: the top-level parser, one verb per module under `command/`, and the one
//! place an error becomes the exit code and `error[code]: message`. No business logic here.

// `println!` and `print!` for this crate: a closed stdout (`tether … | head -c 1`) ends the
// process quietly instead of panicking, as std's do. Defined before the modules so it shadows
// std's in all of them.
macro_rules! println {
    () => { $crate::render::write_stdout(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::render::write_stdout(format_args!("{}\n", format_args!($($arg)*))) };
}
macro_rules! print {
    ($($arg:tt)*) => { $crate::render::write_stdout(format_args!($($arg)*)) };
}

// mimalloc rather than glibc's malloc: ~15% less CPU on a first index (docs/benchmarks.md).
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod command;
mod render;
mod rt;

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Parser, Subcommand};
use tether_core::settings::Settings;
use tether_core::{CursorLocations, Paths, Tether};

use command::{
    agents, cloud, cursor_key, doctor, github, hook, index, init, mcp, open, run, runs, serve, sessions, settings,
    signal, signals, stats, task, team, token, trace, usage,
};

/// Tether: search, read, tag and export your Cursor chat history.
///
/// Tether indexes Cursor's chats (IDE and CLI, every storage era) read-only into its own
/// database. Its data dir is $TETHER_HOME, else the platform data dir.
#[derive(Debug, Parser)]
#[command(name = "tether", version, propagate_version = true, max_term_width = 100)]
struct Cli {
    /// Cursor's `User` directory (holding globalStorage/ and workspaceStorage/), when it is not
    /// in the default place.
    #[arg(long, global = true, env = "TETHER_CURSOR_DIR", value_name = "DIR")]
    cursor_dir: Option<PathBuf>,

    /// More log output on stderr (repeat for more).
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    verbose: u8,

    #[command(subcommand)]
    command: Command,
}

// Parsed once per run: boxing the larger variants would buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
enum Command {
    /// Index Cursor's chats once and report each source's status.
    Index(index::IndexArgs),
    /// Run the headless daemon: index, keep the index fresh and serve MCP on loopback until SIGINT/SIGTERM.
    Serve(serve::ServeArgs),
    /// Serve the MCP tools over stdin/stdout (for clients without HTTP). Logs go to stderr.
    #[command(subcommand)]
    Mcp(mcp::McpCmd),
    /// Show, rotate or relocate the MCP bearer token (kept in the OS keyring).
    #[command(subcommand)]
    Token(token::TokenCmd),
    /// Set Cursor up to use Tether: the MCP server entry, hooks, a rule and slash commands
    /// (--plugin: the same as a Cursor 3 local plugin).
    Init(init::InitArgs),
    /// Remove exactly what `tether init` added for the same project (or --global, or --plugin).
    Uninit(init::InitArgs),
    /// Called by Cursor's hooks: reports the event to the daemon, never blocks Cursor.
    Hook(hook::HookArgs),
    /// Open Tether's GUI in your browser, logged in (the daemon must be running: `tether serve`).
    Open(open::OpenArgs),
    /// List, search, read, tag and export chats.
    #[command(subcommand)]
    Sessions(sessions::SessionsCmd),
    /// Show what Tether found where, and which sources are partial and why.
    Doctor(doctor::DoctorArgs),
    /// Your activity at a glance: chats and messages over time, top projects, busiest days,
    /// longest chats, models, tags, tasks and runs (the GUI's Insights view).
    Stats(stats::StatsArgs),
    /// Tasks shared by people and agents: add, list, claim, update, hand off, complete, import.
    Task(task::TaskArgs),
    /// Agent sessions (Cursor chats, other MCP clients, people) and the tasks they hold.
    #[command(subcommand)]
    Agents(agents::AgentsCmd),
    /// Send, show or answer one signal (a short message that may need a reply). You are `human`.
    #[command(subcommand)]
    Signal(signal::SignalCmd),
    /// List signals with their obligations and wake telemetry, or read the ones sent to you.
    #[command(subcommand)]
    Signals(signals::SignalsCmd),
    /// Run the Cursor CLI agent on a prompt or a task (the daemon runs it; without one, it runs
    /// here until it ends).
    Run(run::RunArgs),
    /// Agent runs: list, show, follow the log, cancel, follow up; review, merge, open a pull
    /// request, discard.
    #[command(subcommand)]
    Runs(runs::RunsCmd),
    /// The Cursor API key that runs of the Cursor CLI use (kept in the OS keyring).
    #[command(subcommand)]
    CursorKey(cursor_key::CursorKeyCmd),
    /// The GitHub token that `tether runs pr` uses (kept in the OS keyring).
    #[command(subcommand)]
    Github(github::GithubCmd),
    /// A team's board on PostgreSQL: join it (tasks, agents, signals and runs move there; the chat
    /// history stays here), leave it, see who is in it.
    #[command(subcommand)]
    Team(team::TeamCmd),
    /// Cursor Cloud agents: launch one on a GitHub repository as a run, log in, check the setup.
    /// Cloud runs are runs: `tether runs list/show/logs/cancel/followup` take them too.
    #[command(subcommand)]
    Cloud(cloud::CloudCmd),
    /// What runs, chats and your account spent (tokens, estimated cost), by day, model, project,
    /// task, run…; import the account's usage CSV; prices; a task's budget.
    Usage(usage::UsageArgs),
    /// Which chat wrote each line of a file (from Cursor's edit hooks and Tether's runs, through
    /// git blame): the chat, `mixed` (edited since), `human`, or `unknown` (no record).
    Blame(trace::BlameArgs),
    /// Agent Trace records of the edits agents made: export; write them into a repository on
    /// commit (git notes or files), on or off.
    #[command(subcommand)]
    Trace(trace::TraceCmd),
    /// Show or change the settings (`settings.json` in the data dir); a running daemon applies a
    /// change at once.
    #[command(subcommand)]
    Settings(settings::SettingsCmd),
}

fn main() -> ExitCode {
    tether_cloud::install_tls_provider();
    let cli = Cli::parse();
    init_logging(cli.verbose);
    match dispatch(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // Scripts branch on the code; people read the message.
            // Refused by the running daemon (a change made through it): its code, as if here.
            if let Some(tether_server::client::CallError::Refused { code, message, .. }) = e.downcast_ref() {
                eprintln!("error[{code}]: {message}");
                return ExitCode::FAILURE;
            }
            match e.downcast_ref::<tether_core::Error>().map(tether_core::Error::code) {
                Some(code) if code != tether_core::ErrorCode::Internal => {
                    let code = serde_json::to_value(code).ok();
                    eprintln!("error[{}]: {e:#}", code.as_ref().and_then(|c| c.as_str()).unwrap_or("?"));
                }
                _ => eprintln!("error: {e:#}"),
            }
            ExitCode::FAILURE
        }
    }
}

/// Finds the data dir, the settings and Cursor's folders, then hands the verb what it needs: the
/// opened index, or only the paths for verbs that must work without it.
fn dispatch(cli: Cli) -> anyhow::Result<()> {
    let paths = Paths::from_env().context("finding the data dir")?;
    let saved = Settings::load(&paths)?;
    let cursor = CursorLocations::discover(cli.cursor_dir.clone(), &saved.cursor_dirs());
    let port = |flag: Option<u16>| tether_daemon::choose_port(flag, "--port/TETHER_PORT", &saved);
    let open = || {
        let t = Tether::open(paths.clone(), cursor.clone())
            .with_context(|| format!("opening the index in {}", paths.data_dir.display()))?;
        // What runs agents here, so the operations can describe them (the doctor, the run form).
        tether_daemon::register_executors(&t);
        anyhow::Ok(t)
    };
    match cli.command {
        Command::Index(a) => index::run(&open()?, a),
        Command::Serve(a) => serve::run(paths, cursor, &a, port(a.port)),
        Command::Mcp(cmd) => mcp::run(open()?, cmd),
        Command::Token(cmd) => token::run(&paths, cmd),
        Command::Init(a) => init::run(&paths, &cursor, &a, port(a.port).0, false),
        Command::Uninit(a) => init::run(&paths, &cursor, &a, port(a.port).0, true),
        Command::Hook(a) => {
            hook::run(&paths, &a);
            Ok(())
        }
        Command::Open(a) => open::run(&paths, a),
        Command::Sessions(cmd) => sessions::run(&open()?, cmd),
        Command::Doctor(a) => doctor::run(&open()?, a),
        Command::Stats(a) => stats::run(&open()?, a),
        Command::Task(a) => task::run(&open()?, a),
        Command::Agents(cmd) => agents::run(&open()?, cmd),
        Command::Signal(cmd) => signal::run(&open()?, cmd),
        Command::Signals(cmd) => signals::run(&open()?, cmd),
        Command::Run(a) => run::run(open()?, a),
        Command::Runs(cmd) => runs::run(open()?, cmd),
        Command::CursorKey(cmd) => cursor_key::run(&paths, cmd),
        Command::Github(cmd) => github::run(&paths, cmd),
        Command::Team(cmd) => team::run(&open()?, cmd),
        Command::Cloud(cmd) => cloud::run(open()?, cmd),
        Command::Settings(cmd) => settings::run(&open()?, cmd),
        Command::Usage(a) => usage::run(&open()?, a),
        Command::Blame(a) => trace::blame(&open()?, a),
        Command::Trace(cmd) => trace::run(&open()?, cmd),
    }
}

fn init_logging(verbose: u8) {
    let default = match verbose {
        0 => "warn",
        1 => "info,tether_core=info",
        _ => "debug",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env("TETHER_LOG").unwrap_or_else(|_| default.into());
    tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).with_target(false).init();
}
