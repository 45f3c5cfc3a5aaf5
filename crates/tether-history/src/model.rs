//! What the Cursor readers produce: sessions and their messages, format-independent.
//!
//! Pure data, no I/O. The indexer turns these into rows; readers never touch our store.

use std::collections::BTreeMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    User,
    Assistant,
    System,
    Tool,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::System => "system",
            Role::Tool => "tool",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Text,
    Thinking,
    Tool,
    /// An error the CLI recorded in the chat (not something anyone wrote).
    Error,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Text => "text",
            Kind::Thinking => "thinking",
            Kind::Tool => "tool",
            Kind::Error => "error",
        }
    }
}

/// One part of a conversation.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedMessage {
    pub role: Role,
    pub kind: Kind,
    /// For text and thinking the content; for a tool call its short parameters.
    pub text: String,
    pub tool_name: Option<String>,
    pub tool_status: Option<String>,
    pub model: Option<String>,
    pub created_at: Option<i64>,
    pub external_id: Option<String>,
}

impl ParsedMessage {
    pub fn text(role: Role, text: impl Into<String>) -> Self {
        Self {
            role,
            kind: Kind::Text,
            text: text.into(),
            tool_name: None,
            tool_status: None,
            model: None,
            created_at: None,
            external_id: None,
        }
    }

    pub fn thinking(text: impl Into<String>) -> Self {
        Self { kind: Kind::Thinking, ..Self::text(Role::Assistant, text) }
    }

    pub fn error(text: impl Into<String>) -> Self {
        Self { kind: Kind::Error, ..Self::text(Role::System, text) }
    }

    pub fn tool(name: impl Into<String>, status: Option<String>, params: impl Into<String>) -> Self {
        Self {
            kind: Kind::Tool,
            tool_name: Some(name.into()),
            tool_status: status,
            ..Self::text(Role::Assistant, params)
        }
    }
}

/// How a session's project path was determined, strongest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ProjectVia {
    Identifier,
    Header,
    Cwd,
    Membership,
    Heuristic,
    None,
}

impl ProjectVia {
    pub fn as_str(self) -> &'static str {
        match self {
            ProjectVia::Identifier => "identifier",
            ProjectVia::Header => "header",
            ProjectVia::Cwd => "cwd",
            ProjectVia::Membership => "membership",
            ProjectVia::Heuristic => "heuristic",
            ProjectVia::None => "none",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct ParsedSession {
    pub id: String,
    pub origin: &'static str,
    pub format: &'static str,
    pub title: Option<String>,
    pub project: Option<String>,
    pub project_via: ProjectVia,
    pub workspace_id: Option<String>,
    pub mode: Option<String>,
    pub model: Option<String>,
    pub created_at: Option<i64>,
    pub updated_at: Option<i64>,
    pub archived: bool,
    pub fingerprint: String,
    pub messages: Vec<ParsedMessage>,
    pub problems: Tally,
    /// Absolute paths the chat itself mentions (tool-call paths, working directories): where
    /// its project really is when nothing records it.
    pub path_hints: Vec<String>,
    /// Token counts the chat's store kept (summed over its bubbles); `None`: none recorded.
    pub tokens: Option<ChatTokens>,
    /// Other agents' recorded figures, one per request (Claude Code's message, Codex's turn,
    /// Gemini's model message): the usage report's `agents` rows.
    pub usage: Vec<UsageRecord>,
}

/// One request's tokens as an agent recorded them, in disjoint buckets: `input` is the input
/// not read from the cache, so each bucket is priced at its own rate.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UsageRecord {
    /// The agent's own id of the request (`claude-code:<message id>:<request id>`, …): a copy of
    /// it in a resumed or forked session is the same request, counted once.
    pub key: String,
    pub at: Option<i64>,
    pub model: Option<String>,
    pub input: i64,
    pub output: i64,
    pub cache_read: i64,
    pub cache_write: i64,
}

/// A chat's recorded tokens.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ChatTokens {
    pub input: i64,
    pub output: i64,
}

impl ParsedSession {
    pub fn new(id: impl Into<String>, origin: &'static str, format: &'static str) -> Self {
        Self {
            id: id.into(),
            origin,
            format,
            title: None,
            project: None,
            project_via: ProjectVia::None,
            workspace_id: None,
            mode: None,
            model: None,
            created_at: None,
            updated_at: None,
            archived: false,
            fingerprint: String::new(),
            messages: Vec::new(),
            problems: Tally::default(),
            path_hints: Vec::new(),
            tokens: None,
            usage: Vec::new(),
        }
    }

    /// Title to show: Cursor's name, else the start of the first user message.
    pub fn fill_title(&mut self) {
        if self.title.as_deref().is_some_and(|t| !t.trim().is_empty()) {
            return;
        }
        self.title = self
            .messages
            .iter()
            .find(|m| m.role == Role::User && m.kind == Kind::Text && !m.text.trim().is_empty())
            .map(|m| short_title(&m.text));
    }

    /// Whether anyone talked: a user or assistant message with text. A file of errors or tool
    /// noise alone is not a chat.
    pub fn is_conversation(&self) -> bool {
        self.messages.iter().any(|m| m.kind == Kind::Text && matches!(m.role, Role::User | Role::Assistant))
    }

    pub fn set_project(&mut self, project: Option<String>, via: ProjectVia) {
        if let Some(p) = project.filter(|p| !p.is_empty())
            && via < self.project_via
        {
            self.project = Some(p);
            self.project_via = via;
        }
    }
}

fn short_title(text: &str) -> String {
    let line = text.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
    truncate_chars(line, 80)
}

pub fn truncate_chars(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_owned(),
    }
}

/// Counted reasons, e.g. `{"bad_json": 2, "missing_bubble": 1}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize, ts_rs::TS)]
#[ts(export, export_to = "history.ts")]
#[serde(transparent)]
pub struct Tally(pub BTreeMap<String, u64>);

impl Tally {
    pub fn add(&mut self, reason: &str) {
        self.add_n(reason, 1);
    }

    pub fn add_n(&mut self, reason: &str, n: u64) {
        if n > 0 {
            *self.0.entry(reason.to_owned()).or_default() += n;
        }
    }

    pub fn merge(&mut self, other: &Tally) {
        for (k, v) in &other.0 {
            self.add_n(k, *v);
        }
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(&self.0).unwrap_or_else(|_| "{}".into())
    }

    pub fn from_json(s: &str) -> Self {
        serde_json::from_str(s).unwrap_or_default()
    }
}
