//! Gemini CLI's chats: `<GEMINI_CLI_HOME or home>/.gemini/tmp/<project id>/chats/session-*.jsonl`
//! (since 0.39; whole-file `session-*.json` before), read as Gemini's own loader reads them
//! (`loadConversationRecord` in `packages/core/src/services/chatRecordingService.ts`; reference:
//! `agent-formats.md` §3).
//!
//! - JSONL: a metadata line (`sessionId`, `projectHash`, `startTime`, …), then message records
//!   (`id`, `type`: `user` / `gemini` / `info` / `error` / `warning`, `content`). A message is
//!   appended again, whole, each time it changes (tokens arriving, tool calls completing): the
//!   last copy of an id wins, in the place of its first. `{"$rewindTo": id}` drops that message
//!   and those after it (all of them when the id is unknown, as Gemini does). `{"$set": {…}}`
//!   updates the metadata; a `$set.messages` is a checkpoint written after compressing the
//!   context: the messages it brings that were not in the file before (the compression summary)
//!   are Gemini's text, shown as system text; the earlier conversation stays readable.
//! - `.json` (0.38 and before): one `ConversationRecord` with `messages`, rewritten whole.
//!   Resuming one writes a `.jsonl` beside it: discovery then reads only the `.jsonl`.
//! - `gemini` messages: `content` (the answer), `thoughts` (thinking), `toolCalls` (their status),
//!   `model`, `tokens {input (cached included), output, cached, thoughts, tool, total}`. `user`
//!   messages that carry only `functionResponse` parts (0.44 on) are tool output, not the
//!   person's words; `<session_context>` / `<hook_context>` ones are injected context.
//! - Project: `.project_root` beside `chats/` (0.29 on), else the folder `projects.json` maps to
//!   that slug, else the root whose sha256 is the record's `projectHash` (the folder name before
//!   0.29), among those `projects.json` knows.
//! - Subagents (`kind: "subagent"`) write `chats/<parent sessionId>/<sessionId>.json(l)`: nested
//!   in their parent like Cursor's.
//! - Usage: once per `gemini` message id (its last copy), rewound and compressed ones included:
//!   the request was made. Unparsable lines are skipped and counted (`bad_json`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::cursor::composer::{finish, tool_summary};
use crate::cursor::value::timestamp_ms;
use crate::model::{ChatTokens, ParsedMessage, ParsedSession, ProjectVia, Role, UsageRecord};

pub const ORIGIN: &str = "gemini";

/// User text Gemini injected, not typed (`isIgnoredUserContent` in its `utils/sessionUtils.ts`,
/// slash commands apart: those the person did type).
const INJECTED: &[&str] = &["<session_context>", "<hook_context>"];

/// Every session file under a `.gemini` dir: `tmp/*/chats/session-*.json(l)`, a `.json` passed
/// over when its `.jsonl` continuation is beside it.
pub fn discover(gemini_dir: &Path, out: &mut Vec<PathBuf>, skipped: &mut Vec<(PathBuf, &'static str)>) {
    let Ok(projects) = std::fs::read_dir(gemini_dir.join("tmp")) else { return };
    for chats in projects.flatten().map(|e| e.path().join("chats")).filter(|p| p.is_dir()) {
        let Ok(entries) = std::fs::read_dir(&chats) else { continue };
        for p in entries.flatten().map(|e| e.path()).filter(|p| p.is_file()) {
            let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            let json = name.ends_with(".json");
            if !json && !name.ends_with(".jsonl") {
                continue;
            }
            if !name.starts_with("session-") {
                skipped.push((p, "a Gemini CLI file that is not a session (session-*.json[l])"));
            } else if json && p.with_extension("jsonl").is_file() {
                skipped.push((p, "a Gemini CLI session continued in the .jsonl beside it"));
            } else {
                out.push(p);
            }
        }
    }
}

/// Subagent files of a session file: `chats/<parent sessionId>/*.json(l)`. The file's name ends
/// in the first 8 characters of its session id, which the folder's name starts with.
pub fn subagents_of(session: &Path) -> Vec<PathBuf> {
    let (Some(chats), Some(stem)) = (session.parent(), session.file_stem()) else { return Vec::new() };
    let stem = stem.to_string_lossy();
    let Some(short) = stem.rsplit('-').next().filter(|s| !s.is_empty()) else { return Vec::new() };
    let Ok(entries) = std::fs::read_dir(chats) else { return Vec::new() };
    let mut v = Vec::new();
    for dir in entries.flatten().map(|e| e.path()).filter(|p| p.is_dir()) {
        if !dir.file_name().is_some_and(|n| n.to_string_lossy().starts_with(short)) {
            continue;
        }
        let Ok(files) = std::fs::read_dir(&dir) else { continue };
        v.extend(
            files
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "jsonl" || x == "json")),
        );
    }
    v.sort();
    v
}

/// What a file says besides its messages, for finding its project.
#[derive(Debug, Default)]
pub struct Meta {
    pub project_hash: Option<String>,
    pub directories: Vec<String>,
}

/// Read a session file, its project and its subagents.
pub fn read(path: &Path) -> crate::error::Result<ParsedSession> {
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let (mut s, meta) = parse(&stem, &super::text::read_text(path)?, is_whole_json(path));
    if let Some(project) = project_of(path, &meta) {
        s.set_project(Some(project), ProjectVia::Cwd);
    }
    for d in &meta.directories {
        if !s.path_hints.contains(d) {
            s.path_hints.push(d.clone());
        }
    }
    super::text::nest_subagents(&mut s, subagents_of(path), |sub, id, text| parse(id, text, is_whole_json(sub)).0);
    finish(&mut s);
    Ok(s)
}

fn is_whole_json(path: &Path) -> bool {
    path.extension().is_some_and(|x| x == "json")
}

/// The project folder of a session file under `tmp/<id>/chats/`.
fn project_of(path: &Path, meta: &Meta) -> Option<String> {
    let project_dir = path.parent()?.parent()?;
    if let Ok(root) = std::fs::read_to_string(project_dir.join(".project_root")) {
        let root = root.trim();
        if !root.is_empty() {
            return Some(root.to_owned());
        }
    }
    let gemini_dir = project_dir.parent()?.parent()?;
    let registry: Value = std::fs::read(gemini_dir.join("projects.json"))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or(Value::Null);
    let known = registry.get("projects").and_then(Value::as_object)?;
    let slug = project_dir.file_name()?.to_string_lossy();
    if let Some((root, _)) = known.iter().find(|(_, v)| v.as_str() == Some(&slug)) {
        return Some(root.clone());
    }
    // Before 0.29 the folder was named by the hash the records still carry.
    let hash = meta.project_hash.clone().unwrap_or_else(|| slug.into_owned());
    known.keys().find(|root| hex(&Sha256::digest(root.as_bytes())) == hash).cloned()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// One message as last recorded, and whether it first came in a compression checkpoint.
struct Slot {
    record: Value,
    injected: bool,
}

/// Parse a session's text: JSONL, or (`whole_json`) a pre-0.39 `ConversationRecord`.
pub fn parse(fallback_id: &str, text: &str, whole_json: bool) -> (ParsedSession, Meta) {
    let mut s = ParsedSession::new(fallback_id, ORIGIN, if whole_json { "gemini-json" } else { "gemini-jsonl" });
    let mut meta = Meta::default();
    let mut order: Vec<String> = Vec::new();
    let mut slots: HashMap<String, Slot> = HashMap::new();
    // Every `gemini` message's last token figures, by id (in first-seen order), whatever later
    // dropped it: its time, model and `tokens`.
    let mut tokens: HashMap<String, (Option<i64>, Option<String>, Value)> = HashMap::new();
    let mut token_order: Vec<String> = Vec::new();
    let mut summary: Option<String> = None;
    let mut take_meta = |s: &mut ParsedSession, m: &Value| {
        let ms = |k: &str| m.get(k).and_then(Value::as_str);
        if let Some(id) = ms("sessionId").filter(|i| !i.is_empty()) {
            s.id = id.to_owned();
        }
        if let Some(h) = ms("projectHash") {
            meta.project_hash = Some(h.to_owned());
        }
        if let Some(d) = m.get("directories").and_then(Value::as_array) {
            meta.directories = d.iter().filter_map(Value::as_str).map(str::to_owned).collect();
        }
        if let Some(t) = ms("summary") {
            summary = Some(t.to_owned());
        }
        s.created_at = s.created_at.or(timestamp_ms(m.get("startTime")));
        if let Some(at) = timestamp_ms(m.get("lastUpdated")) {
            s.updated_at = Some(s.updated_at.map_or(at, |u| u.max(at)));
        }
    };
    let mut put = |order: &mut Vec<String>, slots: &mut HashMap<String, Slot>, m: &Value, checkpoint: bool| {
        let Some(id) = m.get("id").and_then(Value::as_str) else { return };
        if m.get("type").and_then(Value::as_str) == Some("gemini")
            && let Some(t) = m.get("tokens").filter(|t| t.is_object())
        {
            let model = m.get("model").and_then(Value::as_str).map(str::to_owned);
            if tokens.insert(id.to_owned(), (timestamp_ms(m.get("timestamp")), model, t.clone())).is_none() {
                token_order.push(id.to_owned());
            }
        }
        match slots.get_mut(id) {
            // A checkpoint repeats what is already here (its tool output possibly masked since).
            Some(_) if checkpoint => {}
            Some(slot) => slot.record = m.clone(),
            None => {
                order.push(id.to_owned());
                slots.insert(id.to_owned(), Slot { record: m.clone(), injected: checkpoint });
            }
        }
    };
    if whole_json {
        match serde_json::from_str::<Value>(text) {
            Ok(v) => {
                take_meta(&mut s, &v);
                for m in v.get("messages").and_then(Value::as_array).into_iter().flatten() {
                    put(&mut order, &mut slots, m, false);
                }
            }
            // Rewritten whole on each change: a torn read is retried when the file changes again.
            Err(_) => s.problems.add("bad_json"),
        }
    } else {
        let mut lines = super::text::json_lines(text);
        for v in lines.by_ref() {
            if let Some(to) = v.get("$rewindTo").and_then(Value::as_str) {
                s.problems.add("note:rewind");
                match order.iter().position(|id| id == to) {
                    Some(i) => order.drain(i..).for_each(|id| drop(slots.remove(&id))),
                    None => {
                        order.clear();
                        slots.clear();
                    }
                }
            } else if v.get("id").and_then(Value::as_str).is_some() {
                put(&mut order, &mut slots, &v, false);
            } else if let Some(set) = v.get("$set").filter(|x| x.is_object()) {
                if let Some(ms) = set.get("messages").and_then(Value::as_array) {
                    s.problems.add("note:compaction");
                    for m in ms {
                        put(&mut order, &mut slots, m, true);
                    }
                }
                take_meta(&mut s, set);
            } else if v.get("sessionId").and_then(Value::as_str).is_some() {
                take_meta(&mut s, &v);
                // A legacy record written on one line.
                for m in v.get("messages").and_then(Value::as_array).into_iter().flatten() {
                    put(&mut order, &mut slots, m, false);
                }
            } else {
                s.problems.add("note:unknown_record");
            }
        }
        s.problems.add_n("bad_json", lines.bad);
    }
    for id in &order {
        let slot = &slots[id];
        let before = s.messages.len();
        read_message(&mut s, &slot.record, slot.injected);
        let at = timestamp_ms(slot.record.get("timestamp"));
        for m in &mut s.messages[before..] {
            m.created_at = m.created_at.or(at);
            m.external_id = m.external_id.take().or_else(|| Some(id.clone()));
        }
        if let Some(at) = at {
            s.created_at = Some(s.created_at.map_or(at, |c| c.min(at)));
            s.updated_at = Some(s.updated_at.map_or(at, |u| u.max(at)));
        }
    }
    if !tokens.is_empty() {
        let mut t = ChatTokens::default();
        for id in &token_order {
            let (at, model, u) = &tokens[id];
            let (input, output) = input_output(u);
            t.input += input;
            t.output += output;
            // `input` holds the cached part (promptTokenCount): split off, priced apart.
            let cached = u.get("cached").and_then(Value::as_i64).unwrap_or(0).clamp(0, input);
            s.usage.push(UsageRecord {
                key: format!("{ORIGIN}:{}:{id}", s.id),
                at: *at,
                model: model.clone(),
                input: input - cached,
                output,
                cache_read: cached,
                cache_write: 0,
            });
        }
        s.tokens = Some(t);
    }
    s.model = s.messages.iter().rev().find_map(|m| m.model.clone());
    s.title = summary.filter(|t| !t.trim().is_empty());
    finish(&mut s);
    (s, meta)
}

/// A `tokens` record's input and output as billed: the prompt (cached part included) plus the
/// tool-use prompt; the answer plus the thoughts (Gemini counts thoughts outside `output`).
pub fn input_output(u: &Value) -> (i64, i64) {
    let n = |k: &str| u.get(k).and_then(Value::as_i64).unwrap_or(0);
    (n("input") + n("tool"), n("output") + n("thoughts"))
}

/// The text parts of a `PartListUnion` (a string, a part, or a list of either).
fn parts_text(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(t)) => t.trim().to_owned(),
        Some(Value::Array(a)) => {
            a.iter().map(|p| parts_text(Some(p))).filter(|t| !t.is_empty()).collect::<Vec<_>>().join("\n\n")
        }
        Some(Value::Object(o)) => {
            o.get("text").and_then(Value::as_str).map(|t| t.trim().to_owned()).unwrap_or_default()
        }
        _ => String::new(),
    }
}

fn has_function_response(v: Option<&Value>) -> bool {
    match v {
        Some(Value::Array(a)) => a.iter().any(|p| has_function_response(Some(p))),
        Some(Value::Object(o)) => o.contains_key("functionResponse"),
        _ => false,
    }
}

fn read_message(s: &mut ParsedSession, m: &Value, injected: bool) {
    let ms = |k: &str| m.get(k).and_then(Value::as_str);
    // What the person saw (a prompt before its @file expansion) when it differs from what was sent.
    let shown = parts_text(m.get("displayContent"));
    let text = if shown.is_empty() { parts_text(m.get("content")) } else { shown };
    match ms("type").unwrap_or("") {
        "user" => {
            if text.is_empty() {
                if has_function_response(m.get("content")) {
                    s.problems.add("note:tool_result");
                }
            } else if injected || INJECTED.iter().any(|p| text.starts_with(p)) {
                s.problems.add("note:injected_text");
                s.messages.push(ParsedMessage::text(Role::System, text));
            } else {
                s.messages.push(ParsedMessage::text(Role::User, text));
            }
        }
        "gemini" => {
            let before = s.messages.len();
            for t in m.get("thoughts").and_then(Value::as_array).into_iter().flatten() {
                let subject = t.get("subject").and_then(Value::as_str).unwrap_or("").trim();
                let description = t.get("description").and_then(Value::as_str).unwrap_or("").trim();
                let thought = match (subject.is_empty(), description.is_empty()) {
                    (false, false) => format!("{subject}: {description}"),
                    (false, true) => subject.to_owned(),
                    _ => description.to_owned(),
                };
                if !thought.is_empty() {
                    s.messages.push(ParsedMessage::thinking(thought));
                }
            }
            if !text.is_empty() {
                s.messages.push(if injected {
                    s.problems.add("note:injected_text");
                    ParsedMessage::text(Role::System, text)
                } else {
                    ParsedMessage::text(Role::Assistant, text)
                });
            }
            for call in m.get("toolCalls").and_then(Value::as_array).into_iter().flatten() {
                let args = call.get("args").cloned().unwrap_or(Value::Null);
                crate::cursor::transcript::collect_paths(&args, &mut s.path_hints);
                let name = call.get("name").and_then(Value::as_str).unwrap_or("tool");
                let status = call.get("status").and_then(Value::as_str).map(|st| match st {
                    "success" => "completed".to_owned(),
                    other => other.to_owned(),
                });
                s.messages.push(ParsedMessage::tool(name, status, tool_summary(&args)));
            }
            let model = ms("model").filter(|x| !x.is_empty()).map(str::to_owned);
            for msg in &mut s.messages[before..] {
                msg.model = model.clone();
            }
        }
        "error" if !text.is_empty() => s.messages.push(ParsedMessage::error(text)),
        "info" | "warning" if !text.is_empty() => s.messages.push(ParsedMessage::text(Role::System, text)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Kind;
    use serde_json::json;

    fn gemini(id: &str, content: &str, calls: Value, tokens: Value) -> String {
        json!({"id": id, "timestamp": "2026-11-03T08:00:01.000Z", "type": "gemini", "content": content,
               "model": "gemini-2.5-pro", "thoughts": [{"subject": "Plan", "description": "read the file", "timestamp": "2026-11-03T08:00:01.000Z"}],
               "toolCalls": calls, "tokens": tokens})
        .to_string()
    }

    #[test]
    fn last_copy_wins_rewinds_drop_and_usage_counts_every_request_once() {
        let call = |status: &str| {
            json!([{"id": "c1", "name": "read_file", "args": {"file_path": "/home/u/owl/main.go"}, "status": status,
                    "timestamp": "2026-11-03T08:00:02.000Z", "result": []}])
        };
        let tok = json!({"input": 1000, "output": 50, "cached": 800, "thoughts": 20, "tool": 5, "total": 1075});
        let lines = [
            json!({"sessionId": "5f0c-owl", "projectHash": "ab", "startTime": "2026-11-03T08:00:00.000Z", "lastUpdated": "2026-11-03T08:00:00.000Z"}).to_string(),
            json!({"id": "u1", "timestamp": "2026-11-03T08:00:00.000Z", "type": "user", "content": [{"text": "why does owl crash"}]}).to_string(),
            gemini("g1", "", call("executing"), Value::Null),
            gemini("g1", "", call("success"), tok.clone()),
            json!({"id": "u2", "timestamp": "2026-11-03T08:00:03.000Z", "type": "user", "content": [{"functionResponse": {"id": "c1", "name": "read_file", "response": {"output": "package main"}}}]}).to_string(),
            gemini("g2", "A nil map in main.go.", json!([]), tok.clone()),
            json!({"id": "u3", "timestamp": "2026-11-03T08:00:04.000Z", "type": "user", "content": "never mind"}).to_string(),
            gemini("g3", "Ok.", json!([]), json!({"input": 7, "output": 1, "cached": 0, "total": 8})),
            json!({"$rewindTo": "u3"}).to_string(),
            json!({"$set": {"lastUpdated": "2026-11-03T08:00:09.000Z", "summary": "Owl crash"}}).to_string(),
            "{\"id\": \"g4\", \"type\": \"gem".to_owned(),
        ];
        let (s, meta) = parse("session-x", &lines.join("\n"), false);
        let got: Vec<_> = s.messages.iter().map(|m| (m.role, m.kind, m.text.as_str())).collect();
        assert_eq!(
            got,
            [
                (Role::User, Kind::Text, "why does owl crash"),
                (Role::Assistant, Kind::Thinking, "Plan: read the file"),
                (Role::Assistant, Kind::Tool, "/home/u/owl/main.go"),
                (Role::Assistant, Kind::Thinking, "Plan: read the file"),
                (Role::Assistant, Kind::Text, "A nil map in main.go."),
            ]
        );
        assert_eq!(s.messages[2].tool_status.as_deref(), Some("completed"), "the last copy of g1");
        assert_eq!(s.messages[4].model.as_deref(), Some("gemini-2.5-pro"));
        assert_eq!(s.id, "5f0c-owl");
        assert_eq!(s.title.as_deref(), Some("Owl crash"));
        assert_eq!(meta.project_hash.as_deref(), Some("ab"));
        assert_eq!(
            s.tokens,
            Some(ChatTokens { input: 2 * 1005 + 7, output: 2 * 70 + 1 }),
            "g1 once, g2, and the rewound g3 (it was asked)"
        );
        assert_eq!(s.problems.0.get("bad_json"), Some(&1));
        assert_eq!(s.problems.0.get("note:tool_result"), Some(&1));
    }

    #[test]
    fn a_compression_checkpoint_keeps_the_conversation_and_its_summary_is_not_the_persons() {
        let lines = [
            json!({"sessionId": "s", "projectHash": "ab"}).to_string(),
            json!({"id": "u1", "timestamp": "2026-11-03T08:00:00.000Z", "type": "user", "content": "add retries"}).to_string(),
            gemini("g1", "Added.", json!([]), json!({"input": 10, "output": 2})),
            json!({"$set": {"messages": [
                {"id": "k1", "timestamp": "2026-11-03T09:00:00.000Z", "type": "user", "content": [{"text": "<state_snapshot>retries added</state_snapshot>"}]},
                {"id": "g1", "type": "gemini", "content": "[masked]", "tokens": {"input": 10, "output": 2}}
            ]}})
            .to_string(),
        ];
        let (s, _) = parse("x", &lines.join("\n"), false);
        let got: Vec<_> =
            s.messages.iter().filter(|m| m.kind == Kind::Text).map(|m| (m.role, m.text.as_str())).collect();
        assert_eq!(
            got,
            [
                (Role::User, "add retries"),
                (Role::Assistant, "Added."),
                (Role::System, "<state_snapshot>retries added</state_snapshot>")
            ]
        );
        assert_eq!(
            s.tokens,
            Some(ChatTokens { input: 10, output: 2 }),
            "the checkpoint's copy is not a second request"
        );
    }

    #[test]
    fn a_pre_039_whole_json_record_reads_the_same() {
        let record = json!({"sessionId": "old", "projectHash": "ab", "startTime": "2026-01-03T08:00:00.000Z",
            "lastUpdated": "2026-01-03T08:01:00.000Z", "messages": [
            {"id": "u1", "timestamp": "2026-01-03T08:00:00.000Z", "type": "user", "content": "hello owl"},
            {"id": "g1", "timestamp": "2026-01-03T08:00:01.000Z", "type": "gemini", "content": "Hello.", "model": "gemini-2.5-flash",
             "tokens": {"input": 3, "output": 2, "cached": 0, "thoughts": 0, "tool": 0, "total": 5}}]});
        let (s, _) = parse("session-old", &serde_json::to_string_pretty(&record).unwrap(), true);
        assert_eq!(s.id, "old");
        assert_eq!(s.format, "gemini-json");
        assert_eq!(s.messages.len(), 2);
        assert_eq!(s.tokens, Some(ChatTokens { input: 3, output: 2 }));
        assert!(!s.problems.0.contains_key("bad_json"), "a pretty-printed record is not bad lines");
    }
}
