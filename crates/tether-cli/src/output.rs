//! Human-readable rendering for the terminal. JSON output is serde's, straight from core types.

use std::io::IsTerminal;

use tether_core::index::IndexReport;
use tether_core::model::Tally;
use tether_core::sessions::{SearchHit, SessionDetail, SessionSummary};

pub fn json<T: serde::Serialize>(v: &T) -> anyhow::Result<()> {
    println!("{}", serde_json::to_string_pretty(v)?);
    Ok(())
}

pub fn color() -> bool {
    std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none()
}

fn bold(s: &str) -> String {
    if color() { format!("\x1b[1m{s}\x1b[0m") } else { s.to_owned() }
}

fn dim(s: &str) -> String {
    if color() { format!("\x1b[2m{s}\x1b[0m") } else { s.to_owned() }
}

/// RFC 3339 → local `YYYY-MM-DD HH:MM`.
pub fn local_time(iso: Option<&str>) -> String {
    iso.and_then(|s| chrono::DateTime::parse_from_rfc3339(s).ok())
        .map(|d| d.with_timezone(&chrono::Local).format("%Y-%m-%d %H:%M").to_string())
        .unwrap_or_else(|| "—".into())
}

fn home_short(p: &str) -> String {
    match std::env::var("HOME") {
        Ok(h) if !h.is_empty() && p.starts_with(&h) => format!("~{}", &p[h.len()..]),
        _ => p.to_owned(),
    }
}

fn cut(s: &str, max: usize) -> String {
    tether_core::model::truncate_chars(s, max)
}

pub fn sessions(list: &[SessionSummary]) {
    if list.is_empty() {
        println!("No chats found. Run `tether index` first, or check `tether doctor` for where Tether looked.");
        return;
    }
    println!("{}", dim(&format!("{:<16}  {:>5}  {:<4}  {:<8}  TITLE / PROJECT", "UPDATED", "MSGS", "SRC", "ID")));
    for s in list {
        let mut title = s.title.clone().unwrap_or_else(|| "(untitled)".into());
        if s.bookmarked {
            title = format!("★ {title}");
        }
        if let Some(n) = &s.nickname {
            title = format!("{title} [{n}]");
        }
        if !s.tags.is_empty() {
            title = format!("{title} #{}", s.tags.join(" #"));
        }
        let project = s.project.as_deref().map(home_short).unwrap_or_default();
        println!(
            "{:<16}  {:>5}  {:<4}  {:<8}  {}  {}",
            local_time(s.updated_at.as_deref()),
            s.messages,
            s.source,
            &s.id[..s.id.len().min(8)],
            cut(&title, 70),
            dim(&project)
        );
    }
}

pub fn hits(hits: &[SearchHit]) {
    if hits.is_empty() {
        println!("No matches.");
        return;
    }
    for h in hits {
        println!(
            "{}  {}  {}",
            bold(&cut(h.title.as_deref().unwrap_or("(untitled)"), 70)),
            dim(&h.session_id),
            dim(&h.project.as_deref().map(home_short).unwrap_or_default())
        );
        println!("    {}", h.snippet.replace('\n', " "));
    }
}

pub fn detail(d: &SessionDetail) {
    let s = &d.session;
    println!("{}", bold(s.title.as_deref().unwrap_or("(untitled)")));
    println!(
        "{}",
        dim(&format!(
            "{} · {} · {} · updated {}",
            s.id,
            s.project.as_deref().map(home_short).unwrap_or_else(|| "no project".into()),
            s.format,
            local_time(s.updated_at.as_deref())
        ))
    );
    for m in &d.messages {
        match m.kind.as_str() {
            "tool" => println!(
                "  {} {}{}: {}",
                dim("⚙"),
                m.tool_name.as_deref().unwrap_or("tool"),
                m.tool_status.as_deref().map(|s| format!(" ({s})")).unwrap_or_default(),
                m.text
            ),
            "thinking" => println!("  {} {}", dim("… thinking:"), dim(&cut(&m.text.replace('\n', " "), 200))),
            _ => {
                println!();
                println!("{}", bold(&format!("── {} {}", m.role, dim(&local_time(m.created_at.as_deref())))));
                println!("{}", m.text);
            }
        }
    }
    let shown = d.offset + d.messages.len();
    if (shown as i64) < d.parts && !d.messages.is_empty() {
        println!("{}", dim(&format!("\n… more: --offset {shown}")));
    }
}

fn tally(t: &Tally) -> String {
    t.0.iter().map(|(k, v)| format!("{k}×{v}")).collect::<Vec<_>>().join(", ")
}

pub fn index_report(r: &IndexReport) {
    for s in &r.sources {
        let mut line = format!(
            "{:<9} {:<10} {:>5} chats {:>7} msgs  {}",
            s.status,
            s.kind.as_str(),
            s.sessions,
            s.messages,
            home_short(&s.path)
        );
        if !s.reasons.is_empty() {
            line.push_str(&format!("  [{}]", tally(&s.reasons)));
        }
        if let Some(e) = &s.error {
            line.push_str(&format!("  error: {e}"));
        }
        println!("{line}");
    }
    println!(
        "{} chats, {} messages indexed; {} updated, {} removed in {:.1}s.",
        r.sessions_total,
        r.messages_total,
        r.sessions_written,
        r.sessions_deleted,
        r.elapsed_ms as f64 / 1000.0
    );
    if r.sources.is_empty() {
        println!("No Cursor data found. See `tether doctor` for the places Tether looked, or pass --cursor-dir.");
    }
}

pub fn doctor(d: &tether_core::doctor::DoctorReport) {
    println!("{}", bold(&format!("Tether {}", d.version)));
    println!("data dir     {}", d.data_dir);
    println!("index        {} ({:.1} MB)", d.index_db, d.index_bytes as f64 / 1e6);
    match &d.daemon {
        Some(i) => println!("daemon       running (pid {}, since {})", i.pid, i.started_at),
        None => println!("daemon       not running"),
    }
    println!();
    for l in &d.cursor_user_dirs {
        println!("Cursor User  {} {}", l.path, if l.exists { "" } else { "(not found)" });
    }
    for l in &d.cursor_homes {
        println!("Cursor home  {} {}", l.path, if l.exists { "" } else { "(not found)" });
    }
    println!("\n{} chats, {} messages in the index.", d.sessions, d.messages);
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
