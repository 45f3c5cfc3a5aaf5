//! Live state the daemon keeps besides the chat index: persisted MCP sessions (so clients survive
//! a restart) and what Cursor's hooks report about each chat (workspace, working/idle/ended).
//!
//! Knows nothing about HTTP or MCP types: sessions are opaque JSON blobs here.

use serde::{Deserialize, Serialize};
use tether_store::sql::{Database, Sql, SqlExt};
use tether_store::values;

use crate::error::Result;
use crate::store::Store;

use crate::clock::now_ms;

pub fn save_mcp_session(store: &Store, id: &str, state: &str) -> Result<()> {
    let now = now_ms();
    Sql::execute(
        &*store.writer(),
        "INSERT INTO mcp_sessions(id, state, created_at, last_seen) VALUES (?1, ?2, ?3, ?3)
         ON CONFLICT(id) DO UPDATE SET state = excluded.state, last_seen = excluded.last_seen",
        values![id, state, now],
    )?;
    Ok(())
}

pub fn load_mcp_session(store: &Store, id: &str) -> Result<Option<String>> {
    store.read(|c| SqlExt::query_opt(c, "SELECT state FROM mcp_sessions WHERE id = ?1", values![id], |r| r.get(0)))
}

pub fn delete_mcp_session(store: &Store, id: &str) -> Result<()> {
    Sql::execute(&*store.writer(), "DELETE FROM mcp_sessions WHERE id = ?1", values![id])?;
    Ok(())
}

/// How many GET streams the running daemon holds open for a session (its surface support).
pub fn set_streams(store: &Store, id: &str, streams: usize) -> Result<()> {
    Sql::execute(&*store.writer(), "UPDATE mcp_sessions SET streams = ?2 WHERE id = ?1", values![id, streams as i64])?;
    Ok(())
}

/// A daemon starting holds no stream yet, whatever a killed one left behind.
pub fn reset_streams(store: &Store) -> Result<()> {
    Sql::execute(&*store.writer(), "UPDATE mcp_sessions SET streams = 0 WHERE streams != 0", &[])?;
    Ok(())
}

/// Forgets persisted sessions nobody has restored for `max_age_ms`.
pub fn prune_mcp_sessions(store: &Store, max_age_ms: i64) -> Result<usize> {
    Sql::execute(&*store.writer(), "DELETE FROM mcp_sessions WHERE last_seen < ?1", values![now_ms() - max_age_ms])
}

/// One Cursor hook payload, reduced to what we use. Unknown fields are ignored.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
pub struct HookEvent {
    #[serde(default)]
    pub hook_event_name: String,
    #[serde(default)]
    pub conversation_id: String,
    #[serde(default)]
    pub generation_id: Option<String>,
    #[serde(default)]
    pub workspace_roots: Vec<String>,
    #[serde(default)]
    pub transcript_path: Option<String>,
    /// `beforeMCPExecution`: the tool about to be called and its input.
    #[serde(default)]
    pub tool_name: Option<String>,
    #[serde(default)]
    pub tool_input: Option<serde_json::Value>,
    /// `stop`: completed | aborted | error.
    #[serde(default)]
    pub status: Option<String>,
    /// `stop`: how many follow-ups Cursor already submitted for this chat.
    #[serde(default)]
    pub loop_count: Option<u32>,
    #[serde(default)]
    pub model: Option<String>,
    /// `afterFileEdit` / `afterTabFileEdit`: what `tether hook` computed from the edit (ranges
    /// and line hashes, for code origin); the board keeps none of it.
    #[serde(default)]
    pub trace: Option<serde_json::Value>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ChatActivity {
    pub conversation_id: String,
    pub workspace_roots: Vec<String>,
    pub status: String,
    pub last_event: String,
    pub last_at: String,
}

/// What a hook event says about the chat's state.
fn status_for(event: &str) -> &'static str {
    match event {
        "stop" | "sessionEnd" => "idle",
        _ => "working",
    }
}

/// What a hook says about a chat, on the board (its liveness is the team's to see), renewing
/// the leases of what the chat holds.
pub fn record_hook(store: &dyn Database, ev: &HookEvent) -> Result<()> {
    if ev.conversation_id.is_empty() {
        return Ok(());
    }
    let roots = serde_json::to_string(&ev.workspace_roots)?;
    // The row's own columns are named by their table: PostgreSQL finds a bare name ambiguous
    // beside `excluded`.
    store.append(|db| {
        db.execute(
            "INSERT INTO chat_activity(conversation_id, workspace_roots, status, last_event, last_at, transcript_path)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)
         ON CONFLICT(conversation_id) DO UPDATE SET
             workspace_roots = CASE WHEN excluded.workspace_roots = '[]' THEN chat_activity.workspace_roots
                                    ELSE excluded.workspace_roots END,
             status = excluded.status, last_event = excluded.last_event, last_at = excluded.last_at,
             transcript_path = coalesce(excluded.transcript_path, chat_activity.transcript_path)",
            values![
                ev.conversation_id,
                roots,
                status_for(&ev.hook_event_name),
                ev.hook_event_name,
                now_ms(),
                ev.transcript_path
            ],
        )
    })?;
    // A chat that is still talking is still working on what it holds.
    crate::tasks::renew_leases(store, &ev.conversation_id, crate::tasks::DEFAULT_LEASE_MS)?;
    if ev.hook_event_name == "sessionEnd" {
        store.durable(|txn| super::agents::end_in(txn, &ev.conversation_id))?;
    }
    Ok(())
}

pub fn chat_activity(store: &dyn Database, conversation_id: &str) -> Result<Option<ChatActivity>> {
    store.read(|c| {
        let db: &dyn Sql = c;
        db.query_opt(
            "SELECT conversation_id, workspace_roots, status, last_event, last_at FROM chat_activity WHERE conversation_id = ?1",
            values![conversation_id],
            |r| {
                let roots: String = r.get(1)?;
                Ok(ChatActivity {
                    conversation_id: r.get(0)?,
                    workspace_roots: serde_json::from_str(&roots).unwrap_or_default(),
                    status: r.get(2)?,
                    last_event: r.get(3)?,
                    last_at: crate::clock::iso(r.get(4)?),
                })
            },
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_and_hooks_round_trip() {
        let s = Store::open_in_memory().unwrap();
        save_mcp_session(&s, "m1", "{\"a\":1}").unwrap();
        assert_eq!(load_mcp_session(&s, "m1").unwrap().as_deref(), Some("{\"a\":1}"));
        delete_mcp_session(&s, "m1").unwrap();
        assert_eq!(load_mcp_session(&s, "m1").unwrap(), None);

        let mut ev = HookEvent {
            hook_event_name: "beforeSubmitPrompt".into(),
            conversation_id: "c1".into(),
            workspace_roots: vec!["/p".into()],
            ..Default::default()
        };
        record_hook(&s, &ev).unwrap();
        ev.hook_event_name = "stop".into();
        ev.workspace_roots.clear();
        record_hook(&s, &ev).unwrap();
        let a = chat_activity(&s, "c1").unwrap().unwrap();
        assert_eq!((a.status.as_str(), a.workspace_roots.clone()), ("idle", vec!["/p".to_string()]));
    }
}
