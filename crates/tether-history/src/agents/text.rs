//! Reading a file another agent may be writing at this moment, for the readers beside it
//! (`claude`, `codex`, `gemini`). Depends on nothing of theirs.

use std::path::Path;

use serde_json::Value;

/// The text of a file an agent may be writing: lossy UTF-8, never an error for a bad byte.
pub(crate) fn read_text(path: &Path) -> crate::error::Result<String> {
    let bytes = std::fs::read(path).map_err(|e| crate::error::Error::io(format!("reading {}", path.display()), e))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// Nests each subagent file under its parent chat `s`: its messages, its token totals added to
/// the parent's, its usage rows kept. `parse` reads one file's text under the subagent's id (the
/// file's stem); a file that cannot be read is counted on the parent as `subagent_unreadable`.
pub(crate) fn nest_subagents(
    s: &mut crate::model::ParsedSession,
    subagents: Vec<std::path::PathBuf>,
    parse: impl Fn(&Path, &str, &str) -> crate::model::ParsedSession,
) {
    for sub in subagents {
        match read_text(&sub) {
            Ok(text) => {
                let sub_id = sub.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
                let parsed = parse(&sub, &sub_id, &text);
                if let Some(t) = parsed.tokens {
                    let mine = s.tokens.get_or_insert_with(crate::model::ChatTokens::default);
                    mine.input += t.input;
                    mine.output += t.output;
                }
                s.usage.extend(parsed.usage.iter().cloned());
                crate::cursor::transcript::nest_subagent(s, parsed);
            }
            Err(_) => s.problems.add("subagent_unreadable"),
        }
    }
}

/// The JSON value of each line of a JSONL text, blank lines passed over. A line that does not
/// parse (a half-written last line is normal while an agent runs) is skipped and counted in
/// [`JsonLines::bad`], for the reader to report as `bad_json` once it is done.
pub(crate) fn json_lines(text: &str) -> JsonLines<'_> {
    JsonLines { lines: text.lines(), bad: 0 }
}

pub(crate) struct JsonLines<'a> {
    lines: std::str::Lines<'a>,
    /// Lines skipped so far because they are not JSON.
    pub bad: u64,
}

impl Iterator for JsonLines<'_> {
    type Item = Value;

    fn next(&mut self) -> Option<Value> {
        loop {
            let line = self.lines.next()?.trim();
            if line.is_empty() {
                continue;
            }
            match serde_json::from_str(line) {
                Ok(v) => return Some(v),
                Err(_) => self.bad += 1,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blank_lines_pass_bad_lines_count() {
        let mut lines = json_lines("{\"a\":1}\n\n  \nnot json\n{\"a\":2}\n{\"a\":");
        let got: Vec<Value> = lines.by_ref().collect();
        assert_eq!(got, [serde_json::json!({"a": 1}), serde_json::json!({"a": 2})]);
        assert_eq!(lines.bad, 2, "the bad line and the half-written last one");
    }
}
