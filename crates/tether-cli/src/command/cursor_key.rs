//! `tether cursor-key …`: the Cursor API key that runs of the Cursor CLI use, kept by
//! `tether_core::token` (the OS keyring, or the data dir's 0600 file). Never printed.

use std::io::{IsTerminal, Read};

use clap::Subcommand;
use tether_core::Paths;
use tether_core::token::{self, KeySource};

#[derive(Debug, Subcommand)]
pub enum CursorKeyCmd {
    /// Store a Cursor API key (read from stdin, or asked for), for runs of the Cursor CLI.
    Set,
    /// Forget the stored key.
    Clear,
    /// Say whether a key is set and where it comes from (never the key itself).
    Status,
}

pub fn run(paths: &Paths, cmd: CursorKeyCmd) -> anyhow::Result<()> {
    match cmd {
        CursorKeyCmd::Set => {
            let key = read_key()?;
            token::set_cursor_key(paths, &key)?;
            println!(
                "Stored. Runs of the Cursor CLI get it as CURSOR_API_KEY (CURSOR_API_KEY in Tether's own environment wins)."
            );
        }
        CursorKeyCmd::Clear => {
            token::forget_cursor_key(paths)?;
            println!("Forgotten.");
        }
        CursorKeyCmd::Status => match token::cursor_key(paths)? {
            Some((_, KeySource::Env)) => println!("set, from CURSOR_API_KEY in the environment"),
            Some((_, KeySource::Stored)) => println!("set, stored by `tether cursor-key set`"),
            None => println!("not set (the Cursor CLI then uses its own login: `agent login`)"),
        },
    }
    Ok(())
}

/// A key typed at the prompt, or all of stdin when it is not a terminal.
pub fn read_key() -> anyhow::Result<String> {
    if std::io::stdin().is_terminal() {
        eprint!("Cursor API key (from cursor.com/dashboard → Integrations): ");
        let mut line = String::new();
        std::io::stdin().read_line(&mut line)?;
        Ok(line)
    } else {
        let mut all = String::new();
        std::io::stdin().take(64 * 1024).read_to_string(&mut all)?;
        Ok(all)
    }
}
