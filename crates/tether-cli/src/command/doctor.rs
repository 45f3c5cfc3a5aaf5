//! `tether doctor`: what Tether found where, which sources are partial and why
//! and the Cursor CLI that runs would use (`ops::system::doctor`).

use clap::Args;
use tether_core::Tether;
use tether_core::doctor::DoctorReport;
use tether_core::ops;

use crate::render::{self, JsonFlag, bold, tally};

#[derive(Debug, Args)]
pub struct DoctorArgs {
    #[command(flatten)]
    pub out: JsonFlag,
}

pub fn run(t: &Tether, a: DoctorArgs) -> anyhow::Result<()> {
    let d = ops::system::doctor(t)?;
    if a.out.json {
        return render::json(&d);
    }
    print_report(&d);
    print_cursor_cli(&d.cursor_cli);
    Ok(())
}

fn print_report(d: &DoctorReport) {
    println!("{}", bold(&format!("Tether {}", d.version)));
    println!("data dir     {}", d.data_dir);
    println!("index        {} ({:.1} MB)", d.index_db, d.index_bytes as f64 / 1e6);
    match &d.daemon {
        Some(i) => println!("daemon       running (pid {}, since {})", i.pid, i.started_at),
        None => println!("daemon       not running"),
    }
    println!("MCP token    in the {}", d.token_store.describe());
    if d.token_store == tether_core::token::Backend::Fallback {
        println!(
            "             (`tether token store keyring` moves it once a keyring runs; the keyring_only setting refuses the file)"
        );
    }
    if let Some(team) = &d.team {
        let db = team.database.as_deref().unwrap_or("?");
        let me = team.machine.as_deref().unwrap_or("?");
        match (team.reachable, team.latency_ms) {
            (true, Some(ms)) => {
                println!("team         {db} as {me}: reachable ({ms} ms), {} machine(s) seen", team.machines.len())
            }
            _ => println!(
                "team         {db} as {me}: UNREACHABLE ({}); the board waits, local history works",
                team.error.as_deref().unwrap_or("no answer")
            ),
        }
    }
    println!();
    for l in &d.cursor_user_dirs {
        println!("Cursor User  {} {}", l.path, if l.exists { "" } else { "(not found)" });
    }
    for l in &d.cursor_homes {
        println!("Cursor home  {} {}", l.path, if l.exists { "" } else { "(not found)" });
    }
    for c in &d.cursor_tracking {
        // Code origin's source for edits made before Tether's hooks: what it covers, or why not.
        let what = match (&c.coverage, c.status) {
            (Some(v), _) => format!(
                "{} AI chunk(s) in {} file(s) from {} chat(s), {} commit(s) scored{}",
                v.ai_chunks,
                v.files,
                v.chats,
                v.commits,
                v.since_ms.map_or_else(String::new, |ms| format!(", since {}", tether_core::clock::iso(ms)))
            ),
            (None, "missing") => "(not found)".to_owned(),
            (None, _) => format!("not read: {}", c.reason.as_deref().unwrap_or("?")),
        };
        println!("AI tracking  {} {what}", c.path);
    }
    for a in &d.agents {
        if !a.enabled {
            println!("{:<12} off (settings: agents.{})", a.name, a.agent.replace('-', "_"));
            continue;
        }
        let folders: Vec<String> =
            a.folders.iter().map(|l| format!("{}{}", l.path, if l.exists { "" } else { " (not found)" })).collect();
        println!("{:<12} {}", a.name, folders.join(", "));
        if a.files > 0 || !a.skipped.is_empty() {
            let mut line = format!("             {} file(s), {} chats, {} messages", a.files, a.chats, a.messages);
            if a.incomplete > 0 {
                line.push_str(&format!(", {} not complete", a.incomplete));
            }
            if !a.problems.is_empty() {
                line.push_str(&format!(" (problems: {})", tally(&a.problems)));
            }
            if !a.skipped.is_empty() {
                line.push_str(&format!(", {} passed over", a.skipped.len()));
            }
            println!("{line}");
        }
    }
    println!("\n{} chats, {} messages in the index.", d.sessions, d.messages);
    // Each kind of store with what was read from it and how many of its files were passed over
    // (the same per-kind count the Health view shows).
    let mut skipped_of: std::collections::BTreeMap<&str, usize> = Default::default();
    for s in &d.skipped {
        *skipped_of.entry(&s.kind).or_default() += 1;
    }
    for f in &d.found {
        let mut line =
            format!("  {:<10} {:>5} file(s), {} chats, {} messages", f.kind, f.files, f.sessions, f.messages);
        if let Some(n) = skipped_of.remove(f.kind.as_str()) {
            line.push_str(&format!(", {n} passed over"));
        }
        println!("{line}");
    }
    for (kind, n) in skipped_of {
        println!("  {kind:<10} {:>5} file(s) read, {n} passed over", 0);
    }
    if !d.skipped.is_empty() {
        // By kind and reason, a few paths each: a heavy install has hundreds (`--json` lists them all).
        let mut by_reason: std::collections::BTreeMap<(&str, &str), Vec<&str>> = Default::default();
        for s in &d.skipped {
            by_reason.entry((&s.kind, &s.reason)).or_default().push(&s.path);
        }
        println!("{} file(s) passed over:", d.skipped.len());
        for ((kind, reason), paths) in by_reason {
            println!("  {} × {kind}: {reason}", paths.len());
            for p in paths.iter().take(3) {
                println!("      {p}");
            }
            if paths.len() > 3 {
                println!("      … and {} more (--json lists them all)", paths.len() - 3);
            }
        }
    }
    let bad: Vec<_> = d.sources.iter().filter(|s| s.status != "complete").collect();
    println!("{} sources, {} not complete.", d.sources.len(), bad.len());
    for s in bad {
        println!("  {:<8} {:<10} {}", s.status, s.kind, s.path);
        if !s.reasons.is_empty() {
            println!("           problems: {}", tally(&s.reasons));
        }
        if let Some(e) = &s.error {
            println!("           error: {e}");
        }
    }
}

fn print_cursor_cli(c: &tether_core::executor::ExecutorInfo) {
    match (&c.path, &c.version) {
        (Some(p), Some(v)) => println!("Cursor CLI (for runs): {} {v} (from {})", p.display(), c.from.unwrap_or("?")),
        (Some(p), None) => {
            println!("Cursor CLI (for runs): {} — {}", p.display(), c.hint.as_deref().unwrap_or("not answering"))
        }
        _ => println!("Cursor CLI (for runs): not found — {}", c.hint.as_deref().unwrap_or("")),
    }
}
