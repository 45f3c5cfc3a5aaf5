//! Code origin as people and agents ask for it: "which chat wrote this line" (`tether blame`,
//! the MCP tool `code_origin`, the GUI's Code view), the Agent Trace export, turning publishing
//! into a repository on or off, and the files a chat changed. Each op decides authority, calls
//! the engine (`crate::code_origin`: recording, git's half of the rule, publishing; the rule
//! itself is `tether_trace`'s) and joins edits to the chat index.
//!
//! Private by default: records enter a repository only for one the person enabled, and exports
//! carry chat text only when asked (`with_excerpts`). Reads need no authority beyond being on
//! this machine; remote agents (a cloud run's bearer) may not read origins or change publishing.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use tether_git::Repo;
use tether_trace::Edit;
use tether_trace::lines::split;
use tether_trace::store::{self as traces, TracedRepo, WrittenBy};

use crate::Tether;
use crate::board::principal::Principal;
use crate::clock::{iso, now_ms};
use crate::code_origin::{self, Located, locate, repo_root};
use crate::error::{Error, Result};

pub use crate::code_origin::blame::{LineOrigin, OriginCounts};
pub use crate::code_origin::chats::{EditOrigin, FileTouched};
pub use crate::code_origin::cursor_tracking::{CursorTracking, TrackedChat};
pub use tether_trace::record::{MIME, TraceRecord};

/// `tether blame` / `code_origin` / the Code view: which lines of which file.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct Blame {
    /// The file: absolute, or relative to the calling chat's workspace (MCP) or the current
    /// folder (CLI).
    pub path: String,
    /// First line (1-based); the whole file when left out.
    #[serde(default)]
    pub line: Option<u32>,
    /// Last line (inclusive); just `line` when left out.
    #[serde(default)]
    pub end_line: Option<u32>,
}

#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct BlameResult {
    /// The file, absolute.
    pub file: String,
    /// Its repository's root and its path there; none outside git.
    pub repo: Option<String>,
    pub path: String,
    /// When Tether began tracing this repository: earlier lines are `unknown`.
    pub traced_since: Option<String>,
    pub lines: Vec<LineOrigin>,
    pub edits: Vec<EditOrigin>,
    pub counts: OriginCounts,
    /// Cursor's own AI-code tracking of this file (origin source `cursor-tracking`), where Cursor
    /// keeps one: chats and commit scores beside the lines, never a line's origin.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub cursor_tracking: Option<CursorTracking>,
}

fn remote_refused(who: &Principal) -> Result<()> {
    if who.is_remote() {
        return Err(Error::NotAllowed("code origin is not for agents outside this machine".into()));
    }
    Ok(())
}

/// Resolves `path` against `base` (a workspace or the current folder) when it is relative.
pub fn resolve_path(path: &str, bases: &[String]) -> Result<PathBuf> {
    let p = Path::new(path.trim());
    if path.trim().is_empty() {
        return Err(Error::invalid("path", "give the file to look at"));
    }
    let candidates: Vec<PathBuf> =
        if p.is_absolute() { vec![p.to_path_buf()] } else { bases.iter().map(|b| Path::new(b).join(p)).collect() };
    candidates.iter().find_map(|c| c.canonicalize().ok().filter(|c| c.is_file())).ok_or_else(|| {
        Error::NotFound(format!(
            "no file {path:?}{}",
            if p.is_absolute() { String::new() } else { format!(" under {}", bases.join(", ")) }
        ))
    })
}

/// Each line's origin (see `tether_trace::origin` for the rule, `code_origin::blame` for git's
/// part in it).
pub fn blame(t: &Tether, who: &Principal, req: &Blame) -> Result<BlameResult> {
    remote_refused(who)?;
    let file = resolve_path(&req.path, &[])?;
    let bytes = std::fs::read(&file).map_err(|e| Error::io(format!("reading {}", file.display()), e))?;
    let text = String::from_utf8(bytes)
        .map_err(|_| Error::invalid("path", format!("{} is not text; origins are for text files", file.display())))?;
    let lines = split(&text);
    let Located { root, path: rel } = locate(&file);
    let window = window(req, lines.len())?;
    let o = code_origin::blame::origins(t, root.as_ref(), &rel, &lines, window)?;
    let mut edits: Vec<EditOrigin> = o.edits.values().map(|e| code_origin::chats::describe(t, e)).collect();
    edits.sort_by(|a, b| a.at.cmp(&b.at).then(a.id.cmp(&b.id)));
    let repo = root.map(|r| r.to_string_lossy().into_owned());
    let cursor_tracking = code_origin::cursor_tracking::for_file(t, &file, &o.commits);
    let (file, path, traced_since) = (file.to_string_lossy().into_owned(), rel, o.since.map(iso));
    Ok(BlameResult { file, repo, path, traced_since, lines: o.lines, edits, counts: o.counts, cursor_tracking })
}

/// The 0-based inclusive window a request asks for.
fn window(req: &Blame, len: usize) -> Result<(usize, usize)> {
    if len == 0 {
        return Err(Error::invalid("path", "the file is empty"));
    }
    let first = req.line.unwrap_or(1).max(1) as usize;
    let last = req.end_line.or(req.line.filter(|_| req.end_line.is_none())).map_or(len, |l| l as usize).min(len);
    if first > len || last < first {
        return Err(Error::invalid("line", format!("the file has {len} lines; ask for lines 1 to {len}")));
    }
    Ok((first - 1, last - 1))
}

/// `code_origin`: the origin of a line or range, with the words of the turn that wrote it.
#[derive(Debug, Clone, Serialize)]
pub struct CodeOrigin {
    pub file: String,
    pub counts: OriginCounts,
    pub lines: Vec<LineOrigin>,
    pub edits: Vec<EditOrigin>,
    /// Per chat behind the lines: the turn that made the edit (read more with `session_read`).
    pub excerpts: Vec<Excerpt>,
    /// Cursor's own AI-code tracking of the file (see [`BlameResult::cursor_tracking`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cursor_tracking: Option<CursorTracking>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Excerpt {
    pub session: String,
    pub offset: usize,
    pub messages: Vec<crate::history::sessions::MessageOut>,
}

pub fn code_origin(t: &Tether, who: &Principal, caller_roots: &[String], req: &Blame) -> Result<CodeOrigin> {
    remote_refused(who)?;
    let file = resolve_path(&req.path, caller_roots)?;
    if !who.is_person() {
        agent_may_read(&file, caller_roots)?;
    }
    let req = Blame { path: file.to_string_lossy().into_owned(), ..req.clone() };
    let b = blame(t, who, &req)?;
    let mut excerpts = Vec::new();
    let mut seen = HashSet::new();
    for e in &b.edits {
        let (Some(session), Some(turn)) = (&e.session, e.turn) else { continue };
        if !seen.insert((session.clone(), turn)) {
            continue;
        }
        let w = crate::ops::sessions::read(
            t,
            crate::ops::sessions::Read {
                session: session.clone(),
                offset: Some(turn),
                limit: Some(4),
                around: None,
                include_tools: Some(false),
                max_tokens: Some(1500),
            },
        )?;
        excerpts.push(Excerpt { session: session.clone(), offset: turn, messages: w.messages });
    }
    let (file, counts, lines, edits, cursor_tracking) = (b.file, b.counts, b.lines, b.edits, b.cursor_tracking);
    Ok(CodeOrigin { file, counts, lines, edits, excerpts, cursor_tracking })
}

/// An agent reads origins (and so lines, and the chats that wrote them) only of files in its own
/// chat's workspace roots: not of every repository a hook ever named, a project with chats, or a
/// folder runs may use, which are other chats' work. An agent whose chat is not known (no hook
/// announced the call) has no roots, so reads none; people keep full access.
fn agent_may_read(file: &Path, caller_roots: &[String]) -> Result<()> {
    let inside = caller_roots.iter().filter_map(|r| Path::new(r).canonicalize().ok()).any(|r| file.starts_with(&r));
    if inside {
        Ok(())
    } else if caller_roots.is_empty() {
        Err(Error::NotAllowed(format!(
            "{}: agents read origins only inside their own chat's workspace, and this call's chat is not known \
             (Tether's Cursor hooks say which chat calls: `tether init`)",
            file.display()
        )))
    } else {
        Err(Error::NotAllowed(format!(
            "{} is outside this chat's workspace ({}); agents read origins only there",
            file.display(),
            caller_roots.join(", ")
        )))
    }
}

/// `tether trace export`: Agent Trace records of the edits recorded since a time, in a
/// repository or all.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct Export {
    /// Only edits since this (ISO date or time, or `7d`, `24h`).
    #[serde(default)]
    pub since: Option<String>,
    /// Only this repository (any folder in it).
    #[serde(default)]
    pub repo: Option<String>,
    /// Add the words of the turn that made each edit (chat text leaves Tether only when asked).
    #[serde(default)]
    pub with_excerpts: bool,
}

pub fn export(t: &Tether, who: &Principal, req: &Export) -> Result<Vec<TraceRecord>> {
    remote_refused(who)?;
    let since = req.since.as_deref().map(parse_since).transpose()?;
    let repo = req.repo.as_deref().map(repo_root).transpose()?;
    let edits = traces::list(&t.store, since, repo.as_deref(), None)?;
    Ok(edits.iter().map(|e| to_record(t, e, req.with_excerpts)).collect())
}

fn to_record(t: &Tether, e: &Edit, with_excerpt: bool) -> TraceRecord {
    let excerpt = with_excerpt.then(|| excerpt_text(t, e)).flatten();
    tether_trace::record::record(e, env!("CARGO_PKG_VERSION"), excerpt.as_deref())
}

fn excerpt_text(t: &Tether, e: &Edit) -> Option<String> {
    let d = code_origin::chats::describe(t, e);
    let w = crate::ops::sessions::read(
        t,
        crate::ops::sessions::Read {
            session: d.session?,
            offset: d.turn,
            limit: Some(2),
            around: None,
            include_tools: Some(false),
            max_tokens: Some(600),
        },
    )
    .ok()?;
    let text = w.messages.iter().map(|m| format!("{}: {}", m.role, m.text)).collect::<Vec<_>>().join("\n\n");
    // Chat text leaving Tether goes through the redaction sharing a chat uses (the chat's keys,
    // tokens and passwords replaced); text the scanner refuses is left out, never sent as it is.
    crate::ops::share::redact(&text).ok().map(|(redacted, _)| redacted)
}

/// `7d`, `2w`, `1y`, `24h`, `30m`, or an ISO date/time (see `clock::parse_since`), as epoch ms.
pub fn parse_since(s: &str) -> Result<i64> {
    crate::clock::parse_since(s).ok_or_else(|| {
        Error::invalid("since", format!("{:?} is not a date (2026-11-01), a time, or an age like 7d or 24h", s.trim()))
    })
}

/// Writing records into a repository, turned on (`notes` or `files`) or off.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct Publish {
    /// Any folder of the repository.
    pub repo: String,
    /// `notes` (git notes under refs/notes/agent-trace), `files` (.agent-trace/traces.jsonl in
    /// the checkout), or null to stop.
    #[serde(default)]
    pub store: Option<String>,
}

pub fn set_publish(t: &Tether, who: &Principal, req: &Publish) -> Result<TracedRepo> {
    if !who.is_person() {
        return Err(Error::NotAllowed("what enters a repository is the person's choice".into()));
    }
    let mode = match req.store.as_deref().map(str::trim) {
        None | Some("") | Some("off") => None,
        Some(m @ ("notes" | "files")) => Some(m),
        Some(other) => return Err(Error::invalid("store", format!("{other:?}: use notes or files"))),
    };
    let root = repo_root(&req.repo)?;
    let head = Repo::at(root.clone()).resolve("HEAD").ok();
    traces::set_publish(&t.store, &root, mode, now_ms(), head.as_deref())
}

pub fn repos(t: &Tether) -> Result<Vec<TracedRepo>> {
    traces::repos(&t.store)
}

/// The files a chat changed, with the lines its edits wrote.
pub fn files_of(t: &Tether, session: &str) -> Result<Vec<FileTouched>> {
    code_origin::chats::files_of(t, session)
}

/// AI-written lines by repository and model, for the insights; empty where nothing is traced.
pub fn written(t: &Tether, since_ms: Option<i64>) -> Result<Vec<WrittenBy>> {
    traces::written_by(&t.store, since_ms)
}
