//! `tether open`: asks the running daemon for a one-time login code (`tether_server::login_link`)
//! and opens, or prints, the GUI's login link.

use clap::Args;
use tether_core::Paths;

#[derive(Debug, Args)]
pub struct OpenArgs {
    /// Print the one-time login link (valid for a minute) instead of opening a browser.
    #[arg(long)]
    pub print: bool,
}

pub fn run(paths: &Paths, a: OpenArgs) -> anyhow::Result<()> {
    let link = tether_server::login_link(paths)?;
    if a.print {
        println!("{link}");
        return Ok(());
    }
    let opener = if cfg!(target_os = "macos") { "open" } else { "xdg-open" };
    match std::process::Command::new(opener).arg(&link).status() {
        Ok(s) if s.success() => eprintln!("tether: opened the GUI in your browser"),
        _ => println!("Open this link in your browser within a minute (it works once):\n{link}"),
    }
    Ok(())
}
