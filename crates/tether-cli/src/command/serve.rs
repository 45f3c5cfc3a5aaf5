//! `tether serve`: the headless daemon (`tether_daemon::Host`) in the foreground: index, keep
//! the index fresh and serve MCP and the GUI on loopback until SIGINT or SIGTERM.

use std::io::IsTerminal;
use std::sync::Arc;

use clap::Args;
use tether_core::model::sessions::Progress;
use tether_core::{CursorLocations, Paths};

use crate::{render, rt};

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Loopback address to listen on (127.0.0.1 or ::1; anything else is refused).
    #[arg(long, default_value = "127.0.0.1", env = "TETHER_HOST")]
    pub host: String,
    /// Port for the MCP endpoint (0 picks a free one) [default: the settings' port, else 47821].
    #[arg(long, env = "TETHER_PORT")]
    pub port: Option<u16>,
    /// Team mode: also take runs other machines queued for any runner (not only this machine's).
    #[arg(long)]
    pub runner: bool,
    /// Team mode: this runner's labels (comma-separated, e.g. gpu,linux); a run asking for labels
    /// goes only to a runner that has them all.
    #[arg(long, value_delimiter = ',', requires = "runner")]
    pub labels: Vec<String>,
}

/// `port`: the one chosen from the flag, the settings or the default, and what chose it.
pub fn run(
    paths: Paths,
    cursor: CursorLocations,
    a: &ServeArgs,
    (port, port_from): (u16, &'static str),
) -> anyhow::Result<()> {
    let rt = rt::multi_thread()?;
    let _g = rt.enter();
    // Signal handlers first, so SIGTERM during the initial index still shuts down cleanly.
    let shutdown = rt::shutdown_signal()?;
    let bar = std::io::stderr().is_terminal().then(render::progress_bar);
    let progress: Option<tether_daemon::ProgressSink> =
        bar.clone().map(|b| Arc::new(move |p: &Progress| render::show_progress(&b, p)) as tether_daemon::ProgressSink);
    let runner = tether_core::daemon::RunnerRole {
        takes_others: a.runner,
        labels: a.labels.iter().map(|l| l.trim().to_owned()).filter(|l| !l.is_empty()).collect(),
    };
    let opts = tether_daemon::HostOptions { host: a.host.clone(), port, port_from, runner };
    let host = tether_daemon::Host::start(paths, cursor, &opts, progress)?;
    eprintln!(
        "tether: MCP endpoint {} (token in the {}; `tether init` configures Cursor); GUI: `tether open`",
        host.url(),
        host.token_backend.describe()
    );
    if a.runner {
        let labels = if a.labels.is_empty() { String::new() } else { format!(" (labels {})", a.labels.join(", ")) };
        eprintln!("tether: a runner for the team's queue{labels}");
    }
    eprintln!("tether: indexing, then watching for changes (Ctrl-C to stop)");
    rt.block_on(shutdown);
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    eprintln!("tether: stopping");
    rt.block_on(host.shutdown())?;
    drop(host);
    // An initial index still running holds only uncommitted transactions: leave it to the exit.
    rt.shutdown_background();
    Ok(())
}
