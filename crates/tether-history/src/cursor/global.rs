//! The global `state.vscdb`: listing composers (3.x `composerHeaders` table, global ItemTable
//! `composer.composerHeaders`, `composerData:` key range), fingerprinting them from record
//! headers, and loading one composer with its bubbles by key range.

use std::collections::{BTreeMap, HashMap};

use serde_json::Value;

use super::composer::{
    Bubble, BubbleParts, HeaderInfo, decode_bubble, default_model, parse_chat_tabs, parse_composer_with,
};
use super::sqlite::{CursorDb, Table};
use super::value::{Decoded, decode, timestamp_ms};
use crate::error::Result;
use crate::model::{ParsedSession, Tally};

/// What we know about one composer before reading it.
#[derive(Debug, Clone, Default)]
pub struct ComposerRef {
    pub id: String,
    /// `(rowid, byte length)` of its `composerData:` row, if any.
    pub head: Option<(i64, i64)>,
    pub header: Option<HeaderInfo>,
    header_hash: u64,
}

/// Bubble-range statistics: `(count, Σrowid, Σlength)`.
pub type BubbleStats = (i64, i64, i64);

impl ComposerRef {
    /// A composer known by its id alone (no row or header read yet).
    pub fn new(id: &str) -> Self {
        Self { id: id.to_owned(), ..Default::default() }
    }

    /// Changes when the composer's row, its header or any of its bubbles is rewritten.
    pub fn fingerprint(&self, bubbles: BubbleStats) -> String {
        let (rowid, len) = self.head.unwrap_or((-1, -1));
        format!("{rowid:x}.{len:x}.{:x}.{:x}.{:x}.{:x}", bubbles.0, bubbles.1, bubbles.2, self.header_hash)
    }
}

pub const EMPTY_DRAFT: &str = "empty-state-draft";

/// A composer's `(rowid, length)` when it was last read, by id.
pub type KnownHead<'a> = dyn Fn(&str) -> Option<(i64, i64)> + 'a;

/// Every composer in the global DB, merged from all listing sources, by id.
///
/// `known_head` gives the `(rowid, length)` a composer's row had when last read: a row with the
/// same rowid is taken to have the same length, so that only the keys' index is walked instead of
/// seeking every row (~150 ms at 5 GB, per change). Cursor replaces a row to change it (a new
/// rowid); a row changed in place is left to a pass without `known_head`, as before.
pub fn list_composers(
    db: &CursorDb,
    problems: &mut Tally,
    known_head: Option<&KnownHead<'_>>,
) -> Result<BTreeMap<String, ComposerRef>> {
    let mut out: BTreeMap<String, ComposerRef> = BTreeMap::new();
    let has_kv = db.has_table("cursorDiskKV")?;
    if has_kv {
        let mut add = |key: &str, head: (i64, i64)| {
            let id = &key["composerData:".len()..];
            if !id.is_empty() {
                out.entry(id.to_owned())
                    .or_insert_with(|| ComposerRef { id: id.to_owned(), ..Default::default() })
                    .head = Some(head);
            }
        };
        match known_head {
            None => db.stat_prefix(Table::CursorDiskKv, "composerData:", |key, rowid, len| add(key, (rowid, len)))?,
            Some(known) => {
                let mut unknown = Vec::new();
                db.keys_with_rowids(Table::CursorDiskKv, "composerData:", |key, rowid| {
                    match known(&key["composerData:".len()..]).filter(|h| h.0 == rowid) {
                        Some(h) => add(key, h),
                        None => unknown.push((key.to_owned(), rowid)),
                    }
                })?;
                for (key, rowid) in unknown {
                    if let Some(len) = db.value_len(Table::CursorDiskKv, rowid)? {
                        add(&key, (rowid, len));
                    }
                }
            }
        }
        problems.add_n("null_key", db.null_keys(Table::CursorDiskKv)?);
    }
    for (id, h, raw) in header_rows(db, problems)? {
        let r = out.entry(id.clone()).or_insert_with(|| ComposerRef { id, ..Default::default() });
        r.header_hash ^= xxhash_rust::xxh3::xxh3_64(raw.as_bytes());
        match &mut r.header {
            Some(existing) => existing.merge_from(&h),
            None => r.header = Some(h),
        }
    }
    out.remove(EMPTY_DRAFT);
    Ok(out)
}

/// Rows of the 3.x `composerHeaders` table and of ItemTable `composer.composerHeaders`.
fn header_rows(db: &CursorDb, problems: &mut Tally) -> Result<Vec<(String, HeaderInfo, String)>> {
    let mut out = Vec::new();
    if db.has_table("composerHeaders")? {
        let cols: Vec<String> = {
            let mut stmt = db.conn.prepare("SELECT name FROM pragma_table_info('composerHeaders')")?;
            stmt.query_map([], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?
        };
        let has = |c: &str| cols.iter().any(|x| x == c);
        if has("composerId") {
            let pick = |c: &str| if has(c) { c.to_owned() } else { "NULL".to_owned() };
            let sql = format!(
                "SELECT composerId, {}, {}, {}, {}, {}, {} FROM composerHeaders",
                pick("workspaceId"),
                pick("createdAt"),
                pick("lastUpdatedAt"),
                pick("isArchived"),
                pick("isSubagent"),
                pick("value")
            );
            let mut stmt = db.conn.prepare(&sql)?;
            let mut rows = stmt.query([])?;
            while let Some(r) = rows.next()? {
                let Some(id) = r.get::<_, Option<String>>(0).ok().flatten().filter(|s| !s.is_empty()) else {
                    problems.add("null_key");
                    continue;
                };
                let raw: Option<String> = r.get(6).ok().flatten();
                let mut h = match raw.as_deref().map(|s| decode(Some(s.as_bytes()))) {
                    Some(Decoded::Json(v)) => HeaderInfo::from_json(&v),
                    Some(Decoded::Bad) => {
                        problems.add("bad_json");
                        HeaderInfo::default()
                    }
                    _ => HeaderInfo::default(),
                };
                h.workspace_id = r.get::<_, Option<String>>(1).ok().flatten().or(h.workspace_id);
                let num = |i: usize| r.get::<_, Option<i64>>(i).ok().flatten();
                h.created_at = num(2).and_then(|v| timestamp_ms(Some(&Value::from(v)))).or(h.created_at);
                h.updated_at = num(3).and_then(|v| timestamp_ms(Some(&Value::from(v)))).or(h.updated_at);
                h.archived |= num(4).unwrap_or(0) != 0;
                h.subagent |= num(5).unwrap_or(0) != 0;
                let fp = format!("{:?}{:?}{:?}{}", h.workspace_id, num(2), num(3), raw.unwrap_or_default());
                out.push((id, h, fp));
            }
        }
    }
    if let Some(raw) = db.get(Table::ItemTable, "composer.composerHeaders")? {
        match decode(raw.as_deref()) {
            Decoded::Json(v) => {
                let list = v.get("allComposers").unwrap_or(&v);
                for entry in list.as_array().into_iter().flatten() {
                    match entry.get("composerId").and_then(Value::as_str) {
                        Some(id) => out.push((id.to_owned(), HeaderInfo::from_json(entry), entry.to_string())),
                        None => problems.add("bad_header"),
                    }
                }
            }
            Decoded::Bad => problems.add("bad_json"),
            Decoded::Null => {}
        }
    }
    Ok(out)
}

/// Adds one bubble row to a chat's statistics (its count, and the sums of its rowids and lengths).
fn tally(e: &mut BubbleStats, rowid: i64, len: i64) {
    e.0 += 1;
    e.1 = e.1.wrapping_add(rowid);
    e.2 = e.2.wrapping_add(len);
}

/// Bubble statistics for every composer in one pass over the `bubbleId:` key range.
pub fn bubble_stats_all(db: &CursorDb) -> Result<HashMap<String, BubbleStats>> {
    let mut out: HashMap<String, BubbleStats> = HashMap::new();
    if !db.has_table("cursorDiskKV")? {
        return Ok(out);
    }
    db.stat_prefix(Table::CursorDiskKv, "bubbleId:", |key, rowid, len| {
        if let Some((cid, _)) = key["bubbleId:".len()..].split_once(':') {
            tally(out.entry(cid.to_owned()).or_default(), rowid, len);
        }
    })?;
    Ok(out)
}

pub fn bubble_stats_one(db: &CursorDb, id: &str) -> Result<BubbleStats> {
    let mut e: BubbleStats = (0, 0, 0);
    db.stat_prefix(Table::CursorDiskKv, &format!("bubbleId:{id}:"), |_, rowid, len| tally(&mut e, rowid, len))?;
    Ok(e)
}

/// [`bubble_stats_one`] of a chat read again and again (Cursor streaming into it): the bubbles'
/// keys and rowids from the keys' index alone, and the lengths of the rows seen before (a row is
/// replaced, with a new rowid, to change it) remembered rather than each row visited again.
/// The same figures, for a walk of the index and a visit of the changed rows only.
pub fn bubble_stats_again(db: &CursorDb, id: &str) -> Result<BubbleStats> {
    /// The lengths of a chat's bubble rows, by rowid.
    static LENGTHS: Recent<HashMap<i64, i64>> = Recent::new();
    let prefix = format!("bubbleId:{id}:");
    let mut e: BubbleStats = (0, 0, 0);
    let mut lengths = HashMap::new();
    let Some(known) = LENGTHS.take(db, id) else {
        // The first time: the walk that visits every row, its lengths kept for the next.
        db.stat_prefix(Table::CursorDiskKv, &prefix, |_, rowid, len| {
            lengths.insert(rowid, len);
            tally(&mut e, rowid, len);
        })?;
        LENGTHS.put(db, id, lengths);
        return Ok(e);
    };
    let mut rowids = Vec::new();
    db.keys_with_rowids(Table::CursorDiskKv, &prefix, |_, rowid| rowids.push(rowid))?;
    lengths.reserve(rowids.len());
    for rowid in rowids {
        let len = match known.get(&rowid) {
            Some(len) => *len,
            None => match db.value_len(Table::CursorDiskKv, rowid)? {
                Some(len) => len,
                // Replaced since the walk: the next pass sees the row that replaced it.
                None => continue,
            },
        };
        lengths.insert(rowid, len);
        tally(&mut e, rowid, len);
    }
    LENGTHS.put(db, id, lengths);
    Ok(e)
}

/// `(rowid, byte length)` of one composer's own row, if it has one (a point look-up in the
/// keys' index).
pub fn head_of(db: &CursorDb, id: &str) -> Result<Option<(i64, i64)>> {
    let key = format!("composerData:{id}");
    let mut out = None;
    db.stat_prefix(Table::CursorDiskKv, &key, |k, rowid, len| {
        if k == key {
            out = Some((rowid, len));
        }
    })?;
    Ok(out)
}

/// What a listing read besides the composers' own rows: the headers (3.x `composerHeaders`,
/// ItemTable's `composer.composerHeaders`) and the old chat tabs. Cursor replaces a row to change
/// it, so the tables' highest rowids say whether any of that may have changed since. `None`: it
/// cannot be told (a table without rowids).
pub fn listing_marks(db: &CursorDb) -> Result<Option<(i64, i64)>> {
    let headers = if db.has_table("composerHeaders")? {
        match db
            .conn
            .prepare_cached("SELECT coalesce(max(rowid), 0) FROM composerHeaders")
            .and_then(|mut s| s.query_row([], |r| r.get(0)))
        {
            Ok(m) => m,
            Err(_) => return Ok(None),
        }
    } else {
        0
    };
    Ok(Some((db.max_rowid(Table::ItemTable)?, headers)))
}

/// Composers touched by rows written after `rowid`, plus the new high-water mark.
pub fn touched_since(db: &CursorDb, rowid: i64) -> Result<(Vec<String>, i64)> {
    let (keys, max) = db.keys_after(Table::CursorDiskKv, rowid)?;
    let mut ids: Vec<String> = keys
        .iter()
        .filter_map(|k| {
            k.strip_prefix("bubbleId:")
                .and_then(|r| r.split_once(':').map(|(c, _)| c))
                .or_else(|| k.strip_prefix("composerData:"))
                .map(str::to_owned)
        })
        .collect();
    ids.sort();
    ids.dedup();
    Ok((ids, max))
}

/// What reading one composer produced.
pub enum ComposerRead {
    Session(Box<ParsedSession>, Vec<String>),
    /// Intentionally not indexed (empty, draft, subagent), with the note to count.
    Skipped(&'static str),
}

/// Load and parse one composer: point-get its `composerData`, key-range its bubbles.
pub fn read_composer(db: &CursorDb, r: &ComposerRef) -> Result<ComposerRead> {
    read_composer_again(db, r, false)
}

/// [`read_composer`]; `again`: a chat read a moment ago (Cursor streams into it), whose
/// unchanged bubbles are taken as decoded then.
pub fn read_composer_again(db: &CursorDb, r: &ComposerRef, again: bool) -> Result<ComposerRead> {
    if r.header.as_ref().is_some_and(|h| h.subagent) {
        return Ok(ComposerRead::Skipped("note:subagent"));
    }
    let data = match db.get(Table::CursorDiskKv, &format!("composerData:{}", r.id))? {
        Some(raw) => match decode(raw.as_deref()) {
            Decoded::Json(v) => Some(v),
            Decoded::Null | Decoded::Bad => {
                let reason = if matches!(decode(raw.as_deref()), Decoded::Null) { "null_value" } else { "bad_json" };
                let mut s = header_only(r);
                if s.title.is_none() {
                    return Ok(ComposerRead::Skipped(reason));
                }
                s.problems.add(reason);
                return Ok(ComposerRead::Session(Box::new(s), Vec::new()));
            }
        },
        None => None,
    };
    let Some(data) = data else {
        // Cursor keeps only a header for many cloud-synced or pruned chats; show what we know.
        let s = header_only(r);
        if s.title.is_none() {
            return Ok(ComposerRead::Skipped("note:empty_session"));
        }
        return Ok(ComposerRead::Session(Box::new(s), Vec::new()));
    };
    if data.get("isSubagent").and_then(Value::as_bool) == Some(true) || r.id.starts_with("task-toolu_") {
        return Ok(ComposerRead::Skipped("note:subagent"));
    }
    if data.get("isDraft").and_then(Value::as_bool) == Some(true) && !has_messages(&data) {
        return Ok(ComposerRead::Skipped("note:draft"));
    }
    // A chat Cursor streams into (`again`): only the bubbles that changed since its last read
    // are decoded and parsed; the others add what they added then.
    let mut kept_for = None;
    let bubbles = if data.get("fullConversationHeadersOnly").is_none() {
        KeptBubbles::new()
    } else if again {
        let model = default_model(&data);
        let bubbles = read_bubbles_again(db, &r.id, &model)?;
        kept_for = Some(model);
        bubbles
    } else {
        read_bubbles(db, &r.id)?
    };
    let s = parse_composer_with(
        &r.id,
        &data,
        |bid| bubbles.get(bid).map(|(_, k)| k.bubble()),
        bubbles.keys().map(String::as_str),
        r.header.as_ref(),
    );
    if let Some(model) = kept_for {
        LATELY.put(db, &r.id, (model, bubbles));
    }
    if s.messages.is_empty() && !has_messages(&data) {
        return Ok(ComposerRead::Skipped("note:empty_session"));
    }
    Ok(ComposerRead::Session(Box::new(s), super::composer::file_hints(&data)))
}

/// One bubble of a chat as read: its decoded value, or (a chat read again, the bubble the same
/// as at the last read) what it adds to its chat.
enum Kept {
    Parts(BubbleParts),
    Decoded(Decoded),
}

impl Kept {
    /// A bubble that was the same at two reads in a row is turned into what it adds, once: a
    /// chat read only once (or a bubble that changes at every read, the one being streamed)
    /// costs no more than a plain read.
    fn settled(self, model: &Option<String>) -> Self {
        match self {
            Kept::Decoded(Decoded::Json(b)) => Kept::Parts(BubbleParts::of(&b, model.as_deref())),
            k => k,
        }
    }

    fn bubble(&self) -> Bubble<'_> {
        match self {
            Kept::Parts(p) => Bubble::Parts(p),
            Kept::Decoded(d) => Bubble::Decoded(std::borrow::Cow::Borrowed(d)),
        }
    }
}

/// A chat's bubbles as read or kept, by bubbleId, with the rowid each was read at.
type KeptBubbles = HashMap<String, (i64, Kept)>;

/// The bubbles of the chats read again lately (a chat Cursor streams into), with the chat's
/// default model they were parsed for: a read of such a chat decodes and parses only the bubbles
/// whose rows changed (Cursor replaces a row to change it: a new rowid).
static LATELY: Recent<(Option<String>, KeptBubbles)> = Recent::new();

/// What is remembered of the few chats read again lately, by Cursor file and composer, in this
/// process; the chat read longest ago is forgotten first.
struct Recent<T>(std::sync::Mutex<Vec<((std::path::PathBuf, String), T)>>);

/// How many chats a [`Recent`] remembers.
const LATELY_CHATS: usize = 4;

impl<T> Recent<T> {
    const fn new() -> Self {
        Self(std::sync::Mutex::new(Vec::new()))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<((std::path::PathBuf, String), T)>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn holds(&self, db: &CursorDb, id: &str) -> bool {
        self.lock().iter().any(|((path, c), _)| path == db.path() && c == id)
    }

    /// What is remembered of the chat, forgotten here (put back by [`Recent::put`]).
    fn take(&self, db: &CursorDb, id: &str) -> Option<T> {
        let mut all = self.lock();
        let i = all.iter().position(|((path, c), _)| path == db.path() && c == id)?;
        Some(all.remove(i).1)
    }

    fn put(&self, db: &CursorDb, id: &str, v: T) {
        let mut all = self.lock();
        all.retain(|((path, c), _)| !(path == db.path() && c == id));
        if all.len() >= LATELY_CHATS {
            all.remove(0);
        }
        all.push(((db.path().to_owned(), id.to_owned()), v));
    }
}

/// A chat's bubbles, all read and decoded in one walk.
fn read_bubbles(db: &CursorDb, id: &str) -> Result<KeptBubbles> {
    let prefix = format!("bubbleId:{id}:");
    let mut out = KeptBubbles::new();
    db.scan_prefix(Table::CursorDiskKv, &prefix, true, |key, rowid, v| {
        out.insert(key[prefix.len()..].to_owned(), (rowid, Kept::Decoded(decode_bubble(v))));
    })?;
    Ok(out)
}

/// A chat's bubbles for a read again (see [`LATELY`]): those kept from its last read whose row
/// is the same (parsed for `model`), the others read again. Everything is read when nothing is kept,
/// or it was kept for another default model.
fn read_bubbles_again(db: &CursorDb, id: &str, model: &Option<String>) -> Result<KeptBubbles> {
    let Some((_, mut known)) = LATELY.take(db, id).filter(|(m, _)| m == model) else {
        return read_bubbles(db, id);
    };
    let prefix = format!("bubbleId:{id}:");
    let mut out = KeptBubbles::new();
    let mut changed = Vec::new();
    db.keys_with_rowids(Table::CursorDiskKv, &prefix, |key, rowid| {
        let bid = &key[prefix.len()..];
        match known.remove(bid) {
            Some((r, k)) if r == rowid => {
                out.insert(bid.to_owned(), (rowid, k.settled(model)));
            }
            _ => changed.push((bid.to_owned(), rowid)),
        }
    })?;
    for (bid, rowid) in changed {
        // Gone since the walk: the next pass sees the rows that replaced it.
        if let Some(v) = db.value_at(Table::CursorDiskKv, rowid)? {
            out.insert(bid, (rowid, Kept::Decoded(decode_bubble(v.as_deref()))));
        }
    }
    Ok(out)
}

/// Whether this chat's bubbles were read lately (a read of it now is of what changed only).
pub fn read_lately(db: &CursorDb, id: &str) -> bool {
    LATELY.holds(db, id)
}

/// What a `composerData` row says about its chat without its messages: enough to list it. Read
/// with a borrowing, field-picking parse, which skips the (often megabytes of) inline
/// conversation without building it. Scalars stay `Value`s, so an odd type loses one field, not
/// the whole head.
#[derive(serde::Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct HeadFields {
    name: Option<Value>,
    created_at: Option<Value>,
    last_updated_at: Option<Value>,
    conversation_checkpoint_last_updated_at: Option<Value>,
    unified_mode: Option<Value>,
    force_mode: Option<Value>,
    is_archived: Option<Value>,
    is_subagent: Option<Value>,
    workspace_identifier: Option<Value>,
    workspace_uri: Option<Value>,
    conversation: Option<Vec<serde::de::IgnoredAny>>,
    full_conversation_headers_only: Option<Vec<serde::de::IgnoredAny>>,
}

/// A composer as the list shows it before its messages are read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ComposerHead {
    pub info: HeaderInfo,
    /// Bubbles it says it has (inline or by header).
    pub bubbles: usize,
    pub inline: bool,
    /// Would be skipped by `read_composer` (subagent, or no messages: empty or a draft).
    pub skip: bool,
}

/// Reads a composer's head: its `composerData` row merged under the header we listed, or the
/// header alone when there is no row. `None` when nothing names it (it will be skipped).
pub fn read_head(db: &CursorDb, r: &ComposerRef) -> Result<Option<ComposerHead>> {
    let subagent = r.header.as_ref().is_some_and(|h| h.subagent) || r.id.starts_with("task-toolu_");
    let raw = match r.head {
        Some(_) => db.get(Table::CursorDiskKv, &format!("composerData:{}", r.id))?.flatten(),
        None => None,
    };
    let Some(raw) = raw else {
        let info = r.header.clone().unwrap_or_default();
        return Ok(info.name.is_some().then_some(ComposerHead { info, bubbles: 0, inline: false, skip: subagent }));
    };
    let Ok(h) = serde_json::from_slice::<HeadFields>(&raw) else {
        // Unreadable here; the full read decides (and counts why).
        return Ok(r.header.clone().map(|info| ComposerHead { info, bubbles: 0, inline: false, skip: subagent }));
    };
    let text = |v: &Option<Value>| v.as_ref().and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_owned);
    let flag = |v: &Option<Value>| v.as_ref().and_then(Value::as_bool).unwrap_or(false);
    let wi = h.workspace_identifier.as_ref();
    let project = wi
        .and_then(|w| w.get("uri"))
        .and_then(super::uri::project_from_uri_value)
        .or_else(|| h.workspace_uri.as_ref().and_then(super::uri::project_from_uri_value));
    let mut info = HeaderInfo {
        name: text(&h.name),
        workspace_id: wi.and_then(|w| w.get("id")).and_then(Value::as_str).map(str::to_owned),
        project,
        created_at: timestamp_ms(h.created_at.as_ref()),
        updated_at: timestamp_ms(h.last_updated_at.as_ref())
            .or_else(|| timestamp_ms(h.conversation_checkpoint_last_updated_at.as_ref())),
        archived: flag(&h.is_archived),
        subagent: flag(&h.is_subagent),
        mode: text(&h.unified_mode).or_else(|| text(&h.force_mode)),
    };
    if let Some(listed) = &r.header {
        let mut merged = listed.clone();
        merged.merge_from(&info);
        info = merged;
    }
    let inline = h.conversation.as_ref().is_some_and(|c| !c.is_empty());
    let bubbles = h.conversation.map_or(0, |c| c.len()) + h.full_conversation_headers_only.map_or(0, |c| c.len());
    let skip = subagent || info.subagent || bubbles == 0;
    Ok(Some(ComposerHead { info, bubbles, inline, skip }))
}

fn has_messages(data: &Value) -> bool {
    ["conversation", "fullConversationHeadersOnly"]
        .iter()
        .any(|k| data.get(*k).and_then(Value::as_array).is_some_and(|a| !a.is_empty()))
}

/// The session a listed chat shows until it is read.
pub fn listed_session(id: &str, head: &ComposerHead) -> ParsedSession {
    let mut s = ParsedSession::new(id, "ide", if head.inline { "composer-inline" } else { "composer" });
    let h = &head.info;
    s.title = h.name.clone();
    s.created_at = h.created_at;
    s.updated_at = h.updated_at.or(h.created_at);
    s.archived = h.archived;
    s.mode = h.mode.clone();
    s.workspace_id = h.workspace_id.clone();
    s.set_project(h.project.clone(), crate::model::ProjectVia::Identifier);
    s
}

/// A chat Cursor keeps only a header of: what the list shows, counted as such.
fn header_only(r: &ComposerRef) -> ParsedSession {
    let info = r.header.clone().unwrap_or_default();
    let mut s = listed_session(&r.id, &ComposerHead { info, ..Default::default() });
    s.problems.add("note:header_only");
    s
}

/// Legacy chat tabs kept in the global ItemTable by some builds.
pub fn read_global_chat_tabs(db: &CursorDb, problems: &mut Tally) -> Result<Vec<ParsedSession>> {
    Ok(match db.get(Table::ItemTable, super::CHATDATA_KEY)?.map(|raw| decode(raw.as_deref())) {
        Some(Decoded::Json(v)) => parse_chat_tabs(&v, problems),
        Some(Decoded::Bad) => {
            problems.add("bad_json");
            Vec::new()
        }
        _ => Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The remembered lengths give the figures a visit of every row gives, as Cursor replaces,
    /// adds and deletes bubbles.
    #[test]
    fn stats_from_remembered_lengths_match_a_visit_of_every_row() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.vscdb");
        let c = rusqlite::Connection::open(&path).unwrap();
        c.execute_batch("CREATE TABLE cursorDiskKV (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)").unwrap();
        let put = |b: &str, v: &str| {
            c.execute("INSERT INTO cursorDiskKV VALUES (?1, ?2)", [format!("bubbleId:c1:{b}"), v.to_owned()]).unwrap()
        };
        for b in ["a", "b", "c"] {
            put(b, "{\"text\":\"hi\"}");
        }
        put("x", "{}");
        c.execute("INSERT INTO cursorDiskKV VALUES ('bubbleId:c2:a', 'another chat')", []).unwrap();
        let same = || {
            let db = CursorDb::open(&path, dir.path()).unwrap();
            let again = bubble_stats_again(&db, "c1").unwrap();
            assert_eq!(again, bubble_stats_one(&db, "c1").unwrap());
            again
        };
        let first = same();
        assert_eq!(first.0, 4);
        put("c", "{\"text\":\"hi there, a longer answer\"}");
        put("d", "{\"text\":\"new\"}");
        let grown = same();
        assert_ne!(grown, first);
        c.execute("DELETE FROM cursorDiskKV WHERE key = 'bubbleId:c1:a'", []).unwrap();
        assert_eq!(same().0, 4);
    }

    /// A chat read again and again (only its changed bubbles parsed anew) gives what a fresh read
    /// gives: messages, notes and tokens, as Cursor grows an answer, adds bubbles, writes one
    /// that is not JSON, and changes the chat's default model.
    #[test]
    fn a_chat_read_again_is_what_a_fresh_read_is() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.vscdb");
        let c = rusqlite::Connection::open(&path).unwrap();
        c.execute_batch("CREATE TABLE cursorDiskKV (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)").unwrap();
        let put = |k: &str, v: &str| {
            c.execute("INSERT INTO cursorDiskKV VALUES (?1, ?2)", [k.to_owned(), v.to_owned()]).unwrap();
        };
        let mut order: Vec<&str> = Vec::new();
        let head = |order: &[&str], model: &str| {
            let headers: Vec<_> = order.iter().map(|b| serde_json::json!({"bubbleId": b, "type": 2})).collect();
            serde_json::json!({"_v": 3, "name": "streaming", "createdAt": 1_760_000_000_000_i64,
                "modelConfig": {"modelName": model}, "fullConversationHeadersOnly": headers})
            .to_string()
        };
        let r = ComposerRef::new("c1");
        let check = |note: &str| {
            let db = CursorDb::open(&path, dir.path()).unwrap();
            let (ComposerRead::Session(again, _), ComposerRead::Session(fresh, _)) =
                (read_composer_again(&db, &r, true).unwrap(), read_composer(&db, &r).unwrap())
            else {
                panic!("{note}: not read as a chat");
            };
            assert_eq!(again.messages, fresh.messages, "{note}");
            assert_eq!(again.problems, fresh.problems, "{note}");
            assert_eq!(again.tokens, fresh.tokens, "{note}");
            assert_eq!(again.model, fresh.model, "{note}");
            again.messages.len()
        };
        put("bubbleId:c1:u", r#"{"type":1,"text":"how do I parse this?","createdAt":"2026-11-01T10:00:00Z"}"#);
        put(
            "bubbleId:c1:a",
            r#"{"type":2,"text":"Like","thinking":{"text":"let me see"},"tokenCount":{"inputTokens":5,"outputTokens":7}}"#,
        );
        put("bubbleId:c1:t", r#"{"type":2,"toolFormerData":{"name":"read_file","status":"completed","params":"{}"}}"#);
        order.extend(["u", "a", "t"]);
        put("composerData:c1", &head(&order, "gpt-5"));
        let first = check("first read");
        assert_eq!(first, 4);
        // The answer grows, a bubble is added, one holds no JSON, the model changes.
        put(
            "bubbleId:c1:a",
            r#"{"type":2,"text":"Like this, with serde.","thinking":{"text":"let me see"},"tokenCount":{"inputTokens":5,"outputTokens":9}}"#,
        );
        check("answer grown");
        put("bubbleId:c1:b", "{not json");
        put("bubbleId:c1:n", r#"{"type":2,"text":"and more","modelInfo":{"modelName":"claude"}}"#);
        order.extend(["b", "n"]);
        put("composerData:c1", &head(&order, "gpt-5"));
        assert_eq!(check("bubbles added"), 5);
        put("composerData:c1", &head(&order, "claude-4"));
        check("default model changed");
    }
}
