//! Cursor's chats: list, search, read, tag, export. Reads take no principal; a tag edit is the
//! person's or the calling chat's and announces the chat it changed.

use serde::{Deserialize, Serialize};

use crate::Tether;
use crate::error::{Error, Result};
use crate::events::Event;
use crate::history::sessions::{
    Coverage, ListQuery, ProjectCount, ProjectFilter, SearchHit, SearchQuery, SessionDetail, SessionSummary,
    ShowOptions, TagCount, TagUpdate, Window, WindowOptions,
};
use crate::history::{export, sessions};

/// Which chats a caller means by `project`: `all` (or empty), `current` (the caller's workspace,
/// else all when it is not known), or a path. Absent: `default` (`current` for an agent, whose
/// workspace is what it works on; `all` for the person).
pub fn scope(project: Option<&str>, default: &str, caller_roots: &[String]) -> ProjectFilter {
    match project.map(str::trim).unwrap_or(default) {
        "all" | "" => ProjectFilter::All,
        "current" => caller_roots.first().map_or(ProjectFilter::All, |r| ProjectFilter::Path(r.clone())),
        p => ProjectFilter::Path(p.to_owned()),
    }
}

pub fn list(t: &Tether, q: &ListQuery) -> Result<Vec<SessionSummary>> {
    sessions::list(&t.store, q)
}

/// One page of the chat list and how many chats the whole list holds, so a client can show the
/// first rows at once and fetch the others as they scroll into view (the GUI at 50,000 chats).
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct SessionPage {
    pub sessions: Vec<SessionSummary>,
    /// Chats matching the filters, on every page.
    pub total: u64,
    /// Of those, chats a first index has listed but not read yet.
    pub pending: u64,
    pub offset: usize,
}

/// The chats of `q` from its `offset`, at most its `limit`, and the whole list's size (read in
/// one snapshot, so the page and the count agree).
pub fn page(t: &Tether, q: &ListQuery) -> Result<SessionPage> {
    let (sessions, total, pending) = sessions::page(&t.store, q)?;
    Ok(SessionPage { sessions, total, pending, offset: q.offset })
}

/// Search hits, and how much of the history they come from (less than all during a first index).
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct Found {
    pub hits: Vec<SearchHit>,
    pub coverage: Coverage,
}

pub fn search(t: &Tether, q: &SearchQuery) -> Result<Found> {
    if q.query.trim().is_empty() {
        return Err(Error::invalid("search", "give the words to search for"));
    }
    Ok(Found { hits: sessions::search(&t.store, q)?, coverage: sessions::coverage(&t.store)? })
}

/// Chats searchable of all listed: less than all while a first index runs.
pub fn coverage(t: &Tether) -> Result<Coverage> {
    sessions::coverage(&t.store)
}

/// One chat's list entry, by id, nickname or id prefix (also while its messages are not indexed).
pub fn summary(t: &Tether, key: &str) -> Result<SessionSummary> {
    t.store.read(|c| sessions::summary(c, &sessions::resolve(c, key)?))
}

pub fn show(t: &Tether, key: &str, o: &ShowOptions) -> Result<SessionDetail> {
    sessions::show(&t.store, key, o)
}

pub fn read_window(t: &Tether, key: &str, o: &WindowOptions) -> Result<Window> {
    sessions::read_window(&t.store, key, o)
}

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

/// A nickname, tags, a bookmark or "do not index" for a chat, as hosts send it: absent leaves a
/// field as it is; a `null` or empty nickname clears it.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct Tag {
    /// A unique, memorable name; `null` or an empty string clears it.
    #[serde(default, deserialize_with = "tether_store::de::some_or_null")]
    #[ts(optional, type = "string | null")]
    pub nickname: Option<Option<String>>,
    /// Tags to add.
    #[serde(default)]
    #[ts(optional, as = "Option<Vec<String>>")]
    pub add_tags: Vec<String>,
    /// Tags to remove.
    #[serde(default)]
    #[ts(optional, as = "Option<Vec<String>>")]
    pub remove_tags: Vec<String>,
    /// Bookmark (true) or unbookmark (false).
    #[serde(default, alias = "bookmark")]
    #[ts(optional)]
    pub bookmarked: Option<bool>,
    /// Drop the chat's messages from the index and never serve them (true), or index it again.
    #[serde(default)]
    #[ts(optional)]
    pub no_index: Option<bool>,
}

/// Tags a chat; its subscribers hear of it.
pub fn tag(t: &Tether, key: &str, u: Tag) -> Result<SessionSummary> {
    let u = TagUpdate {
        nickname: u.nickname,
        add_tags: u.add_tags,
        remove_tags: u.remove_tags,
        bookmarked: u.bookmarked,
        no_index: u.no_index,
    };
    let s = sessions::tag(&t.store, key, &u)?;
    t.bus.emit(Event::Sessions { ids: Some(vec![s.id.clone()]) });
    Ok(s)
}

pub fn projects(t: &Tether) -> Result<Vec<ProjectCount>> {
    sessions::projects(&t.store)
}

pub fn tags(t: &Tether) -> Result<Vec<TagCount>> {
    sessions::tags(&t.store)
}

/// The projects chats belong to, as the GUI reads them: `{projects}`.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct ProjectList {
    pub projects: Vec<ProjectCount>,
}

/// Every tag with how many chats carry it: `{tags}`.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct TagList {
    pub tags: Vec<TagCount>,
}

/// A tag taken off every chat: `{removed_from}` (how many had it).
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct TagRemoved {
    pub removed_from: usize,
}

#[derive(Debug, Clone, Deserialize, schemars::JsonSchema, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct RenameTag {
    pub from: String,
    /// Renaming onto an existing tag merges them.
    pub to: String,
}

pub fn rename_tag(t: &Tether, r: RenameTag) -> Result<TagCount> {
    let c = sessions::rename_tag(&t.store, &r.from, &r.to)?;
    t.bus.emit(Event::Sessions { ids: Some(Vec::new()) });
    Ok(c)
}

/// Removes a tag from every chat; how many had it.
pub fn delete_tag(t: &Tether, tag: &str) -> Result<TagRemoved> {
    let n = sessions::delete_tag(&t.store, tag)?;
    t.bus.emit(Event::Sessions { ids: Some(Vec::new()) });
    Ok(TagRemoved { removed_from: n })
}

pub fn export(t: &Tether, key: &str, format: export::Format) -> Result<String> {
    export::export(&t.store, key, format)
}
