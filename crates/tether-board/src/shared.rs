//! Chats shared with a team: a redacted Markdown copy of a transcript a person chose to share,
//! with who shared it from which machine, found by teammates by words or recency. Redacting
//! and choosing what to share happen before this (the host reads the person's own history);
//! here is only what the team database keeps.
//!
//! Depends on the store and ids; never on the history.

use serde::Serialize;
use tether_store::sql::{Database, Row, Sql, SqlExt};
use tether_store::values;

use crate::clock::now_ms;
use crate::error::Result;
use crate::ids::SharedId;

/// A chat as shared: what a teammate reads.
#[derive(Debug, Clone, Serialize, PartialEq, schemars::JsonSchema, ts_rs::TS)]
#[ts(export, export_to = "board.ts")]
pub struct SharedChat {
    #[serde(flatten)]
    #[ts(flatten)]
    pub summary: SharedSummary,
    /// The transcript as Markdown, secrets replaced by `<SECRET_n>` placeholders.
    pub body: String,
}

/// A shared chat in a list.
#[derive(Debug, Clone, Serialize, PartialEq, schemars::JsonSchema, ts_rs::TS)]
#[ts(export, export_to = "board.ts")]
pub struct SharedSummary {
    /// `SH-3`.
    pub id: String,
    /// The chat's id on the machine it was shared from.
    pub source: String,
    pub title: String,
    pub project: Option<String>,
    /// Who shared it, and from which machine.
    pub shared_by: String,
    pub machine: Option<String>,
    /// When (Unix ms).
    #[ts(type = "number")]
    pub shared_at: i64,
    #[ts(type = "number")]
    pub messages: i64,
    /// How many secrets were replaced before it was shared.
    #[ts(type = "number")]
    pub redacted: i64,
}

/// What a person shares: the redacted copy and where it came from.
#[derive(Debug, Clone)]
pub struct NewShared {
    pub source: String,
    pub title: String,
    pub project: Option<String>,
    pub shared_by: String,
    pub messages: i64,
    pub redacted: i64,
    pub body: String,
}

/// (`machine` is '' on a machine's own board, so the same chat shared again is one row there too.)
const COLUMNS: &str = "num, source, title, project, shared_by, nullif(machine, ''), shared_at, messages, redacted";

fn summary(r: &Row) -> Result<SharedSummary> {
    Ok(SharedSummary {
        id: SharedId::new(r.get(0)?).to_string(),
        source: r.get(1)?,
        title: r.get(2)?,
        project: r.get(3)?,
        shared_by: r.get(4)?,
        machine: r.get(5)?,
        shared_at: r.get(6)?,
        messages: r.get(7)?,
        redacted: r.get(8)?,
    })
}

/// Whether `id` names a chat shared with the team (`SH-3`, `sh-3`) rather than one of this
/// machine's own chats (whose ids and nicknames never take that form).
pub fn is_shared_id(id: &str) -> bool {
    id.trim().get(..3).is_some_and(|p| p.eq_ignore_ascii_case("SH-"))
}

/// Keeps a shared copy; the same chat shared again from the same machine replaces its copy (and
/// keeps its id).
pub(crate) fn share(store: &dyn Database, new: &NewShared) -> Result<SharedChat> {
    let machine = store.machine();
    let num: i64 = store.durable(|db| {
        db.query_row(
            "INSERT INTO shared_chats(source, machine, shared_by, shared_at, title, project, messages, redacted, body)
             VALUES (?1, coalesce(CAST(?2 AS TEXT), ''), ?3, ?4, ?5, ?6, ?7, ?8, ?9)
             ON CONFLICT (machine, source) DO UPDATE SET shared_by = excluded.shared_by,
                 shared_at = excluded.shared_at, title = excluded.title, project = excluded.project,
                 messages = excluded.messages, redacted = excluded.redacted, body = excluded.body
             RETURNING num",
            values![
                new.source,
                machine,
                new.shared_by,
                now_ms(),
                new.title,
                new.project,
                new.messages,
                new.redacted,
                new.body
            ],
            |r| r.get(0),
        )
    })?;
    get(store, &SharedId::new(num).to_string())
}

/// One shared chat, whole.
pub(crate) fn get(store: &dyn Database, id: &str) -> Result<SharedChat> {
    let num = SharedId::parse(id)?.num();
    store
        .read(|db| {
            db.query_opt(&format!("SELECT {COLUMNS}, body FROM shared_chats WHERE num = ?1"), values![num], |r| {
                Ok(SharedChat { summary: summary(r)?, body: r.get(9)? })
            })
        })?
        .ok_or_else(|| <crate::ids::SharedKind as crate::ids::Kind>::not_found(id))
}

/// The most recently shared first; with `words`, only chats whose title or text holds every one
/// (case-insensitive).
pub(crate) fn list(store: &dyn Database, words: Option<&str>, limit: usize) -> Result<Vec<SharedSummary>> {
    let words: Vec<String> = words.unwrap_or_default().split_whitespace().map(like_pattern).collect();
    // One `LIKE` per word over title and body (the dialect both engines read); a team's shared
    // chats are few enough that no index is wanted.
    let mut sql = format!("SELECT {COLUMNS} FROM shared_chats WHERE 1 = 1");
    for i in 0..words.len() {
        let n = i + 2;
        sql.push_str(&format!(" AND (lower(title) LIKE ?{n} ESCAPE '\\' OR lower(body) LIKE ?{n} ESCAPE '\\')"));
    }
    sql.push_str(" ORDER BY shared_at DESC, num DESC LIMIT ?1");
    let mut params = vec![tether_store::sql::Value::Int(limit as i64)];
    params.extend(words.into_iter().map(tether_store::sql::Value::Text));
    store.read(|db| db.query_map(&sql, &params, summary))
}

/// `%word%`, lower-cased, with `LIKE`'s own characters escaped.
fn like_pattern(word: &str) -> String {
    let escaped: String = word
        .to_lowercase()
        .chars()
        .flat_map(|c| if matches!(c, '%' | '_' | '\\') { vec!['\\', c] } else { vec![c] })
        .collect();
    format!("%{escaped}%")
}

/// Takes a shared copy back; whether there was one.
pub(crate) fn unshare(store: &dyn Database, id: &str) -> Result<bool> {
    let num = SharedId::parse(id)?.num();
    let gone = store.durable(|db: &dyn Sql| db.execute("DELETE FROM shared_chats WHERE num = ?1", values![num]))?;
    Ok(gone > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn new(source: &str, body: &str) -> NewShared {
        NewShared {
            source: source.into(),
            title: format!("chat {source}"),
            project: Some("/work/app".into()),
            shared_by: "pat".into(),
            messages: 4,
            redacted: 1,
            body: body.into(),
        }
    }

    #[test]
    fn sharing_again_replaces_the_copy_and_words_find_it_whatever_their_case() {
        let store = tether_store::Store::open_in_memory().unwrap();
        let first = share(&store, &new("c1", "The Parser fails on 100% of inputs")).unwrap();
        share(&store, &new("c2", "nothing to see")).unwrap();
        let again = share(&store, &new("c1", "The parser now passes; 100% green")).unwrap();
        assert_eq!(again.summary.id, first.summary.id, "the same chat keeps its id");
        assert!(again.body.contains("green"));
        let hits: Vec<String> = list(&store, Some("PARSER 100%"), 10).unwrap().into_iter().map(|s| s.id).collect();
        assert_eq!(hits, vec![first.summary.id.clone()]);
        assert!(list(&store, Some("100_"), 10).unwrap().is_empty(), "LIKE's wildcards are literal");
        assert_eq!(list(&store, None, 10).unwrap().len(), 2);
        assert!(unshare(&store, &first.summary.id).unwrap());
        assert!(get(&store, &first.summary.id).is_err());
    }
}
