//! `tether doctor`: where we looked, what we found, which sources are partial and why.

use serde::Serialize;

use crate::Tether;
use crate::error::Result;
use crate::history::model::Tally;

#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct SourceStatus {
    pub path: String,
    pub kind: String,
    pub status: String,
    pub sessions: i64,
    pub messages: i64,
    pub reasons: Tally,
    pub notes: Tally,
    pub error: Option<String>,
    pub indexed_at: Option<String>,
}

/// The Cursor files of one kind found on this machine, and what the index holds from them.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct FoundStores {
    /// `workspace`, `global`, `cli_store`, `transcript`, `cli_meta`, `cloud`, …
    pub kind: String,
    pub files: u64,
    pub sessions: i64,
    pub messages: i64,
}

#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct Location {
    pub path: String,
    pub exists: bool,
}

#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct DoctorReport {
    pub version: &'static str,
    pub data_dir: String,
    pub index_db: String,
    pub index_bytes: u64,
    pub cursor_user_dirs: Vec<Location>,
    pub cursor_homes: Vec<Location>,
    pub discovery_notes: Vec<String>,
    /// Every kind of store found, with counts.
    pub found: Vec<FoundStores>,
    /// Every file looked at and passed over, and why.
    pub skipped: Vec<crate::history::cursor::Skipped>,
    pub sessions: i64,
    pub messages: i64,
    pub sources: Vec<SourceStatus>,
    pub daemon: Option<crate::daemon::DaemonInfo>,
    /// Where the MCP token is kept (`fallback`: a 0600 file, because no OS keyring was reachable).
    pub token_store: crate::token::Backend,
    /// The team database this data dir joined, and how it answers (absent: not in a team).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub team: Option<crate::ops::team::TeamStatus>,
}

pub fn doctor(t: &Tether) -> Result<DoctorReport> {
    let loc = |p: &std::path::PathBuf| Location { path: p.display().to_string(), exists: p.is_dir() };
    let (sessions, messages) = t.store.read(|c| {
        Ok(c.query_row("SELECT count(*), coalesce(sum(message_count), 0) FROM sessions", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })?)
    })?;
    let sources = t.store.read(|c| {
        let mut stmt = c.prepare(
            "SELECT path, kind, status, sessions, messages, reasons, notes, error, indexed_at FROM sources
             ORDER BY CASE status WHEN 'error' THEN 0 WHEN 'partial' THEN 1 ELSE 2 END, kind, path",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok(SourceStatus {
                path: r.get(0)?,
                kind: r.get(1)?,
                status: r.get(2)?,
                sessions: r.get(3)?,
                messages: r.get(4)?,
                reasons: Tally::from_json(&r.get::<_, String>(5)?),
                notes: Tally::from_json(&r.get::<_, String>(6)?),
                error: r.get(7)?,
                indexed_at: r.get::<_, Option<i64>>(8)?.map(crate::clock::iso),
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    })?;
    let discovery = crate::history::cursor::discover_all(&t.cursor());
    let held: std::collections::HashMap<String, (i64, i64)> = t.store.read(|c| {
        let mut stmt = c.prepare(
            "SELECT kind, coalesce(sum(sessions), 0), coalesce(sum(messages), 0) FROM sources
             WHERE status != 'missing' GROUP BY kind",
        )?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, (r.get(1)?, r.get(2)?))))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    })?;
    let found = discovery
        .counts()
        .into_iter()
        .map(|(kind, files)| {
            let (sessions, messages) = held.get(kind.as_str()).copied().unwrap_or((0, 0));
            FoundStores { kind: kind.as_str().to_owned(), files, sessions, messages }
        })
        .collect();
    let db = t.paths.db();
    Ok(DoctorReport {
        version: env!("CARGO_PKG_VERSION"),
        data_dir: t.paths.data_dir.display().to_string(),
        index_bytes: [db.clone(), crate::history::cursor::sqlite::sidecar(&db, "-wal")]
            .iter()
            .filter_map(|p| std::fs::metadata(p).ok())
            .map(|m| m.len())
            .sum(),
        index_db: db.display().to_string(),
        cursor_user_dirs: t.cursor().user_dirs.iter().map(loc).collect(),
        cursor_homes: t.cursor().cursor_homes.iter().map(loc).collect(),
        discovery_notes: t.cursor().notes.clone(),
        found,
        skipped: discovery.skipped,
        sessions,
        messages,
        sources,
        daemon: crate::daemon::running(&t.paths),
        token_store: crate::token::backend(&t.paths),
        team: Some(crate::ops::team::status(t)?).filter(|s| s.joined),
    })
}
