//! Cursor composer conversations: `composerData` (inline `conversation` and split
//! `fullConversationHeadersOnly` + `bubbleId:*` forms) and individual bubbles, to messages.
//!
//! Pure: takes decoded values, returns [`ParsedSession`]s and counted problems. No SQLite.

use std::collections::HashMap;

use serde_json::Value;
use serde_json::value::RawValue;

use super::lexical;
use super::uri::project_from_uri_value;
use super::value::{Decoded, decode, maybe_nested, non_empty, str_field, timestamp_ms};
use crate::model::{ParsedMessage, ParsedSession, ProjectVia, Role, Tally, truncate_chars};

/// Newest `composerData._v` / bubble `_v` we know the shape of; newer ones are read as far as
/// their shape allows and noted with their number (a note: the chat is read, the source is not
/// partial). `_v` 16 is Cursor up to 3.14, 17 is 3.15/3.16 (Jul–Aug 2026: adds `agentBackend`,
/// `conversationState`, `queueItems`, `blobEncryptionKey`, `draftTarget`; `workspaceIdentifier`
/// may have no `uri`), 18 and 19 are Sep 2026 on (the same keys this reader takes). Bubbles are
/// still `_v` 3.
pub const KNOWN_COMPOSER_V: i64 = 19;
const KNOWN_BUBBLE_V: i64 = 3;

/// Header information from `composerHeaders` (table or ItemTable) or workspace head entries.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HeaderInfo {
    pub name: Option<String>,
    pub workspace_id: Option<String>,
    pub project: Option<String>,
    pub created_at: Option<i64>,
    pub updated_at: Option<i64>,
    pub archived: bool,
    pub subagent: bool,
    pub mode: Option<String>,
}

impl HeaderInfo {
    /// From a JSON head entry (`{type:"head", composerId, name, …}`).
    pub fn from_json(v: &Value) -> Self {
        let wi = v.get("workspaceIdentifier");
        Self {
            name: non_empty(str_field(v, "name")),
            workspace_id: wi.and_then(|w| str_field(w, "id")).map(str::to_owned),
            project: wi.and_then(|w| w.get("uri")).and_then(project_from_uri_value),
            created_at: timestamp_ms(v.get("createdAt")),
            updated_at: timestamp_ms(v.get("lastUpdatedAt"))
                .or_else(|| timestamp_ms(v.get("conversationCheckpointLastUpdatedAt"))),
            archived: v.get("isArchived").and_then(Value::as_bool).unwrap_or(false),
            subagent: v.get("isSubagent").and_then(Value::as_bool).unwrap_or(false),
            mode: non_empty(str_field(v, "unifiedMode")).or_else(|| non_empty(str_field(v, "forceMode"))),
        }
    }

    /// Fill gaps in `self` from a weaker source.
    pub fn merge_from(&mut self, o: &HeaderInfo) {
        self.name = self.name.take().or_else(|| o.name.clone());
        self.workspace_id = self.workspace_id.take().or_else(|| o.workspace_id.clone());
        self.project = self.project.take().or_else(|| o.project.clone());
        self.created_at = self.created_at.or(o.created_at);
        self.updated_at = self.updated_at.max(o.updated_at);
        self.archived |= o.archived;
        self.subagent |= o.subagent;
        self.mode = self.mode.take().or_else(|| o.mode.clone());
    }
}

/// A composer's bubbles, by bubbleId, as raw cell bytes (`None` = SQL NULL).
pub type Bubbles = HashMap<String, Option<Vec<u8>>>;

/// Build a session from a decoded `composerData` value and its bubbles.
pub fn parse_composer(id: &str, data: &Value, bubbles: &Bubbles, header: Option<&HeaderInfo>) -> ParsedSession {
    parse_composer_with(
        id,
        data,
        |bid| bubbles.get(bid).map(|raw| Bubble::Decoded(std::borrow::Cow::Owned(decode_bubble(raw.as_deref())))),
        bubbles.keys().map(String::as_str),
        header,
    )
}

/// A bubble as [`parse_composer_with`] is given it: decoded, or already turned into what it adds
/// to its chat (a chat read again while Cursor streams into it: only its changed bubbles are
/// parsed again).
pub enum Bubble<'b> {
    Decoded(std::borrow::Cow<'b, Decoded>),
    Parts(&'b BubbleParts),
}

/// What one bubble adds to its chat: [`push_bubble`]'s messages, notes and tokens, for the chat's
/// default model ([`default_model`]).
#[derive(Debug, Clone, Default)]
pub struct BubbleParts {
    messages: Vec<ParsedMessage>,
    problems: crate::model::Tally,
    tokens: Option<crate::model::ChatTokens>,
}

impl BubbleParts {
    pub fn of(b: &Value, default_model: Option<&str>) -> Self {
        let mut s = ParsedSession::new(String::new(), "", "");
        push_bubble(&mut s, b, default_model);
        Self { messages: s.messages, problems: s.problems, tokens: s.tokens }
    }

    /// Adds them to `s`, as [`push_bubble`] of the bubble would have.
    fn add_to(&self, s: &mut ParsedSession) {
        s.messages.extend(self.messages.iter().cloned());
        for (reason, n) in &self.problems.0 {
            s.problems.add_n(reason, *n);
        }
        if let Some(t) = self.tokens {
            let sum = s.tokens.get_or_insert_with(Default::default);
            sum.input += t.input;
            sum.output += t.output;
        }
    }
}

/// The model a composer's assistant bubbles were answered by unless they say otherwise.
pub fn default_model(data: &Value) -> Option<String> {
    data.get("modelConfig").and_then(|m| non_empty(str_field(m, "modelName")))
}

/// [`parse_composer`] over bubbles already decoded (`bubble`: by bubbleId; `ids`: every one
/// stored, for the orphans count).
pub fn parse_composer_with<'b>(
    id: &str,
    data: &Value,
    bubble: impl Fn(&str) -> Option<Bubble<'b>>,
    ids: impl Iterator<Item = &'b str>,
    header: Option<&HeaderInfo>,
) -> ParsedSession {
    let mut s = ParsedSession::new(id, "ide", "composer");
    match (data.get("_v"), data.get("_v").and_then(Value::as_i64)) {
        (_, Some(v)) if v > KNOWN_COMPOSER_V => s.problems.add(&format!("note:newer_composer_version_{v}")),
        (Some(_), None) => s.problems.add("note:unknown_composer_version"),
        _ => {}
    }
    s.title = non_empty(str_field(data, "name"));
    s.mode = non_empty(str_field(data, "unifiedMode")).or_else(|| non_empty(str_field(data, "forceMode")));
    s.model = default_model(data);
    s.created_at = timestamp_ms(data.get("createdAt"));
    s.updated_at = timestamp_ms(data.get("lastUpdatedAt"))
        .or_else(|| timestamp_ms(data.get("conversationCheckpointLastUpdatedAt")));
    s.archived = data.get("isArchived").and_then(Value::as_bool).unwrap_or(false);
    if let Some(wi) = data.get("workspaceIdentifier") {
        s.workspace_id = str_field(wi, "id").map(str::to_owned);
        s.set_project(wi.get("uri").and_then(project_from_uri_value), ProjectVia::Identifier);
    }
    if let Some(u) = data.get("workspaceUri") {
        s.set_project(project_from_uri_value(u), ProjectVia::Identifier);
    }

    let default_model = s.model.clone();
    if let Some(conv) = data.get("conversation").and_then(Value::as_array).filter(|c| !c.is_empty()) {
        s.format = "composer-inline";
        for b in conv {
            push_bubble(&mut s, b, default_model.as_deref());
        }
    } else if let Some(headers) = data.get("fullConversationHeadersOnly").and_then(Value::as_array) {
        let map = data.get("conversationMap").and_then(Value::as_object);
        for h in headers {
            let Some(bid) = str_field(h, "bubbleId") else {
                s.problems.add("bad_header");
                continue;
            };
            match bubble(bid) {
                Some(Bubble::Parts(p)) => p.add_to(&mut s),
                Some(Bubble::Decoded(decoded)) => match decoded.as_ref() {
                    Decoded::Json(b) => push_bubble(&mut s, b, default_model.as_deref()),
                    Decoded::Null => s.problems.add("null_value"),
                    Decoded::Bad => s.problems.add("bad_json"),
                },
                None => match map.and_then(|m| m.get(bid)) {
                    Some(b) => push_bubble(&mut s, b, default_model.as_deref()),
                    None => s.problems.add("missing_bubble"),
                },
            }
        }
        let referenced: std::collections::HashSet<&str> =
            headers.iter().filter_map(|h| str_field(h, "bubbleId")).collect();
        let orphans = ids.filter(|k| !referenced.contains(k)).count();
        s.problems.add_n("note:orphan_bubble", orphans as u64);
    }

    if let Some(h) = header {
        s.title = s.title.take().or_else(|| h.name.clone());
        s.created_at = s.created_at.or(h.created_at);
        s.updated_at = s.updated_at.max(h.updated_at);
        s.archived |= h.archived;
        s.mode = s.mode.take().or_else(|| h.mode.clone());
        s.workspace_id = s.workspace_id.take().or_else(|| h.workspace_id.clone());
        s.set_project(h.project.clone(), ProjectVia::Identifier);
    }
    finish(&mut s);
    s
}

// The fields of a bubble [`push_bubble`] reads, borrowed from the cell's bytes: everything else a
// bubble carries (code blocks, context, tool results — most of its bytes) is skipped unbuilt. One
// list gives both the struct serde fills and the keys `decode_bubble` puts back.
macro_rules! bubble_fields {
    ($($field:ident: $key:literal),* $(,)?) => {
        #[derive(serde::Deserialize)]
        struct BubbleFields<'a> {
            $(#[serde(rename = $key, borrow)] $field: Option<&'a RawValue>,)*
        }

        impl<'a> BubbleFields<'a> {
            /// The fields present, by Cursor's key.
            fn present(&self) -> impl Iterator<Item = (&'static str, &'a RawValue)> {
                [$(($key, self.$field)),*].into_iter().filter_map(|(k, v)| Some((k, v?)))
            }
        }
    };
}

bubble_fields! {
    ty: "type",
    version: "_v",
    created_at: "createdAt",
    timing_info: "timingInfo",
    timestamp: "timestamp",
    model_info: "modelInfo",
    model_type: "modelType",
    bubble_id: "bubbleId",
    id: "id",
    thinking: "thinking",
    text: "text",
    rich_text: "richText",
    init_text: "initText",
    delegate: "delegate",
    tool: "toolFormerData",
    token_count: "tokenCount",
    tool_results: "toolResults",
    content_blob_ids: "contentBlobIds",
}

/// Fields whose presence is all [`push_bubble`] reads: their values (tool output, often most of
/// a bubble's bytes) are not built.
const PRESENCE_ONLY: &[&str] = &["toolResults", "contentBlobIds"];

/// A split-form bubble cell, decoded to just the fields a message is made of. Anything the typed
/// read cannot take (not an object, a duplicated key, bytes that are not UTF-8) goes through the
/// general [`decode`], so damage is counted exactly as before.
pub(crate) fn decode_bubble(raw: Option<&[u8]>) -> Decoded {
    let Some(bytes) = raw else { return Decoded::Null };
    let Ok(f) = serde_json::from_slice::<BubbleFields<'_>>(bytes) else { return decode(raw) };
    let mut map = serde_json::Map::new();
    for (k, v) in f.present() {
        if PRESENCE_ONLY.contains(&k) {
            map.insert(k.to_owned(), Value::Bool(true));
            continue;
        }
        match serde_json::from_str::<Value>(v.get()) {
            Ok(v) => {
                map.insert(k.to_owned(), v);
            }
            Err(_) => return decode(raw),
        }
    }
    Decoded::Json(Value::Object(map))
}

/// Timestamps and title fallbacks once messages are known.
pub fn finish(s: &mut ParsedSession) {
    let last_msg = s.messages.iter().filter_map(|m| m.created_at).max();
    let first_msg = s.messages.iter().filter_map(|m| m.created_at).min();
    s.updated_at = s.updated_at.max(last_msg).or(s.created_at);
    s.created_at = s.created_at.or(first_msg);
    if s.model.is_none() {
        s.model = s.messages.iter().rev().find_map(|m| m.model.clone());
    }
    s.fill_title();
}

/// File paths a composer touched, for guessing its project when nothing better exists.
pub fn file_hints(data: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for key in ["codeBlockData", "originalModelLines"] {
        if let Some(o) = data.get(key).and_then(Value::as_object) {
            out.extend(o.keys().filter_map(|k| super::uri::project_from_uri(k)));
        }
    }
    if let Some(a) = data.get("newlyCreatedFiles").and_then(Value::as_array) {
        out.extend(a.iter().filter_map(|f| f.get("uri").and_then(project_from_uri_value)));
    }
    out.truncate(64);
    out
}

fn role_of(b: &Value) -> Option<Role> {
    match b.get("type") {
        Some(Value::Number(n)) => match n.as_i64()? {
            1 => Some(Role::User),
            2 => Some(Role::Assistant),
            3 => Some(Role::System),
            4 => Some(Role::Tool),
            _ => None,
        },
        Some(Value::String(s)) => match s.as_str() {
            "user" => Some(Role::User),
            "ai" | "assistant" => Some(Role::Assistant),
            "system" => Some(Role::System),
            "tool" => Some(Role::Tool),
            _ => None,
        },
        _ => None,
    }
}

/// Turn one bubble (or legacy chat bubble / inline conversation entry) into message parts.
pub fn push_bubble(s: &mut ParsedSession, b: &Value, default_model: Option<&str>) {
    if !b.is_object() {
        // Cursor 3.x keeps non-message entries in inline conversations; nothing to read in them.
        s.problems.add("note:non_object_entry");
        return;
    }
    // A type outside 1–4 (Cursor 3.x writes type 30 records among the bubbles) is read as far
    // as its shape allows: its thinking and tool calls as such, its text as system text (never
    // as the person's words). Noted, not damage: every current chat has them.
    let role = role_of(b).unwrap_or_else(|| {
        s.problems.add("note:other_bubble_type");
        Role::System
    });
    if b.get("_v").and_then(Value::as_i64).is_some_and(|v| v > KNOWN_BUBBLE_V) {
        s.problems.add("note:unknown_bubble_version");
    }
    let created_at = timestamp_ms(b.get("createdAt"))
        .or_else(|| b.get("timingInfo").and_then(|t| timestamp_ms(t.get("clientRpcSendTime"))))
        .or_else(|| timestamp_ms(b.get("timestamp")));
    let model = b
        .get("modelInfo")
        .and_then(|m| non_empty(str_field(m, "modelName")))
        .or_else(|| non_empty(str_field(b, "modelType")))
        .or_else(|| if role == Role::Assistant { default_model.map(str::to_owned) } else { None });
    let external_id = str_field(b, "bubbleId").or_else(|| str_field(b, "id")).map(str::to_owned);
    let before = s.messages.len();
    // Mostly zeros (Cursor stopped filling it in early 2026): only figures above zero count, so a
    // chat with none stays "not recorded".
    if let Some(tc) = b.get("tokenCount") {
        let n = |k: &str| tc.get(k).and_then(Value::as_i64).filter(|v| *v > 0).unwrap_or(0);
        let (input, output) = (n("inputTokens"), n("outputTokens"));
        if input + output > 0 {
            let t = s.tokens.get_or_insert_with(Default::default);
            t.input += input;
            t.output += output;
        }
    }

    if let Some(t) = thinking_text(b) {
        s.messages.push(ParsedMessage::thinking(t));
    }
    if let Some(t) = bubble_text(b) {
        s.messages.push(ParsedMessage::text(role, t));
    }
    if let Some(tool) = b.get("toolFormerData").filter(|t| t.get("name").and_then(Value::as_str).is_some()) {
        let name = str_field(tool, "name").unwrap_or_default();
        let status = non_empty(str_field(tool, "status"));
        let params = tool.get("params").or_else(|| tool.get("rawArgs"));
        s.messages.push(ParsedMessage::tool(name, status, params.map(tool_summary).unwrap_or_default()));
    }
    if s.messages.len() == before {
        // Cursor 3.x bubbles may hold only structured tool results (their call is its own bubble)
        // or only ids of `agentKv:blob:` rows (the agent's cache, not the dialogue).
        s.problems.add(if b.get("toolResults").is_some() {
            "note:tool_results_only"
        } else if b.get("contentBlobIds").is_some() {
            "note:content_blob_ids_only"
        } else {
            "note:empty_bubble"
        });
    }
    for m in &mut s.messages[before..] {
        m.created_at = created_at;
        m.external_id = external_id.clone();
        if m.role == Role::Assistant {
            m.model = model.clone();
        }
    }
}

fn thinking_text(b: &Value) -> Option<String> {
    match b.get("thinking")? {
        Value::String(t) => non_empty(Some(t)),
        v => non_empty(str_field(v, "text")),
    }
}

/// Text of a bubble: `text`, else flattened `richText`, else legacy `initText` / `delegate.a`.
pub fn bubble_text(b: &Value) -> Option<String> {
    if let Some(t) = non_empty(str_field(b, "text")) {
        return Some(t);
    }
    for key in ["richText", "initText"] {
        if let Some(t) = b.get(key).and_then(lexical::flatten) {
            return Some(t);
        }
    }
    b.get("delegate").and_then(|d| non_empty(str_field(d, "a")))
}

/// Keys worth showing from a tool call's parameters, most telling first.
const PARAM_KEYS: &[&str] = &[
    "command",
    "relativeWorkspacePath",
    "targetFile",
    "target_file",
    "filePath",
    "file_path",
    "path",
    "directoryPath",
    "query",
    "searchTerm",
    "pattern",
    "globPattern",
    "url",
];

/// A short one-line summary of tool parameters (object or JSON string).
pub fn tool_summary(params: &Value) -> String {
    let Some(obj) = maybe_nested(params) else {
        return match params {
            Value::String(s) => truncate_chars(s.trim(), 200),
            _ => String::new(),
        };
    };
    let Some(map) = obj.as_object() else {
        return truncate_chars(&obj.to_string(), 200);
    };
    let mut parts = Vec::new();
    for k in PARAM_KEYS {
        if let Some(v) = map.get(*k) {
            let v = match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            if !v.is_empty() {
                parts.push(if parts.is_empty() { v } else { format!("{k}={v}") });
            }
        }
        if parts.len() == 2 {
            break;
        }
    }
    if parts.is_empty() {
        let safe: serde_json::Map<String, Value> = map
            .iter()
            .filter(|(k, _)| !super::value::is_secret_key(k) && !k.to_ascii_lowercase().contains("token"))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        return truncate_chars(&Value::Object(safe).to_string(), 200);
    }
    truncate_chars(&parts.join(" "), 200)
}

/// Legacy "Chat" panel tabs (`workbench.panel.aichat.view.aichat.chatdata`).
pub fn parse_chat_tabs(data: &Value, problems: &mut Tally) -> Vec<ParsedSession> {
    let Some(tabs) = data.get("tabs").and_then(Value::as_array) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for tab in tabs {
        let Some(id) = str_field(tab, "tabId") else {
            problems.add("bad_chat_tab");
            continue;
        };
        let mut s = ParsedSession::new(id, "ide", "chat-tab");
        s.title = non_empty(str_field(tab, "chatTitle"));
        s.updated_at = timestamp_ms(tab.get("lastSendTime"));
        s.mode = Some("chat".into());
        for b in tab.get("bubbles").and_then(Value::as_array).into_iter().flatten() {
            push_bubble(&mut s, b, None);
        }
        finish(&mut s);
        if s.messages.is_empty() {
            problems.add("note:empty_session");
            continue;
        }
        out.push(s);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn bubbles(pairs: &[(&str, Option<&str>)]) -> Bubbles {
        pairs.iter().map(|(k, v)| ((*k).to_owned(), v.map(|s| s.as_bytes().to_vec()))).collect()
    }

    #[test]
    fn recorded_tokens_add_up_and_all_zero_reads_as_not_recorded() {
        let data = json!({"_v": 10, "fullConversationHeadersOnly": [
            {"bubbleId": "u", "type": 1}, {"bubbleId": "a", "type": 2}, {"bubbleId": "z", "type": 2}]});
        let b = bubbles(&[
            ("u", Some(r#"{"type":1,"text":"q","tokenCount":{"inputTokens":0,"outputTokens":0}}"#)),
            ("a", Some(r#"{"type":2,"text":"x","tokenCount":{"inputTokens":4469,"outputTokens":1407}}"#)),
            ("z", Some(r#"{"type":2,"text":"y","tokenCount":{"inputTokens":31,"outputTokens":0}}"#)),
        ]);
        let s = parse_composer("c", &data, &b, None);
        assert_eq!(s.tokens, Some(crate::model::ChatTokens { input: 4500, output: 1407 }));
        let zeros = bubbles(&[
            ("u", Some(r#"{"type":1,"text":"q","tokenCount":{"inputTokens":0,"outputTokens":0}}"#)),
            ("a", Some(r#"{"type":2,"text":"x","tokenCount":{"inputTokens":0,"outputTokens":0}}"#)),
        ]);
        assert_eq!(parse_composer("c", &data, &zeros, None).tokens, None, "zeros are not a figure");
    }

    #[test]
    fn split_form_follows_header_order_and_counts_damage() {
        let data = json!({"_v": 10, "name": "Fix", "createdAt": 1000, "lastUpdatedAt": 2000,
        "modelConfig": {"modelName": "gpt-x"},
        "fullConversationHeadersOnly": [
            {"bubbleId": "b2", "type": 1}, {"bubbleId": "b1", "type": 2},
            {"bubbleId": "gone", "type": 2}, {"bubbleId": "nul", "type": 2}, {"bubbleId": "bad", "type": 2}
        ]});
        let b = bubbles(&[
            ("b1", Some(r#"{"type":2,"text":"answer","createdAt":"2025-10-31T14:39:16.989Z"}"#)),
            ("b2", Some(r#"{"type":1,"text":"question"}"#)),
            ("nul", None),
            ("bad", Some(r#"{"type":2,"te"#)),
            ("orphan", Some(r#"{"type":2,"text":"never shown"}"#)),
        ]);
        let s = parse_composer("c1", &data, &b, None);
        let texts: Vec<_> = s.messages.iter().map(|m| m.text.as_str()).collect();
        assert_eq!(texts, ["question", "answer"], "order comes from headers, not keys");
        assert_eq!(s.messages[1].model.as_deref(), Some("gpt-x"));
        for r in ["missing_bubble", "null_value", "bad_json", "note:orphan_bubble"] {
            assert_eq!(s.problems.0.get(r), Some(&1), "{r} counted once");
        }
        assert_eq!(s.updated_at, Some(1_761_921_556_989), "newest message time wins over lastUpdatedAt");
    }

    #[test]
    fn the_typed_bubble_read_gives_what_the_general_one_gives() {
        let cells: &[&[u8]] = &[
            br#"{"type":2,"text":"answer","codeBlocks":[{"x":1}],"createdAt":"2025-10-31T14:39:16.989Z","modelInfo":{"modelName":"m"}}"#,
            br#"{"type":"user","delegate":{"a":"old"},"timingInfo":{"clientRpcSendTime":1731818231743}}"#,
            br#"{"type":2,"text":"","thinking":{"text":"hm"},"toolFormerData":{"name":"grep","params":"{\"query\":\"q\"}"}}"#,
            br#"{"type":1,"text":"a","text":"b"}"#,
            br#"{"type":1,"richText":"{\"root\":{\"children\":[{\"text\":\"rich\"}]}}"}"#,
            br#"[1,2]"#,
            br#"null"#,
            br#"{"type":2,"te"#,
            b"\xff\xfe",
        ];
        for cell in cells {
            let (typed, general) = (decode_bubble(Some(cell)), decode(Some(cell)));
            let msgs = |d: Decoded| match d {
                Decoded::Json(b) => {
                    let mut s = ParsedSession::new("c", "ide", "composer");
                    push_bubble(&mut s, &b, Some("default"));
                    format!("{:?} {:?}", s.messages, s.problems)
                }
                Decoded::Null => "null".into(),
                Decoded::Bad => "bad".into(),
            };
            assert_eq!(msgs(typed), msgs(general), "{}", String::from_utf8_lossy(cell));
        }
    }

    #[test]
    fn tool_and_thinking_bubbles_become_typed_parts() {
        let data = json!({"_v": 3, "fullConversationHeadersOnly": [{"bubbleId": "t", "type": 2}, {"bubbleId": "k", "type": 2}, {"bubbleId": "x", "type": 2}]});
        let b = bubbles(&[
            (
                "t",
                Some(
                    r#"{"type":2,"text":"","capabilityType":15,"toolFormerData":{"name":"run_terminal_cmd","status":"completed","params":"{\"command\":\"npm test\",\"requireUserApproval\":true}"}}"#,
                ),
            ),
            ("k", Some(r#"{"type":2,"text":"","capabilityType":30,"thinking":{"text":"**Planning**"}}"#)),
            ("x", Some(r#"{"type":2,"text":"","toolFormerData":{"additionalData":{"status":"success"}}}"#)),
        ]);
        let s = parse_composer("c", &data, &b, None);
        assert_eq!(s.messages.len(), 2, "toolFormerData without a name is not a tool call");
        assert_eq!(s.messages[0].tool_name.as_deref(), Some("run_terminal_cmd"));
        assert_eq!(s.messages[0].text, "npm test");
        assert_eq!(s.messages[1].kind, crate::model::Kind::Thinking);
    }

    #[test]
    fn params_as_object_or_string_and_unknown_versions() {
        assert_eq!(tool_summary(&json!({"relativeWorkspacePath": "src/a.rs", "x": 1})), "src/a.rs");
        assert_eq!(tool_summary(&json!("{\"query\":\"foo\"}")), "foo");
        assert_eq!(tool_summary(&json!("plain words")), "plain words");
        let secretive = tool_summary(&json!({"blobEncryptionKey": "k", "apiToken": "t", "n": 1}));
        assert_eq!(secretive, "{\"n\":1}");
        let s =
            parse_composer("c", &json!({"_v": 99, "conversation": [{"type": 1, "text": "hi"}]}), &Bubbles::new(), None);
        assert_eq!(s.format, "composer-inline");
        assert!(s.problems.0.contains_key("note:newer_composer_version_99"));
        assert_eq!(s.title.as_deref(), Some("hi"), "untitled chats take their first prompt");
    }

    #[test]
    fn todays_composers_read_whole_with_no_damage() {
        // A Cursor 3.15/3.16 row (`_v` 17) and a Sep 2026 one (18), with what they now carry: a
        // type-30 record among the bubbles, a bubble of structured tool results only, one of
        // agentKv blob ids only, an inline entry that is not an object.
        for v in [17, 18, 19] {
            let data = json!({"_v": v, "agentBackend": "cursor-agent", "conversationState": "~", "queueItems": [],
                "blobEncryptionKey": "k", "workspaceIdentifier": {"id": "empty-window"},
                "fullConversationHeadersOnly": [
                    {"bubbleId": "u", "type": 1}, {"bubbleId": "r", "type": 30}, {"bubbleId": "a", "type": 2},
                    {"bubbleId": "t", "type": 2}, {"bubbleId": "k", "type": 2}]});
            let b = bubbles(&[
                ("u", Some(r#"{"_v":3,"type":1,"text":"ship it"}"#)),
                ("r", Some(r#"{"_v":3,"type":30,"text":""}"#)),
                ("a", Some(r#"{"_v":3,"type":2,"text":"shipped","thinking":{"text":"hm"}}"#)),
                ("t", Some(r#"{"_v":3,"type":2,"text":"","toolResults":[{"toolCallId":"c","result":{"ok":true}}]}"#)),
                ("k", Some(r#"{"_v":3,"type":2,"contentBlobIds":["agentKv:blob:00"]}"#)),
            ]);
            let s = parse_composer("c", &data, &b, None);
            let texts: Vec<_> = s.messages.iter().map(|m| m.text.as_str()).collect();
            assert_eq!(texts, ["ship it", "hm", "shipped"]);
            assert!(s.problems.0.keys().all(|k| k.starts_with("note:")), "v{v}: {:?}", s.problems);
            assert!(!s.problems.0.keys().any(|k| k.contains("version")), "v{v} is known: {:?}", s.problems);
            for n in ["note:other_bubble_type", "note:tool_results_only", "note:content_blob_ids_only"] {
                assert_eq!(s.problems.0.get(n), Some(&1), "v{v}: {n}");
            }
        }
        let inline =
            json!({"_v": 17, "conversation": [{"type": 1, "text": "hi"}, "x", {"type": 30, "text": "injected"}]});
        let s = parse_composer("c", &inline, &Bubbles::new(), None);
        let got: Vec<_> = s.messages.iter().map(|m| (m.role, m.text.as_str())).collect();
        assert_eq!(got, [(Role::User, "hi"), (Role::System, "injected")]);
        assert!(s.problems.0.keys().all(|k| k.starts_with("note:")), "{:?}", s.problems);
    }

    #[test]
    fn legacy_chat_tabs_with_string_types_and_delegate() {
        let data = json!({"tabs": [{"tabId": "t1", "chatTitle": "Sidebar", "lastSendTime": 1731818231743_i64,
            "bubbles": [{"type": "user", "delegate": {"a": "old text"}}, {"type": "ai", "text": "reply", "modelType": "claude-3.5-sonnet"}]},
            {"tabId": "t2", "bubbles": []}, {"nope": 1}]});
        let mut p = Tally::default();
        let out = parse_chat_tabs(&data, &mut p);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].messages[0].text, "old text");
        assert_eq!(out[0].messages[1].model.as_deref(), Some("claude-3.5-sonnet"));
        assert_eq!(p.0.get("bad_chat_tab"), Some(&1));
    }
}
