//! What Cursor's agent transcripts hold besides the dialogue, and the legacy plain-text form.
//!
//! Pure: text in, messages out. Used by the JSONL transcripts and CLI stores (`cli`) for the
//! wrapping Cursor puts around a prompt, and for `~/.cursor/projects/<p>/agent-transcripts/
//! <uuid>.txt` (written until about Feb 2026): `user:` / `assistant:` blocks, `[Thinking] …`,
//! `[Tool call] Name` with indented `key: value` arguments, `[Tool result] Name`.
//!
//! - A prompt is `<user_query>…</user_query>` among context blocks: `<timestamp>…</timestamp>`
//!   (the message's time, e.g. `Saturday, Jul 11, 2026, 1:01 PM (UTC+8)`), `<attached_files>` and
//!   `<external_links>` (context, not words), `<system_notification>` / `<system-reminder>` (text
//!   Cursor injected: shown as system text, never as the person's words nor as the chat's title).
//! - Cursor ends assistant text with a `[REDACTED]` marker where it withheld something (a
//!   thinking-only turn is only the marker): stripped and counted (`note:redacted`).

use serde_json::{Map, Value};

use super::composer::{finish, tool_summary};
use crate::model::{ParsedMessage, ParsedSession, ProjectVia, Role};

const REDACTED: &str = "[REDACTED]";

/// Blocks of a prompt that Cursor injected, shown as system text.
const INJECTED: &[&str] = &["system_notification", "system-reminder"];
/// Blocks of a prompt that are context the person attached, not their words.
const CONTEXT: &[&str] = &["attached_files", "external_links"];

/// `t` without the `[REDACTED]` markers at its end, and how many there were.
pub fn strip_redacted(t: &str) -> (&str, u64) {
    let mut rest = t.trim();
    let mut n = 0;
    while let Some(r) = rest.strip_suffix(REDACTED) {
        rest = r.trim_end();
        n += 1;
    }
    (rest, n)
}

/// Removes every `<tag>…</tag>` block from `text`, returning their trimmed insides in order. An
/// unclosed block runs to the end.
fn take_blocks(text: &mut String, tag: &str) -> Vec<String> {
    let (open, close) = (format!("<{tag}>"), format!("</{tag}>"));
    let mut out = Vec::new();
    while let Some(a) = text.find(&open) {
        let inner_start = a + open.len();
        let (inner_end, end) = match text[inner_start..].find(&close) {
            Some(b) => (inner_start + b, inner_start + b + close.len()),
            None => (text.len(), text.len()),
        };
        out.push(text[inner_start..inner_end].trim().to_owned());
        text.replace_range(a..end, "");
    }
    out
}

/// The time in a prompt's `<timestamp>`: `[Weekday, ]Mon D, YYYY, H:MM AM (UTC±H[:MM])`. Without
/// an offset the wall-clock time says no instant, so none is taken.
pub fn prompt_time(s: &str) -> Option<i64> {
    let s = s.trim();
    let open = s.rfind("(UTC")?;
    let offset = s[open + 4..].trim_end_matches(')').trim();
    let secs = if offset.is_empty() {
        0
    } else {
        let (sign, hm) = match offset.as_bytes()[0] {
            b'+' => (1, &offset[1..]),
            b'-' => (-1, &offset[1..]),
            _ => return None,
        };
        let (h, m) = hm.split_once(':').unwrap_or((hm, "0"));
        sign * (h.parse::<i32>().ok()? * 3600 + m.parse::<i32>().ok()? * 60)
    };
    let body = s[..open].trim().trim_end_matches(',');
    // The weekday is optional and says nothing more.
    let body = match body.split_once(", ") {
        Some((first, rest)) if first.chars().all(char::is_alphabetic) => rest,
        _ => body,
    };
    let naive = ["%b %d, %Y, %I:%M %p", "%B %d, %Y, %I:%M %p"]
        .iter()
        .find_map(|f| chrono::NaiveDateTime::parse_from_str(body, f).ok())?;
    let tz = chrono::FixedOffset::east_opt(secs)?;
    Some(naive.and_local_timezone(tz).single()?.timestamp_millis())
}

/// A prompt as written to a transcript or store: the person's words as a user message (at the
/// `<timestamp>` time, when there is one), injected blocks as system text before it.
pub fn push_user_text(s: &mut ParsedSession, t: &str) {
    let mut text = t.to_owned();
    let time = take_blocks(&mut text, "timestamp").iter().find_map(|t| prompt_time(t));
    let before = s.messages.len();
    for tag in INJECTED {
        for inner in take_blocks(&mut text, tag) {
            s.problems.add("note:injected_text");
            if !inner.is_empty() {
                s.messages.push(ParsedMessage::text(Role::System, inner));
            }
        }
    }
    for tag in CONTEXT {
        let n = take_blocks(&mut text, tag).len();
        s.problems.add_n("note:attached_context", n as u64);
    }
    let query = take_blocks(&mut text, "user_query");
    let words = if query.is_empty() { text.trim().to_owned() } else { query.join("\n\n") };
    if !words.is_empty() {
        s.messages.push(ParsedMessage::text(Role::User, words));
    }
    for m in &mut s.messages[before..] {
        m.created_at = m.created_at.or(time);
    }
}

/// Assistant text or thinking, its `[REDACTED]` markers stripped and counted.
pub fn push_assistant_text(s: &mut ParsedSession, t: &str, thinking: bool) {
    let (t, n) = strip_redacted(t);
    s.problems.add_n("note:redacted", n);
    if !t.is_empty() {
        s.messages.push(if thinking { ParsedMessage::thinking(t) } else { ParsedMessage::text(Role::Assistant, t) });
    }
}

/// A subagent's transcript, nested in its parent's: what the parent asked it is a `Subagent`
/// step (the parent agent wrote it, not the person), its answers and tool calls follow.
pub fn nest_subagent(parent: &mut ParsedSession, sub: ParsedSession) {
    let ask = sub.messages.iter().find(|m| m.role == Role::User && m.kind == crate::model::Kind::Text);
    let summary = ask.map(|m| crate::model::truncate_chars(m.text.trim(), 200)).unwrap_or_default();
    parent.messages.push(ParsedMessage::tool("Subagent", None, summary));
    parent.messages.extend(sub.messages.into_iter().filter(|m| m.role != Role::User));
    parent.problems.merge(&sub.problems);
    parent.problems.add("note:subagent_nested");
    parent.path_hints.extend(sub.path_hints);
}

/// What an assistant block's line starts.
enum Part {
    Text(String),
    Thinking(String),
    Call { name: String, args: Map<String, Value> },
    Result,
}

/// Parse a legacy plain-text transcript. Lines before the first `user:` / `assistant:` are
/// counted, not read.
pub fn parse_txt(id: &str, text: &str, project: Option<String>) -> ParsedSession {
    let mut s = ParsedSession::new(id, "cli", "transcript-txt");
    s.set_project(project, ProjectVia::Cwd);
    let mut role: Option<Role> = None;
    let mut block: Vec<&str> = Vec::new();
    let flush = |s: &mut ParsedSession, role: Option<Role>, block: &mut Vec<&str>| {
        match role {
            Some(Role::User) => push_user_text(s, &block.join("\n")),
            Some(_) => assistant_block(s, block),
            None if block.iter().any(|l| !l.trim().is_empty()) => s.problems.add("note:text_before_first_turn"),
            None => {}
        }
        block.clear();
    };
    for line in text.lines() {
        let next = match line.trim_end() {
            "user:" => Some(Role::User),
            "assistant:" | "A:" => Some(Role::Assistant),
            _ => None,
        };
        match next {
            Some(r) => {
                flush(&mut s, role, &mut block);
                role = Some(r);
            }
            None => block.push(line),
        }
    }
    flush(&mut s, role, &mut block);
    finish(&mut s);
    s
}

fn assistant_block(s: &mut ParsedSession, lines: &[&str]) {
    let mut part = Part::Text(String::new());
    let end = |s: &mut ParsedSession, part: Part| match part {
        Part::Text(t) => push_assistant_text(s, &t, false),
        Part::Thinking(t) => push_assistant_text(s, &t, true),
        Part::Call { name, args } => {
            let args = Value::Object(args);
            collect_paths(&args, &mut s.path_hints);
            s.messages.push(ParsedMessage::tool(name, None, tool_summary(&args)));
        }
        Part::Result => s.problems.add("note:tool_result"),
    };
    for line in lines {
        if let Some(rest) = line.strip_prefix("[Thinking]") {
            end(s, std::mem::replace(&mut part, Part::Thinking(rest.trim().to_owned())));
            continue;
        }
        if let Some(rest) = line.strip_prefix("[Tool call]") {
            let name = Some(rest.trim()).filter(|n| !n.is_empty()).unwrap_or("tool").to_owned();
            end(s, std::mem::replace(&mut part, Part::Call { name, args: Map::new() }));
            continue;
        }
        if line.starts_with("[Tool result]") {
            end(s, std::mem::replace(&mut part, Part::Result));
            continue;
        }
        match &mut part {
            Part::Text(t) => {
                t.push_str(line);
                t.push('\n');
            }
            // A thinking block ends at a blank line; what follows is the answer.
            Part::Thinking(_) if line.trim().is_empty() => {
                end(s, std::mem::replace(&mut part, Part::Text(String::new())));
            }
            Part::Thinking(t) => {
                t.push('\n');
                t.push_str(line);
            }
            // Arguments are indented `key: value` lines; the first line that is not ends them.
            Part::Call { args, .. } if line.starts_with([' ', '\t']) && !line.trim().is_empty() => {
                let (k, v) = line.trim().split_once(':').unwrap_or((line.trim(), ""));
                args.insert(k.trim().to_owned(), Value::String(v.trim().to_owned()));
            }
            Part::Call { .. } => {
                end(s, std::mem::replace(&mut part, Part::Text(format!("{line}\n"))));
            }
            // A result (its output, when written) runs to the next marker or turn: never read as
            // the assistant's words.
            Part::Result => {}
        }
    }
    end(s, part);
}

/// Absolute paths under the keys tools use for them (at most a few dozen per chat).
pub(crate) fn collect_paths(v: &Value, out: &mut Vec<String>) {
    const KEYS: &[&str] =
        &["path", "file_path", "filePath", "target_file", "targetDirectory", "cwd", "workingDirectory"];
    let Some(o) = v.as_object() else { return };
    for k in KEYS {
        if let Some(p) = o.get(*k).and_then(Value::as_str)
            && out.len() < 64
            && (p.starts_with('/') || p.as_bytes().get(1) == Some(&b':'))
        {
            out.push(super::uri::normalise_path(p));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Kind;

    #[test]
    fn prompt_times_carry_their_offset() {
        // 2026-07-11 13:01 at UTC+8 is 05:01 UTC.
        assert_eq!(prompt_time("Saturday, Jul 11, 2026, 1:01 PM (UTC+8)"), Some(1_783_746_060_000));
        assert_eq!(prompt_time("Jul 11, 2026, 5:01 AM (UTC)"), Some(1_783_746_060_000));
        assert_eq!(prompt_time("Friday, July 10, 2026, 11:31 PM (UTC-05:30)"), Some(1_783_746_060_000));
        assert_eq!(prompt_time("Saturday, Jul 11, 2026, 1:01 PM"), None, "no offset, no instant");
        assert_eq!(prompt_time("Mon"), None);
    }

    #[test]
    fn redacted_markers_are_stripped_and_counted() {
        assert_eq!(strip_redacted("done [REDACTED]"), ("done", 1));
        assert_eq!(strip_redacted("[REDACTED]\n[REDACTED]"), ("", 2));
        assert_eq!(strip_redacted("a [REDACTED] b"), ("a [REDACTED] b", 0), "only at the end");
    }

    #[test]
    fn injected_text_is_system_text_never_the_persons_words_or_title() {
        let mut s = ParsedSession::new("x", "cli", "transcript");
        push_user_text(
            &mut s,
            "<system_notification>\nBackground job finished\n</system_notification>\n<timestamp>Saturday, Jul 11, 2026, 1:01 PM (UTC+8)</timestamp>",
        );
        push_user_text(
            &mut s,
            "<attached_files>\n<file path=\"/a.rs\"/>\n</attached_files>\n<system-reminder>be brief</system-reminder>\n<user_query>\nreal words\n</user_query>",
        );
        finish(&mut s);
        let got: Vec<_> = s.messages.iter().map(|m| (m.role, m.text.as_str(), m.created_at)).collect();
        assert_eq!(
            got,
            [
                (Role::System, "Background job finished", Some(1_783_746_060_000)),
                (Role::System, "be brief", None),
                (Role::User, "real words", None)
            ]
        );
        assert_eq!(s.title.as_deref(), Some("real words"));
        assert_eq!(s.problems.0.get("note:attached_context"), Some(&1));
    }

    #[test]
    fn a_legacy_text_transcript_reads_as_a_chat() {
        let text = "user:\n<user_query>\nfind the heron bug\n</user_query>\n\n\
assistant:\n[Thinking] Looking for the heron\nin the code.\n\nI will search. [REDACTED]\n[Tool call] Grep\n  pattern: heron\n  path: /home/u/birds/src\n\n[Tool result] Grep\nsrc/heron.rs:1: heron\n\n\
assistant:\n[Thinking] [REDACTED]\n\n\
assistant:\nFixed the heron bug.\n[REDACTED]\n";
        let s = parse_txt("t", text, Some("/home/u/birds".into()));
        let got: Vec<_> = s.messages.iter().map(|m| (m.role, m.kind, m.text.as_str())).collect();
        assert_eq!(
            got,
            [
                (Role::User, Kind::Text, "find the heron bug"),
                (Role::Assistant, Kind::Thinking, "Looking for the heron\nin the code."),
                (Role::Assistant, Kind::Text, "I will search."),
                (Role::Assistant, Kind::Tool, "/home/u/birds/src pattern=heron"),
                (Role::Assistant, Kind::Text, "Fixed the heron bug."),
            ]
        );
        assert_eq!(s.messages[3].tool_name.as_deref(), Some("Grep"));
        assert_eq!(s.path_hints, ["/home/u/birds/src"]);
        assert_eq!(s.problems.0.get("note:redacted"), Some(&3));
        assert_eq!(s.problems.0.get("note:tool_result"), Some(&1));
        assert!(s.problems.0.keys().all(|k| k.starts_with("note:")), "{:?}", s.problems);
        assert_eq!(s.title.as_deref(), Some("find the heron bug"));
        assert_eq!(s.format, "transcript-txt");
    }
}
