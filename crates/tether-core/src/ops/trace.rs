//! Code origin: recording the edits agents make (Cursor's hooks, Tether's runs) and answering
//! "which chat wrote this line" — `tether blame`, the MCP tool `code_origin`, the GUI's Code
//! view — by joining git's blame, the trace ([`tether_trace`]) and the chat index. Also the Agent
//! Trace export, writing records into a repository the person opted in, and the files a chat
//! changed.
//!
//! Private by default: records enter a repository only for one the person enabled, and exports
//! carry chat text only when asked (`with_excerpts`). Reads need no authority beyond being on
//! this machine; remote agents (a cloud run's bearer) may not read origins or change publishing.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use tether_git::{BlameLine, Repo};
use tether_trace::lines::{is_trivial, line_hash, split};
use tether_trace::origin::{self, Candidate, Contributor};
use tether_trace::store::{self as traces, EditKind, NewEdit, TracedRepo, WrittenBy};
use tether_trace::{Edit, Range, capture::unpack};

use crate::Tether;
use crate::board::principal::Principal;
use crate::clock::{iso, now_ms};
use crate::error::{Error, Result};
use crate::nofollow::{self, Kind};
use crate::ops::worktrees::git_err;

pub use tether_trace::record::{MIME, TraceRecord};

/// What the hook forwarder (`tether hook afterFileEdit`) or a run sends for one edit or one part
/// of it: hashes and ranges computed where the edit was seen, never the edit's text.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
pub struct EditPart {
    /// The capturer's id for the edit (parts share it).
    pub edit: String,
    /// The file, absolute.
    pub file: String,
    #[serde(default)]
    pub ranges: Vec<Range>,
    /// Packed line hashes (see `tether_trace::capture::pack`).
    #[serde(default)]
    pub written: String,
    #[serde(default)]
    pub replaced: String,
}

/// Who made the edit, from the hook payload or the run.
#[derive(Debug, Clone, Default)]
pub struct EditBy {
    pub kind: Option<EditKind>,
    pub conversation_id: Option<String>,
    pub generation_id: Option<String>,
    pub model: Option<String>,
    pub run_id: Option<String>,
}

/// Where a file is as far as git goes: its repository (its main checkout's root, so that a run's
/// worktree and the person's checkout are one repository) and the file's path in it; outside any,
/// the absolute path alone.
struct Located {
    root: Option<PathBuf>,
    path: String,
}

/// A `.git` file (`gitdir: …`) or `commondir` is a line; anything longer is not git's.
const GIT_POINTER_MAX: u64 = 4 << 10;

/// Finds the repository a file is in on disk, without running git: this is on the hook's path,
/// and an agent writes the folders it walks. Each `.git` is looked at without following it: only
/// a folder, or a regular file (`gitdir: …`) naming one, whose files git opens blocking as it
/// finds a repository are regular files (see [`vouch`]), counts. Anything else makes the file
/// one outside any repository, never opened and with no git run for it, so nothing there can
/// hold a thread.
fn locate(file: &Path) -> Located {
    let outside = || Located { root: None, path: file.to_string_lossy().into_owned() };
    let mut dir = file.parent();
    while let Some(d) = dir {
        let dot_git = d.join(".git");
        let gitdir = match nofollow::kind(&dot_git) {
            Kind::Missing => {
                dir = d.parent();
                continue;
            }
            Kind::Dir => Some(dot_git.clone()),
            Kind::File => linked_gitdir(&dot_git),
            Kind::Link | Kind::Special => None,
        };
        let Some(main) = gitdir.as_deref().and_then(vouch) else { return outside() };
        let path = file.strip_prefix(d).map(|p| p.to_string_lossy().replace('\\', "/")).unwrap_or_default();
        return Located { root: Some(main.unwrap_or_else(|| d.to_path_buf())), path };
    }
    outside()
}

/// The git folder a `.git` file names (`gitdir: <path>`, relative to the file's folder). Read as
/// a regular file of a few bytes, never through a link: its contents are whoever wrote them.
fn linked_gitdir(dot_git: &Path) -> Option<PathBuf> {
    let text = String::from_utf8(nofollow::read_file(dot_git, GIT_POINTER_MAX).ok()?).ok()?;
    let gitdir = PathBuf::from(text.trim().strip_prefix("gitdir:")?.trim());
    Some(if gitdir.is_absolute() { gitdir } else { dot_git.parent()?.join(gitdir) })
}

/// Files git opens with a blocking `open` while it finds a repository (`HEAD` to tell a git
/// folder, `commondir` for a linked worktree, `config` for its settings): each must be a regular
/// file or absent, or git may wait on a FIFO forever.
const GIT_OPENS: [&str; 4] = ["HEAD", "commondir", "config", "packed-refs"];

/// Whether git may be run on the git folder `gitdir` without waiting on a FIFO: `None` when not;
/// else, for a linked worktree's (`<main>/.git/worktrees/<name>`, its `commondir` naming the main
/// `.git`), the main checkout's root, so that a run's worktree and the person's checkout are one
/// repository.
fn vouch(gitdir: &Path) -> Option<Option<PathBuf>> {
    let plain = |dir: &Path| {
        nofollow::kind(dir) == Kind::Dir
            && GIT_OPENS.iter().all(|n| matches!(nofollow::kind(&dir.join(n)), Kind::Missing | Kind::File))
    };
    if !plain(gitdir) || nofollow::kind(&gitdir.join("HEAD")) != Kind::File {
        return None;
    }
    let commondir = gitdir.join("commondir");
    if nofollow::kind(&commondir) == Kind::Missing {
        return Some(None);
    }
    let common = String::from_utf8(nofollow::read_file(&commondir, GIT_POINTER_MAX).ok()?).ok()?;
    let common = gitdir.join(common.trim()).canonicalize().ok()?;
    if !plain(&common) {
        return None;
    }
    Some(
        (common.file_name() == Some(std::ffi::OsStr::new(".git")))
            .then(|| common.parent().map(Path::to_path_buf))
            .flatten(),
    )
}

/// Records an edit (or a part of one). Malformed hashes are refused whole; a file outside any
/// repository is kept by its absolute path.
pub fn record(t: &Tether, by: &EditBy, part: &EditPart) -> Result<i64> {
    let file = Path::new(&part.file);
    if !file.is_absolute() || part.edit.trim().is_empty() {
        return Err(Error::invalid("trace", "an edit needs its id and the file's absolute path"));
    }
    let bad = || Error::invalid("trace", "line hashes must be packed 16-hex-digit values");
    let written = unpack(&part.written).ok_or_else(bad)?;
    let replaced = unpack(&part.replaced).ok_or_else(bad)?;
    let file = file.canonicalize().unwrap_or_else(|_| file.to_path_buf());
    let Located { root, path } = locate(&file);
    // HEAD at the time (of the checkout the edit was in), for the record's `vcs.revision`; a
    // repository without commits has none. Only where `locate` found a `.git` it could vouch for.
    let head = root.as_ref().and(file.parent()).and_then(|d| Repo::at(d).resolve("HEAD").ok());
    traces::record(
        &t.store,
        &NewEdit {
            uid: part.edit.clone(),
            at_ms: now_ms(),
            kind: by.kind.unwrap_or(EditKind::Agent),
            conversation_id: by.conversation_id.clone().filter(|c| !c.is_empty()),
            generation_id: by.generation_id.clone().filter(|c| !c.is_empty()),
            model: by.model.clone().filter(|c| !c.is_empty()),
            run_id: by.run_id.clone(),
            repo: root.map(|r| r.to_string_lossy().into_owned()),
            head,
            path,
            ranges: part.ranges.clone(),
            written,
            replaced,
        },
    )
}

/// The edit a Cursor hook carried (`afterFileEdit`: the agent's, `afterTabFileEdit`: Tab's), if
/// it carried one that `tether hook` computed.
pub fn from_hook(t: &Tether, ev: &crate::board::live::HookEvent) -> Result<Option<i64>> {
    let kind = match ev.hook_event_name.as_str() {
        "afterFileEdit" => EditKind::Agent,
        "afterTabFileEdit" => EditKind::Tab,
        _ => return Ok(None),
    };
    let Some(part) = &ev.trace else { return Ok(None) };
    let part: EditPart = serde_json::from_value(part.clone())
        .map_err(|e| Error::invalid("trace", format!("not what `tether hook` sends: {e}")))?;
    let by = EditBy {
        kind: Some(kind),
        conversation_id: Some(ev.conversation_id.clone()),
        generation_id: ev.generation_id.clone(),
        model: ev.model.clone(),
        run_id: None,
    };
    record(t, &by, &part).map(Some)
}

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

#[derive(Debug, Clone, Default, Serialize, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct OriginCounts {
    pub ai: u32,
    pub mixed: u32,
    pub human: u32,
    pub unknown: u32,
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

/// Each line's origin (see `tether_trace::origin` for the rule).
pub fn blame(t: &Tether, who: &Principal, req: &Blame) -> Result<BlameResult> {
    remote_refused(who)?;
    let file = resolve_path(&req.path, &[])?;
    let bytes = std::fs::read(&file).map_err(|e| Error::io(format!("reading {}", file.display()), e))?;
    let text = String::from_utf8(bytes)
        .map_err(|_| Error::invalid("path", format!("{} is not text; origins are for text files", file.display())))?;
    let lines = split(&text);
    let Located { root, path: rel } = locate(&file);
    let repo = root.as_ref().map(|r| Repo::at(r.clone()));
    let repo_key = root.as_ref().map(|r| r.to_string_lossy().into_owned());
    let hashes: Vec<i64> = lines.iter().map(|l| line_hash(l)).collect();
    // git's blame and the trace's lookups at once: git is most of the time.
    let (blamed, wrote, replaced) = std::thread::scope(|s| {
        let git = s.spawn(|| match &repo {
            Some(r) => blame_lines(r, &rel, &lines),
            None => Ok((Vec::new(), false)),
        });
        let wrote = traces::edits_by_hash(&t.store, repo_key.as_deref(), &rel, &hashes, true);
        let replaced = traces::edits_by_hash(&t.store, repo_key.as_deref(), &rel, &hashes, false);
        (git.join().unwrap_or_else(|_| Err(Error::Git("git blame's thread failed".into()))), wrote, replaced)
    });
    let ((mut blamed, tracked), wrote, replaced) = (blamed?, wrote?, replaced?);
    let ids: Vec<i64> = wrote.values().flatten().copied().collect::<HashSet<_>>().into_iter().collect();
    let mut edits: HashMap<i64, Edit> = traces::edits(&t.store, &ids)?.into_iter().map(|e| (e.id, e)).collect();
    let cands: HashMap<i64, Candidate> =
        edits.values().map(|e| (e.id, Candidate { at_ms: e.at_ms, same_file: e.path == rel })).collect();
    let change_of = |b: &BlameLine| xxhash_rust::xxh3::xxh3_64(b.commit.as_bytes());
    let mut facts: Vec<origin::Line> = lines
        .iter()
        .enumerate()
        .map(|(i, l)| origin::Line {
            trivial: is_trivial(l),
            wrote: wrote.get(&hashes[i]).cloned().unwrap_or_default(),
            changed_ms: blamed.get(i).and_then(|b| b.author_ms),
            change: blamed.get(i).map(change_of),
        })
        .collect();
    let since = repo_key.as_deref().map(|r| traces::since(&t.store, r)).transpose()?.flatten();
    let mut era = Era {
        first_head: repo_key.as_deref().map(|r| traces::first_head(&t.store, r)).transpose()?.flatten(),
        since,
        after: None,
        cache: HashMap::new(),
    };

    let (first, last) = window(req, lines.len())?;
    // Trivial lines look at their neighbours, which may lie outside the window asked for.
    let (lo, hi) = (neighbour(&facts, first, false), neighbour(&facts, last, true));
    // Lines that say something: the content an edit wrote.
    let mut ai: Vec<Option<i64>> = vec![None; lines.len()];
    for i in lo..=hi {
        ai[i] = origin::written_by(&facts[i], &cands);
    }
    // The rest that git says changed after tracing began: blamed again following moves within
    // the file (`-M`, costly on a whole file, cheap on a few lines), so code a person only moved
    // keeps the commit that wrote it.
    if let (Some(r), true) = (&repo, tracked) {
        let need: Vec<usize> =
            (lo..=hi).filter(|&i| ai[i].is_none() && blamed.get(i).is_some_and(|b| !era.predates(r, b))).collect();
        if !need.is_empty() {
            let ranges: Vec<(u32, u32)> =
                tether_trace::lines::runs(&need).into_iter().map(|(a, b)| (a as u32 + 1, b as u32 + 1)).collect();
            for b in r.blame(&rel, &ranges, true).map_err(git_err)? {
                let i = b.line as usize - 1;
                if i < blamed.len() {
                    facts[i].changed_ms = b.author_ms;
                    facts[i].change = Some(change_of(&b));
                    blamed[i] = b;
                }
            }
        }
    }
    let mut hunks = Hunks::default();
    let mut removed_by: HashMap<i64, Option<i64>> = HashMap::new();
    let mut changed = |i: usize, hunks: &mut Hunks, era: &mut Era| -> Result<(Contributor, Option<i64>)> {
        let (Some(r), Some(b)) = (&repo, blamed.get(i)) else {
            return Ok((Contributor::Unknown, None));
        };
        if era.since.is_none() || era.predates(r, b) {
            return Ok((Contributor::Unknown, None));
        }
        let removed = hunks.removed(r, b)?;
        let removed_hashes: Vec<i64> = removed.iter().map(|l| line_hash(l)).collect();
        let unseen: Vec<i64> = removed_hashes.iter().filter(|h| !removed_by.contains_key(h)).copied().collect();
        if !unseen.is_empty() {
            let found = traces::edits_by_hash(&t.store, repo_key.as_deref(), &rel, &unseen, true)?;
            for h in unseen {
                removed_by.insert(h, found.get(&h).and_then(|v| v.iter().max().copied()));
            }
        }
        let pairs: Vec<(&str, Option<i64>)> =
            removed.iter().zip(&removed_hashes).map(|(l, h)| (l.as_str(), removed_by[h])).collect();
        let restores = !is_trivial(lines[i]) && replaced.contains_key(&hashes[i]);
        Ok(origin::changed_line(lines[i], &pairs, restores))
    };
    let mut decided: Vec<(Contributor, Option<i64>)> = vec![(Contributor::Unknown, None); lines.len()];
    for i in lo..=hi {
        if facts[i].trivial {
            continue;
        }
        decided[i] = match ai[i] {
            Some(e) => (Contributor::Ai, Some(e)),
            None => changed(i, &mut hunks, &mut era)?,
        };
    }
    // Then braces and blanks, beside what was decided.
    let settled: Vec<Option<i64>> = decided.iter().map(|(_, e)| *e).collect();
    for i in first..=last {
        if facts[i].trivial {
            decided[i] = match origin::beside(&facts, &settled, i) {
                Some(e) => (Contributor::Ai, Some(e)),
                None => changed(i, &mut hunks, &mut era)?,
            };
        }
    }
    let mut out = Vec::with_capacity(last + 1 - first);
    let mut counts = OriginCounts::default();
    for i in first..=last {
        let (origin, edit) = decided[i];
        match origin {
            Contributor::Ai => counts.ai += 1,
            Contributor::Mixed => counts.mixed += 1,
            Contributor::Human => counts.human += 1,
            Contributor::Unknown => counts.unknown += 1,
        }
        out.push(LineOrigin {
            line: (i + 1) as u32,
            text: lines[i].to_owned(),
            origin,
            edit,
            commit: blamed.get(i).filter(|b| !b.uncommitted()).map(|b| b.commit[..12].to_owned()),
        });
    }
    let used: Vec<i64> = out.iter().filter_map(|l| l.edit).collect::<HashSet<_>>().into_iter().collect();
    let missing: Vec<i64> = used.iter().filter(|id| !edits.contains_key(id)).copied().collect();
    edits.extend(traces::edits(&t.store, &missing)?.into_iter().map(|e| (e.id, e)));
    let mut described: Vec<EditOrigin> = used.iter().filter_map(|id| edits.get(id)).map(|e| describe(t, e)).collect();
    described.sort_by(|a, b| a.at.cmp(&b.at).then(a.id.cmp(&b.id)));
    Ok(BlameResult {
        file: file.to_string_lossy().into_owned(),
        repo: repo_key,
        path: rel,
        traced_since: since.map(iso),
        lines: out,
        edits: described,
        counts,
    })
}

/// The nearest non-trivial line beyond `i` (below it when `down`), or the file's end.
fn neighbour(facts: &[origin::Line], i: usize, down: bool) -> usize {
    if down {
        (i + 1..facts.len()).find(|&j| !facts[j].trivial).unwrap_or(facts.len() - 1).max(i)
    } else {
        (0..i).rev().find(|&j| !facts[j].trivial).unwrap_or(0).min(i)
    }
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

/// When tracing began for a repository: the commit it was at when its first edit was recorded
/// (lines last changed in it or before it predate tracing: ancestry, not clocks, since author
/// times are whole seconds and may be anything), else the first edit's time.
struct Era {
    first_head: Option<String>,
    since: Option<i64>,
    /// The commits made since `first_head` (reachable from HEAD), asked of git once.
    after: Option<Option<std::collections::HashSet<String>>>,
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

/// Blame of every line (without following moves: see [`blame`]) and whether git tracks the
/// file; for a file it does not track yet, all lines "uncommitted".
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

/// For a line changed after tracing began: the lines its change replaced (the hunk of that
/// commit's diff, or of the uncommitted diff, that holds it). One `git diff` per commit.
#[derive(Default)]
struct Hunks {
    by_commit: HashMap<String, Vec<Hunk>>,
}

/// The new lines of a change (0-based, end exclusive) and the old lines it replaced.
type Hunk = (std::ops::Range<usize>, Vec<String>);

impl Hunks {
    fn removed(&mut self, r: &Repo, b: &BlameLine) -> Result<Vec<String>> {
        let Some((prev, prev_path)) = &b.previous else { return Ok(Vec::new()) };
        if !self.by_commit.contains_key(&b.commit) {
            let commit = (!b.uncommitted()).then_some(b.commit.as_str());
            let h = r.replaced(prev, prev_path, commit, &b.path).map_err(git_err)?;
            self.by_commit.insert(b.commit.clone(), h);
        }
        let at = b.orig_line.saturating_sub(1) as usize;
        Ok(self.by_commit[&b.commit]
            .iter()
            .find(|(range, _)| range.contains(&at))
            .map(|(_, old)| old.clone())
            .unwrap_or_default())
    }
}

/// An edit with its chat, as people and agents see it.
fn describe(t: &Tether, e: &Edit) -> EditOrigin {
    let summary = e.conversation_id.as_deref().and_then(|c| crate::ops::sessions::summary(t, c).ok());
    let turn =
        summary.as_ref().and_then(|s| crate::history::sessions::turn_at(&t.store, &s.id, e.at_ms).ok().flatten());
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

/// `code_origin`: the origin of a line or range, with the words of the turn that wrote it.
#[derive(Debug, Clone, Serialize)]
pub struct CodeOrigin {
    pub file: String,
    pub counts: OriginCounts,
    pub lines: Vec<LineOrigin>,
    pub edits: Vec<EditOrigin>,
    /// Per chat behind the lines: the turn that made the edit (read more with `session_read`).
    pub excerpts: Vec<Excerpt>,
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
    Ok(CodeOrigin { file: b.file, counts: b.counts, lines: b.lines, edits: b.edits, excerpts })
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
    let d = describe(t, e);
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

/// `7d`, `2w`, `1y`, `24h`, `30m`, or an ISO date/time, as epoch ms. An age is a whole number
/// of units, none or more (`-5d` is not one: it read as five days ahead); one that does not
/// fit in milliseconds is not one either.
pub fn parse_since(s: &str) -> Result<i64> {
    let s = s.trim();
    let unit = |suffix: char, ms: i64| {
        s.strip_suffix(suffix)
            .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|n| n.parse::<i64>().ok())
            .and_then(|n| n.checked_mul(ms))
            .and_then(|back| now_ms().checked_sub(back))
    };
    unit('d', 86_400_000)
        .or_else(|| unit('w', 7 * 86_400_000))
        .or_else(|| unit('y', 365 * 86_400_000))
        .or_else(|| unit('h', 3_600_000))
        .or_else(|| unit('m', 60_000))
        .or_else(|| crate::clock::parse_iso(s))
        .or_else(|| {
            chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d")
                .ok()
                .and_then(|d| d.and_hms_opt(0, 0, 0))
                .map(|d| d.and_utc().timestamp_millis())
        })
        .ok_or_else(|| {
            Error::invalid("since", format!("{s:?} is not a date (2026-11-01), a time, or an age like 7d or 24h"))
        })
}

/// The root of the repository `dir` is in.
fn repo_root(dir: &str) -> Result<String> {
    if dir.trim().is_empty() || dir.contains('\0') {
        return Err(Error::invalid("repo", "name a folder of the repository"));
    }
    let d = Path::new(dir).canonicalize().map_err(|e| Error::invalid("repo", format!("{dir}: {e}")))?;
    let r = Repo::open(&d).map_err(git_err)?;
    Ok(r.root.canonicalize().unwrap_or(r.root).to_string_lossy().into_owned())
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

pub const NOTES_REF: &str = "agent-trace";

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
        let records: Vec<String> =
            mine.iter().map(|e| serde_json::to_string(&to_record(t, e, false))).collect::<serde_json::Result<_>>()?;
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

pub fn files_of(t: &Tether, session: &str) -> Result<Vec<FileTouched>> {
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

/// AI-written lines by repository and model, for the insights; empty where nothing is traced.
pub fn written(t: &Tether, since_ms: Option<i64>) -> Result<Vec<WrittenBy>> {
    traces::written_by(&t.store, since_ms)
}
