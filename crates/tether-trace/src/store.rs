//! The trace's SQL, all of it: recording an edit (possibly in parts), finding the edits that
//! wrote or replaced given line hashes, a repository's tracing start and publishing choice, the
//! files a chat changed, and what an export or the insights read.
//!
//! Writes use the writer's ordinary WAL commit, not the FULL-synchronous one: an edit is recorded
//! on Cursor's hook path, and a power cut losing the last moment of traces costs an `unknown`,
//! never a wrong answer (a kill -9 loses nothing).

use std::collections::HashMap;

use rusqlite::{OptionalExtension, params};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tether_store::{Result, Store};

use crate::capture::Range;

/// Who made an edit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, ts_rs::TS)]
#[ts(export, export_to = "trace.ts")]
#[serde(rename_all = "snake_case")]
pub enum EditKind {
    /// Cursor's agent (`afterFileEdit`).
    Agent,
    /// Cursor Tab (`afterTabFileEdit`).
    Tab,
    /// One of Tether's runs (its tool calls).
    Run,
}

impl EditKind {
    pub fn as_str(self) -> &'static str {
        match self {
            EditKind::Agent => "agent",
            EditKind::Tab => "tab",
            EditKind::Run => "run",
        }
    }
    fn parse(s: &str) -> EditKind {
        match s {
            "tab" => EditKind::Tab,
            "run" => EditKind::Run,
            _ => EditKind::Agent,
        }
    }
}

/// One edit (or one part of it) to record.
#[derive(Debug, Clone)]
pub struct NewEdit {
    /// The capturer's id; parts of one edit share it.
    pub uid: String,
    pub at_ms: i64,
    pub kind: EditKind,
    pub conversation_id: Option<String>,
    pub generation_id: Option<String>,
    pub model: Option<String>,
    pub run_id: Option<String>,
    pub repo: Option<String>,
    pub head: Option<String>,
    pub path: String,
    pub ranges: Vec<Range>,
    pub written: Vec<i64>,
    pub replaced: Vec<i64>,
}

/// A recorded edit.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Edit {
    pub id: i64,
    pub at_ms: i64,
    pub kind: EditKind,
    pub conversation_id: Option<String>,
    pub generation_id: Option<String>,
    pub model: Option<String>,
    pub run_id: Option<String>,
    pub repo: Option<String>,
    pub head: Option<String>,
    pub path: String,
    pub ranges: Vec<Range>,
    pub lines: i64,
}

const EDIT_COLS: &str = "id, at, kind, conversation_id, generation_id, model, run_id, repo, head, path, ranges, lines";

fn edit_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Edit> {
    let ranges: String = r.get(10)?;
    Ok(Edit {
        id: r.get(0)?,
        at_ms: r.get(1)?,
        kind: EditKind::parse(&r.get::<_, String>(2)?),
        conversation_id: r.get(3)?,
        generation_id: r.get(4)?,
        model: r.get(5)?,
        run_id: r.get(6)?,
        repo: r.get(7)?,
        head: r.get(8)?,
        path: r.get(9)?,
        ranges: serde_json::from_str(&ranges).unwrap_or_default(),
        lines: r.get(11)?,
    })
}

/// Records an edit or one more part of it; returns its id. A part whose uid is known adds its
/// lines and ranges to that edit.
pub fn record(store: &Store, e: &NewEdit) -> Result<i64> {
    let mut conn = store.writer();
    let tx = conn.transaction()?;
    let existing: Option<(i64, String)> = tx
        .query_row("SELECT id, ranges FROM trace_edits WHERE uid = ?1", [&e.uid], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?;
    let id = match existing {
        Some((id, ranges)) => {
            let mut all: Vec<Range> = serde_json::from_str(&ranges).unwrap_or_default();
            all.extend(e.ranges.iter().cloned());
            tx.execute(
                "UPDATE trace_edits SET ranges = ?2, lines = lines + ?3 WHERE id = ?1",
                params![id, serde_json::to_string(&all)?, e.written.len() as i64],
            )?;
            id
        }
        None => {
            tx.execute(
                "INSERT INTO trace_edits(uid, at, kind, conversation_id, generation_id, model, run_id, repo, head, path, ranges, lines)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
                params![
                    e.uid,
                    e.at_ms,
                    e.kind.as_str(),
                    e.conversation_id,
                    e.generation_id,
                    e.model,
                    e.run_id,
                    e.repo,
                    e.head,
                    e.path,
                    serde_json::to_string(&e.ranges)?,
                    e.written.len() as i64
                ],
            )?;
            let id = tx.last_insert_rowid();
            if let Some(repo) = &e.repo {
                tx.execute(
                    "INSERT INTO trace_repos(repo, since) VALUES (?1, ?2)
                     ON CONFLICT(repo) DO UPDATE SET since = min(since, excluded.since)",
                    params![repo, e.at_ms],
                )?;
            }
            id
        }
    };
    {
        let mut ins = tx.prepare_cached("INSERT INTO trace_lines(edit_id, hash, written) VALUES (?1, ?2, ?3)")?;
        for h in &e.written {
            ins.execute(params![id, h, 1])?;
        }
        for h in &e.replaced {
            ins.execute(params![id, h, 0])?;
        }
    }
    tx.commit()?;
    Ok(id)
}

/// For each hash, the ids of the edits in `repo` (or, outside a repository, of the file at
/// absolute `path`) that wrote it (`written`) or replaced it (`!written`).
pub fn edits_by_hash(
    store: &Store,
    repo: Option<&str>,
    path: &str,
    hashes: &[i64],
    written: bool,
) -> Result<HashMap<i64, Vec<i64>>> {
    let mut out: HashMap<i64, Vec<i64>> = HashMap::new();
    let mut wanted: Vec<i64> = hashes.to_vec();
    wanted.sort_unstable();
    wanted.dedup();
    store.read(|c| {
        for chunk in wanted.chunks(400) {
            let marks = vec!["?"; chunk.len()].join(",");
            let sql = format!(
                "SELECT l.hash, l.edit_id FROM trace_lines l JOIN trace_edits e ON e.id = l.edit_id
                 WHERE l.hash IN ({marks}) AND l.written = ?{w}
                   AND (CASE WHEN ?{r} IS NULL THEN e.repo IS NULL AND e.path = ?{p} ELSE e.repo = ?{r} END)",
                w = chunk.len() + 1,
                r = chunk.len() + 2,
                p = chunk.len() + 3
            );
            let mut stmt = c.prepare(&sql)?;
            let mut args: Vec<rusqlite::types::Value> = chunk.iter().map(|h| (*h).into()).collect();
            args.push((written as i64).into());
            args.push(repo.map(str::to_owned).into());
            args.push(path.to_owned().into());
            let rows =
                stmt.query_map(rusqlite::params_from_iter(args), |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?)))?;
            for row in rows {
                let (h, id) = row?;
                let ids = out.entry(h).or_default();
                if !ids.contains(&id) {
                    ids.push(id);
                }
            }
        }
        Ok(())
    })?;
    Ok(out)
}

/// The edits with these ids.
pub fn edits(store: &Store, ids: &[i64]) -> Result<Vec<Edit>> {
    store.read(|c| {
        let mut out = Vec::with_capacity(ids.len());
        let mut stmt = c.prepare_cached(&format!("SELECT {EDIT_COLS} FROM trace_edits WHERE id = ?1"))?;
        for id in ids {
            if let Some(e) = stmt.query_row([id], edit_row).optional()? {
                out.push(e);
            }
        }
        Ok(out)
    })
}

/// When tracing began for `repo` (its first recorded edit, or when it was enabled).
pub fn since(store: &Store, repo: &str) -> Result<Option<i64>> {
    store.read(|c| Ok(c.query_row("SELECT since FROM trace_repos WHERE repo = ?1", [repo], |r| r.get(0)).optional()?))
}

/// The commit `repo` was at when its first edit was recorded: what tracing began from.
pub fn first_head(store: &Store, repo: &str) -> Result<Option<String>> {
    store.read(|c| {
        Ok(c.query_row("SELECT head FROM trace_edits WHERE repo = ?1 ORDER BY at, id LIMIT 1", [repo], |r| r.get(0))
            .optional()?
            .flatten())
    })
}

/// A traced repository and whether its records are written into it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, ts_rs::TS)]
#[ts(export, export_to = "trace.ts")]
pub struct TracedRepo {
    pub repo: String,
    pub since_ms: i64,
    /// `notes` (git notes `refs/notes/agent-trace`), `files` (`.agent-trace/`) or none: private.
    pub publish: Option<String>,
    pub published_head: Option<String>,
}

pub fn repos(store: &Store) -> Result<Vec<TracedRepo>> {
    store.read(|c| {
        let mut stmt = c.prepare("SELECT repo, since, publish, published_head FROM trace_repos ORDER BY repo")?;
        let rows = stmt.query_map([], |r| {
            Ok(TracedRepo { repo: r.get(0)?, since_ms: r.get(1)?, publish: r.get(2)?, published_head: r.get(3)? })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    })
}

/// Turns writing records into `repo` on (`Some(mode)`) or off; tracing starts now if it had not.
pub fn set_publish(
    store: &Store,
    repo: &str,
    mode: Option<&str>,
    now_ms: i64,
    head: Option<&str>,
) -> Result<TracedRepo> {
    if mode.is_some() {
        // What was recorded before publishing was turned on stays out of the repository.
        store
            .writer()
            .execute("UPDATE trace_edits SET published_in = '' WHERE repo = ?1 AND published_in IS NULL", [repo])?;
    }
    store.writer().execute(
        "INSERT INTO trace_repos(repo, since, publish, published_head) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT(repo) DO UPDATE SET publish = excluded.publish,
             published_head = CASE WHEN excluded.publish IS NULL THEN published_head ELSE excluded.published_head END",
        params![repo, now_ms, mode, head],
    )?;
    Ok(repos(store)?.into_iter().find(|r| r.repo == repo).expect("just written"))
}

/// The edits of `repo` not written into it yet.
pub fn unpublished(store: &Store, repo: &str) -> Result<Vec<Edit>> {
    store.read(|c| {
        let mut stmt = c.prepare(&format!(
            "SELECT {EDIT_COLS} FROM trace_edits WHERE repo = ?1 AND published_in IS NULL ORDER BY at, id"
        ))?;
        let rows = stmt.query_map([repo], edit_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    })
}

/// Marks edits as written into the repository with `commit`'s record.
pub fn mark_published(store: &Store, ids: &[i64], commit: &str) -> Result<()> {
    let mut conn = store.writer();
    let tx = conn.transaction()?;
    for id in ids {
        tx.execute("UPDATE trace_edits SET published_in = ?2 WHERE id = ?1", params![id, commit])?;
    }
    tx.commit()?;
    Ok(())
}

/// Notes the last commit whose records were written into `repo`.
pub fn set_published_head(store: &Store, repo: &str, head: &str) -> Result<()> {
    store.writer().execute("UPDATE trace_repos SET published_head = ?2 WHERE repo = ?1", params![repo, head])?;
    Ok(())
}

/// Edits recorded in `[since, until)`, oldest first, optionally in one repository or one chat.
pub fn list(store: &Store, since_ms: Option<i64>, repo: Option<&str>, conversation: Option<&str>) -> Result<Vec<Edit>> {
    store.read(|c| {
        let mut stmt = c.prepare(&format!(
            "SELECT {EDIT_COLS} FROM trace_edits
             WHERE (?1 IS NULL OR at >= ?1) AND (?2 IS NULL OR repo = ?2) AND (?3 IS NULL OR conversation_id = ?3)
             ORDER BY at, id"
        ))?;
        let rows = stmt.query_map(params![since_ms, repo, conversation], edit_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    })
}

/// Lines written per repository and model since `since_ms`, for the insights.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, ts_rs::TS)]
#[ts(export, export_to = "trace.ts")]
pub struct WrittenBy {
    pub repo: Option<String>,
    pub model: Option<String>,
    pub kind: EditKind,
    #[ts(type = "number")]
    pub lines: i64,
    #[ts(type = "number")]
    pub edits: i64,
    #[ts(type = "number")]
    pub chats: i64,
}

pub fn written_by(store: &Store, since_ms: Option<i64>) -> Result<Vec<WrittenBy>> {
    store.read(|c| {
        let mut stmt = c.prepare(
            "SELECT repo, model, kind, sum(lines), count(*), count(DISTINCT conversation_id)
             FROM trace_edits WHERE ?1 IS NULL OR at >= ?1
             GROUP BY repo, model, kind ORDER BY sum(lines) DESC",
        )?;
        let rows = stmt.query_map([since_ms], |r| {
            Ok(WrittenBy {
                repo: r.get(0)?,
                model: r.get(1)?,
                kind: EditKind::parse(&r.get::<_, String>(2)?),
                lines: r.get(3)?,
                edits: r.get(4)?,
                chats: r.get(5)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edit(uid: &str, repo: Option<&str>, path: &str, written: Vec<i64>) -> NewEdit {
        NewEdit {
            uid: uid.into(),
            at_ms: 1000,
            kind: EditKind::Agent,
            conversation_id: Some("chat-1".into()),
            generation_id: None,
            model: Some("gpt-5".into()),
            run_id: None,
            repo: repo.map(Into::into),
            head: None,
            path: path.into(),
            ranges: vec![Range { start_line: 1, end_line: 1, content_hash: "sha256:x".into() }],
            written,
            replaced: vec![7],
        }
    }

    #[test]
    fn parts_of_one_edit_add_up_and_lookups_stay_in_their_repository() {
        let s = Store::open_in_memory().unwrap();
        let a = record(&s, &edit("e1", Some("/r"), "a.rs", vec![1, 2])).unwrap();
        let again = record(&s, &edit("e1", Some("/r"), "a.rs", vec![3])).unwrap();
        assert_eq!(a, again);
        let e = &edits(&s, &[a]).unwrap()[0];
        assert_eq!((e.lines, e.ranges.len()), (3, 2));
        record(&s, &edit("e2", Some("/other"), "a.rs", vec![1])).unwrap();
        record(&s, &edit("e3", None, "/tmp/x.rs", vec![1])).unwrap();
        let by = edits_by_hash(&s, Some("/r"), "a.rs", &[1, 3, 9], true).unwrap();
        assert_eq!(by.get(&1), Some(&vec![a]));
        assert_eq!(by.get(&3), Some(&vec![a]));
        assert!(!by.contains_key(&9));
        assert_eq!(edits_by_hash(&s, None, "/tmp/x.rs", &[1], true).unwrap()[&1].len(), 1);
        assert_eq!(edits_by_hash(&s, Some("/r"), "a.rs", &[7], false).unwrap()[&7], vec![a]);
        assert_eq!(since(&s, "/r").unwrap(), Some(1000));
        let on = set_publish(&s, "/r", Some("notes"), 5000, Some("abc")).unwrap();
        assert_eq!((on.since_ms, on.publish.as_deref()), (1000, Some("notes")));
        assert_eq!(list(&s, None, None, Some("chat-1")).unwrap().len(), 3);
        assert_eq!(written_by(&s, None).unwrap().iter().map(|w| w.lines).sum::<i64>(), 5);
    }
}
