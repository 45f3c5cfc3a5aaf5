//! Other agents' chat stores, written under a [`CursorFixture`]'s home from the shapes in
//! `shared/reference/agent-formats.md`: Claude Code's `~/.claude/projects/<escaped cwd>/*.jsonl`
//! (blocks, one line per block sharing a `message.id`, usage snapshots, a 2.1 subagent, a
//! compaction, a summary, a copied line, a half-written line) and Codex CLI's
//! `~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl` (both copies of each message, token counts,
//! a compaction, a bad line) and Gemini CLI's `~/.gemini/tmp/<project>/chats/session-*.json(l)`
//! (re-appended messages, tool calls, tokens, `$set`/`$rewindTo` records, a subagent, the
//! `.project_root` marker and `projects.json`, the pre-0.39 whole-file JSON).

use std::path::PathBuf;

use serde_json::{Value, json};

use crate::CursorFixture;

/// Claude Code's escaping of a cwd into a folder name: every non-alphanumeric character is `-`.
pub fn claude_escape(cwd: &str) -> String {
    cwd.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect()
}

/// `<home>/.claude`, the default Claude Code config dir.
pub fn claude_dir(fx: &CursorFixture) -> PathBuf {
    fx.home.join(".claude")
}

/// `<home>/.codex`, the default Codex home.
pub fn codex_home(fx: &CursorFixture) -> PathBuf {
    fx.home.join(".codex")
}

/// `<home>/.gemini`, Gemini CLI's folder.
pub fn gemini_dir(fx: &CursorFixture) -> PathBuf {
    fx.home.join(".gemini")
}

/// `<home>/.gemini/tmp/<id>/chats`, where Gemini CLI records a project's chats. With `root`,
/// the `.project_root` marker (0.29 on) naming the project is written beside it.
pub fn gemini_chats(fx: &CursorFixture, id: &str, root: Option<&str>) -> PathBuf {
    let dir = gemini_dir(fx).join("tmp").join(id);
    std::fs::create_dir_all(dir.join("chats")).unwrap();
    if let Some(root) = root {
        std::fs::write(dir.join(".project_root"), root).unwrap();
    }
    dir.join("chats")
}

/// Writes `~/.gemini/projects.json`, `{"projects": {root: slug}}`.
pub fn gemini_registry(fx: &CursorFixture, projects: &[(&str, &str)]) {
    let map: serde_json::Map<String, Value> = projects.iter().map(|(r, s)| ((*r).to_owned(), json!(s))).collect();
    std::fs::create_dir_all(gemini_dir(fx)).unwrap();
    std::fs::write(gemini_dir(fx).join("projects.json"), json!({"projects": map}).to_string()).unwrap();
}

/// Writes a Gemini CLI session `session-<time>-<first 8 of id>.jsonl` in `chats`.
pub fn gemini_session(chats: &std::path::Path, id: &str, lines: &[String]) -> PathBuf {
    let path = chats.join(format!("session-2026-11-03T08-00-{}.jsonl", &id[..8]));
    write_lines(&path, lines);
    path
}

fn write_lines(path: &PathBuf, lines: &[String]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let mut text = lines.join("\n");
    text.push('\n');
    std::fs::write(path, text).unwrap();
}

/// Writes a Claude Code session file for `cwd`; returns its path.
pub fn claude_session(fx: &CursorFixture, cwd: &str, id: &str, lines: &[String]) -> PathBuf {
    let path = claude_dir(fx).join("projects").join(claude_escape(cwd)).join(format!("{id}.jsonl"));
    write_lines(&path, lines);
    path
}

/// Writes a 2.1-era subagent file of session `parent`: `<parent>/subagents/agent-<agent>.jsonl`.
pub fn claude_subagent(fx: &CursorFixture, cwd: &str, parent: &str, agent: &str, lines: &[String]) -> PathBuf {
    let path = claude_dir(fx)
        .join("projects")
        .join(claude_escape(cwd))
        .join(parent)
        .join("subagents")
        .join(format!("agent-{agent}.jsonl"));
    write_lines(&path, lines);
    path
}

/// Writes a Codex rollout dated `date` (`YYYY/MM/DD`); returns its path.
pub fn codex_rollout(fx: &CursorFixture, date: &str, id: &str, lines: &[String]) -> PathBuf {
    let stamp = date.replace('/', "-");
    let path = codex_home(fx).join("sessions").join(date).join(format!("rollout-{stamp}T09-00-00-{id}.jsonl"));
    write_lines(&path, lines);
    path
}

/// Line builders for Claude Code records.
pub mod claude {
    use super::*;

    fn base(kind: &str, uuid: &str, session: &str, cwd: &str, ts: &str) -> Value {
        json!({"type": kind, "uuid": uuid, "parentUuid": null, "sessionId": session, "timestamp": ts, "cwd": cwd,
               "gitBranch": "main", "version": "2.1.45", "isSidechain": false, "userType": "external"})
    }

    /// A typed prompt.
    pub fn prompt(uuid: &str, session: &str, cwd: &str, ts: &str, text: &str) -> String {
        let mut v = base("user", uuid, session, cwd, ts);
        v["message"] = json!({"role": "user", "content": text});
        v.to_string()
    }

    /// One block of an assistant response (`message.id` shared by the response's lines), with
    /// the usage snapshot the line carries.
    #[allow(clippy::too_many_arguments)]
    pub fn block(
        uuid: &str,
        session: &str,
        cwd: &str,
        ts: &str,
        msg_id: &str,
        model: &str,
        block: Value,
        usage: (i64, i64, i64, i64),
    ) -> String {
        let mut v = base("assistant", uuid, session, cwd, ts);
        v["requestId"] = json!(format!("req_{msg_id}"));
        let (input, cache_write, cache_read, output) = usage;
        v["message"] = json!({"id": msg_id, "type": "message", "role": "assistant", "model": model, "content": [block],
            "usage": {"input_tokens": input, "cache_creation_input_tokens": cache_write,
                      "cache_read_input_tokens": cache_read, "output_tokens": output, "service_tier": "standard"}});
        v.to_string()
    }

    /// A tool's result, as Claude Code writes it back (a `user` line).
    pub fn tool_result(uuid: &str, session: &str, cwd: &str, ts: &str, call: &str, output: &str) -> String {
        let mut v = base("user", uuid, session, cwd, ts);
        v["message"] = json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": call,
            "content": [{"type": "text", "text": output}], "is_error": false}]});
        v["toolUseResult"] = json!({"stdout": output, "stderr": "", "interrupted": false});
        v.to_string()
    }

    /// The `compact_boundary` system line and the summary Claude Code continues from.
    pub fn compaction(uuid: &str, session: &str, cwd: &str, ts: &str, summary: &str) -> [String; 2] {
        let mut b = base("system", &format!("{uuid}-b"), session, cwd, ts);
        b["subtype"] = json!("compact_boundary");
        b["compactMetadata"] = json!({"trigger": "auto", "preTokens": 150000});
        let mut s = base("user", uuid, session, cwd, ts);
        s["isCompactSummary"] = json!(true);
        s["message"] = json!({"role": "user", "content": format!("This session is being continued from a previous conversation. {summary}")});
        [b.to_string(), s.to_string()]
    }

    /// A `summary` record naming the branch ending at `leaf`.
    pub fn summary(text: &str, leaf: &str) -> String {
        json!({"type": "summary", "summary": text, "leafUuid": leaf}).to_string()
    }

    /// Marks a line as a subagent's (sidechain, with its agent id).
    pub fn sidechain(line: &str, agent: &str) -> String {
        let mut v: Value = serde_json::from_str(line).unwrap();
        v["isSidechain"] = json!(true);
        v["agentId"] = json!(agent);
        v.to_string()
    }
}

/// Line builders for Codex rollouts.
pub mod codex {
    use super::*;

    pub fn line(ts: &str, kind: &str, payload: Value) -> String {
        json!({"timestamp": ts, "type": kind, "payload": payload}).to_string()
    }

    pub fn meta(ts: &str, id: &str, cwd: &str) -> String {
        line(
            ts,
            "session_meta",
            json!({"id": id, "timestamp": ts, "cwd": cwd, "originator": "codex_cli_rs",
            "cli_version": "0.46.0", "source": "cli", "model_provider": "openai",
            "git": {"commit_hash": "abc", "branch": "main", "repository_url": null}}),
        )
    }

    pub fn turn(ts: &str, cwd: &str, model: &str) -> String {
        line(
            ts,
            "turn_context",
            json!({"cwd": cwd, "approval_policy": "on-request", "model": model, "effort": "medium"}),
        )
    }

    /// A message as both records Codex writes: the `response_item` and its `event_msg` twin.
    pub fn said(ts: &str, role: &str, text: &str) -> [String; 2] {
        let (kind, ev) = if role == "user" { ("input_text", "user_message") } else { ("output_text", "agent_message") };
        [
            line(
                ts,
                "response_item",
                json!({"type": "message", "role": role, "content": [{"type": kind, "text": text}]}),
            ),
            line(ts, "event_msg", json!({"type": ev, "message": text})),
        ]
    }

    pub fn environment(ts: &str, cwd: &str) -> String {
        line(
            ts,
            "response_item",
            json!({"type": "message", "role": "user", "content": [{"type": "input_text",
            "text": format!("<environment_context>\n  <cwd>{cwd}</cwd>\n</environment_context>")}]}),
        )
    }

    pub fn reasoning(ts: &str, text: &str) -> [String; 2] {
        [
            line(
                ts,
                "response_item",
                json!({"type": "reasoning", "summary": [{"type": "summary_text", "text": text}], "encrypted_content": "gAAA"}),
            ),
            line(ts, "event_msg", json!({"type": "agent_reasoning", "text": text})),
        ]
    }

    pub fn shell(ts: &str, call: &str, argv: &[&str], workdir: &str, output: &str) -> [String; 2] {
        let args = json!({"command": argv, "workdir": workdir}).to_string();
        [
            line(
                ts,
                "response_item",
                json!({"type": "function_call", "name": "shell", "arguments": args, "call_id": call}),
            ),
            line(ts, "response_item", json!({"type": "function_call_output", "call_id": call, "output": output})),
        ]
    }

    /// A `token_count` event; `last` = `(input, cached, output, reasoning)`, `total` the running total.
    pub fn tokens(ts: &str, last: Option<(i64, i64, i64, i64)>, total: i64) -> String {
        let info = last.map(|(i, c, o, r)| {
            json!({"total_token_usage": {"total_tokens": total},
                   "last_token_usage": {"input_tokens": i, "cached_input_tokens": c, "output_tokens": o,
                                        "reasoning_output_tokens": r, "total_tokens": i + o},
                   "model_context_window": 272000})
        });
        line(ts, "event_msg", json!({"type": "token_count", "info": info, "rate_limits": null}))
    }

    /// A compaction: its summary and a replacement history repeating an earlier prompt.
    pub fn compacted(ts: &str, summary: &str, repeated_prompt: &str) -> String {
        line(
            ts,
            "compacted",
            json!({"message": summary, "replacement_history": [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": repeated_prompt}]}]}),
        )
    }
}

/// Record builders for Gemini CLI sessions (`chatRecordingTypes.ts`, 0.56).
pub mod gemini {
    use super::*;

    /// sha256 of a project root: the `projectHash` every record carries (the folder name before 0.29).
    pub fn project_hash(root: &str) -> String {
        use sha2::Digest;
        sha2::Sha256::digest(root.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
    }

    /// The metadata line a session file starts with.
    pub fn meta(id: &str, root: &str, ts: &str) -> String {
        json!({"sessionId": id, "projectHash": project_hash(root), "startTime": ts, "lastUpdated": ts}).to_string()
    }

    /// A person's prompt.
    pub fn user(id: &str, ts: &str, text: &str) -> Value {
        json!({"id": id, "timestamp": ts, "type": "user", "content": [{"text": text}]})
    }

    /// Tool output recorded as a user message (0.44 on): only `functionResponse` parts.
    pub fn tool_response(id: &str, ts: &str, call: &str, name: &str, output: &str) -> Value {
        json!({"id": id, "timestamp": ts, "type": "user",
               "content": [{"functionResponse": {"id": call, "name": name, "response": {"output": output}}}]})
    }

    /// A model message; `tokens` = `(input (cached included), output, cached, thoughts)`.
    pub fn model(
        id: &str,
        ts: &str,
        model: &str,
        text: &str,
        calls: Value,
        tokens: Option<(i64, i64, i64, i64)>,
    ) -> Value {
        let tokens = tokens.map(
            |(i, o, c, t)| json!({"input": i, "output": o, "cached": c, "thoughts": t, "tool": 0, "total": i + o + t}),
        );
        json!({"id": id, "timestamp": ts, "type": "gemini", "content": text, "model": model,
               "thoughts": [], "toolCalls": calls, "tokens": tokens})
    }

    /// A tool call as recorded on the model message.
    pub fn call(id: &str, name: &str, args: Value, status: &str) -> Value {
        json!({"id": id, "name": name, "args": args, "status": status, "timestamp": "2026-11-03T08:00:02.000Z",
               "displayName": name, "description": "", "renderOutputAsMarkdown": false})
    }
}
