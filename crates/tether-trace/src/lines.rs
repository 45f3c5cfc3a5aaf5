//! Lines and their hashes: how a line is normalised before it is hashed, which lines of an edit
//! it wrote (not the context it carried), where those lines sit in the file after the edit, and
//! the per-range content hash Agent Trace records.
//!
//! Pure: no I/O, no store.

use sha2::{Digest, Sha256};
use similar::{Algorithm, DiffOp, TextDiff};

/// A line as it is compared: without its line ending (`\r\n` and `\n` alike) and without leading
/// and trailing whitespace, so re-indenting (tabs ↔ spaces), a formatter's trailing spaces or a
/// checkout's CRLF do not change who wrote it. Whitespace inside the line still counts.
pub fn normalise(line: &str) -> &str {
    line.trim_matches(|c: char| c.is_whitespace())
}

/// The 64-bit hash of a normalised line, as SQLite stores it (signed).
pub fn line_hash(line: &str) -> i64 {
    xxhash_rust::xxh3::xxh3_64(normalise(line).as_bytes()) as i64
}

/// A line that says nothing on its own (blank, or only brackets and punctuation: `}`, `});`,
/// `end`-less closers). Its hash matches thousands of lines anywhere, so it is attributed only
/// beside a line of the same edit (see [`crate::origin`]).
pub fn is_trivial(line: &str) -> bool {
    !normalise(line).chars().any(char::is_alphanumeric)
}

/// `text` split into lines the way editors count them: `\n` ends a line, a final line without
/// one still counts, an empty text has no lines.
pub fn split(text: &str) -> Vec<&str> {
    if text.is_empty() {
        return Vec::new();
    }
    let body = text.strip_suffix('\n').unwrap_or(text);
    body.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l)).collect()
}

/// Agent Trace's `content_hash` of a range: SHA-256 over its normalised lines joined by `\n`.
pub fn range_hash<'a>(lines: impl IntoIterator<Item = &'a str>) -> String {
    let mut h = Sha256::new();
    for (i, l) in lines.into_iter().enumerate() {
        if i > 0 {
            h.update(b"\n");
        }
        h.update(normalise(l).as_bytes());
    }
    let digest = h.finalize();
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256:");
    for b in digest {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

/// Which lines of `new` (0-based indices) an edit from `old` to `new` wrote: those that are not
/// carried over unchanged from `old`. Context the edit repeated is not its work. Compared
/// normalised, so a re-indented line counts as carried.
pub fn written(old: &[&str], new: &[&str]) -> (Vec<usize>, Vec<usize>) {
    let o: Vec<&str> = old.iter().map(|l| normalise(l)).collect();
    let n: Vec<&str> = new.iter().map(|l| normalise(l)).collect();
    let diff = TextDiff::configure().algorithm(Algorithm::Patience).diff_slices(&o, &n);
    let (mut wrote, mut replaced) = (Vec::new(), Vec::new());
    for op in diff.ops() {
        match *op {
            DiffOp::Equal { .. } => {}
            DiffOp::Insert { new_index, new_len, .. } => wrote.extend(new_index..new_index + new_len),
            DiffOp::Delete { old_index, old_len, .. } => replaced.extend(old_index..old_index + old_len),
            DiffOp::Replace { old_index, old_len, new_index, new_len } => {
                wrote.extend(new_index..new_index + new_len);
                replaced.extend(old_index..old_index + old_len);
            }
        }
    }
    (wrote, replaced)
}

/// The 0-based line where `needle` (a run of lines) starts in `hay`: the first place all its
/// lines match, compared normalised. `None` when the file no longer holds it.
pub fn locate(hay: &[&str], needle: &[&str]) -> Option<usize> {
    if needle.is_empty() || needle.len() > hay.len() {
        return None;
    }
    let first = normalise(needle[0]);
    (0..=hay.len() - needle.len()).find(|&i| {
        normalise(hay[i]) == first && needle.iter().zip(&hay[i..]).all(|(a, b)| normalise(a) == normalise(b))
    })
}

/// Consecutive indices grouped into inclusive `(start, end)` runs.
pub fn runs(sorted: &[usize]) -> Vec<(usize, usize)> {
    let mut out: Vec<(usize, usize)> = Vec::new();
    for &i in sorted {
        match out.last_mut() {
            Some((_, end)) if *end + 1 == i => *end = i,
            _ => out.push((i, i)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whitespace_and_line_endings_do_not_change_a_line() {
        assert_eq!(line_hash("\tlet x = 1;\r"), line_hash("    let x = 1;  "));
        assert_ne!(line_hash("let x = 1;"), line_hash("let x  = 1;"));
        assert_eq!(split("a\r\nb\r\n"), vec!["a", "b"]);
        assert_eq!(split("a\nb"), vec!["a", "b"]);
        assert!(split("").is_empty());
        assert_eq!(split("\n"), vec![""]);
    }

    #[test]
    fn context_an_edit_repeats_is_not_what_it_wrote() {
        let old = ["fn a() {", "    1", "}"];
        let new = ["fn a() {", "    let y = 2;", "    y + 1", "}"];
        let (wrote, replaced) = written(&old, &new);
        assert_eq!(wrote, vec![1, 2]);
        assert_eq!(replaced, vec![1]);
        // A pure insertion replaces nothing; a new file is all written.
        assert_eq!(written(&[], &["x", "y"]).0, vec![0, 1]);
        // Re-indented context is still context.
        assert!(written(&["  a", "b"], &["\ta", "b", "c"]).0 == vec![2]);
    }

    #[test]
    fn lines_are_located_and_grouped() {
        let hay = ["a", "b", "c", "b", "d"];
        assert_eq!(locate(&hay, &["b", "d"]), Some(3));
        assert_eq!(locate(&hay, &["  b", "c"]), Some(1));
        assert_eq!(locate(&hay, &["x"]), None);
        assert_eq!(runs(&[1, 2, 3, 7, 9, 10]), vec![(1, 3), (7, 7), (9, 10)]);
        assert!(is_trivial("  });") && is_trivial("") && !is_trivial("} else {"));
        assert!(range_hash(["a", "b"]).starts_with("sha256:") && range_hash(["a", "b"]).len() == 71);
        assert_eq!(range_hash(["a\r", " b"]), range_hash(["a", "b"]));
    }
}
