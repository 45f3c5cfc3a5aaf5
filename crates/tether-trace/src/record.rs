//! Agent Trace records (v0.1, `cursor/agent-trace`): one per recorded edit, in the spec's
//! fields — the file's repository-relative path, the conversation with its contributor and
//! model, the ranges with their content hashes, the commit the repository was at. What is
//! Tether's own (its chat id, the edit's kind, a run) goes under `metadata["dev.tether"]`, as the
//! spec's extensibility section asks. Chat text is never in a record unless the caller adds an
//! excerpt (`--with-excerpts`).

use serde::Serialize;
use serde_json::{Value, json};

use crate::capture::Range;
use crate::store::{Edit, EditKind};

/// The version written. The spec's prose says "0.1.0", but its schema's `version` pattern is
/// `^[0-9]+\.[0-9]+$`, which "0.1.0" fails; records must validate, so the schema wins.
pub const VERSION: &str = "0.1";
pub const MIME: &str = "application/vnd.agent-trace.record+json";

#[derive(Debug, Clone, Serialize)]
pub struct TraceRecord {
    pub version: &'static str,
    pub id: String,
    pub timestamp: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vcs: Option<Vcs>,
    pub tool: Tool,
    pub files: Vec<File>,
    pub metadata: Value,
}

#[derive(Debug, Clone, Serialize)]
pub struct Vcs {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub revision: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Tool {
    pub name: &'static str,
    pub version: &'static str,
}

#[derive(Debug, Clone, Serialize)]
pub struct File {
    pub path: String,
    pub conversations: Vec<Conversation>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Conversation {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    pub contributor: ContributorOut,
    pub ranges: Vec<Range>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ContributorOut {
    #[serde(rename = "type")]
    pub kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_id: Option<String>,
}

/// The link a record gives for a chat: Tether's own (`tether://sessions/<id>`); Cursor's local
/// chats have no public URL.
pub fn conversation_url(conversation_id: &str) -> String {
    format!("tether://sessions/{conversation_id}")
}

/// A model named the models.dev way (`provider/model`) where the provider is evident from the
/// name Cursor gave; other names are kept as they are.
pub fn model_id(model: &str) -> String {
    if model.contains('/') {
        return model.chars().take(250).collect();
    }
    let m = model.to_ascii_lowercase();
    let provider = [
        ("claude", "anthropic"),
        ("gpt-", "openai"),
        ("o1", "openai"),
        ("o3", "openai"),
        ("o4", "openai"),
        ("gemini", "google"),
        ("grok", "xai"),
    ]
    .iter()
    .find(|(p, _)| m.starts_with(p))
    .map(|(_, v)| *v);
    let id = match provider {
        Some(p) => format!("{p}/{model}"),
        None => model.to_owned(),
    };
    id.chars().take(250).collect()
}

/// A stable UUID-shaped id for an edit's record, so exporting twice gives the same ids.
fn record_id(e: &Edit) -> String {
    let h = xxhash_rust::xxh3::xxh3_128(format!("tether-trace:{}:{}:{}", e.id, e.at_ms, e.path).as_bytes());
    let b = h.to_be_bytes();
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    // Version 4 and RFC 4122 variant bits, so validators that check the shape accept it.
    format!(
        "{}-{}-4{}-{:x}{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[13..16],
        (b[8] & 0x3) | 0x8,
        &hex[17..20],
        &hex[20..32]
    )
}

/// The record of one edit. `excerpt`: the conversation's words around it, only when asked.
pub fn record(e: &Edit, tool_version: &'static str, excerpt: Option<&str>) -> TraceRecord {
    let timestamp = chrono::DateTime::from_timestamp_millis(e.at_ms)
        .unwrap_or_default()
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    let mut tether = json!({"edit": e.id, "kind": e.kind.as_str()});
    if let Some(c) = &e.conversation_id {
        tether["conversation_id"] = json!(c);
    }
    if let Some(g) = &e.generation_id {
        tether["generation_id"] = json!(g);
    }
    if let Some(r) = &e.run_id {
        tether["run_id"] = json!(r);
    }
    if e.repo.is_none() {
        tether["absolute_path"] = json!(true);
    }
    if e.kind == EditKind::Tab {
        tether["tab"] = json!(true);
    }
    if let Some(x) = excerpt {
        tether["excerpt"] = json!(x);
    }
    TraceRecord {
        version: VERSION,
        id: record_id(e),
        timestamp,
        vcs: e.head.as_ref().filter(|_| e.repo.is_some()).map(|h| Vcs { kind: "git", revision: h.clone() }),
        tool: Tool { name: "tether", version: tool_version },
        files: vec![File {
            path: e.path.clone(),
            conversations: vec![Conversation {
                url: e.conversation_id.as_deref().map(conversation_url),
                contributor: ContributorOut { kind: "ai", model_id: e.model.as_deref().map(model_id) },
                ranges: e.ranges.clone(),
            }],
        }],
        metadata: json!({"dev.tether": tether}),
    }
}

/// Records as JSON lines, one record a line, each line ended: the export's one encoding (the
/// HTTP route and the CLI both answer with it).
pub fn to_jsonl(records: &[TraceRecord]) -> serde_json::Result<String> {
    let mut out = String::new();
    for r in records {
        out.push_str(&serde_json::to_string(r)?);
        out.push('\n');
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_has_the_spec_fields_and_a_stable_uuid() {
        let e = Edit {
            id: 3,
            at_ms: 1_767_225_600_000,
            kind: EditKind::Agent,
            conversation_id: Some("c1".into()),
            generation_id: None,
            model: Some("claude-4.5-sonnet".into()),
            run_id: None,
            repo: Some("/r".into()),
            head: Some("a".repeat(40)),
            path: "src/x.rs".into(),
            ranges: vec![Range { start_line: 2, end_line: 4, content_hash: "sha256:00".into() }],
            lines: 3,
        };
        let r = serde_json::to_value(record(&e, "0.1.0", None)).unwrap();
        assert_eq!(r["version"], "0.1");
        assert_eq!(r["timestamp"], "2026-01-01T00:00:00.000Z");
        assert_eq!(r["vcs"], json!({"type": "git", "revision": "a".repeat(40)}));
        let conv = &r["files"][0]["conversations"][0];
        assert_eq!(conv["contributor"], json!({"type": "ai", "model_id": "anthropic/claude-4.5-sonnet"}));
        assert_eq!(conv["url"], "tether://sessions/c1");
        assert_eq!(conv["ranges"][0]["start_line"], 2);
        let id = r["id"].as_str().unwrap();
        assert_eq!(id.len(), 36);
        assert_eq!(&id[14..15], "4");
        assert!(matches!(&id[19..20], "8" | "9" | "a" | "b"));
        assert_eq!(id, record(&e, "0.1.0", None).id);
        let lines = to_jsonl(&[record(&e, "0.1.0", None), record(&e, "0.1.0", Some("why"))]).unwrap();
        assert!(lines.ends_with('\n'));
        let parsed: Vec<Value> = lines.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(parsed.len(), 2, "one record a line");
        assert_eq!(parsed[0], r);
        assert!(r["metadata"]["dev.tether"].get("excerpt").is_none());
    }
}
