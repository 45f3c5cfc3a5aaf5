//! Per-workspace `state.vscdb` files: the folder they belong to (`workspace.json`), inline
//! composers (≤ 0.42), head lists and tab pointers (0.43–2.x, 3.x) that tell which global
//! composers belong to which project, and legacy Chat-panel tabs.

use std::path::Path;

use serde_json::Value;

use super::composer::{HeaderInfo, finish, parse_chat_tabs, push_bubble};
use super::sqlite::{CursorDb, Table};
use super::uri::project_from_uri;
use super::value::{Decoded, decode, non_empty, str_field, timestamp_ms};
use crate::error::Result;
use crate::model::{ParsedSession, ProjectVia, Tally};

#[derive(Debug, Default)]
pub struct WorkspaceRead {
    /// `workspaceStorage/<id>` folder name.
    pub id: String,
    pub uri: Option<String>,
    pub project: Option<String>,
    /// Conversations stored in this workspace DB itself (inline composers, chat tabs).
    pub sessions: Vec<ParsedSession>,
    /// Composer ids this workspace lists or points to, with their head info when present.
    pub members: Vec<(String, Option<HeaderInfo>)>,
    pub problems: Tally,
}

/// Read `workspace.json` (`{folder}` or `{workspace}`) for the project this DB belongs to.
pub fn read_workspace_json(dir: &Path) -> (Option<String>, Option<String>) {
    let Ok(text) = std::fs::read_to_string(dir.join("workspace.json")) else {
        return (None, None);
    };
    let Ok(v) = serde_json::from_str::<Value>(&text) else {
        return (None, None);
    };
    let uri = str_field(&v, "folder").or_else(|| str_field(&v, "workspace")).map(str::to_owned);
    let project = uri.as_deref().and_then(project_from_uri);
    (uri, project)
}

pub const COMPOSER_KEY: &str = "composer.composerData";
const PANE_PREFIX: &str = "workbench.panel.composerChatViewPane.";

pub fn read_workspace(db: &CursorDb, dir: &Path) -> Result<WorkspaceRead> {
    let mut w = WorkspaceRead {
        id: dir.file_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default(),
        ..Default::default()
    };
    let (uri, project) = read_workspace_json(dir);
    w.uri = uri;
    w.project = project;
    if w.uri.is_none() {
        w.problems.add("note:no_workspace_json");
    }
    w.problems.add_n("null_key", db.null_keys(Table::ItemTable)?);

    match db.get(Table::ItemTable, COMPOSER_KEY)?.map(|raw| decode(raw.as_deref())) {
        Some(Decoded::Json(v)) => read_composer_data(&mut w, &v),
        Some(Decoded::Bad) => w.problems.add("bad_json"),
        Some(Decoded::Null) => w.problems.add("null_value"),
        None => {}
    }
    match db.get(Table::ItemTable, super::CHATDATA_KEY)?.map(|raw| decode(raw.as_deref())) {
        Some(Decoded::Json(v)) => {
            let tabs = parse_chat_tabs(&v, &mut w.problems);
            w.sessions.extend(tabs);
        }
        Some(Decoded::Bad) => w.problems.add("bad_json"),
        _ => {}
    }
    let mut pointed = Vec::new();
    db.scan_prefix(Table::ItemTable, PANE_PREFIX, true, |key, _, v| {
        pointed.extend(guids(key));
        if let Some(v) = v {
            pointed.extend(guids(&String::from_utf8_lossy(v)));
        }
    })?;
    for id in pointed {
        if !w.members.iter().any(|(m, _)| *m == id) {
            w.members.push((id, None));
        }
    }
    let project = w.project.clone();
    for s in &mut w.sessions {
        s.workspace_id = Some(w.id.clone());
        s.set_project(project.clone(), ProjectVia::Membership);
    }
    Ok(w)
}

fn read_composer_data(w: &mut WorkspaceRead, v: &Value) {
    for c in v.get("allComposers").and_then(Value::as_array).into_iter().flatten() {
        let Some(id) = str_field(c, "composerId") else {
            w.problems.add("bad_header");
            continue;
        };
        if let Some(conv) = c.get("conversation").and_then(Value::as_array) {
            let mut s = ParsedSession::new(id, "ide", "composer-inline");
            s.title = non_empty(str_field(c, "name"));
            s.created_at = timestamp_ms(c.get("createdAt"));
            s.updated_at = timestamp_ms(c.get("lastUpdatedAt"));
            s.mode = Some("composer".into());
            for b in conv {
                push_bubble(&mut s, b, None);
            }
            finish(&mut s);
            if s.messages.is_empty() {
                w.problems.add("note:empty_session");
            } else {
                w.sessions.push(s);
            }
        }
        w.members.push((id.to_owned(), Some(HeaderInfo::from_json(c))));
    }
    for key in ["selectedComposerIds", "lastFocusedComposerIds"] {
        for id in v.get(key).and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str) {
            if !w.members.iter().any(|(m, _)| m == id) {
                w.members.push((id.to_owned(), None));
            }
        }
    }
}

/// UUID-shaped substrings (8-4-4-4-12 hex), as composer ids appear embedded in pane keys.
fn guids(s: &str) -> Vec<String> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i + 36 <= b.len() {
        let cand = &b[i..i + 36];
        let ok = cand.iter().enumerate().all(|(j, c)| match j {
            8 | 13 | 18 | 23 => *c == b'-',
            _ => c.is_ascii_hexdigit(),
        });
        let bounded =
            (i == 0 || !b[i - 1].is_ascii_hexdigit()) && (i + 36 == b.len() || !b[i + 36].is_ascii_hexdigit());
        if ok && bounded {
            out.push(String::from_utf8_lossy(cand).into_owned());
            i += 36;
        } else {
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guids_are_found_in_pane_keys() {
        let k = "workbench.panel.aichat.view.3f2a1b4c-0000-4000-8000-00000000000a";
        assert_eq!(guids(k), vec!["3f2a1b4c-0000-4000-8000-00000000000a"]);
        assert!(guids("no ids here 1234").is_empty());
    }
}
