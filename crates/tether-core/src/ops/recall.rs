//! An agent's recall of past chats (the MCP tools `sessions_find` and `session_read`): this
//! machine's history by words, tag or recency, scoped to the calling chat's workspace, and the
//! chats teammates shared with the team. Reads: no principal. Built on `ops::sessions` (the
//! person's list, search and read) and `ops::share`; never the other way round.

use serde::{Deserialize, Serialize};

use super::sessions::{coverage, list, read_window, scope, summary};
use crate::Tether;
use crate::error::{Error, Result};
use crate::history::sessions::{
    self, ListQuery, ProjectFilter, SearchHit, SearchQuery, SessionSummary, Window, WindowOptions,
};

/// An agent's look into past chats: full-text search when `query` is given, else the most
/// recent ones. Its docs are also the MCP tool's argument descriptions.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
pub struct Find {
    /// Words to search for in past chats (full text; all words must occur). Omit to list recent chats.
    #[serde(default)]
    pub query: Option<String>,
    /// `current` (default: the calling chat's workspace), `all`, or a project path.
    #[serde(default)]
    pub project: Option<String>,
    /// Only chats with this tag.
    #[serde(default)]
    pub tag: Option<String>,
    /// The chat with this nickname.
    #[serde(default)]
    pub nickname: Option<String>,
    /// Only bookmarked chats.
    #[serde(default)]
    pub bookmarked: Option<bool>,
    /// At most this many rows (default 10, max 50).
    #[serde(default)]
    pub limit: Option<usize>,
    /// `local` (default: this machine's chats) or `team`: chats teammates shared with the team
    /// (redacted copies, marked with who shared them; read one with sessions_read and its
    /// `SH-` id). `team` needs a team database.
    #[serde(default)]
    pub scope: Option<String>,
    /// Only chats of this agent: `cursor` (its IDE, CLI and Cloud chats), `cursor-ide`,
    /// `cursor-cli`, `cursor-cloud`, `claude-code`, `codex` or `gemini`. Omit for every agent's.
    #[serde(default)]
    pub agent: Option<String>,
}

/// What [`find`] found, and where it looked.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum FoundChats {
    Hits {
        scope: String,
        hits: Vec<SearchHit>,
        /// While a first index runs: how much of the history the hits come from.
        #[serde(skip_serializing_if = "Option::is_none")]
        still_indexing: Option<String>,
    },
    Listed {
        scope: String,
        sessions: Vec<SessionSummary>,
    },
    /// Chats shared with the team.
    Shared {
        scope: String,
        shared: Vec<crate::board::shared::SharedSummary>,
    },
}

/// Searches or lists chats for an agent working in `caller_roots` (its chat's workspace).
pub fn find(t: &Tether, caller_roots: &[String], f: Find) -> Result<FoundChats> {
    let project = scope(f.project.as_deref(), "current", caller_roots);
    let limit = f.limit.unwrap_or(10).clamp(1, 50);
    match f.scope.as_deref().map(str::trim) {
        None | Some("" | "local") => {}
        Some("team") => {
            let shared = crate::ops::share::list(t, f.query.as_deref(), limit)?;
            return Ok(FoundChats::Shared { scope: "team".into(), shared });
        }
        Some(other) => return Err(Error::invalid("scope", format!("{other:?}: use `local` or `team`"))),
    }
    let scope_name = match &project {
        ProjectFilter::All => "all projects".to_owned(),
        ProjectFilter::Path(p) => p.clone(),
    };
    let agent = f.agent.as_deref().filter(|a| !a.trim().is_empty()).map(sessions::agent_origins).transpose()?;
    if let Some(nick) = f.nickname {
        return Ok(FoundChats::Listed { scope: scope_name, sessions: vec![summary(t, &nick)?] });
    }
    match f.query.filter(|q| !q.trim().is_empty()) {
        Some(q) => {
            let hits = match agent {
                None => sessions::search(&t.store, &SearchQuery { project, limit, ..SearchQuery::new(q) })?,
                // Search ranks over every chat; the agent's are kept from a wider set of hits.
                Some(origins) => {
                    let wide = SearchQuery { project, limit: (limit * 10).min(500), ..SearchQuery::new(q) };
                    let mut hits = sessions::search(&t.store, &wide)?;
                    hits.retain(|h| origins.contains(&h.source.as_str()));
                    hits.truncate(limit);
                    hits
                }
            };
            Ok(FoundChats::Hits { scope: scope_name, hits, still_indexing: coverage(t)?.notice() })
        }
        None => {
            let q = ListQuery {
                project,
                tag: f.tag,
                bookmarked: f.bookmarked.unwrap_or(false),
                agent: f.agent,
                limit,
                ..Default::default()
            };
            Ok(FoundChats::Listed { scope: scope_name, sessions: list(t, &q)? })
        }
    }
}

/// A bounded read of one chat for an agent. Its docs are also the MCP tool's argument
/// descriptions.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
pub struct Read {
    /// Session id (or a unique prefix) or nickname, from `sessions_find`.
    pub session: String,
    /// First message to return (0-based). Ignored when `around` is given.
    #[serde(default)]
    pub offset: Option<usize>,
    /// At most this many messages (default 40).
    #[serde(default)]
    pub limit: Option<usize>,
    /// Centre the window on the first message matching these words.
    #[serde(default)]
    pub around: Option<String>,
    /// Include tool calls and thinking (default false: only the conversation).
    #[serde(default)]
    pub include_tools: Option<bool>,
    /// Stop before the answer exceeds roughly this many tokens (default 4000).
    #[serde(default)]
    pub max_tokens: Option<usize>,
}

/// What [`read_chat`] read: a window of one of this machine's chats, or of a chat shared with
/// the team.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum ReadChat {
    Local(Window),
    Shared(SharedWindow),
}

/// A stretch of a shared chat's Markdown that fits the token budget.
#[derive(Debug, Clone, Serialize)]
pub struct SharedWindow {
    #[serde(flatten)]
    pub chat: crate::board::shared::SharedSummary,
    /// Where `text` starts in the whole (bytes), and where the next stretch starts.
    pub offset: usize,
    pub next_offset: Option<usize>,
    pub total: usize,
    pub text: String,
}

/// [`read`], and a chat shared with the team by its `SH-` id (paged by `offset` into its text).
pub fn read_chat(t: &Tether, r: Read) -> Result<ReadChat> {
    if !crate::board::shared::is_shared_id(&r.session) {
        return read(t, r).map(ReadChat::Local);
    }
    let chat = crate::ops::share::get(t, &r.session)?;
    let budget = r.max_tokens.unwrap_or(4000).clamp(200, 50_000) * 4;
    let body = chat.body;
    let floor = |mut i: usize| {
        i = i.min(body.len());
        while !body.is_char_boundary(i) {
            i -= 1;
        }
        i
    };
    let start = floor(r.offset.unwrap_or(0));
    let end = floor(start + budget);
    Ok(ReadChat::Shared(SharedWindow {
        chat: chat.summary,
        offset: start,
        next_offset: (end < body.len()).then_some(end),
        total: body.len(),
        text: body[start..end].to_owned(),
    }))
}

/// A window of messages that fits a token budget.
pub fn read(t: &Tether, r: Read) -> Result<Window> {
    let o = WindowOptions {
        offset: r.offset.unwrap_or(0),
        limit: r.limit.unwrap_or(40).clamp(1, 200),
        around: r.around,
        include_tools: r.include_tools.unwrap_or(false),
        max_tokens: r.max_tokens.unwrap_or(4000).clamp(200, 50_000),
    };
    read_window(t, &r.session, &o)
}
