//! What a run changed: the files between two commits (added, modified, deleted, renamed, with
//! line counts; binary files named) and the unified diff, as git computes them.

use serde::Serialize;

use crate::error::{Error, Result};
use crate::repo::Repo;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ts_rs::TS)]
#[ts(export, export_to = "git.ts")]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    Added,
    Modified,
    Deleted,
    Renamed,
    Copied,
    /// A file turned into a symlink or the reverse.
    TypeChanged,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
#[ts(export, export_to = "git.ts")]
pub struct FileChange {
    pub path: String,
    /// Where a renamed or copied file came from.
    pub old_path: Option<String>,
    pub kind: ChangeKind,
    /// Lines added and deleted; `None` for a binary file.
    pub added: Option<u64>,
    pub deleted: Option<u64>,
}

impl FileChange {
    pub fn is_binary(&self) -> bool {
        self.added.is_none()
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diff {
    pub base: String,
    pub head: String,
    pub files: Vec<FileChange>,
    /// The unified diff, when asked for.
    pub patch: Option<String>,
}

impl Diff {
    pub fn added(&self) -> u64 {
        self.files.iter().filter_map(|f| f.added).sum()
    }

    pub fn deleted(&self) -> u64 {
        self.files.iter().filter_map(|f| f.deleted).sum()
    }
}

/// Options every diff here runs with, whatever the person's config says: renames found, no
/// external diff tools or text conversions, no colour.
const DIFF_OPTS: [&str; 4] = ["--find-renames", "--no-ext-diff", "--no-textconv", "--no-color"];

impl Repo {
    /// The changes from `base` to `head` (commits or refs).
    pub fn diff(&self, base: &str, head: &str, with_patch: bool) -> Result<Diff> {
        let base = self.resolve(base)?;
        let head = self.resolve(head)?;
        let args = |what: &[&'static str]| {
            let mut a = vec!["diff"];
            a.extend(what);
            a.extend(DIFF_OPTS);
            a.extend([base.as_str(), head.as_str(), "--"]);
            a
        };
        let kinds = parse_name_status(&self.ok(args(&["--name-status", "-z"]))?)?;
        let counts = parse_numstat(&self.ok(args(&["--numstat", "-z"]))?)?;
        if kinds.len() != counts.len() {
            return Err(Error::Parse(format!("{} files by status, {} by line count", kinds.len(), counts.len())));
        }
        let files = kinds
            .into_iter()
            .zip(counts)
            .map(|((kind, old_path, path), (added, deleted))| FileChange { path, old_path, kind, added, deleted })
            .collect();
        let patch = if with_patch { Some(self.ok(args(&[]))?) } else { None };
        Ok(Diff { base, head, files, patch })
    }
}

/// `git diff --name-status -z`: `S\0path\0`, or `R<score>\0old\0new\0` for renames and copies.
fn parse_name_status(out: &str) -> Result<Vec<(ChangeKind, Option<String>, String)>> {
    let mut fields = out.split('\0').filter(|f| !f.is_empty());
    let mut v = Vec::new();
    while let Some(status) = fields.next() {
        let mut next = || fields.next().map(str::to_owned).ok_or_else(|| Error::Parse(format!("status {status}")));
        let kind = match status.as_bytes().first() {
            Some(b'A') => ChangeKind::Added,
            Some(b'M') => ChangeKind::Modified,
            Some(b'D') => ChangeKind::Deleted,
            Some(b'T') => ChangeKind::TypeChanged,
            Some(b'R') => ChangeKind::Renamed,
            Some(b'C') => ChangeKind::Copied,
            _ => return Err(Error::Parse(format!("status {status:?}"))),
        };
        if matches!(kind, ChangeKind::Renamed | ChangeKind::Copied) {
            let old = next()?;
            v.push((kind, Some(old), next()?));
        } else {
            v.push((kind, None, next()?));
        }
    }
    Ok(v)
}

/// `git diff --numstat -z`: `added\tdeleted\tpath\0`, or `added\tdeleted\t\0old\0new\0` for a
/// rename; `-` counts for a binary file.
fn parse_numstat(out: &str) -> Result<Vec<(Option<u64>, Option<u64>)>> {
    let mut fields = out.split('\0');
    let mut v = Vec::new();
    while let Some(f) = fields.next() {
        if f.is_empty() {
            continue;
        }
        let mut parts = f.splitn(3, '\t');
        let (a, d, path) = (parts.next(), parts.next(), parts.next());
        let count = |c: Option<&str>| -> Result<Option<u64>> {
            match c {
                Some("-") => Ok(None),
                Some(n) => n.parse().map(Some).map_err(|_| Error::Parse(format!("line count {n:?}"))),
                None => Err(Error::Parse(format!("numstat line {f:?}"))),
            }
        };
        v.push((count(a)?, count(d)?));
        if path == Some("") {
            // A rename: the two paths follow as fields of their own.
            fields.next();
            fields.next();
        }
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renames_and_binary_files_are_read_from_zero_separated_output() {
        let status = parse_name_status("M\0a.rs\0R087\0old.rs\0new.rs\0A\0img.png\0").unwrap();
        assert_eq!(status[1], (ChangeKind::Renamed, Some("old.rs".into()), "new.rs".into()));
        let counts = parse_numstat("3\t1\ta.rs\u{0}2\t2\t\u{0}old.rs\u{0}new.rs\u{0}-\t-\timg.png\u{0}").unwrap();
        assert_eq!(counts, vec![(Some(3), Some(1)), (Some(2), Some(2)), (None, None)]);
    }
}
