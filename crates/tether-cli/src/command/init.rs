//! `tether init` and `tether uninit`: plan Cursor's config for Tether (`tether_core::init`: the
//! MCP entry, hooks, a rule and slash commands), show it as a diff or write it, and say what
//! changed. With `--plugin`, the same as a Cursor 3 local plugin folder instead.

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use tether_core::{CursorLocations, Paths, init};

#[derive(Debug, Args)]
pub struct InitArgs {
    /// The project to add the rule and commands to (default: the working directory).
    #[arg(value_name = "PROJECT_DIR", conflicts_with_all = ["global", "plugin"])]
    pub project: Option<PathBuf>,
    /// User-level only (~/.cursor): MCP entry, hooks and commands, no project files.
    #[arg(long)]
    pub global: bool,
    /// Show the diff of what would change (token masked) and write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Put the MCP entry in <PROJECT_DIR>/.cursor/mcp.json instead of ~/.cursor/mcp.json (the
    /// token is written there only if git ignores the file).
    #[arg(long, conflicts_with_all = ["global", "plugin"])]
    pub project_mcp: bool,
    /// Write `Bearer ${env:TETHER_TOKEN}` instead of the token itself (Cursor then needs
    /// TETHER_TOKEN in its environment).
    #[arg(long)]
    pub token_env: bool,
    /// Cursor 3.9+: write Tether as a local plugin (~/.cursor/plugins/local/tether: MCP entry,
    /// hooks, rule, skill, /tether-* commands) and touch nothing else of Cursor's. Its MCP entry
    /// reads the token from TETHER_TOKEN in Cursor's environment.
    #[arg(long, conflicts_with = "global")]
    pub plugin: bool,
    /// The daemon's port, when it is not running now [default: the settings' port, else 47821].
    #[arg(long, env = "TETHER_PORT")]
    pub port: Option<u16>,
}

/// `remove`: `tether uninit`, taking out exactly what `init` adds for the same project.
pub fn run(paths: &Paths, cursor: &CursorLocations, a: &InitArgs, port: u16, remove: bool) -> anyhow::Result<()> {
    let project = if a.global || a.plugin {
        None
    } else {
        Some(match &a.project {
            Some(p) => p.clone(),
            None => std::env::current_dir().context("reading the working directory")?,
        })
    };
    let req =
        init::Request { project, project_mcp: a.project_mcp, token_env: a.token_env, port, remove, plugin: a.plugin };
    let plan = init::plan_request(paths, cursor, &req).context("planning the Cursor setup")?;
    let running = tether_core::daemon::running(paths);
    for s in &plan.skipped {
        eprintln!("tether: skipped {s}");
    }
    if a.dry_run {
        let diff = plan.diff();
        if diff.is_empty() {
            eprintln!("tether: nothing to change");
        }
        print!("{diff}");
        return Ok(());
    }
    plan.apply()?;
    let mut changed = 0;
    for c in plan.effective() {
        changed += 1;
        let verb = match (&c.before, &c.after) {
            (_, None) => "removed",
            (None, Some(_)) => "created",
            (Some(_), Some(_)) => "updated",
        };
        println!("{verb} {}", c.path.display());
    }
    if changed == 0 {
        eprintln!("tether: already {}; nothing changed", if remove { "removed" } else { "set up" });
    } else if !remove && a.plugin {
        eprintln!(
            "tether: done. Restart Cursor to load the plugin; its MCP entry reads the token from TETHER_TOKEN in \
             Cursor's environment (`tether token show` prints it)."
        );
        if running.is_none() {
            eprintln!("tether: the daemon is not running; start it with `tether serve`.");
        }
    } else if !remove {
        eprintln!("tether: done. In Cursor, open Settings → MCP and enable (or toggle) the `tether` server.");
        if running.is_none() {
            eprintln!("tether: the daemon is not running; start it with `tether serve`.");
        }
    }
    Ok(())
}
