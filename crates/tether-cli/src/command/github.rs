//! `tether github …`: the GitHub token `tether runs pr` uses, kept by `tether_core::token` (the
//! OS keyring, or the data dir's 0600 file). Never printed.

use std::io::Read;

use anyhow::bail;
use clap::Subcommand;
use tether_core::Paths;
use tether_core::token::{self, KeySource};

#[derive(Debug, Subcommand)]
pub enum GithubCmd {
    /// Keep a GitHub token (with pull request and contents access) for `tether runs pr`.
    Login {
        /// Read the token from stdin (e.g. `gh auth token | tether github login --token-stdin`).
        #[arg(long, required = true)]
        token_stdin: bool,
    },
    /// Forget the kept token.
    Logout,
    /// Whether a token is set and where it comes from (never the token itself).
    Status,
}

pub fn run(paths: &Paths, cmd: GithubCmd) -> anyhow::Result<()> {
    match cmd {
        GithubCmd::Login { token_stdin } => {
            if !token_stdin {
                bail!("give the token on stdin: --token-stdin");
            }
            let mut all = String::new();
            std::io::stdin().take(64 * 1024).read_to_string(&mut all)?;
            token::set_github_token(paths, &all)?;
            println!("Stored. `tether runs pr` uses it (GITHUB_TOKEN in Tether's own environment wins).");
        }
        GithubCmd::Logout => {
            token::forget_github_token(paths)?;
            println!("Forgotten.");
        }
        GithubCmd::Status => match token::github_token(paths)? {
            Some((_, KeySource::Env)) => println!("set, from GITHUB_TOKEN in the environment"),
            Some((_, KeySource::Stored)) => println!("set, stored by `tether github login`"),
            None => println!("not set: `tether github login --token-stdin`, or GITHUB_TOKEN"),
        },
    }
    Ok(())
}
