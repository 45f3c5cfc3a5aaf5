//! The code-origin rule applied to a whole file: each line of a window of it gets its origin
//! (`ai`, `mixed`, `human`, `unknown`) and the edit behind it, from the lines themselves, what
//! the trace says wrote their content, and what git says about their last change.
//!
//! Pure over its inputs: it never runs git and never reads the store. What it needs from them
//! only for some lines (a blame that follows moves, the lines a change replaced, whether a
//! change predates tracing, which edits wrote a replaced line) it asks of a [`Sources`] the
//! caller implements — lazily, because each answer costs a git call and most lines never need
//! one. The core's adapter answers from `tether-git` and the trace store; the tests here answer
//! from tables.
//!
//! Passes, in order (see [`crate::origin`] for each rule): content an edit wrote (lines that say
//! something), then lines git says changed after tracing began (`mixed`/`human`, after a second
//! blame that follows moves within the file), then trivial lines (blanks, braces) beside what was
//! decided.

use std::collections::{HashMap, HashSet};

use crate::lines::{is_trivial, line_hash, runs};
use crate::origin::{self, Candidate, Contributor, Line};

/// What git says last changed one line of the file as it is now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Change {
    /// The same value for every line of one change (a commit, or all uncommitted work).
    pub id: u64,
    /// The change's author time (ms); `None` when not committed yet.
    pub author_ms: Option<i64>,
}

/// What the rule asks about the file's history, line by line (`i` is 0-based in the file as it
/// is now). Answers may be cached by the implementation; the rule asks each at most a few times.
pub trait Sources {
    type Error;
    /// The last change to line `i`; `None` when the file is not in git.
    fn change(&self, i: usize) -> Option<Change>;
    /// Whether line `i` was last changed before tracing began in its repository (an
    /// uncommitted line never was).
    fn predates(&mut self, i: usize) -> bool;
    /// Blames these lines again following moves within the file, so a line a person only moved
    /// keeps the change that wrote it; [`Sources::change`] answers from that blame afterwards.
    /// `ranges` are 1-based and inclusive.
    fn follow_moves(&mut self, ranges: &[(u32, u32)]) -> Result<(), Self::Error>;
    /// The lines the change behind line `i` replaced (the hunk of its diff that holds it).
    fn replaced(&mut self, i: usize) -> Result<Vec<String>, Self::Error>;
    /// Which recorded edits wrote lines with these content hashes (by hash; absent: none).
    fn written(&mut self, hashes: &[i64]) -> Result<HashMap<i64, Vec<i64>>, Self::Error>;
}

/// The file and what the trace knows of it.
#[derive(Debug, Clone, Copy)]
pub struct File<'a> {
    pub lines: &'a [&'a str],
    /// [`line_hash`] of each line.
    pub hashes: &'a [i64],
    /// Edits that wrote each content hash.
    pub wrote: &'a HashMap<i64, Vec<i64>>,
    /// Content hashes some edit replaced (a line putting one back is a revert).
    pub replaced: &'a HashSet<i64>,
    /// What is known of each edit in `wrote`.
    pub edits: &'a HashMap<i64, Candidate>,
    /// Tracing has begun in the file's repository (else a changed line is `unknown`).
    pub traced: bool,
    /// Git tracks the file, so its lines may be blamed again following moves.
    pub tracked: bool,
}

/// The origin of lines `first..=last` (0-based, within the file) and the edit behind each `ai`
/// or `mixed` one, in order.
pub fn attribute<S: Sources>(
    f: &File<'_>,
    (first, last): (usize, usize),
    src: &mut S,
) -> Result<Vec<(Contributor, Option<i64>)>, S::Error> {
    let n = f.lines.len();
    assert!(first <= last && last < n, "the window is inside the file");
    let fact = |i: usize, src: &S| {
        let change = src.change(i);
        Line {
            trivial: is_trivial(f.lines[i]),
            wrote: f.wrote.get(&f.hashes[i]).cloned().unwrap_or_default(),
            changed_ms: change.and_then(|c| c.author_ms),
            change: change.map(|c| c.id),
        }
    };
    let mut facts: Vec<Line> = (0..n).map(|i| fact(i, src)).collect();
    // Trivial lines look at their neighbours, which may lie outside the window asked for.
    let (lo, hi) = (neighbour(&facts, first, false), neighbour(&facts, last, true));
    // Lines that say something: the content an edit wrote.
    let mut ai: Vec<Option<i64>> = vec![None; n];
    for i in lo..=hi {
        ai[i] = origin::written_by(&facts[i], f.edits);
    }
    // The rest that git says changed after tracing began: blamed again following moves within
    // the file (`-M`, costly on a whole file, cheap on a few lines), so code a person only moved
    // keeps the commit that wrote it.
    if f.tracked {
        let need: Vec<usize> =
            (lo..=hi).filter(|&i| ai[i].is_none() && src.change(i).is_some() && !src.predates(i)).collect();
        if !need.is_empty() {
            let ranges: Vec<(u32, u32)> = runs(&need).into_iter().map(|(a, b)| (a as u32 + 1, b as u32 + 1)).collect();
            src.follow_moves(&ranges)?;
            for &i in &need {
                let change = src.change(i);
                facts[i].changed_ms = change.and_then(|c| c.author_ms);
                facts[i].change = change.map(|c| c.id);
            }
        }
    }
    // The edit (if any) that last wrote each replaced line's content, asked once per content.
    let mut removed_by: HashMap<i64, Option<i64>> = HashMap::new();
    let mut changed = |i: usize, src: &mut S| -> Result<(Contributor, Option<i64>), S::Error> {
        if src.change(i).is_none() || !f.traced || src.predates(i) {
            return Ok((Contributor::Unknown, None));
        }
        let removed = src.replaced(i)?;
        let removed_hashes: Vec<i64> = removed.iter().map(|l| line_hash(l)).collect();
        let unseen: Vec<i64> = removed_hashes.iter().filter(|h| !removed_by.contains_key(h)).copied().collect();
        if !unseen.is_empty() {
            let found = src.written(&unseen)?;
            for h in unseen {
                removed_by.insert(h, found.get(&h).and_then(|v| v.iter().max().copied()));
            }
        }
        let pairs: Vec<(&str, Option<i64>)> =
            removed.iter().zip(&removed_hashes).map(|(l, h)| (l.as_str(), removed_by[h])).collect();
        let restores = !is_trivial(f.lines[i]) && f.replaced.contains(&f.hashes[i]);
        Ok(origin::changed_line(f.lines[i], &pairs, restores))
    };
    let mut decided: Vec<(Contributor, Option<i64>)> = vec![(Contributor::Unknown, None); n];
    for i in lo..=hi {
        if facts[i].trivial {
            continue;
        }
        decided[i] = match ai[i] {
            Some(e) => (Contributor::Ai, Some(e)),
            None => changed(i, src)?,
        };
    }
    // Then braces and blanks, beside what was decided.
    let settled: Vec<Option<i64>> = decided.iter().map(|(_, e)| *e).collect();
    for i in first..=last {
        if facts[i].trivial {
            decided[i] = match origin::beside(&facts, &settled, i) {
                Some(e) => (Contributor::Ai, Some(e)),
                None => changed(i, src)?,
            };
        }
    }
    decided.truncate(last + 1);
    Ok(decided.split_off(first))
}

/// The nearest non-trivial line beyond `i` (below it when `down`), or the file's end.
fn neighbour(facts: &[Line], i: usize, down: bool) -> usize {
    if down {
        (i + 1..facts.len()).find(|&j| !facts[j].trivial).unwrap_or(facts.len() - 1).max(i)
    } else {
        (0..i).rev().find(|&j| !facts[j].trivial).unwrap_or(0).min(i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A history from tables: the change behind each line, which predate tracing, what a moved
    /// blame says instead, the lines each change replaced, and the trace's lookups.
    #[derive(Default)]
    struct Table {
        changes: Vec<Option<Change>>,
        before_tracing: HashSet<u64>,
        moved: HashMap<usize, Change>,
        replaced: HashMap<u64, Vec<String>>,
        written: HashMap<i64, Vec<i64>>,
        asked_moves: Vec<(u32, u32)>,
        asked_replaced: usize,
    }

    impl Sources for Table {
        type Error = String;
        fn change(&self, i: usize) -> Option<Change> {
            self.changes[i]
        }
        fn predates(&mut self, i: usize) -> bool {
            self.changes[i].is_some_and(|c| self.before_tracing.contains(&c.id))
        }
        fn follow_moves(&mut self, ranges: &[(u32, u32)]) -> Result<(), String> {
            self.asked_moves.extend_from_slice(ranges);
            for (&i, c) in &self.moved {
                self.changes[i] = Some(*c);
            }
            Ok(())
        }
        fn replaced(&mut self, i: usize) -> Result<Vec<String>, String> {
            self.asked_replaced += 1;
            Ok(self.changes[i].and_then(|c| self.replaced.get(&c.id).cloned()).unwrap_or_default())
        }
        fn written(&mut self, hashes: &[i64]) -> Result<HashMap<i64, Vec<i64>>, String> {
            Ok(hashes.iter().filter_map(|h| self.written.get(h).map(|v| (*h, v.clone()))).collect())
        }
    }

    const OLD: Change = Change { id: 1, author_ms: Some(1_000) };
    const NEW: Change = Change { id: 2, author_ms: Some(9_000) };

    fn run(
        lines: &[&str],
        wrote: &[(usize, i64)],
        table: &mut Table,
        window: (usize, usize),
    ) -> Vec<(Contributor, Option<i64>)> {
        let hashes: Vec<i64> = lines.iter().map(|l| line_hash(l)).collect();
        let mut by_hash: HashMap<i64, Vec<i64>> = HashMap::new();
        for (i, e) in wrote {
            by_hash.entry(hashes[*i]).or_default().push(*e);
        }
        let edits = HashMap::from([
            (7, Candidate { at_ms: 5_000, same_file: true }),
            (8, Candidate { at_ms: 6_000, same_file: true }),
        ]);
        let f = File {
            lines,
            hashes: &hashes,
            wrote: &by_hash,
            replaced: &HashSet::new(),
            edits: &edits,
            traced: true,
            tracked: true,
        };
        attribute(&f, window, table).unwrap()
    }

    #[test]
    fn written_content_is_ai_a_persons_change_is_human_old_code_unknown() {
        use Contributor::*;
        let lines = ["fn old() {}", "let made = agent();", "}", "let mine = person();", ""];
        let mut t = Table {
            changes: vec![Some(OLD), Some(NEW), Some(NEW), Some(NEW), Some(NEW)],
            before_tracing: HashSet::from([OLD.id]),
            ..Table::default()
        };
        let got = run(&lines, &[(1, 7), (2, 7)], &mut t, (0, 4));
        assert_eq!(got, vec![(Unknown, None), (Ai, Some(7)), (Ai, Some(7)), (Human, None), (Human, None)]);
        // Blamed again: the lines from the brace on (3-5, 1-based; a trivial line waits for its
        // neighbours), not the AI's line nor the one from before tracing.
        assert_eq!(t.asked_moves, vec![(3, 5)]);
    }

    #[test]
    fn an_edited_ai_line_is_mixed_and_a_moved_line_keeps_its_old_change() {
        use Contributor::*;
        let lines = ["let total = a + b + c;", "fn kept() {}"];
        let removed = line_hash("let total = a + b;");
        let mut t = Table {
            changes: vec![Some(NEW), Some(NEW)],
            before_tracing: HashSet::from([OLD.id]),
            // A blame that follows moves finds line 2 came, unchanged, from the old commit.
            moved: HashMap::from([(1, OLD)]),
            replaced: HashMap::from([(NEW.id, vec!["let total = a + b;".to_owned()])]),
            written: HashMap::from([(removed, vec![7, 8])]),
            ..Table::default()
        };
        let got = run(&lines, &[], &mut t, (0, 1));
        assert_eq!(got, vec![(Mixed, Some(8)), (Unknown, None)]);
    }

    #[test]
    fn the_window_is_what_is_returned_and_outside_git_all_is_unknown() {
        use Contributor::*;
        let lines = ["a();", "b();", "c();"];
        let mut t = Table { changes: vec![None; 3], ..Table::default() };
        let got = run(&lines, &[(1, 7)], &mut t, (1, 2));
        assert_eq!(got, vec![(Ai, Some(7)), (Unknown, None)]);
        assert_eq!(t.asked_replaced, 0, "no history asked for outside git");
    }
}
