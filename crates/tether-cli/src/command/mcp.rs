//! `tether mcp stdio`: the MCP tools over stdin/stdout (`tether_server::serve_stdio`), for
//! clients without HTTP. Stdout is the protocol's: logs go to stderr.

use std::sync::Arc;

use clap::Subcommand;
use tether_core::Tether;

use crate::rt;

#[derive(Debug, Subcommand)]
pub enum McpCmd {
    /// Speak MCP on stdin/stdout.
    Stdio,
}

pub fn run(t: Tether, cmd: McpCmd) -> anyhow::Result<()> {
    match cmd {
        McpCmd::Stdio => {
            let rt = rt::multi_thread()?;
            // No HTTP here, so no bearer or hook token: whoever spawned us already has our privileges.
            let server = tether_server::Server::new(Arc::new(t), String::new(), String::new());
            rt.block_on(tether_server::serve_stdio(server))?;
            Ok(())
        }
    }
}
