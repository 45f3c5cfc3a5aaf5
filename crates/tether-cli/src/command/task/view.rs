//! The task board as text: a list, one task with its history, the board in columns, an import's
//! report.

use tether_core::model::tasks::ImportReport;
use tether_core::model::tasks::{Status, Task, TaskDetail};

use crate::render::{bold, color, cut, dim, local_time};

fn status_label(s: Status) -> String {
    let code = match s {
        Status::InProgress => "33",
        Status::InReview => "36",
        Status::Blocked => "31",
        Status::Done => "32",
        Status::Cancelled => "2",
        Status::Todo => "0",
    };
    let text = format!("{:<11}", s.as_str());
    if color() { format!("\x1b[{code}m{text}\x1b[0m") } else { text }
}

fn holder(t: &Task) -> String {
    match &t.assignee {
        Some(a) if t.lease_expired => format!("{a} (lease expired)"),
        Some(a) => a.clone(),
        None => "—".into(),
    }
}

pub fn list(list: &[Task]) {
    if list.is_empty() {
        println!("No tasks. Add one with `tether task add \"…\"`, or import with `tether task import`.");
        return;
    }
    println!("{}", dim(&format!("{:<6}  {:<11}  {:<8}  {:<18}  TITLE", "ID", "STATUS", "PRIORITY", "ASSIGNEE")));
    for t in list {
        let mut title = cut(&t.title, 70);
        if !t.blocked_by.is_empty() {
            title = format!("{title} {}", dim(&format!("(waits for {})", t.blocked_by.join(", "))));
        }
        println!(
            "{:<6}  {}  {:<8}  {:<18}  {title}",
            bold(&t.id),
            status_label(t.status),
            t.priority,
            cut(&holder(t), 18)
        );
    }
}

pub fn detail(d: &TaskDetail) {
    let t = &d.task;
    println!("{} {}", bold(&t.id), bold(&t.title));
    println!("status {}  priority {}  assignee {}", t.status, t.priority, holder(t));
    for (k, v) in [("role", &t.role), ("project", &t.project), ("lease until", &t.lease_until)] {
        if let Some(v) = v {
            println!("{k}: {v}");
        }
    }
    if !t.labels.is_empty() {
        println!("labels: {}", t.labels.join(", "));
    }
    if !t.depends_on.is_empty() {
        println!("depends on: {}", t.depends_on.join(", "));
    }
    if !t.description.is_empty() {
        println!("\n{}", t.description);
    }
    if !t.acceptance.is_empty() {
        println!("\n{}", bold("Acceptance"));
        for a in &t.acceptance {
            println!("  - {a}");
        }
    }
    if let Some(s) = &t.summary {
        println!("\n{}\n{s}", bold("Summary"));
    }
    println!("\n{}", bold("History"));
    for e in &d.history {
        let text = e.detail.get("text").and_then(|v| v.as_str()).map(|s| format!(": {s}")).unwrap_or_default();
        println!("  {}  {:<10} {}{}", dim(&local_time(Some(&e.at))), e.kind, e.actor, text);
    }
}

/// Columns per open status, as wide as the terminal allows.
pub fn board(all: &[Task]) {
    let cols = [Status::Todo, Status::InProgress, Status::InReview, Status::Blocked];
    let width = std::env::var("COLUMNS").ok().and_then(|c| c.parse::<usize>().ok()).unwrap_or(100).clamp(60, 240);
    let w = width / cols.len() - 2;
    let cells: Vec<Vec<String>> = cols
        .iter()
        .map(|st| {
            all.iter()
                .filter(|t| t.status == *st)
                .flat_map(|t| {
                    let who = t.assignee.as_deref().map(|a| format!("  @{a}")).unwrap_or_default();
                    [cut(&format!("{} {}", t.id, t.title), w), cut(&format!("  [{}]{who}", t.priority), w)]
                })
                .collect()
        })
        .collect();
    let head: Vec<String> = cols
        .iter()
        .zip(&cells)
        .map(|(st, c)| format!("{:<w$}", format!("{} ({})", st.as_str().to_uppercase(), c.len() / 2)))
        .collect();
    println!("{}", bold(&head.join("  ")));
    println!("{}", dim(&vec!["─".repeat(w); cols.len()].join("  ")));
    let rows = cells.iter().map(Vec::len).max().unwrap_or(0);
    for r in 0..rows {
        let line: Vec<String> =
            cells.iter().map(|c| format!("{:<w$}", c.get(r).map(String::as_str).unwrap_or(""))).collect();
        println!("{}", line.join("  ").trim_end());
    }
    let done = all.iter().filter(|t| t.status == Status::Done).count();
    let cancelled = all.iter().filter(|t| t.status == Status::Cancelled).count();
    println!("{}", dim(&format!("\n{done} done, {cancelled} cancelled")));
}

pub fn import_report(r: &ImportReport) {
    println!(
        "Imported from {}: {} new, {} refreshed, {} unchanged.",
        r.source,
        r.created.len(),
        r.updated.len(),
        r.unchanged.len()
    );
    for c in r.created.iter().chain(&r.updated) {
        println!("  {c}");
    }
    if !r.not_mapped.is_empty() {
        println!("Not carried over:");
        for n in &r.not_mapped {
            println!("  - {n}");
        }
    }
}
