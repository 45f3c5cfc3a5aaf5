//! What every suite shares to measure and report: percentiles, the table rows, the Markdown
//! sections of `docs/benchmarks.md`, and the machine and commit they were measured on. A leaf.

use std::fmt::Write as _;
use std::process::Command;

/// Peak resident set size of this process (Linux); 0 where /proc is missing.
pub(crate) fn vm_hwm_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find(|l| l.starts_with("VmHWM:")).and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

pub(crate) fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((p / 100.0) * (sorted.len() - 1) as f64).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

pub(crate) fn sorted(mut v: Vec<f64>) -> Vec<f64> {
    v.sort_by(f64::total_cmp);
    v
}

pub(crate) struct Row {
    pub(crate) metric: String,
    pub(crate) measured: String,
    pub(crate) target: String,
    /// measured/target, oriented so that ≥ 1.0 means the target is met.
    pub(crate) headroom: Option<f64>,
}

impl Row {
    pub(crate) fn new(metric: &str, measured: String, target: &str, headroom: Option<f64>) -> Self {
        Self { metric: metric.into(), measured, target: target.into(), headroom }
    }
}

/// Replaces the text between `<!-- bench:NAME -->` markers (or adds the section), so each suite
/// can be re-run alone without losing the other's figures.
pub(crate) fn replace_section(doc: &str, name: &str, text: &str) -> String {
    let (open, close) = (format!("<!-- bench:{name} -->"), format!("<!-- /bench:{name} -->"));
    let block = format!("{open}\n{}\n{close}", text.trim_end());
    let mut doc = if doc.trim().is_empty() || !doc.contains("<!-- bench:") {
        "# Benchmarks\n\nWritten by `scripts/bench` (see its `--help`); each section comes from one run, so compare rows within a section.\n".to_owned()
    } else {
        doc.to_owned()
    };
    match (doc.find(&open), doc.find(&close)) {
        (Some(a), Some(b)) if b > a => doc.replace_range(a..b + close.len(), &block),
        _ => {
            if !doc.ends_with('\n') {
                doc.push('\n');
            }
            doc.push('\n');
            doc.push_str(&block);
            doc.push('\n');
        }
    }
    doc
}

pub(crate) fn render_section(title: &str, setup: &str, rows: &[Row]) -> String {
    let mut s = String::new();
    let w = &mut s;
    let _ = writeln!(w, "## {title}\n");
    let _ = writeln!(
        w,
        "Commit `{}`, {}. Machine: {}. {setup}\n",
        git_rev(),
        chrono::Utc::now().format("%Y-%m-%d"),
        machine()
    );
    rows_table(w, rows);
    s
}

pub(crate) fn rows_table(w: &mut String, rows: &[Row]) {
    let _ = writeln!(w, "| metric | measured | target | headroom | verdict |\n|---|---|---|---|---|");
    for r in rows {
        let (headroom, verdict) = match r.headroom {
            Some(h) => (format!("{h:.2}×"), if h >= 1.0 { "PASS" } else { "MISS" }),
            None => ("—".to_owned(), "—"),
        };
        let _ = writeln!(w, "| {} | {} | {} | {headroom} | {verdict} |", r.metric, r.measured, r.target);
    }
}

pub(crate) fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines().find(|l| l.starts_with("model name")).map(|l| l.split(':').nth(1).unwrap_or("").trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0);
    format!("{cpu}, {cores} cores available")
}

pub(crate) fn git_rev() -> String {
    Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_else(|| "unknown".into())
}
