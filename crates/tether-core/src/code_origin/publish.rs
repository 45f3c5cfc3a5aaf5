//! Publishing: the daemon's trace publisher (and `tether trace publish`) writes the Agent Trace
//! records of newly committed edits into each repository the person opted in — git notes under
//! `refs/notes/agent-trace`, or `.agent-trace/traces.jsonl` in the checkout. Which repositories,
//! and how, is the op `ops::trace::set_publish`; this is the work itself.
//!
//! Records carry no chat text (an export asks for that; publishing never does). Knows git, the
//! trace store and `crate::nofollow`; never the chat index.

use std::collections::HashSet;
use std::path::Path;

use serde::Serialize;
use tether_git::Repo;
use tether_trace::Edit;
use tether_trace::store::{self as traces, TracedRepo};

use crate::Tether;
use crate::error::{Error, Result};
use crate::nofollow;
use crate::ops::worktrees::git_err;

/// The notes ref records go under (`refs/notes/agent-trace`).
pub const NOTES_REF: &str = "agent-trace";

/// What publishing wrote.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Published {
    pub commits: usize,
    pub records: usize,
    /// Repositories that ask for records (the daemon's publisher looks less often while none does).
    #[serde(skip)]
    pub repos: usize,
}

/// Writes the records of the commits made since the last publish into each repository the
/// person enabled: per commit, the records of the edits not written yet that it committed (made
/// on top of its history, to a file it changed). Idempotent: an edit is written once.
pub fn publish(t: &Tether) -> Result<Published> {
    let mut done = Published::default();
    for r in traces::repos(&t.store)? {
        let Some(mode) = r.publish.clone() else { continue };
        done.repos += 1;
        // One repository failing (moved, its notes ref locked) does not hold up the others.
        match publish_repo(t, &r, &mode) {
            Ok(p) => {
                done.commits += p.commits;
                done.records += p.records;
            }
            Err(e) => tracing::warn!(repo = %r.repo, error = %e, "trace records not written"),
        }
    }
    Ok(done)
}

fn publish_repo(t: &Tether, r: &TracedRepo, mode: &str) -> Result<Published> {
    let mut done = Published::default();
    let repo = Repo::at(r.repo.clone());
    let Ok(head) = repo.resolve("HEAD") else { return Ok(done) };
    if r.published_head.as_deref() == Some(head.as_str()) {
        return Ok(done);
    }
    let commits = repo.commits_between(r.published_head.as_deref(), &head).map_err(git_err)?;
    let mut pending = traces::unpublished(&t.store, &r.repo)?;
    let mut lines = String::new();
    let mut files_marks: Vec<(Vec<i64>, String)> = Vec::new();
    for c in &commits {
        let (_, files) = repo.commit_files(c).map_err(git_err)?;
        let files: HashSet<&str> = files.iter().map(String::as_str).collect();
        // An edit goes into the first commit after it that changed its file: one made on top of
        // an ancestor of this commit (by the HEAD it was recorded at), not on top of it.
        let (mine, rest): (Vec<Edit>, Vec<Edit>) = pending.into_iter().partition(|e| {
            files.contains(e.path.as_str())
                && e.head.as_deref().is_none_or(|h| h != c && repo.is_ancestor(h, c).unwrap_or(false))
        });
        pending = rest;
        if mine.is_empty() {
            continue;
        }
        let records: Vec<String> = mine
            .iter()
            .map(|e| serde_json::to_string(&tether_trace::record::record(e, env!("CARGO_PKG_VERSION"), None)))
            .collect::<serde_json::Result<_>>()?;
        let ids: Vec<i64> = mine.iter().map(|e| e.id).collect();
        if mode == "notes" {
            repo.set_note(NOTES_REF, c, &(records.join("\n") + "\n")).map_err(git_err)?;
            traces::mark_published(&t.store, &ids, c)?;
        } else {
            for rec in &records {
                lines.push_str(rec);
                lines.push('\n');
            }
            files_marks.push((ids, c.clone()));
        }
        done.commits += 1;
        done.records += records.len();
    }
    // Marked written once they are: a file refused now (a link, a FIFO) keeps its records for
    // when it is a file again.
    if !lines.is_empty() {
        append_files(Path::new(&r.repo), &lines)?;
    }
    for (ids, c) in &files_marks {
        traces::mark_published(&t.store, ids, c)?;
    }
    traces::set_published_head(&t.store, &r.repo, &head)?;
    Ok(done)
}

/// Appends records to `.agent-trace/traces.jsonl` in the checkout (the reference store's
/// place). The checkout is the agent's to shape, so through directory handles only: a link for
/// the folder or the file, a FIFO (which would hold the publisher, and every repository after
/// this one, on its open), a device, or a hard link to a file elsewhere is refused.
fn append_files(root: &Path, lines: &str) -> Result<()> {
    let unsafe_err = |e: nofollow::Unsafe| Error::UnsafeWorkspace(e.to_string());
    let root = root.canonicalize().map_err(|e| Error::io(format!("opening {}", root.display()), e))?;
    let dir = nofollow::Dir::open_canonical(&root).map_err(unsafe_err)?;
    let dir = dir.sub_or_create(std::ffi::OsStr::new(".agent-trace")).map_err(unsafe_err)?;
    dir.append(std::ffi::OsStr::new("traces.jsonl"), lines.as_bytes(), 0o644).map_err(unsafe_err)
}
