//! From an edit as Cursor's hook (or a run's tool call) describes it — a file and its
//! `{old_string, new_string}` replacements — to what the trace keeps: the lines it wrote as
//! ranges of the file after the edit (1-based, with Agent Trace's content hash) and the hashes of
//! the lines it wrote and replaced. Computed where the edit is seen (the hook forwarder, the
//! runner), so a 5 MB edit travels as hashes, never as text.
//!
//! Pure: the caller reads the file.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::lines::{line_hash, locate, range_hash, runs, split, written};

/// One replacement of an edit, as Cursor's `afterFileEdit` / `afterTabFileEdit` send it.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
pub struct Replacement {
    #[serde(default)]
    pub old_string: String,
    #[serde(default)]
    pub new_string: String,
}

/// A run of lines an edit wrote, as positioned in the file right after it (1-based, inclusive).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, ts_rs::TS)]
#[ts(export, export_to = "trace.ts")]
pub struct Range {
    pub start_line: u32,
    pub end_line: u32,
    pub content_hash: String,
}

/// What one edit wrote, reduced to what the trace keeps.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Captured {
    pub ranges: Vec<Range>,
    /// Hashes of the lines it wrote.
    pub written: Vec<i64>,
    /// Hashes of the lines it replaced (what a revert would bring back).
    pub replaced: Vec<i64>,
    /// Replacements skipped: binary text, or nothing to find.
    pub skipped: u32,
}

/// What `edits` wrote into the file whose text after the edit is `file` (`None` when it cannot
/// be read as text: then lines are hashed without positions).
pub fn capture(file: Option<&str>, edits: &[Replacement]) -> Captured {
    let mut out = Captured::default();
    let file_lines = file.map(split);
    for e in edits {
        if e.new_string.contains('\0') || e.old_string.contains('\0') {
            out.skipped += 1;
            continue;
        }
        // The replacement's whole lines in the file: Cursor's strings may start or end mid-line,
        // and the rest of those lines is context, not the edit's work.
        let placed = file.and_then(|f| whole_lines(f, e));
        let (start, old_full, new_full) = match &placed {
            Some((start, old, new)) => (Some(*start), split(old), split(new)),
            None => (None, split(&e.old_string), split(&e.new_string)),
        };
        if new_full.is_empty() && old_full.is_empty() {
            out.skipped += 1;
            continue;
        }
        let (wrote, replaced) = written(&old_full, &new_full);
        out.written.extend(wrote.iter().map(|&i| line_hash(new_full[i])));
        out.replaced.extend(replaced.iter().map(|&i| line_hash(old_full[i])));
        // Without the substring found, the new lines may still stand whole in the file.
        let start = start.or_else(|| file_lines.as_ref().and_then(|fl| locate(fl, &new_full)));
        if let Some(start) = start {
            for (a, b) in runs(&wrote) {
                out.ranges.push(Range {
                    start_line: (start + a + 1) as u32,
                    end_line: (start + b + 1) as u32,
                    content_hash: range_hash(new_full[a..=b].iter().copied()),
                });
            }
        }
    }
    out.ranges.sort_by_key(|r| r.start_line);
    out
}

/// Where `e.new_string` sits in `file`, widened to whole lines: (0-based first line, the old
/// whole lines, the new whole lines). The first occurrence wins; `None` when it is not there.
fn whole_lines(file: &str, e: &Replacement) -> Option<(usize, String, String)> {
    if e.new_string.is_empty() {
        return None;
    }
    let at = file.find(&e.new_string)?;
    let line_start = file[..at].rfind('\n').map_or(0, |i| i + 1);
    let end = at + e.new_string.len();
    let (new_tail, old_body) = if e.new_string.ends_with('\n') {
        (end - 1, e.old_string.strip_suffix('\n').unwrap_or(&e.old_string))
    } else {
        (file[end..].find('\n').map_or(file.len(), |i| end + i), e.old_string.as_str())
    };
    let prefix = &file[line_start..at];
    let suffix = if e.new_string.ends_with('\n') { "" } else { &file[end..new_tail] };
    let new_full = file[line_start..new_tail].to_owned();
    let old_full = format!("{prefix}{old_body}{suffix}");
    let start = file[..line_start].bytes().filter(|&b| b == b'\n').count();
    Some((start, old_full, new_full))
}

/// Hashes packed for the wire: 16 hex digits each, no separator.
pub fn pack(hashes: &[i64]) -> String {
    let mut s = String::with_capacity(hashes.len() * 16);
    for h in hashes {
        s.push_str(&format!("{:016x}", *h as u64));
    }
    s
}

/// The inverse of [`pack`]; `None` for anything else.
pub fn unpack(s: &str) -> Option<Vec<i64>> {
    if !s.len().is_multiple_of(16) || !s.is_ascii() {
        return None;
    }
    (0..s.len()).step_by(16).map(|i| u64::from_str_radix(&s[i..i + 16], 16).ok().map(|v| v as i64)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rep(old: &str, new: &str) -> Replacement {
        Replacement { old_string: old.into(), new_string: new.into() }
    }

    #[test]
    fn a_mid_line_replacement_is_the_whole_line_it_changed() {
        let file = "fn main() {\n    let x = 2;\n    println!(\"{x}\");\n}\n";
        let c = capture(Some(file), &[rep("1", "2")]);
        assert_eq!(c.ranges, vec![Range { start_line: 2, end_line: 2, content_hash: range_hash(["let x = 2;"]) }]);
        assert_eq!(c.written, vec![line_hash("let x = 2;")]);
        assert_eq!(c.replaced, vec![line_hash("let x = 1;")]);
    }

    #[test]
    fn repeated_context_is_not_written_and_ranges_are_where_the_lines_are_now() {
        let file = "a\nb\nfn f() {\n    one();\n    two();\n}\nz\n";
        let c = capture(Some(file), &[rep("fn f() {\n    one();\n}\n", "fn f() {\n    one();\n    two();\n}\n")]);
        assert_eq!(c.ranges.iter().map(|r| (r.start_line, r.end_line)).collect::<Vec<_>>(), vec![(5, 5)]);
        assert_eq!(c.written, vec![line_hash("two();")]);
        assert!(c.replaced.is_empty());
    }

    #[test]
    fn an_unreadable_file_still_yields_hashes_and_binary_is_skipped() {
        let c = capture(None, &[rep("", "x\ny\n"), rep("a", "b\0")]);
        assert_eq!(c.written.len(), 2);
        assert!(c.ranges.is_empty());
        assert_eq!(c.skipped, 1);
        let crlf = capture(Some("p\r\nq\r\n"), &[rep("", "q\r\n")]);
        assert_eq!(crlf.ranges[0].start_line, 2);
    }

    #[test]
    fn hashes_pack_and_unpack() {
        let h = vec![0, -1, 42, i64::MIN];
        assert_eq!(unpack(&pack(&h)), Some(h));
        assert_eq!(unpack("zz"), None);
    }
}
