//! Cursor's own AI-code tracking database as a code-origin source (`cursor-tracking`): for a
//! file, the chats Cursor says wrote AI code into it — edits made before Tether's hooks were
//! installed included — and Cursor's own per-commit AI and human line counts for the commits
//! behind its lines; for `doctor`, what the database covers.
//!
//! It names no line (its hashes are of an algorithm Cursor has not published), so it never
//! changes a line's origin: it is reported beside the lines, for what it is. Read through
//! `history::cursor::tracking` (read-only); a missing, locked or foreign database is a skip with
//! its reason, never an error. Never git, never the board.

use std::path::Path;

use serde::Serialize;

use crate::Tether;
use crate::clock::iso;
use crate::history;
use crate::history::cursor::tracking::{self, Look, ScoredCommit, TrackingCoverage};

/// What Cursor's tracking can and cannot say, as the reports put it.
pub const COVERS: &str = "Cursor's AI-code tracking ties files (not lines) to the chats and models that wrote AI \
    code into them, from when Cursor began tracking, and scores commits' AI and human lines; its hashes use an \
    algorithm Cursor has not published, so it cannot say which line a chat wrote and never changes a line's origin";

/// `tether blame` / `code_origin`: Cursor's tracking of a file.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct CursorTracking {
    /// The origin source: `cursor-tracking`.
    pub source: &'static str,
    /// The database read.
    pub db: String,
    /// When Cursor began tracking (earlier edits are not in it).
    pub since: Option<String>,
    /// What it can and cannot say.
    pub covers: &'static str,
    /// Why it was not read, when it was not (locked, damaged, another shape).
    pub skipped: Option<String>,
    /// Chats Cursor says wrote AI code into this file, latest first.
    pub chats: Vec<TrackedChat>,
    /// Cursor's scores of the commits that last changed the lines asked for.
    pub commits: Vec<ScoredCommit>,
}

/// A chat Cursor's tracking names for a file, with the chat in Tether's index when indexed.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct TrackedChat {
    /// Cursor's chat id; empty for code it recorded without one (Tab, mostly).
    pub conversation_id: String,
    /// `composer` (the agent), `tab`, … as Cursor wrote it.
    pub source: String,
    pub model: Option<String>,
    /// Chunks of code it recorded for this file, and when the first and last were written.
    #[ts(type = "number")]
    pub chunks: i64,
    pub first_at: Option<String>,
    pub last_at: Option<String>,
    /// The chat in Tether's index, and its title.
    pub session: Option<String>,
    pub title: Option<String>,
}

/// `doctor`: Cursor's tracking database under one Cursor home.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct TrackingStatus {
    pub path: String,
    /// `read`, `skipped` (with `reason`) or `missing`.
    pub status: &'static str,
    pub reason: Option<String>,
    pub coverage: Option<TrackingCoverage>,
    pub covers: &'static str,
}

/// The first tracking database under the Cursor homes, for `file` (absolute) and the commits
/// (full ids) behind the lines asked for; `None` where Cursor keeps none.
pub(crate) fn for_file(t: &Tether, file: &Path, commits: &[String]) -> Option<CursorTracking> {
    let scratch = t.paths.scratch_dir();
    let report = |db: &Path, since: Option<i64>, skipped: Option<String>| CursorTracking {
        source: "cursor-tracking",
        db: db.display().to_string(),
        since: since.map(iso),
        covers: COVERS,
        skipped,
        chats: Vec::new(),
        commits: Vec::new(),
    };
    for home in t.cursor().cursor_homes {
        let tr = match tracking::look(&home, &scratch) {
            Look::Missing => continue,
            Look::Skipped { path, reason } => return Some(report(&path, None, Some(reason))),
            Look::Open(tr) => tr,
        };
        let read = || -> crate::Result<CursorTracking> {
            let mut r = report(tr.path(), tr.coverage()?.since_ms, None);
            r.chats = tr.file_chats(&file.to_string_lossy())?.into_iter().map(|c| named(t, c)).collect();
            r.commits = tr.scored(commits)?;
            Ok(r)
        };
        // Cursor may hold it locked, or be mid-migration: said, not failed.
        return Some(read().unwrap_or_else(|e| report(tr.path(), None, Some(format!("not readable: {e}")))));
    }
    None
}

fn named(t: &Tether, c: tracking::FileChat) -> TrackedChat {
    let summary = (!c.conversation_id.is_empty())
        .then(|| {
            t.store.read(|db| history::sessions::summary(db, &history::sessions::resolve(db, &c.conversation_id)?)).ok()
        })
        .flatten();
    TrackedChat {
        session: summary.as_ref().map(|s| s.id.clone()),
        title: summary.and_then(|s| s.title),
        first_at: c.first_ms.map(iso),
        last_at: c.last_ms.map(iso),
        conversation_id: c.conversation_id,
        source: c.source,
        model: c.model,
        chunks: c.chunks,
    }
}

/// `doctor`: each Cursor home's tracking database, read, skipped or missing.
pub fn status(t: &Tether) -> Vec<TrackingStatus> {
    let scratch = t.paths.scratch_dir();
    t.cursor()
        .cursor_homes
        .iter()
        .map(|home| {
            let (path, status, reason, coverage) = match tracking::look(home, &scratch) {
                Look::Missing => (
                    home.join(tracking::RELATIVE),
                    "missing",
                    Some("not found: this Cursor has written no AI-code tracking here".to_owned()),
                    None,
                ),
                Look::Skipped { path, reason } => (path, "skipped", Some(reason), None),
                Look::Open(tr) => match tr.coverage() {
                    Ok(c) => (tr.path().to_owned(), "read", None, Some(c)),
                    Err(e) => (tr.path().to_owned(), "skipped", Some(format!("not readable: {e}")), None),
                },
            };
            TrackingStatus { path: path.display().to_string(), status, reason, coverage, covers: COVERS }
        })
        .collect()
}
