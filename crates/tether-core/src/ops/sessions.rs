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

// An agent's recall (find, read) is its own file; its names stay reachable here, where agents'
// and people's chat operations are looked for.
pub use super::recall::{Find, FoundChats, Read, ReadChat, SharedWindow, find, read, read_chat};

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
