//! The Cursor CLI's stores: `~/.cursor/chats/<md5(cwd)>/<session>/store.db` (a `meta` row of hex
//! or plain JSON, a protobuf tree of blob ids whose leaves are JSON messages) and
//! `~/.cursor/projects/<sanitized path>/agent-transcripts/**.jsonl`.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::composer::{finish, tool_summary};
use super::sqlite::CursorDb;
use super::value::{non_empty, str_field, timestamp_ms};
use crate::error::Result;
use crate::model::{ParsedMessage, ParsedSession, ProjectVia, Role};

/// Parse the `meta` value: hex-encoded JSON in most builds, plain JSON in some.
pub fn parse_meta(raw: &[u8]) -> Option<Value> {
    let text = std::str::from_utf8(raw).ok()?.trim();
    if let Some(bytes) = hex_decode(text)
        && let Ok(v) = serde_json::from_slice::<Value>(&bytes)
    {
        return Some(v);
    }
    serde_json::from_str(text).ok()
}

fn hex_decode(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) || s.is_empty() {
        return None;
    }
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok()).collect()
}

fn hex_encode(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// What the root blob (`agent.v1.ConversationStateStructure`) tells the reader: the ids of the
/// message blobs and, where it has one, the workspace.
#[derive(Debug, Default, PartialEq)]
pub struct TreeNode {
    /// Field 1 (`root_prompt_messages_json`): ids of the JSON message blobs, in order.
    pub leaves: Vec<String>,
    /// Field 9, when it is a workspace: `previous_workspace_uris` in newer builds, `file_states`
    /// (map entries, binary) in older ones, so only a `file://` URI or an absolute path counts.
    pub workspace: Option<String>,
}

/// Decode the root blob. Everything but fields 1 and 9 is skipped, on purpose: field 2
/// (`turns_old`) and 8 (`turns`) are protobuf turn records, not messages, and the rest are token
/// details, summary archives and the like. Malformed input yields `None`.
pub fn parse_tree(buf: &[u8]) -> Option<TreeNode> {
    let mut node = TreeNode::default();
    let mut i = 0;
    while i < buf.len() {
        let key = varint(buf, &mut i)?;
        let (field, wire) = (key >> 3, key & 7);
        match wire {
            0 => {
                varint(buf, &mut i)?;
            }
            1 => i = i.checked_add(8).filter(|&e| e <= buf.len())?,
            5 => i = i.checked_add(4).filter(|&e| e <= buf.len())?,
            2 => {
                let len = usize::try_from(varint(buf, &mut i)?).ok()?;
                let end = i.checked_add(len).filter(|&e| e <= buf.len())?;
                let bytes = &buf[i..end];
                i = end;
                match (field, len) {
                    (1, 32) => node.leaves.push(hex_encode(bytes)),
                    (9, _) if node.workspace.is_none() => node.workspace = workspace_of(bytes),
                    _ => {}
                }
            }
            _ => return None,
        }
    }
    Some(node)
}

/// A workspace from field 9's bytes: a `file://` URI or an absolute path, in UTF-8, nothing else.
fn workspace_of(bytes: &[u8]) -> Option<String> {
    let s = std::str::from_utf8(bytes).ok()?.trim();
    let absolute =
        s.starts_with('/') || (s.len() > 2 && s.as_bytes()[1] == b':' && s.as_bytes()[0].is_ascii_alphabetic());
    let uri = s.starts_with("file://") || s.starts_with("vscode-remote://");
    ((uri || absolute) && !s.chars().any(char::is_control)).then(|| s.to_owned())
}

fn varint(buf: &[u8], i: &mut usize) -> Option<u64> {
    let mut out = 0u64;
    for shift in (0..64).step_by(7) {
        let b = *buf.get(*i)?;
        *i += 1;
        out |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Some(out);
        }
    }
    None
}

/// Read a CLI `store.db` session.
pub fn read_store(db: &CursorDb, path: &Path) -> Result<Option<ParsedSession>> {
    let dir = path.parent().unwrap_or(Path::new(""));
    let id = dir.file_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let mut s = ParsedSession::new(&id, "cli", "cli-store");
    let sidecar: Option<Value> =
        std::fs::read_to_string(dir.join("meta.json")).ok().and_then(|t| serde_json::from_str(&t).ok());
    let meta = if db.has_table("meta")? {
        let raw: Option<Vec<u8>> = db
            .conn
            .query_row("SELECT value FROM meta WHERE key = '0'", [], |r| {
                use rusqlite::types::ValueRef;
                Ok(match r.get_ref(0)? {
                    ValueRef::Text(b) | ValueRef::Blob(b) => Some(b.to_vec()),
                    _ => None,
                })
            })
            .or_else(|e| if matches!(e, rusqlite::Error::QueryReturnedNoRows) { Ok(None) } else { Err(e) })?;
        match raw.as_deref().map(parse_meta) {
            Some(Some(v)) => Some(v),
            Some(None) => {
                s.problems.add("bad_json");
                None
            }
            None => None,
        }
    } else {
        None
    };
    if let Some(m) = &meta {
        s.id = non_empty(str_field(m, "agentId")).unwrap_or(id);
        s.title = non_empty(str_field(m, "name"));
        s.mode = non_empty(str_field(m, "mode"));
        s.model = non_empty(str_field(m, "lastUsedModel"));
        s.created_at = timestamp_ms(m.get("createdAt"));
    }
    if let Some(j) = &sidecar {
        s.created_at = s.created_at.or_else(|| timestamp_ms(j.get("createdAtMs")));
        s.updated_at = timestamp_ms(j.get("updatedAtMs"));
        s.title = s.title.take().or_else(|| non_empty(str_field(j, "title")));
        s.set_project(non_empty(str_field(j, "cwd")).map(|c| super::uri::normalise_path(&c)), ProjectVia::Cwd);
    }
    let root = meta.as_ref().and_then(|m| str_field(m, "latestRootBlobId")).map(str::to_owned);
    if let Some(root) = root {
        walk_tree(db, &root, &mut s)?;
    } else {
        s.problems.add("note:no_root_blob");
    }
    s.fingerprint = meta.as_ref().map(meta_fingerprint).unwrap_or_default();
    finish(&mut s);
    if s.messages.is_empty() && s.title.is_none() {
        return Ok(None);
    }
    Ok(Some(s))
}

/// What tells a store's chat changed: a hash of its meta row, never the row. The row carries
/// `blobEncryptionKey` (2026.08 on) and may carry more of Cursor's secrets; a fingerprint is
/// stored in our index, and no key of Cursor's may be.
fn meta_fingerprint(meta: &Value) -> String {
    format!("meta:{:016x}", xxhash_rust::xxh3::xxh3_64(meta.to_string().as_bytes()))
}

fn walk_tree(db: &CursorDb, root: &str, s: &mut ParsedSession) -> Result<()> {
    let mut stmt = db.conn.prepare("SELECT data FROM blobs WHERE id = ?1")?;
    let mut get = |id: &str| -> rusqlite::Result<Option<Vec<u8>>> {
        let mut rows = stmt.query([id])?;
        Ok(match rows.next()? {
            Some(r) => match r.get_ref(0)? {
                rusqlite::types::ValueRef::Text(b) | rusqlite::types::ValueRef::Blob(b) => Some(b.to_vec()),
                _ => None,
            },
            None => None,
        })
    };
    let Some(data) = get(root)? else {
        s.problems.add("missing_blob");
        return Ok(());
    };
    let Some(node) = parse_tree(&data) else {
        s.problems.add("bad_blob");
        return Ok(());
    };
    if let Some(w) = node.workspace {
        s.set_project(super::uri::project_from_uri(&w), ProjectVia::Cwd);
    }
    let mut seen = HashSet::new();
    let mut leaves = Vec::new();
    for id in node.leaves {
        if !seen.insert(id.clone()) {
            continue;
        }
        match get(&id)? {
            Some(data) => leaves.push(data),
            None => s.problems.add("missing_blob"),
        }
    }
    for data in leaves {
        match serde_json::from_slice::<Value>(&data) {
            Ok(v) => push_wire_message(s, &v),
            Err(_) => s.problems.add("bad_json"),
        }
    }
    Ok(())
}

/// A provider wire message: `{role, content: string | [blocks], tool_calls?}`.
pub fn push_wire_message(s: &mut ParsedSession, v: &Value) {
    let role = match str_field(v, "role") {
        Some("user") => Role::User,
        Some("assistant") => Role::Assistant,
        Some("system") => {
            s.problems.add("note:system_prompt");
            return;
        }
        Some("tool") => {
            s.problems.add("note:tool_result");
            return;
        }
        _ => {
            s.problems.add("unknown_role");
            return;
        }
    };
    match v.get("content") {
        Some(Value::String(t)) => push_text(s, role, t),
        Some(Value::Array(blocks)) => {
            for b in blocks {
                push_block(s, role, b);
            }
        }
        _ => {}
    }
    for call in v.get("tool_calls").and_then(Value::as_array).into_iter().flatten() {
        let f = call.get("function").unwrap_or(call);
        let name = str_field(f, "name").unwrap_or("tool");
        let args = f.get("arguments").map(tool_summary).unwrap_or_default();
        s.messages.push(ParsedMessage::tool(name, None, args));
    }
}

fn push_block(s: &mut ParsedSession, role: Role, b: &Value) {
    match str_field(b, "type") {
        Some("text") => push_text(s, role, str_field(b, "text").unwrap_or("")),
        Some("reasoning" | "thinking" | "redacted_reasoning") => {
            let t = str_field(b, "text").or_else(|| str_field(b, "thinking")).unwrap_or("");
            super::transcript::push_assistant_text(s, t, true);
        }
        Some("tool-call" | "tool_use" | "tool_call") => {
            let name = str_field(b, "toolName").or_else(|| str_field(b, "name")).unwrap_or("tool");
            let input = b.get("args").or_else(|| b.get("input"));
            if let Some(i) = input {
                super::transcript::collect_paths(i, &mut s.path_hints);
            }
            let args = input.map(tool_summary).unwrap_or_default();
            s.messages.push(ParsedMessage::tool(name, None, args));
        }
        Some("tool-result" | "tool_result") => s.problems.add("note:tool_result"),
        Some("image" | "file") => s.problems.add("note:attachment"),
        _ => s.problems.add("note:unknown_block"),
    }
}

/// CLI prompts arrive as `<timestamp>…</timestamp><user_query>…</user_query>` plus context
/// blocks, assistant text may end in `[REDACTED]` (see `transcript`).
fn push_text(s: &mut ParsedSession, role: Role, t: &str) {
    match role {
        Role::User => super::transcript::push_user_text(s, t),
        _ => super::transcript::push_assistant_text(s, t, false),
    }
}

/// Parse an agent transcript (JSONL). Bad lines are counted, not fatal.
pub fn parse_transcript(id: &str, text: &str, project: Option<String>) -> ParsedSession {
    let mut s = ParsedSession::new(id, "cli", "transcript");
    s.set_project(project, ProjectVia::Cwd);
    let lines: Vec<&str> = text.lines().collect();
    for (n, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v: Value = match serde_json::from_str(line) {
            Ok(v) => v,
            // A last line without its newline is usually one being written right now.
            Err(_) if n + 1 == lines.len() && !text.ends_with('\n') => {
                s.problems.add("note:partial_last_line");
                continue;
            }
            Err(_) => {
                s.problems.add("bad_json");
                continue;
            }
        };
        match str_field(&v, "type") {
            Some("turn_ended") => continue,
            Some("error") => {
                let msg = v.get("error").map(|e| match e {
                    Value::String(s) => s.clone(),
                    other => str_field(other, "message").map(str::to_owned).unwrap_or_else(|| other.to_string()),
                });
                s.messages.push(ParsedMessage::error(msg.unwrap_or_default()));
                s.problems.add("note:error_event");
                continue;
            }
            _ => {}
        }
        let msg = v.get("message").unwrap_or(&v);
        let mut wire = msg.clone();
        if wire.get("role").is_none()
            && let (Some(obj), Some(role)) = (wire.as_object_mut(), v.get("role"))
        {
            obj.insert("role".into(), role.clone());
        }
        push_wire_message(&mut s, &wire);
    }
    finish(&mut s);
    s
}

/// How the CLI turns a path into a `~/.cursor/projects/<name>` folder name, compared loosely:
/// every run of characters that are not letters or digits is one `-`, case aside.
pub fn project_slug(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for c in path.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').to_owned()
}

/// The project of a CLI chat filed under `~/.cursor/projects/<name>`. The folder name is lossy
/// (`/home/u/my-app` and `/home/u/my/app` both become `home-u-my-app`), so the real path comes
/// first from what records it: the chat's `meta.json` cwd (also without a `store.db` beside it),
/// then a path the chat itself mentions that encodes to `name`, then a project Tether knows
/// (from the IDE's workspaces) that does, then the one decoding that exists on this disk. When
/// nothing says, the folder name is shown as it is — never a made-up path.
pub fn transcript_project(
    name: &str,
    id: &str,
    cursor_home: Option<&Path>,
    hints: &[String],
    known: &[String],
) -> Option<String> {
    if name == "empty-window" || (name.len() == 13 && name.bytes().all(|b| b.is_ascii_digit())) {
        return None;
    }
    if let Some(cwd) = cursor_home.and_then(|h| meta_cwd(h, id)) {
        return Some(cwd);
    }
    let want = project_slug(name);
    for h in hints {
        let mut p = Path::new(h);
        loop {
            if project_slug(&p.to_string_lossy()) == want {
                return Some(super::uri::normalise_path(&p.to_string_lossy()));
            }
            match p.parent() {
                Some(parent) if parent != p => p = parent,
                _ => break,
            }
        }
    }
    if let Some(k) = known.iter().find(|k| project_slug(k) == want) {
        return Some(k.clone());
    }
    match unsanitize_project(name, Path::new("/")) {
        Some(p) if Path::new(&p).is_dir() => Some(p),
        _ => Some(name.to_owned()),
    }
}

/// `cwd` from `~/.cursor/chats/<md5>/<id>/meta.json`, wherever the chat's folder is.
fn meta_cwd(cursor_home: &Path, id: &str) -> Option<String> {
    let chats = std::fs::read_dir(cursor_home.join("chats")).ok()?;
    chats.flatten().find_map(|d| {
        let raw = std::fs::read(d.path().join(id).join("meta.json")).ok()?;
        let meta = parse_meta(&raw)?;
        non_empty(str_field(&meta, "cwd")).map(|c| super::uri::normalise_path(&c))
    })
}

/// Reverse the lossy `~/.cursor/projects/<name>` encoding (`/` and `:` became `-`) by walking
/// the filesystem greedily; falls back to treating every `-` as `/`.
pub fn unsanitize_project(name: &str, fs_root: &Path) -> Option<String> {
    if name == "empty-window" || (name.len() == 13 && name.bytes().all(|b| b.is_ascii_digit())) {
        return None;
    }
    let parts: Vec<&str> = name.split('-').filter(|p| !p.is_empty()).collect();
    if parts.is_empty() {
        return None;
    }
    let windows = parts[0].len() == 1 && parts[0].as_bytes()[0].is_ascii_alphabetic();
    let (mut base, rest): (PathBuf, &[&str]) = if windows {
        (PathBuf::from(format!("{}:/", parts[0])), &parts[1..])
    } else {
        (fs_root.to_path_buf(), &parts[..])
    };
    let mut comps: Vec<String> = Vec::new();
    let mut cur = String::new();
    let resolved = !windows;
    for p in rest {
        if cur.is_empty() {
            cur = (*p).to_owned();
        } else if resolved && base.join(&cur).is_dir() {
            base = base.join(&cur);
            comps.push(std::mem::take(&mut cur));
            cur = (*p).to_owned();
        } else if resolved {
            cur = format!("{cur}-{p}");
        } else {
            comps.push(std::mem::take(&mut cur));
            cur = (*p).to_owned();
        }
    }
    if !cur.is_empty() {
        comps.push(cur);
    }
    let joined = comps.join("/");
    Some(if windows {
        format!("{}:/{}", parts[0].to_ascii_lowercase(), joined)
    } else {
        let candidate = fs_root.join(&joined);
        if candidate.exists() { format!("/{joined}") } else { format!("/{}", rest.join("/")) }
    })
}

/// Every transcript under a `~/.cursor/projects` dir, with its project folder's name: the JSONL
/// ones (`agent-transcripts/<id>/<id>.jsonl`), the legacy plain-text ones (`agent-transcripts/
/// <id>.txt`, unless a JSONL of the same chat exists) and subagent transcripts whose parent is
/// gone (`<id>/subagents/*.jsonl`); those with a parent are read with it ([`subagents_of`]).
pub fn find_transcripts(projects_dir: &Path, skipped: &mut Vec<(PathBuf, &'static str)>) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    let Ok(projects) = std::fs::read_dir(projects_dir) else { return out };
    for p in projects.flatten() {
        let name = p.file_name().to_string_lossy().into_owned();
        let dir = p.path().join("agent-transcripts");
        let mut stack = vec![dir];
        while let Some(d) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&d) else { continue };
            for e in entries.flatten() {
                let path = e.path();
                if path.is_dir() {
                    if path.file_name().is_some_and(|n| n == "subagents") {
                        let subs = jsonl_files(&path);
                        if has_parent_transcript(&path) {
                            skipped.extend(subs.into_iter().map(|s| (s, "subagent: read nested in its parent's chat")));
                        } else {
                            out.extend(subs.into_iter().map(|s| (s, name.clone())));
                        }
                        continue;
                    }
                    stack.push(path);
                } else if path.extension().is_some_and(|x| x == "jsonl") {
                    out.push((path, name.clone()));
                } else if path.extension().is_some_and(|x| x == "txt") {
                    let stem = path.file_stem().unwrap_or_default();
                    if d.join(stem).join(stem).with_extension("jsonl").is_file() {
                        skipped.push((path, "legacy .txt transcript: the same chat's .jsonl is read"));
                    } else {
                        out.push((path, name.clone()));
                    }
                } else {
                    skipped.push((path, "not a transcript (.jsonl or .txt)"));
                }
            }
        }
    }
    out.sort();
    out
}

fn jsonl_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut v: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl") && p.is_file())
        .collect();
    v.sort();
    v
}

/// Whether `<id>/subagents` sits beside its parent's transcript (`<id>/<id>.jsonl` or `<id>.txt`).
fn has_parent_transcript(subagents: &Path) -> bool {
    let Some(chat) = subagents.parent() else { return false };
    let Some(id) = chat.file_name() else { return false };
    chat.join(id).with_extension("jsonl").is_file() || chat.with_extension("txt").is_file()
}

/// The subagent transcripts of a parent transcript (`<id>/<id>.jsonl` or `<id>.txt`), in name
/// order. None for a subagent's own transcript.
pub fn subagents_of(transcript: &Path) -> Vec<PathBuf> {
    let (Some(dir), Some(stem)) = (transcript.parent(), transcript.file_stem()) else { return Vec::new() };
    if dir.file_name().is_some_and(|n| n == "subagents") {
        return Vec::new();
    }
    let chat = if dir.file_name() == Some(stem) { dir.to_path_buf() } else { dir.join(stem) };
    jsonl_files(&chat.join("subagents"))
}

/// Every session folder `depth` levels under `dir` (`chats/<md5>/<session>`: 2;
/// `acp-sessions/<session>`: 1): its `store.db`, or else its `meta.json` alone.
pub fn find_sessions(
    dir: &Path,
    depth: usize,
    skipped: &mut Vec<(PathBuf, &'static str)>,
) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let mut level = vec![dir.to_path_buf()];
    for _ in 0..depth {
        level = level
            .iter()
            .filter_map(|d| std::fs::read_dir(d).ok())
            .flat_map(|e| e.flatten().map(|e| e.path()).filter(|p| p.is_dir()).collect::<Vec<_>>())
            .collect();
    }
    let (mut stores, mut metas) = (Vec::new(), Vec::new());
    for d in level {
        if d.join("store.db").is_file() {
            stores.push(d.join("store.db"));
        } else if d.join("meta.json").is_file() {
            metas.push(d.join("meta.json"));
        } else {
            skipped.push((d, "session folder with no store.db or meta.json"));
        }
    }
    stores.sort();
    metas.sort();
    (stores, metas)
}

/// Every `store.db` under a CLI chats dir (`<md5>/<session>/store.db`).
pub fn find_stores(chats_dir: &Path) -> Vec<PathBuf> {
    find_sessions(chats_dir, 2, &mut Vec::new()).0
}

/// A session known only by its `meta.json` (`{schemaVersion, createdAtMs, updatedAtMs,
/// hasConversation, cwd}`, ACP adds `title`). `None` when it says it never had a conversation.
pub fn read_meta_only(path: &Path, raw: &[u8]) -> Option<ParsedSession> {
    let dir = path.parent().unwrap_or(Path::new(""));
    let id = dir.file_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let mut s = ParsedSession::new(&id, "cli", "cli-meta");
    let Some(j) = parse_meta(raw) else {
        s.problems.add("bad_json");
        return Some(s);
    };
    if j.get("hasConversation").and_then(Value::as_bool) == Some(false) {
        return None;
    }
    s.title = non_empty(str_field(&j, "title")).or_else(|| non_empty(str_field(&j, "name")));
    s.created_at = timestamp_ms(j.get("createdAtMs"));
    s.updated_at = timestamp_ms(j.get("updatedAtMs")).or(s.created_at);
    s.set_project(non_empty(str_field(&j, "cwd")).map(|c| super::uri::normalise_path(&c)), ProjectVia::Cwd);
    s.problems.add("note:messages_not_on_disk");
    Some(s)
}

/// MD5 of a path, as the CLI names `~/.cursor/chats/<md5(cwd)>` folders.
pub fn md5_hex(s: &str) -> String {
    use md5::Digest;
    let d = md5::Md5::digest(s.as_bytes());
    d.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn meta_hex_or_plain() {
        let j = r#"{"agentId":"a","latestRootBlobId":"00"}"#;
        let hex: String = j.bytes().map(|b| format!("{b:02x}")).collect();
        assert_eq!(parse_meta(hex.as_bytes()).unwrap()["agentId"], "a");
        assert_eq!(parse_meta(j.as_bytes()).unwrap()["agentId"], "a");
        assert!(parse_meta(b"zz").is_none());
    }

    #[test]
    fn the_root_blob_gives_message_ids_and_only_a_real_workspace() {
        let id = |b: u8| [b; 32];
        let mut buf = Vec::new();
        for b in [1u8, 3] {
            buf.extend([0x0a, 0x20]);
            buf.extend(id(b));
        }
        buf.extend([0x12, 0x20]); // field 2, `turns_old`: a turn record's id, not a sub-tree
        buf.extend(id(2));
        buf.extend([0x42, 0x03, 0x0a, 0x01, 0x78]); // field 8, a turn record inline
        buf.extend([0x18, 0x96, 0x01]); // a varint field
        let mut with_ws = buf.clone();
        with_ws.extend([0x4a, 0x17]);
        with_ws.extend(b"file:///home/u/projects");
        let n = parse_tree(&with_ws).unwrap();
        assert_eq!(n.leaves, vec!["01".repeat(32), "03".repeat(32)]);
        assert_eq!(n.workspace.as_deref(), Some("file:///home/u/projects"));
        // Older builds: field 9 is `file_states`, map entries whose bytes are not a workspace.
        let mut file_state = buf.clone();
        let entry = b"\x0a\x15/home/u/proj/src/a.ts\x12\x02\x08\x01";
        file_state.extend([0x4a, entry.len() as u8]);
        file_state.extend(entry);
        assert_eq!(parse_tree(&file_state).unwrap().workspace, None);
        assert!(parse_tree(&[0x0a, 0x40, 1, 2]).is_none(), "length past the end");
        assert!(parse_tree(&[0xff; 12]).is_none(), "overlong varint");
    }

    #[test]
    fn transcripts_unwrap_queries_and_count_bad_lines() {
        let text = [
            json!({"role": "user", "message": {"content": [{"type": "text", "text": "<timestamp>x</timestamp>\n<user_query>\nfix it\n</user_query>"}]}}).to_string(),
            "{broken".to_owned(),
            json!({"role": "assistant", "message": {"content": [{"type": "text", "text": "done"}, {"type": "tool_use", "name": "Shell", "input": {"command": "ls"}}]}}).to_string(),
            json!({"type": "turn_ended", "status": "success"}).to_string(),
            "{\"role\":\"assi".to_owned(),
        ]
        .join("\n");
        let s = parse_transcript("t1", &text, Some("/p".into()));
        let got: Vec<_> = s.messages.iter().map(|m| (m.role, m.text.as_str())).collect();
        assert_eq!(got, [(Role::User, "fix it"), (Role::Assistant, "done"), (Role::Assistant, "ls")]);
        assert_eq!(s.problems.0.get("bad_json"), Some(&1));
        assert_eq!(s.problems.0.get("note:partial_last_line"), Some(&1));
    }

    #[test]
    fn a_dashed_project_folder_gets_its_real_path_or_its_name_never_an_invented_one() {
        let root = tempfile::tempdir().unwrap();
        let home = root.path().join(".cursor");
        // meta.json beside no store.db.
        std::fs::create_dir_all(home.join("chats/abc/chat-1")).unwrap();
        std::fs::write(home.join("chats/abc/chat-1/meta.json"), r#"{"cwd":"/srv/my-app"}"#).unwrap();
        assert_eq!(transcript_project("srv-my-app", "chat-1", Some(&home), &[], &[]).as_deref(), Some("/srv/my-app"));
        // A path the chat mentions.
        let hints = vec!["/home/u/my-app/src/main.rs".to_owned()];
        assert_eq!(
            transcript_project("home-u-my-app", "x", Some(&home), &hints, &[]).as_deref(),
            Some("/home/u/my-app")
        );
        // A project Tether knows from the IDE (dots and dashes are both lossy).
        let known = vec!["/work/site.v2".to_owned()];
        assert_eq!(transcript_project("work-site-v2", "x", None, &[], &known).as_deref(), Some("/work/site.v2"));
        // Nothing says: the folder name as it is.
        assert_eq!(
            transcript_project("nowhere-at-all-here", "x", None, &[], &[]).as_deref(),
            Some("nowhere-at-all-here")
        );
        assert_eq!(transcript_project("empty-window", "x", None, &[], &[]), None);
    }

    #[test]
    fn project_names_reverse_with_the_filesystem() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join("home/u/my-app")).unwrap();
        let got = unsanitize_project("home-u-my-app", root.path()).unwrap();
        assert_eq!(got, "/home/u/my-app", "hyphenated folder names survive when they exist on disk");
        assert_eq!(unsanitize_project("c-Users-x-proj", root.path()).unwrap(), "c:/Users/x/proj");
        assert_eq!(unsanitize_project("empty-window", root.path()), None);
    }
}
