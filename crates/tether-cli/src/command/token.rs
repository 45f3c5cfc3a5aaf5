//! `tether token …`: show, rotate or relocate the MCP bearer token (`tether_core::token`).

use clap::Subcommand;
use tether_core::Paths;
use tether_core::token::{self, Backend};

#[derive(Debug, Subcommand)]
pub enum TokenCmd {
    /// Print the token (to paste into a client's Authorization header).
    Show,
    /// Replace the token; clients must be given the new one (`tether init` rewrites Cursor's entry).
    Rotate,
    /// Choose where the token is kept: `keyring` (default) or `file` (0600 in the data dir, for servers).
    Store {
        #[arg(value_parser = ["keyring", "file"])]
        backend: String,
    },
}

pub fn run(paths: &Paths, cmd: TokenCmd) -> anyhow::Result<()> {
    match cmd {
        TokenCmd::Show => {
            let (t, b) = token::mcp_token(paths, token::NoKeyring::saved(paths))?;
            eprintln!("(from the {}; treat it like a password)", b.describe());
            println!("{t}");
        }
        TokenCmd::Rotate => {
            // A running daemon holds the token in memory: it rotates it, so the old one stops
            // working there as this returns.
            if let Some(d) = super::daemon(paths)? {
                d.call("POST", "/api/token/rotate", None)?;
                eprintln!(
                    "tether: new token stored in the {}; the running daemon takes only it now. Run `tether init` \
                     again so Cursor gets it.",
                    token::backend(paths).describe()
                );
                return Ok(());
            }
            let (_, b) = token::rotate(paths)?;
            eprintln!(
                "tether: new token stored in the {}. Restart `tether serve` and run `tether init` again so Cursor gets it.",
                b.describe()
            );
        }
        TokenCmd::Store { backend } => {
            let b = if backend == "file" { Backend::File } else { Backend::Keyring };
            token::set_backend(paths, b)?;
            eprintln!("tether: the MCP token is now kept in the {backend}");
        }
    }
    Ok(())
}
