//! Reading other coding agents' chats beside Cursor's, read-only: Claude Code ([`claude`]),
//! Codex CLI ([`codex`]) and Gemini CLI ([`gemini`]). Shapes and pitfalls: `shared/reference/agent-formats.md`.
//!
//! Each reader turns one file into the same [`crate::model::ParsedSession`] the Cursor readers
//! produce, its `origin` naming the agent (`claude-code`, `codex`, `gemini`), so listing, search, reading,
//! tags and export need nothing of their own. Discovery and the watcher reach them through
//! [`crate::cursor::discover_all`] and [`crate::cursor::watch_roots`]; files are never written.

pub mod claude;
pub mod codex;
pub mod gemini;
mod text;

use std::path::{Path, PathBuf};

use crate::cursor::{Source, SourceKind};
use crate::paths::CursorLocations;

/// The agents read besides Cursor, as `origin` values (the `source` of a listed chat).
pub const AGENTS: &[&str] = &[claude::ORIGIN, codex::ORIGIN, gemini::ORIGIN];

/// Every Claude Code, Codex and Gemini CLI chat file at `loc`. Claude Code subagent files under
/// `<session>/subagents/` are read with their parent ([`claude::subagents_of`]), not listed.
pub fn discover(loc: &CursorLocations, out: &mut Vec<Source>, skipped: &mut Vec<(PathBuf, &'static str)>) {
    for dir in &loc.claude_dirs {
        let Ok(projects) = std::fs::read_dir(dir.join("projects")) else { continue };
        let mut files = Vec::new();
        for project in projects.flatten().map(|e| e.path()).filter(|p| p.is_dir()) {
            for f in jsonl_in(&project) {
                files.push(f);
            }
        }
        files.sort();
        out.extend(files.into_iter().map(|path| Source { path, kind: SourceKind::ClaudeCode, project_dir: None }));
    }
    for home in &loc.codex_homes {
        let mut files = Vec::new();
        for sub in ["sessions", "archived_sessions"] {
            walk_rollouts(&home.join(sub), 0, &mut files, skipped);
        }
        files.sort();
        // The `sessions/` copy wins over an archived one of the same name (as ccusage does).
        let mut seen = std::collections::HashSet::new();
        files.retain(|p: &PathBuf| seen.insert(p.file_name().map(|n| n.to_owned())));
        out.extend(files.into_iter().map(|path| Source { path, kind: SourceKind::Codex, project_dir: None }));
    }
    for dir in &loc.gemini_dirs {
        let mut files = Vec::new();
        gemini::discover(dir, &mut files, skipped);
        files.sort();
        out.extend(files.into_iter().map(|path| Source { path, kind: SourceKind::Gemini, project_dir: None }));
    }
}

/// Directories whose changes matter, for the watcher (all recursive).
pub fn watch_roots(loc: &CursorLocations) -> Vec<(PathBuf, bool)> {
    let mut out: Vec<(PathBuf, bool)> = loc.claude_dirs.iter().map(|d| (d.join("projects"), true)).collect();
    for home in &loc.codex_homes {
        out.push((home.join("sessions"), true));
        out.push((home.join("archived_sessions"), true));
    }
    // `tmp/` also holds Gemini's shell history and tool output: events there find no source.
    out.extend(loc.gemini_dirs.iter().map(|d| (d.join("tmp"), true)));
    out
}

fn jsonl_in(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    entries.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "jsonl") && p.is_file()).collect()
}

/// `sessions/YYYY/MM/DD/rollout-*.jsonl` (and the flat `archived_sessions/rollout-*.jsonl`).
fn walk_rollouts(dir: &Path, depth: u8, out: &mut Vec<PathBuf>, skipped: &mut Vec<(PathBuf, &'static str)>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for p in entries.flatten().map(|e| e.path()) {
        if p.is_dir() && depth < 3 {
            walk_rollouts(&p, depth + 1, out, skipped);
        } else if p.is_file() && p.extension().is_some_and(|x| x == "jsonl") {
            if p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("rollout-")) {
                out.push(p);
            } else {
                skipped.push((p, "a Codex file that is not a rollout (rollout-*.jsonl)"));
            }
        }
    }
}
