//! Usage Cursor itself recorded: the token counts its chat stores kept (per chat, summed by the
//! indexer) and its SDK agents kept per run; the figures other agents recorded per request
//! (Claude Code, Codex, Gemini CLI); those two per-request kinds both in `chat_usage`, written
//! by the indexer; and the account's usage events from the CSV the person exports from Cursor's
//! dashboard (imported on request, deduplicated, read offline; no network, no login tokens).
//!
//! Depends on the store; never on the board (the core joins these with the runs' figures).

use std::collections::BTreeMap;

use rusqlite::params;
use serde::Serialize;

use crate::error::{Error, Result};
use crate::store::Store;

/// One chat's recorded tokens (or `None`: the chat store kept none), by its last activity.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatSpend {
    pub at_ms: i64,
    pub model: Option<String>,
    pub project: Option<String>,
    pub input: Option<i64>,
    pub output: Option<i64>,
}

/// Chats active (last updated) in `[since, until)`, epoch ms. A chat whose agent recorded its
/// requests' figures is reported from those ([`agent_requests`]), not here.
pub fn chats(store: &Store, since_ms: Option<i64>, until_ms: Option<i64>) -> Result<Vec<ChatSpend>> {
    store.read(|c| {
        let mut stmt = c.prepare_cached(
            "SELECT coalesce(updated_at, created_at), model, project, input_tokens, output_tokens
             FROM sessions
             WHERE coalesce(updated_at, created_at) IS NOT NULL AND message_count > 0
               AND (?1 IS NULL OR coalesce(updated_at, created_at) >= ?1)
               AND (?2 IS NULL OR coalesce(updated_at, created_at) < ?2)
               AND NOT EXISTS (SELECT 1 FROM chat_usage u WHERE u.session_id = sessions.id)",
        )?;
        let rows = stmt.query_map(params![since_ms, until_ms], |r| {
            Ok(ChatSpend {
                at_ms: r.get(0)?,
                model: r.get(1)?,
                project: r.get(2)?,
                input: r.get(3)?,
                output: r.get(4)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    })
}

/// One request of another agent's chat, as the agent recorded it (disjoint buckets: `input` is
/// the input not read from the cache).
#[derive(Debug, Clone, PartialEq)]
pub struct AgentRequest {
    pub at_ms: i64,
    /// The chat's `source` (`claude-code`, `codex` or `gemini`), or `cursor-sdk` for a run of
    /// Cursor's SDK / Agents Window ([`crate::cursor::sdk::USAGE_AGENT`]).
    pub agent: String,
    pub session_id: String,
    pub model: Option<String>,
    pub project: Option<String>,
    pub input: i64,
    pub output: i64,
    pub cache_read: i64,
    pub cache_write: i64,
}

/// Other agents' requests and the SDK agents' runs made in `[since, until)`, epoch ms (one
/// without a time is at its chat's last activity).
pub fn agent_requests(store: &Store, since_ms: Option<i64>, until_ms: Option<i64>) -> Result<Vec<AgentRequest>> {
    store.read(|c| {
        let mut stmt = c.prepare_cached(
            "SELECT coalesce(u.at, s.updated_at, s.created_at) AS t,
                    CASE WHEN s.format = ?3 THEN ?4 ELSE s.origin END, s.id, u.model, s.project,
                    u.input, u.output, u.cache_read, u.cache_write
             FROM chat_usage u JOIN sessions s ON s.id = u.session_id
             WHERE t IS NOT NULL AND (?1 IS NULL OR t >= ?1) AND (?2 IS NULL OR t < ?2)",
        )?;
        let sdk = crate::cursor::sdk::FORMAT;
        let rows = stmt.query_map(params![since_ms, until_ms, sdk, crate::cursor::sdk::USAGE_AGENT], |r| {
            Ok(AgentRequest {
                at_ms: r.get(0)?,
                agent: r.get(1)?,
                session_id: r.get(2)?,
                model: r.get(3)?,
                project: r.get(4)?,
                input: r.get(5)?,
                output: r.get(6)?,
                cache_read: r.get(7)?,
                cache_write: r.get(8)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    })
}

/// One usage event of the account, as imported.
#[derive(Debug, Clone, PartialEq)]
pub struct AccountEvent {
    pub at_ms: i64,
    pub model: String,
    pub cloud_agent: Option<String>,
    pub input_cache_write: i64,
    pub input_no_cache_write: i64,
    pub cache_read: i64,
    pub output: i64,
    /// What Cursor charged (US dollars), when the CSV said a figure.
    pub cost_usd: Option<f64>,
}

/// The account's imported events in `[since, until)`, epoch ms.
pub fn account_events(store: &Store, since_ms: Option<i64>, until_ms: Option<i64>) -> Result<Vec<AccountEvent>> {
    store.read(|c| {
        let mut stmt = c.prepare_cached(
            "SELECT at, model, cloud_agent, input_cache_write, input_no_cache_write, cache_read, output, cost_usd
             FROM usage_events WHERE (?1 IS NULL OR at >= ?1) AND (?2 IS NULL OR at < ?2) ORDER BY at",
        )?;
        let rows = stmt.query_map(params![since_ms, until_ms], |r| {
            Ok(AccountEvent {
                at_ms: r.get(0)?,
                model: r.get(1)?,
                cloud_agent: r.get(2)?,
                input_cache_write: r.get(3)?,
                input_no_cache_write: r.get(4)?,
                cache_read: r.get(5)?,
                output: r.get(6)?,
                cost_usd: r.get(7)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    })
}

/// What an import did.
#[derive(Debug, Clone, Default, Serialize, PartialEq, ts_rs::TS)]
#[ts(export, export_to = "history.ts")]
pub struct ImportReport {
    pub file: String,
    /// Data rows read (the header not counted).
    pub rows: u64,
    /// New events kept.
    pub imported: u64,
    /// Events imported before (the same time, model, kind, tokens and cost).
    pub duplicates: u64,
    /// Rows Cursor marked errored or not charged, and rows that cost nothing; kept, and counted apart.
    pub errored: u64,
    pub free: u64,
    /// Rows that could not be read, by their line in the file (the header is line 1).
    pub malformed: Vec<Malformed>,
    /// Columns this version does not know: kept with each event.
    pub unknown_columns: Vec<String>,
}

#[derive(Debug, Clone, Serialize, PartialEq, ts_rs::TS)]
#[ts(export, export_to = "history.ts")]
pub struct Malformed {
    pub line: u64,
    pub reason: String,
}

/// The columns read, by what the header calls them (2026's names and older ones).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Col {
    Date,
    CloudAgent,
    Automation,
    Kind,
    Model,
    MaxMode,
    InputWithCacheWrite,
    InputWithoutCacheWrite,
    CacheRead,
    Output,
    Total,
    Cost,
}

fn column(name: &str) -> Option<Col> {
    Some(match name.trim().trim_start_matches('\u{feff}').to_ascii_lowercase().as_str() {
        "date" | "timestamp" | "time" => Col::Date,
        "cloud agent id" | "cloud agent" | "background agent id" => Col::CloudAgent,
        "automation id" | "automation" => Col::Automation,
        "kind" | "type" => Col::Kind,
        "model" => Col::Model,
        "max mode" | "max" => Col::MaxMode,
        "input (w/ cache write)" | "input (with cache write)" => Col::InputWithCacheWrite,
        "input (w/o cache write)" | "input (without cache write)" | "input" | "input tokens" => {
            Col::InputWithoutCacheWrite
        }
        "cache read" | "cache read tokens" => Col::CacheRead,
        "output tokens" | "output" => Col::Output,
        "total tokens" | "tokens" | "total" => Col::Total,
        "cost" | "cost ($)" | "cost (usd)" | "charged" => Col::Cost,
        _ => return None,
    })
}

/// The most tokens one figure of one event may say: no request spends a trillion tokens, and a
/// figure past this (Cursor never writes one) is a bad line, not a number to clamp. It also keeps
/// every sum the report makes far from `i64`'s end.
pub const MAX_TOKENS: i64 = 1_000_000_000_000;

/// Imports a usage CSV exported from Cursor's dashboard. Every readable row is kept (an event
/// imported before is recognised and not added again); a row that cannot be read is reported by
/// its line and the rest imported — a quote never closed included: the line it opens on is
/// reported and reading goes on at the next line, instead of the quote taking every row after
/// it. A header naming one column twice is refused (which one to read would be a guess). One
/// transaction: an import lands whole or not at all.
pub fn import_csv(store: &Store, file: &str, bytes: &[u8]) -> Result<ImportReport> {
    let records = records(bytes);
    let mut records = records.into_iter();
    let header = match records.next() {
        Some(Record { rec: Ok(h), .. }) => h,
        Some(Record { line, rec: Err(e) }) => {
            return Err(Error::invalid("usage CSV", format!("{file}: the header (line {line}) cannot be read: {e}")));
        }
        None => return Err(Error::invalid("usage CSV", format!("{file}: the file is empty"))),
    };
    let cols: Vec<Option<Col>> = header.iter().map(column).collect();
    if !cols.contains(&Some(Col::Date)) {
        return Err(Error::invalid(
            "usage CSV",
            format!("{file}: no Date column; export the CSV from Cursor's dashboard (Usage → Export CSV)"),
        ));
    }
    duplicate_columns(file, &header, &cols)?;
    let mut report = ImportReport {
        file: file.to_owned(),
        unknown_columns: header
            .iter()
            .zip(&cols)
            .filter(|(_, c)| c.is_none())
            .map(|(h, _)| h.to_owned())
            .filter(|h| !h.is_empty())
            .collect(),
        ..Default::default()
    };
    let now = crate::clock::now_ms();
    let mut events = Vec::new();
    for Record { line, rec } in records {
        report.rows += 1;
        let rec = match rec {
            Ok(r) => r,
            Err(reason) => {
                report.malformed.push(Malformed { line, reason });
                continue;
            }
        };
        if rec.iter().all(str::is_empty) {
            report.rows -= 1;
            continue;
        }
        if rec.len() != header.len() {
            report.malformed.push(Malformed {
                line,
                reason: format!("{} fields where the header has {}", rec.len(), header.len()),
            });
            continue;
        }
        match row(&header, &cols, &rec) {
            Ok(ev) => events.push((line, ev)),
            Err(reason) => report.malformed.push(Malformed { line, reason }),
        }
    }
    store.durable(|txn| {
        let mut stmt = txn.prepare_cached(
            "INSERT OR IGNORE INTO usage_events(at, kind, model, max_mode, cloud_agent, automation, input_cache_write,
                 input_no_cache_write, cache_read, output, total, cost_usd, cost_text, errored, extra, file, line, imported_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)",
        )?;
        for (line, e) in &events {
            let n = stmt.execute(params![
                e.at_ms,
                e.kind,
                e.model,
                e.max_mode,
                e.cloud_agent,
                e.automation,
                e.input_cache_write,
                e.input_no_cache_write,
                e.cache_read,
                e.output,
                e.total,
                e.cost_usd,
                e.cost_text,
                e.errored,
                serde_json::to_string(&e.extra)?,
                file,
                *line as i64,
                now
            ])?;
            if n == 0 {
                report.duplicates += 1;
                continue;
            }
            report.imported += 1;
            if e.errored {
                report.errored += 1;
            } else if e.cost_usd.unwrap_or(0.0) == 0.0 {
                report.free += 1;
            }
        }
        Ok(())
    })?;
    Ok(report)
}

/// One record of the file, by the line it starts on (1-based), or why it cannot be read.
struct Record {
    line: u64,
    rec: std::result::Result<csv::StringRecord, String>,
}

/// The file's records, the header first. The csv reader takes a quote that is never closed as
/// a field running to the end of the file; such a record (the last, spanning lines, its text
/// holding an odd number of `"`: closed quotes and doubled ones come in pairs) is reported at
/// its first line, and reading starts again on the line after it.
fn records(bytes: &[u8]) -> Vec<Record> {
    let mut out = Vec::new();
    let (mut at, mut first_line) = (0usize, 1u64);
    while at < bytes.len() {
        let rest = &bytes[at..];
        let mut rdr =
            csv::ReaderBuilder::new().has_headers(false).flexible(true).trim(csv::Trim::All).from_reader(rest);
        let mut pass: Vec<(u64, usize, Record)> = Vec::new();
        for rec in rdr.records() {
            let (line, byte) = match &rec {
                Ok(r) => r.position().map_or((0, 0), |p| (p.line(), p.byte() as usize)),
                Err(e) => e.position().map_or((0, 0), |p| (p.line(), p.byte() as usize)),
            };
            let line = first_line + line.saturating_sub(1);
            pass.push((line, byte, Record { line, rec: rec.map_err(|e| e.to_string()) }));
        }
        // Only a record that took in the lines after it: a lone `"` inside an unquoted field of
        // the last line is text, and costs no row.
        let open_quote = pass.last().is_some_and(|(_, byte, _)| {
            rest.get(*byte..).is_some_and(|r| {
                let r = r.trim_ascii_end();
                r.contains(&b'\n') && r.iter().filter(|b| **b == b'"').count() % 2 == 1
            })
        });
        if !open_quote {
            out.extend(pass.into_iter().map(|(.., r)| r));
            break;
        }
        let (line, byte, _) = pass.pop().expect("checked above");
        out.extend(pass.into_iter().map(|(.., r)| r));
        out.push(Record {
            line,
            rec: Err(
                "a quote opened on this line is never closed; the line is left out and reading goes on at the next"
                    .into(),
            ),
        });
        let Some(nl) = rest[byte..].iter().position(|b| *b == b'\n') else { break };
        at += byte + nl + 1;
        first_line = line + 1;
    }
    out
}

/// Refuses a header that names a column twice: two names for one figure (`Input` and `Input
/// (w/o Cache Write)`) or the same name again.
fn duplicate_columns(file: &str, header: &csv::StringRecord, cols: &[Option<Col>]) -> Result<()> {
    let mut seen: BTreeMap<String, &str> = BTreeMap::new();
    let mut twice = Vec::new();
    for (name, col) in header.iter().zip(cols) {
        let key = match col {
            Some(c) => format!("{c:?}"),
            None if name.is_empty() => continue,
            None => name.trim().to_lowercase(),
        };
        if let Some(before) = seen.insert(key, name) {
            twice.push(format!("{before:?} and {name:?}"));
        }
    }
    if twice.is_empty() {
        return Ok(());
    }
    Err(Error::invalid(
        "usage CSV",
        format!("{file}: the header names a column twice ({}); keep one of each", twice.join(", ")),
    ))
}

struct Row {
    at_ms: i64,
    kind: String,
    model: String,
    max_mode: Option<bool>,
    cloud_agent: Option<String>,
    automation: Option<String>,
    input_cache_write: i64,
    input_no_cache_write: i64,
    cache_read: i64,
    output: i64,
    total: i64,
    cost_usd: Option<f64>,
    cost_text: String,
    errored: bool,
    extra: BTreeMap<String, String>,
}

fn row(header: &csv::StringRecord, cols: &[Option<Col>], rec: &csv::StringRecord) -> std::result::Result<Row, String> {
    let mut r = Row {
        at_ms: 0,
        kind: String::new(),
        model: String::new(),
        max_mode: None,
        cloud_agent: None,
        automation: None,
        input_cache_write: 0,
        input_no_cache_write: 0,
        cache_read: 0,
        output: 0,
        total: 0,
        cost_usd: None,
        cost_text: String::new(),
        errored: false,
        extra: BTreeMap::new(),
    };
    let mut dated = false;
    for ((name, col), v) in header.iter().zip(cols).zip(rec.iter()) {
        let tokens = |what: &str| -> std::result::Result<i64, String> {
            let t = v.replace([',', '_', ' '], "");
            if t.is_empty() || t == "-" {
                return Ok(0);
            }
            // A whole number, as Cursor writes them (`1200`, or `1200.0`); never rounded or
            // clamped into one.
            let n = t
                .parse::<i64>()
                .ok()
                .or_else(|| t.parse::<f64>().ok().filter(|n| n.fract() == 0.0 && n.abs() < 9.0e15).map(|n| n as i64));
            match n {
                Some(n) if (0..=MAX_TOKENS).contains(&n) => Ok(n),
                Some(_) => Err(format!("{what} {v:?} is not between 0 and {MAX_TOKENS} tokens")),
                None if t.parse::<f64>().is_ok_and(|n| n.is_finite() && n.fract() == 0.0) => {
                    Err(format!("{what} {v:?} is not between 0 and {MAX_TOKENS} tokens"))
                }
                None => Err(format!("{what} {v:?} is not a number of tokens")),
            }
        };
        match col {
            Some(Col::Date) => {
                r.at_ms = parse_time(v).ok_or_else(|| format!("Date {v:?} is not a date and time"))?;
                dated = true;
            }
            Some(Col::CloudAgent) => r.cloud_agent = Some(v.to_owned()).filter(|s| !s.is_empty()),
            Some(Col::Automation) => r.automation = Some(v.to_owned()).filter(|s| !s.is_empty()),
            Some(Col::Kind) => r.kind = v.to_owned(),
            Some(Col::Model) => r.model = v.to_owned(),
            Some(Col::MaxMode) => r.max_mode = parse_bool(v),
            Some(Col::InputWithCacheWrite) => r.input_cache_write = tokens(name)?,
            Some(Col::InputWithoutCacheWrite) => r.input_no_cache_write = tokens(name)?,
            Some(Col::CacheRead) => r.cache_read = tokens(name)?,
            Some(Col::Output) => r.output = tokens(name)?,
            Some(Col::Total) => r.total = tokens(name)?,
            Some(Col::Cost) => {
                r.cost_text = v.to_owned();
                r.cost_usd = parse_cost(v)?;
            }
            None => {
                if !name.is_empty() {
                    r.extra.insert(name.to_owned(), v.to_owned());
                }
            }
        }
    }
    if !dated {
        return Err("no Date".into());
    }
    let k = r.kind.to_ascii_lowercase();
    r.errored = k.contains("errored") || k.contains("not charged") || k.contains("aborted");
    Ok(r)
}

/// `2026-01-15T10:23:45.123Z` (the export's form), or a local `2026-01-15 10:23:45` / date.
fn parse_time(v: &str) -> Option<i64> {
    use chrono::{Local, NaiveDate, NaiveDateTime, TimeZone};
    if let Ok(t) = chrono::DateTime::parse_from_rfc3339(v.trim()) {
        return Some(t.timestamp_millis());
    }
    let naive = NaiveDateTime::parse_from_str(v.trim(), "%Y-%m-%d %H:%M:%S")
        .or_else(|_| NaiveDateTime::parse_from_str(v.trim(), "%Y-%m-%dT%H:%M:%S%.f"))
        .ok()
        .or_else(|| NaiveDate::parse_from_str(v.trim(), "%Y-%m-%d").ok().and_then(|d| d.and_hms_opt(12, 0, 0)))?;
    Local.from_local_datetime(&naive).earliest().map(|t| t.timestamp_millis())
}

fn parse_bool(v: &str) -> Option<bool> {
    match v.trim().to_ascii_lowercase().as_str() {
        "yes" | "true" | "1" | "on" => Some(true),
        "no" | "false" | "0" | "off" | "" => Some(false),
        _ => None,
    }
}

/// `$0.12`, `0.12`, `0` — a figure; `Included`, `Free`, `-`, empty — none.
fn parse_cost(v: &str) -> std::result::Result<Option<f64>, String> {
    let t = v.trim().trim_start_matches('$').replace(',', "");
    if t.is_empty() || t == "-" || t.chars().all(|c| c.is_alphabetic() || c.is_whitespace()) {
        return Ok(None);
    }
    t.parse::<f64>()
        .ok()
        .filter(|n| n.is_finite() && *n >= 0.0)
        .map(Some)
        .ok_or_else(|| format!("Cost {v:?} is not an amount"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = "Date,Cloud Agent ID,Automation ID,Kind,Model,Max Mode,Input (w/ Cache Write),Input (w/o Cache Write),Cache Read,Output Tokens,Total Tokens,Cost,Team\n";

    fn store() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let s = Store::open(&dir.path().join("t.db")).unwrap();
        (dir, s)
    }

    #[test]
    fn an_export_imports_once_reports_bad_rows_by_line_and_keeps_the_rest() {
        let (_d, s) = store();
        let csv = format!(
            "{HEADER}\
             2026-03-01T10:00:00.000Z,,,Included,claude-4.5-sonnet,No,1000,200,5000,300,6500,Included,acme\n\
             2026-03-01T11:00:00.000Z,bc-1,,Usage-based,gpt-5,Yes,\"1,000\",0,0,100,1100,$0.04,acme\n\
             not a date,,,Included,gpt-5,No,1,1,1,1,4,$0.00,acme\n\
             2026-03-01T12:00:00.000Z,,,\"Errored, Not Charged\",gpt-5,No,0,10,0,0,10,$0.00,acme\n\
             2026-03-01T13:00:00.000Z,,,Included,gpt-5,No,1,2\n\
             2026-03-01T14:00:00.000Z,,,Included,gpt-5,No,lots,0,0,0,0,$0.00,acme\n"
        );
        let r = import_csv(&s, "usage.csv", csv.as_bytes()).unwrap();
        assert_eq!((r.rows, r.imported, r.duplicates, r.errored, r.free), (6, 3, 0, 1, 1));
        let lines: Vec<u64> = r.malformed.iter().map(|m| m.line).collect();
        assert_eq!(lines, [4, 6, 7], "{:?}", r.malformed);
        assert!(r.malformed[0].reason.contains("not a date"), "{:?}", r.malformed);
        assert_eq!(r.unknown_columns, ["Team"]);
        let again = import_csv(&s, "usage.csv", csv.as_bytes()).unwrap();
        assert_eq!((again.imported, again.duplicates), (0, 3), "a re-import adds nothing");
        let ev = account_events(&s, None, None).unwrap();
        assert_eq!(ev.len(), 3);
        assert_eq!(
            (ev[1].input_cache_write, ev[1].output, ev[1].cost_usd, ev[1].cloud_agent.as_deref()),
            (1000, 100, Some(0.04), Some("bc-1"))
        );
        assert_eq!(ev[0].cost_usd, None, "Included is not a figure");
    }

    #[test]
    fn a_quote_never_closed_costs_its_own_line_only() {
        let (_d, s) = store();
        let csv = "Date,Kind,Model,Output Tokens,Cost\n\
                   2026-03-01T10:00:00.000Z,Included,gpt-5,1,$0.01\n\
                   2026-03-01T11:00:00.000Z,Included,\"gpt-5,2,$0.01\n\
                   2026-03-01T12:00:00.000Z,Included,gpt-5,3,$0.01\n\
                   2026-03-01T13:00:00.000Z,\"Errored, Not Charged\",gpt-5,4,$0.00\n";
        let r = import_csv(&s, "usage.csv", csv.as_bytes()).unwrap();
        assert_eq!((r.rows, r.imported), (4, 3), "{r:?}");
        assert_eq!(r.malformed.len(), 1, "{r:?}");
        assert_eq!(r.malformed[0].line, 3, "{r:?}");
        assert!(r.malformed[0].reason.contains("never closed"), "{r:?}");
        let outputs: Vec<i64> = account_events(&s, None, None).unwrap().iter().map(|e| e.output).collect();
        assert_eq!(outputs, [1, 3, 4], "the rows after the open quote are kept");
        // A stray quote inside the last line's unquoted field is text, not an open quote.
        let r = import_csv(&s, "b.csv", b"Date,Model,Output Tokens\n2026-03-02T10:00:00Z,5\" model,7\n").unwrap();
        assert_eq!((r.imported, r.malformed.len()), (1, 0), "{r:?}");
    }

    #[test]
    fn a_header_naming_a_column_twice_is_refused_by_its_names() {
        let (_d, s) = store();
        for (header, names) in [
            ("Date,Model,Input,Input (w/o Cache Write)", "\"Input\" and \"Input (w/o Cache Write)\""),
            ("Date,Model,Date", "\"Date\" and \"Date\""),
            ("Date,Team,team", "\"Team\" and \"team\""),
        ] {
            let csv = format!("{header}\n2026-03-01T10:00:00Z,gpt-5,1\n");
            let err = import_csv(&s, "x.csv", csv.as_bytes()).unwrap_err().to_string();
            assert!(err.contains("names a column twice") && err.contains(names), "{header}: {err}");
        }
        assert!(account_events(&s, None, None).unwrap().is_empty());
    }

    #[test]
    fn token_figures_out_of_range_are_bad_lines_never_clamped() {
        let (_d, s) = store();
        let csv = "Date,Model,Input (w/o Cache Write),Output Tokens\n\
                   2026-03-01T10:00:00Z,gpt-5,9007199254740993,1\n\
                   2026-03-01T10:00:01Z,gpt-5,1e20,1\n\
                   2026-03-01T10:00:02Z,gpt-5,9223372036854775808,1\n\
                   2026-03-01T10:00:03Z,gpt-5,12.5,1\n\
                   2026-03-01T10:00:04Z,gpt-5,1000000000000,1\n\
                   2026-03-01T10:00:05Z,gpt-5,\"2,000.0\",1\n";
        let r = import_csv(&s, "big.csv", csv.as_bytes()).unwrap();
        let lines: Vec<u64> = r.malformed.iter().map(|m| m.line).collect();
        assert_eq!(lines, [2, 3, 4, 5], "{:?}", r.malformed);
        assert!(r.malformed[0].reason.contains("not between 0 and 1000000000000"), "{:?}", r.malformed);
        assert!(r.malformed[3].reason.contains("not a number of tokens"), "{:?}", r.malformed);
        let inputs: Vec<i64> = account_events(&s, None, None).unwrap().iter().map(|e| e.input_no_cache_write).collect();
        assert_eq!(inputs, [MAX_TOKENS, 2000]);
    }

    #[test]
    fn older_headers_are_read_and_a_file_without_dates_is_refused() {
        let (_d, s) = store();
        let old = "Date,Kind,Model,Max Mode,Input (w/ Cache Write),Input (w/o Cache Write),Cache Read,Output,Total Tokens,Cost\n\
                   2025-08-26T19:29:47.389Z,Included in Pro,auto,No,0,120,0,30,150,Included\n";
        let r = import_csv(&s, "old.csv", old.as_bytes()).unwrap();
        assert_eq!((r.imported, r.malformed.len()), (1, 0));
        assert_eq!(account_events(&s, None, None).unwrap()[0].output, 30);
        let err = import_csv(&s, "x.csv", b"Model,Cost\ngpt-5,$1\n").unwrap_err();
        assert!(err.to_string().contains("no Date column"), "{err}");
    }
}
