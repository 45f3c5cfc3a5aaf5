//! An edit joined to its chat: which chat in Tether's index made it, its title and the turn at
//! the edit's time (what blame and the Code view show beside a line), and the files a chat
//! changed. Reads the trace store and the chat index (`tether_history`); never git, never the
//! board, and decides no authority.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;
use tether_trace::store::{self as traces, EditKind};
use tether_trace::{Edit, Range};

use crate::Tether;
use crate::clock::iso;
use crate::error::Result;
use crate::history;

/// An edit lines point at, with its chat.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct EditOrigin {
    #[ts(type = "number")]
    pub id: i64,
    pub at: String,
    /// agent (Cursor's agent) | tab (Cursor Tab) | run (a Tether run).
    pub kind: EditKind,
    pub model: Option<String>,
    /// Cursor's chat id.
    pub conversation_id: Option<String>,
    /// The chat in Tether's index (its title and where to read it), when indexed.
    pub session: Option<String>,
    pub title: Option<String>,
    /// Where the edit's turn starts in the chat (`session_read` offset).
    pub turn: Option<usize>,
    /// That turn's first message (its `seq`, what the reader scrolls to).
    #[ts(type = "number | null")]
    pub turn_seq: Option<i64>,
    pub run_id: Option<String>,
    /// The file as that edit saw it (differs after a move or rename).
    pub path: String,
}

/// An edit with its chat, as people and agents see it.
pub(crate) fn describe(t: &Tether, e: &Edit) -> EditOrigin {
    let summary = e
        .conversation_id
        .as_deref()
        .and_then(|c| t.store.read(|db| history::sessions::summary(db, &history::sessions::resolve(db, c)?)).ok());
    let turn = summary.as_ref().and_then(|s| history::sessions::turn_at(&t.store, &s.id, e.at_ms).ok().flatten());
    EditOrigin {
        id: e.id,
        at: iso(e.at_ms),
        kind: e.kind,
        model: e.model.clone().or_else(|| summary.as_ref().and_then(|s| s.model.clone())),
        conversation_id: e.conversation_id.clone(),
        session: summary.as_ref().map(|s| s.id.clone()),
        title: summary.and_then(|s| s.title),
        turn: turn.map(|t| t.0),
        turn_seq: turn.map(|t| t.1),
        run_id: e.run_id.clone(),
        path: e.path.clone(),
    }
}

/// The files a chat changed, with the lines its edits wrote.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct FileTouched {
    pub repo: Option<String>,
    pub path: String,
    /// Absolute, to open in the Code view.
    pub file: String,
    pub ranges: Vec<Range>,
    #[ts(type = "number")]
    pub lines: i64,
    pub edits: u32,
    pub last_at: String,
}

pub(crate) fn files_of(t: &Tether, session: &str) -> Result<Vec<FileTouched>> {
    let mut by: BTreeMap<(Option<String>, String), FileTouched> = BTreeMap::new();
    for e in traces::list(&t.store, None, None, Some(session))? {
        let file = match &e.repo {
            Some(r) => Path::new(r).join(&e.path).to_string_lossy().into_owned(),
            None => e.path.clone(),
        };
        let f = by.entry((e.repo.clone(), e.path.clone())).or_insert_with(|| FileTouched {
            repo: e.repo.clone(),
            path: e.path.clone(),
            file,
            ranges: Vec::new(),
            lines: 0,
            edits: 0,
            last_at: String::new(),
        });
        f.ranges.extend(e.ranges.iter().cloned());
        f.lines += e.lines;
        f.edits += 1;
        f.last_at = iso(e.at_ms);
    }
    Ok(by.into_values().collect())
}
