//! The Cursor CLI's `--output-format stream-json` (one JSON object per line) turned into typed
//! run events. Every line becomes an event: lines that are not JSON, not UTF-8, or of a type we do
//! not know become `raw` events with their text, never an error and never dropped.
//!
//! Pure parsing: no I/O, no processes. Shapes follow `cursor-agents-2026.md` §2.4.

use serde_json::{Map, Value, json};
use tether_board::runs::event::{MAX_FIELD_CHARS, MAX_RESULT_CHARS, RunEvent, Usage};

/// Reads one run's stdout line by line. With `partial_output` (the run passed
/// `--stream-partial-output`) assistant lines with a timestamp are deltas, and the consolidated
/// echo that follows them (no timestamp) is dropped, so text is never counted twice.
#[derive(Debug, Default)]
pub struct StreamParser {
    pub partial_output: bool,
}

impl StreamParser {
    pub fn new(partial_output: bool) -> Self {
        Self { partial_output }
    }

    /// The event for one line (without its newline); `None` only for blank lines and the
    /// consolidated echo of partial output.
    pub fn parse(&mut self, line: &[u8]) -> Option<RunEvent> {
        let text = String::from_utf8_lossy(line);
        let trimmed = text.trim_end_matches('\r');
        if trimmed.trim().is_empty() {
            return None;
        }
        if std::str::from_utf8(line).is_err() {
            return Some(raw(trimmed, "not UTF-8"));
        }
        // Some wrappers prefix each line with its stream's name.
        let body = trimmed.strip_prefix("stdout:").map(str::trim_start).unwrap_or(trimmed);
        let Ok(Value::Object(v)) = serde_json::from_str::<Value>(body) else {
            return Some(raw(trimmed, "not JSON"));
        };
        self.event(&v).unwrap_or_else(|| {
            let t = v.get("type").and_then(Value::as_str).unwrap_or("?");
            Some(raw(trimmed, &format!("unknown event type {t:?}")))
        })
    }

    /// `Some(None)`: a known line with nothing to keep; `None`: not a known event.
    fn event(&mut self, v: &Map<String, Value>) -> Option<Option<RunEvent>> {
        let s = |k: &str| v.get(k).and_then(Value::as_str);
        let subtype = s("subtype").unwrap_or("");
        Some(Some(match s("type")? {
            "system" if subtype == "init" => RunEvent::Init {
                session_id: s("session_id")?.to_owned(),
                model: s("model").map(str::to_owned),
                cwd: s("cwd").map(str::to_owned),
            },
            "user" => RunEvent::User { text: message_text(v.get("message")?) },
            "assistant" => {
                let stamped = v.contains_key("timestamp_ms");
                // With partial output, deltas come first; then each segment is repeated whole (with
                // its `model_call_id`), and the turn's text once more without a timestamp.
                if self.partial_output && (!stamped || v.contains_key("model_call_id")) {
                    return Some(None);
                }
                RunEvent::Assistant { text: message_text(v.get("message")?), partial: self.partial_output && stamped }
            }
            "thinking" => RunEvent::Thinking { text: s("text").map(str::to_owned), done: subtype == "completed" },
            "tool_call" => tool_call(v, subtype)?,
            "result" => {
                let n = |k: &str| v.get(k).and_then(Value::as_i64);
                RunEvent::Result {
                    is_error: v.get("is_error").and_then(Value::as_bool).unwrap_or(subtype != "success"),
                    text: cut_at(s("result").unwrap_or(""), MAX_RESULT_CHARS),
                    duration_ms: n("duration_ms"),
                    duration_api_ms: n("duration_api_ms"),
                    usage: v.get("usage").and_then(usage),
                }
            }
            // A turn's figures (the SDK's `usage` message), nested or at the top level.
            "usage" => RunEvent::Usage { usage: usage(v.get("usage").unwrap_or(&Value::Object(v.clone())))? },
            "connection" | "retry" => {
                let attempt =
                    v.get("attempt").and_then(Value::as_i64).map(|a| format!(" (attempt {a})")).unwrap_or_default();
                RunEvent::Notice { text: format!("{} {subtype}{attempt}", s("type").unwrap_or_default()) }
            }
            _ => return None,
        }))
    }
}

fn raw(text: &str, reason: &str) -> RunEvent {
    RunEvent::Raw { text: cut(text), reason: reason.to_owned() }
}

/// `message.content[]` text parts, joined.
fn message_text(m: &Value) -> String {
    match m.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts.iter().filter_map(|p| p.get("text").and_then(Value::as_str)).collect(),
        _ => String::new(),
    }
}

fn tool_call(v: &Map<String, Value>, subtype: &str) -> Option<RunEvent> {
    let call = v.get("tool_call")?.as_object()?;
    // The kind is the key named `<kind>ToolCall` (or the generic `function`); beside it sit
    // bookkeeping fields (`toolCallId`, `startedAtMs`, …), in no order we may rely on.
    let (key, body) = call
        .iter()
        .find(|(k, _)| k.ends_with("ToolCall") || k.as_str() == "function")
        .or_else(|| call.iter().find(|(_, v)| v.is_object()))?;
    let tool = key.strip_suffix("ToolCall").unwrap_or(key).to_owned();
    let mut args = body.get("args").cloned().unwrap_or(Value::Null);
    if tool == "function" {
        args = body
            .get("arguments")
            .and_then(Value::as_str)
            .and_then(|a| serde_json::from_str(a).ok())
            .unwrap_or_else(|| body.get("arguments").cloned().unwrap_or(Value::Null));
    }
    let name = (tool == "function").then(|| body.get("name").and_then(Value::as_str)).flatten();
    let arg = |k: &str| args.get(k).and_then(Value::as_str).map(str::to_owned);
    let result = body.get("result").cloned().unwrap_or(Value::Null);
    let outcome = result.as_object().and_then(|r| r.keys().next().cloned());
    Some(RunEvent::ToolCall {
        call_id: v.get("call_id").and_then(Value::as_str).unwrap_or_default().to_owned(),
        tool: name.map_or(tool, str::to_owned),
        phase: if subtype.is_empty() { "started".into() } else { subtype.to_owned() },
        path: arg("path").or_else(|| arg("targetDirectory")),
        command: arg("command"),
        outcome,
        args: capped(args),
        result: capped(result),
    })
}

fn usage(u: &Value) -> Option<Usage> {
    let n = |camel: &str, snake: &str| u.get(camel).or_else(|| u.get(snake)).and_then(Value::as_i64).unwrap_or(0);
    u.is_object().then(|| Usage {
        input_tokens: n("inputTokens", "input_tokens"),
        output_tokens: n("outputTokens", "output_tokens"),
        cache_read_tokens: n("cacheReadTokens", "cache_read_tokens"),
        cache_write_tokens: n("cacheWriteTokens", "cache_write_tokens"),
    })
}

/// The value with every long string cut, so a tool call that read a whole file stays small.
fn capped(v: Value) -> Value {
    match v {
        Value::String(s) if s.chars().count() > MAX_FIELD_CHARS => json!(cut(&s)),
        Value::Array(a) => Value::Array(a.into_iter().map(capped).collect()),
        Value::Object(o) => Value::Object(o.into_iter().map(|(k, v)| (k, capped(v))).collect()),
        other => other,
    }
}

fn cut(s: &str) -> String {
    cut_at(s, MAX_FIELD_CHARS)
}

fn cut_at(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}… [{} more bytes]", &s[..i], s.len() - i),
        None => s.to_owned(),
    }
}

/// What the CLI's stderr says when it stops without a `result`, in plain words.
pub fn explain_failure(stderr: &str) -> Option<&'static str> {
    let l = stderr.to_lowercase();
    if l.contains("workspace trust required") {
        Some("the Cursor CLI does not trust this workspace (Tether passes --trust; is the CLI too old?)")
    } else if l.contains("cannot use this model") {
        Some("the Cursor CLI does not know this model; see `agent models` for the ones you can use")
    } else if l.contains("disabled the 'run everything'") {
        Some("your Cursor team disabled --force (Run Everything): run without write permissions, or ask the admin")
    } else if l.contains("usage limit") || l.contains("spend limit") || l.contains("actionrequirederror") {
        Some("Cursor usage limit reached: raise your spend limit in Cursor's dashboard, or wait")
    } else if l.contains("unknown option") {
        Some("the Cursor CLI rejected an option; it may be too old (`agent update`)")
    } else if l.contains("not logged in") || l.contains("press any key to sign in") || l.contains("authentication") {
        Some("the Cursor CLI is not logged in: run `agent login`, or store an API key with `tether cursor-key set`")
    } else {
        None
    }
}

/// A `--resume` the CLI could not honour, by the messages other integrations have seen.
pub fn is_unknown_chat_error(text: &str) -> bool {
    let l = text.to_lowercase();
    ["unknown session", "unknown chat", "session not found", "chat not found", "could not resume"]
        .iter()
        .any(|p| l.contains(p))
        || (l.contains("resume") && l.contains("not found"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(line: &str) -> Option<RunEvent> {
        StreamParser::new(false).parse(line.as_bytes())
    }

    #[test]
    fn documented_lines_become_typed_events() {
        let init = r#"{"type":"system","subtype":"init","apiKeySource":"login","cwd":"/w","session_id":"17e6","model":"Grok 4.7","permissionMode":"default"}"#;
        assert_eq!(
            parse(init),
            Some(RunEvent::Init { session_id: "17e6".into(), model: Some("Grok 4.7".into()), cwd: Some("/w".into()) })
        );
        let a = r#"{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Hi "},{"type":"text","text":"there"}]},"session_id":"s"}"#;
        assert_eq!(parse(a), Some(RunEvent::Assistant { text: "Hi there".into(), partial: false }));
        let shell = r#"{"type":"tool_call","subtype":"completed","call_id":"call-1\nfc_2","tool_call":{"startedAtMs":1,"shellToolCall":{"args":{"command":"cargo test","workingDirectory":"/w"},"result":{"rejected":{"command":"cargo test","reason":"needs --force"}}}},"session_id":"s"}"#;
        match parse(shell) {
            Some(RunEvent::ToolCall { call_id, tool, phase, command, outcome, .. }) => {
                assert_eq!((call_id.as_str(), tool.as_str(), phase.as_str()), ("call-1\nfc_2", "shell", "completed"));
                assert_eq!((command.as_deref(), outcome.as_deref()), (Some("cargo test"), Some("rejected")));
            }
            other => panic!("{other:?}"),
        }
        let f = r#"{"type":"tool_call","subtype":"started","call_id":"c","tool_call":{"function":{"name":"grep","arguments":"{\"pattern\":\"x\",\"path\":\"src\"}"}}}"#;
        assert!(
            matches!(parse(f), Some(RunEvent::ToolCall { tool, path: Some(p), .. }) if tool == "grep" && p == "src")
        );
        let r = r#"{"type":"result","subtype":"success","duration_ms":11854,"duration_api_ms":11000,"is_error":false,"result":"done","session_id":"s","usage":{"inputTokens":27341,"outputTokens":482,"cacheReadTokens":22400,"cacheWriteTokens":0}}"#;
        match parse(r) {
            Some(RunEvent::Result { is_error: false, text, duration_ms: Some(11854), usage: Some(u), .. }) => {
                assert_eq!((text.as_str(), u.input_tokens, u.cache_read_tokens), ("done", 27341, 22400));
            }
            other => panic!("{other:?}"),
        }
        for turn in [
            r#"{"type":"usage","usage":{"inputTokens":10,"outputTokens":2,"cacheReadTokens":5,"cacheWriteTokens":1}}"#,
            r#"{"type":"usage","input_tokens":10,"output_tokens":2,"cache_read_tokens":5,"cache_write_tokens":1}"#,
        ] {
            assert_eq!(
                parse(turn),
                Some(RunEvent::Usage {
                    usage: Usage { input_tokens: 10, output_tokens: 2, cache_read_tokens: 5, cache_write_tokens: 1 }
                }),
                "{turn}"
            );
        }
    }

    #[test]
    fn anything_else_is_kept_raw_never_dropped() {
        assert!(matches!(parse("  Cursor Agent v2026 "), Some(RunEvent::Raw { reason, .. }) if reason == "not JSON"));
        assert!(
            matches!(parse(r#"{"type":"telemetry"}"#), Some(RunEvent::Raw { reason, .. }) if reason.contains("telemetry"))
        );
        assert!(matches!(parse(r#"{"type":"tool_call","subtype":"started","tool_call":{"fooToolCall":{"args":{}}}}"#),
            Some(RunEvent::ToolCall { tool, .. }) if tool == "foo"));
        assert!(
            matches!(StreamParser::new(false).parse(&[0xff, 0xfe, b'A']), Some(RunEvent::Raw { reason, .. }) if reason == "not UTF-8")
        );
        assert!(
            matches!(parse(r#"stdout: {"type":"user","message":{"content":"hi"}}"#), Some(RunEvent::User { text }) if text == "hi")
        );
        assert_eq!(parse("   "), None);
        let huge = format!(
            r#"{{"type":"tool_call","subtype":"completed","call_id":"c","tool_call":{{"readToolCall":{{"args":{{"path":"a"}},"result":{{"success":{{"content":"{}"}}}}}}}}}}"#,
            "x".repeat(100_000)
        );
        let Some(RunEvent::ToolCall { result, .. }) = parse(&huge) else { panic!() };
        assert!(result.to_string().len() < MAX_FIELD_CHARS + 200);
    }

    #[test]
    fn partial_output_drops_the_consolidated_echo() {
        let mut p = StreamParser::new(true);
        let d = r#"{"type":"assistant","message":{"content":[{"type":"text","text":"He"}]},"timestamp_ms":1}"#;
        let echo = r#"{"type":"assistant","message":{"content":[{"type":"text","text":"Hello"}]}}"#;
        assert_eq!(p.parse(d.as_bytes()), Some(RunEvent::Assistant { text: "He".into(), partial: true }));
        assert_eq!(p.parse(echo.as_bytes()), None);
    }

    #[test]
    fn failures_are_said_plainly() {
        assert!(explain_failure("ActionRequiredError: You've hit your usage limit").unwrap().contains("usage limit"));
        assert!(explain_failure("⚠ Workspace Trust Required\nPass --trust").is_some());
        assert!(is_unknown_chat_error("Error: could not resume chat 123"));
        assert!(!is_unknown_chat_error("all good"));
    }
}
