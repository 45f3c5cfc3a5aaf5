//! `tether agents …`: agent sessions with their live status and held tasks, and whether an idle
//! chat Tether ran is woken by a follow-up run (`ops::agents`).

use clap::Subcommand;
use tether_core::Tether;
use tether_core::model::agents::Agent;
use tether_core::ops;

use crate::render::{JsonFlag, cut, dim, local_time};

#[derive(Debug, Subcommand)]
pub enum AgentsCmd {
    /// Every agent session, most recently active first, with live status and held tasks.
    List(JsonFlag),
    /// Let the daemon wake an idle chat it ran (`run R-3`: a run and its follow-ups) by a
    /// follow-up run when signals wait for it (at most `runs.resume_wakes_per_hour` an hour).
    Wake {
        /// The agent's name, e.g. "run R-3".
        name: String,
        #[arg(value_parser = ["on", "off"])]
        state: String,
        #[command(flatten)]
        out: JsonFlag,
    },
}

pub fn run(t: &Tether, cmd: AgentsCmd) -> anyhow::Result<()> {
    match cmd {
        AgentsCmd::List(out) => out.print(ops::agents::list(t)?.as_slice(), print_list),
        AgentsCmd::Wake { name, state, out } => {
            let req = ops::agents::SetWake { agent: name, wake_by_resume: state == "on" };
            let a = ops::agents::set_wake(t, &super::me(None), &req)?;
            out.print(&a, print_wake)
        }
    }
}

fn print_wake(a: &Agent) {
    if a.wake_by_resume {
        println!("{} is woken by a follow-up run when signals wait for it (while `tether serve` runs).", a.name);
    } else {
        println!("{} is no longer woken by a follow-up run.", a.name);
    }
}

fn print_list(list: &[Agent]) {
    if list.is_empty() {
        println!("No agents yet. A Cursor chat registers with the `session_start` tool (run `tether init`).");
        return;
    }
    println!(
        "{}",
        dim(&format!(
            "{:<20}  {:<6}  {:<8}  {:<10}  {:<8}  {:<4}  {:<16}  TASKS",
            "NAME", "KIND", "STATUS", "ROLE", "SURFACE", "OPEN", "LAST SEEN"
        ))
    );
    for a in list {
        let kind = serde_json::to_value(a.kind).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default();
        println!(
            "{:<20}  {:<6}  {:<8}  {:<10}  {:<8}  {:<4}  {:<16}  {}",
            cut(&a.name, 20),
            kind,
            a.status,
            a.role.as_deref().unwrap_or("—"),
            a.surface.unwrap_or("—"),
            a.open_obligations,
            local_time(Some(&a.last_seen)),
            a.tasks.join(", ")
        );
    }
}
