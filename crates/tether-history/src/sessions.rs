//! Listing, searching, reading and annotating indexed sessions: the API every host calls.
//!
//! Reads our store only; never touches Cursor's files. User metadata (nickname, tags,
//! bookmark, do-not-index) lives in its own tables and survives any re-index.

use std::collections::{HashMap, HashSet};

use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;

use crate::error::{Error, Result};
use crate::store::Store;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum ProjectFilter {
    #[default]
    All,
    /// Sessions whose project is this directory or a directory inside it, or that contains it.
    Path(String),
}

#[derive(Debug, Clone, Default)]
pub struct ListQuery {
    pub project: ProjectFilter,
    pub tag: Option<String>,
    pub bookmarked: bool,
    pub source: Option<String>,
    /// Only chats of this agent ([`agent_origins`]).
    pub agent: Option<String>,
    /// Only chats started at or after this time (ms since the epoch; a chat without a start
    /// time counts from its last update), and before `until`.
    pub since: Option<i64>,
    pub until: Option<i64>,
    /// Only chats answered by this model (`unknown`: those that say none).
    pub model: Option<String>,
    pub limit: usize,
    pub offset: usize,
}

/// The agent names a filter takes, for messages.
pub const AGENT_NAMES: &str =
    "`cursor`, `cursor-ide`, `cursor-cli`, `cursor-cloud`, `claude-code`, `codex` or `gemini`";

/// The `origin`s (a chat's `source`) of an agent: `cursor` is the IDE's, the CLI's and Cursor
/// Cloud's chats; `claude-code`, `codex` and `gemini` the other agents'. Unknown → invalid input.
pub fn agent_origins(agent: &str) -> Result<&'static [&'static str]> {
    Ok(match agent.trim() {
        "cursor" => &["ide", "cli", "cloud"],
        "cursor-ide" | "ide" => &["ide"],
        "cursor-cli" | "cli" => &["cli"],
        "cursor-cloud" | "cloud" => &["cloud"],
        "claude-code" | "claude" => &["claude-code"],
        "codex" => &["codex"],
        "gemini" | "gemini-cli" => &["gemini"],
        other => return Err(Error::invalid("agent", format!("{other:?}: use {AGENT_NAMES}"))),
    })
}

#[derive(Debug, Clone, Serialize, PartialEq, ts_rs::TS)]
#[ts(export, export_to = "history.ts")]
pub struct SessionSummary {
    pub id: String,
    pub title: Option<String>,
    pub project: Option<String>,
    /// `ide` or `cli`.
    pub source: String,
    /// Storage form: `composer`, `composer-inline`, `chat-tab`, `cli-store`, `transcript`.
    pub format: String,
    pub messages: i64,
    pub created_at: Option<String>,
    pub updated_at: Option<String>,
    pub nickname: Option<String>,
    pub tags: Vec<String>,
    pub bookmarked: bool,
    pub no_index: bool,
    pub archived: bool,
    pub model: Option<String>,
    pub mode: Option<String>,
    /// False while a first index has listed the chat but not read its messages yet.
    pub searchable: bool,
}

const SUMMARY_COLS: &str = "s.id, s.title, s.project, s.origin, s.format, s.message_count, s.created_at, s.updated_at,
    m.nickname, coalesce(m.bookmarked, 0), coalesce(m.no_index, 0), s.archived, s.model, s.mode,
    (SELECT group_concat(tag, char(31)) FROM (SELECT tag FROM session_tags t WHERE t.session_id = s.id ORDER BY tag)),
    s.searchable";

fn summary_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<SessionSummary> {
    let tags: Option<String> = r.get(14)?;
    Ok(SessionSummary {
        id: r.get(0)?,
        title: r.get(1)?,
        project: r.get(2)?,
        source: r.get(3)?,
        format: r.get(4)?,
        messages: r.get(5)?,
        created_at: r.get::<_, Option<i64>>(6)?.map(iso),
        updated_at: r.get::<_, Option<i64>>(7)?.map(iso),
        nickname: r.get(8)?,
        bookmarked: r.get(9)?,
        no_index: r.get(10)?,
        archived: r.get(11)?,
        model: r.get(12)?,
        mode: r.get(13)?,
        tags: tags.map(|t| t.split('\u{1f}').map(str::to_owned).collect()).unwrap_or_default(),
        searchable: r.get(15)?,
    })
}

pub use crate::clock::iso;

/// SQL condition + params for a project filter on `s.project`.
fn project_clause(f: &ProjectFilter, params: &mut Vec<rusqlite::types::Value>) -> String {
    match f {
        ProjectFilter::All => "1".into(),
        ProjectFilter::Path(p) => {
            let mut ors = Vec::new();
            for alias in crate::cursor::uri::path_aliases(p) {
                // Inside the project, or the project inside it.
                params.push(alias.clone().into());
                let i = params.len();
                params.push(format!("{}/", alias.trim_end_matches('/')).into());
                let j = params.len();
                ors.push(format!(
                    "(s.project = ?{i} OR substr(s.project, 1, length(?{j})) = ?{j} OR substr(?{i} || '/', 1, length(s.project) + 1) = s.project || '/')"
                ));
            }
            format!("({})", ors.join(" OR "))
        }
    }
}

/// The `WHERE` of a list query over `sessions s LEFT JOIN session_meta m`, its values in `p`.
fn list_where(q: &ListQuery, p: &mut Vec<rusqlite::types::Value>) -> Result<String> {
    let mut conds = vec![project_clause(&q.project, p)];
    if let Some(tag) = &q.tag {
        p.push(tag.clone().into());
        conds.push(format!("EXISTS (SELECT 1 FROM session_tags t WHERE t.session_id = s.id AND t.tag = ?{})", p.len()));
    }
    // The only condition on `session_meta m` (`page` joins it for this one).
    if q.bookmarked {
        conds.push("coalesce(m.bookmarked, 0) = 1".into());
    }
    if let Some(src) = &q.source {
        p.push(src.clone().into());
        conds.push(format!("(s.origin = ?{n} OR s.format = ?{n})", n = p.len()));
    }
    if let Some(agent) = &q.agent {
        let mut ors = Vec::new();
        for o in agent_origins(agent)? {
            p.push((*o).to_owned().into());
            ors.push(format!("?{}", p.len()));
        }
        conds.push(format!("s.origin IN ({})", ors.join(", ")));
    }
    if let Some(since) = q.since {
        p.push(since.into());
        conds.push(format!("coalesce(s.created_at, s.updated_at) >= ?{}", p.len()));
    }
    if let Some(until) = q.until {
        p.push(until.into());
        conds.push(format!("coalesce(s.created_at, s.updated_at) < ?{}", p.len()));
    }
    match q.model.as_deref().map(str::trim) {
        None | Some("") => {}
        // As Insights counts them: a chat that names no model is `unknown`.
        Some("unknown") => conds.push("coalesce(trim(s.model), '') IN ('', 'unknown')".into()),
        Some(m) => {
            p.push(m.to_owned().into());
            conds.push(format!("trim(s.model) = ?{}", p.len()));
        }
    }
    Ok(conds.join(" AND "))
}

pub fn list(store: &Store, q: &ListQuery) -> Result<Vec<SessionSummary>> {
    store.read(|c| list_in(c, q))
}

fn list_in(c: &Connection, q: &ListQuery) -> Result<Vec<SessionSummary>> {
    let mut p: Vec<rusqlite::types::Value> = Vec::new();
    let conds = list_where(q, &mut p)?;
    let limit = if q.limit == 0 { 50 } else { q.limit };
    // Cached: the MCP tools list chats on every call. LIMIT and OFFSET are spliced in, not bound:
    // with STAT4 each binding of them expires the statement, and it is parsed again anyway.
    let sql = format!(
        "SELECT {SUMMARY_COLS} FROM sessions s LEFT JOIN session_meta m ON m.session_id = s.id
         WHERE {conds} ORDER BY coalesce(s.updated_at, s.created_at, 0) DESC, s.id LIMIT {limit} OFFSET {}",
        q.offset
    );
    let mut stmt = c.prepare_cached(&sql)?;
    let rows = stmt.query_map(rusqlite::params_from_iter(p.iter()), summary_row)?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// A page of a list query, with how many chats the whole list holds (its `limit` and `offset`
/// aside) and how many of those a first index has listed but not read yet; one snapshot, so
/// the page and the counts agree.
pub fn page(store: &Store, q: &ListQuery) -> Result<(Vec<SessionSummary>, u64, u64)> {
    store.read(|c| {
        // One read transaction for both statements (dropped, so rolled back: nothing is written).
        let _snapshot = c.unchecked_transaction()?;
        let rows = list_in(c, q)?;
        let mut p: Vec<rusqlite::types::Value> = Vec::new();
        let conds = list_where(q, &mut p)?;
        // The chats' own settings are joined only when a condition reads them (bookmarks): a
        // look-up per chat doubled the count at 50,000 chats. The pending ones are counted
        // through their partial index (`sessions_pending`), not by reading every row.
        let from =
            if q.bookmarked { "sessions s LEFT JOIN session_meta m ON m.session_id = s.id" } else { "sessions s" };
        let count = |sql: String| -> Result<u64> {
            let n: i64 = c.prepare_cached(&sql)?.query_row(rusqlite::params_from_iter(p.iter()), |r| r.get(0))?;
            Ok(n as u64)
        };
        let total = count(format!("SELECT count(*) FROM {from} WHERE {conds}"))?;
        let pending = count(format!("SELECT count(*) FROM {from} WHERE {conds} AND s.searchable = 0"))?;
        Ok((rows, total, pending))
    })
}

/// How much of the index a search covers: chats whose messages are indexed, of all listed.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq, ts_rs::TS)]
#[ts(export, export_to = "history.ts")]
pub struct Coverage {
    pub searchable: u64,
    pub total: u64,
}

impl Coverage {
    pub fn complete(&self) -> bool {
        self.searchable >= self.total
    }

    /// What a search result says while a first index is running, if anything.
    pub fn notice(&self) -> Option<String> {
        (!self.complete()).then(|| format!("still indexing: {} of {} chats searchable", self.searchable, self.total))
    }
}

pub fn coverage(store: &Store) -> Result<Coverage> {
    store.read(|c| {
        Ok(c.query_row("SELECT coalesce(sum(searchable), 0), count(*) FROM sessions", [], |r| {
            Ok(Coverage { searchable: r.get::<_, i64>(0)? as u64, total: r.get::<_, i64>(1)? as u64 })
        })?)
    })
}

/// Resolve an id, a nickname or a unique id prefix (≥ 4 chars) to a session id.
pub fn resolve(conn: &Connection, key: &str) -> Result<String> {
    let key = key.trim();
    if key.is_empty() {
        return Err(Error::SessionNotFound(key.into()));
    }
    if let Some(id) = conn.query_row("SELECT id FROM sessions WHERE id = ?1", [key], |r| r.get(0)).optional()? {
        return Ok(id);
    }
    if let Some(id) =
        conn.query_row("SELECT session_id FROM session_meta WHERE nickname = ?1", [key], |r| r.get(0)).optional()?
    {
        return Ok(id);
    }
    if key.len() >= 4 {
        let mut stmt = conn.prepare("SELECT id FROM sessions WHERE substr(id, 1, length(?1)) = ?1 LIMIT 2")?;
        let ids: Vec<String> = stmt.query_map([key], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?;
        match ids.len() {
            1 => return Ok(ids.into_iter().next().unwrap_or_default()),
            0 => {}
            _ => {
                return Err(Error::invalid(
                    "session id",
                    format!("{key:?} matches several sessions; give more of the id"),
                ));
            }
        }
    }
    Err(Error::SessionNotFound(key.into()))
}

pub fn summary(conn: &Connection, id: &str) -> Result<SessionSummary> {
    let sql = format!(
        "SELECT {SUMMARY_COLS} FROM sessions s LEFT JOIN session_meta m ON m.session_id = s.id WHERE s.id = ?1"
    );
    conn.prepare_cached(&sql)?.query_row([id], summary_row).optional()?.ok_or_else(|| Error::SessionNotFound(id.into()))
}

#[derive(Debug, Clone, Serialize, PartialEq, ts_rs::TS)]
#[ts(export, export_to = "history.ts")]
pub struct MessageOut {
    pub seq: i64,
    pub role: String,
    pub kind: String,
    pub text: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_status: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
}

/// Serialised flat: the summary's fields, with its `messages` count as `message_count` (the
/// `messages` key holds the list here).
#[derive(Debug, Clone)]
pub struct SessionDetail {
    pub session: SessionSummary,
    /// Total parts (text, thinking, tool) stored for the session.
    pub parts: i64,
    pub offset: usize,
    pub messages: Vec<MessageOut>,
}

impl Serialize for SessionDetail {
    fn serialize<S: serde::Serializer>(&self, ser: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::{Error as _, SerializeMap};
        let summary = serde_json::to_value(&self.session).map_err(S::Error::custom)?;
        let fields = summary.as_object().ok_or_else(|| S::Error::custom("a summary is an object"))?;
        let mut m = ser.serialize_map(None)?;
        for (k, v) in fields {
            m.serialize_entry(if k == "messages" { "message_count" } else { k.as_str() }, v)?;
        }
        m.serialize_entry("parts", &self.parts)?;
        m.serialize_entry("offset", &self.offset)?;
        m.serialize_entry("messages", &self.messages)?;
        m.end()
    }
}

#[derive(Debug, Clone, Default)]
pub struct ShowOptions {
    pub offset: usize,
    /// 0 = all.
    pub limit: usize,
    pub include_tools: bool,
}

pub fn show(store: &Store, key: &str, o: &ShowOptions) -> Result<SessionDetail> {
    store.read(|c| {
        let id = resolve(c, key)?;
        let session = summary(c, &id)?;
        if session.no_index {
            return Err(Error::SessionNotIndexed(id));
        }
        if !session.searchable {
            return Err(Error::SessionPending(id));
        }
        let parts: i64 = c.query_row("SELECT count(*) FROM messages WHERE session_id = ?1", [&id], |r| r.get(0))?;
        let limit = if o.limit == 0 { i64::MAX } else { o.limit as i64 };
        let kinds = if o.include_tools { "" } else { "AND kind = 'text'" };
        let mut stmt = c.prepare_cached(&format!(
            "SELECT seq, role, kind, text, tool_name, tool_status, model, created_at FROM messages
             WHERE session_id = ?1 {kinds} ORDER BY seq LIMIT ?2 OFFSET ?3"
        ))?;
        let messages = stmt
            .query_map(params![id, limit, o.offset as i64], |r| {
                Ok(MessageOut {
                    seq: r.get(0)?,
                    role: r.get(1)?,
                    kind: r.get(2)?,
                    text: r.get(3)?,
                    tool_name: r.get(4)?,
                    tool_status: r.get(5)?,
                    model: r.get(6)?,
                    created_at: r.get::<_, Option<i64>>(7)?.map(iso),
                })
            })?
            .collect::<rusqlite::Result<_>>()?;
        Ok(SessionDetail { session, parts, offset: o.offset, messages })
    })
}

/// A bounded read of one chat, for agents: a window of messages that fits a token budget.
#[derive(Debug, Clone, Default)]
pub struct WindowOptions {
    pub offset: usize,
    pub limit: usize,
    /// Centre the window on the first message matching these words (FTS syntax as in search).
    pub around: Option<String>,
    pub include_tools: bool,
    /// Rough budget: four characters a token.
    pub max_tokens: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct Window {
    pub session: SessionSummary,
    /// Messages in the chat counting only the kinds asked for.
    pub total: i64,
    pub offset: usize,
    pub messages: Vec<MessageOut>,
    /// Where the next page starts, if there is one.
    pub next_offset: Option<usize>,
    /// True when the budget cut the window (or a message) short.
    pub truncated: bool,
}

/// Where the turn that was under way at `at_ms` starts: the position (counting text messages, as
/// [`read_window`]'s offset does) of the last user message at or before that time. When the
/// chat's messages carry no times (some storage eras keep none), its last user message: an edit
/// is recorded as it happens, in the chat's latest turn. With it, that message's `seq` (what the
/// GUI's reader scrolls to). `None` for a chat without user text.
pub fn turn_at(store: &Store, session_id: &str, at_ms: i64) -> Result<Option<(usize, i64)>> {
    store.read(|c| {
        let seq: Option<i64> = c
            .query_row(
                "SELECT CASE WHEN count(created_at) > 0
                             THEN max(CASE WHEN created_at <= ?2 THEN seq END) ELSE max(seq) END
                 FROM messages WHERE session_id = ?1 AND role = 'user' AND kind = 'text'",
                params![session_id, at_ms],
                |r| r.get(0),
            )
            .optional()?
            .flatten();
        let Some(seq) = seq else { return Ok(None) };
        let before: i64 = c.query_row(
            "SELECT count(*) FROM messages WHERE session_id = ?1 AND seq < ?2 AND kind = 'text'",
            params![session_id, seq],
            |r| r.get(0),
        )?;
        Ok(Some((before as usize, seq)))
    })
}

pub fn read_window(store: &Store, key: &str, o: &WindowOptions) -> Result<Window> {
    let kinds = if o.include_tools { "" } else { "AND kind = 'text'" };
    let (offset, total) = store.read(|c| {
        let id = resolve(c, key)?;
        let total: i64 =
            c.query_row(&format!("SELECT count(*) FROM messages WHERE session_id = ?1 {kinds}"), [&id], |r| r.get(0))?;
        let Some(words) = o.around.as_deref().filter(|w| !w.trim().is_empty()) else {
            return Ok((o.offset, total));
        };
        let fts = fts_query(words)?;
        let hit: Option<i64> = c
            .query_row(
                "SELECT m.seq FROM messages_fts JOIN messages m ON m.id = messages_fts.rowid
                 WHERE messages_fts MATCH ?1 AND m.session_id = ?2 ORDER BY m.seq LIMIT 1",
                params![fts, id],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| Error::BadQuery { query: words.into(), reason: e.to_string() })?;
        let Some(seq) = hit else {
            return Err(Error::invalid("around", format!("no message in this chat matches {words:?}")));
        };
        let before: i64 = c.query_row(
            &format!("SELECT count(*) FROM messages WHERE session_id = ?1 AND seq < ?2 {kinds}"),
            params![id, seq],
            |r| r.get(0),
        )?;
        Ok(((before as usize).saturating_sub(o.limit / 3), total))
    })?;
    let d = show(store, key, &ShowOptions { offset, limit: o.limit.max(1), include_tools: o.include_tools })?;
    let mut budget = o.max_tokens.max(1) * 4;
    let mut messages = Vec::with_capacity(d.messages.len());
    let mut truncated = false;
    for mut m in d.messages {
        if budget == 0 {
            truncated = true;
            break;
        }
        if m.text.len() > budget {
            let cut = (0..=budget).rev().find(|i| m.text.is_char_boundary(*i)).unwrap_or(0);
            m.text.truncate(cut);
            m.text.push_str(" …[truncated]");
            truncated = true;
            budget = 0;
        } else {
            budget -= m.text.len();
        }
        messages.push(m);
    }
    let end = offset + messages.len();
    let next_offset = ((end as i64) < total).then_some(end);
    Ok(Window { session: d.session, total, offset, messages, next_offset, truncated })
}

#[derive(Debug, Clone)]
pub struct SearchQuery {
    pub query: String,
    pub project: ProjectFilter,
    pub limit: usize,
    /// Markers put around matched terms in snippets.
    pub highlight: (String, String),
}

impl SearchQuery {
    pub fn new(query: impl Into<String>) -> Self {
        Self { query: query.into(), project: ProjectFilter::All, limit: 20, highlight: ("**".into(), "**".into()) }
    }
}

#[derive(Debug, Clone, Serialize, PartialEq, ts_rs::TS)]
#[ts(export, export_to = "history.ts")]
pub struct SearchHit {
    pub session_id: String,
    pub title: Option<String>,
    pub project: Option<String>,
    pub source: String,
    pub updated_at: Option<String>,
    /// Matching text with the terms wrapped in the highlight markers.
    pub snippet: String,
    /// Position of the best matching part in the session (`None` when only the title matched).
    pub seq: Option<i64>,
    /// Higher is better.
    pub score: f64,
}

/// Plain words are matched as terms (all must occur); FTS5 syntax — quotes, `*`, `AND`/`OR`/`NOT`,
/// `NEAR`, parentheses — is passed through for those who want it.
pub fn fts_query(q: &str) -> Result<String> {
    let q = q.trim();
    if q.is_empty() {
        return Err(Error::BadQuery { query: q.into(), reason: "the query is empty".into() });
    }
    let advanced = q.contains(['"', '*', '(', ')', '^'])
        || q.split_whitespace().any(|w| matches!(w, "AND" | "OR" | "NOT") || w.starts_with("NEAR"));
    if advanced {
        return Ok(q.to_owned());
    }
    Ok(q.split_whitespace().map(crate::terms::quote).collect::<Vec<_>>().join(" "))
}

/// A session in the running: id, best message (seq, id) unless only its title matched, score, title.
type Candidate = (String, Option<(i64, i64)>, f64, Option<String>);

/// Above this many matching messages a query is ranked by recency instead of bm25; see `search`.
const RANK_WINDOW: usize = 2000;
/// Matches looked up per step when a broad query is answered newest first.
const BROAD_BATCH: usize = 256;
/// Tokens in a search hit's snippet.
const SNIPPET_TOKENS: usize = 16;
/// A plain term in more messages than this makes bm25's IDF pass too slow; see `search`.
const COMMON_TERM_DOCS: usize = 10_000;

/// Ranked hits, one per session.
///
/// bm25 is exact but its cost grows with how common the terms are: it scans every posting of each
/// term for the IDF and scores every match before sorting (~40 ms for a word in most of 900 k
/// messages). Selective queries — at most `RANK_WINDOW` matches and no plain term in more than
/// `COMMON_TERM_DOCS` messages — get bm25. Broad ones are answered newest first: message ids
/// follow their chat's time, newest lowest (`index::message_id_base`), so walking FTS5's doclists
/// from the start (cheap) finds the newest chats whatever order they were indexed in; those are
/// then ranked by the chats' time column. For a word that is everywhere, recent chats are the useful answer.
/// Prefixes are first rewritten into the terms they stand for (`terms::expand_prefixes`), and
/// snippets are made from the returned rows' text (`terms::Highlighter`).
pub fn search(store: &Store, q: &SearchQuery) -> Result<Vec<SearchHit>> {
    let fts = fts_query(&q.query)?;
    let limit = if q.limit == 0 { 20 } else { q.limit.min(500) };
    let candidates = (limit * 8).max(64);
    store.read(|c| {
        let fts = crate::terms::expand_prefixes(c, &fts)?;
        let mut p: Vec<rusqlite::types::Value> = vec![fts.clone().into()];
        let proj = project_clause(&q.project, &mut p);
        let from = format!(
            "FROM messages_fts JOIN messages m ON m.id = messages_fts.rowid JOIN sessions s ON s.id = m.session_id
             WHERE messages_fts MATCH ?1 AND {proj}"
        );
        let bad = |e: rusqlite::Error| match &e {
            // Generic SQLITE_ERROR while preparing or stepping a MATCH is always the query's fault.
            rusqlite::Error::SqliteFailure(f, Some(msg)) if f.code == rusqlite::ErrorCode::Unknown => Error::BadQuery {
                query: q.query.clone(),
                reason: format!("{msg} (put the words in double quotes to search them literally)"),
            },
            _ => Error::Sql(e),
        };
        let params = rusqlite::params_from_iter(p.iter());
        // The matches after a message id, newest first (ids fall as time goes on, see `index`). AND and prefix queries over big doclists
        // cost most of a search, so they are walked as little as possible. Without a project filter
        // the joins only cost time here: every indexed message has a session.
        let after = p.len() + 1;
        let walk_sql = |n: usize| match q.project {
            ProjectFilter::All => format!(
                "SELECT rowid FROM messages_fts WHERE messages_fts MATCH ?1 AND rowid > ?{after} ORDER BY rowid LIMIT {n}"
            ),
            ProjectFilter::Path(_) => format!(
                "SELECT messages_fts.rowid {from} AND messages_fts.rowid > ?{after} ORDER BY messages_fts.rowid LIMIT {n}"
            ),
        };
        let walk = |above: i64, n: usize| -> Result<Vec<i64>> {
            let mut wp = p.clone();
            wp.push(above.into());
            let mut stmt = c.prepare_cached(&walk_sql(n)).map_err(bad)?;
            let it = stmt.query_map(rusqlite::params_from_iter(wp.iter()), |r| r.get(0)).map_err(bad)?;
            it.collect::<rusqlite::Result<_>>().map_err(bad)
        };
        // A plain term in very many messages makes a query broad whatever it matches; otherwise one
        // walk up to the window tells broad from selective and, when broad, gives the candidates.
        let common = plain_terms(&q.query).iter().any(|t| term_is_common(c, t).unwrap_or(true));
        let (broad, mut newest) = if common {
            (true, walk(i64::MIN, BROAD_BATCH)?)
        } else {
            let v = walk(i64::MIN, RANK_WINDOW + 1)?;
            (v.len() > RANK_WINDOW, v)
        };
        // (session, seq, message id, score)
        let mut rows: Vec<(String, i64, i64, f64)> = Vec::new();
        if broad {
            // Sessions in the order of their newest match (message ids fall with time), looked up a
            // batch at a time until there are enough: a window of thousands costs milliseconds.
            let mut look = c.prepare_cached(
                "SELECT id, session_id, seq FROM messages WHERE id IN (SELECT value FROM json_each(?1))",
            )?;
            let mut seen: HashSet<String> = HashSet::new();
            let mut at = 0;
            newest.truncate(RANK_WINDOW);
            while rows.len() < limit && at < newest.len() {
                let batch = &newest[at..(at + BROAD_BATCH).min(newest.len())];
                let owners: HashMap<i64, (String, i64)> = look
                    .query_map([serde_json::to_string(batch)?], |r| Ok((r.get(0)?, (r.get(1)?, r.get(2)?))))?
                    .collect::<rusqlite::Result<_>>()?;
                for id in batch {
                    if let Some((sid, seq)) = owners.get(id)
                        && seen.insert(sid.clone())
                    {
                        rows.push((sid.clone(), *seq, *id, 1.0 / (1.0 + rows.len() as f64)));
                    }
                }
                at += batch.len();
                // A common term is walked a batch at a time too, up to the window.
                let full = batch.len() == BROAD_BATCH;
                if common && rows.len() < limit && at == newest.len() && full && newest.len() < RANK_WINDOW {
                    let more = walk(*batch.last().expect("a full batch"), BROAD_BATCH)?;
                    newest.extend(more);
                }
            }
        } else {
            let sql = format!("SELECT m.session_id, m.seq, m.id, bm25(messages_fts) {from} ORDER BY rank LIMIT {candidates}");
            let mut stmt = c.prepare(&sql).map_err(bad)?;
            let it = stmt.query_map(params.clone(), |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))).map_err(bad)?;
            for row in it {
                let (sid, seq, id, score): (String, i64, i64, f64) = row.map_err(bad)?;
                rows.push((sid, seq, id, -score));
            }
        }
        if broad {
            // Ids follow the chats' time when written; the column has it as of now (a chat
            // written long ago may have been active since).
            let ids: Vec<&str> = rows.iter().map(|r| r.0.as_str()).collect();
            let mut stmt = c.prepare_cached(
                "SELECT id, coalesce(updated_at, created_at, 0) FROM sessions WHERE id IN (SELECT value FROM json_each(?1))",
            )?;
            let at: HashMap<String, i64> = stmt
                .query_map([serde_json::to_string(&ids)?], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect::<rusqlite::Result<_>>()?;
            rows.sort_by_key(|r| std::cmp::Reverse(at.get(&r.0).copied().unwrap_or(0)));
            for (i, r) in rows.iter_mut().enumerate() {
                r.3 = 1.0 / (1.0 + i as f64);
            }
        }
        let mut best: Vec<Candidate> = Vec::new();
        let mut idx: HashMap<String, usize> = HashMap::new();
        for (sid, seq, id, score) in rows {
            match idx.get(&sid) {
                Some(&i) => best[i].2 += score * 0.1,
                None => {
                    idx.insert(sid.clone(), best.len());
                    best.push((sid, Some((seq, id)), score, None));
                }
            }
        }
        {
            // Broad queries rank by recency here too, which spares bm25's pass over every title.
            let (score, order) =
                if broad { ("0.0", "coalesce(s.updated_at, s.created_at, 0) DESC") } else { ("bm25(titles_fts)", "rank") };
            // Titles are marked after the cut, in Rust: highlight() here would run on every match.
            let title_sql = format!(
                "SELECT s.id, coalesce(s.title, ''), {score}
                 FROM titles_fts JOIN sessions s ON s.rowid = titles_fts.rowid
                 LEFT JOIN session_meta mm ON mm.session_id = s.id
                 WHERE titles_fts MATCH ?1 AND coalesce(mm.no_index, 0) = 0 AND {proj}
                 ORDER BY {order} LIMIT {candidates}"
            );
            let mut stmt = c.prepare_cached(&title_sql).map_err(bad)?;
            let it = stmt
                .query_map(rusqlite::params_from_iter(p.iter()), |r| {
                    Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, f64>(2)?))
                })
                .map_err(bad)?;
            // A title match says more about the whole chat than one message does.
            let title_weight = if broad { 1.0 } else { 2.0 };
            for row in it {
                let (sid, title, score) = row.map_err(bad)?;
                let score = if broad { 1.0 } else { -score } * title_weight;
                match idx.get(&sid) {
                    Some(&i) => {
                        best[i].2 += score;
                        best[i].3.get_or_insert(title);
                    }
                    None => {
                        idx.insert(sid.clone(), best.len());
                        best.push((sid, None, score, Some(title)));
                    }
                }
            }
        }
        best.sort_by(|a, b| b.2.total_cmp(&a.2));
        best.truncate(limit);
        // Snippets from the hits' text: FTS5's snippet() would set up a MATCH per hit.
        let wanted: Vec<i64> = best.iter().filter_map(|b| b.1.map(|(_, id)| id)).collect();
        let mut snippets: HashMap<i64, String> = HashMap::new();
        let marker = crate::terms::Highlighter::new(&fts);
        if !wanted.is_empty() {
            let mut stmt = c.prepare_cached("SELECT id, text FROM messages WHERE id IN (SELECT value FROM json_each(?1))")?;
            let it = stmt.query_map([serde_json::to_string(&wanted)?], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))?;
            for row in it {
                let (id, text) = row?;
                snippets.insert(id, marker.snippet(&text, &q.highlight.0, &q.highlight.1, SNIPPET_TOKENS));
            }
        }
        let mut out = Vec::with_capacity(best.len());
        for (sid, msg, score, title) in best {
            let s = summary(c, &sid)?;
            let snippet = match msg {
                Some((_, id)) => snippets.remove(&id).unwrap_or_default(),
                None => marker.mark(&title.unwrap_or_default(), &q.highlight.0, &q.highlight.1),
            };
            out.push(SearchHit {
                session_id: sid,
                title: s.title,
                project: s.project,
                source: s.source,
                updated_at: s.updated_at,
                snippet,
                seq: msg.map(|(seq, _)| seq),
                score: (score * 1000.0).round() / 1000.0,
            });
        }
        Ok(out)
    })
}

/// The words of a plain query (one without FTS5 syntax), as `fts_query` quotes them.
fn plain_terms(q: &str) -> Vec<String> {
    match fts_query(q) {
        Ok(f) if f.starts_with('"') && !q.contains('"') => q.split_whitespace().map(crate::terms::quote).collect(),
        _ => Vec::new(),
    }
}

/// Whether a term occurs in more than `COMMON_TERM_DOCS` messages, counting no further than that.
fn term_is_common(c: &Connection, term: &str) -> rusqlite::Result<bool> {
    c.prepare_cached("SELECT count(*) FROM (SELECT rowid FROM messages_fts WHERE messages_fts MATCH ?1 LIMIT ?2)")?
        .query_row(params![term, COMMON_TERM_DOCS as i64 + 1], |r| r.get::<_, i64>(0))
        .map(|n| n as usize > COMMON_TERM_DOCS)
}

/// A change to a session's user metadata. `None` fields are left as they are.
#[derive(Debug, Clone, Default)]
pub struct TagUpdate {
    /// `Some(None)` clears the nickname.
    pub nickname: Option<Option<String>>,
    pub add_tags: Vec<String>,
    pub remove_tags: Vec<String>,
    pub bookmarked: Option<bool>,
    pub no_index: Option<bool>,
}

pub fn normalise_tag(t: &str) -> Result<String> {
    let t = t.trim().trim_start_matches('#').trim();
    if t.is_empty() || t.chars().count() > 64 || t.chars().any(|c| c.is_control() || c == ',') {
        return Err(Error::invalid("tag", format!("{t:?}: use 1–64 characters, no commas or control characters")));
    }
    Ok(t.to_lowercase())
}

fn normalise_nickname(n: &str) -> Result<String> {
    let n = n.trim();
    if n.is_empty() || n.chars().count() > 64 || n.chars().any(char::is_control) {
        return Err(Error::invalid("nickname", format!("{n:?}: use 1–64 printable characters")));
    }
    Ok(n.to_owned())
}

/// Apply a metadata change atomically; returns the updated summary.
pub fn tag(store: &Store, key: &str, u: &TagUpdate) -> Result<SessionSummary> {
    let add: Vec<String> = u.add_tags.iter().map(|t| normalise_tag(t)).collect::<Result<_>>()?;
    let remove: Vec<String> = u.remove_tags.iter().map(|t| normalise_tag(t)).collect::<Result<_>>()?;
    let nickname = match &u.nickname {
        Some(Some(n)) => Some(Some(normalise_nickname(n)?)),
        other => other.clone(),
    };
    // User metadata cannot be rebuilt from Cursor: a durable commit, with the write lock taken
    // up front so concurrent writers wait their turn instead of failing with "database is locked".
    store.durable(|txn| {
        let id = resolve(txn, key)?;
        txn.execute(
            "INSERT INTO session_meta(session_id, updated_at) VALUES (?1, ?2) ON CONFLICT(session_id) DO NOTHING",
            params![id, crate::clock::now_ms()],
        )?;
        if let Some(n) = &nickname {
            if let Some(n) = n {
                let holder: Option<String> = txn
                    .query_row(
                        "SELECT session_id FROM session_meta WHERE nickname = ?1 AND session_id != ?2",
                        params![n, id],
                        |r| r.get(0),
                    )
                    .optional()?;
                if let Some(holder) = holder {
                    return Err(Error::NicknameTaken { nickname: n.clone(), session_id: holder });
                }
            }
            txn.execute("UPDATE session_meta SET nickname = ?2 WHERE session_id = ?1", params![id, n])?;
        }
        for t in &add {
            txn.execute("INSERT OR IGNORE INTO session_tags(session_id, tag) VALUES (?1, ?2)", params![id, t])?;
        }
        for t in &remove {
            txn.execute("DELETE FROM session_tags WHERE session_id = ?1 AND tag = ?2", params![id, t])?;
        }
        if let Some(b) = u.bookmarked {
            txn.execute("UPDATE session_meta SET bookmarked = ?2 WHERE session_id = ?1", params![id, b])?;
        }
        if let Some(ni) = u.no_index {
            txn.execute("UPDATE session_meta SET no_index = ?2 WHERE session_id = ?1", params![id, ni])?;
            if ni {
                let texts: Vec<String> = txn
                    .prepare("SELECT text FROM messages WHERE session_id = ?1")?
                    .query_map([&id], |r| r.get(0))?
                    .collect::<rusqlite::Result<_>>()?;
                txn.execute("DELETE FROM messages WHERE session_id = ?1", [&id])?;
                txn.execute("UPDATE sessions SET message_count = 0 WHERE id = ?1", [&id])?;
                crate::terms::forget(txn, texts.iter().map(String::as_str))?;
            }
            // Forget fingerprints so the next pass reads the session (and its file) again.
            txn.execute("UPDATE sessions SET fingerprint = NULL WHERE id = ?1", [&id])?;
            txn.execute(
                "UPDATE sources SET fingerprint = NULL WHERE id = (SELECT source_id FROM sessions WHERE id = ?1)",
                [&id],
            )?;
        }
        txn.execute(
            "UPDATE session_meta SET updated_at = ?2 WHERE session_id = ?1",
            params![id, crate::clock::now_ms()],
        )?;
        summary(txn, &id)
    })
}

#[derive(Debug, Clone, Serialize, PartialEq, ts_rs::TS)]
#[ts(export, export_to = "history.ts")]
pub struct TagCount {
    pub tag: String,
    pub sessions: i64,
}

pub fn tags(store: &Store) -> Result<Vec<TagCount>> {
    store.read(|c| {
        let mut stmt = c.prepare("SELECT tag, count(*) FROM session_tags GROUP BY tag ORDER BY count(*) DESC, tag")?;
        let rows = stmt.query_map([], |r| Ok(TagCount { tag: r.get(0)?, sessions: r.get(1)? }))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    })
}

/// Renames a tag everywhere; renaming onto a tag that exists merges the two. Returns the result's count.
pub fn rename_tag(store: &Store, from: &str, to: &str) -> Result<TagCount> {
    let (from, to) = (normalise_tag(from)?, normalise_tag(to)?);
    store.durable(|txn| {
        let n: i64 = txn.query_row("SELECT count(*) FROM session_tags WHERE tag = ?1", [&from], |r| r.get(0))?;
        if n == 0 {
            return Err(Error::invalid("tag", format!("no chat has the tag {from:?}")));
        }
        txn.execute("INSERT OR IGNORE INTO session_tags(session_id, tag) SELECT session_id, ?2 FROM session_tags WHERE tag = ?1", params![from, to])?;
        if from != to {
            txn.execute("DELETE FROM session_tags WHERE tag = ?1", [&from])?;
        }
        let sessions = txn.query_row("SELECT count(*) FROM session_tags WHERE tag = ?1", [&to], |r| r.get(0))?;
        Ok(TagCount { tag: to.clone(), sessions })
    })
}

/// Removes a tag from every chat; returns from how many.
pub fn delete_tag(store: &Store, tag: &str) -> Result<usize> {
    let tag = normalise_tag(tag)?;
    store.durable(|txn| Ok(txn.execute("DELETE FROM session_tags WHERE tag = ?1", [&tag])?))
}

#[derive(Debug, Clone, Serialize, PartialEq, ts_rs::TS)]
#[ts(export, export_to = "history.ts")]
pub struct ProjectCount {
    pub path: String,
    pub sessions: i64,
}

/// Every project with indexed chats, the busiest first.
pub fn projects(store: &Store) -> Result<Vec<ProjectCount>> {
    store.read(|c| {
        let mut stmt = c.prepare(
            "SELECT project, count(*) FROM sessions WHERE project IS NOT NULL GROUP BY project ORDER BY count(*) DESC, project",
        )?;
        let rows = stmt.query_map([], |r| Ok(ProjectCount { path: r.get(0)?, sessions: r.get(1)? }))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renaming_a_tag_onto_another_merges_and_delete_removes_it() {
        let s = Store::open_in_memory().unwrap();
        {
            let w = s.writer();
            for (id, tag) in [("a", "bug"), ("b", "bug"), ("b", "defect"), ("c", "defect")] {
                w.execute("INSERT INTO session_tags(session_id, tag) VALUES (?1, ?2)", params![id, tag]).unwrap();
            }
        }
        assert_eq!(rename_tag(&s, "Defect", "bug").unwrap(), TagCount { tag: "bug".into(), sessions: 3 });
        assert_eq!(tags(&s).unwrap(), [TagCount { tag: "bug".into(), sessions: 3 }]);
        assert!(rename_tag(&s, "nope", "x").unwrap_err().to_string().contains("no chat has the tag"));
        assert_eq!(delete_tag(&s, "#bug").unwrap(), 3);
        assert!(tags(&s).unwrap().is_empty());
    }

    #[test]
    fn a_page_of_the_list_counts_the_whole_list_and_narrows_by_start_and_model() {
        let s = Store::open_in_memory().unwrap();
        {
            let w = s.writer();
            w.execute("INSERT INTO sources(id, path, kind) VALUES (1, '/g', 'global')", []).unwrap();
            // Chat i started at i days (ms), updated an hour later; every third names no model;
            // chats 0 and 1 are listed but not read yet.
            for i in 0..10i64 {
                let model = if i % 3 == 0 { None } else { Some(if i % 2 == 0 { "gpt-5" } else { " claude " }) };
                w.execute(
                    "INSERT INTO sessions(id, source_id, origin, format, created_at, updated_at, model, searchable)
                     VALUES (?1, 1, 'ide', 'composer', ?2, ?3, ?4, ?5)",
                    params![format!("c{i}"), i * 86_400_000, i * 86_400_000 + 3_600_000, model, i64::from(i >= 2)],
                )
                .unwrap();
            }
        }
        let q = ListQuery { limit: 3, offset: 3, ..Default::default() };
        let (rows, total, pending) = page(&s, &q).unwrap();
        let ids = |rows: &[SessionSummary]| rows.iter().map(|r| r.id.clone()).collect::<Vec<_>>();
        assert_eq!((ids(&rows), total, pending), (vec!["c6".into(), "c5".into(), "c4".into()], 10, 2));
        // Started in days [2, 5): chats 2, 3 and 4, wherever their page starts.
        let days =
            ListQuery { since: Some(2 * 86_400_000), until: Some(5 * 86_400_000), limit: 50, ..Default::default() };
        let (rows, total, pending) = page(&s, &days).unwrap();
        assert_eq!((ids(&rows), total, pending), (vec!["c4".into(), "c3".into(), "c2".into()], 3, 0));
        let unknown = ListQuery { model: Some("unknown".into()), limit: 50, ..Default::default() };
        assert_eq!(ids(&list(&s, &unknown).unwrap()), ["c9", "c6", "c3", "c0"]);
        let claude = ListQuery { model: Some("claude".into()), limit: 50, ..Default::default() };
        assert_eq!(page(&s, &claude).unwrap().1, 3, "c1, c5, c7: the model's spaces trimmed as Insights does");
        // Bookmarks are the chats' own settings (`session_meta`), joined for this condition only.
        s.writer()
            .execute_batch("INSERT INTO session_meta(session_id, bookmarked, updated_at) VALUES ('c1', 1, 0), ('c7', 1, 0), ('c8', 0, 0)")
            .unwrap();
        let marked = ListQuery { bookmarked: true, limit: 50, ..Default::default() };
        let (rows, total, pending) = page(&s, &marked).unwrap();
        assert_eq!((ids(&rows), total, pending), (vec!["c7".into(), "c1".into()], 2, 1));
    }

    #[test]
    fn plain_words_become_quoted_terms_and_syntax_passes_through() {
        assert_eq!(fts_query("parse-date leap").unwrap(), "\"parse-date\" \"leap\"");
        assert_eq!(fts_query("pars*").unwrap(), "pars*");
        assert_eq!(fts_query("a OR b").unwrap(), "a OR b");
        assert!(fts_query("   ").is_err());
    }

    #[test]
    fn tags_are_normalised_and_validated() {
        assert_eq!(normalise_tag(" #Bug ").unwrap(), "bug");
        assert!(normalise_tag("a,b").is_err());
        assert!(normalise_tag("").is_err());
    }
}
