//! How `tether runs diff|comment|merge|worktrees` print: a run's changes (files with counts, the
//! unified diff, the comments on it), a comment's place, a merge's outcome.

use anyhow::{Context, bail};
use tether_core::model::runs::ChangeKind;
use tether_core::model::runs::{Comment, NewComment};
use tether_core::ops::changes::{MergeResult, RunDiff};
use tether_core::ops::worktrees::WorktreesReport;

use crate::render::{bold, color, dim, home_short, local_time};

/// `FILE:LINE` or `FILE:FIRST-LAST` (the file may itself hold colons; the last one splits).
pub fn parse_at(at: &str, body: String) -> anyhow::Result<NewComment> {
    let (path, lines) = at.rsplit_once(':').with_context(|| format!("{at:?}: give FILE:LINE or FILE:FIRST-LAST"))?;
    let (a, b) = lines.split_once('-').unwrap_or((lines, lines));
    let num = |s: &str| s.trim().parse::<i64>().with_context(|| format!("{s:?} is not a line number"));
    let (start_line, end_line) = (num(a)?, num(b)?);
    if path.is_empty() || start_line < 1 || end_line < start_line {
        bail!("{at:?}: give FILE:LINE or FILE:FIRST-LAST with 1 ≤ FIRST ≤ LAST");
    }
    Ok(NewComment { path: path.to_owned(), start_line, end_line, body })
}

fn kind_letter(k: ChangeKind) -> &'static str {
    match k {
        ChangeKind::Added => "A",
        ChangeKind::Modified => "M",
        ChangeKind::Deleted => "D",
        ChangeKind::Renamed => "R",
        ChangeKind::Copied => "C",
        ChangeKind::TypeChanged => "T",
    }
}

pub fn print_diff(d: &RunDiff) {
    let s = d.summary;
    println!(
        "{} {} → {}: {} files, +{} −{}",
        bold(&d.run),
        d.base_branch.as_deref().unwrap_or(&d.base[..d.base.len().min(10)]),
        d.branch,
        s.files,
        s.added,
        s.deleted
    );
    if let Some(n) = &d.note {
        println!("  {}", dim(n));
    }
    for f in &d.files {
        let counts = match (f.added, f.deleted) {
            (Some(a), Some(r)) => format!("+{a} −{r}"),
            _ => "binary".into(),
        };
        let from = f.old_path.as_ref().map(|o| format!(" (from {o})")).unwrap_or_default();
        println!("  {} {}{from}  {}", kind_letter(f.kind), f.path, dim(&counts));
    }
    for c in d.comments.iter().filter(|c| c.comment.addressed_at.is_none()) {
        print_comment(&c.comment);
    }
    if let Some(p) = &d.patch {
        println!();
        for line in p.lines() {
            println!("{}", paint(line));
        }
    }
}

/// A patch line in git's colours when writing to a terminal.
fn paint(line: &str) -> String {
    if !color() {
        return line.to_owned();
    }
    let code = if line.starts_with("+++") || line.starts_with("---") || line.starts_with("diff ") {
        "1"
    } else if line.starts_with('+') {
        "32"
    } else if line.starts_with('-') {
        "31"
    } else if line.starts_with("@@") {
        "36"
    } else {
        return line.to_owned();
    };
    format!("\x1b[{code}m{line}\x1b[0m")
}

pub fn print_comment(c: &Comment) {
    let lines =
        if c.start_line == c.end_line { c.start_line.to_string() } else { format!("{}-{}", c.start_line, c.end_line) };
    let state = match (&c.addressed_at, &c.sent_in) {
        (Some(_), Some(r)) => format!("addressed by {r}"),
        (None, Some(r)) => format!("sent in {r}"),
        _ => "open".into(),
    };
    println!("  💬 {}:{lines} {} — {}", c.path, dim(&format!("({state}, {})", c.author)), c.body);
    for q in c.quote.lines() {
        println!("     {}", dim(&format!("> {q}")));
    }
}

pub fn print_merge(m: &MergeResult) {
    println!(
        "{} merged into {} ({:?}): {} → {}",
        bold(&m.run.id),
        m.into,
        m.strategy,
        &m.from[..m.from.len().min(10)],
        &m.commit[..m.commit.len().min(10)]
    );
    if let Some(c) = &m.checkout {
        println!("  your checkout {} has it now", home_short(c));
    }
}

pub fn print_worktrees(r: &WorktreesReport) {
    println!("{} worktrees, {:.1} MB", r.count, r.bytes as f64 / 1e6);
    for u in &r.worktrees {
        let w = &u.worktree;
        println!(
            "  {}  {}  {}  {}",
            u.runs.join(","),
            w.branch,
            home_short(&w.path),
            dim(&if u.active { "running".into() } else { format!("ended {}", local_time(u.last_ended_at.as_deref())) })
        );
    }
}
