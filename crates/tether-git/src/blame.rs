//! `git blame` for code origin: for each line of a file as it is in the checkout (uncommitted
//! changes included), the commit that last changed it, when its author made that change, where
//! the line was in that commit's version and which version came before. And the notes Tether
//! writes when a person asked for trace records in the repository.

use std::collections::HashMap;

use crate::error::{Error, Result};
use crate::repo::Repo;

/// The commit id git gives lines nobody committed yet.
pub const UNCOMMITTED: &str = "0000000000000000000000000000000000000000";

/// One line of a file, as blame sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlameLine {
    pub commit: String,
    /// The author's time of that change (ms); `None` for a line not committed yet.
    pub author_ms: Option<i64>,
    /// The line's number (1-based) in that commit's version of the file (the working file for
    /// an uncommitted line).
    pub orig_line: u32,
    /// Its number in the file now.
    pub line: u32,
    /// The file's path in that commit.
    pub path: String,
    /// The version before that change: (commit, path). `None` when the change created the file.
    pub previous: Option<(String, String)>,
    pub text: String,
}

impl BlameLine {
    pub fn uncommitted(&self) -> bool {
        self.commit == UNCOMMITTED
    }
}

#[derive(Default, Clone)]
struct CommitInfo {
    author_ms: Option<i64>,
    path: String,
    previous: Option<(String, String)>,
}

impl Repo {
    /// Blame of `path` (relative to the root) as in the checkout: all lines, or only `ranges`
    /// (1-based, inclusive). `moves`: follow lines moved within the file (`-M`), which costs
    /// several times more on a whole file. Whitespace changes never make a line new (`-w`).
    pub fn blame(&self, path: &str, ranges: &[(u32, u32)], moves: bool) -> Result<Vec<BlameLine>> {
        let mut args = vec!["blame".to_owned(), "--porcelain".to_owned(), "-w".to_owned()];
        if moves {
            args.push("-M".into());
        }
        for (a, b) in ranges {
            args.push("-L".into());
            args.push(format!("{a},{b}"));
        }
        args.push("--".into());
        args.push(path.into());
        let out = self.run(&args)?;
        if !out.status.success() {
            let message = String::from_utf8_lossy(&out.stderr).trim().to_owned();
            return Err(Error::Git { command: args.join(" "), message });
        }
        parse_porcelain(&String::from_utf8_lossy(&out.stdout))
    }

    /// The commits reachable from `to` and not from `from` (at most `max`; `None` when there
    /// are more): one walk instead of one ancestry question per commit.
    pub fn commits_since(&self, from: &str, to: &str, max: usize) -> Result<Option<std::collections::HashSet<String>>> {
        let out = self.ok(["rev-list", &format!("--max-count={}", max + 1), &format!("{from}..{to}")])?;
        let set: std::collections::HashSet<String> = out.lines().map(str::to_owned).collect();
        Ok((set.len() <= max).then_some(set))
    }

    /// What a change to `path` replaced, hunk by hunk: the new lines' range (0-based, end
    /// exclusive) and the old lines. From `prev`'s `prev_path` to `commit`'s `path`, or to the
    /// file in the checkout when `commit` is `None`. Git's own diff (`-U0`), one process.
    pub fn replaced(
        &self,
        prev: &str,
        prev_path: &str,
        commit: Option<&str>,
        path: &str,
    ) -> Result<Vec<(std::ops::Range<usize>, Vec<String>)>> {
        let old = format!("{prev}:{prev_path}");
        let mut args: Vec<String> =
            ["diff", "-U0", "--no-color", "--no-ext-diff", "--no-renames"].map(str::to_owned).into();
        match commit {
            Some(c) => {
                args.push(old);
                args.push(format!("{c}:{path}"));
            }
            None if prev_path == path => {
                args.push(prev.to_owned());
                args.push("--".into());
                args.push(path.to_owned());
            }
            // Renamed and not committed: the old blob against the file in the checkout.
            None => return Ok(Vec::new()),
        }
        let out = self.run(&args)?;
        if !out.status.success() {
            let message = String::from_utf8_lossy(&out.stderr).trim().to_owned();
            return Err(Error::Git { command: args.join(" "), message });
        }
        Ok(parse_unified_zero(&String::from_utf8_lossy(&out.stdout)))
    }

    /// Whether commit `a` is `b` or one of its ancestors.
    pub fn is_ancestor(&self, a: &str, b: &str) -> Result<bool> {
        Ok(self.run(["merge-base", "--is-ancestor", a, b])?.status.success())
    }

    /// Whether git tracks `path` (a new file is blamed as all uncommitted).
    pub fn tracks(&self, path: &str) -> Result<bool> {
        Ok(self.run(["ls-files", "--error-unmatch", "--", path])?.status.success())
    }

    /// Commits in `from..to` (oldest first); all of `to`'s history when `from` is `None`.
    pub fn commits_between(&self, from: Option<&str>, to: &str) -> Result<Vec<String>> {
        let range = match from {
            Some(f) => format!("{f}..{to}"),
            None => to.to_owned(),
        };
        let out = self.ok(["rev-list", "--reverse", "--max-count=500", &range])?;
        Ok(out.lines().map(str::to_owned).collect())
    }

    /// A commit's author time (ms) and the files it changed against its first parent.
    pub fn commit_files(&self, commit: &str) -> Result<(i64, Vec<String>)> {
        let out = self.ok(["show", "--no-renames", "--name-only", "--format=%at", commit])?;
        let mut lines = out.lines();
        let at = lines.next().and_then(|s| s.trim().parse::<i64>().ok()).ok_or_else(|| Error::Parse(out.clone()))?;
        Ok((at * 1000, lines.filter(|l| !l.is_empty()).map(str::to_owned).collect()))
    }

    /// Attaches `text` as the note of `commit` under `refs/notes/<notes_ref>` (replacing one
    /// there). Notes are refs of their own: the checkout, its index and branches are untouched.
    pub fn set_note(&self, notes_ref: &str, commit: &str, text: &str) -> Result<()> {
        let dir = tempfile_path(self);
        std::fs::write(&dir, text)?;
        // Notes are commits of their own: without an identity configured, git refuses to make
        // one, so Tether signs them itself rather than fail every time.
        let known = self.run(["config", "user.email"])?.status.success();
        let mut args: Vec<String> = Vec::new();
        if !known {
            args.extend(["-c", "user.name=Tether", "-c", "user.email=tether@localhost"].map(str::to_owned));
        }
        args.extend(["notes".into(), format!("--ref={notes_ref}"), "add".into(), "-f".into(), "-F".into()]);
        args.push(dir.to_string_lossy().into_owned());
        args.push(commit.to_owned());
        let r = self.ok(&args);
        let _ = std::fs::remove_file(&dir);
        r.map(|_| ())
    }

    /// The note of `commit` under `refs/notes/<notes_ref>`, if any.
    pub fn note(&self, notes_ref: &str, commit: &str) -> Result<Option<String>> {
        let out = self.run(["notes", &format!("--ref={notes_ref}"), "show", commit])?;
        Ok(out.status.success().then(|| String::from_utf8_lossy(&out.stdout).into_owned()))
    }
}

/// A file name for a note's text inside the repository's git dir (never the checkout).
fn tempfile_path(repo: &Repo) -> std::path::PathBuf {
    let git_dir = repo
        .ok(["rev-parse", "--absolute-git-dir"])
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|_| std::env::temp_dir());
    git_dir.join(format!(
        "tether-note-{}-{}",
        std::process::id(),
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos())
    ))
}

/// `git diff -U0` hunks: `@@ -a,b +c,d @@` then the removed (`-`) and added (`+`) lines.
fn parse_unified_zero(out: &str) -> Vec<(std::ops::Range<usize>, Vec<String>)> {
    let mut hunks = Vec::new();
    let mut current: Option<(std::ops::Range<usize>, Vec<String>)> = None;
    for l in out.lines() {
        if let Some(rest) = l.strip_prefix("@@ ") {
            if let Some(h) = current.take() {
                hunks.push(h);
            }
            let new = rest.split(' ').find_map(|w| w.strip_prefix('+')).unwrap_or("0");
            let (start, len): (usize, usize) = match new.split_once(',') {
                Some((a, b)) => (a.parse().unwrap_or(0), b.parse().unwrap_or(0)),
                None => (new.parse().unwrap_or(0), 1),
            };
            // `+c,0` (nothing added) sits after line c; otherwise line c is the first added.
            let first = if len == 0 { start } else { start.saturating_sub(1) };
            current = Some((first..first + len, Vec::new()));
        } else if let (Some((_, old)), Some(text)) = (current.as_mut(), l.strip_prefix('-')) {
            old.push(text.to_owned());
        }
    }
    hunks.extend(current);
    hunks
}

fn parse_porcelain(out: &str) -> Result<Vec<BlameLine>> {
    let mut infos: HashMap<String, CommitInfo> = HashMap::new();
    let mut lines = Vec::new();
    let mut current: Option<(String, u32, u32)> = None;
    let bad = || Error::Parse("git blame --porcelain".into());
    for l in out.lines() {
        if let Some(text) = l.strip_prefix('\t') {
            let (commit, orig, fin) = current.take().ok_or_else(bad)?;
            let info = infos.get(&commit).cloned().unwrap_or_default();
            lines.push(BlameLine {
                author_ms: if commit == UNCOMMITTED { None } else { info.author_ms },
                commit,
                orig_line: orig,
                line: fin,
                path: info.path,
                previous: info.previous,
                text: text.to_owned(),
            });
            continue;
        }
        let mut parts = l.split(' ');
        let first = parts.next().unwrap_or_default();
        if first.len() == 40 && first.bytes().all(|b| b.is_ascii_hexdigit()) && current.is_none() {
            let orig = parts.next().and_then(|s| s.parse().ok()).ok_or_else(bad)?;
            let fin = parts.next().and_then(|s| s.parse().ok()).ok_or_else(bad)?;
            infos.entry(first.to_owned()).or_default();
            current = Some((first.to_owned(), orig, fin));
            continue;
        }
        let Some((commit, _, _)) = &current else { continue };
        let info = infos.entry(commit.clone()).or_default();
        let rest = l.split_once(' ').map_or("", |(_, r)| r);
        match first {
            "author-time" => info.author_ms = rest.parse::<i64>().ok().map(|s| s * 1000),
            "filename" => info.path = rest.to_owned(),
            "previous" => info.previous = rest.split_once(' ').map(|(c, p)| (c.to_owned(), p.to_owned())),
            _ => {}
        }
    }
    Ok(lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_context_hunks_give_new_ranges_and_old_lines() {
        let out = "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -2 +2,2 @@ fn x\n-old two\n+new two\n+new three\n@@ -9,2 +10,0 @@\n-gone\n-gone too\n";
        let h = parse_unified_zero(out);
        assert_eq!(
            h,
            vec![(1..3, vec!["old two".to_owned()]), (10..10, vec!["gone".to_owned(), "gone too".to_owned()])]
        );
    }

    #[test]
    fn porcelain_lines_carry_their_commit_and_previous_version() {
        let out = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa 1 1 2\nauthor n\nauthor-time 100\nsummary s\nboundary\nfilename f.rs\n\tone\naaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa 2 2\n\ttwo\n0000000000000000000000000000000000000000 3 3 1\nauthor-time 200\nprevious bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb old.rs\nfilename f.rs\n\t\tthree\n";
        let l = parse_porcelain(out).unwrap();
        assert_eq!(l.len(), 3);
        assert_eq!((l[1].author_ms, l[1].path.as_str(), l[1].text.as_str()), (Some(100_000), "f.rs", "two"));
        assert!(l[2].uncommitted() && l[2].author_ms.is_none());
        assert_eq!(l[2].previous, Some(("b".repeat(40), "old.rs".into())));
        assert_eq!(l[2].text, "\tthree");
    }
}
