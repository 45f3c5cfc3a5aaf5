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

/// One other agent whose chats are read beside Cursor's: whether it is, where Tether looked, what
/// it found and read, and what it passed over and why.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct AgentStatus {
    /// The chats' `source`: `claude-code`, `codex` or `gemini`.
    pub agent: String,
    pub name: String,
    /// False when the settings turned it off (`agents.<name>`): not looked for at all.
    pub enabled: bool,
    pub folders: Vec<Location>,
    /// Chat files found, and the chats and messages read from them.
    pub files: u64,
    pub chats: i64,
    pub messages: i64,
    /// Files read only in part (or not at all), and the problems counted over all its files
    /// (`bad_json`: lines skipped, …).
    pub incomplete: u64,
    pub problems: Tally,
    /// Files under its folders looked at and passed over, and why.
    pub skipped: Vec<crate::history::cursor::Skipped>,
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
    /// Claude Code, Codex and Gemini CLI, each on its own.
    pub agents: Vec<AgentStatus>,
    pub sessions: i64,
    pub messages: i64,
    pub sources: Vec<SourceStatus>,
    pub daemon: Option<crate::daemon::DaemonInfo>,
    /// Where the MCP token is kept (`fallback`: a 0600 file, because no OS keyring was reachable).
    pub token_store: crate::token::Backend,
    /// Cursor's own AI-code tracking database under each Cursor home (a code-origin source for
    /// edits made before Tether's hooks): read, skipped (why) or missing, and what it covers.
    pub cursor_tracking: Vec<crate::code_origin::cursor_tracking::TrackingStatus>,
    /// The team database this data dir joined, and how it answers (absent: not in a team).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub team: Option<crate::ops::team::TeamStatus>,
    /// The Cursor CLI this machine's runs would use (the local executor's probe).
    pub cursor_cli: crate::executor::ExecutorInfo,
}

pub fn doctor(t: &Tether) -> Result<DoctorReport> {
    let loc = |p: &std::path::PathBuf| Location { path: p.display().to_string(), exists: p.is_dir() };
    let (sessions, messages) = t.store.read(|c| {
        Ok(c.query_row("SELECT count(*), coalesce(sum(message_count), 0) FROM sessions", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })?)
    })?;
    let sources: Vec<SourceStatus> = t.store.read(|c| {
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
    let agents = agent_statuses(&t.cursor(), &discovery, &held, &sources);
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
        agents,
        sessions,
        messages,
        sources,
        daemon: crate::daemon::running(&t.paths),
        token_store: crate::token::backend(&t.paths),
        cursor_tracking: crate::code_origin::cursor_tracking::status(t),
        team: Some(crate::ops::team::status(t)?).filter(|s| s.joined),
        cursor_cli: t.executors.probe(t, "local"),
    })
}

fn agent_statuses(
    loc: &crate::CursorLocations,
    discovery: &crate::history::cursor::Discovery,
    held: &std::collections::HashMap<String, (i64, i64)>,
    sources: &[SourceStatus],
) -> Vec<AgentStatus> {
    use crate::history::cursor::SourceKind;
    let counts = discovery.counts();
    [
        ("claude-code", "Claude Code", SourceKind::ClaudeCode, &loc.claude_dirs),
        ("codex", "Codex CLI", SourceKind::Codex, &loc.codex_homes),
        ("gemini", "Gemini CLI", SourceKind::Gemini, &loc.gemini_dirs),
    ]
    .into_iter()
    .map(|(agent, name, kind, folders)| {
        let mine: Vec<&SourceStatus> =
            sources.iter().filter(|s| s.kind == kind.as_str() && s.status != "missing").collect();
        let mut problems = Tally::default();
        for s in &mine {
            problems.merge(&s.reasons);
        }
        let (chats, messages) = held.get(kind.as_str()).copied().unwrap_or((0, 0));
        AgentStatus {
            agent: agent.into(),
            name: name.into(),
            enabled: !loc.agents_off.iter().any(|a| a == agent),
            folders: folders.iter().map(|p| Location { path: p.display().to_string(), exists: p.is_dir() }).collect(),
            files: counts.get(&kind).copied().unwrap_or(0),
            chats,
            messages,
            incomplete: mine.iter().filter(|s| s.status != "complete").count() as u64,
            problems,
            skipped: discovery
                .skipped
                .iter()
                .filter(|s| folders.iter().any(|f| std::path::Path::new(&s.path).starts_with(f)))
                .cloned()
                .collect(),
        }
    })
    .collect()
}
