//! `tether blame FILE` (each line's origin: the chat that wrote it, `human` or `unknown`) and
//! `tether trace …` (Agent Trace records: export; writing them into a repository on commit, on
//! or off). Both map onto `ops::trace`.

use std::path::PathBuf;

use anyhow::Context;
use clap::{Args, Subcommand};
use tether_core::Tether;
use tether_core::model::trace::Contributor;
use tether_core::ops::trace::{self, Blame, BlameResult, Export, Publish};

use crate::render::{self, JsonFlag};

#[derive(Debug, Args)]
pub struct BlameArgs {
    pub file: PathBuf,
    /// Only these lines: START,END (or START alone).
    #[arg(short = 'L', value_name = "START,END")]
    pub lines: Option<String>,
    #[command(flatten)]
    pub out: JsonFlag,
}

#[derive(Debug, Subcommand)]
pub enum TraceCmd {
    /// Write Agent Trace records (JSON lines, application/vnd.agent-trace.record+json) of the
    /// edits recorded, to stdout or a file. Chat text is left out unless --with-excerpts.
    Export {
        /// Only edits since: 7d, 24h, or a date (2026-11-01).
        #[arg(long)]
        since: Option<String>,
        /// Only this repository (any folder in it).
        #[arg(long, value_name = "DIR")]
        repo: Option<PathBuf>,
        /// Write here instead of stdout.
        #[arg(short = 'o', long = "output", value_name = "FILE")]
        output: Option<PathBuf>,
        /// Add the words of the turn that made each edit.
        #[arg(long)]
        with_excerpts: bool,
    },
    /// Write records into a repository on each commit: as git notes (refs/notes/agent-trace) or
    /// files (.agent-trace/traces.jsonl). Off by default; nothing enters a repository otherwise.
    Enable {
        #[arg(long, value_name = "DIR", default_value = ".")]
        repo: PathBuf,
        /// notes or files.
        #[arg(long = "store", default_value = "notes")]
        store: String,
    },
    /// Stop writing records into the repository (what was written stays).
    Disable {
        #[arg(long, value_name = "DIR", default_value = ".")]
        repo: PathBuf,
    },
    /// Write the records of commits made since the last time now (the daemon does it on its own).
    Publish,
    /// The repositories traced: since when, and whether records go into them.
    Status {
        #[command(flatten)]
        out: JsonFlag,
    },
}

fn absolute(p: &std::path::Path) -> anyhow::Result<String> {
    let abs = std::path::absolute(p).with_context(|| format!("resolving {}", p.display()))?;
    Ok(abs.to_string_lossy().into_owned())
}

pub fn blame(t: &Tether, a: BlameArgs) -> anyhow::Result<()> {
    let (line, end_line) = match a.lines.as_deref() {
        None => (None, None),
        Some(l) => {
            let (s, e) = l.split_once(',').unwrap_or((l, l));
            let n =
                |v: &str| v.trim().parse::<u32>().with_context(|| format!("-L {l}: give START,END as line numbers"));
            (Some(n(s)?), Some(n(e)?))
        }
    };
    let r = trace::blame(t, &super::me(None), &Blame { path: absolute(&a.file)?, line, end_line })?;
    a.out.print(&r, print_blame)
}

fn print_blame(r: &BlameResult) {
    let index: std::collections::HashMap<i64, usize> = r.edits.iter().enumerate().map(|(i, e)| (e.id, i + 1)).collect();
    let width = r.lines.last().map_or(1, |l| l.line.to_string().len());
    for l in &r.lines {
        let who = match (l.origin, l.edit.and_then(|e| index.get(&e))) {
            (o, Some(n)) => format!("{:<7} [{n}]", o.as_str()),
            (o, None) => o.as_str().to_owned(),
        };
        let who = format!("{who:<12}");
        let who = if l.origin == Contributor::Unknown { render::dim(&who) } else { who };
        println!("{:>width$} {who} {}", l.line, l.text);
    }
    println!();
    for (i, e) in r.edits.iter().enumerate() {
        let title = e.title.as_deref().map_or_else(|| "(chat not indexed)".to_owned(), |t| format!("\"{t}\""));
        let kind = match e.kind {
            tether_core::model::trace::EditKind::Tab => "Cursor Tab",
            tether_core::model::trace::EditKind::Run => "Tether run",
            tether_core::model::trace::EditKind::Agent => "Cursor agent",
        };
        let model = e.model.as_deref().unwrap_or("model unknown");
        let at = render::local_time(Some(&e.at));
        let link = match (&e.session, &e.run_id) {
            (_, Some(run)) => format!("tether runs show {run}"),
            (Some(s), None) => format!("tether sessions show {}", &s[..s.len().min(12)]),
            (None, None) => e.conversation_id.clone().map_or_else(String::new, |c| format!("chat {c}")),
        };
        let moved = if e.path != r.path { format!(", written in {}", e.path) } else { String::new() };
        println!("[{}] {title} — {kind}, {model}, {at}{moved}", i + 1);
        if !link.is_empty() {
            println!("    {}", render::dim(&link));
        }
    }
    let c = &r.counts;
    let since = r.traced_since.as_deref().map_or_else(
        || "not traced: no edits recorded in this repository".to_owned(),
        |s| format!("traced since {}", render::local_time(Some(s))),
    );
    println!(
        "{}",
        render::dim(&format!("{} ai · {} mixed · {} human · {} unknown — {since}", c.ai, c.mixed, c.human, c.unknown))
    );
    if let Some(ct) = &r.cursor_tracking {
        print_cursor_tracking(ct);
    }
}

/// Cursor's own tracking of the file: chats and commit scores, said as what they are.
fn print_cursor_tracking(ct: &tether_core::ops::trace::CursorTracking) {
    println!();
    let since = ct.since.as_deref().map_or_else(String::new, |s| format!(", since {}", render::local_time(Some(s))));
    println!("Cursor's AI-code tracking ({}{since}):", ct.source);
    if let Some(why) = &ct.skipped {
        println!("    {}", render::dim(&format!("not read: {why}")));
    }
    for c in &ct.chats {
        let who = match (&c.title, c.conversation_id.is_empty()) {
            (Some(t), _) => format!("\"{t}\""),
            (None, true) => "(no chat)".to_owned(),
            (None, false) => format!("chat {}", c.conversation_id),
        };
        let model = c.model.as_deref().unwrap_or("model unknown");
        let last = render::local_time(c.last_at.as_deref());
        println!("    {who} — {}, {model}, {} chunk(s), last {last}", c.source, c.chunks);
    }
    for s in &ct.commits {
        let n = |v: Option<i64>| v.map_or_else(|| "?".to_owned(), |v| v.to_string());
        println!(
            "    commit {} — {} lines added: {} agent · {} tab · {} human",
            &s.commit[..s.commit.len().min(12)],
            n(s.lines_added),
            n(s.agent_lines_added),
            n(s.tab_lines_added),
            n(s.human_lines_added)
        );
    }
    if ct.chats.is_empty() && ct.commits.is_empty() && ct.skipped.is_none() {
        println!("    {}", render::dim("nothing recorded for this file or its commits"));
    }
    println!("    {}", render::dim(ct.covers));
}

pub fn run(t: &Tether, cmd: TraceCmd) -> anyhow::Result<()> {
    let me = super::me(None);
    match cmd {
        TraceCmd::Export { since, repo, output, with_excerpts } => {
            let repo = repo.as_deref().map(absolute).transpose()?;
            let records = trace::export(t, &me, &Export { since, repo, with_excerpts })?;
            render::to_file_or_stdout(output.as_deref(), &tether_core::model::trace::to_jsonl(&records)?)?;
            if let Some(o) = output {
                eprintln!("{} records ({}) written to {}", records.len(), trace::MIME, o.display());
            }
            Ok(())
        }
        TraceCmd::Enable { repo, store } => {
            let r = trace::set_publish(t, &me, &Publish { repo: absolute(&repo)?, store: Some(store) })?;
            println!(
                "{}: records of new commits go into {} (tether trace disable stops it)",
                r.repo,
                if r.publish.as_deref() == Some("files") {
                    ".agent-trace/traces.jsonl"
                } else {
                    "git notes refs/notes/agent-trace"
                }
            );
            Ok(())
        }
        TraceCmd::Disable { repo } => {
            let r = trace::set_publish(t, &me, &Publish { repo: absolute(&repo)?, store: None })?;
            println!("{}: no more records are written into it", r.repo);
            Ok(())
        }
        TraceCmd::Publish => {
            let p = tether_core::code_origin::publish(t)?;
            println!("{} records written for {} commits", p.records, p.commits);
            Ok(())
        }
        TraceCmd::Status { out } => out.print(&trace::repos(t)?, |repos| {
            if repos.is_empty() {
                println!(
                    "No repository traced yet: edits are recorded once Tether's hooks are installed (tether init)."
                );
            }
            for r in repos {
                let publish = r.publish.as_deref().map_or("private".to_owned(), |m| format!("records into {m}"));
                println!(
                    "{}  since {}  {publish}",
                    r.repo,
                    render::local_time(Some(&tether_core::clock::iso(r.since_ms)))
                );
            }
        }),
    }
}
