//! Transcripts of the Cursor Cloud agents Tether ran: one JSONL file per cloud agent in the data
//! dir's `cloud/` folder, read back as chats of source `cloud` (searchable, taggable and
//! exportable like IDE and CLI chats, with the repository as their project).
//!
//! Cursor's v1 API keeps no conversation (only the final result survives the stream's
//! retention), so the cloud runner writes what the stream said into this file, rebuilding it
//! from the run events after each batch; this module owns the file's shape on both sides.
//! Pure data and parsing: depends on the history model only, never on the board.

use serde::{Deserialize, Serialize};

use super::model::{ParsedMessage, ParsedSession, ProjectVia, Role};

/// One line of a cloud transcript.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Line {
    /// The first line: which agent, on which repository.
    Agent {
        id: String,
        repo: String,
        #[serde(default)]
        url: Option<String>,
        #[serde(default)]
        title: Option<String>,
        at: i64,
    },
    /// A prompt Tether sent (the launch or a follow-up), with the run that sent it.
    User {
        text: String,
        run: String,
        at: i64,
    },
    /// Assistant text (the stream's deltas of one turn joined).
    Assistant {
        text: String,
        #[serde(default)]
        model: Option<String>,
        at: i64,
    },
    Thinking {
        text: String,
        at: i64,
    },
    /// A tool call as the stream named it, with its short arguments.
    Tool {
        name: String,
        status: String,
        summary: String,
        at: i64,
    },
    /// What went wrong, in Cursor's words.
    Error {
        text: String,
        at: i64,
    },
}

/// The transcript as file text (one JSON object per line).
pub fn render(lines: &[Line]) -> String {
    let mut out = String::new();
    for l in lines {
        if let Ok(j) = serde_json::to_string(l) {
            out.push_str(&j);
            out.push('\n');
        }
    }
    out
}

/// The repository as a project name: `github.com/org/repo` (no scheme, no `.git`).
pub fn repo_project(repo: &str) -> String {
    let t = repo.trim().trim_end_matches('/');
    let t = t.strip_prefix("https://").or_else(|| t.strip_prefix("http://")).unwrap_or(t);
    t.strip_suffix(".git").unwrap_or(t).to_owned()
}

/// Reads a transcript; lines that do not parse are counted (`bad_json`), never fatal.
pub fn parse(id: &str, text: &str) -> ParsedSession {
    let mut s = ParsedSession::new(id, "cloud", "cloud_transcript");
    let mut first_at = None;
    let mut last_at = None;
    let mut seen = |at: i64| {
        first_at = first_at.or(Some(at));
        last_at = Some(at);
    };
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let Ok(l) = serde_json::from_str::<Line>(line) else {
            s.problems.add("bad_json");
            continue;
        };
        match l {
            Line::Agent { repo, title, at, .. } => {
                s.set_project(Some(repo_project(&repo)), ProjectVia::Identifier);
                s.title = title.filter(|t| !t.trim().is_empty());
                seen(at);
            }
            Line::User { text, at, .. } => {
                seen(at);
                s.messages.push(ParsedMessage { created_at: Some(at), ..ParsedMessage::text(Role::User, text) });
            }
            Line::Assistant { text, model, at } => {
                seen(at);
                if model.is_some() {
                    s.model.clone_from(&model);
                }
                s.messages.push(ParsedMessage {
                    created_at: Some(at),
                    model,
                    ..ParsedMessage::text(Role::Assistant, text)
                });
            }
            Line::Thinking { text, at } => {
                seen(at);
                s.messages.push(ParsedMessage { created_at: Some(at), ..ParsedMessage::thinking(text) });
            }
            Line::Tool { name, status, summary, at } => {
                seen(at);
                s.messages
                    .push(ParsedMessage { created_at: Some(at), ..ParsedMessage::tool(name, Some(status), summary) });
            }
            Line::Error { text, at } => {
                seen(at);
                s.messages.push(ParsedMessage { created_at: Some(at), ..ParsedMessage::error(text) });
            }
        }
    }
    s.created_at = first_at;
    s.updated_at = last_at;
    s.mode = Some("cloud".into());
    s.fill_title();
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_transcript_round_trips_and_bad_lines_are_counted() {
        let lines = vec![
            Line::Agent {
                id: "bc-1".into(),
                repo: "https://github.com/acme/shop.git".into(),
                url: None,
                title: None,
                at: 1000,
            },
            Line::User { text: "add a README".into(), run: "R-1".into(), at: 1000 },
            Line::Thinking { text: "look first".into(), at: 1100 },
            Line::Tool { name: "read_file".into(), status: "completed".into(), summary: "README.md".into(), at: 1200 },
            Line::Assistant { text: "Added README.md".into(), model: Some("gpt-5".into()), at: 1300 },
        ];
        let text = format!("{}{{not json\n", render(&lines));
        let s = parse("bc-1", &text);
        assert_eq!(s.origin, "cloud");
        assert_eq!(s.project.as_deref(), Some("github.com/acme/shop"));
        assert_eq!(s.title.as_deref(), Some("add a README"));
        assert_eq!(s.messages.len(), 4);
        assert_eq!((s.created_at, s.updated_at), (Some(1000), Some(1300)));
        assert_eq!(s.model.as_deref(), Some("gpt-5"));
        assert!(s.is_conversation());
        assert_eq!(s.problems.to_json(), r#"{"bad_json":1}"#);
    }
}
