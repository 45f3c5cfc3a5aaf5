//! Reading Cursor's chat history, read-only, in every storage era (and, through
//! [`crate::agents`], other agents' chats beside it).
//!
//! Depends on nothing else in the engine but [`crate::model`]; never touches our store.
//! [`discover`] lists the files to read; the submodules read each kind.

pub mod cli;
pub mod composer;
pub mod global;
pub mod lexical;
pub mod sdk;
#[cfg(test)]
mod smoke_fuzz;
pub mod sqlite;
pub mod tracking;
pub mod transcript;
pub mod uri;
pub mod value;
pub mod workspace;

use std::path::{Path, PathBuf};

use crate::paths::CursorLocations;

pub const CHATDATA_KEY: &str = "workbench.panel.aichat.view.aichat.chatdata";

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SourceKind {
    /// Read first: they carry project membership that global composers are attributed with.
    Workspace,
    Global,
    CliStore,
    Transcript,
    /// Tether's own transcript of a Cursor Cloud agent it ran (`history::cloud`).
    Cloud,
    /// A cursor-agent session's `meta.json` with no `store.db` beside it (2026.08 on): listed
    /// with its title, project and times, its messages being nowhere on this disk.
    CliMeta,
    /// A Cursor 3 SDK / Agents Window catalog (`projects/<p>/sdk-agent-store/<hash>/index.db`)
    /// with its agents' blob stores: a chat per agent, its runs' token counts.
    SdkAgent,
    /// A Claude Code session file (`crate::agents::claude`), its subagents read with it.
    ClaudeCode,
    /// A Codex CLI rollout (`crate::agents::codex`).
    Codex,
    /// A Gemini CLI session (`crate::agents::gemini`), its subagents read with it.
    Gemini,
}

impl SourceKind {
    pub fn as_str(self) -> &'static str {
        match self {
            SourceKind::Workspace => "workspace",
            SourceKind::Global => "global",
            SourceKind::CliStore => "cli_store",
            SourceKind::Transcript => "transcript",
            SourceKind::Cloud => "cloud",
            SourceKind::CliMeta => "cli_meta",
            SourceKind::SdkAgent => "sdk_agent",
            SourceKind::ClaudeCode => "claude_code",
            SourceKind::Codex => "codex",
            SourceKind::Gemini => "gemini",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "workspace" => SourceKind::Workspace,
            "global" => SourceKind::Global,
            "cli_store" => SourceKind::CliStore,
            "transcript" => SourceKind::Transcript,
            "cloud" => SourceKind::Cloud,
            "cli_meta" => SourceKind::CliMeta,
            "sdk_agent" => SourceKind::SdkAgent,
            "claude_code" => SourceKind::ClaudeCode,
            "codex" => SourceKind::Codex,
            "gemini" => SourceKind::Gemini,
            _ => return None,
        })
    }

    /// When two sources hold the same session id, the lower rank wins (the global DB is the
    /// source of truth; transcripts are the thinnest replica).
    pub fn rank(self) -> u8 {
        match self {
            SourceKind::Global => 0,
            SourceKind::Workspace => 1,
            SourceKind::CliStore => 2,
            // Before transcripts: an SDK agent's transcript (same id) has no title or tokens.
            SourceKind::SdkAgent => 3,
            SourceKind::Transcript => 4,
            SourceKind::Cloud => 5,
            // Last: a transcript of the same chat has its messages.
            SourceKind::CliMeta => 6,
            // Other agents' ids never meet Cursor's; among themselves a file is one chat.
            SourceKind::ClaudeCode | SourceKind::Codex | SourceKind::Gemini => 7,
        }
    }
}

/// One file to read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    pub path: PathBuf,
    pub kind: SourceKind,
    /// For transcripts: the `~/.cursor/projects/<name>` folder name.
    pub project_dir: Option<String>,
}

/// What discovery passed over on purpose, and why (shown by `doctor`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, ts_rs::TS)]
#[ts(export, export_to = "history.ts")]
pub struct Skipped {
    pub path: String,
    pub reason: String,
    /// The kind of store it was looked at as ([`SourceKind::as_str`]): what `doctor` and Health
    /// count it under.
    pub kind: String,
}

/// Every file to read at some locations, and every file looked at and passed over.
#[derive(Debug, Clone, Default)]
pub struct Discovery {
    pub sources: Vec<Source>,
    pub skipped: Vec<Skipped>,
}

impl Discovery {
    /// How many files of each kind were found.
    pub fn counts(&self) -> std::collections::BTreeMap<SourceKind, u64> {
        let mut m = std::collections::BTreeMap::new();
        for s in &self.sources {
            *m.entry(s.kind).or_default() += 1;
        }
        m
    }
}

/// Every Cursor file we can read at the given locations, workspaces first.
pub fn discover(loc: &CursorLocations) -> Vec<Source> {
    discover_all(loc).sources
}

/// [`discover`], with what it passed over.
pub fn discover_all(loc: &CursorLocations) -> Discovery {
    let mut out = Vec::new();
    let mut skipped: Vec<(PathBuf, &'static str)> = Vec::new();
    // Each skipped file's kind, by where it was found: each search below tags what it added.
    let mut kinds: Vec<SourceKind> = Vec::new();
    for user in &loc.user_dirs {
        if let Ok(entries) = std::fs::read_dir(user.join("workspaceStorage")) {
            let mut ws: Vec<PathBuf> = Vec::new();
            for dir in entries.flatten().map(|e| e.path()).filter(|p| p.is_dir()) {
                if dir.join("state.vscdb").is_file() {
                    ws.push(dir.join("state.vscdb"));
                } else {
                    skipped
                        .push((dir, "workspace folder with no state.vscdb (a workspace.json still names its project)"));
                }
            }
            ws.sort();
            out.extend(ws.into_iter().map(|path| Source { path, kind: SourceKind::Workspace, project_dir: None }));
        }
        let global = user.join("globalStorage/state.vscdb");
        if global.is_file() {
            out.push(Source { path: global, kind: SourceKind::Global, project_dir: None });
        }
    }
    kinds.resize(skipped.len(), SourceKind::Workspace);
    for home in &loc.cursor_homes {
        let source = |kind| move |path| Source { path, kind, project_dir: None };
        let (stores, metas) = cli::find_sessions(&home.join("chats"), 2, &mut skipped);
        out.extend(stores.into_iter().map(source(SourceKind::CliStore)));
        out.extend(metas.into_iter().map(source(SourceKind::CliMeta)));
        let (stores, metas) = cli::find_sessions(&home.join("acp-sessions"), 1, &mut skipped);
        out.extend(stores.into_iter().map(source(SourceKind::CliStore)));
        out.extend(metas.into_iter().map(source(SourceKind::CliMeta)));
        kinds.resize(skipped.len(), SourceKind::CliStore);
        out.extend(
            sdk::find_stores(&home.join("projects"), &mut skipped).into_iter().map(source(SourceKind::SdkAgent)),
        );
        kinds.resize(skipped.len(), SourceKind::SdkAgent);
        for (path, name) in cli::find_transcripts(&home.join("projects"), &mut skipped) {
            out.push(Source { path, kind: SourceKind::Transcript, project_dir: Some(name) });
        }
        kinds.resize(skipped.len(), SourceKind::Transcript);
    }
    if let Some(dir) = &loc.cloud_dir
        && let Ok(entries) = std::fs::read_dir(dir)
    {
        let mut files: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "jsonl") && p.is_file())
            .collect();
        files.sort();
        out.extend(files.into_iter().map(|path| Source { path, kind: SourceKind::Cloud, project_dir: None }));
    }
    crate::agents::discover(loc, &mut out, &mut skipped);
    // The agents' files by the folder they are under (one pass finds all three).
    for (p, _) in &skipped[kinds.len()..] {
        let under = |dirs: &[PathBuf]| dirs.iter().any(|d| p.starts_with(d));
        kinds.push(if under(&loc.gemini_dirs) {
            SourceKind::Gemini
        } else if under(&loc.codex_homes) {
            SourceKind::Codex
        } else {
            SourceKind::ClaudeCode
        });
    }
    let skipped = skipped
        .into_iter()
        .zip(kinds)
        .map(|((p, r), k)| Skipped { path: p.display().to_string(), reason: r.to_owned(), kind: k.as_str().to_owned() })
        .collect();
    Discovery { sources: out, skipped }
}

/// `(id, uri, project)` of every workspace folder with a `workspace.json` but no `state.vscdb`.
pub fn bare_workspaces(loc: &CursorLocations) -> Vec<(String, Option<String>, Option<String>)> {
    let mut out = Vec::new();
    for user in &loc.user_dirs {
        let Ok(entries) = std::fs::read_dir(user.join("workspaceStorage")) else { continue };
        for e in entries.flatten() {
            let dir = e.path();
            if dir.join("state.vscdb").is_file() || !dir.join("workspace.json").is_file() {
                continue;
            }
            let (uri, project) = workspace::read_workspace_json(&dir);
            if uri.is_some() {
                out.push((e.file_name().to_string_lossy().into_owned(), uri, project));
            }
        }
    }
    out
}

/// Directories whose changes matter, for the watcher.
pub fn watch_roots(loc: &CursorLocations) -> Vec<(PathBuf, bool)> {
    let mut out = Vec::new();
    for user in &loc.user_dirs {
        out.push((user.join("globalStorage"), false));
        out.push((user.join("workspaceStorage"), true));
    }
    for home in &loc.cursor_homes {
        out.push((home.join("chats"), true));
        out.push((home.join("acp-sessions"), true));
        out.push((home.join("projects"), true));
    }
    if let Some(dir) = &loc.cloud_dir {
        out.push((dir.clone(), false));
    }
    out.extend(crate::agents::watch_roots(loc));
    out
}

/// What says a source changed: its file's [`file_fingerprint`], for a transcript those of the
/// subagent transcripts read with it, and for an SDK catalog those of its agents' blob stores.
pub fn source_fingerprint(src: &Source) -> Option<String> {
    let mut fp = file_fingerprint(&src.path)?;
    let subs = match src.kind {
        SourceKind::Transcript => cli::subagents_of(&src.path),
        SourceKind::ClaudeCode => crate::agents::claude::subagents_of(&src.path),
        SourceKind::Gemini => crate::agents::gemini::subagents_of(&src.path),
        _ => Vec::new(),
    };
    for sub in subs {
        fp.push(';');
        fp.push_str(&file_fingerprint(&sub).unwrap_or_default());
    }
    if src.kind == SourceKind::SdkAgent {
        for store in sdk::agent_stores(&src.path) {
            fp.push(';');
            fp.push_str(&file_fingerprint(&store).unwrap_or_default());
        }
    }
    Some(fp)
}

/// Size and mtime of a file and its `-wal`: changes whenever Cursor commits.
pub fn file_fingerprint(path: &Path) -> Option<String> {
    fn stat(p: &Path) -> String {
        match std::fs::metadata(p) {
            Ok(m) => {
                let mtime = m
                    .modified()
                    .ok()
                    .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                    .map(|d| d.as_nanos())
                    .unwrap_or(0);
                format!("{}:{mtime}", m.len())
            }
            Err(_) => "-".into(),
        }
    }
    if !path.exists() {
        return None;
    }
    // The wal-index header (the first 48 bytes of `-shm`: last valid frame, checksums) changes
    // when a commit becomes visible, which may be after the `-wal` write that raised the event.
    let shm = std::fs::File::open(sqlite::sidecar(path, "-shm")).ok().and_then(|mut f| {
        let mut hdr = [0u8; 48];
        std::io::Read::read_exact(&mut f, &mut hdr).ok()?;
        Some(xxhash_rust::xxh3::xxh3_64(&hdr))
    });
    let shm = shm.map_or_else(|| "-".to_owned(), |h| format!("{h:x}"));
    Some(format!("{}|{}|{shm}", stat(path), stat(&sqlite::sidecar(path, "-wal"))))
}
