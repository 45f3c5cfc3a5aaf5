//! Claude Code's chats: `<config dir>/projects/<escaped cwd>/<sessionId>.jsonl`, one JSON line
//! per record (reference: `agent-formats.md` §1).
//!
//! - `user` / `assistant` lines carry `message.content` (a string or blocks: `text`, `thinking`,
//!   `tool_use`, `tool_result`), `uuid`, `timestamp` and `cwd` (the project: the folder name is a
//!   lossy escape, never decoded; `gitBranch` has no place in the model yet). One API response is
//!   written as several lines (one per block) sharing `message.id`; a line seen twice (resume,
//!   rewind copies) is read once, by `uuid`.
//! - `isMeta` lines and compaction summaries (`isCompactSummary`) are injected text: system
//!   messages, never the person's words nor the title. `tool_result` blocks mark their call's
//!   status; their output is not a message.
//! - Titles: `custom-title` (/rename), else `ai-title`, else a `summary` whose `leafUuid` is in
//!   this file (older builds wrote other sessions' summaries too), else the first prompt.
//! - Usage: once per response (`message.id` + `requestId`), keeping the largest snapshot (early
//!   lines carry an intermediate one); input counts cache writes and reads.
//! - Subagents (2.1: `<sessionId>/subagents/agent-*.jsonl`) are nested in their parent like
//!   Cursor's; 2.0's `agent-*.jsonl` beside the sessions read as chats of their own.
//! - Unparsable lines (a half-written last line is normal while Claude Code runs) are skipped
//!   and counted (`bad_json`).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::cursor::composer::{finish, tool_summary};
use crate::cursor::value::timestamp_ms;
use crate::model::{ChatTokens, ParsedMessage, ParsedSession, ProjectVia, Role, UsageRecord};

pub const ORIGIN: &str = "claude-code";

/// Subagent transcripts read with a session file: `<dir>/<stem>/subagents/*.jsonl`, sorted.
pub fn subagents_of(session: &Path) -> Vec<PathBuf> {
    let (Some(dir), Some(stem)) = (session.parent(), session.file_stem()) else { return Vec::new() };
    let Ok(entries) = std::fs::read_dir(dir.join(stem).join("subagents")) else { return Vec::new() };
    let mut v: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl") && p.is_file())
        // Internal compaction workers, not a subagent anyone asked for.
        .filter(|p| !p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("agent-acompact")))
        .collect();
    v.sort();
    v
}

/// Read a session file and the subagents beside it.
pub fn read(path: &Path) -> crate::error::Result<ParsedSession> {
    let id = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let mut s = parse(&id, &super::text::read_text(path)?);
    super::text::nest_subagents(&mut s, subagents_of(path), |_, id, text| parse(id, text));
    finish(&mut s);
    Ok(s)
}

/// Parse one JSONL file's text into a chat.
pub fn parse(id: &str, text: &str) -> ParsedSession {
    let mut s = ParsedSession::new(id, ORIGIN, "claude-jsonl");
    let mut seen: HashSet<String> = HashSet::new();
    // Tool call id → index of its message, for the result's status.
    let mut calls: HashMap<String, usize> = HashMap::new();
    // (message.id, requestId) → the largest snapshot, in the order responses first appear.
    let mut usage: HashMap<(String, String), UsageRecord> = HashMap::new();
    let mut usage_order: Vec<(String, String)> = Vec::new();
    let (mut custom, mut ai) = (None::<String>, None::<String>);
    let mut summaries: Vec<(String, String)> = Vec::new();
    let mut lines = super::text::json_lines(text);
    for v in lines.by_ref() {
        let str_of = |k: &str| v.get(k).and_then(Value::as_str);
        match str_of("type").unwrap_or("") {
            "summary" => {
                if let (Some(t), Some(leaf)) = (str_of("summary"), str_of("leafUuid")) {
                    summaries.push((t.to_owned(), leaf.to_owned()));
                }
                continue;
            }
            "custom-title" => {
                custom = str_of("customTitle").map(str::to_owned).or(custom);
                continue;
            }
            "ai-title" => {
                ai = str_of("aiTitle").map(str::to_owned).or(ai);
                continue;
            }
            "system" => {
                if str_of("subtype") == Some("compact_boundary") {
                    s.problems.add("note:compaction");
                }
                continue;
            }
            "user" | "assistant" => {}
            _ => continue,
        }
        if let Some(uuid) = str_of("uuid")
            && !seen.insert(uuid.to_owned())
        {
            s.problems.add("note:duplicate_line");
            continue;
        }
        let at = timestamp_ms(v.get("timestamp"));
        if let Some(cwd) = str_of("cwd") {
            s.set_project(Some(cwd.to_owned()), ProjectVia::Cwd);
            if !s.path_hints.iter().any(|h| h == cwd) {
                s.path_hints.push(cwd.to_owned());
            }
        }
        let msg = v.get("message").unwrap_or(&Value::Null);
        let before = s.messages.len();
        if str_of("type") == Some("user") {
            read_user(&mut s, &v, msg, &mut calls);
        } else {
            let model = msg.get("model").and_then(Value::as_str).filter(|m| *m != "<synthetic>").map(str::to_owned);
            if v.get("isApiErrorMessage").and_then(Value::as_bool) == Some(true) {
                let t = blocks_text(msg.get("content"));
                s.messages.push(ParsedMessage::error(if t.is_empty() { "API error".to_owned() } else { t }));
            } else {
                read_assistant(&mut s, msg, &mut calls);
            }
            for m in &mut s.messages[before..] {
                m.model = model.clone();
            }
            if let Some(u) = msg.get("usage") {
                let n = |k: &str| u.get(k).and_then(Value::as_i64).unwrap_or(0);
                let record = UsageRecord {
                    key: String::new(),
                    at,
                    model: model.clone(),
                    input: n("input_tokens"),
                    output: n("output_tokens"),
                    cache_read: n("cache_read_input_tokens"),
                    cache_write: n("cache_creation_input_tokens"),
                };
                let key = (
                    msg.get("id").and_then(Value::as_str).unwrap_or_else(|| str_of("uuid").unwrap_or("")).to_owned(),
                    str_of("requestId").unwrap_or("").to_owned(),
                );
                let total = |r: &UsageRecord| r.input + r.output + r.cache_read + r.cache_write;
                match usage.get_mut(&key) {
                    Some(slot) if total(&record) > total(slot) => *slot = record,
                    Some(_) => {}
                    None => {
                        usage_order.push(key.clone());
                        usage.insert(key, record);
                    }
                }
            }
        }
        let uuid = str_of("uuid").map(str::to_owned);
        for m in &mut s.messages[before..] {
            m.created_at = m.created_at.or(at);
            m.external_id = m.external_id.take().or_else(|| uuid.clone());
        }
        if let Some(at) = at {
            s.created_at = Some(s.created_at.map_or(at, |c| c.min(at)));
            s.updated_at = Some(s.updated_at.map_or(at, |u| u.max(at)));
        }
    }
    s.problems.add_n("bad_json", lines.bad);
    if !usage.is_empty() {
        // Input counts cache writes and reads (what the model read), as the chat's total.
        let (i, o) =
            usage.values().fold((0, 0), |(a, b), r| (a + r.input + r.cache_read + r.cache_write, b + r.output));
        s.tokens = Some(ChatTokens { input: i, output: o });
    }
    for key in usage_order {
        if let Some(mut r) = usage.remove(&key) {
            // Gateways omit the request id: the message id alone is then the key (as ccusage).
            r.key = format!("{ORIGIN}:{}:{}", key.0, key.1);
            // A synthetic (API error) line carries zero usage and no model: no request to count.
            if r.input + r.output + r.cache_read + r.cache_write > 0 {
                s.usage.push(r);
            }
        }
    }
    let summary = summaries.into_iter().rev().find(|(_, leaf)| seen.contains(leaf)).map(|(t, _)| t);
    s.title = custom.or(ai).or(summary).filter(|t| !t.trim().is_empty());
    finish(&mut s);
    s
}

fn read_user(s: &mut ParsedSession, v: &Value, msg: &Value, calls: &mut HashMap<String, usize>) {
    let flag = |k: &str| v.get(k).and_then(Value::as_bool) == Some(true);
    let injected = flag("isMeta") || flag("isCompactSummary");
    if flag("isCompactSummary") {
        s.problems.add("note:compact_summary");
    }
    let push_text = |s: &mut ParsedSession, t: &str| {
        let t = t.trim();
        if t.is_empty() {
            return;
        }
        if injected {
            s.problems.add("note:injected_text");
            s.messages.push(ParsedMessage::text(Role::System, t));
        } else {
            s.messages.push(ParsedMessage::text(Role::User, command_words(t)));
        }
    };
    match msg.get("content") {
        Some(Value::String(t)) => push_text(s, t),
        Some(Value::Array(blocks)) => {
            for b in blocks {
                match b.get("type").and_then(Value::as_str) {
                    Some("text") => push_text(s, b.get("text").and_then(Value::as_str).unwrap_or("")),
                    Some("tool_result") => {
                        s.problems.add("note:tool_result");
                        let error = b.get("is_error").and_then(Value::as_bool) == Some(true);
                        if let Some(&i) = b.get("tool_use_id").and_then(Value::as_str).and_then(|id| calls.get(id))
                            && let Some(m) = s.messages.get_mut(i)
                        {
                            m.tool_status = Some(if error { "error" } else { "completed" }.into());
                        }
                    }
                    _ => {}
                }
            }
        }
        _ => {}
    }
}

fn read_assistant(s: &mut ParsedSession, msg: &Value, calls: &mut HashMap<String, usize>) {
    let Some(blocks) = msg.get("content").and_then(Value::as_array) else {
        if let Some(t) = msg.get("content").and_then(Value::as_str).filter(|t| !t.trim().is_empty()) {
            s.messages.push(ParsedMessage::text(Role::Assistant, t.trim()));
        }
        return;
    };
    for b in blocks {
        match b.get("type").and_then(Value::as_str) {
            Some("text") => {
                if let Some(t) = b.get("text").and_then(Value::as_str).map(str::trim).filter(|t| !t.is_empty()) {
                    s.messages.push(ParsedMessage::text(Role::Assistant, t));
                }
            }
            Some("thinking") => {
                if let Some(t) = b.get("thinking").and_then(Value::as_str).map(str::trim).filter(|t| !t.is_empty()) {
                    s.messages.push(ParsedMessage::thinking(t));
                }
            }
            Some("tool_use") => {
                let input = b.get("input").cloned().unwrap_or(Value::Null);
                crate::cursor::transcript::collect_paths(&input, &mut s.path_hints);
                let name = b.get("name").and_then(Value::as_str).unwrap_or("tool");
                if let Some(id) = b.get("id").and_then(Value::as_str) {
                    calls.insert(id.to_owned(), s.messages.len());
                }
                // A subagent's call says what it was asked (no key `tool_summary` knows).
                let asked = ["description", "prompt"].iter().find_map(|k| input.get(*k).and_then(Value::as_str));
                let summary = match (name, asked) {
                    ("Task" | "Agent", Some(a)) => crate::model::truncate_chars(a.trim(), 200),
                    _ => tool_summary(&input),
                };
                s.messages.push(ParsedMessage::tool(name, None, summary));
            }
            _ => {}
        }
    }
}

/// Text of a content value: a string, or its `text` blocks joined.
fn blocks_text(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(t)) => t.trim().to_owned(),
        Some(Value::Array(a)) => {
            a.iter().filter_map(|b| b.get("text").and_then(Value::as_str)).map(str::trim).collect::<Vec<_>>().join("\n")
        }
        _ => String::new(),
    }
}

/// A slash command arrives as `<command-name>/x</command-name><command-args>…`: shown as the
/// person typed it.
fn command_words(t: &str) -> String {
    let inner = |tag: &str| {
        let (open, close) = (format!("<{tag}>"), format!("</{tag}>"));
        let a = t.find(&open)? + open.len();
        let b = t[a..].find(&close)? + a;
        Some(t[a..b].trim().to_owned())
    };
    match inner("command-name") {
        Some(name) => match inner("command-args").filter(|a| !a.is_empty()) {
            Some(args) => format!("{name} {args}"),
            None => name,
        },
        None => t.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Kind;
    use serde_json::json;

    #[test]
    fn blocks_dedupe_usage_titles_and_bad_lines() {
        let a = |uuid: &str, mid: &str, block: Value, out: i64| {
            json!({"type": "assistant", "uuid": uuid, "requestId": "req_1", "timestamp": "2026-11-01T10:00:01.000Z",
                   "cwd": "/home/u/kiwi", "message": {"id": mid, "model": "claude-opus-4-6", "content": [block],
                   "usage": {"input_tokens": 10, "cache_read_input_tokens": 100, "output_tokens": out}}})
            .to_string()
        };
        let lines = [
            json!({"type": "user", "uuid": "u1", "timestamp": "2026-11-01T10:00:00.000Z", "cwd": "/home/u/kiwi",
                   "gitBranch": "main", "message": {"role": "user", "content": "fix the kiwi parser"}})
            .to_string(),
            a("a1", "msg_1", json!({"type": "thinking", "thinking": "look at parse.rs"}), 2),
            a("a2", "msg_1", json!({"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "/home/u/kiwi/parse.rs"}}), 40),
            json!({"type": "user", "uuid": "u2", "message": {"content": [{"type": "tool_result", "tool_use_id": "t1", "content": "fn parse"}]}}).to_string(),
            a("a2", "msg_1", json!({"type": "tool_use", "id": "t1", "name": "Read", "input": {}}), 40),
            "{\"type\": \"assistant\", \"uuid\": ".to_owned(),
            json!({"type": "summary", "summary": "Someone else's chat", "leafUuid": "elsewhere"}).to_string(),
            json!({"type": "summary", "summary": "Kiwi parser fix", "leafUuid": "a2"}).to_string(),
        ];
        let s = parse("sess", &lines.join("\n"));
        let got: Vec<_> = s.messages.iter().map(|m| (m.role, m.kind, m.text.as_str())).collect();
        assert_eq!(
            got,
            [
                (Role::User, Kind::Text, "fix the kiwi parser"),
                (Role::Assistant, Kind::Thinking, "look at parse.rs"),
                (Role::Assistant, Kind::Tool, "/home/u/kiwi/parse.rs"),
            ]
        );
        assert_eq!(s.messages[2].tool_status.as_deref(), Some("completed"));
        assert_eq!(s.messages[2].model.as_deref(), Some("claude-opus-4-6"));
        assert_eq!(s.tokens, Some(ChatTokens { input: 110, output: 40 }), "one response, its last snapshot");
        assert_eq!(s.title.as_deref(), Some("Kiwi parser fix"));
        assert_eq!(s.project.as_deref(), Some("/home/u/kiwi"));
        assert_eq!(s.problems.0.get("bad_json"), Some(&1));
        assert_eq!(s.problems.0.get("note:duplicate_line"), Some(&1));
    }

    #[test]
    fn slash_commands_read_as_typed() {
        assert_eq!(
            command_words("<command-name>/model</command-name>\n<command-args>opus</command-args>"),
            "/model opus"
        );
        assert_eq!(command_words("plain"), "plain");
    }
}
