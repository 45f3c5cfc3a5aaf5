//! `tether stats`: the Insights view's numbers (`ops::system::insights`) in the terminal (or as
//! JSON).

use clap::Args;
use tether_core::Tether;
use tether_core::insights::{Insights, InsightsQuery};
use tether_core::ops;

use crate::render::{self, JsonFlag};

#[derive(Debug, Args)]
pub struct StatsArgs {
    /// Only since: a date (2026-01-31) or 30d, 12w, 6m, 1y.
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,
    /// Only this project (a folder; its subfolders count too).
    #[arg(long, value_name = "PATH")]
    pub project: Option<String>,
    #[command(flatten)]
    pub out: JsonFlag,
}

pub fn run(t: &Tether, a: StatsArgs) -> anyhow::Result<()> {
    let since = a.since.as_deref().map(parse_since).transpose()?;
    let project = a.project.map(|p| {
        // A folder given as `.` or relative means where the person stands.
        let path = std::path::Path::new(&p);
        if path.is_relative() && path.exists() {
            path.canonicalize().map(|c| c.to_string_lossy().into_owned()).unwrap_or(p)
        } else {
            p
        }
    });
    let i = ops::system::insights(t, &InsightsQuery { since, project })?;
    a.out.print(&i, print)
}

/// `30d`, `12w`, `6m` (months of 30 days), `1y`, or a date `YYYY-MM-DD` (local midnight).
fn parse_since(s: &str) -> anyhow::Result<i64> {
    let s = s.trim();
    if let Ok(d) = chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d") {
        let local = d.and_hms_opt(0, 0, 0).and_then(|t| t.and_local_timezone(chrono::Local).earliest());
        return local.map(|t| t.timestamp_millis()).ok_or_else(|| anyhow::anyhow!("{s}: no such local time"));
    }
    let (n, unit) = s.split_at(s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len()));
    let n: i64 = n.parse().map_err(|_| anyhow::anyhow!("{s:?}: give a date (2026-01-31) or 30d, 12w, 6m, 1y"))?;
    let per = match unit {
        "d" => 1,
        "w" => 7,
        "m" => 30,
        "y" => 365,
        _ => anyhow::bail!("{s:?}: give a date (2026-01-31) or 30d, 12w, 6m, 1y"),
    };
    // A count too large for milliseconds is a typo, not a moment before time began.
    n.checked_mul(per)
        .and_then(|d| d.checked_mul(86_400_000))
        .and_then(|back| tether_core::clock::now_ms().checked_sub(back))
        .ok_or_else(|| anyhow::anyhow!("{s:?}: give a date (2026-01-31) or 30d, 12w, 6m, 1y"))
}

fn bar(n: i64, max: i64, width: usize) -> String {
    let w = if max <= 0 { 0 } else { ((n as f64 / max as f64) * width as f64).round() as usize };
    "█".repeat(w.max(usize::from(n > 0)))
}

fn print(i: &Insights) {
    let t = &i.totals;
    println!("{} chats, {} messages, {} projects, active on {} days", t.chats, t.messages, t.projects, t.days_active);
    if t.chats == 0 {
        println!("Nothing yet in this range. Index Cursor's history with `tether index`.");
        return;
    }
    // The last twelve weeks as a row of bars: what a glance at the heat map gives.
    let mut weeks: std::collections::BTreeMap<String, i64> = Default::default();
    for d in &i.days {
        if let Ok(day) = chrono::NaiveDate::parse_from_str(&d.day, "%Y-%m-%d") {
            let monday =
                day - chrono::Duration::days(i64::from(chrono::Datelike::weekday(&day).num_days_from_monday()));
            *weeks.entry(monday.to_string()).or_default() += d.messages;
        }
    }
    let recent: Vec<(&String, &i64)> = weeks.iter().rev().take(12).collect::<Vec<_>>().into_iter().rev().collect();
    let max = recent.iter().map(|(_, n)| **n).max().unwrap_or(0);
    println!("\nMessages per week");
    for (w, n) in &recent {
        println!("  {w}  {:>6}  {}", n, bar(**n, max, 40));
    }
    let max = i.projects.first().map_or(0, |p| p.messages);
    println!("\nTop projects");
    for p in &i.projects {
        let name = p.project.as_deref().unwrap_or("(no project)");
        println!(
            "  {:<40} {:>5} chats {:>7} msgs  {}",
            render::cut_path(name, 40),
            p.chats,
            p.messages,
            bar(p.messages, max, 20)
        );
    }
    println!("\nBusiest days");
    for d in &i.busiest_days {
        println!("  {}  {:>6} messages, {} chats started", d.day, d.messages, d.chats);
    }
    println!("\nLongest chats");
    for c in i.longest.iter().take(5) {
        println!(
            "  {:>5} msgs  {:<6} {}  {}",
            c.messages,
            c.source,
            &c.id[..c.id.len().min(8)],
            c.title.as_deref().unwrap_or("")
        );
    }
    println!("\nModels (by chat)");
    for m in &i.models {
        println!("  {:<28} {:>5}", m.model, m.chats);
    }
    if !i.tags.is_empty() {
        println!("\nTags");
        println!("  {}", i.tags.iter().map(|t| format!("{} ({})", t.tag, t.chats)).collect::<Vec<_>>().join(", "));
    }
    let done: i64 = i.tasks.done_per_day.iter().map(|d| d.count).sum();
    if done > 0 || !i.runs.is_empty() {
        println!("\nBoard");
        if let Some(s) = &i.tasks.claim_to_done {
            println!("  {done} tasks done; claim → done: median {}, 90% within {}", human(s.p50_ms), human(s.p90_ms));
        } else if done > 0 {
            println!("  {done} tasks done");
        }
        for r in &i.runs {
            println!("  {} {} runs: {}", r.count, r.kind, r.status);
        }
    }
    let k = &i.tokens;
    println!(
        "\nTokens: {} of {} runs recorded figures ({} in, {} out, {} from cache). Cursor's chat databases mostly record none, so chats show no figures rather than invented ones.",
        k.runs_with_figures, k.runs, k.input, k.output, k.cache_read
    );
}

fn human(ms: i64) -> String {
    let m = ms / 60_000;
    if m < 60 {
        format!("{m} min")
    } else if m < 48 * 60 {
        format!("{:.1} h", m as f64 / 60.0)
    } else {
        format!("{} days", m / 1440)
    }
}
