//! The usage report: tokens and cost of runs (exact: the CLI's result, Cursor Cloud's usage
//! API), chats (what Cursor's stores kept, sparse) and the account (the imported CSV, as Cursor
//! billed it), grouped by what the person asks (day, week, month, model, project, task, run,
//! agent, role), each source on rows of its own: the account's figures are the same spend as
//! the runs' and chats', seen from the bill, so adding them would count it twice.

use std::collections::BTreeMap;

use chrono::{Datelike, Local, NaiveDate, TimeZone};
use serde::{Deserialize, Serialize};

use super::caps::today_start_ms;
use super::prices::PriceTable;
use crate::Tether;
use crate::board::runs::event::Usage;
use crate::board::usage::{self as board_usage, SpendFilter};
use crate::error::{Error, Result};
use crate::history::usage as history_usage;

/// What to group by.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema, ts_rs::TS,
)]
#[ts(export, export_to = "core.ts")]
#[serde(rename_all = "snake_case")]
pub enum Dim {
    Day,
    Week,
    Month,
    Model,
    Project,
    Task,
    Run,
    Agent,
    Role,
    /// Every row has its source; accepted so `--by source` reads naturally.
    Source,
}

impl std::str::FromStr for Dim {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        serde_json::from_value(serde_json::Value::String(s.trim().to_ascii_lowercase())).map_err(|_| {
            Error::invalid(
                "usage grouping",
                format!("{s:?}: use day, week, month, model, project, task, run, agent, role or source"),
            )
        })
    }
}

/// Which usage, grouped how.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct UsageQuery {
    /// From when: `30d` (the default: the last 30 days, today included), `12w`, `6m`, `1y`,
    /// `today`, or a date `2026-01-01`.
    #[serde(default)]
    #[ts(optional)]
    pub since: Option<String>,
    /// Up to this date (not included); default: now.
    #[serde(default)]
    #[ts(optional)]
    pub until: Option<String>,
    /// Group by these, in order (default: day).
    #[serde(default)]
    #[ts(optional, as = "Option<Vec<Dim>>")]
    pub by: Vec<Dim>,
    /// Only this source: `runs`, `chats` or `account`.
    #[serde(default)]
    #[ts(optional)]
    pub source: Option<String>,
    /// At most this many rows, biggest first when grouping by task, run or agent (default all).
    #[serde(default)]
    #[ts(optional)]
    pub limit: Option<usize>,
}

/// One group's figures.
#[derive(Debug, Clone, Default, Serialize, PartialEq, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct UsageRow {
    /// `runs` (Tether's runs, exact), `chats` (what Cursor's chat stores recorded) or `account`
    /// (the imported usage CSV, as Cursor billed it).
    pub source: String,
    /// The group's value for each of the report's `by`, in order.
    pub keys: Vec<String>,
    /// Runs, chats or account events in the group, and how many of them have token figures.
    pub items: u64,
    pub with_tokens: u64,
    pub input: i64,
    pub output: i64,
    pub cache_read: i64,
    pub cache_write: i64,
    pub tokens: i64,
    /// US dollars: Cursor's figures where it gave them, else estimated from the price table;
    /// absent when nothing in the group has either.
    #[ts(optional)]
    pub cost_usd: Option<f64>,
    /// Part of `cost_usd` is Tether's estimate, not Cursor's figure.
    pub cost_estimated: bool,
    /// Tokens of a model with no price: in `tokens`, not in `cost_usd`.
    pub unpriced_tokens: i64,
    /// Account events given to a run or chat by time alone (no id joins them).
    pub matched_by_time: u64,
}

/// How much of each source has figures at all.
#[derive(Debug, Clone, Default, Serialize, PartialEq, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct UsageCoverage {
    pub runs: u64,
    pub runs_with_tokens: u64,
    pub chats: u64,
    pub chats_with_tokens: u64,
    pub account_events: u64,
    /// What the coverage means, in a sentence each.
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, Serialize, PartialEq, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct UsageReport {
    /// The local days covered: from (included) and until (included).
    pub from: String,
    pub to: String,
    pub by: Vec<Dim>,
    pub rows: Vec<UsageRow>,
    /// One row per source over the whole period.
    pub totals: Vec<UsageRow>,
    pub coverage: UsageCoverage,
    /// The price table's date and source (estimates come from it).
    pub prices_as_of: String,
    pub prices_source: String,
}

/// One run, chat or account event on its way into a group.
struct Item<'a> {
    source: &'static str,
    day: &'a str,
    model: Option<&'a str>,
    project: Option<&'a str>,
    task: Option<String>,
    run: Option<String>,
    agent: Option<String>,
    role: Option<&'a str>,
    usage: Option<Usage>,
    cost: Option<f64>,
    by_time: bool,
}

/// The report for `q`.
pub fn report(t: &Tether, q: &UsageQuery) -> Result<UsageReport> {
    let settings = t.settings()?.usage;
    let prices = PriceTable::new(&settings);
    let since = since_ms(q.since.as_deref().unwrap_or("30d"))?;
    let until = q.until.as_deref().map(date_ms).transpose()?;
    let want = |s: &str| q.source.as_deref().is_none_or(|w| w.trim() == s);
    if let Some(s) = q.source.as_deref()
        && !["runs", "chats", "account"].contains(&s.trim())
    {
        return Err(Error::invalid("usage source", format!("{s:?}: use runs, chats or account")));
    }
    let mut by: Vec<Dim> = q.by.iter().copied().filter(|d| *d != Dim::Source).collect();
    if by.is_empty() && q.by.is_empty() {
        by.push(Dim::Day);
    }
    let runs = if want("runs") {
        board_usage::spend(&t.store, &SpendFilter { since_ms: Some(since), until_ms: until, ..Default::default() })?
    } else {
        Vec::new()
    };
    let chats = if want("chats") { history_usage::chats(&t.store, Some(since), until)? } else { Vec::new() };
    let account =
        if want("account") { history_usage::account_events(&t.store, Some(since), until)? } else { Vec::new() };
    let all_runs = if account.is_empty() { Vec::new() } else { runs_for_matching(t, since, until)? };

    let mut items: Vec<Item<'_>> = Vec::with_capacity(runs.len() + chats.len() + account.len());
    for r in &runs {
        items.push(Item {
            source: "runs",
            day: &r.day,
            model: r.model.as_deref(),
            project: r.workspace.as_deref(),
            task: r.task.map(crate::board::tasks::format_id),
            run: Some(crate::board::runs::format_id(r.num)),
            agent: Some(format!("run R-{}", r.root)),
            role: r.role.as_deref(),
            usage: r.usage.clone(),
            cost: r.cost_usd,
            by_time: false,
        });
    }
    for c in &chats {
        let usage =
            c.input.map(|i| Usage { input_tokens: i, output_tokens: c.output.unwrap_or(0), ..Default::default() });
        items.push(Item {
            source: "chats",
            day: &c.day,
            model: c.model.as_deref(),
            project: c.project.as_deref(),
            task: None,
            run: None,
            agent: None,
            role: None,
            usage,
            cost: None,
            by_time: false,
        });
    }
    for e in &account {
        let (run, by_time) = match_run(&all_runs, e);
        items.push(Item {
            source: "account",
            day: &e.day,
            model: Some(e.model.as_str()).filter(|m| !m.is_empty()),
            project: run.and_then(|r| r.workspace.as_deref()),
            task: run.and_then(|r| r.task).map(crate::board::tasks::format_id),
            run: run.map(|r| crate::board::runs::format_id(r.num)),
            agent: run.map(|r| format!("run R-{}", r.root)),
            role: run.and_then(|r| r.role.as_deref()),
            usage: Some(Usage {
                input_tokens: e.input_no_cache_write,
                output_tokens: e.output,
                cache_read_tokens: e.cache_read,
                cache_write_tokens: e.input_cache_write,
            }),
            // What Cursor charged; "Included" rows say no figure, and are not estimated either:
            // the bill is what this source is about.
            cost: e.cost_usd.or(Some(0.0)),
            by_time,
        });
    }

    let mut groups: BTreeMap<(&'static str, Vec<String>), UsageRow> = BTreeMap::new();
    let mut totals: BTreeMap<&'static str, UsageRow> = BTreeMap::new();
    let cache_reads = settings.count_cache_reads;
    for it in &items {
        let keys: Vec<String> = by.iter().map(|d| key(it, *d)).collect();
        for row in [
            groups.entry((it.source, keys.clone())).or_insert_with(|| UsageRow {
                source: it.source.into(),
                keys,
                ..Default::default()
            }),
            totals.entry(it.source).or_insert_with(|| UsageRow { source: it.source.into(), ..Default::default() }),
        ] {
            add(row, it, &prices, cache_reads);
        }
    }
    let mut rows: Vec<UsageRow> = groups.into_values().collect();
    if by.iter().any(|d| matches!(d, Dim::Task | Dim::Run | Dim::Agent)) {
        rows.sort_by(|a, b| {
            b.cost_usd.unwrap_or(0.0).total_cmp(&a.cost_usd.unwrap_or(0.0)).then(b.tokens.cmp(&a.tokens))
        });
    }
    if let Some(n) = q.limit {
        rows.truncate(n);
    }
    let coverage = coverage(&runs, &chats, account.len());
    let to = until.map_or_else(|| Local::now().date_naive(), |u| day_of(u - 1));
    Ok(UsageReport {
        from: day_of(since).to_string(),
        to: to.to_string(),
        by,
        rows,
        totals: totals.into_values().collect(),
        coverage,
        prices_as_of: prices.as_of,
        prices_source: prices.source,
    })
}

fn add(row: &mut UsageRow, it: &Item<'_>, prices: &PriceTable, cache_reads: bool) {
    row.items += 1;
    row.matched_by_time += u64::from(it.by_time);
    let Some(u) = &it.usage else { return };
    row.with_tokens += 1;
    row.input += u.input_tokens;
    row.output += u.output_tokens;
    row.cache_read += u.cache_read_tokens;
    row.cache_write += u.cache_write_tokens;
    row.tokens += u.total(cache_reads);
    let cost = match it.cost {
        Some(c) => Some(c),
        None => {
            let est = it.model.and_then(|m| prices.get(m)).map(|p| p.cost(u));
            row.cost_estimated |= est.is_some();
            est
        }
    };
    match cost {
        Some(c) => row.cost_usd = Some(row.cost_usd.unwrap_or(0.0) + c),
        None => row.unpriced_tokens += u.total(cache_reads),
    }
}

fn key(it: &Item<'_>, d: Dim) -> String {
    let or = |v: Option<&str>, none: &str| v.filter(|s| !s.is_empty()).unwrap_or(none).to_owned();
    match d {
        Dim::Day => it.day.to_owned(),
        Dim::Week => NaiveDate::parse_from_str(it.day, "%Y-%m-%d")
            .map(|d| format!("{}-W{:02}", d.iso_week().year(), d.iso_week().week()))
            .unwrap_or_else(|_| it.day.to_owned()),
        Dim::Month => it.day.get(..7).unwrap_or(it.day).to_owned(),
        Dim::Model => or(it.model, "(model not recorded)"),
        Dim::Project => or(it.project, "(no project)"),
        Dim::Task => or(it.task.as_deref(), "(no task)"),
        Dim::Run => or(it.run.as_deref(), "(not a run)"),
        Dim::Agent => or(it.agent.as_deref(), "(not a run)"),
        Dim::Role => or(it.role, "(no role)"),
        Dim::Source => it.source.to_owned(),
    }
}

fn coverage(runs: &[board_usage::RunSpend], chats: &[history_usage::ChatSpend], account: usize) -> UsageCoverage {
    let ended: Vec<_> = runs.iter().filter(|r| r.status.is_terminal()).collect();
    let mut c = UsageCoverage {
        runs: runs.len() as u64,
        runs_with_tokens: runs.iter().filter(|r| r.usage.is_some()).count() as u64,
        chats: chats.len() as u64,
        chats_with_tokens: chats.iter().filter(|c| c.input.is_some()).count() as u64,
        account_events: account as u64,
        notes: Vec::new(),
    };
    if !ended.is_empty() {
        let known = ended.iter().filter(|r| r.usage.is_some()).count();
        c.notes.push(format!(
            "tokens known for {}% of runs ({known} of {}): the rest ended before the CLI reported them",
            known * 100 / ended.len(),
            ended.len()
        ));
    }
    if c.chats > 0 {
        c.notes.push(format!(
            "tokens known for {}% of chats ({} of {}): Cursor's chat stores mostly record none (since early 2026); a chat without figures is not recorded, not zero",
            c.chats_with_tokens * 100 / c.chats,
            c.chats_with_tokens,
            c.chats
        ));
    }
    if account == 0 {
        c.notes.push(
            "no account usage imported for this period: export the usage CSV from Cursor's dashboard and run `tether usage import FILE.csv`"
                .into(),
        );
    } else {
        c.notes.push("the account's figures are the same spend as the runs' and chats', as Cursor billed it: compare them, do not add them".into());
    }
    c
}

/// Runs that may have made an account event: cloud runs by agent id, and local runs by the
/// time they ran.
fn runs_for_matching(t: &Tether, since: i64, until: Option<i64>) -> Result<Vec<Span>> {
    let runs =
        crate::board::runs::list(&t.store, &crate::board::runs::RunFilter { limit: 100_000, ..Default::default() })?;
    let ms = |s: &Option<String>| {
        s.as_deref().and_then(|v| chrono::DateTime::parse_from_rfc3339(v).ok()).map(|d| d.timestamp_millis())
    };
    Ok(runs
        .into_iter()
        .filter_map(|r| {
            let start = ms(&r.started_at)?;
            let end = ms(&r.ended_at).unwrap_or(i64::MAX);
            (end >= since && until.is_none_or(|u| start < u)).then(|| Span {
                num: r.num(),
                root: r.root,
                task: r.task.as_deref().and_then(|t| crate::board::tasks::parse_id(t).ok()),
                role: r.role.clone(),
                workspace: r.workspace.clone(),
                agent: r.cloud.as_ref().map(|c| c.agent_id.clone()).filter(|a| !a.is_empty()),
                start,
                end,
            })
        })
        .collect())
}

struct Span {
    num: i64,
    root: i64,
    task: Option<i64>,
    role: Option<String>,
    workspace: Option<String>,
    agent: Option<String>,
    start: i64,
    end: i64,
}

/// The run an account event belongs to: the cloud run of its Cloud Agent ID (exact), else the
/// one run that was going when it happened (by time; none when two were).
fn match_run<'a>(runs: &'a [Span], e: &history_usage::AccountEvent) -> (Option<&'a Span>, bool) {
    if let Some(agent) = &e.cloud_agent {
        return (runs.iter().find(|r| r.agent.as_deref() == Some(agent)), false);
    }
    let mut going = runs.iter().filter(|r| r.agent.is_none() && r.start <= e.at_ms && e.at_ms <= r.end);
    match (going.next(), going.next()) {
        (Some(r), None) => (Some(r), true),
        _ => (None, false),
    }
}

/// `30d`, `12w`, `6m`, `1y`, `today`, or a date: the start of that local day, epoch ms.
pub fn since_ms(s: &str) -> Result<i64> {
    let s = s.trim();
    if s == "today" {
        return Ok(today_start_ms());
    }
    let days = |n: &str, per: i64| n.parse::<i64>().ok().filter(|n| *n > 0).map(|n| n * per);
    let back = match s.char_indices().last() {
        Some((i, 'd')) => days(&s[..i], 1),
        Some((i, 'w')) => days(&s[..i], 7),
        Some((i, 'm')) => days(&s[..i], 30),
        Some((i, 'y')) => days(&s[..i], 365),
        _ => None,
    };
    match back {
        Some(d) => Ok(today_start_ms() - (d - 1) * 86_400_000),
        None => date_ms(s),
    }
}

fn date_ms(s: &str) -> Result<i64> {
    let d = NaiveDate::parse_from_str(s.trim(), "%Y-%m-%d").map_err(|_| {
        Error::invalid("usage period", format!("{s:?}: give 30d, 12w, 6m, 1y, today or a date like 2026-01-31"))
    })?;
    let midnight = d.and_hms_opt(0, 0, 0).expect("midnight exists");
    Ok(Local.from_local_datetime(&midnight).earliest().map_or(0, |t| t.timestamp_millis()))
}

fn day_of(ms: i64) -> NaiveDate {
    Local.timestamp_millis_opt(ms).earliest().map_or_else(|| Local::now().date_naive(), |t| t.date_naive())
}

/// The report as CSV, with the same columns as its JSON rows.
pub fn to_csv(r: &UsageReport) -> String {
    let mut out = String::from("source");
    for d in &r.by {
        out.push(',');
        out.push_str(
            serde_json::to_value(d).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default().as_str(),
        );
    }
    out.push_str(",items,with_tokens,input,output,cache_read,cache_write,tokens,cost_usd,cost_estimated,unpriced_tokens,matched_by_time\n");
    for row in &r.rows {
        let mut cells = vec![row.source.clone()];
        cells.extend(row.keys.iter().cloned());
        cells.extend(
            [
                row.items as i64,
                row.with_tokens as i64,
                row.input,
                row.output,
                row.cache_read,
                row.cache_write,
                row.tokens,
            ]
            .map(|n| n.to_string()),
        );
        cells.push(row.cost_usd.map(|c| format!("{c:.4}")).unwrap_or_default());
        cells.push(row.cost_estimated.to_string());
        cells.push(row.unpriced_tokens.to_string());
        cells.push(row.matched_by_time.to_string());
        let quoted: Vec<String> = cells
            .into_iter()
            .map(|c| if c.contains([',', '"', '\n']) { format!("\"{}\"", c.replace('"', "\"\"")) } else { c })
            .collect();
        out.push_str(&quoted.join(","));
        out.push('\n');
    }
    out
}
