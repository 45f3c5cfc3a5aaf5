//! The rule that decides a line's origin, given what the trace recorded and what git says about
//! the line's last change. Decided when asked, never guessed at capture:
//!
//! - `ai`: the line's content is what an edit wrote (position-independent: it survives moves,
//!   rebases and squashes while the content does). A line with nothing to say on its own (blank,
//!   `}`) counts only beside a line attributed to an edit that wrote it too.
//! - `mixed`: the line changed after tracing began, and the change replaced a line an edit wrote
//!   that it still resembles (a person edited AI output).
//! - `unknown` for a line that puts back what an edit replaced (a revert: its origin is what it
//!   was before), one last changed before tracing began, or one in a file with no history.
//! - `human`: changed after tracing began, with no AI behind it.
//!
//! Pure: the core feeds it the store's lookups and git's blame.

use std::collections::HashMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Agent Trace's contributor types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, ts_rs::TS)]
#[ts(export, export_to = "trace.ts")]
#[serde(rename_all = "snake_case")]
pub enum Contributor {
    Ai,
    Mixed,
    Human,
    Unknown,
}

impl Contributor {
    pub fn as_str(self) -> &'static str {
        match self {
            Contributor::Ai => "ai",
            Contributor::Mixed => "mixed",
            Contributor::Human => "human",
            Contributor::Unknown => "unknown",
        }
    }
}

/// A line of the file as it is now, with the edits whose written lines hash like it.
#[derive(Debug, Clone, Default)]
pub struct Line {
    pub trivial: bool,
    /// Edits that wrote this content.
    pub wrote: Vec<i64>,
    /// When git says the line last changed (author time, ms); `None` when not committed yet or
    /// not in git.
    pub changed_ms: Option<i64>,
    /// Which change git says last touched the line (the same value for lines of one commit, or
    /// all uncommitted); `None` outside git.
    pub change: Option<u64>,
}

/// What is known of a recorded edit for choosing between several that wrote the same content.
#[derive(Debug, Clone, Copy)]
pub struct Candidate {
    pub at_ms: i64,
    /// It edited this very file (not another one the content later moved from).
    pub same_file: bool,
}

/// The edit that wrote a line's content, if any: the first pass of the rule, for lines that
/// say something on their own (trivial lines wait for [`beside`]).
///
/// Among several edits that wrote the same content, the one on this file wins over one on
/// another, then the latest made before the line's last change, then the latest.
pub fn written_by(l: &Line, edits: &HashMap<i64, Candidate>) -> Option<i64> {
    if l.trivial {
        return None;
    }
    l.wrote
        .iter()
        .filter_map(|id| edits.get(id).map(|c| (*id, *c)))
        .max_by_key(|(id, c)| {
            let in_time = l.changed_ms.is_none_or(|t| c.at_ms <= t);
            (c.same_file, in_time, c.at_ms, *id)
        })
        .map(|(id, _)| id)
}

/// The last pass, for trivial lines: one belongs to an edit only next to that edit's work —
/// the nearest non-trivial line above or below must be attributed (`ai` or `mixed`) to an edit
/// that wrote this line's content too, and git must say both last changed in the same change (a
/// blank a person added under an AI block is theirs; a `}` git keeps from an older commit is that
/// commit's, whatever edit wrote an identical one). `settled[i]` is what the other passes decided.
pub fn beside(lines: &[Line], settled: &[Option<i64>], i: usize) -> Option<i64> {
    let l = &lines[i];
    if !l.trivial || l.wrote.is_empty() {
        return None;
    }
    let with = |j: usize| (lines[j].change == l.change).then_some(settled[j]).flatten();
    let above = (0..i).rev().find(|&j| !lines[j].trivial).and_then(with);
    let below = (i + 1..lines.len()).find(|&j| !lines[j].trivial).and_then(with);
    [above, below].into_iter().flatten().find(|e| l.wrote.contains(e))
}

/// A line git says changed after tracing began, with no edit behind its content: the second
/// pass. `removed` are the lines its change replaced, each with the edit that wrote it (if any);
/// `restores` says its content is what an edit once replaced.
pub fn changed_line(text: &str, removed: &[(&str, Option<i64>)], restores: bool) -> (Contributor, Option<i64>) {
    if restores {
        return (Contributor::Unknown, None);
    }
    let line = crate::lines::normalise(text);
    let best = removed
        .iter()
        .filter(|(old, _)| !crate::lines::is_trivial(old))
        .filter_map(|(old, e)| {
            e.map(|e| (similar::TextDiff::from_chars(crate::lines::normalise(old), line).ratio(), e))
        })
        .filter(|(r, _)| *r >= 0.5)
        .max_by(|a, b| a.0.total_cmp(&b.0));
    match best {
        Some((_, e)) => (Contributor::Mixed, Some(e)),
        None => (Contributor::Human, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(trivial: bool, wrote: &[i64]) -> Line {
        Line { trivial, wrote: wrote.to_vec(), changed_ms: None, change: None }
    }

    #[test]
    fn the_edit_on_this_file_then_the_latest_wins() {
        let edits = HashMap::from([
            (1, Candidate { at_ms: 10, same_file: true }),
            (2, Candidate { at_ms: 20, same_file: false }),
            (3, Candidate { at_ms: 30, same_file: true }),
        ]);
        assert_eq!(written_by(&line(false, &[1, 2]), &edits), Some(1));
        assert_eq!(written_by(&line(false, &[1, 3]), &edits), Some(3));
        // Committed before edit 3 was made: edit 3 cannot have written it.
        let l = Line { changed_ms: Some(15), ..line(false, &[1, 3]) };
        assert_eq!(written_by(&l, &edits), Some(1));
    }

    #[test]
    fn a_brace_is_ai_only_beside_its_edit() {
        let lines = [line(false, &[1]), line(true, &[1, 2]), line(false, &[]), line(true, &[2]), line(false, &[])];
        // Line 0 is edit 1's (ai or mixed); line 2 and 4 are nobody's.
        let settled = [Some(1), None, None, None, None];
        let got: Vec<_> = (0..lines.len()).map(|i| beside(&lines, &settled, i)).collect();
        assert_eq!(got, vec![None, Some(1), None, None, None]);
        // Changed apart from its neighbour (a person's blank under an AI line): not the edit's.
        let mut apart = lines.clone();
        apart[1].change = Some(7);
        assert_eq!(beside(&apart, &settled, 1), None);
    }

    #[test]
    fn a_person_editing_ai_output_is_mixed_a_revert_is_not() {
        let removed = [("let total = a + b;", Some(4)), ("}", Some(4))];
        assert_eq!(changed_line("let total = a + b + c;", &removed, false), (Contributor::Mixed, Some(4)));
        assert_eq!(changed_line("println!(\"unrelated\");", &removed, false), (Contributor::Human, None));
        assert_eq!(changed_line("let total = a + b + c;", &removed, true), (Contributor::Unknown, None));
        assert_eq!(changed_line("x", &[], false), (Contributor::Human, None));
    }
}
