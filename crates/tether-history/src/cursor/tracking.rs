//! Cursor's own AI-code tracking database, `~/.cursor/ai-tracking/ai-code-tracking.db`, read
//! strictly read-only (opened like every Cursor database, [`super::sqlite::CursorDb`]).
//!
//! Its published shape (schema dumps and fixtures of public readers, 2025–2026): `ai_code_hashes`
//! (`hash`, `source` = `composer` | `tab` | `human` | …, `fileExtension`, `fileName`, `requestId`,
//! `conversationId`, `timestamp`, `model`, `createdAt`: one row per chunk of code Cursor saw
//! written), `scored_commits` (per `commitHash` and `branchName`: lines added and deleted, by Tab,
//! by the agent (`composer…`), by a person, blank, and Cursor's AI percentages),
//! `conversation_summaries`, `tracked_file_content`, `ai_deleted_files` and `tracking_state`
//! (`key`/`value`; `trackingStartTime`).
//!
//! What it can and cannot say. `hash` is 8 characters of an algorithm Cursor has not published
//! (over a chunk, not a line), so no line of a file today can be matched to a row: it never
//! decides a line's origin. It does tie a **file** to the chats (and models) that wrote AI code
//! into it, with times — edits made before Tether's hooks were installed included — and gives
//! Cursor's own AI and human line counts **per commit**. Columns differ between versions (readers
//! and fixtures show subsets), so each query reads only the columns the file has.
//!
//! Depends on [`super::sqlite`] only; never writes, never touches our store.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use rusqlite::OptionalExtension;
use serde::Serialize;

use super::sqlite::CursorDb;
use crate::error::Result;

/// Where it is under a Cursor home (`~/.cursor`).
pub const RELATIVE: &str = "ai-tracking/ai-code-tracking.db";

/// The database under a Cursor home, and whether it could be opened.
pub enum Look {
    /// No such file: Cursor never wrote one here (older builds, or the feature off).
    Missing,
    /// There, but not readable now (locked, damaged, not SQLite, not the shape we know): why.
    Skipped {
        path: PathBuf,
        reason: String,
    },
    Open(Tracking),
}

pub struct Tracking {
    db: CursorDb,
}

/// What the database holds, in counts: the coverage `doctor` and blame report.
#[derive(Debug, Clone, Default, Serialize, ts_rs::TS)]
#[ts(export, export_to = "history.ts")]
pub struct TrackingCoverage {
    /// Since when Cursor says it tracks (`tracking_state.trackingStartTime`), epoch ms.
    #[ts(type = "number | null")]
    pub since_ms: Option<i64>,
    /// Chunks of code recorded, and of those, written by AI (any source but `human`).
    #[ts(type = "number")]
    pub chunks: i64,
    #[ts(type = "number")]
    pub ai_chunks: i64,
    /// Files and chats those AI chunks name.
    #[ts(type = "number")]
    pub files: i64,
    #[ts(type = "number")]
    pub chats: i64,
    /// Commits Cursor scored.
    #[ts(type = "number")]
    pub commits: i64,
}

/// A chat Cursor says wrote AI code into a file.
#[derive(Debug, Clone, Serialize)]
pub struct FileChat {
    /// Cursor's chat id (the composer id Tether's index keys chats by).
    pub conversation_id: String,
    /// `composer` (the agent), `tab`, … as Cursor wrote it.
    pub source: String,
    pub model: Option<String>,
    /// Chunks of code it recorded for this file.
    pub chunks: i64,
    /// When the first and last of them were written, epoch ms.
    pub first_ms: Option<i64>,
    pub last_ms: Option<i64>,
}

/// Cursor's score of one commit: its lines added, by who wrote them.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[ts(export, export_to = "history.ts")]
pub struct ScoredCommit {
    pub commit: String,
    pub branch: Option<String>,
    #[ts(type = "number | null")]
    pub lines_added: Option<i64>,
    /// By the agent (Cursor's `composerLinesAdded`).
    #[ts(type = "number | null")]
    pub agent_lines_added: Option<i64>,
    #[ts(type = "number | null")]
    pub tab_lines_added: Option<i64>,
    #[ts(type = "number | null")]
    pub human_lines_added: Option<i64>,
}

/// The database under `cursor_home`, opened read-only. `scratch` is our own folder, for the
/// private copy a WAL file without its `-shm` is read from.
pub fn look(cursor_home: &Path, scratch: &Path) -> Look {
    let path = cursor_home.join(RELATIVE);
    if !path.is_file() {
        return Look::Missing;
    }
    let skipped = |reason: String| Look::Skipped { path: path.clone(), reason };
    match CursorDb::open(&path, scratch) {
        Err(e) => skipped(format!("not readable: {e}")),
        Ok(db) if !db.has_table("ai_code_hashes").unwrap_or(false) => {
            skipped("no ai_code_hashes table: not the shape Tether knows".into())
        }
        Ok(db) => Look::Open(Tracking { db }),
    }
}

impl Tracking {
    pub fn path(&self) -> &Path {
        self.db.path()
    }

    /// The columns a table has (none when it is not there).
    fn columns(&self, table: &str) -> Result<HashSet<String>> {
        if !self.db.has_table(table)? {
            return Ok(HashSet::new());
        }
        let mut stmt = self.db.conn.prepare("SELECT name FROM pragma_table_info(?1)")?;
        let cols = stmt.query_map([table], |r| r.get::<_, String>(0))?.collect::<rusqlite::Result<_>>()?;
        Ok(cols)
    }

    /// `col` when the table has it, else SQL NULL (so one statement reads every version).
    fn col_or_null(cols: &HashSet<String>, col: &str) -> String {
        if cols.contains(col) { format!("\"{col}\"") } else { "NULL".into() }
    }

    pub fn coverage(&self) -> Result<TrackingCoverage> {
        let c = &self.db.conn;
        let cols = self.columns("ai_code_hashes")?;
        let source = Self::col_or_null(&cols, "source");
        let (file, chat) = (Self::col_or_null(&cols, "fileName"), Self::col_or_null(&cols, "conversationId"));
        let (chunks, ai_chunks, files, chats) = c.query_row(
            &format!(
                "SELECT count(*), coalesce(sum(coalesce({source}, '') != 'human'), 0),
                        count(DISTINCT CASE WHEN coalesce({source}, '') != 'human' THEN {file} END),
                        count(DISTINCT CASE WHEN coalesce({source}, '') != 'human' THEN {chat} END)
                 FROM ai_code_hashes"
            ),
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )?;
        let commits = if self.db.has_table("scored_commits")? {
            c.query_row("SELECT count(*) FROM scored_commits", [], |r| r.get(0))?
        } else {
            0
        };
        Ok(TrackingCoverage { since_ms: self.since_ms()?, chunks, ai_chunks, files, chats, commits })
    }

    /// `tracking_state`'s `trackingStartTime`: epoch ms as a number, or as text (a number, or an
    /// RFC 3339 time); anything else is not known.
    fn since_ms(&self) -> Result<Option<i64>> {
        let cols = self.columns("tracking_state")?;
        if !(cols.contains("key") && cols.contains("value")) {
            return Ok(None);
        }
        let v: Option<rusqlite::types::Value> = self
            .db
            .conn
            .query_row("SELECT value FROM tracking_state WHERE key = 'trackingStartTime'", [], |r| r.get(0))
            .optional()?;
        Ok(match v {
            Some(rusqlite::types::Value::Integer(n)) => Some(n),
            Some(rusqlite::types::Value::Real(f)) => Some(f as i64),
            Some(rusqlite::types::Value::Text(s)) => {
                let s = s.trim().trim_matches('"');
                s.parse::<i64>().ok().or_else(|| crate::clock::parse_iso(s))
            }
            _ => None,
        })
    }

    /// The chats Cursor says wrote AI code into `file` (its path as Cursor names it: absolute),
    /// most recent first. Rows without a chat (Tab, mostly) are counted under an empty id.
    pub fn file_chats(&self, file: &str) -> Result<Vec<FileChat>> {
        let cols = self.columns("ai_code_hashes")?;
        if !cols.contains("fileName") {
            return Ok(Vec::new());
        }
        let col = |c: &str| Self::col_or_null(&cols, c);
        let at = format!("coalesce({}, {})", col("timestamp"), col("createdAt"));
        let sql = format!(
            "SELECT coalesce({chat}, ''), coalesce({source}, ''), {model}, count(*), min({at}), max({at})
             FROM ai_code_hashes
             WHERE \"fileName\" = ?1 AND coalesce({source}, '') != 'human'
             GROUP BY 1, 2, 3 ORDER BY 6 DESC",
            chat = col("conversationId"),
            source = col("source"),
            model = col("model"),
        );
        let mut stmt = self.db.conn.prepare(&sql)?;
        let rows = stmt.query_map([file], |r| {
            Ok(FileChat {
                conversation_id: r.get(0)?,
                source: r.get(1)?,
                model: r.get(2)?,
                chunks: r.get(3)?,
                first_ms: r.get::<_, Option<f64>>(4)?.map(|v| v as i64),
                last_ms: r.get::<_, Option<f64>>(5)?.map(|v| v as i64),
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Cursor's scores of these commits (full ids), on any branch it scored them on.
    pub fn scored(&self, commits: &[String]) -> Result<Vec<ScoredCommit>> {
        let cols = self.columns("scored_commits")?;
        if !cols.contains("commitHash") || commits.is_empty() {
            return Ok(Vec::new());
        }
        let col = |c: &str| Self::col_or_null(&cols, c);
        let sql = format!(
            "SELECT \"commitHash\", {}, {}, {}, {}, {} FROM scored_commits WHERE \"commitHash\" = ?1",
            col("branchName"),
            col("linesAdded"),
            col("composerLinesAdded"),
            col("tabLinesAdded"),
            col("humanLinesAdded"),
        );
        let mut stmt = self.db.conn.prepare(&sql)?;
        let mut out = Vec::new();
        for c in commits {
            let rows = stmt.query_map([c], |r| {
                Ok(ScoredCommit {
                    commit: r.get(0)?,
                    branch: r.get(1)?,
                    lines_added: r.get(2)?,
                    agent_lines_added: r.get(3)?,
                    tab_lines_added: r.get(4)?,
                    human_lines_added: r.get(5)?,
                })
            })?;
            out.extend(rows.collect::<rusqlite::Result<Vec<_>>>()?);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The database as public readers dump it (the column lists of `ai_code_hashes` and
    /// `scored_commits` as published), written by rusqlite here, never by Tether's own code.
    fn published(home: &Path) -> PathBuf {
        let path = home.join(RELATIVE);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let c = rusqlite::Connection::open(&path).unwrap();
        c.execute_batch(
            "CREATE TABLE ai_code_hashes (hash TEXT PRIMARY KEY, source TEXT NOT NULL, fileExtension TEXT,
                 fileName TEXT, requestId TEXT, conversationId TEXT, timestamp INTEGER, model TEXT,
                 createdAt INTEGER NOT NULL);
             CREATE TABLE scored_commits (commitHash TEXT NOT NULL, branchName TEXT NOT NULL,
                 scoredAt INTEGER NOT NULL, linesAdded INTEGER, linesDeleted INTEGER, tabLinesAdded INTEGER,
                 tabLinesDeleted INTEGER, composerLinesAdded INTEGER, composerLinesDeleted INTEGER,
                 humanLinesAdded INTEGER, humanLinesDeleted INTEGER, blankLinesAdded INTEGER,
                 blankLinesDeleted INTEGER, commitMessage TEXT, commitDate TEXT, v1AiPercentage TEXT,
                 v2AiPercentage TEXT, PRIMARY KEY (commitHash, branchName));
             CREATE TABLE tracking_state (key TEXT PRIMARY KEY, value TEXT);
             INSERT INTO tracking_state VALUES ('trackingStartTime', '1767225600000');
             INSERT INTO ai_code_hashes VALUES
                 ('a1b2c3d4', 'composer', 'rs', '/w/src/lib.rs', 'req-1', 'chat-1', 1767300000000, 'claude-4.5', 1767300000000),
                 ('a1b2c3d5', 'composer', 'rs', '/w/src/lib.rs', 'req-2', 'chat-1', 1767300500000, 'claude-4.5', 1767300500000),
                 ('e5f6a7b8', 'tab', 'rs', '/w/src/lib.rs', NULL, NULL, 1767400000000, NULL, 1767400000000),
                 ('00ff00ff', 'human', 'rs', '/w/src/lib.rs', NULL, NULL, 1767500000000, NULL, 1767500000000),
                 ('c0ffee00', 'composer', 'rs', '/w/src/main.rs', 'req-3', 'chat-2', 1767600000000, 'gpt-5', 1767600000000);
             INSERT INTO scored_commits VALUES ('0123456789abcdef0123456789abcdef01234567', 'main', 1767700000000,
                 100, 10, 20, 5, 60, 3, 20, 2, 0, 0, 'a commit', '2026-01-06', '50.0', '80.0');",
        )
        .unwrap();
        path
    }

    #[test]
    fn the_published_shape_ties_files_to_chats_and_commits_to_counts() {
        let home = tempfile::tempdir().unwrap();
        let path = published(home.path());
        let before = std::fs::read(&path).unwrap();
        let Look::Open(t) = look(home.path(), &home.path().join("scratch")) else { panic!("not opened") };
        let cov = t.coverage().unwrap();
        assert_eq!(
            (cov.since_ms, cov.chunks, cov.ai_chunks, cov.files, cov.chats, cov.commits),
            (Some(1_767_225_600_000), 5, 4, 2, 2, 1)
        );
        let chats = t.file_chats("/w/src/lib.rs").unwrap();
        let got: Vec<_> = chats.iter().map(|c| (c.conversation_id.as_str(), c.source.as_str(), c.chunks)).collect();
        // The person's own chunk is not a chat's; Tab's has no chat id.
        assert_eq!(got, [("", "tab", 1), ("chat-1", "composer", 2)]);
        assert_eq!((chats[1].first_ms, chats[1].last_ms), (Some(1_767_300_000_000), Some(1_767_300_500_000)));
        assert_eq!(chats[1].model.as_deref(), Some("claude-4.5"));
        let scored = t.scored(&["0123456789abcdef0123456789abcdef01234567".into(), "ffff".into()]).unwrap();
        assert_eq!(scored.len(), 1);
        assert_eq!(
            (
                scored[0].lines_added,
                scored[0].agent_lines_added,
                scored[0].tab_lines_added,
                scored[0].human_lines_added
            ),
            (Some(100), Some(60), Some(20), Some(20))
        );
        drop(t);
        assert_eq!(std::fs::read(&path).unwrap(), before, "read, never written");
        assert!(
            !crate::cursor::sqlite::sidecar(&path, "-wal").exists()
                && !crate::cursor::sqlite::sidecar(&path, "-journal").exists()
        );
    }

    #[test]
    fn an_older_subset_of_columns_reads_and_a_missing_or_foreign_file_is_a_skip() {
        let home = tempfile::tempdir().unwrap();
        let scratch = home.path().join("scratch");
        assert!(matches!(look(home.path(), &scratch), Look::Missing));
        let path = home.path().join(RELATIVE);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, b"not a database at all, just text").unwrap();
        let Look::Skipped { reason, .. } = look(home.path(), &scratch) else { panic!("not skipped") };
        assert!(reason.contains("not readable") || reason.contains("shape"), "{reason}");
        std::fs::remove_file(&path).unwrap();
        // Some readers' fixtures: no hash, no source, no createdAt.
        let c = rusqlite::Connection::open(&path).unwrap();
        c.execute_batch(
            "CREATE TABLE ai_code_hashes (conversationId TEXT, timestamp INTEGER, requestId TEXT, fileName TEXT);
             INSERT INTO ai_code_hashes VALUES ('chat-9', 1767300000000, 'r', '/w/a.ts');",
        )
        .unwrap();
        drop(c);
        let Look::Open(t) = look(home.path(), &scratch) else { panic!("not opened") };
        let chats = t.file_chats("/w/a.ts").unwrap();
        assert_eq!(chats.len(), 1);
        assert_eq!((chats[0].conversation_id.as_str(), chats[0].chunks), ("chat-9", 1));
        assert_eq!(t.coverage().unwrap().since_ms, None);
        assert!(t.scored(&["abc".into()]).unwrap().is_empty());
    }
}
