//! `tether signals …`: list signals with their obligations and wake telemetry, or read the ones
//! sent to you, the person (`ops::signals`).

use clap::Subcommand;
use tether_core::Tether;
use tether_core::model::signals::{Signal, SignalFilter};
use tether_core::ops;

use crate::render::{JsonFlag, bold, cut, dim, local_time};

#[derive(Debug, Subcommand)]
pub enum SignalsCmd {
    /// Signals, newest first.
    List {
        /// Sent to this agent name, `human`, or `role:NAME`.
        #[arg(long, value_name = "NAME")]
        to: Option<String>,
        /// Sent by this agent name, `human` or `tether`.
        #[arg(long, value_name = "NAME")]
        from: Option<String>,
        /// Sent by or to this agent.
        #[arg(long, value_name = "NAME")]
        agent: Option<String>,
        /// One conversation (a trace id).
        #[arg(long, value_name = "ID")]
        trace: Option<String>,
        /// Only signals whose obligation is still open.
        #[arg(long)]
        open: bool,
        #[arg(long, default_value_t = 50, value_name = "N")]
        limit: usize,
        #[command(flatten)]
        out: JsonFlag,
    },
    /// Read the signals sent to `human` that you have not read yet, and mark them read.
    Pending(JsonFlag),
}

pub fn run(t: &Tether, cmd: SignalsCmd) -> anyhow::Result<()> {
    match cmd {
        SignalsCmd::List { to, from, agent, trace, open, limit, out } => {
            let list = ops::signals::list(t, &SignalFilter { to, from, agent, trace, open, limit })?;
            out.print(list.as_slice(), print_list)
        }
        SignalsCmd::Pending(out) => out.print(ops::signals::drain(t, &super::me(None))?.as_slice(), print_inbox),
    }
}

fn print_list(list: &[Signal]) {
    if list.is_empty() {
        println!("No signals.");
        return;
    }
    println!(
        "{}",
        dim(&format!(
            "{:<6}  {:<16}  {:<14}  {:<16}  {:<9}  {:<16}  BODY",
            "ID", "TYPE", "FROM", "TO", "OBLIGATION", "SENT"
        ))
    );
    for s in list {
        println!(
            "{:<6}  {:<16}  {:<14}  {:<16}  {:<9}  {:<16}  {}",
            s.id,
            s.kind.as_str(),
            cut(&s.from, 14),
            cut(&s.to, 16),
            obligation(s),
            local_time(Some(&s.created_at)),
            cut(s.body.lines().next().unwrap_or(""), 60)
        );
    }
}

/// One word for the signal's obligations across its recipients.
fn obligation(s: &Signal) -> &'static str {
    let open = s.deliveries.iter().filter(|d| d.obligation == "open").count();
    match (s.kind.is_system(), open) {
        (true, _) => "none",
        (false, 0) => "closed",
        (false, n) if n == s.deliveries.len() => "open",
        _ => "partly",
    }
}

fn print_inbox(list: &[Signal]) {
    if list.is_empty() {
        println!("Nothing new for you.");
        return;
    }
    for s in list {
        let reply =
            if s.reply_required { format!("  (reply: tether signal reply {} …)", s.id) } else { String::new() };
        println!("{} {} from {} · {}{}", bold(&s.id), s.kind, s.from, local_time(Some(&s.created_at)), dim(&reply));
        for line in s.body.lines() {
            println!("  {line}");
        }
        println!();
    }
}
