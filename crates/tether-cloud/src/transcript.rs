//! A cloud agent's transcript file, rebuilt from the stored events of its runs (the launch and
//! every follow-up) and indexed at once, so the chat is searchable while it runs and after.

use std::io::Write;
use std::path::PathBuf;

use tether_board::runs::{Run, RunFilter};
use tether_board::stream_json::RunEvent;
use tether_core::Tether;
use tether_history::cloud::{self, Line};
use tether_history::cursor::{Source, SourceKind};
use tether_history::index::Depth;

/// Writes `<data>/cloud/<agent>.jsonl` from the agent's runs and indexes it.
pub fn write_and_index(t: &Tether, agent_id: &str) -> tether_core::Result<PathBuf> {
    let mut runs: Vec<Run> =
        t.board().runs().list(&RunFilter { chat: Some(agent_id.to_owned()), limit: 10_000, ..Default::default() })?;
    runs.reverse();
    let mut lines = Vec::new();
    if let Some(first) = runs.first() {
        let spec = first.cloud.clone().unwrap_or_default();
        lines.push(Line::Agent {
            id: agent_id.to_owned(),
            repo: spec.repo,
            url: spec.agent_url,
            title: None,
            at: at_ms(&first.created_at),
        });
    }
    for r in &runs {
        let events = t.board().runs().get(&r.id, None)?.events;
        let mut text = Text::default();
        let mut said_anything = false;
        for e in &events {
            match &e.event {
                RunEvent::User { text: prompt } => {
                    text.flush(&mut lines);
                    lines.push(Line::User { text: prompt.clone(), run: r.id.clone(), at: e.at_ms });
                }
                RunEvent::Assistant { text: t, .. } => {
                    said_anything |= !t.trim().is_empty();
                    text.add(&mut lines, Part::Assistant, t, e.at_ms);
                }
                RunEvent::Thinking { text: Some(t), .. } => text.add(&mut lines, Part::Thinking, t, e.at_ms),
                RunEvent::ToolCall { tool, phase, path, command, outcome, .. } if phase != "started" => {
                    text.flush(&mut lines);
                    let summary = command.clone().or_else(|| path.clone()).unwrap_or_default();
                    let status = outcome.clone().unwrap_or_else(|| phase.clone());
                    lines.push(Line::Tool { name: tool.clone(), status, summary, at: e.at_ms });
                }
                RunEvent::Result { is_error, text: result, .. } => {
                    text.flush(&mut lines);
                    if *is_error {
                        lines.push(Line::Error { text: result.clone(), at: e.at_ms });
                    } else if !said_anything && !result.trim().is_empty() {
                        lines.push(Line::Assistant { text: result.clone(), model: r.model.clone(), at: e.at_ms });
                    }
                }
                _ => {}
            }
        }
        text.flush(&mut lines);
    }
    let dir = t.paths.cloud_dir();
    std::fs::create_dir_all(&dir).map_err(|e| io_error(format!("creating {}", dir.display()), e))?;
    let path = dir.join(format!("{agent_id}.jsonl"));
    let io = |e| io_error(format!("writing {}", path.display()), e);
    let mut tmp = tempfile::NamedTempFile::new_in(&dir).map_err(io)?;
    tmp.write_all(cloud::render(&lines).as_bytes()).map_err(io)?;
    tmp.persist(&path).map_err(|e| io(e.error))?;
    t.index_sources(&[Source { path: path.clone(), kind: SourceKind::Cloud, project_dir: None }], Depth::Quick)?;
    Ok(path)
}

fn io_error(context: String, source: std::io::Error) -> tether_core::Error {
    tether_core::Error::Io { context, source }
}

fn at_ms(iso: &str) -> i64 {
    tether_core::clock::parse_iso(iso).unwrap_or_else(tether_core::clock::now_ms)
}

#[derive(Clone, Copy, PartialEq)]
enum Part {
    Assistant,
    Thinking,
}

/// Deltas of one kind joined into one line until something else comes.
#[derive(Default)]
struct Text {
    open: Option<(Part, String, i64)>,
}

impl Text {
    fn add(&mut self, lines: &mut Vec<Line>, part: Part, t: &str, at: i64) {
        match &mut self.open {
            Some((p, buf, _)) if *p == part => buf.push_str(t),
            _ => {
                self.flush(lines);
                self.open = Some((part, t.to_owned(), at));
            }
        }
    }

    fn flush(&mut self, lines: &mut Vec<Line>) {
        if let Some((part, text, at)) = self.open.take()
            && !text.trim().is_empty()
        {
            lines.push(match part {
                Part::Assistant => Line::Assistant { text, model: None, at },
                Part::Thinking => Line::Thinking { text, at },
            });
        }
    }
}
