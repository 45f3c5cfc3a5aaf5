//! `tether cloud …`: launch a Cursor Cloud agent on a repository as a run (`ops::runs::start`,
//! place `cloud`), check a Cursor API key with Cursor and keep it, turn the webhook on or off,
//! and check the setup (`tether_cloud::doctor`).

use std::io::IsTerminal;

use anyhow::Context;
use clap::{Args, Subcommand};
use tether_core::model::runs::NewRun;
use tether_core::token::{self, Backend};
use tether_core::{Tether, ops};

use super::cursor_key::read_key;
use super::run::{RunOpts, follow};
use crate::render::JsonFlag;
use crate::rt;

#[derive(Debug, Subcommand)]
pub enum CloudCmd {
    /// Launch a Cursor Cloud agent on a repository (a run R-n; Ctrl-C with --follow stops
    /// following, not the agent, when a daemon runs it).
    Launch(Box<CloudLaunchArgs>),
    /// Check a Cursor API key with Cursor and keep it in the OS keyring (runs of the Cursor CLI
    /// use it too). Asks for it, or reads it from stdin with --key-stdin.
    Login {
        #[arg(long)]
        key_stdin: bool,
    },
    /// Forget the stored key.
    Logout,
    /// Let Cursor reach this Tether through a public URL of yours (a tunnel to the daemon's port):
    /// launches then carry a signed webhook, and cloud agents get a one-time token to call back
    /// (their task, signals, skills). --off goes back to stream and polling only.
    Webhook {
        /// Where Cursor's servers reach this Tether, e.g. https://tether.example.ts.net.
        #[arg(long, value_name = "URL", required_unless_present = "off")]
        public_url: Option<String>,
        #[arg(long, conflicts_with = "public_url")]
        off: bool,
    },
    /// Check the setup: API URL, key (valid?), repository, model, public URL; each failure says
    /// what to do.
    Doctor {
        /// The repository to check (default: this folder's git origin).
        #[arg(long, value_name = "URL")]
        repo: Option<String>,
        /// A model id to check.
        #[arg(long, value_name = "MODEL")]
        model: Option<String>,
        /// Also ask Cursor whether the key reaches the repository (Cursor allows this once a minute).
        #[arg(long)]
        verify_repo: bool,
        #[command(flatten)]
        out: JsonFlag,
    },
}

/// The run's options are `tether run`'s; these word what differs for a cloud agent (with no closing
/// period: clap drops it from doc comments, `help` would keep it).
#[derive(Debug, Args)]
#[command(
    mut_arg("model", |a| a.help("A Cursor model id [default: your Cursor default]")),
    mut_arg("mode", |a| a.help("plan: the agent plans and changes nothing").value_parser(["agent", "plan"])),
    mut_arg("role", |a| a.help("A role whose rule goes into the prompt")),
    mut_arg("timeout", |a| a.help(
        "Wall-clock limit, e.g. 30m, 2h [default: the settings', 60m]; at the limit Tether cancels the agent's run \
         at Cursor"
    )),
)]
pub struct CloudLaunchArgs {
    #[command(flatten)]
    pub run: RunOpts,
    /// The GitHub repository, e.g. https://github.com/org/repo [default: this folder's origin].
    #[arg(long, value_name = "URL")]
    pub repo: Option<String>,
    /// The branch, tag or commit to start from [default: the repository's default branch].
    #[arg(long = "ref", value_name = "REF")]
    pub git_ref: Option<String>,
    /// Work on this existing branch and push to it (instead of a new cursor/… branch).
    #[arg(long, value_name = "BRANCH", conflicts_with = "git_ref")]
    pub branch: Option<String>,
    /// Open a pull request when done.
    #[arg(long)]
    pub auto_pr: bool,
}

pub fn run(t: Tether, cmd: CloudCmd) -> anyhow::Result<()> {
    match cmd {
        CloudCmd::Launch(a) => launch(t, *a),
        CloudCmd::Login { key_stdin } => {
            if key_stdin && std::io::stdin().is_terminal() {
                anyhow::bail!(
                    "--key-stdin reads the key from a pipe: `printf %s \"$KEY\" | tether cloud login --key-stdin`"
                );
            }
            let key = read_key()?.trim().to_owned();
            anyhow::ensure!(!key.is_empty(), "no key given");
            let settings = ops::settings::get(&t)?.settings;
            let base = tether_cloud::client::base_url(settings.cloud.api_url.as_deref())?;
            let client = tether_cloud::Client::new(&base, key.clone())?;
            let me = rt::current_thread()?.block_on(client.me()).context("checking the key with Cursor")?;
            token::set_cursor_key(&t.paths, &key)?;
            println!(
                "Logged in{}: the key is kept in {} and used by cloud runs and runs of the Cursor CLI.",
                me.user_email.map(|e| format!(" as {e}")).unwrap_or_default(),
                match token::backend(&t.paths) {
                    Backend::Keyring => "the OS keyring",
                    _ => "the data dir's 0600 key file",
                }
            );
            if std::env::var_os("CURSOR_API_KEY").is_some() {
                eprintln!("Note: CURSOR_API_KEY is set in this environment and wins over the stored key.");
            }
            Ok(())
        }
        CloudCmd::Logout => {
            token::forget_cursor_key(&t.paths)?;
            println!("Logged out: the stored Cursor API key is forgotten.");
            Ok(())
        }
        CloudCmd::Webhook { public_url, off } => {
            let url = if off { None } else { public_url };
            // The secret first: the daemon signs the next launch with it as soon as the URL holds.
            if url.is_some() {
                token::webhook_secret(&t.paths)?;
            }
            let s = super::save_settings(&t, serde_json::json!({"cloud": {"public_url": url}}))?;
            match s.cloud.public_url {
                Some(u) => {
                    let port = tether_core::daemon::running(&t.paths).and_then(|d| d.port).unwrap_or(47821);
                    println!(
                        "On. New cloud launches ask Cursor to post to {} (signed with a secret kept in {}), and tell the \
                         agent how to call back through {u}.\nExpose this Tether there, e.g. `cloudflared tunnel --url \
                         http://127.0.0.1:{port}` or `tailscale funnel {port}`; only the webhook and callback routes \
                         answer a public host name.",
                        tether_cloud::webhook::url(&u),
                        match token::backend(&t.paths) {
                            Backend::Keyring => "the OS keyring",
                            _ => "the data dir",
                        }
                    );
                }
                None => println!("Off: cloud runs are followed by their stream and by polling."),
            }
            Ok(())
        }
        CloudCmd::Doctor { repo, model, verify_repo, out } => {
            let ask = tether_core::executor::DoctorAsk { repo, model, verify_repo, cwd_repo: true };
            let checks = rt::current_thread()?.block_on(ops::cloud::doctor(&t, &ask));
            let failed = checks.iter().any(|c| c.status == "fail");
            out.print(checks.as_slice(), |checks| {
                for c in checks {
                    let mark = match c.status {
                        "ok" => "ok  ",
                        "warn" => "warn",
                        _ => "FAIL",
                    };
                    println!("{mark} {:<11} {}", c.name, c.detail);
                    if let Some(f) = &c.fix {
                        println!("     {:<11} → {f}", "");
                    }
                }
            })?;
            if failed { std::process::exit(1) } else { Ok(()) }
        }
    }
}

fn launch(t: Tether, a: CloudLaunchArgs) -> anyhow::Result<()> {
    let new = NewRun {
        workspace: std::env::current_dir().ok().map(|d| d.to_string_lossy().into_owned()),
        place: Some("cloud".into()),
        repo: a.repo,
        git_ref: a.git_ref,
        branch: a.branch,
        auto_pr: a.auto_pr,
        ..a.run.new_run()?
    };
    let me = super::me(None);
    let r = ops::runs::start(&t, &me, &new)?;
    follow::start_or_follow(t, &me, r, a.run.follow, a.run.out.json)
}
