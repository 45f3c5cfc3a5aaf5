//! The local agent store of Cursor 3's SDK and Agents Window:
//! `~/.cursor/projects/<p>/sdk-agent-store/<md5(workspace)>/index.db`, a catalog of `agents` and
//! their `runs` (with `usage_json`, the run's token counts), and `agents/<agent id>/store.db`
//! beside it, one blob store per agent in the cursor-agent CLI's format (read by [`super::cli`]).
//!
//! The layout is not documented by Cursor. The columns read here are the ones public readers
//! use (`agents.agent_id, workspace_ref, name, created_at, updated_at, status`; `runs.run_id,
//! agent_id, turn_number, status, model, started_at, finished_at, created_at, usage_json`); rows
//! are read by column name, so a column added or missing only loses that field. Every other
//! column is ignored, and none whose name is a secret's (`*EncryptionKey`, auth) is read at all.
//!
//! Each run with recorded figures is also one usage row ([`UsageRecord`], keyed by its run id so
//! a re-read replaces rather than adds): exact figures Cursor kept, reported as the `sdk` source.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::sqlite::CursorDb;
use super::value::{is_secret_key, non_empty, str_field, timestamp_ms};
use crate::error::Result;
use crate::model::{ChatTokens, ParsedSession, ProjectVia, Tally, UsageRecord};

/// The folder, under a project folder, that holds the SDK's stores.
pub const DIR: &str = "sdk-agent-store";

/// The `format` of the chats read here: what says their usage rows are the SDK's.
pub const FORMAT: &str = "sdk-agent-store";

/// The name their usage rows go by (the key's prefix, and the agent in `tether usage --by agent`).
pub const USAGE_AGENT: &str = "cursor-sdk";

/// Every `index.db` under a `~/.cursor/projects` dir (`<p>/sdk-agent-store/<hash>/index.db`); a
/// store folder without one is passed over, with why.
pub fn find_stores(projects_dir: &Path, skipped: &mut Vec<(PathBuf, &'static str)>) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(projects) = std::fs::read_dir(projects_dir) else { return out };
    for p in projects.flatten() {
        let Ok(stores) = std::fs::read_dir(p.path().join(DIR)) else { continue };
        for s in stores.flatten().map(|e| e.path()).filter(|p| p.is_dir()) {
            if s.join("index.db").is_file() {
                out.push(s.join("index.db"));
            } else {
                skipped.push((s, "sdk-agent-store folder with no index.db"));
            }
        }
    }
    out.sort();
    out
}

/// The agents' blob stores beside an `index.db` (`agents/<id>/store.db`), in name order: what
/// else says the catalog's chats changed.
pub fn agent_stores(index: &Path) -> Vec<PathBuf> {
    let dir = index.parent().unwrap_or(Path::new("")).join("agents");
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut v: Vec<PathBuf> = entries.flatten().map(|e| e.path().join("store.db")).filter(|p| p.is_file()).collect();
    v.sort();
    v
}

/// What one catalog gives: a chat per agent, and what was wrong with rows that gave none.
#[derive(Debug, Default)]
pub struct SdkRead {
    pub sessions: Vec<ParsedSession>,
    pub problems: Tally,
}

/// Read a catalog and each agent's blob store. A malformed row is counted and skipped; a blob
/// store that cannot be opened leaves its agent listed without messages, said in its problems.
pub fn read_index(db: &CursorDb, path: &Path, scratch: &Path) -> Result<SdkRead> {
    let mut out = SdkRead::default();
    if !db.has_table("agents")? {
        out.problems.add("no_agents_table");
        return Ok(out);
    }
    let runs = if db.has_table("runs")? { rows(db, "runs")? } else { Vec::new() };
    let mut by_agent: BTreeMap<String, Vec<Map<String, Value>>> = BTreeMap::new();
    for r in runs {
        match text(&r, &["agent_id", "agentId"]) {
            Some(a) => by_agent.entry(a).or_default().push(r),
            None => out.problems.add("bad_run_row"),
        }
    }
    let agents_dir = path.parent().unwrap_or(Path::new("")).join("agents");
    for a in rows(db, "agents")? {
        let Some(id) = text(&a, &["agent_id", "agentId", "id"]) else {
            out.problems.add("bad_agent_row");
            continue;
        };
        let runs = by_agent.remove(&id).unwrap_or_default();
        out.sessions.push(read_agent(&id, &a, &runs, &agents_dir.join(&id).join("store.db"), scratch));
    }
    if !by_agent.is_empty() {
        out.problems.add_n("note:run_without_agent", by_agent.values().map(|v| v.len() as u64).sum());
    }
    Ok(out)
}

fn read_agent(
    id: &str,
    agent: &Map<String, Value>,
    runs: &[Map<String, Value>],
    store: &Path,
    scratch: &Path,
) -> ParsedSession {
    let mut s = ParsedSession::new(id, "cli", FORMAT);
    if store.is_file() {
        match CursorDb::open(store, scratch).and_then(|db| super::cli::read_store(&db, store)) {
            Ok(Some(c)) => {
                s.messages = c.messages;
                s.title = c.title;
                s.mode = c.mode;
                s.model = c.model;
                s.created_at = c.created_at;
                s.updated_at = c.updated_at;
                s.path_hints = c.path_hints;
                s.problems = c.problems;
                s.set_project(c.project, c.project_via);
            }
            Ok(None) => s.problems.add("note:empty_agent_store"),
            Err(_) => s.problems.add("bad_agent_store"),
        }
    } else {
        s.problems.add("note:messages_not_on_disk");
    }
    // The catalog's own fields come first: it is what the Agents Window lists.
    if let Some(n) = text(agent, &["name", "title"]) {
        s.title = Some(n);
    }
    if let Some(w) = text(agent, &["workspace_ref", "workspaceRef", "cwd"]) {
        let p = if w.contains("://") { super::uri::project_from_uri(&w) } else { Some(super::uri::normalise_path(&w)) };
        s.set_project(p, ProjectVia::Cwd);
    }
    s.created_at = time(agent, "created_at").or(s.created_at);
    let mut last = time(agent, "updated_at");
    let mut tokens: Option<ChatTokens> = None;
    let mut ordered: Vec<&Map<String, Value>> = runs.iter().collect();
    ordered.sort_by_key(|r| (r.get("turn_number").and_then(Value::as_i64), time(r, "started_at")));
    for r in ordered {
        for k in ["finished_at", "started_at", "created_at"] {
            last = last.max(time(r, k));
        }
        if let Some(m) = text(r, &["model"]) {
            s.model = Some(m);
        }
        match run_tokens(r) {
            Ok(Some(t)) => {
                let sum = tokens.get_or_insert_with(Default::default);
                sum.input += t.input;
                sum.output += t.output;
                match text(r, &["run_id", "runId", "id"]) {
                    Some(run) => s.usage.push(UsageRecord {
                        key: format!("{USAGE_AGENT}:{run}"),
                        at: time(r, "finished_at").or(time(r, "started_at")).or(time(r, "created_at")),
                        model: text(r, &["model"]),
                        input: t.input,
                        output: t.output,
                        cache_read: t.cache_read,
                        cache_write: t.cache_write,
                    }),
                    // Without its id a re-read could not tell the run from a new one.
                    None => s.problems.add("note:run_without_id"),
                }
            }
            Ok(None) => s.problems.add("note:run_usage_not_recorded"),
            Err(()) => s.problems.add("bad_usage_json"),
        }
    }
    s.tokens = tokens;
    s.updated_at = last.or(s.updated_at).or(s.created_at);
    // The blob store's meta hash is not this chat's whole state (runs change too): the index
    // fingerprints what was read.
    s.fingerprint = String::new();
    super::composer::finish(&mut s);
    s
}

/// A run's figures, in disjoint buckets: `input` is the input neither read from nor written to
/// the cache, as in the cursor-agent CLI's `result` usage (the same object, which runs read the
/// same way), so the cache figures are priced at the cache rates.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct RunTokens {
    input: i64,
    output: i64,
    cache_read: i64,
    cache_write: i64,
}

/// A run's `usage_json` (`{inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens, …}`):
/// `None` when it records no figures (input and output both needed: a missing one is not a
/// zero; a missing cache figure is, as the CLI leaves them out when nothing was cached), `Err`
/// when it is not JSON.
fn run_tokens(run: &Map<String, Value>) -> std::result::Result<Option<RunTokens>, ()> {
    let v = match run.get("usage_json") {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::String(t)) if t.trim().is_empty() => return Ok(None),
        Some(Value::String(t)) => serde_json::from_str::<Value>(t).map_err(|_| ())?,
        Some(_) => return Err(()),
    };
    if v.is_null() {
        return Ok(None);
    }
    if !v.is_object() {
        return Err(());
    }
    let n = |keys: &[&str]| keys.iter().find_map(|k| v.get(*k).and_then(Value::as_i64)).filter(|n| *n >= 0);
    Ok(match (n(&["inputTokens", "input_tokens"]), n(&["outputTokens", "output_tokens"])) {
        (Some(input), Some(output)) => Some(RunTokens {
            input,
            output,
            cache_read: n(&["cacheReadTokens", "cache_read_tokens"]).unwrap_or(0),
            cache_write: n(&["cacheWriteTokens", "cache_write_tokens"]).unwrap_or(0),
        }),
        _ => None,
    })
}

/// Every row of a table as a map of its text and number columns by name; blobs and any column
/// named like a secret are never read.
fn rows(db: &CursorDb, table: &str) -> Result<Vec<Map<String, Value>>> {
    use rusqlite::types::ValueRef;
    let mut stmt = db.conn.prepare(&format!("SELECT * FROM \"{table}\""))?;
    let names: Vec<String> = stmt.column_names().into_iter().map(str::to_owned).collect();
    let mut out = Vec::new();
    let mut q = stmt.query([])?;
    while let Some(r) = q.next()? {
        let mut m = Map::new();
        for (i, name) in names.iter().enumerate() {
            if is_secret_key(name) || name.to_ascii_lowercase().contains("auth") {
                continue;
            }
            let v = match r.get_ref(i)? {
                ValueRef::Text(b) => Value::String(String::from_utf8_lossy(b).into_owned()),
                ValueRef::Integer(n) => Value::from(n),
                ValueRef::Real(f) => Value::from(f),
                ValueRef::Null | ValueRef::Blob(_) => continue,
            };
            m.insert(name.clone(), v);
        }
        out.push(m);
    }
    Ok(out)
}

fn text(m: &Map<String, Value>, keys: &[&str]) -> Option<String> {
    let v = Value::Object(m.clone());
    keys.iter().find_map(|k| non_empty(str_field(&v, k)))
}

fn time(m: &Map<String, Value>, key: &str) -> Option<i64> {
    timestamp_ms(m.get(key))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(usage: Value) -> Map<String, Value> {
        json!({"run_id": "r", "agent_id": "a", "usage_json": usage}).as_object().unwrap().clone()
    }

    #[test]
    fn usage_json_figures_are_exact_and_absent_ones_stay_absent() {
        let t = run_tokens(&run(json!(r#"{"inputTokens":21,"outputTokens":7,"cacheReadTokens":3}"#)));
        assert_eq!(t, Ok(Some(RunTokens { input: 21, output: 7, cache_read: 3, cache_write: 0 })));
        assert_eq!(
            run_tokens(&run(json!(r#"{"input_tokens":5,"output_tokens":1,"cache_write_tokens":2}"#))),
            Ok(Some(RunTokens { input: 5, output: 1, cache_read: 0, cache_write: 2 }))
        );
        // A missing figure is not a zero.
        assert_eq!(run_tokens(&run(json!(r#"{"inputTokens":21}"#))), Ok(None));
        assert_eq!(run_tokens(&run(Value::Null)), Ok(None));
        assert_eq!(run_tokens(&run(json!("null"))), Ok(None));
        assert_eq!(run_tokens(&run(json!("{not json"))), Err(()));
        assert_eq!(run_tokens(&run(json!("[1,2]"))), Err(()));
    }

    #[test]
    fn rows_never_read_a_secret_column() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("index.db");
        let c = rusqlite::Connection::open(&path).unwrap();
        c.execute_batch(
            "CREATE TABLE agents (agent_id TEXT, name TEXT, blobEncryptionKey TEXT, authToken TEXT, data BLOB);
             INSERT INTO agents VALUES ('a1', 'kiwi', 'KEY', 'TOKEN', x'00');",
        )
        .unwrap();
        drop(c);
        let db = CursorDb::open(&path, dir.path()).unwrap();
        let r = rows(&db, "agents").unwrap();
        assert_eq!(Value::Object(r[0].clone()), json!({"agent_id": "a1", "name": "kiwi"}));
    }

    #[test]
    fn a_catalog_lists_its_agents_and_counts_bad_rows() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("index.db");
        let c = rusqlite::Connection::open(&path).unwrap();
        c.execute_batch(
            "CREATE TABLE agents (agent_id TEXT, workspace_ref TEXT, name TEXT, created_at TEXT, updated_at TEXT, status TEXT);
             CREATE TABLE runs (run_id TEXT, agent_id TEXT, turn_number INTEGER, status TEXT, model TEXT, started_at TEXT,
                                finished_at TEXT, result TEXT, created_at TEXT, usage_json TEXT);
             INSERT INTO agents VALUES ('a1', '/home/u/kiwi', 'Kiwi task', '2026-10-04T00:00:00Z', '2026-10-04T00:00:00Z', 'COMPLETED');
             INSERT INTO agents VALUES (NULL, '/home/u/kiwi', 'no id', NULL, NULL, NULL);
             INSERT INTO runs VALUES ('r1', 'a1', 1, 'COMPLETED', 'm-1', '2026-10-04T00:00:00Z', '2026-10-04T00:01:00Z', 'ok', NULL, '{\"inputTokens\":21,\"outputTokens\":7}');
             INSERT INTO runs VALUES ('r2', 'a1', 2, 'COMPLETED', 'm-2', '2026-10-04T00:02:00Z', '2026-10-04T00:03:00Z', 'ok', NULL, '{\"inputTokens\":4,\"outputTokens\":1}');
             INSERT INTO runs VALUES ('r3', 'a1', 3, 'ERROR', 'm-2', '2026-10-04T00:04:00Z', NULL, NULL, NULL, '{broken');
             INSERT INTO runs VALUES ('r4', NULL, 1, 'COMPLETED', 'm', NULL, NULL, NULL, NULL, NULL);",
        )
        .unwrap();
        drop(c);
        let db = CursorDb::open(&path, dir.path()).unwrap();
        let r = read_index(&db, &path, dir.path()).unwrap();
        assert_eq!(r.problems.0.get("bad_agent_row"), Some(&1));
        assert_eq!(r.problems.0.get("bad_run_row"), Some(&1));
        let [s] = &r.sessions[..] else { panic!("{:?}", r.sessions) };
        assert_eq!(
            (s.id.as_str(), s.title.as_deref(), s.project.as_deref()),
            ("a1", Some("Kiwi task"), Some("/home/u/kiwi"))
        );
        assert_eq!(s.model.as_deref(), Some("m-2"), "the latest run's model");
        assert_eq!(s.tokens, Some(ChatTokens { input: 25, output: 8 }));
        // One usage row per run with figures, by its run id, at its end, with its own model.
        let rows: Vec<_> =
            s.usage.iter().map(|u| (u.key.as_str(), u.model.as_deref(), u.at, u.input, u.output)).collect();
        assert_eq!(
            rows,
            [
                ("cursor-sdk:r1", Some("m-1"), timestamp_ms(Some(&json!("2026-10-04T00:01:00Z"))), 21, 7),
                ("cursor-sdk:r2", Some("m-2"), timestamp_ms(Some(&json!("2026-10-04T00:03:00Z"))), 4, 1),
            ]
        );
        assert_eq!(s.problems.0.get("bad_usage_json"), Some(&1));
        assert_eq!(s.problems.0.get("note:messages_not_on_disk"), Some(&1));
        assert_eq!(s.updated_at, timestamp_ms(Some(&json!("2026-10-04T00:04:00Z"))));
    }
}
