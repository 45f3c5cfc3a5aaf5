//! `tether signal …`: send, show or answer one signal (`ops::signals`). At the CLI you are the
//! person, `human`.

use clap::Subcommand;
use tether_core::Tether;
use tether_core::model::signals::{NewSignal, Signal, SignalDetail};
use tether_core::ops;

use crate::render::{JsonFlag, bold, cut, dim, local_time};

#[derive(Debug, Subcommand)]
pub enum SignalCmd {
    /// Send a signal to an agent (by name), every live agent with a role, or `human`.
    Send {
        /// An agent's name, a role (`role:NAME` to be explicit) or `human`.
        #[arg(long, value_name = "NAME|ROLE|human")]
        to: String,
        /// question, task_assigned, review_requested (need a reply), status_update, acknowledgment.
        #[arg(long = "type", default_value = "question", value_name = "TYPE")]
        kind: String,
        /// The message (Markdown, at most 16 KiB).
        body: String,
        /// The signal this answers, e.g. S-3.
        #[arg(long, value_name = "ID")]
        reply_to: Option<String>,
        /// The task it is about, e.g. T-2.
        #[arg(long, value_name = "ID")]
        task: Option<String>,
        /// The recipient must reply (default for question, task_assigned and review_requested).
        #[arg(long)]
        action_required: bool,
        #[command(flatten)]
        out: JsonFlag,
    },
    /// One signal with its deliveries, every wake attempt and its whole thread.
    Show {
        id: String,
        #[command(flatten)]
        out: JsonFlag,
    },
    /// Answer a signal: goes to its sender and closes its obligation.
    Reply {
        id: String,
        body: String,
        /// Default: acknowledgment.
        #[arg(long = "type", value_name = "TYPE")]
        kind: Option<String>,
        #[command(flatten)]
        out: JsonFlag,
    },
}

pub fn run(t: &Tether, cmd: SignalCmd) -> anyhow::Result<()> {
    let me = super::me(None);
    match cmd {
        SignalCmd::Send { to, kind, body, reply_to, task, action_required, out } => {
            let new = NewSignal {
                to: Some(to),
                kind: Some(kind),
                body,
                reply_to,
                task,
                action_required: action_required.then_some(true),
            };
            out.print(&ops::signals::send(t, &me, &new)?, print_sent)
        }
        SignalCmd::Show { id, out } => out.print(&ops::signals::get(t, &id)?, print_detail),
        SignalCmd::Reply { id, body, kind, out } => {
            let s = ops::signals::reply(t, &me, &id, ops::signals::Reply { body, kind })?;
            out.print(&s, print_sent)
        }
    }
}

fn print_sent(s: &Signal) {
    let to: Vec<&str> = s.deliveries.iter().map(|d| d.recipient.as_str()).collect();
    let needs = if s.reply_required { "; a reply is expected" } else { "" };
    println!("Sent {} ({}) to {}{needs}.", bold(&s.id), s.kind, to.join(", "));
}

fn print_detail(d: &SignalDetail) {
    let s = &d.signal;
    println!("{} {} · {} → {} · {}", bold(&s.id), s.kind, s.from, s.to, local_time(Some(&s.created_at)));
    let mut facts = vec![format!("trace {}", s.trace_id)];
    if let Some(r) = &s.reply_to {
        facts.push(format!("answers {r}"));
    }
    if let Some(t) = &s.task {
        facts.push(format!("task {t}"));
    }
    if let Some(a) = &s.answered_by {
        facts.push(format!("answered by {a} {}", local_time(s.answered_at.as_deref())));
    }
    println!("{}\n", dim(&facts.join(" · ")));
    for line in s.body.lines() {
        println!("  {line}");
    }
    println!("\n{}", bold("Deliveries"));
    for del in &s.deliveries {
        println!(
            "  {:<16}  obligation {:<6}  drained {:<16}  wakes {} (last: {} {} {})",
            cut(&del.recipient, 16),
            del.obligation,
            local_time(del.drained_at.as_deref()),
            del.wake_attempt_count,
            del.last_wake_path.as_deref().unwrap_or("—"),
            del.last_wake_result.as_deref().unwrap_or("—"),
            local_time(del.last_wake_at.as_deref()),
        );
    }
    if !d.wakes.is_empty() {
        println!("\n{}", bold("Wake attempts"));
        for w in &d.wakes {
            println!("  {}  {:<16}  {:<9}  {}", local_time(Some(&w.at)), cut(&w.recipient, 16), w.path, w.result);
        }
    }
    if d.thread.len() > 1 {
        println!("\n{}", bold("Thread"));
        for t in &d.thread {
            println!(
                "  {:<6}  {:<16}  {} → {}: {}",
                t.id,
                t.kind.as_str(),
                t.from,
                t.to,
                cut(t.body.lines().next().unwrap_or(""), 60)
            );
        }
    }
}
