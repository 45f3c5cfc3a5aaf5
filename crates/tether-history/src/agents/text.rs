//! Reading a file another agent may be writing at this moment, for the readers beside it
//! (`claude`, `codex`, `gemini`). Depends on nothing of theirs.

use std::path::Path;

use serde_json::Value;

/// The text of a file an agent may be writing: lossy UTF-8, never an error for a bad byte.
pub(crate) fn read_text(path: &Path) -> crate::error::Result<String> {
    let bytes = std::fs::read(path).map_err(|e| crate::error::Error::io(format!("reading {}", path.display()), e))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
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
