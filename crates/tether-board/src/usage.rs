//! What runs spent, as the board knows it: budgets (a number of tokens or dollars, as people
//! write them: `200k`, `1.5M`, `$2`), a task's budget, and each run's tokens and Cursor's cost by
//! day, model, task, role and project for the usage report and for budget checks. Prices and
//! the report itself are the core's (they join the history's figures); this module only reads
//! and writes the board's rows.
//!
//! Depends on the store and the runs' model; never on the history.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use tether_store::sql::{Sql, SqlExt};
use tether_store::values;

use crate::error::{Error, Result};
use crate::runs::event::Usage;
use crate::runs::{RunStatus, bump_rev, format_id};
use crate::tasks;
use tether_store::sql::Database;

/// A budget: a number of tokens, or of (estimated) US dollars.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Budget {
    Tokens(i64),
    Usd(f64),
}

/// The largest token budget: a trillion tokens, past anything a run, a task or a day spends.
/// Larger figures (`1e309`, `inf`, `9223372036854775808`) are mistakes, refused rather than
/// read as no limit.
pub const MAX_BUDGET_TOKENS: i64 = 1_000_000_000_000;
/// The largest dollar budget: a million US dollars.
pub const MAX_BUDGET_USD: f64 = 1_000_000.0;

impl FromStr for Budget {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        let t = s.trim().to_ascii_lowercase().replace(['_', ','], "");
        let bad = || {
            Error::invalid(
                "budget",
                format!(
                    "{s:?}: write tokens (200000, 200k, 1.5m; at most 1000000m) or dollars ($2, $0.50, 2usd; at most $1000000), more than zero"
                ),
            )
        };
        let (usd, num) = match t.strip_prefix('$').or_else(|| t.strip_suffix("usd")) {
            Some(n) => (true, n.trim().to_owned()),
            None => (false, t.clone()),
        };
        // Only digits and one point: Rust's float parser also reads `inf`, `nan` and `1e309`.
        let number = |n: &str| -> Result<f64> {
            let plain = !n.is_empty()
                && n.chars().all(|c| c.is_ascii_digit() || c == '.')
                && n.chars().filter(|c| *c == '.').count() <= 1
                && n != ".";
            if !plain {
                return Err(bad());
            }
            n.parse::<f64>().map_err(|_| bad())
        };
        let b = if usd {
            let v = number(&num)?;
            if !(v > 0.0 && v <= MAX_BUDGET_USD) {
                return Err(bad());
            }
            Budget::Usd(v)
        } else {
            let (digits, scale) = match num.chars().last() {
                Some('k') => (&num[..num.len() - 1], 1e3),
                Some('m') => (&num[..num.len() - 1], 1e6),
                _ => (num.as_str(), 1.0),
            };
            let v = (number(digits.trim())? * scale).round();
            if !(v >= 1.0 && v <= MAX_BUDGET_TOKENS as f64) {
                return Err(bad());
            }
            Budget::Tokens(v as i64)
        };
        Ok(b)
    }
}

impl fmt::Display for Budget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Budget::Usd(v) if v.fract() == 0.0 => write!(f, "${v:.0}"),
            Budget::Usd(v) => write!(f, "${v:.2}"),
            Budget::Tokens(n) if n >= 1_000_000 && n % 100_000 == 0 => {
                write!(f, "{}M", n as f64 / 1e6)
            }
            Budget::Tokens(n) if n >= 1_000 && n % 1_000 == 0 => write!(f, "{}k", n / 1000),
            Budget::Tokens(n) => write!(f, "{n}"),
        }
    }
}

impl Serialize for Budget {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Budget {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Text(String),
            Tokens(i64),
            // Past i64 or not whole: refused by the parser with the forms it takes.
            Number(f64),
        }
        match Raw::deserialize(d)? {
            Raw::Text(s) => s.parse().map_err(serde::de::Error::custom),
            Raw::Tokens(n) => format!("{n}").parse().map_err(serde::de::Error::custom),
            Raw::Number(n) => format!("{n}").parse().map_err(serde::de::Error::custom),
        }
    }
}

impl schemars::JsonSchema for Budget {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Budget".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "description": "tokens (200000, 200k, 1.5m) or estimated dollars ($2)"
        })
    }
}

/// What one run spent (or not: `usage` is `None` when no figure was recorded).
#[derive(Debug, Clone, PartialEq)]
pub struct RunSpend {
    pub num: i64,
    pub status: RunStatus,
    pub model: Option<String>,
    pub task: Option<i64>,
    pub role: Option<String>,
    pub workspace: Option<String>,
    /// The run's chain (`run R-<root>`): the agent that spent it.
    pub root: i64,
    /// When it started (else was queued), and when it ended, epoch ms.
    pub at_ms: i64,
    pub ended_ms: Option<i64>,
    /// A cloud run's agent at Cursor.
    pub agent_id: Option<String>,
    pub usage: Option<Usage>,
    /// What Cursor said it cost (cloud runs), US dollars.
    pub cost_usd: Option<f64>,
}

/// Which runs' spend to read.
#[derive(Debug, Clone, Default)]
pub struct SpendFilter {
    /// Started (else queued) at or after this, epoch ms.
    pub since_ms: Option<i64>,
    pub until_ms: Option<i64>,
    pub task: Option<i64>,
    pub role: Option<String>,
    /// Leave this run out (the one being checked).
    pub except: Option<i64>,
}

/// Runs' spend, oldest first (by when they started, else were queued).
pub(crate) fn spend(store: &dyn Database, f: &SpendFilter) -> Result<Vec<RunSpend>> {
    store.read(|c| {
        // Parameters tested for NULL are cast: PostgreSQL types a parameter where it first meets it.
        SqlExt::query_map(
            c,
            "SELECT num, status, model, task, role, workspace, coalesce(root, num), coalesce(started_at, created_at),
                    ended_at, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost_usd,
                    CASE WHEN cloud IS NOT NULL THEN cloud ->> 'agent_id' END
             FROM runs
             WHERE (CAST(?1 AS BIGINT) IS NULL OR coalesce(started_at, created_at) >= ?1)
               AND (CAST(?2 AS BIGINT) IS NULL OR coalesce(started_at, created_at) < ?2)
               AND (CAST(?3 AS BIGINT) IS NULL OR task = ?3) AND (CAST(?4 AS TEXT) IS NULL OR role = ?4)
               AND (CAST(?5 AS BIGINT) IS NULL OR num <> ?5)
             ORDER BY coalesce(started_at, created_at)",
            values![f.since_ms, f.until_ms, f.task, f.role, f.except],
            |r| {
                let input: Option<i64> = r.get(9)?;
                Ok(RunSpend {
                    num: r.get(0)?,
                    status: r.get::<String>(1)?.parse().unwrap_or(RunStatus::Lost),
                    model: r.get(2)?,
                    task: r.get(3)?,
                    role: r.get(4)?,
                    workspace: r.get(5)?,
                    root: r.get(6)?,
                    at_ms: r.get(7)?,
                    ended_ms: r.get(8)?,
                    agent_id: r.get::<Option<String>>(14)?.filter(|a| !a.is_empty()),
                    usage: match input {
                        Some(input_tokens) => Some(Usage {
                            input_tokens,
                            output_tokens: r.get::<Option<i64>>(10)?.unwrap_or(0),
                            cache_read_tokens: r.get::<Option<i64>>(11)?.unwrap_or(0),
                            cache_write_tokens: r.get::<Option<i64>>(12)?.unwrap_or(0),
                        }),
                        None => None,
                    },
                    cost_usd: r.get(13)?,
                })
            },
        )
    })
}

/// A run's figures from Cursor Cloud's usage endpoint: its tokens and, when Cursor says it, cost.
pub(crate) fn set_cloud_usage(store: &dyn Database, num: i64, usage: &Usage, cost_usd: Option<f64>) -> Result<()> {
    store.durable(|txn| {
        let db: &dyn Sql = txn;
        db.execute(
            "UPDATE runs SET input_tokens = ?2, output_tokens = ?3, cache_read_tokens = ?4, cache_write_tokens = ?5,
                 cost_usd = coalesce(?6, cost_usd), usage_source = 'cloud'
             WHERE num = ?1",
            values![
                num,
                usage.input_tokens,
                usage.output_tokens,
                usage.cache_read_tokens,
                usage.cache_write_tokens,
                cost_usd
            ],
        )?;
        bump_rev(db)
    })
}

/// Sets (or with `None` clears) a task's budget, over all its runs.
pub(crate) fn set_task_budget(store: &dyn Database, id: &str, budget: Option<Budget>) -> Result<()> {
    let num = tasks::parse_id(id)?;
    store.durable(|txn| {
        let db: &dyn Sql = txn;
        let n =
            db.execute("UPDATE tasks SET budget = ?2 WHERE num = ?1", values![num, budget.map(|b| b.to_string())])?;
        if n == 0 {
            return Err(Error::TaskNotFound(id.to_owned()));
        }
        tasks::bump_rev(db)
    })
}

/// A task's budget, if it has one.
pub(crate) fn task_budget(store: &dyn Database, num: i64) -> Result<Option<Budget>> {
    let text: Option<Option<String>> =
        store.read(|c| SqlExt::query_opt(c, "SELECT budget FROM tasks WHERE num = ?1", values![num], |r| r.get(0)))?;
    Ok(text.flatten().and_then(|t| t.parse().ok()))
}

/// The run that holds run `num` back for its budget: its parent, or its task's run before it,
/// when that one ended over budget and the person has not let its chain go on.
pub(crate) fn over_budget_before(
    db: &dyn Sql,
    num: i64,
    parent: Option<i64>,
    task: Option<i64>,
) -> Result<Option<i64>> {
    // Parameters tested for NULL are cast: PostgreSQL types a parameter where it first meets it.
    db.query_opt(
        "SELECT num FROM runs
         WHERE status = 'over_budget' AND budget_allowed = 0
           AND (num = ?1
                OR num = (SELECT max(num) FROM runs WHERE CAST(?2 AS BIGINT) IS NOT NULL AND task = ?2 AND num < ?3))",
        values![parent, task, num],
        |r| r.get(0),
    )
}

/// The person lets an over-budget run's chain go on: the run is marked allowed, and the runs its
/// budget held are queued again.
pub(crate) fn allow_chain_in(db: &dyn Sql, over: i64) -> Result<()> {
    db.execute("UPDATE runs SET budget_allowed = 1 WHERE num = ?1", values![over])?;
    let held: Vec<i64> = db.query_map(
        "SELECT num FROM runs WHERE status = 'queued' AND held = 'budget'
           AND (parent = ?1 OR task = (SELECT task FROM runs WHERE num = ?1))",
        values![over],
        |r| r.get(0),
    )?;
    for n in held {
        db.execute("UPDATE runs SET held = NULL WHERE num = ?1", values![n])?;
        crate::runs::append_status_in(
            db,
            n,
            "queued",
            Some(format!("the person let {}'s chain go on past its budget", format_id(over))),
        )?;
    }
    Ok(())
}

/// Holds every queued run not held already, because today's budget is spent (`reason`); or,
/// with `None`, lets the runs held for that go. How many changed. Reads first, so a runner
/// asking every tick writes only when something changes.
pub(crate) fn hold_for_daily(store: &dyn Database, reason: Option<&str>) -> Result<usize> {
    let sql = match reason {
        Some(_) => "SELECT num FROM runs WHERE status = 'queued' AND held IS NULL",
        None => "SELECT num FROM runs WHERE status = 'queued' AND held = 'daily'",
    };
    let nums: Vec<i64> = store.read(|c| SqlExt::query_map(c, sql, &[], |r| r.get(0)))?;
    if nums.is_empty() {
        return Ok(0);
    }
    store.durable(|txn| {
        let db: &dyn Sql = txn;
        let mut changed = 0;
        for &n in &nums {
            match reason {
                Some(why) => {
                    if db.execute(
                        "UPDATE runs SET held = 'daily' WHERE num = ?1 AND status = 'queued' AND held IS NULL",
                        values![n],
                    )? == 1
                    {
                        crate::runs::append_status_in(db, n, "held", Some(why.to_owned()))?;
                        changed += 1;
                    }
                }
                None => {
                    if db.execute(
                        "UPDATE runs SET held = NULL WHERE num = ?1 AND status = 'queued' AND held = 'daily'",
                        values![n],
                    )? == 1
                    {
                        crate::runs::append_status_in(db, n, "queued", Some("today's budget allows it again".into()))?;
                        changed += 1;
                    }
                }
            }
        }
        if changed > 0 {
            bump_rev(db)?;
        }
        Ok(changed)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budgets_read_as_people_write_them_and_print_back_the_same() {
        for (text, b, back) in [
            ("200k", Budget::Tokens(200_000), "200k"),
            ("1.5M", Budget::Tokens(1_500_000), "1.5M"),
            ("250000", Budget::Tokens(250_000), "250k"),
            ("1234", Budget::Tokens(1234), "1234"),
            ("$2", Budget::Usd(2.0), "$2"),
            ("$0.5", Budget::Usd(0.5), "$0.50"),
            ("3usd", Budget::Usd(3.0), "$3"),
        ] {
            let got: Budget = text.parse().unwrap();
            assert_eq!(got, b, "{text}");
            assert_eq!(got.to_string(), back);
            assert_eq!(back.parse::<Budget>().unwrap(), b);
        }
        for bad in ["", "0", "-5k", "$0", "lots", "$", "2x"] {
            assert!(bad.parse::<Budget>().is_err(), "{bad:?}");
        }
        assert_eq!("1000000m".parse::<Budget>().unwrap(), Budget::Tokens(MAX_BUDGET_TOKENS));
        assert_eq!("$1000000".parse::<Budget>().unwrap(), Budget::Usd(MAX_BUDGET_USD));
    }

    #[test]
    fn budgets_past_the_ceiling_or_not_numbers_are_refused_naming_the_forms() {
        for bad in [
            "inf",
            "infinity",
            "1e309",
            "1e12k",
            "9223372036854775808",
            "9223372036854775807",
            "1000000000001",
            "-1",
            "NaN",
            "$nan",
            "$inf",
            "$-1",
            "$1e300",
            "$1000000.01",
            "0.4",
            "1..2k",
            ".",
        ] {
            let err = bad.parse::<Budget>().expect_err(bad).to_string();
            assert!(err.contains("write tokens (200000, 200k, 1.5m") && err.contains("at most"), "{bad:?}: {err}");
        }
        // As JSON, a number too large for i64 is refused the same way, not "no variant matched".
        for bad in ["9223372036854775808", "-1", "1.5e300"] {
            let err = serde_json::from_str::<Budget>(bad).expect_err(bad).to_string();
            assert!(err.contains("write tokens"), "{bad}: {err}");
        }
        assert_eq!(serde_json::from_str::<Budget>("250000").unwrap(), Budget::Tokens(250_000));
    }
}
