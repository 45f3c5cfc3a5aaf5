//! `tether team …`: join a team's database (the board — tasks, agents, signals, runs — moves
//! there; the chat history stays here), leave it, and see it from here. Maps onto
//! `tether_core::ops::team`; joining and leaving go through the running daemon when there is one
//! (its board moves with the command, no restart).

use std::io::Read;

use clap::Subcommand;
use tether_core::Tether;
use tether_core::ops::Principal;
use tether_core::ops::team::{self, Join, TeamStatus};

#[derive(Debug, Subcommand)]
pub enum TeamCmd {
    /// Move this machine's board to a team's PostgreSQL database (`postgres://USER@HOST:PORT/DB`,
    /// no password in it). What was local stays here, untouched, for when you leave.
    Join {
        url: String,
        /// This machine's name in the team (default: the host name).
        #[arg(long)]
        machine: Option<String>,
        /// Read the database password from stdin and keep it in the OS keyring; without it,
        /// PGPASSWORD or ~/.pgpass apply, as for psql.
        #[arg(long)]
        password_stdin: bool,
        /// A client certificate (PEM) for a server that asks for one; kept in the OS keyring
        /// with its key, so the files may go afterwards.
        #[arg(long, value_name = "FILE")]
        client_cert: Option<std::path::PathBuf>,
        /// The certificate's private key (PEM), unless it is in the certificate's file.
        #[arg(long, value_name = "FILE", requires = "client_cert")]
        client_key: Option<std::path::PathBuf>,
    },
    /// Go back to this machine's own board (as it was before joining).
    Leave,
    /// The team database: reachable, its latency, this machine's name, the machines seen.
    Status {
        #[arg(long)]
        json: bool,
    },
    /// Copy this machine's own tasks up to the team's board (status, priority, role, labels,
    /// acceptance criteria, dependencies); running it again refreshes them, never duplicates.
    ImportLocal {
        #[arg(long)]
        json: bool,
    },
}

pub fn run(t: &Tether, cmd: TeamCmd) -> anyhow::Result<()> {
    let me = Principal::person(&Tether::person());
    match cmd {
        TeamCmd::Join { url, machine, password_stdin, client_cert, client_key } => {
            let password = if password_stdin {
                let mut all = String::new();
                std::io::stdin().take(64 * 1024).read_to_string(&mut all)?;
                Some(all.trim_end_matches(['\r', '\n']).to_owned())
            } else {
                None
            };
            let read = |p: Option<std::path::PathBuf>| {
                p.map(|p| std::fs::read_to_string(&p).map_err(|e| anyhow::anyhow!("reading {}: {e}", p.display())))
                    .transpose()
            };
            let (client_cert, client_key) = (read(client_cert)?, read(client_key)?);
            // A running daemon moves its own board (and keeps the secrets), so it is on the team's
            // when this returns; the database sees the same request either way.
            let s = match super::daemon(&t.paths)? {
                Some(d) => {
                    let join = serde_json::json!({
                        "url": url, "machine": machine, "password": password,
                        "client_cert": client_cert, "client_key": client_key,
                    });
                    serde_json::from_value(d.call("POST", "/api/team/join", Some(&join))?)?
                }
                None => team::join(t, &me, Join { url, machine, password, client_cert, client_key })?,
            };
            println!("Joined. The board (tasks, agents, signals, runs) is on the team database now.");
            print(&s);
        }
        TeamCmd::Leave => {
            match super::daemon(&t.paths)? {
                Some(d) => {
                    d.call("POST", "/api/team/leave", None)?;
                }
                None => {
                    team::leave(t, &me)?;
                }
            }
            println!("Left. The board is this machine's own again.");
        }
        TeamCmd::ImportLocal { json } => {
            let r = team::import_local(t, &me)?;
            if json {
                println!("{}", serde_json::to_string_pretty(&r)?);
            } else {
                println!(
                    "Copied this machine's tasks to the team: {} new, {} refreshed, {} unchanged.",
                    r.created.len(),
                    r.updated.len(),
                    r.unchanged.len()
                );
                for line in r.created.iter().chain(&r.updated) {
                    println!("  {line}");
                }
                for line in &r.not_mapped {
                    println!("  note: {line}");
                }
            }
        }
        TeamCmd::Status { json } => {
            let s = team::status(t)?;
            if json {
                println!("{}", serde_json::to_string_pretty(&s)?);
            } else {
                print(&s);
            }
        }
    }
    Ok(())
}

fn print(s: &TeamStatus) {
    if !s.joined {
        println!("not in a team: the board is this machine's (`tether team join postgres://…`)");
        return;
    }
    let db = s.database.as_deref().unwrap_or("?");
    let me = s.machine.as_deref().unwrap_or("?");
    match (s.reachable, s.latency_ms) {
        (true, Some(ms)) => println!("team database {db}: reachable ({ms} ms); this machine: {me}"),
        _ => println!(
            "team database {db}: UNREACHABLE ({}); this machine: {me}. The chat history keeps working; the board waits for it.",
            s.error.as_deref().unwrap_or("no answer")
        ),
    }
    for m in &s.machines {
        let labels = if m.labels.is_empty() { String::new() } else { format!(" [{}]", m.labels.join(",")) };
        let role = if m.runner { " runner" } else { "" };
        let who = if m.person.is_empty() { String::new() } else { format!("{} at ", m.person) };
        println!(
            "  {:<20} {:<28} seen {} s ago{role}{labels}",
            m.name,
            format!("{who}{}", m.host),
            m.seen_ago_ms / 1000
        );
    }
}
