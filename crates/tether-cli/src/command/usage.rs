//! `tether usage`: what runs, chats and the account spent (`ops::usage::report`), grouped as
//! asked, as text, JSON or CSV; importing the account's usage CSV; the price table; a task's
//! budget.

use std::path::PathBuf;

use anyhow::Context;
use clap::{Args, Subcommand};
use tether_core::Tether;
use tether_core::model::sessions::ImportReport;
use tether_core::ops;
use tether_core::ops::usage::{ImportUsage, TaskBudget};
use tether_core::usage::report::{Dim, UsageQuery, UsageReport, UsageRow, to_csv};
use tether_core::usage::{PriceTable, thousands};

use crate::render::{self, JsonFlag};

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct UsageArgs {
    #[command(subcommand)]
    pub cmd: Option<UsageCmd>,
    #[command(flatten)]
    pub report: ReportArgs,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// From when: 30d (default), 12w, 6m, 1y, today, or a date (2026-01-31).
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,
    /// Up to this date (not included).
    #[arg(long, value_name = "DATE")]
    pub until: Option<String>,
    /// Group by (repeatable, in order): day, week, month, model, project, task, run, agent, role,
    /// source [default: day].
    #[arg(long, value_name = "WHAT")]
    pub by: Vec<String>,
    /// Only one source: runs, chats, sdk (Cursor's SDK / Agents Window agents, per run), agents
    /// (Claude Code, Codex, Gemini CLI) or account.
    #[arg(long, value_name = "SOURCE")]
    pub source: Option<String>,
    /// At most this many rows.
    #[arg(long)]
    pub limit: Option<usize>,
    /// CSV with the same columns as the JSON rows.
    #[arg(long, conflicts_with = "json")]
    pub csv: bool,
    #[command(flatten)]
    pub out: JsonFlag,
}

#[derive(Debug, Subcommand)]
pub enum UsageCmd {
    /// Import the usage CSV exported from Cursor's dashboard (read here, offline; events seen
    /// before are not added again).
    Import {
        file: PathBuf,
        #[command(flatten)]
        out: JsonFlag,
    },
    /// The prices per million tokens used for estimates (shipped, under your usage.prices).
    Prices {
        #[command(flatten)]
        out: JsonFlag,
    },
    /// Set a task's budget over all its runs: tokens (500k) or dollars ($5); `none` clears it.
    Budget { task: String, budget: String },
}

pub fn run(t: &Tether, a: UsageArgs) -> anyhow::Result<()> {
    let me = super::me(None);
    match a.cmd {
        None => {
            let r = a.report;
            let by = r.by.iter().flat_map(|b| b.split(',')).map(str::parse).collect::<Result<Vec<Dim>, _>>()?;
            let q = UsageQuery { since: r.since, until: r.until, by, source: r.source, limit: r.limit };
            let report = ops::usage::report(t, &me, &q)?;
            if r.csv {
                print!("{}", to_csv(&report));
                return Ok(());
            }
            r.out.print(&report, print_report)
        }
        Some(UsageCmd::Import { file, out }) => {
            let csv = std::fs::read_to_string(&file).with_context(|| format!("reading {}", file.display()))?;
            let name =
                file.file_name().map_or_else(|| file.display().to_string(), |n| n.to_string_lossy().into_owned());
            let r = ops::usage::import(t, &me, &ImportUsage { file: name, csv })?;
            out.print(&r, print_import)
        }
        Some(UsageCmd::Prices { out }) => out.print(&ops::usage::prices(t)?, print_prices),
        Some(UsageCmd::Budget { task, budget }) => {
            let budget = match budget.trim() {
                "none" | "" => None,
                b => Some(b.parse()?),
            };
            ops::usage::set_task_budget(t, &me, &TaskBudget { task: task.clone(), budget })?;
            match budget {
                Some(b) => println!("{task}'s budget is {b} over all its runs"),
                None => println!("{task} has no budget of its own now"),
            }
            Ok(())
        }
    }
}

/// A figure, or `—` when none was recorded (never a zero).
fn figure(n: Option<i64>) -> String {
    n.map_or_else(|| "—".to_owned(), thousands)
}

fn cost(r: &UsageRow) -> String {
    match r.cost_usd {
        Some(c) => format!("${c:.2}{}", if r.cost_estimated { " est." } else { "" }),
        None if r.with_tokens > 0 => "no price".into(),
        None => "-".into(),
    }
}

fn print_report(r: &UsageReport) {
    let by: Vec<String> = r.by.iter().map(|d| format!("{d:?}").to_lowercase()).collect();
    println!("{} {} to {}", render::bold("Usage"), r.from, r.to);
    let mut header = vec!["source".to_owned()];
    header.extend(by.iter().cloned());
    header.extend(["items", "with tokens", "tokens", "cost"].map(str::to_owned));
    let rows: Vec<Vec<String>> = r
        .rows
        .iter()
        .map(|row| {
            let mut cells = vec![row.source.clone()];
            cells.extend(row.keys.iter().cloned());
            cells.push(row.items.to_string());
            cells.push(row.with_tokens.to_string());
            cells.push(figure(row.tokens));
            cells.push(cost(row));
            cells
        })
        .collect();
    table(&header, &rows);
    println!();
    for tot in &r.totals {
        let matched = if tot.matched_by_time > 0 {
            format!(", {} matched to runs by time", tot.matched_by_time)
        } else {
            String::new()
        };
        let unpriced = if tot.unpriced_tokens > 0 {
            format!(", {} tokens with no price", thousands(tot.unpriced_tokens))
        } else {
            String::new()
        };
        let tokens = match tot.tokens {
            Some(n) => format!(
                "{} tokens ({} in, {} out, {} cache read, {} cache write)",
                thousands(n),
                figure(tot.input),
                figure(tot.output),
                figure(tot.cache_read),
                figure(tot.cache_write)
            ),
            None => "— tokens (not recorded)".to_owned(),
        };
        println!("{:<8} {tokens}, {}{unpriced}{matched}", tot.source, cost(tot));
    }
    if r.totals.is_empty() {
        println!("Nothing recorded in this period.");
    }
    for n in &r.coverage.notes {
        println!("{}", render::dim(&format!("· {n}")));
    }
    println!("{}", render::dim(&format!("· estimates use prices as of {} (tether usage prices)", r.prices_as_of)));
}

fn table(header: &[String], rows: &[Vec<String>]) {
    let mut w: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            w[i] = w[i].max(c.chars().count());
        }
    }
    let line = |cells: &[String]| {
        cells.iter().enumerate().map(|(i, c)| format!("{c:<width$}", width = w[i])).collect::<Vec<_>>().join("  ")
    };
    println!("{}", render::dim(line(header).trim_end()));
    for r in rows {
        println!("{}", line(r).trim_end());
    }
}

fn print_import(r: &ImportReport) {
    println!(
        "{}: {} rows, {} new events, {} already imported ({} errored or not charged, {} free)",
        r.file, r.rows, r.imported, r.duplicates, r.errored, r.free
    );
    for m in &r.malformed {
        println!("  line {}: {}", m.line, m.reason);
    }
    if !r.unknown_columns.is_empty() {
        println!("  kept columns this version does not know: {}", r.unknown_columns.join(", "));
    }
}

fn print_prices(p: &PriceTable) {
    println!("{} per million tokens, as of {} — {}", render::bold("Prices"), p.as_of, p.source);
    let header = ["model", "input", "output", "cache read", "cache write", ""].map(str::to_owned);
    let rows: Vec<Vec<String>> = p
        .models
        .iter()
        .map(|(m, pr)| {
            vec![
                m.clone(),
                format!("${}", pr.input),
                format!("${}", pr.output),
                format!("${}", pr.cache_read),
                format!("${}", pr.cache_write),
                if p.overridden.contains(m) { "(your setting)".into() } else { String::new() },
            ]
        })
        .collect();
    table(&header, &rows);
}
