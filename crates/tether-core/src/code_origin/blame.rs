//! The git half of code origin: gathers what the rule needs for one file — git's blame and the
//! trace's lookups, at once — and answers the rest of its questions from `tether-git` as it asks
//! them ([`tether_trace::Sources`]), then applies the rule ([`tether_trace::attribute`]).
//!
//! Knows git and the trace store; never the chat index (the op joins edits to chats) or the
//! caller's authority (the op decides that before calling).

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use serde::Serialize;

use tether_git::{BlameLine, Repo};
use tether_trace::lines::line_hash;
use tether_trace::origin::{Candidate, Contributor};
use tether_trace::store as traces;
use tether_trace::{Change, Edit, File, Sources};

use crate::Tether;
use crate::error::{Error, Result};
use crate::ops::worktrees::git_err;

/// Each line of a window of a file with its origin.
pub(crate) struct Origins {
    /// The lines asked for, in order.
    pub lines: Vec<LineOrigin>,
    pub counts: OriginCounts,
    /// The edits the lines point at, by id.
    pub edits: HashMap<i64, Edit>,
    /// When tracing began in the file's repository.
    pub since: Option<i64>,
    /// The commits (full ids) that last changed the lines asked for, each once.
    pub commits: Vec<String>,
}

/// The origin of lines `window` (0-based, inclusive, inside `lines`) of the file at `rel` in the
/// repository `root` (or, outside any, the file's absolute path as `rel`).
pub(crate) fn origins(
    t: &Tether,
    root: Option<&PathBuf>,
    rel: &str,
    lines: &[&str],
    window: (usize, usize),
) -> Result<Origins> {
    let repo = root.map(|r| Repo::at(r.clone()));
    let repo_key = root.map(|r| r.to_string_lossy().into_owned());
    let hashes: Vec<i64> = lines.iter().map(|l| line_hash(l)).collect();
    // git's blame and the trace's lookups at once: git is most of the time.
    let (blamed, wrote, replaced) = std::thread::scope(|s| {
        let git = s.spawn(|| match &repo {
            Some(r) => blame_lines(r, rel, lines),
            None => Ok((Vec::new(), false)),
        });
        let wrote = traces::edits_by_hash(&t.store, repo_key.as_deref(), rel, &hashes, true);
        let replaced = traces::edits_by_hash(&t.store, repo_key.as_deref(), rel, &hashes, false);
        (git.join().unwrap_or_else(|_| Err(Error::Git("git blame's thread failed".into()))), wrote, replaced)
    });
    let ((blamed, tracked), wrote, replaced) = (blamed?, wrote?, replaced?);
    let ids: Vec<i64> = wrote.values().flatten().copied().collect::<HashSet<_>>().into_iter().collect();
    let mut edits: HashMap<i64, Edit> = traces::edits(&t.store, &ids)?.into_iter().map(|e| (e.id, e)).collect();
    let cands: HashMap<i64, Candidate> =
        edits.values().map(|e| (e.id, Candidate { at_ms: e.at_ms, same_file: e.path == rel })).collect();
    let since = repo_key.as_deref().map(|r| traces::since(&t.store, r)).transpose()?.flatten();
    let first_head = repo_key.as_deref().map(|r| traces::first_head(&t.store, r)).transpose()?.flatten();
    let replaced: HashSet<i64> = replaced.into_keys().collect();
    let file = File {
        lines,
        hashes: &hashes,
        wrote: &wrote,
        replaced: &replaced,
        edits: &cands,
        traced: since.is_some(),
        tracked,
    };
    let mut git = GitSources {
        t,
        repo,
        repo_key: repo_key.as_deref(),
        rel,
        blamed,
        era: Era { first_head, since, after: None, cache: HashMap::new() },
        hunks: HashMap::new(),
    };
    let decided = tether_trace::attribute(&file, window, &mut git)?;
    let mut counts = OriginCounts::default();
    let mut out = Vec::with_capacity(decided.len());
    for (i, (origin, edit)) in (window.0..).zip(decided) {
        *match origin {
            Contributor::Ai => &mut counts.ai,
            Contributor::Mixed => &mut counts.mixed,
            Contributor::Human => &mut counts.human,
            Contributor::Unknown => &mut counts.unknown,
        } += 1;
        out.push(LineOrigin {
            line: (i + 1) as u32,
            text: lines[i].to_owned(),
            origin,
            edit,
            commit: git.blamed.get(i).filter(|b| !b.uncommitted()).map(|b| b.commit[..12].to_owned()),
        });
    }
    let used: Vec<i64> = out.iter().filter_map(|l| l.edit).collect::<HashSet<_>>().into_iter().collect();
    let missing: Vec<i64> = used.iter().filter(|id| !edits.contains_key(id)).copied().collect();
    edits.extend(traces::edits(&t.store, &missing)?.into_iter().map(|e| (e.id, e)));
    edits.retain(|id, _| used.contains(id));
    let commits = window_commits(&git.blamed, window);
    Ok(Origins { lines: out, counts, edits, since, commits })
}

/// The commits behind a window's lines, in line order (uncommitted work is none).
fn window_commits(blamed: &[BlameLine], (first, last): (usize, usize)) -> Vec<String> {
    let mut seen = HashSet::new();
    blamed
        .iter()
        .skip(first)
        .take(last + 1 - first)
        .filter(|b| !b.uncommitted() && seen.insert(b.commit.clone()))
        .map(|b| b.commit.clone())
        .collect()
}

/// The rule's questions, answered from git (and the trace store, for replaced lines' edits).
struct GitSources<'a> {
    t: &'a Tether,
    repo: Option<Repo>,
    repo_key: Option<&'a str>,
    rel: &'a str,
    /// Blame of every line of the file as it is now (none outside git).
    blamed: Vec<BlameLine>,
    era: Era,
    /// Per change: the new lines of each hunk of its diff (0-based, end exclusive) and the old
    /// lines they replaced. One `git diff` per commit.
    hunks: HashMap<String, Vec<Hunk>>,
}

impl Sources for GitSources<'_> {
    type Error = Error;

    fn change(&self, i: usize) -> Option<Change> {
        self.repo.as_ref()?;
        self.blamed
            .get(i)
            .map(|b| Change { id: xxhash_rust::xxh3::xxh3_64(b.commit.as_bytes()), author_ms: b.author_ms })
    }

    fn predates(&mut self, i: usize) -> bool {
        match (&self.repo, self.blamed.get(i)) {
            (Some(r), Some(b)) => self.era.predates(r, b),
            _ => false,
        }
    }

    fn follow_moves(&mut self, ranges: &[(u32, u32)]) -> Result<()> {
        let Some(r) = &self.repo else { return Ok(()) };
        for b in r.blame(self.rel, ranges, true).map_err(git_err)? {
            let i = b.line as usize - 1;
            if i < self.blamed.len() {
                self.blamed[i] = b;
            }
        }
        Ok(())
    }

    fn replaced(&mut self, i: usize) -> Result<Vec<String>> {
        let (Some(r), Some(b)) = (&self.repo, self.blamed.get(i)) else { return Ok(Vec::new()) };
        let Some((prev, prev_path)) = &b.previous else { return Ok(Vec::new()) };
        if !self.hunks.contains_key(&b.commit) {
            let commit = (!b.uncommitted()).then_some(b.commit.as_str());
            let h = r.replaced(prev, prev_path, commit, &b.path).map_err(git_err)?;
            self.hunks.insert(b.commit.clone(), h);
        }
        let at = b.orig_line.saturating_sub(1) as usize;
        Ok(self.hunks[&b.commit]
            .iter()
            .find(|(range, _)| range.contains(&at))
            .map(|(_, old)| old.clone())
            .unwrap_or_default())
    }

    fn written(&mut self, hashes: &[i64]) -> Result<HashMap<i64, Vec<i64>>> {
        traces::edits_by_hash(&self.t.store, self.repo_key, self.rel, hashes, true)
    }
}

/// The new lines of a change (0-based, end exclusive) and the old lines it replaced.
type Hunk = (std::ops::Range<usize>, Vec<String>);

/// When tracing began for a repository: the commit it was at when its first edit was recorded
/// (lines last changed in it or before it predate tracing: ancestry, not clocks, since author
/// times are whole seconds and may be anything), else the first edit's time.
struct Era {
    first_head: Option<String>,
    since: Option<i64>,
    /// The commits made since `first_head` (reachable from HEAD), asked of git once.
    after: Option<Option<HashSet<String>>>,
    cache: HashMap<String, bool>,
}

impl Era {
    fn predates(&mut self, r: &Repo, b: &BlameLine) -> bool {
        if b.uncommitted() {
            return false;
        }
        let Some(h) = &self.first_head else {
            return self.since.is_some_and(|since| b.author_ms.is_some_and(|t| t + 999 < since));
        };
        let after = self.after.get_or_insert_with(|| r.commits_since(h, "HEAD", 10_000).ok().flatten());
        if let Some(after) = after {
            return !after.contains(&b.commit);
        }
        *self.cache.entry(b.commit.clone()).or_insert_with(|| r.is_ancestor(&b.commit, h).unwrap_or(false))
    }
}

/// Blame of every line (without following moves: the rule asks for that only where it matters)
/// and whether git tracks the file; for a file it does not track yet, all lines "uncommitted".
fn blame_lines(r: &Repo, rel: &str, lines: &[&str]) -> Result<(Vec<BlameLine>, bool)> {
    match r.blame(rel, &[], false) {
        Ok(b) => return Ok((b, true)),
        Err(e) if r.tracks(rel).map_err(git_err)? => return Err(git_err(e)),
        Err(_) => {}
    }
    let all_new = lines
        .iter()
        .enumerate()
        .map(|(i, l)| BlameLine {
            commit: tether_git::UNCOMMITTED.into(),
            author_ms: None,
            orig_line: (i + 1) as u32,
            line: (i + 1) as u32,
            path: rel.into(),
            previous: None,
            text: (*l).to_owned(),
        })
        .collect();
    Ok((all_new, false))
}

/// One line and where it came from.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct LineOrigin {
    pub line: u32,
    pub text: String,
    /// ai | mixed | human | unknown.
    pub origin: Contributor,
    /// The edit behind an `ai` or `mixed` line (see `edits`).
    #[ts(type = "number | null")]
    pub edit: Option<i64>,
    /// The commit that last changed it (short); none when uncommitted or not in git.
    pub commit: Option<String>,
}

/// How many lines of each origin.
#[derive(Debug, Clone, Default, Serialize, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct OriginCounts {
    pub ai: u32,
    pub mixed: u32,
    pub human: u32,
    pub unknown: u32,
}
