//! Usage and budgets: the report (runs, chats and the account, grouped as asked), importing the
//! account's usage CSV, the price table, a task's budget, and the summary an orchestrating
//! agent or the tray reads. Budgets and spend are the person's business: agents may read the
//! report (to check what they spend) but never set a budget or import.

use serde::{Deserialize, Serialize};

use crate::Tether;
use crate::board::principal::Principal;
use crate::board::usage::Budget;
use crate::error::{Error, Result};
use crate::history::usage::ImportReport;
use crate::usage::report::{self, UsageQuery, UsageReport, UsageRow};
use crate::usage::{PriceTable, thousands};

fn person_only(who: &Principal, what: &str) -> Result<()> {
    if who.is_person() { Ok(()) } else { Err(Error::NotAllowed(format!("{what} is the person's decision"))) }
}

/// The usage report. Not for agents outside this machine (it is the person's account).
pub fn report(t: &Tether, who: &Principal, q: &UsageQuery) -> Result<UsageReport> {
    if who.is_remote() {
        return Err(Error::NotAllowed("usage is not for agents outside this machine".into()));
    }
    report::report(t, q)
}

/// A usage CSV exported from Cursor's dashboard: its name (for the report) and its text.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct ImportUsage {
    pub file: String,
    pub csv: String,
}

/// Imports the account's usage events (deduplicated; bad rows reported by line).
pub fn import(t: &Tether, who: &Principal, req: &ImportUsage) -> Result<ImportReport> {
    person_only(who, "importing account usage")?;
    let r = crate::history::usage::import_csv(&t.store, &req.file, req.csv.as_bytes())?;
    t.bus.emit(crate::events::Event::Usage { imported: r.imported });
    Ok(r)
}

/// The prices in force (shipped, under the settings' overrides).
pub fn prices(t: &Tether) -> Result<PriceTable> {
    Ok(PriceTable::new(&t.settings()?.usage))
}

/// A task's budget over all its runs; `None` clears it.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct TaskBudget {
    /// The task, e.g. T-3 (a route names it in its path).
    #[serde(default)]
    pub task: String,
    /// Tokens (`500k`) or estimated dollars (`$5`); null clears it.
    #[ts(as = "Option<String>")]
    pub budget: Option<Budget>,
}

/// A task's budget as set: `{task, budget}`.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct BudgetSet {
    pub task: String,
    #[ts(as = "Option<String>")]
    pub budget: Option<Budget>,
}

pub fn set_task_budget(t: &Tether, who: &Principal, req: &TaskBudget) -> Result<BudgetSet> {
    person_only(who, "setting a budget")?;
    t.board().usage().set_task_budget(&req.task, req.budget)?;
    Ok(BudgetSet { task: req.task.clone(), budget: req.budget })
}

/// What the tray, the run form and an orchestrating agent want at a glance.
#[derive(Debug, Clone, Serialize, PartialEq, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct UsageSummary {
    /// Today's runs (all of them, whatever their source of figures).
    pub today: UsageRow,
    /// The last 30 days, one row per source.
    pub last_30_days: Vec<UsageRow>,
    #[ts(optional)]
    pub daily_budget: Option<String>,
    /// How much of today's budget is spent (1.0 = all); absent without a budget.
    #[ts(optional)]
    pub daily_used: Option<f64>,
    /// Why new runs wait, when today's budget is spent.
    #[ts(optional)]
    pub held: Option<String>,
    /// The summary in a sentence (the tray's tooltip).
    pub line: String,
}

pub fn summary(t: &Tether, who: &Principal) -> Result<UsageSummary> {
    let today = report(
        t,
        who,
        &UsageQuery {
            since: Some("today".into()),
            by: vec![report::Dim::Source],
            source: Some("runs".into()),
            ..Default::default()
        },
    )?
    .totals
    .into_iter()
    .next()
    .unwrap_or_else(|| UsageRow { source: "runs".into(), ..Default::default() });
    let month = report(t, who, &UsageQuery { by: vec![report::Dim::Source], ..Default::default() })?;
    let settings = t.settings()?.usage;
    // What today's runs are known to have spent: runs without figures add nothing known.
    let tokens = today.tokens.unwrap_or(0);
    let daily_used = settings.daily_budget.map(|b| match b {
        Budget::Tokens(n) => tokens as f64 / n as f64,
        Budget::Usd(d) => today.cost_usd.unwrap_or(0.0) / d,
    });
    let unpriced = if today.unpriced_tokens > 0 {
        format!(" (+{} tokens with no price)", thousands(today.unpriced_tokens))
    } else {
        String::new()
    };
    let cost = today
        .cost_usd
        .map(|c| format!(", ${c:.2}{}{unpriced}", if today.cost_estimated { " est." } else { "" }))
        .unwrap_or_default();
    let mut line = match today.tokens {
        Some(n) => format!("Runs today: {} tokens{cost}", thousands(n)),
        // No run, no spend: a true zero.
        None if today.items == 0 => "Runs today: 0 tokens".to_owned(),
        None => format!("Runs today: {} without token figures{cost}", today.items),
    };
    if let (Some(b), Some(u)) = (settings.daily_budget, daily_used) {
        line.push_str(&format!(" ({:.0}% of {b})", u * 100.0));
    }
    // From today's figures above, not a second read of today's runs.
    let held = settings.daily_budget.and_then(|b| crate::usage::daily_over(b, tokens, today.cost_usd.unwrap_or(0.0)));
    Ok(UsageSummary {
        today,
        last_30_days: month.totals,
        daily_budget: settings.daily_budget.map(|b| b.to_string()),
        daily_used,
        held,
        line,
    })
}
