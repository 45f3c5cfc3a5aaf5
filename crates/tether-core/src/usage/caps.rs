//! The budgets a run answers to and how near it is to each: its own, its task's (over all the
//! task's runs), its role's for today, and today's for all runs. Checked when the run is queued
//! (a dollar budget needs a price), before it starts (a budget already spent stops it there),
//! and on every figure while it runs.

use chrono::{Local, TimeZone};

use super::prices::{Price, PriceTable};
use crate::Tether;
use crate::board::runs::event::Usage;
use crate::board::runs::{Run, ValidRun};
use crate::board::usage::{Budget, RunSpend, SpendFilter};
use crate::error::{Error, Result};

/// At this share of a budget the run is warned (once), so a well-behaved agent can wrap up.
pub const WARN_AT: f64 = 0.8;

/// One budget and what was spent against it before this run.
#[derive(Debug, Clone, PartialEq)]
pub struct Cap {
    /// Whose budget, as a sentence says it: `its budget`, `T-3's budget`, `today's budget`.
    pub what: String,
    pub budget: Budget,
    pub before_tokens: i64,
    pub before_usd: f64,
}

/// Where a run stands against its budgets.
#[derive(Debug, Clone, PartialEq)]
pub enum Level {
    Under,
    /// Past [`WARN_AT`] of a budget: what to tell the agent and the person.
    Warn(String),
    /// At or past a budget: why the run stops.
    Over(String),
}

/// The budgets one run answers to, with its model's price (for dollar budgets).
#[derive(Debug, Clone, Default)]
pub struct Caps {
    pub caps: Vec<Cap>,
    pub price: Option<Price>,
    pub cache_reads: bool,
}

impl Caps {
    pub fn is_empty(&self) -> bool {
        self.caps.is_empty()
    }

    /// Where a run that has spent `u` (and, when Cursor said it, `cost` dollars) stands: the
    /// budget nearest to its end decides.
    pub fn check(&self, u: &Usage, cost: Option<f64>) -> Level {
        let tokens = u.total(self.cache_reads);
        let usd = cost.or_else(|| self.price.as_ref().map(|p| p.cost(u))).unwrap_or(0.0);
        let mut worst: Option<(f64, String)> = None;
        for c in &self.caps {
            let (share, text) = match c.budget {
                Budget::Tokens(n) => {
                    let used = c.before_tokens + tokens;
                    (used as f64 / n as f64, format!("{} tokens of {} ({})", thousands(used), c.what, c.budget))
                }
                Budget::Usd(d) => {
                    let used = c.before_usd + usd;
                    let est = if cost.is_some() { "" } else { ", estimated" };
                    (used / d, format!("${used:.2}{est} of {} ({})", c.what, c.budget))
                }
            };
            if worst.as_ref().is_none_or(|(s, _)| share > *s) {
                worst = Some((share, text));
            }
        }
        match worst {
            Some((s, text)) if s >= 1.0 => Level::Over(format!("went over budget: {text}")),
            Some((s, text)) if s >= WARN_AT => Level::Warn(format!("{:.0}% of budget used: {text}", s * 100.0)),
            _ => Level::Under,
        }
    }
}

/// `1234567` → `1,234,567`.
pub fn thousands(n: i64) -> String {
    let s = n.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if n < 0 { format!("-{out}") } else { out }
}

/// The start of the person's local day, epoch ms.
pub fn today_start_ms() -> i64 {
    let today = Local::now().date_naive().and_hms_opt(0, 0, 0).expect("midnight exists");
    Local.from_local_datetime(&today).earliest().map_or_else(crate::clock::now_ms, |t| t.timestamp_millis())
}

/// The budgets that apply to a run of `model` with its own `budget`, on `task`, in `role`.
fn applicable(
    t: &Tether,
    budget: Option<Budget>,
    task: Option<i64>,
    role: Option<&str>,
) -> Result<Vec<(String, Budget, SpendFilter)>> {
    let s = t.settings()?.usage;
    let today = Some(today_start_ms());
    let mut out = Vec::new();
    if let Some(b) = budget {
        out.push(("its budget".to_owned(), b, SpendFilter { since_ms: Some(i64::MAX), ..Default::default() }));
    }
    if let Some(n) = task
        && let Some(b) = t.board().usage().task_budget(n)?
    {
        out.push((
            format!("{}'s budget", crate::board::tasks::format_id(n)),
            b,
            SpendFilter { task: Some(n), ..Default::default() },
        ));
    }
    if let Some(r) = role
        && let Some(b) = s.role_budgets.get(r)
    {
        out.push((
            format!("the {r} role's budget for today"),
            *b,
            SpendFilter { role: Some(r.to_owned()), since_ms: today, ..Default::default() },
        ));
    }
    if let Some(b) = s.daily_budget {
        out.push(("today's budget".to_owned(), b, SpendFilter { since_ms: today, ..Default::default() }));
    }
    Ok(out)
}

/// Refuses, when the run is queued, a dollar budget it could not keep: its model has no price.
pub fn check_queued(t: &Tether, v: &ValidRun) -> Result<()> {
    let caps = applicable(t, v.budget, v.task, v.role.as_deref())?;
    let Some((what, b, _)) = caps.iter().find(|(_, b, _)| matches!(b, Budget::Usd(_))) else { return Ok(()) };
    let prices = PriceTable::new(&t.settings()?.usage);
    if v.model.as_deref().and_then(|m| prices.get(m)).is_some() {
        return Ok(());
    }
    let model = v
        .model
        .as_deref()
        .map_or("the Cursor CLI's default model (no --model given)".to_owned(), |m| format!("model {m}"));
    Err(Error::invalid(
        "budget",
        format!(
            "{what} is in dollars ({b}), but {model} has no price: name a priced model (tether usage prices), set usage.prices.<model>, or use a token budget"
        ),
    ))
}

/// The budgets `run` answers to, with what was spent against each before it.
pub fn caps_for(t: &Tether, run: &Run) -> Result<Caps> {
    let settings = t.settings()?.usage;
    let prices = PriceTable::new(&settings);
    let task = run.task.as_deref().map(crate::board::tasks::parse_id).transpose()?;
    let mut caps = Vec::new();
    for (what, budget, mut filter) in applicable(t, run.budget, task, run.role.as_deref())? {
        let (before_tokens, before_usd) = if filter.since_ms == Some(i64::MAX) {
            (0, 0.0)
        } else {
            filter.except = Some(run.num());
            spent(&t.board().usage().spend(&filter)?, &prices, settings.count_cache_reads)
        };
        caps.push(Cap { what, budget, before_tokens, before_usd });
    }
    Ok(Caps {
        caps,
        price: run.model.as_deref().and_then(|m| prices.get(m)).cloned(),
        cache_reads: settings.count_cache_reads,
    })
}

/// Tokens and dollars (Cursor's figure, else estimated; unpriced runs add no dollars) of runs.
fn spent(runs: &[RunSpend], prices: &PriceTable, cache_reads: bool) -> (i64, f64) {
    runs.iter().filter_map(|r| Some((r, r.usage.as_ref()?))).fold((0, 0.0), |(tok, usd), (r, u)| {
        let cost = r.cost_usd.or_else(|| r.model.as_deref().and_then(|m| prices.get(m)).map(|p| p.cost(u)));
        (tok + u.total(cache_reads), usd + cost.unwrap_or(0.0))
    })
}

/// Why new runs must wait today, when today's budget is spent.
///
/// From the settings this process holds: a change saved through it (the GUI, or the CLI, which
/// goes through a running daemon) is held before the save returns, and a file edited by hand is
/// swapped in by the settings watcher. (Read from the file, this opened it on every look at the
/// queue.)
pub fn daily_spent(t: &Tether) -> Result<Option<String>> {
    let settings = t.settings()?.usage;
    let Some(b) = settings.daily_budget else { return Ok(None) };
    let prices = PriceTable::new(&settings);
    let (tok, usd) = spent(
        &t.board().usage().spend(&SpendFilter { since_ms: Some(today_start_ms()), ..Default::default() })?,
        &prices,
        settings.count_cache_reads,
    );
    Ok(daily_over(b, tok, usd))
}

/// Why new runs wait, when `tokens` or `usd` spent today reach the daily budget `b`.
pub fn daily_over(b: Budget, tokens: i64, usd: f64) -> Option<String> {
    let used = match b {
        Budget::Tokens(n) => (tokens >= n).then(|| format!("{} tokens", thousands(tokens))),
        Budget::Usd(d) => (usd >= d).then(|| format!("${usd:.2}")),
    }?;
    Some(format!("today's budget ({b}) is spent ({used}); runs wait until tomorrow, or raise usage.daily_budget"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(tokens: i64) -> Usage {
        Usage { input_tokens: tokens, ..Default::default() }
    }

    #[test]
    fn the_budget_nearest_its_end_decides_and_warns_from_eighty_percent() {
        let caps = Caps {
            caps: vec![
                Cap { what: "its budget".into(), budget: Budget::Tokens(1000), before_tokens: 0, before_usd: 0.0 },
                Cap { what: "T-1's budget".into(), budget: Budget::Tokens(2000), before_tokens: 1500, before_usd: 0.0 },
            ],
            price: None,
            cache_reads: true,
        };
        assert_eq!(caps.check(&u(50), None), Level::Under);
        match caps.check(&u(150), None) {
            Level::Warn(m) => assert!(m.contains("T-1's budget") && m.contains("82%"), "{m}"),
            other => panic!("{other:?}"),
        }
        match caps.check(&u(500), None) {
            Level::Over(m) => assert!(m.contains("2,000 tokens of T-1's budget (2k)"), "{m}"),
            other => panic!("{other:?}"),
        }
        let cache = Usage { cache_read_tokens: 5000, ..Default::default() };
        assert!(matches!(caps.check(&cache, None), Level::Over(_)));
        assert_eq!(Caps { cache_reads: false, ..caps }.check(&cache, None), Level::Under, "cache reads left out");
    }

    #[test]
    fn dollars_use_cursors_figure_when_it_gave_one_else_the_price() {
        let price = Price { input: 10.0, output: 0.0, cache_read: 0.0, cache_write: 0.0, aliases: vec![] };
        let caps = Caps {
            caps: vec![Cap { what: "its budget".into(), budget: Budget::Usd(1.0), before_tokens: 0, before_usd: 0.0 }],
            price: Some(price),
            cache_reads: true,
        };
        match caps.check(&u(120_000), None) {
            Level::Over(m) => assert!(m.contains("$1.20, estimated"), "{m}"),
            other => panic!("{other:?}"),
        }
        assert_eq!(caps.check(&u(120_000), Some(0.5)), Level::Under, "Cursor's cost wins over the estimate");
    }
}
