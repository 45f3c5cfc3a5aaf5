//! Incremental indexing: Cursor files → our store.
//!
//! A file whose size/mtime (and its `-wal`'s) did not change is not opened. In a changed global
//! DB, a composer is re-read only when its fingerprint — built from record headers, never from
//! values — changed; a re-read session rewrites only the messages whose content hash changed.
//! Sessions gone from Cursor are removed; user metadata (separate tables) stays.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;
use std::time::Instant;

use rusqlite::{Connection, OptionalExtension, params};
use xxhash_rust::xxh3::Xxh3;

use crate::cursor::global::{self, ComposerRead, ComposerRef};
use crate::cursor::sqlite::CursorDb;
use crate::cursor::{self, Source, SourceKind, cli, uri, workspace};
use crate::error::Result;
use crate::model::{ParsedMessage, ParsedSession, ProjectVia, Tally};
use crate::paths::CursorLocations;
use crate::store::Store;
use crate::terms::{Forget, Vocabulary};

/// How thoroughly to look for changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Depth {
    /// Fingerprint every session of every changed file (`tether index`, daemon start, periodic).
    #[default]
    Deep,
    /// Watcher fast path: in a changed global DB, only composers whose row changed or whose
    /// bubbles were written since the last high-water rowid.
    Quick,
    /// Re-read every session of every file, fingerprints ignored.
    Force,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct SourceReport {
    pub path: String,
    pub kind: SourceKind,
    /// `complete`, `partial`, `error`, or `unchanged` when the file was not opened.
    pub status: String,
    pub reasons: Tally,
    pub notes: Tally,
    pub sessions: u64,
    pub messages: u64,
    pub written: u64,
    pub deleted: u64,
    pub bytes: u64,
    pub error: Option<String>,
    /// Ids of sessions written or removed, for change notifications (not part of the JSON report).
    #[serde(skip)]
    pub changed: Vec<String>,
    /// A chat was put off (it changes continuously): look at the source again this much later.
    #[serde(skip)]
    pub retry_after_ms: Option<u64>,
}

#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct IndexReport {
    pub sources: Vec<SourceReport>,
    pub sessions_written: u64,
    pub sessions_deleted: u64,
    pub sessions_total: u64,
    pub messages_total: u64,
    pub bytes_read: u64,
    pub elapsed_ms: u64,
    /// Files discovery looked at and passed over, and why.
    pub skipped: Vec<cursor::Skipped>,
    /// Ids of sessions written or removed in this pass (not part of the JSON report).
    #[serde(skip)]
    pub changed: Vec<String>,
    /// The soonest a source asked to be looked at again (see [`SourceReport::retry_after_ms`]).
    #[serde(skip)]
    pub retry_after_ms: Option<u64>,
}

/// Progress, for a terminal bar or GUI events.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Progress {
    Started {
        sources: usize,
    },
    Source {
        index: usize,
        path: String,
        kind: SourceKind,
    },
    /// Every chat of a Cursor DB is listed (title, date, project), before any is read; `sessions`
    /// rows were new.
    Listed {
        sessions: u64,
    },
    /// Chats of a Cursor DB read so far; the ETA extrapolates the bytes read.
    Sessions {
        done: u64,
        total: u64,
        bytes_done: u64,
        bytes_total: u64,
        eta_ms: Option<u64>,
    },
    Finished {
        report: Box<IndexReport>,
    },
}

pub type ProgressFn<'a> = &'a (dyn Fn(&Progress) + Sync);

pub fn no_progress(_: &Progress) {}

/// Run one indexing pass over everything discovered at `loc`.
pub fn run(
    store: &Store,
    loc: &CursorLocations,
    scratch: &Path,
    depth: Depth,
    progress: ProgressFn<'_>,
) -> Result<IndexReport> {
    let found = cursor::discover_all(loc);
    register_bare_workspaces(store, loc)?;
    let mut report = run_sources(store, &found.sources, scratch, depth, progress, true)?;
    report.skipped = found.skipped;
    Ok(report)
}

/// Index the given sources. With `complete_set`, sources we knew but that are gone are marked
/// missing and their sessions removed.
pub fn run_sources(
    store: &Store,
    sources: &[Source],
    scratch: &Path,
    depth: Depth,
    progress: ProgressFn<'_>,
    complete_set: bool,
) -> Result<IndexReport> {
    let t0 = Instant::now();
    let mut report = IndexReport::default();
    // Workspace DBs first: global chats take their projects from workspace membership. Global DBs
    // last: the CLI's chats (a small file each) are then not held up behind a first read of a big
    // global DB, whose chats are all listed before anything else is read (`list_global`).
    let order = |k: SourceKind| if k == SourceKind::Global { u8::MAX } else { k as u8 };
    let mut sorted: Vec<&Source> = sources.iter().collect();
    sorted.sort_by(|a, b| order(a.kind).cmp(&order(b.kind)).then_with(|| a.path.cmp(&b.path)));
    progress(&Progress::Started { sources: sorted.len() });
    let workspaces = sorted.iter().take_while(|s| s.kind == SourceKind::Workspace).count();
    let read_between = sorted.iter().any(|s| !matches!(s.kind, SourceKind::Workspace | SourceKind::Global));
    for (i, src) in sorted.iter().enumerate() {
        if i == workspaces && read_between {
            for global in sorted.iter().filter(|s| s.kind == SourceKind::Global) {
                if let Err(e) = list_global(store, global, scratch, progress) {
                    // The full read below reports it.
                    tracing::warn!(path = %global.path.display(), error = %e, "listing failed");
                }
            }
        }
        progress(&Progress::Source { index: i, path: src.path.display().to_string(), kind: src.kind });
        let r = index_source(store, src, scratch, depth, progress, complete_set);
        let r = match r {
            Ok(r) => r,
            Err(e) => {
                tracing::warn!(path = %src.path.display(), error = %e, "source failed");
                let msg = e.to_string();
                set_source_status(store, src, "error", &Tally::default(), &Tally::default(), Some(&msg))?;
                SourceReport { status: "error".into(), error: Some(msg), ..blank_report(src) }
            }
        };
        report.sessions_written += r.written;
        report.sessions_deleted += r.deleted;
        report.bytes_read += r.bytes;
        report.changed.extend(r.changed.iter().cloned());
        if let Some(ms) = r.retry_after_ms {
            report.retry_after_ms = Some(report.retry_after_ms.map_or(ms, |m| m.min(ms)));
        }
        report.sources.push(r);
    }
    if complete_set {
        report.sessions_deleted += remove_missing_sources(store, &sorted)?;
    }
    // Merging a bulk pass turned off goes back on, whether the pass ran to its end, failed, or
    // was killed in an earlier run (a whole pass starts every run). A watcher's pass that wrote
    // nothing did not turn it off: it is not asked, several times a second while Cursor streams.
    let wrote =
        report.sessions_written + report.sessions_deleted > 0 || report.sources.iter().any(|r| r.error.is_some());
    if (complete_set || wrote) && defer_merging(&store.writer(), false)? {
        merge_deferred(store)?;
        store.bulk_cache(false)?;
        // A bulk pass's log is as big as its transactions were; give the disk back.
        store.truncate_wal()?;
    }
    // The totals (a walk of every session) are for a whole pass; the watcher's passes over the
    // sources that changed leave them out.
    if complete_set {
        let (s, m) = store.read(|c| {
            Ok(c.query_row("SELECT count(*), coalesce(sum(message_count), 0) FROM sessions", [], |r| {
                Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?))
            })?)
        })?;
        report.sessions_total = s as u64;
        report.messages_total = m as u64;
    }
    report.elapsed_ms = t0.elapsed().as_millis() as u64;
    progress(&Progress::Finished { report: Box::new(report.clone()) });
    Ok(report)
}

fn blank_report(src: &Source) -> SourceReport {
    SourceReport {
        path: src.path.display().to_string(),
        kind: src.kind,
        status: "complete".into(),
        reasons: Tally::default(),
        notes: Tally::default(),
        sessions: 0,
        messages: 0,
        written: 0,
        deleted: 0,
        bytes: 0,
        error: None,
        changed: Vec::new(),
        retry_after_ms: None,
    }
}

struct SourceRow {
    id: i64,
    fingerprint: Option<String>,
    watermark: Option<i64>,
    status: String,
}

fn source_row(conn: &Connection, src: &Source) -> Result<SourceRow> {
    let path = src.path.to_string_lossy();
    let get = || -> rusqlite::Result<Option<SourceRow>> {
        conn.prepare_cached("SELECT id, fingerprint, watermark, status FROM sources WHERE path = ?1")?
            .query_row([&path], |r| {
                Ok(SourceRow { id: r.get(0)?, fingerprint: r.get(1)?, watermark: r.get(2)?, status: r.get(3)? })
            })
            .optional()
    };
    // Looked up first: an insert, even one that does nothing, is a write transaction per pass.
    if let Some(row) = get()? {
        return Ok(row);
    }
    conn.execute(
        "INSERT INTO sources(path, kind) VALUES (?1, ?2) ON CONFLICT(path) DO NOTHING",
        params![path, src.kind.as_str()],
    )?;
    get()?.ok_or_else(|| rusqlite::Error::QueryReturnedNoRows.into())
}

/// `counts`: fill in the source's totals (a whole pass's report wants them; the watcher's passes
/// over what changed do not, and counting walks every chat of the source).
fn index_source(
    store: &Store,
    src: &Source,
    scratch: &Path,
    depth: Depth,
    progress: ProgressFn<'_>,
    counts: bool,
) -> Result<SourceReport> {
    let row = source_row(&store.writer(), src)?;
    let fp = cursor::source_fingerprint(src);
    let mut report = blank_report(src);
    if depth != Depth::Force && fp.is_some() && fp == row.fingerprint && row.status != "error" {
        report.status = "unchanged".into();
        if counts {
            fill_counts(store, row.id, &mut report)?;
        }
        return Ok(report);
    }
    report.bytes = std::fs::metadata(&src.path).map(|m| m.len()).unwrap_or(0);
    let mut src_problems = Tally::default();
    let mut watermark = row.watermark;
    match src.kind {
        SourceKind::Global => {
            let (mark, fast) = index_global(
                store,
                src,
                row.id,
                row.watermark,
                scratch,
                depth,
                progress,
                &mut report,
                &mut src_problems,
            )?;
            watermark = Some(mark);
            if fast {
                // Only the chats that changed were read: what the source's status says of the
                // rest still holds (the next full pass recounts it).
                // With a chat put off, the file is opened again by the next pass even unchanged.
                if report.retry_after_ms.is_some() && report.written + report.deleted == 0 {
                    // Only put off (Cursor streams into that chat): our database is left as it
                    // was. The next pass looks at the same rows again (a handful: the watermark
                    // stays), and the stored fingerprint is older than the file, so it opens it.
                    // A write here, several a second, woke everything that follows our database.
                    report.status = row.status;
                    return Ok(report);
                }
                let fp = if report.retry_after_ms.is_some() { None } else { fp };
                store.writer().execute(
                    "UPDATE sources SET fingerprint = ?2, watermark = ?3, bytes = ?4, indexed_at = ?5 WHERE id = ?1",
                    params![row.id, fp, watermark, report.bytes as i64, now_ms()],
                )?;
                report.status = row.status;
                return Ok(report);
            }
        }
        SourceKind::Workspace => {
            let db = CursorDb::open(&src.path, scratch)?;
            let dir = src.path.parent().unwrap_or(Path::new(""));
            let w = workspace::read_workspace(&db, dir)?;
            drop(db);
            src_problems.merge(&w.problems);
            write_workspace_membership(store, &w)?;
            let sessions = w.sessions;
            write_all(store, row.id, src.kind, sessions, depth, &mut report)?;
        }
        SourceKind::CliStore => {
            let db = CursorDb::open(&src.path, scratch)?;
            let s = cli::read_store(&db, &src.path)?;
            let sessions: Vec<ParsedSession> = match s {
                Some(s) if !s.is_conversation() => {
                    src_problems.merge(&s.problems);
                    src_problems.add("no_conversation");
                    Vec::new()
                }
                other => other.into_iter().collect(),
            };
            write_all(store, row.id, src.kind, sessions, depth, &mut report)?;
        }
        SourceKind::Transcript => {
            let bytes = std::fs::read(&src.path)
                .map_err(|e| crate::error::Error::io(format!("reading {}", src.path.display()), e))?;
            let text = String::from_utf8_lossy(&bytes);
            let id = src.path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
            let mut s = parse_transcript_session(&id, &text, None, &src.path);
            if let Some(name) = src.project_dir.as_deref() {
                let cursor_home = src.path.ancestors().find(|a| a.ends_with("projects")).and_then(Path::parent);
                let known = known_projects(store)?;
                let p = cli::transcript_project(name, &id, cursor_home, &s.path_hints, &known);
                s.set_project(p, crate::model::ProjectVia::Cwd);
            }
            s.fingerprint = fp.clone().unwrap_or_default();
            let sessions = if s.is_conversation() {
                vec![s]
            } else {
                // Only an error line, or nothing readable: not a chat, and said so.
                src_problems.merge(&s.problems);
                src_problems.add("no_conversation");
                Vec::new()
            };
            write_all(store, row.id, src.kind, sessions, depth, &mut report)?;
        }
        SourceKind::CliMeta => {
            let raw = std::fs::read(&src.path)
                .map_err(|e| crate::error::Error::io(format!("reading {}", src.path.display()), e))?;
            let mut sessions: Vec<ParsedSession> = Vec::new();
            match cli::read_meta_only(&src.path, &raw) {
                Some(s) if s.problems.0.contains_key("bad_json") => src_problems.merge(&s.problems),
                Some(mut s) => {
                    s.fingerprint = fp.clone().unwrap_or_default();
                    sessions.push(s);
                }
                None => src_problems.add("note:no_conversation"),
            }
            write_all(store, row.id, src.kind, sessions, depth, &mut report)?;
        }
        SourceKind::SdkAgent => {
            let db = CursorDb::open(&src.path, scratch)?;
            let r = cursor::sdk::read_index(&db, &src.path, scratch)?;
            drop(db);
            src_problems.merge(&r.problems);
            let sessions: Vec<ParsedSession> = r
                .sessions
                .into_iter()
                .filter(|s| {
                    // An agent with neither messages nor a title is not a chat; what was wrong
                    // with it is still the source's to report (a kept chat's problems are
                    // aggregated from its row).
                    let keep = s.is_conversation() || s.title.is_some();
                    if !keep {
                        src_problems.merge(&s.problems);
                        src_problems.add("no_conversation");
                    }
                    keep
                })
                .collect();
            write_all(store, row.id, src.kind, sessions, depth, &mut report)?;
        }
        SourceKind::ClaudeCode | SourceKind::Codex | SourceKind::Gemini => {
            let mut s = match src.kind {
                SourceKind::ClaudeCode => crate::agents::claude::read(&src.path)?,
                SourceKind::Codex => crate::agents::codex::read(&src.path)?,
                _ => crate::agents::gemini::read(&src.path)?,
            };
            s.fingerprint = fp.clone().unwrap_or_default();
            let sessions = if s.is_conversation() {
                vec![s]
            } else {
                // A file with no dialogue (only snapshots, or nothing readable yet).
                src_problems.merge(&s.problems);
                src_problems.add("note:no_conversation");
                Vec::new()
            };
            write_all(store, row.id, src.kind, sessions, depth, &mut report)?;
        }
        SourceKind::Cloud => {
            let text = std::fs::read_to_string(&src.path)
                .map_err(|e| crate::error::Error::io(format!("reading {}", src.path.display()), e))?;
            let id = src.path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
            let mut s = crate::cloud::parse(&id, &text);
            s.fingerprint = fp.clone().unwrap_or_default();
            src_problems.merge(&s.problems);
            let sessions = if s.is_conversation() { vec![s] } else { Vec::new() };
            write_all(store, row.id, src.kind, sessions, depth, &mut report)?;
        }
    }
    let (reasons, notes) = aggregate_problems(store, row.id, &src_problems)?;
    let status = if reasons.is_empty() { "complete" } else { "partial" };
    // Chats skipped as unreadable are tried again by the next pass, not only once the file changes.
    let fp = if reasons.0.contains_key(UNREADABLE) { None } else { fp };
    report.status = status.into();
    report.reasons = reasons.clone();
    report.notes = notes.clone();
    {
        let conn = store.writer();
        conn.execute(
            "UPDATE sources SET fingerprint = ?2, watermark = ?3, status = ?4, reasons = ?5, notes = ?6, error = NULL,
                    bytes = ?7, indexed_at = ?8 WHERE id = ?1",
            params![row.id, fp, watermark, status, reasons.to_json(), notes.to_json(), report.bytes as i64, now_ms()],
        )?;
    }
    if counts {
        fill_counts(store, row.id, &mut report)?;
    }
    Ok(report)
}

/// Project paths the IDE told us about (workspaces) and that chats already have, for naming the
/// project of a CLI chat whose folder name is lossy.
fn known_projects(store: &Store) -> Result<Vec<String>> {
    store.read(|c| {
        let mut stmt = c.prepare_cached(
            "SELECT project FROM workspaces WHERE project IS NOT NULL
             UNION SELECT DISTINCT project FROM sessions WHERE project IS NOT NULL AND project_via != 'cwd'",
        )?;
        Ok(stmt.query_map([], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?)
    })
}

fn parse_transcript_session(id: &str, text: &str, project: Option<String>, path: &Path) -> ParsedSession {
    let mut s = if path.extension().is_some_and(|x| x == "txt") {
        cursor::transcript::parse_txt(id, text, project)
    } else {
        cli::parse_transcript(id, text, project)
    };
    // Subagents are read nested in their parent; an unreadable one is counted, not fatal.
    let subagents = cli::subagents_of(path);
    for sub in &subagents {
        match std::fs::read(sub) {
            Ok(bytes) => {
                let sub_id = sub.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
                let parsed = cli::parse_transcript(&sub_id, &String::from_utf8_lossy(&bytes), None);
                cursor::transcript::nest_subagent(&mut s, parsed);
            }
            Err(_) => s.problems.add("unreadable_subagent"),
        }
    }
    if !subagents.is_empty() {
        crate::cursor::composer::finish(&mut s);
    }
    let meta = std::fs::metadata(path).ok();
    let ms = |t: Option<std::time::SystemTime>| {
        t.and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok()).map(|d| d.as_millis() as i64)
    };
    s.updated_at = s.updated_at.or_else(|| ms(meta.as_ref().and_then(|m| m.modified().ok())));
    s.created_at = s.created_at.or_else(|| ms(meta.as_ref().and_then(|m| m.created().ok()))).or(s.updated_at);
    s
}

fn fill_counts(store: &Store, source_id: i64, report: &mut SourceReport) -> Result<()> {
    let (s, m) = store.read(|c| {
        Ok(c.query_row(
            "SELECT count(*), coalesce(sum(message_count), 0) FROM sessions WHERE source_id = ?1",
            [source_id],
            |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?)),
        )?)
    })?;
    report.sessions = s as u64;
    report.messages = m as u64;
    let conn = store.writer();
    conn.execute("UPDATE sources SET sessions = ?2, messages = ?3 WHERE id = ?1", params![source_id, s, m])?;
    Ok(())
}

/// Source problems plus the stored problems of its sessions, split into damage and notes.
fn aggregate_problems(store: &Store, source_id: i64, src: &Tally) -> Result<(Tally, Tally)> {
    let mut all = src.clone();
    store.read(|c| {
        let mut stmt = c.prepare("SELECT problems FROM sessions WHERE source_id = ?1 AND problems != '{}'")?;
        for p in stmt.query_map([source_id], |r| r.get::<_, String>(0))? {
            all.merge(&Tally::from_json(&p?));
        }
        let mut stmt = c.prepare("SELECT reason, count(*) FROM skipped WHERE source_id = ?1 GROUP BY reason")?;
        for row in stmt.query_map([source_id], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))? {
            let (reason, n) = row?;
            all.add_n(&reason, n as u64);
        }
        Ok(())
    })?;
    let (mut reasons, mut notes) = (Tally::default(), Tally::default());
    for (k, v) in all.0 {
        match k.strip_prefix("note:") {
            Some(n) => notes.add_n(n, v),
            None => reasons.add_n(&k, v),
        }
    }
    Ok((reasons, notes))
}

fn set_source_status(
    store: &Store,
    src: &Source,
    status: &str,
    reasons: &Tally,
    notes: &Tally,
    error: Option<&str>,
) -> Result<()> {
    let conn = store.writer();
    let row = source_row(&conn, src)?;
    // Clearing the fingerprint makes the next pass retry the file.
    conn.execute(
        "UPDATE sources SET status = ?2, reasons = ?3, notes = ?4, error = ?5, fingerprint = NULL, indexed_at = ?6 WHERE id = ?1",
        params![row.id, status, reasons.to_json(), notes.to_json(), error, now_ms()],
    )?;
    Ok(())
}

fn remove_missing_sources(store: &Store, present: &[&Source]) -> Result<u64> {
    let keep: HashSet<String> = present.iter().map(|s| s.path.to_string_lossy().into_owned()).collect();
    let conn = store.writer();
    let known: Vec<(i64, String)> = {
        let mut stmt = conn.prepare("SELECT id, path FROM sources WHERE status != 'missing'")?;
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?.collect::<rusqlite::Result<_>>()?
    };
    let mut deleted = 0;
    for (id, path) in known.into_iter().filter(|(_, p)| !keep.contains(p)) {
        deleted += delete_sessions(&conn, "s.source_id = ?1", [id])?;
        conn.execute(
            "UPDATE sources SET status = 'missing', fingerprint = NULL, watermark = NULL, sessions = 0, messages = 0 WHERE id = ?1",
            [id],
        )?;
        tracing::info!(%path, "source disappeared");
    }
    Ok(deleted)
}

/// A global DB read for the first time (a first start, or after a migration that re-reads all):
/// every chat it holds is listed before any other source is read (see `run_sources`).
fn list_global(store: &Store, src: &Source, scratch: &Path, progress: ProgressFn<'_>) -> Result<()> {
    let row = source_row(&store.writer(), src)?;
    if row.watermark.is_some() {
        return Ok(());
    }
    let known = stored_chats(store, row.id)?;
    let db = CursorDb::open(&src.path, scratch)?;
    // What is wrong in it is counted once, by the full read.
    let composers = global::list_composers(&db, &mut Tally::default(), None)?;
    let (listed, _) = list_first(store, &db, row.id, composers.values().filter(|r| !known.contains_key(&r.id)))?;
    if listed > 0 {
        progress(&Progress::Listed { sessions: listed });
    }
    Ok(())
}

/// Every chat of a source we hold, read or skipped, with its fingerprint and time (skipped
/// composers have no time).
fn stored_chats(store: &Store, source_id: i64) -> Result<HashMap<String, (String, Option<i64>)>> {
    store.read(|c| {
        let mut stmt = c.prepare(
            // A chat read once and unreadable now has both rows: the skipped one (without a
            // fingerprint) decides, so that it is read again.
            "SELECT id, coalesce(fingerprint, ''), coalesce(updated_at, created_at) FROM sessions
             WHERE source_id = ?1 AND id NOT IN (SELECT id FROM skipped WHERE source_id = ?1)
             UNION ALL SELECT id, fingerprint, NULL FROM skipped WHERE source_id = ?1",
        )?;
        let rows = stmt.query_map([source_id], |r| Ok((r.get(0)?, (r.get(1)?, r.get(2)?))))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    })
}

/// What a pass over a global DB remembers for the next one, in this process: the listing it
/// made (composers with their headers) and what it looked at, so that a quick pass while Cursor
/// writes costs what changed, not what the history holds. Keyed by our store and Cursor's file.
struct Listing {
    /// [`global::listing_marks`] when the listing was made: unchanged, only the composers whose
    /// rows are above the watermark can have changed.
    marks: (i64, i64),
    composers: BTreeMap<String, ComposerRef>,
    /// When each composer was last read by a quick pass, and the ones put off: a chat Cursor
    /// streams an answer into is read at most every [`STREAM_EVERY`].
    read_at: HashMap<String, Instant>,
    put_off: HashSet<String>,
}

static LISTINGS: std::sync::LazyLock<std::sync::Mutex<HashMap<(std::path::PathBuf, std::path::PathBuf), Listing>>> =
    std::sync::LazyLock::new(Default::default);

/// How often a chat that changes continuously (Cursor streaming an answer into it) is read again.
/// A change to any other chat is read at once, and the chat itself once the stream stops
/// ([`streams_stopped`]). Each read of the streaming chat is about half of what following a
/// stream costs: 750 ms keeps that under 2 % of a core and a streamed word searchable within 1 s.
pub const STREAM_EVERY: std::time::Duration = std::time::Duration::from_millis(750);

/// Cursor went quiet (the watcher heard nothing for a moment): the chats put off are read by the
/// next pass, not when their `STREAM_EVERY` is up. An answer that finished is searchable whole
/// at once.
pub fn streams_stopped(sources: &[Source]) {
    let mut memo = LISTINGS.lock().unwrap_or_else(|p| p.into_inner());
    for ((_, path), l) in memo.iter_mut() {
        if !sources.iter().any(|s| s.path == *path) {
            continue;
        }
        for id in &l.put_off {
            l.read_at.remove(id);
        }
    }
}

/// The composers a quick pass reads when the listing it remembers still holds (`None`: it does
/// not, list everything): those whose rows were written above `watermark`, and those put off
/// before; a composer read less than [`STREAM_EVERY`] ago is put off again, and the report says
/// when to come back (`retry_after_ms`).
fn changed_composers(
    key: &(std::path::PathBuf, std::path::PathBuf),
    db: &CursorDb,
    marks: Option<(i64, i64)>,
    (watermark, touched, max): (i64, Vec<String>, i64),
    report: &mut SourceReport,
) -> Result<Option<BTreeMap<String, ComposerRef>>> {
    let mut memo = LISTINGS.lock().unwrap_or_else(|p| p.into_inner());
    let Some(l) = memo.get_mut(key) else { return Ok(None) };
    if marks != Some(l.marks) {
        return Ok(None);
    }
    // A lower max rowid means rows were deleted and rowids may be reused: look at everything.
    if max < watermark {
        return Ok(None);
    }
    let now = Instant::now();
    let mut ids: Vec<String> = touched;
    ids.extend(l.put_off.drain());
    ids.sort();
    ids.dedup();
    let mut out = BTreeMap::new();
    for id in ids {
        if let Some(at) = l.read_at.get(&id)
            && now.duration_since(*at) < STREAM_EVERY
        {
            let wait = STREAM_EVERY - now.duration_since(*at);
            let ms = wait.as_millis() as u64 + 1;
            report.retry_after_ms = Some(report.retry_after_ms.map_or(ms, |m| m.min(ms)));
            l.put_off.insert(id);
            continue;
        }
        let mut r = l.composers.get(&id).cloned().unwrap_or_else(|| ComposerRef::new(&id));
        r.head = global::head_of(db, &id)?;
        // No row of its own and no header: gone, or bubbles alone; the next full listing decides.
        if r.head.is_none() && r.header.is_none() {
            continue;
        }
        l.read_at.insert(id.clone(), now);
        l.composers.insert(id.clone(), r.clone());
        out.insert(id, r);
    }
    l.read_at.retain(|_, at| now.duration_since(*at) < STREAM_EVERY);
    Ok(Some(out))
}

/// [`stored_chats`] of some chats only.
fn stored_chats_of<'a>(
    store: &Store,
    source_id: i64,
    ids: impl Iterator<Item = &'a String>,
) -> Result<HashMap<String, (String, Option<i64>)>> {
    store.read(|c| {
        let mut skipped = c.prepare_cached("SELECT fingerprint FROM skipped WHERE source_id = ?1 AND id = ?2")?;
        let mut session = c.prepare_cached(
            "SELECT coalesce(fingerprint, ''), coalesce(updated_at, created_at) FROM sessions
             WHERE source_id = ?1 AND id = ?2",
        )?;
        let mut out = HashMap::new();
        for id in ids {
            if let Some(fp) = skipped.query_row(params![source_id, id], |r| r.get::<_, String>(0)).optional()? {
                out.insert(id.clone(), (fp, None));
            } else if let Some(row) =
                session.query_row(params![source_id, id], |r| Ok((r.get(0)?, r.get(1)?))).optional()?
            {
                out.insert(id.clone(), row);
            }
        }
        Ok(out)
    })
}

#[allow(clippy::too_many_arguments)]
fn index_global(
    store: &Store,
    src: &Source,
    source_id: i64,
    old_watermark: Option<i64>,
    scratch: &Path,
    depth: Depth,
    progress: ProgressFn<'_>,
    report: &mut SourceReport,
    problems: &mut Tally,
) -> Result<(i64, bool)> {
    // The watcher's passes come several a second while Cursor streams: the connection the last
    // one kept is used again (see `CursorDb::open_kept`).
    let db = CursorDb::open_kept(&src.path, scratch)?;
    // Kept only by the watcher's quick passes, whose thread closes it once quiet; a whole pass
    // (the first index, a re-index) has nobody to close it after.
    let keep = |db: CursorDb| {
        if depth == Depth::Quick {
            db.keep();
        }
    };
    // The high-water mark is taken before anything is read: a row committed while this pass
    // runs is then above it, so the next quick pass looks at its chat. Taken after the listing
    // (as it was), a bubble committed in between was below the mark and in no listing, and its
    // chat stayed a message short until it changed again. So are the listing's marks.
    // The marks and the rows written since the last pass, in one short read transaction: each
    // statement alone is a lock taken and Cursor's changed pages read again, several a second
    // while Cursor streams.
    let (watermark, marks, touched) = db.in_one_read(|| {
        let watermark = db.max_rowid(cursor::sqlite::Table::CursorDiskKv)?;
        let marks = global::listing_marks(&db)?;
        let touched = match (depth, old_watermark) {
            (Depth::Quick, Some(w)) => Some((w, global::touched_since(&db, w)?)),
            _ => None,
        };
        Ok((watermark, marks, touched))
    })?;
    let memo_key = (store.path().to_owned(), src.path.clone());
    let changed = match &touched {
        Some((w, (ids, max))) => changed_composers(&memo_key, &db, marks, (*w, ids.clone(), *max), report)?,
        None => None,
    };
    let fast = changed.is_some();
    if changed.as_ref().is_some_and(BTreeMap::is_empty) {
        // Nothing to read (the chat Cursor streams into put off, several times a second): none
        // of our database is looked at either.
        keep(db);
        return Ok((watermark, true));
    }
    let stored = match &changed {
        Some(c) => stored_chats_of(store, source_id, c.keys())?,
        None => stored_chats(store, source_id)?,
    };
    let known: HashMap<&str, &str> = stored.iter().map(|(id, (fp, _))| (id.as_str(), fp.as_str())).collect();
    let (composers, tabs) = match changed {
        // Nothing else can have changed: the headers and the old chat tabs are as listed.
        Some(c) => (c, Vec::new()),
        None => {
            // A quick pass trusts the heads it read before (see `list_composers`).
            let known_head = |id: &str| known.get(id).and_then(|fp| parse_head(fp));
            let quick = depth == Depth::Quick && old_watermark.is_some();
            let composers =
                global::list_composers(&db, problems, quick.then_some(&known_head as &global::KnownHead<'_>))?;
            if let Some(marks) = marks {
                let mut memo = LISTINGS.lock().unwrap_or_else(|p| p.into_inner());
                let read_at = memo.remove(&memo_key).map(|l| l.read_at).unwrap_or_default();
                memo.insert(
                    memo_key.clone(),
                    Listing { marks, composers: composers.clone(), read_at, put_off: HashSet::new() },
                );
            }
            (composers, global::read_global_chat_tabs(&db, problems)?)
        }
    };
    let tab_ids: HashSet<String> = tabs.iter().map(|t| t.id.clone()).collect();
    // Before any message is read, every chat we have no row for is listed (on a first read,
    // `list_global` did so already, ahead of the other sources).
    let new = composers.values().filter(|r| !known.contains_key(r.id.as_str()));
    let (listed, mut times) = list_first(store, &db, source_id, new)?;
    if listed > 0 {
        progress(&Progress::Listed { sessions: listed });
    }
    for (id, (_, t)) in &stored {
        if let Some(t) = t {
            times.entry(id.clone()).or_insert(*t);
        }
    }

    // Which composers to fingerprint at all.
    let quick_candidates: Option<HashSet<String>> = match (depth, old_watermark) {
        _ if fast => Some(composers.keys().cloned().collect()),
        (Depth::Quick, Some(w)) => {
            let (touched, max) = touched.map(|(_, t)| t).unwrap_or_default();
            // A lower max rowid means rows were deleted and rowids may be reused: look deeper.
            (max >= w).then(|| touched.into_iter().collect())
        }
        _ => None,
    };
    // Stats of every chat's bubbles (a scan of every bubble key, ~7 s at 5 GB) are needed only to
    // tell which chats changed. A chat never read (all of them on a first start) is read anyway:
    // its stats are taken just before it is read (`stats_then_read`), so the newest chats become
    // searchable without waiting for the whole scan.
    let any_read = known.values().any(|fp| !fp.is_empty());
    let stats_all = if quick_candidates.is_none() && any_read { Some(global::bubble_stats_all(&db)?) } else { None };

    let mut todo: Vec<Todo> = Vec::new();
    for (id, r) in &composers {
        if fast {
            // A composer whose rows were written since the last pass: it most likely changed.
            // Its stats are taken as it is read, on the reader's thread (`stats_then_read`), and
            // an unchanged one is not written (`write_session` compares fingerprints).
            todo.push(Todo {
                r: r.clone(),
                fp: None,
                bytes: Todo::bytes(r, 0),
                time: Todo::time(r, &times),
                held: known.get(id.as_str()).is_some_and(|fp| !fp.is_empty()),
                again: true,
            });
            continue;
        }
        let stats = match (&stats_all, &quick_candidates) {
            (Some(all), _) => all.get(id).copied().unwrap_or_default(),
            (None, None) => {
                let held = known.get(id.as_str()).is_some_and(|fp| !fp.is_empty());
                todo.push(Todo {
                    r: r.clone(),
                    fp: None,
                    bytes: Todo::bytes(r, 0),
                    time: Todo::time(r, &times),
                    held,
                    again: fast,
                });
                continue;
            }
            (None, Some(cands)) => {
                // New composers are read whatever rows they wrote (one listed from a header alone
                // has none); known ones when their own row changed in place or a bubble was added.
                let head_changed = known.get(id.as_str()).is_none_or(|k| !k.starts_with(&head_prefix(r)));
                if !head_changed && !cands.contains(id) {
                    continue;
                }
                global::bubble_stats_one(&db, id)?
            }
        };
        let fp = r.fingerprint(stats);
        if depth == Depth::Force || known.get(id.as_str()) != Some(&fp.as_str()) {
            let held = known.get(id.as_str()).is_some_and(|fp| !fp.is_empty());
            todo.push(Todo {
                r: r.clone(),
                fp: Some(fp),
                bytes: Todo::bytes(r, stats.2),
                time: Todo::time(r, &times),
                held,
                again: fast,
            });
        }
    }
    // Newest first: the chats someone most likely wants are searchable first. Ids still follow
    // time, whatever the order (see `message_id_base`). Without a time, the row's rowid stands
    // in: Cursor replaces the row on each update.
    todo.sort_by_key(|t| std::cmp::Reverse((t.time, t.r.head.map(|h| h.0))));
    let present: HashSet<&str> = composers.keys().map(String::as_str).collect();
    let total = todo.len() as u64;
    let mut bytes_total: u64 = todo.iter().map(|t| t.bytes).sum();
    if !fast && todo.iter().any(|t| t.fp.is_none()) {
        // Bubbles not measured yet: the file's size stands in (the meter corrects it as it reads).
        bytes_total = bytes_total.max(std::fs::metadata(&src.path).map_or(0, |m| m.len()));
    }
    if bytes_total >= test_hooks::bulk_bytes().unwrap_or(BULK_BYTES) {
        // Put back, and the segments merged, at the end of the run (`run_sources`).
        defer_merging(&store.writer(), true)?;
        store.bulk_cache(true)?;
    }

    // Parse on one thread while this one writes: JSON decoding and FTS insertion overlap.
    struct Item {
        session: Option<(ParsedSession, Option<Vec<String>>)>,
        hints: Vec<String>,
        note: &'static str,
        id: String,
        fp: String,
        bytes: u64,
    }
    let (tx, rx) = std::sync::mpsc::sync_channel::<Result<Item>>(64);
    // A pass with nothing to read (the chat Cursor streams into put off) takes no thread, no
    // read of our projects and no transaction of ours.
    let nothing = todo.is_empty() && tabs.is_empty();
    let (written_ids, unreadable) = if nothing {
        keep(db);
        Default::default()
    } else {
        std::thread::scope(|scope| -> Result<(HashSet<String>, HashSet<String>)> {
            let todo_ref = &todo;
            // The reader hands the connection back when it is done, to be kept for the next pass.
            let reader = scope.spawn(move || {
                for t in todo_ref {
                    let read = test_hooks::unreadable(&t.r.id).map_or_else(|| stats_then_read(&db, t), Err);
                    let (session, hints, note, fp, bytes) = match read {
                        Ok((ComposerRead::Session(mut s, hints), fp, bytes)) => {
                            s.fingerprint = fp.clone();
                            // A chat read before adds only the terms of what changed in it, which
                            // the writer knows (`write_session`); a new one's are all of them,
                            // computed here beside the writer.
                            let terms = (!t.held).then(|| Vocabulary::of_session(&s));
                            (Some((*s, terms)), hints, "", fp, bytes)
                        }
                        Ok((ComposerRead::Skipped(note), fp, bytes)) => (None, Vec::new(), note, fp, bytes),
                        // A composer on a damaged page of Cursor's DB is skipped and counted; the
                        // chats behind it are still read. Without a fingerprint it is tried again by
                        // the next pass (the source keeps none either, see `index_source`).
                        Err(e) if is_damage(&e) => {
                            tracing::warn!(composer = %t.r.id, error = %e, "unreadable composer skipped");
                            (None, Vec::new(), UNREADABLE, String::new(), t.bytes)
                        }
                        // Anything else (the DB locked, gone, an I/O error) ends the pass as before:
                        // the source is marked in error and read again whole.
                        Err(e) => {
                            let _ = tx.send(Err(e));
                            return None;
                        }
                    };
                    let item = Item { session, hints, note, id: t.r.id.clone(), fp, bytes };
                    if tx.send(Ok(item)).is_err() {
                        return None;
                    }
                }
                Some(db)
            });
            let mut seen = HashSet::new();
            let mut unreadable = HashSet::new();
            let mut meter = Meter::new(total, bytes_total);
            let mut ctx = WriteCtx::new(store)?;
            let mut batch: Option<Batch<'_>> = None;
            let (mut batch_bytes, mut batch_len) = (0u64, 0usize);
            // Items come newest first, so ids grow inside each transaction (see `message_id_base`):
            // FTS5 starts a new segment whenever a rowid goes down inside one.
            for item in rx {
                let Item { session, hints, note, id, fp, bytes } = item?;
                meter.add(bytes);
                let txn = Batch::open(&mut batch, store)?;
                match session {
                    Some((s, terms)) => {
                        seen.insert(s.id.clone());
                        txn.prepare_cached("DELETE FROM skipped WHERE source_id = ?1 AND id = ?2")?
                            .execute(params![source_id, id])?;
                        let sid = s.id.clone();
                        if write_session(txn, &mut ctx, source_id, SourceKind::Global, s, &hints, terms)? {
                            report.written += 1;
                            report.changed.push(sid);
                        }
                    }
                    None => {
                        if note == UNREADABLE {
                            unreadable.insert(id.clone());
                        }
                        txn.prepare_cached(
                        "INSERT INTO skipped(source_id, id, fingerprint, reason) VALUES (?1, ?2, ?3, ?4)
                         ON CONFLICT(source_id, id) DO UPDATE SET fingerprint = excluded.fingerprint, reason = excluded.reason",
                    )?
                    .execute(params![source_id, id, fp, note])?;
                        // A chat listed up front that turns out empty, a draft or a subagent's.
                        txn.prepare_cached("DELETE FROM sessions WHERE id = ?1 AND source_id = ?2 AND searchable = 0")?
                            .execute(params![id, source_id])?;
                    }
                }
                batch_bytes += bytes;
                batch_len += 1;
                if batch_len >= test_hooks::batch_sessions() || batch_bytes >= BATCH_BYTES {
                    if let Some(b) = batch.take() {
                        b.commit()?;
                    }
                    test_hooks::committed();
                    progress(&meter.progress());
                    (batch_len, batch_bytes) = (0, 0);
                }
            }
            let txn = Batch::open(&mut batch, store)?;
            for s in tabs {
                seen.insert(s.id.clone());
                let sid = s.id.clone();
                if write_session(txn, &mut ctx, source_id, SourceKind::Global, s, &[], None)? {
                    report.written += 1;
                    report.changed.push(sid);
                }
            }
            if let Some(b) = batch.take() {
                b.commit()?;
            }
            progress(&meter.progress());
            if let Ok(Some(db)) = reader.join() {
                keep(db);
            }
            Ok((seen, unreadable))
        })?
    };

    // What a chat that can no longer be read had stays as it was.
    let skipped_now: HashSet<&str> = todo
        .iter()
        .map(|t| t.r.id.as_str())
        .filter(|id| !written_ids.contains(*id) && !unreadable.contains(*id))
        .collect();
    let conn = store.writer();
    if fast {
        // Only the chats read: ones now skipped lose their sessions; chats that left Cursor are
        // the next full listing's to find.
        for id in skipped_now {
            let n = delete_sessions(&conn, "s.id = ?1 AND s.source_id = ?2", params![id, source_id])?;
            if n > 0 {
                report.deleted += n;
                report.changed.push(id.to_owned());
            }
        }
        return Ok((watermark, true));
    }
    // Remove sessions that left Cursor, and ones we now skip (emptied, turned draft).
    let stored: Vec<String> = {
        let mut stmt = conn.prepare("SELECT id FROM sessions WHERE source_id = ?1")?;
        stmt.query_map([source_id], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?
    };
    let gone_skipped: Vec<String> = {
        let mut stmt = conn.prepare("SELECT id FROM skipped WHERE source_id = ?1")?;
        stmt.query_map([source_id], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?
    };
    for id in gone_skipped.iter().filter(|id| !present.contains(id.as_str())) {
        conn.execute("DELETE FROM skipped WHERE source_id = ?1 AND id = ?2", params![source_id, id])?;
    }
    for id in stored {
        if (!present.contains(id.as_str()) && !tab_ids.contains(&id)) || skipped_now.contains(id.as_str()) {
            let n = delete_sessions(&conn, "s.id = ?1 AND s.source_id = ?2", params![id, source_id])?;
            if n > 0 {
                report.deleted += n;
                report.changed.push(id);
            }
        }
    }
    Ok((watermark, false))
}

/// The `skipped` reason of a composer whose rows could not be read.
const UNREADABLE: &str = "unreadable";

/// Whether an error reading Cursor's DB means damaged data (skip that chat) rather than a DB
/// that cannot be read right now (end the pass, try again).
fn is_damage(e: &crate::error::Error) -> bool {
    matches!(e, crate::error::Error::Sql(rusqlite::Error::SqliteFailure(f, _))
        if matches!(f.code, rusqlite::ErrorCode::DatabaseCorrupt | rusqlite::ErrorCode::NotADatabase))
}

/// A pass that reads this much of Cursor's JSON defers FTS5's merging of its segments until every
/// chat it reads is searchable (`defer_merging`).
const BULK_BYTES: u64 = 64 << 20;

/// FTS5 merges its segments as it writes (automerge), ~4 s of the writer's ~22 s on a first index
/// of the 1 GB benchmark set (perf, 2026-11-24). A bulk pass turns that off (and the crisis merge
/// up); the end of every run turns it back on and merges (`merge_deferred`), once the chats are
/// searchable. The setting is stored with the FTS table, so a run after a killed one restores it.
/// Returns whether bulk settings were in place before.
fn defer_merging(conn: &Connection, bulk: bool) -> Result<bool> {
    let automerge: Option<i64> =
        conn.query_row("SELECT v FROM messages_fts_config WHERE k = 'automerge'", [], |r| r.get(0)).optional()?;
    let was_bulk = automerge == Some(0);
    if was_bulk != bulk {
        let (automerge, crisismerge) = if bulk { (0, 64) } else { (4, 16) };
        conn.execute("INSERT INTO messages_fts(messages_fts, rank) VALUES ('automerge', ?1)", [automerge])?;
        conn.execute("INSERT INTO messages_fts(messages_fts, rank) VALUES ('crisismerge', ?1)", [crisismerge])?;
    }
    Ok(was_bulk)
}

/// Merges the segments a bulk pass left into one, a slice per transaction so that the daemon's
/// other writes get their turn between slices. Search works throughout, a little slower until done.
///
/// Into one, not only until no level holds `usermerge` (4) segments (`'merge', 500`, as before):
/// that left FTS5 a debt it paid while Cursor streamed. On the 5 GB benchmark set a first index
/// ended with 16 segments; some 150 of the watcher's small writes later, one of them (a crisis
/// merge, whole levels at once) took 37 s of CPU in a single transaction, the watcher stalled.
/// Merging into one (`'merge', -500`: FTS5's optimize, in slices) cost 20 s of CPU there at the
/// end of the first index, and the watcher's writes after it 0.4–0.5 ms each with none over
/// 3 ms (sqlite3 on a copy of that index; `docs/benchmarks.md`).
fn merge_deferred(store: &Store) -> Result<()> {
    loop {
        let conn = store.writer();
        let before = conn.total_changes();
        conn.execute("INSERT INTO messages_fts(messages_fts, rank) VALUES ('merge', -500)", [])?;
        // Fewer than two changes: nothing was left to merge (FTS5's documented test).
        if conn.total_changes() - before < 2 {
            return Ok(());
        }
    }
}

/// A composer's read, with its fingerprint and bytes: those of the listing, or for a composer
/// listed without its bubbles' stats, the stats taken just before the read.
fn stats_then_read(db: &CursorDb, t: &Todo) -> Result<(ComposerRead, String, u64)> {
    let read = || {
        let (fp, bytes) = match &t.fp {
            Some(fp) => (fp.clone(), t.bytes),
            None => {
                // A chat read again and again (Cursor streaming into it): the lengths of its
                // bubbles are remembered by rowid, not each row visited again.
                let stats = if t.again {
                    global::bubble_stats_again(db, &t.r.id)?
                } else {
                    global::bubble_stats_one(db, &t.r.id)?
                };
                (t.r.fingerprint(stats), Todo::bytes(&t.r, stats.2))
            }
        };
        Ok((global::read_composer_again(db, &t.r, t.again)?, fp, bytes))
    };
    // A chat read a moment ago is read again in one short read transaction (its bubbles' keys
    // and the few rows that changed): one lock, not one per look-up, and Cursor's pages read
    // once. Any other chat may be big: a page per statement (`CursorDb::paged`).
    if t.again && global::read_lately(db, &t.r.id) { db.in_one_read(read) } else { read() }
}

/// A composer to read: what we listed, its new fingerprint (`None`: taken as it is read), its
/// bytes in Cursor's DB (for the ETA; the head's alone until then) and its time (for the order).
struct Todo {
    r: ComposerRef,
    fp: Option<String>,
    bytes: u64,
    time: Option<i64>,
    /// We hold a read of it already.
    held: bool,
    /// Read by a quick pass of the watcher: a chat that may be read again in a moment.
    again: bool,
}

impl Todo {
    /// A composer's bytes in Cursor's DB: its own row and `bubbles` bytes of bubbles.
    fn bytes(r: &ComposerRef, bubbles: i64) -> u64 {
        (r.head.map_or(0, |h| h.1) + bubbles).max(0) as u64
    }

    /// A composer's time: its header's, else the one we stored for its chat.
    fn time(r: &ComposerRef, stored: &HashMap<String, i64>) -> Option<i64> {
        r.header.as_ref().and_then(|h| h.updated_at.or(h.created_at)).or_else(|| stored.get(&r.id).copied())
    }
}

/// A transaction of the first index holds at most this many chats or bytes of Cursor's JSON:
/// small enough that the newest chats are searchable within a second and memory stays flat, big
/// enough that FTS5 writes few segments.
const BATCH_SESSIONS: usize = 256;
const BATCH_BYTES: u64 = 32 << 20;

/// One transaction of a pass, holding the writer only while it is open: between batches the
/// daemon's other writes (tags, tasks, signals) get their turn instead of waiting for the whole
/// pass. Rolled back when dropped uncommitted (an error midway).
struct Batch<'a> {
    conn: std::sync::MutexGuard<'a, Connection>,
    open: bool,
}

impl<'a> Batch<'a> {
    /// The open batch, or a new one.
    fn open<'b>(batch: &'b mut Option<Self>, store: &'a Store) -> Result<&'b mut Self> {
        Ok(match batch {
            Some(b) => b,
            None => batch.insert(Self::begin(store)?),
        })
    }

    fn begin(store: &'a Store) -> Result<Self> {
        let conn = store.writer();
        conn.execute_batch("BEGIN")?;
        Ok(Self { conn, open: true })
    }

    fn commit(mut self) -> Result<()> {
        self.conn.execute_batch("COMMIT")?;
        self.open = false;
        Ok(())
    }
}

impl std::ops::Deref for Batch<'_> {
    type Target = Connection;
    fn deref(&self) -> &Connection {
        &self.conn
    }
}

impl Drop for Batch<'_> {
    fn drop(&mut self) {
        if self.open {
            let _ = self.conn.execute_batch("ROLLBACK");
        }
    }
}

/// Counts what was read and extrapolates the rest.
struct Meter {
    t0: Instant,
    done: u64,
    total: u64,
    bytes_done: u64,
    bytes_total: u64,
}

impl Meter {
    fn new(total: u64, bytes_total: u64) -> Self {
        Self { t0: Instant::now(), done: 0, total, bytes_done: 0, bytes_total }
    }

    fn add(&mut self, bytes: u64) {
        self.done += 1;
        self.bytes_done += bytes;
    }

    fn progress(&self) -> Progress {
        let elapsed = self.t0.elapsed().as_millis() as u64;
        // The total may be an estimate (`index_global`): once every chat is read it is what was read.
        let bytes_total = if self.done >= self.total { self.bytes_done } else { self.bytes_total.max(self.bytes_done) };
        let eta_ms = (self.bytes_done > 0 && elapsed > 0).then(|| {
            let left = bytes_total.saturating_sub(self.bytes_done) as u128;
            (elapsed as u128 * left / self.bytes_done as u128) as u64
        });
        Progress::Sessions { done: self.done, total: self.total, bytes_done: self.bytes_done, bytes_total, eta_ms }
    }
}

/// Lists chats before any is read: a row (title, dates, project; not searchable yet) for each
/// composer we have no row for, so a first start shows every chat at once. Returns how many rows
/// it added and each listed composer's time, for the newest-first order.
fn list_first<'a>(
    store: &Store,
    db: &CursorDb,
    source_id: i64,
    composers: impl Iterator<Item = &'a ComposerRef>,
) -> Result<(u64, HashMap<String, i64>)> {
    let composers: Vec<&ComposerRef> = composers.collect();
    let (mut added, mut times) = (0, HashMap::new());
    if composers.is_empty() {
        return Ok((added, times));
    }
    let mut ctx = WriteCtx::new(store)?;
    let mut conn = store.writer();
    let txn = conn.transaction()?;
    for r in composers {
        // A 3.x header has all the list shows; older DBs need a look at the composer's own row.
        let listed = r.header.as_ref().filter(|h| h.name.is_some() && h.updated_at.is_some());
        let head = match listed {
            Some(h) => Some(global::ComposerHead { info: h.clone(), bubbles: 0, inline: false, skip: h.subagent }),
            None => global::read_head(db, r)?,
        };
        let Some(head) = head else { continue };
        if let Some(t) = head.info.updated_at.or(head.info.created_at) {
            times.insert(r.id.clone(), t);
        }
        if !head.skip && write_placeholder(&txn, &mut ctx, source_id, global::listed_session(&r.id, &head))? {
            added += 1;
        }
    }
    txn.commit()?;
    drop(conn);
    // A listing that found nothing new to list (only chats it skips) is no step of a first index.
    if added > 0 {
        test_hooks::committed();
    }
    Ok((added, times))
}

/// A listed chat's row, unless the chat is stored already.
fn write_placeholder(conn: &Connection, ctx: &mut WriteCtx, source_id: i64, mut s: ParsedSession) -> Result<bool> {
    attribute_project(conn, ctx, &mut s, &[])?;
    let n = conn
        .prepare_cached(
            "INSERT INTO sessions(id, source_id, origin, format, title, project, project_via, workspace_id, mode,
                                  created_at, updated_at, archived, searchable)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, 0) ON CONFLICT(id) DO NOTHING",
        )?
        .execute(params![
            s.id,
            source_id,
            s.origin,
            s.format,
            s.title,
            s.project,
            s.project_via.as_str(),
            s.workspace_id,
            s.mode,
            s.created_at,
            s.updated_at,
            s.archived
        ])?;
    if n > 0 {
        conn.prepare_cached("INSERT INTO titles_fts(rowid, title) VALUES (?1, ?2)")?
            .execute(params![conn.last_insert_rowid(), s.title.as_deref().unwrap_or("")])?;
        // A prefix query finds the title before the chat is read (see `terms`).
        ctx.vocab.add_text(s.title.as_deref().unwrap_or(""));
        ctx.vocab.flush(conn)?;
    }
    Ok(n > 0)
}

/// The time a chat's messages are filed under: its last activity.
fn session_time(s: &ParsedSession) -> Option<i64> {
    s.updated_at.or(s.created_at)
}

/// Where the ids of a chat's new messages start: the minutes from its time (never in the future;
/// an unknown time counts as the oldest) to the year 10 000, shifted left 20 bits. Ids thus follow
/// real time across sources and indexing order, newest lowest, with room for a million messages
/// a minute. Newest lowest because the first index goes newest first: its ids only grow, so
/// every B-tree (messages, FTS5's doclists and docsizes) is appended to. Minutes, not finer: FTS5
/// stores the gap between two ids of a doclist as a varint, and seconds << 31 made the first index
/// of the 1 GB set 17 % slower than ids in indexing order (docs/benchmarks.md, notes).
fn message_id_base(time_ms: Option<i64>, now_ms: i64) -> i64 {
    const MAX_MINUTES: i64 = 4_200_000_000;
    let minutes = time_ms.unwrap_or(0).clamp(0, now_ms.max(0)) / 60_000;
    (MAX_MINUTES - minutes.min(MAX_MINUTES)) << 20
}

/// For kill -9 tests, which need to stop a first index at known points: with
/// `TETHER_TEST_PAUSE_AFTER_BATCHES=n`, after its n-th commit (1 = the listing, then each batch
/// of chats) the process creates the file `TETHER_TEST_PAUSE_MARKER` and waits to be killed;
/// `TETHER_TEST_BATCH_SESSIONS` makes batches small enough for a small fixture to have several;
/// `TETHER_TEST_BULK_BYTES` makes a small pass a bulk one (`defer_merging`);
/// `TETHER_TEST_UNREADABLE` fails the read of one composer.
mod test_hooks {
    use std::sync::OnceLock;
    use std::sync::atomic::{AtomicU64, Ordering};

    fn var(name: &str) -> Option<u64> {
        std::env::var(name).ok()?.parse().ok()
    }

    pub(super) fn batch_sessions() -> usize {
        static N: OnceLock<Option<u64>> = OnceLock::new();
        N.get_or_init(|| var("TETHER_TEST_BATCH_SESSIONS")).map_or(super::BATCH_SESSIONS, |n| n.max(1) as usize)
    }

    /// `TETHER_TEST_UNREADABLE`: a composer id whose read fails as a damaged DB page would.
    pub(super) fn unreadable(id: &str) -> Option<crate::error::Error> {
        static ID: OnceLock<Option<String>> = OnceLock::new();
        let bad = ID.get_or_init(|| std::env::var("TETHER_TEST_UNREADABLE").ok());
        (bad.as_deref() == Some(id)).then(|| {
            let code = rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_CORRUPT);
            rusqlite::Error::SqliteFailure(code, Some("database disk image is malformed (test hook)".into())).into()
        })
    }

    /// `TETHER_TEST_BULK_BYTES`: the size from which a pass defers FTS5 merging.
    pub(super) fn bulk_bytes() -> Option<u64> {
        static N: OnceLock<Option<u64>> = OnceLock::new();
        *N.get_or_init(|| var("TETHER_TEST_BULK_BYTES"))
    }

    pub(super) fn committed() {
        static PAUSE_AT: OnceLock<Option<u64>> = OnceLock::new();
        static COMMITTED: AtomicU64 = AtomicU64::new(0);
        let Some(at) = *PAUSE_AT.get_or_init(|| var("TETHER_TEST_PAUSE_AFTER_BATCHES")) else {
            return;
        };
        if COMMITTED.fetch_add(1, Ordering::SeqCst) + 1 == at {
            if let Some(marker) = std::env::var_os("TETHER_TEST_PAUSE_MARKER") {
                let _ = std::fs::write(marker, at.to_string());
            }
            loop {
                std::thread::sleep(std::time::Duration::from_secs(60));
            }
        }
    }
}

/// Deletes sessions (`DELETE FROM sessions WHERE <cond>`) and then the words only they held, so
/// deleted text leaves `fts_terms` too. Returns how many sessions went.
fn delete_sessions(conn: &Connection, cond: &str, args: impl rusqlite::Params + Clone) -> Result<u64> {
    let mut words = Forget::default();
    {
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT m.text FROM messages m JOIN sessions s ON s.id = m.session_id WHERE {cond}
             UNION ALL SELECT coalesce(s.title, '') FROM sessions s WHERE {cond}"
        ))?;
        let mut rows = stmt.query(args.clone())?;
        while let Some(r) = rows.next()? {
            words.add(r.get_ref(0)?.as_str().unwrap_or(""));
        }
    }
    let n = conn.prepare_cached(&format!("DELETE FROM sessions AS s WHERE {cond}"))?.execute(args)? as u64;
    if n > 0 {
        words.apply(conn)?;
    }
    Ok(n)
}

/// The `(rowid, length)` of a composer's own row, from its fingerprint (`head_prefix`).
fn parse_head(fp: &str) -> Option<(i64, i64)> {
    let mut parts = fp.splitn(3, '.');
    let hex = |p: Option<&str>| p.and_then(|v| u64::from_str_radix(v, 16).ok()).map(|v| v as i64);
    Some((hex(parts.next())?, hex(parts.next())?))
}

/// The part of a composer fingerprint that comes from its own row.
fn head_prefix(r: &ComposerRef) -> String {
    let (rowid, len) = r.head.unwrap_or((-1, -1));
    format!("{rowid:x}.{len:x}.")
}

fn write_all(
    store: &Store,
    source_id: i64,
    kind: SourceKind,
    sessions: Vec<ParsedSession>,
    depth: Depth,
    report: &mut SourceReport,
) -> Result<()> {
    let mut ctx = WriteCtx::new(store)?;
    let mut conn = store.writer();
    let txn = conn.transaction()?;
    let mut seen = HashSet::new();
    let mut sessions = sessions;
    // Newest first, so ids grow: one transaction, and FTS5 starts a new segment whenever a rowid
    // goes down.
    sessions.sort_by_key(|s| std::cmp::Reverse(session_time(s)));
    for mut s in sessions {
        if s.fingerprint.is_empty() || depth == Depth::Force {
            s.fingerprint = content_fingerprint(&s);
        }
        seen.insert(s.id.clone());
        let sid = s.id.clone();
        if write_session(&txn, &mut ctx, source_id, kind, s, &[], None)? {
            report.written += 1;
            report.changed.push(sid);
        }
    }
    let stored: Vec<String> = {
        let mut stmt = txn.prepare("SELECT id FROM sessions WHERE source_id = ?1")?;
        stmt.query_map([source_id], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?
    };
    for id in stored.into_iter().filter(|id| !seen.contains(id)) {
        report.deleted += delete_sessions(&txn, "s.id = ?1", [&id])?;
        report.changed.push(id);
    }
    txn.commit()?;
    Ok(())
}

fn content_fingerprint(s: &ParsedSession) -> String {
    let mut h = Xxh3::new();
    h.update(format!("{:?}{:?}{:?}{:?}{:?}", s.title, s.project, s.created_at, s.updated_at, s.mode).as_bytes());
    for m in &s.messages {
        h.update(&message_hash(m).to_le_bytes());
    }
    format!("{:x}", h.digest())
}

fn message_hash(m: &ParsedMessage) -> i64 {
    let mut h = Xxh3::new();
    for part in [
        m.role.as_str(),
        m.kind.as_str(),
        &m.text,
        m.tool_name.as_deref().unwrap_or(""),
        m.tool_status.as_deref().unwrap_or(""),
        m.model.as_deref().unwrap_or(""),
    ] {
        h.update(part.as_bytes());
        h.update(&[0]);
    }
    h.update(&m.created_at.unwrap_or(0).to_le_bytes());
    h.digest() as i64
}

/// Lookups the writer needs, loaded once per pass.
struct WriteCtx {
    /// Known project roots (from workspace.json files), longest first, for heuristics.
    projects: Vec<String>,
    /// Terms of what this pass wrote, for `fts_terms`.
    vocab: Vocabulary,
    /// Words of text a write replaced, dropped from `fts_terms` when nothing holds them any more.
    replaced: Forget,
}

impl WriteCtx {
    fn new(store: &Store) -> Result<Self> {
        let mut projects: Vec<String> = store.read(|c| {
            let mut stmt = c.prepare("SELECT DISTINCT project FROM workspaces WHERE project IS NOT NULL")?;
            Ok(stmt.query_map([], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?)
        })?;
        projects.sort_by_key(|p: &String| std::cmp::Reverse(p.len()));
        Ok(Self { projects, vocab: Default::default(), replaced: Default::default() })
    }
}

/// Upsert one session and diff its messages. Returns whether anything was written.
/// The stored row a parsed session would replace: source id, source kind, fingerprint, rowid, title.
type Owner = (i64, String, Option<String>, i64, Option<String>);

/// Other agents' per-request figures and the SDK agents' per-run ones
/// ([`crate::model::UsageRecord`]): the chat's rows replaced.
/// A request another chat already holds (its copy in a resumed session) stays that chat's, at
/// the larger of the two figures: one row, never two.
fn write_usage(conn: &Connection, s: &ParsedSession) -> Result<()> {
    // Cursor's own chats keep no per-request figures, except the SDK's agents (per run).
    if !crate::agents::AGENTS.contains(&s.origin) && s.format != crate::cursor::sdk::FORMAT {
        return Ok(());
    }
    conn.prepare_cached("DELETE FROM chat_usage WHERE session_id = ?1")?.execute([&s.id])?;
    let mut stmt = conn.prepare_cached(
        "INSERT INTO chat_usage(key, session_id, at, model, input, output, cache_read, cache_write)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
         ON CONFLICT(key) DO UPDATE SET at = excluded.at, model = excluded.model, input = excluded.input,
             output = excluded.output, cache_read = excluded.cache_read, cache_write = excluded.cache_write
         WHERE excluded.input + excluded.output + excluded.cache_read + excluded.cache_write
             > chat_usage.input + chat_usage.output + chat_usage.cache_read + chat_usage.cache_write",
    )?;
    for u in &s.usage {
        stmt.execute(params![u.key, s.id, u.at, u.model, u.input, u.output, u.cache_read, u.cache_write])?;
    }
    Ok(())
}

fn write_session(
    conn: &Connection,
    ctx: &mut WriteCtx,
    source_id: i64,
    kind: SourceKind,
    mut s: ParsedSession,
    hints: &[String],
    terms: Option<Vec<String>>,
) -> Result<bool> {
    let owner: Option<Owner> = conn
        .prepare_cached(
            "SELECT s.source_id, src.kind, s.fingerprint, s.rowid, s.title
             FROM sessions s JOIN sources src ON src.id = s.source_id WHERE s.id = ?1",
        )?
        .query_row([&s.id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)))
        .optional()?;
    if let Some((owner_id, owner_kind, fp, _, _)) = &owner {
        if *owner_id != source_id && SourceKind::parse(owner_kind).is_some_and(|k| k.rank() < kind.rank()) {
            return Ok(false);
        }
        if *owner_id == source_id && fp.as_deref() == Some(s.fingerprint.as_str()) && !s.fingerprint.is_empty() {
            return Ok(false);
        }
    }
    attribute_project(conn, ctx, &mut s, hints)?;
    let no_index: bool = conn
        .prepare_cached("SELECT no_index FROM session_meta WHERE session_id = ?1")?
        .query_row([&s.id], |r| r.get(0))
        .optional()?
        .unwrap_or(false);
    if no_index {
        s.messages.clear();
    }
    let text_count = s.messages.iter().filter(|m| m.kind == crate::model::Kind::Text).count() as i64;
    let values = params![
        s.id,
        source_id,
        s.origin,
        s.format,
        s.title,
        s.project,
        s.project_via.as_str(),
        s.workspace_id,
        s.mode,
        s.model,
        s.created_at,
        s.updated_at,
        text_count,
        s.archived,
        s.fingerprint,
        s.problems.to_json(),
        s.tokens.map(|t| t.input),
        s.tokens.map(|t| t.output)
    ];
    // Explicit INSERT or UPDATE plus hand-kept `titles_fts`, for the reason given on `write_messages`.
    let rowid = match &owner {
        Some((owner_id, _, _, rowid, old_title)) => {
            // Setting source_id, even to its value, makes SQLite check the foreign key with a
            // statement journal, whose savepoint flushes FTS5's pending terms: a segment per chat.
            let (set_source, same_source) =
                if *owner_id == source_id { ("", "AND source_id = ?2") } else { ("source_id = ?2,", "") };
            conn.prepare_cached(&format!(
                "UPDATE sessions SET {set_source} origin = ?3, format = ?4, title = ?5, project = ?6, project_via = ?7,
                     workspace_id = ?8, mode = ?9, model = ?10, created_at = ?11, updated_at = ?12, message_count = ?13,
                     archived = ?14, fingerprint = ?15, problems = ?16, searchable = 1, input_tokens = ?17,
                     output_tokens = ?18
                 WHERE id = ?1 {same_source}"
            ))?
            .execute(values)?;
            if *old_title == s.title {
                None
            } else {
                conn.prepare_cached("INSERT INTO titles_fts(titles_fts, rowid, title) VALUES ('delete', ?1, ?2)")?
                    .execute(params![rowid, old_title.as_deref().unwrap_or("")])?;
                Some(*rowid)
            }
        }
        None => {
            conn.prepare_cached(
                "INSERT INTO sessions(id, source_id, origin, format, title, project, project_via, workspace_id, mode, model,
                                      created_at, updated_at, message_count, archived, fingerprint, problems, searchable,
                                      input_tokens, output_tokens)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, 1, ?17, ?18)",
            )?
            .execute(values)?;
            Some(conn.last_insert_rowid())
        }
    };
    if let Some(rowid) = rowid {
        conn.prepare_cached("INSERT INTO titles_fts(rowid, title) VALUES (?1, ?2)")?
            .execute(params![rowid, s.title.as_deref().unwrap_or("")])?;
    }
    write_usage(conn, &s)?;
    let written = write_messages(conn, &s.id, session_time(&s), &s.messages, &mut ctx.replaced)?;
    // A new chat (or one only listed): all of its terms (a superset is fine, see `terms`; those
    // the parser computed include messages that "do not index" has just dropped, so not those).
    // A chat we held (the parser computes none for it): the
    // terms of its title and of the messages just written, the others' are in already — a chat
    // Cursor streams into changes one message per pass, and adding every term of the chat again
    // made each pass cost the whole chat.
    let terms = match (owner.is_some(), terms) {
        (_, Some(t)) if !no_index => t,
        (false, _) => Vocabulary::of_session(&s),
        (true, _) => Vocabulary::of_texts(
            std::iter::once(s.title.as_deref().unwrap_or(""))
                .chain(written.iter().map(|&i| s.messages[i].text.as_str())),
        ),
    };
    ctx.vocab.add_terms(terms);
    ctx.vocab.flush(conn)?;
    if !ctx.replaced.is_empty() {
        ctx.replaced.apply(conn)?;
    }
    Ok(true)
}

/// Writes changed messages and keeps `messages_fts` in step by hand: single-row statements without
/// triggers never open a savepoint, so FTS5 keeps buffering terms in memory (see migration 0002).
/// New messages get ids from the chat's time (`message_id_base`).
fn write_messages(
    conn: &Connection,
    session_id: &str,
    time: Option<i64>,
    messages: &[ParsedMessage],
    replaced: &mut Forget,
) -> Result<Vec<usize>> {
    let mut written = Vec::new();
    let existing: HashMap<i64, (i64, i64)> = {
        let mut stmt = conn.prepare_cached("SELECT seq, id, hash FROM messages WHERE session_id = ?1")?;
        stmt.query_map([session_id], |r| Ok((r.get(0)?, (r.get(1)?, r.get(2)?))))?.collect::<rusqlite::Result<_>>()?
    };
    let mut next_id: Option<i64> = None;
    for (seq, m) in messages.iter().enumerate() {
        let seq = seq as i64;
        let h = message_hash(m);
        let id = match existing.get(&seq) {
            Some(&(_, old)) if old == h => continue,
            Some(&(id, _)) => {
                let old_text: String =
                    conn.prepare_cached("SELECT text FROM messages WHERE id = ?1")?.query_row([id], |r| r.get(0))?;
                conn.prepare_cached("INSERT INTO messages_fts(messages_fts, rowid, text) VALUES ('delete', ?1, ?2)")?
                    .execute(params![id, old_text])?;
                // Only the words that left the message may leave the vocabulary: a streamed
                // answer only grows, and checking each of its words again on every chunk cost
                // more than the chunk.
                replaced.add_replaced(&old_text, &m.text);
                conn.prepare_cached(
                    "UPDATE messages SET role = ?2, kind = ?3, text = ?4, tool_name = ?5, tool_status = ?6, model = ?7,
                         created_at = ?8, external_id = ?9, hash = ?10 WHERE id = ?1",
                )?
                .execute(params![
                    id,
                    m.role.as_str(),
                    m.kind.as_str(),
                    m.text,
                    m.tool_name,
                    m.tool_status,
                    m.model,
                    m.created_at,
                    m.external_id,
                    h
                ])?;
                id
            }
            None => {
                let id = match next_id {
                    Some(id) => id,
                    None => {
                        let base = message_id_base(time, now_ms());
                        let id: i64 = conn
                            .prepare_cached(
                                "SELECT coalesce(max(id) + 1, ?1) FROM messages WHERE id >= ?1 AND id < ?2",
                            )?
                            .query_row(params![base, base + (1 << 20)], |r| r.get(0))?;
                        if id + (messages.len() as i64) < base + (1 << 20) {
                            id
                        } else {
                            // The minute is full (chats without a time share one): any free ids.
                            conn.prepare_cached("SELECT coalesce(max(id), 0) + 1 FROM messages")?
                                .query_row([], |r| r.get(0))?
                        }
                    }
                };
                next_id = Some(id + 1);
                conn.prepare_cached(
                    "INSERT INTO messages(id, session_id, seq, role, kind, text, tool_name, tool_status, model, created_at,
                                          external_id, hash)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
                )?
                .execute(params![
                    id,
                    session_id,
                    seq,
                    m.role.as_str(),
                    m.kind.as_str(),
                    m.text,
                    m.tool_name,
                    m.tool_status,
                    m.model,
                    m.created_at,
                    m.external_id,
                    h
                ])?;
                id
            }
        };
        conn.prepare_cached("INSERT INTO messages_fts(rowid, text) VALUES (?1, ?2)")?.execute(params![id, m.text])?;
        written.push(seq as usize);
    }
    if existing.keys().any(|s| *s >= messages.len() as i64) {
        let mut stmt = conn.prepare_cached("SELECT text FROM messages WHERE session_id = ?1 AND seq >= ?2")?;
        let mut rows = stmt.query(params![session_id, messages.len() as i64])?;
        while let Some(r) = rows.next()? {
            replaced.add(r.get_ref(0)?.as_str().unwrap_or(""));
        }
        conn.prepare_cached("DELETE FROM messages WHERE session_id = ?1 AND seq >= ?2")?
            .execute(params![session_id, messages.len() as i64])?;
    }
    Ok(written)
}

/// Fill in the project from what workspace DBs told us, then from file paths.
fn attribute_project(conn: &Connection, ctx: &WriteCtx, s: &mut ParsedSession, hints: &[String]) -> Result<()> {
    if s.project_via <= ProjectVia::Header {
        return Ok(());
    }
    if let Some(ws) = &s.workspace_id {
        let p: Option<String> = conn
            .prepare_cached("SELECT project FROM workspaces WHERE id = ?1")?
            .query_row([ws], |r| r.get(0))
            .optional()?
            .flatten();
        s.set_project(p, ProjectVia::Header);
    }
    if s.project_via > ProjectVia::Membership {
        let m: Option<(String, String)> = conn
            .prepare_cached(
                "SELECT w.project, w.id FROM workspace_members m JOIN workspaces w ON w.id = m.workspace_id
                 WHERE m.composer_id = ?1 AND w.project IS NOT NULL ORDER BY w.id LIMIT 1",
            )?
            .query_row([&s.id], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?;
        if let Some((p, ws)) = m {
            s.set_project(Some(p), ProjectVia::Membership);
            s.workspace_id.get_or_insert(ws);
        }
    }
    if s.project_via > ProjectVia::Heuristic && !hints.is_empty() {
        let by_root = ctx.projects.iter().find(|root| hints.iter().any(|h| uri::is_within(h, root)));
        let guess = by_root.cloned().or_else(|| common_dir(hints));
        s.set_project(guess, ProjectVia::Heuristic);
    }
    Ok(())
}

/// The deepest directory shared by all paths, if it is more than a top-level folder.
fn common_dir(paths: &[String]) -> Option<String> {
    let split: Vec<Vec<&str>> = paths.iter().map(|p| p.split('/').collect()).collect();
    let first = split.first()?;
    let mut n = first.len().saturating_sub(1);
    for s in &split[1..] {
        n = n.min(s.len().saturating_sub(1));
        n = (0..n).take_while(|i| s[*i] == first[*i]).count();
    }
    (n >= 3).then(|| first[..n].join("/"))
}

/// Workspace folders with a `workspace.json` but no `state.vscdb` (not written yet, or deleted):
/// their id still names a project that global composers point to.
fn register_bare_workspaces(store: &Store, loc: &CursorLocations) -> Result<()> {
    let bare = cursor::bare_workspaces(loc);
    if bare.is_empty() {
        return Ok(());
    }
    let mut conn = store.writer();
    let txn = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    for (id, uri, project) in bare {
        txn.execute(
            "INSERT INTO workspaces(id, uri, project) VALUES (?1, ?2, ?3)
             ON CONFLICT(id) DO UPDATE SET uri = excluded.uri, project = excluded.project",
            params![id, uri, project],
        )?;
    }
    txn.commit()?;
    Ok(())
}

fn write_workspace_membership(store: &Store, w: &workspace::WorkspaceRead) -> Result<()> {
    let mut conn = store.writer();
    let txn = conn.transaction()?;
    txn.execute(
        "INSERT INTO workspaces(id, uri, project) VALUES (?1, ?2, ?3)
         ON CONFLICT(id) DO UPDATE SET uri = excluded.uri, project = excluded.project",
        params![w.id, w.uri, w.project],
    )?;
    txn.execute("DELETE FROM workspace_members WHERE workspace_id = ?1", [&w.id])?;
    {
        let mut ins =
            txn.prepare("INSERT OR IGNORE INTO workspace_members(composer_id, workspace_id) VALUES (?1, ?2)")?;
        for (id, _) in &w.members {
            ins.execute(params![id, w.id])?;
        }
    }
    if let Some(p) = &w.project {
        txn.execute(
            "UPDATE sessions SET project = ?1, project_via = 'membership', workspace_id = coalesce(workspace_id, ?2)
             WHERE id IN (SELECT composer_id FROM workspace_members WHERE workspace_id = ?2)
               AND project_via IN ('heuristic', 'none')",
            params![p, w.id],
        )?;
    }
    txn.commit()?;
    Ok(())
}

pub(crate) use crate::clock::now_ms;

/// Per-kind totals of the last pass, for `doctor` and health views.
pub fn source_summary(store: &Store) -> Result<BTreeMap<String, (u64, u64)>> {
    store.read(|c| {
        let mut stmt = c.prepare(
            "SELECT kind, count(*), coalesce(sum(sessions), 0) FROM sources WHERE status != 'missing' GROUP BY kind",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok((r.get::<_, String>(0)?, (r.get::<_, i64>(1)? as u64, r.get::<_, i64>(2)? as u64)))
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fingerprint_gives_back_the_head_it_was_made_from() {
        for head in [Some((42, 7000)), Some((i64::MAX, 0)), None] {
            let mut r = ComposerRef::default();
            r.head = head;
            assert_eq!(parse_head(&r.fingerprint((3, 99, 12))), Some(head.unwrap_or((-1, -1))));
        }
        assert_eq!(parse_head(""), None, "a chat never read has no head");
    }

    /// A bulk pass ends with its full-text index in one segment. Stopping once no level held four
    /// segments (the `'merge', 500` before) left two of the seven that these 70 transactions
    /// wrote; checked to fail so.
    #[test]
    fn a_bulk_pass_leaves_its_full_text_index_in_one_segment() {
        let store = Store::open_in_memory().unwrap();
        defer_merging(&store.writer(), true).unwrap();
        for i in 0..70 {
            let mut w = store.writer();
            let tx = w.transaction().unwrap();
            // A message of 200 words, as a chat's are.
            let text: String = (0..200).map(|k| format!("w{} ", (i * 7919 + k * 104_729) % 20_000)).collect();
            tx.execute("INSERT INTO messages_fts(rowid, text) VALUES (?1, ?2)", params![i, text + "common"]).unwrap();
            tx.commit().unwrap();
        }
        assert!(defer_merging(&store.writer(), false).unwrap(), "bulk settings were in place");
        merge_deferred(&store).unwrap();
        let w = store.writer();
        let segments: i64 =
            w.query_row("SELECT count(DISTINCT segid) FROM messages_fts_idx", [], |r| r.get(0)).unwrap();
        assert_eq!(segments, 1);
        let hits: i64 = w
            .query_row("SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'common'", [], |r| r.get(0))
            .unwrap();
        assert_eq!(hits, 70, "every row still found");
    }
}
