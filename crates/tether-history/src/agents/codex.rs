//! Codex CLI's chats: `<CODEX_HOME>/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl` (and
//! `archived_sessions/`), one `{timestamp, type, payload}` line per record (reference:
//! `agent-formats.md` §2).
//!
//! - `session_meta`: the thread id and `cwd` (the project). `turn_context`: the model from then on.
//! - `response_item` is what is read: messages, `reasoning` summaries (thinking), function and
//!   custom tool calls (their outputs mark the call's status). The same prompts and answers are
//!   also written as `event_msg`s (`user_message`, `agent_message`, `agent_reasoning`): those are
//!   not read, so each message appears once. A `compacted` record's replacement history repeats
//!   earlier prompts: counted (`note:compaction`), never replayed.
//! - The first user-role items are context Codex injected (`<environment_context>`, AGENTS.md
//!   instructions, `<user_instructions>`) and developer-role items are its own instructions:
//!   system text, never the person's words nor the title.
//! - Usage: `event_msg` `token_count` with `info` (the first has none); a per-request figure is
//!   `last_token_usage`, taken only when `total_token_usage` moved (a repeated event adds nothing).
//!   Cached input is part of input, reasoning part of output (OpenAI's semantics).
//! - Unparsable lines are skipped and counted (`bad_json`).

use std::collections::HashMap;
use std::path::Path;

use serde_json::Value;

use crate::cursor::composer::{finish, tool_summary};
use crate::cursor::value::timestamp_ms;
use crate::model::{ChatTokens, ParsedMessage, ParsedSession, ProjectVia, Role, UsageRecord};

pub const ORIGIN: &str = "codex";

/// Prefixes of user-role items Codex injected as context.
const CONTEXT: &[&str] = &["<environment_context>", "# AGENTS.md instructions", "<user_instructions>", "<permissions"];

/// Read a rollout file.
pub fn read(path: &Path) -> crate::error::Result<ParsedSession> {
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    Ok(parse(&stem, &super::text::read_text(path)?))
}

/// Parse a rollout's text; `fallback_id` (the file name) names it when no `session_meta` does.
pub fn parse(fallback_id: &str, text: &str) -> ParsedSession {
    let mut s = ParsedSession::new(fallback_id, ORIGIN, "codex-rollout");
    let mut model: Option<String> = None;
    let mut calls: HashMap<String, usize> = HashMap::new();
    let mut last_total: Option<i64> = None;
    let mut lines = super::text::json_lines(text);
    for v in lines.by_ref() {
        let at = timestamp_ms(v.get("timestamp"));
        let p = v.get("payload").unwrap_or(&Value::Null);
        let ps = |k: &str| p.get(k).and_then(Value::as_str);
        let before = s.messages.len();
        match v.get("type").and_then(Value::as_str).unwrap_or("") {
            "session_meta" => {
                if let Some(id) = ps("id").filter(|i| !i.is_empty()) {
                    s.id = id.to_owned();
                }
                if let Some(cwd) = ps("cwd") {
                    s.set_project(Some(cwd.to_owned()), ProjectVia::Cwd);
                    s.path_hints.push(cwd.to_owned());
                }
                s.created_at = s.created_at.or(timestamp_ms(p.get("timestamp"))).or(at);
            }
            "turn_context" => {
                if let Some(m) = ps("model").filter(|m| !m.is_empty()) {
                    model = Some(m.to_owned());
                }
            }
            "response_item" => read_item(&mut s, p, &mut calls),
            "event_msg" if ps("type") == Some("token_count") => {
                let Some(info) = p.get("info").filter(|i| !i.is_null()) else { continue };
                let n = |u: Option<&Value>, k: &str| u.and_then(|u| u.get(k)).and_then(Value::as_i64).unwrap_or(0);
                let total = n(info.get("total_token_usage"), "total_tokens");
                if last_total == Some(total) {
                    continue;
                }
                last_total = Some(total);
                let last = info.get("last_token_usage");
                let t = s.tokens.get_or_insert_with(ChatTokens::default);
                t.input += n(last, "input_tokens");
                t.output += n(last, "output_tokens");
                // Cached input is part of input (OpenAI's semantics): split off, priced apart.
                let cached = n(last, "cached_input_tokens").min(n(last, "input_tokens"));
                // The event's own time and running total name the turn: a rollout that replays
                // another's lines (a fork, a sub-agent's copied prefix) repeats both.
                let when = v.get("timestamp").and_then(Value::as_str).unwrap_or("");
                s.usage.push(UsageRecord {
                    key: format!("{ORIGIN}:{when}:{total}"),
                    at,
                    model: model.clone(),
                    input: n(last, "input_tokens") - cached,
                    output: n(last, "output_tokens"),
                    cache_read: cached,
                    cache_write: 0,
                });
            }
            "compacted" => s.problems.add("note:compaction"),
            _ => {}
        }
        for m in &mut s.messages[before..] {
            m.created_at = m.created_at.or(at);
            if m.role == Role::Assistant {
                m.model = m.model.take().or_else(|| model.clone());
            }
        }
        if let Some(at) = at {
            s.updated_at = Some(s.updated_at.map_or(at, |u| u.max(at)));
        }
    }
    s.problems.add_n("bad_json", lines.bad);
    s.model = model;
    finish(&mut s);
    s
}

fn read_item(s: &mut ParsedSession, p: &Value, calls: &mut HashMap<String, usize>) {
    let ps = |k: &str| p.get(k).and_then(Value::as_str);
    match ps("type").unwrap_or("") {
        "message" => {
            let text: Vec<&str> = p
                .get("content")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|c| c.get("text").and_then(Value::as_str))
                .map(str::trim)
                .filter(|t| !t.is_empty())
                .collect();
            let text = text.join("\n\n");
            if text.is_empty() {
                return;
            }
            match ps("role") {
                Some("assistant") => s.messages.push(ParsedMessage::text(Role::Assistant, text)),
                Some("user") if !CONTEXT.iter().any(|c| text.starts_with(c)) => {
                    s.messages.push(ParsedMessage::text(Role::User, text))
                }
                _ => {
                    s.problems.add("note:injected_text");
                    s.messages.push(ParsedMessage::text(Role::System, text));
                }
            }
        }
        "reasoning" => {
            let text: Vec<&str> = p
                .get("summary")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|c| c.get("text").and_then(Value::as_str))
                .collect();
            let text = text.join("\n\n");
            if !text.trim().is_empty() {
                s.messages.push(ParsedMessage::thinking(text.trim()));
            }
        }
        kind @ ("function_call" | "custom_tool_call" | "local_shell_call" | "web_search_call") => {
            let args = p.get("arguments").or_else(|| p.get("input")).or_else(|| p.get("action")).cloned();
            let args = args.unwrap_or(Value::Null);
            let mut parsed = match &args {
                Value::String(t) => serde_json::from_str(t).unwrap_or(args.clone()),
                _ => args.clone(),
            };
            // The shell tool's command is an argv array: shown as the command line it runs.
            if let Some(argv) = parsed.get("command").and_then(Value::as_array) {
                let line: Vec<&str> = argv.iter().filter_map(Value::as_str).collect();
                parsed["command"] = Value::String(line.join(" "));
            }
            crate::cursor::transcript::collect_paths(&parsed, &mut s.path_hints);
            let name = ps("name").unwrap_or(match kind {
                "local_shell_call" => "shell",
                "web_search_call" => "web_search",
                _ => "tool",
            });
            if let Some(id) = ps("call_id") {
                calls.insert(id.to_owned(), s.messages.len());
            }
            s.messages.push(ParsedMessage::tool(name, None, tool_summary(&parsed)));
        }
        "function_call_output" | "custom_tool_call_output" => {
            s.problems.add("note:tool_result");
            if let Some(&i) = ps("call_id").and_then(|id| calls.get(id))
                && let Some(m) = s.messages.get_mut(i)
            {
                m.tool_status = Some("completed".into());
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Kind;
    use serde_json::json;

    #[test]
    fn one_copy_of_each_message_context_apart_and_usage_per_request() {
        let l =
            |t: &str, p: Value| json!({"timestamp": "2026-11-02T09:00:00.000Z", "type": t, "payload": p}).to_string();
        let usage = |total: i64, input: i64, output: i64| {
            json!({"type": "token_count", "info": {"total_token_usage": {"total_tokens": total},
                   "last_token_usage": {"input_tokens": input, "cached_input_tokens": 5, "output_tokens": output, "total_tokens": input + output}}})
        };
        let text = [
            l("session_meta", json!({"id": "0199-thread", "cwd": "/home/u/heron", "git": {"branch": "dev"}})),
            l("turn_context", json!({"model": "gpt-5-codex"})),
            l(
                "response_item",
                json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "<environment_context>\n<cwd>/home/u/heron</cwd>\n</environment_context>"}]}),
            ),
            l(
                "response_item",
                json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "rename the heron module"}]}),
            ),
            l("event_msg", json!({"type": "user_message", "message": "rename the heron module"})),
            l("event_msg", json!({"type": "token_count", "info": null})),
            l(
                "response_item",
                json!({"type": "reasoning", "summary": [{"type": "summary_text", "text": "Find the module"}]}),
            ),
            l(
                "response_item",
                json!({"type": "function_call", "name": "shell", "arguments": "{\"command\":[\"ls\"],\"workdir\":\"/home/u/heron\"}", "call_id": "c1"}),
            ),
            l("response_item", json!({"type": "function_call_output", "call_id": "c1", "output": "heron.rs"})),
            l("event_msg", usage(120, 100, 20)),
            l("event_msg", usage(120, 100, 20)),
            "not json".to_owned(),
            l(
                "response_item",
                json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Renamed it."}]}),
            ),
            l("event_msg", json!({"type": "agent_message", "message": "Renamed it."})),
            l("event_msg", usage(200, 70, 10)),
        ];
        let s = parse("rollout-x", &text.join("\n"));
        let got: Vec<_> = s.messages.iter().map(|m| (m.role, m.kind, m.text.as_str())).collect();
        assert_eq!(got[0].0, Role::System, "context is not the person's words");
        assert_eq!(
            &got[1..],
            [
                (Role::User, Kind::Text, "rename the heron module"),
                (Role::Assistant, Kind::Thinking, "Find the module"),
                (Role::Assistant, Kind::Tool, "ls"),
                (Role::Assistant, Kind::Text, "Renamed it."),
            ]
        );
        assert_eq!(s.id, "0199-thread");
        assert_eq!(s.project.as_deref(), Some("/home/u/heron"));
        assert_eq!(s.model.as_deref(), Some("gpt-5-codex"));
        assert_eq!(s.messages[3].tool_status.as_deref(), Some("completed"));
        assert_eq!(s.tokens, Some(ChatTokens { input: 170, output: 30 }), "the repeated event counted once");
        assert_eq!(s.title.as_deref(), Some("rename the heron module"));
        assert_eq!(s.problems.0.get("bad_json"), Some(&1));
    }
}
