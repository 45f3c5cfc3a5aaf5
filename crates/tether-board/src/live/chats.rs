//! What Cursor's hooks report about each chat (workspace, working/idle/ended), on the board: a
//! chat's liveness is the team's to see (the Agents list reads it, and a talking chat renews the
//! leases of what it holds on the board), so it takes the board's engine, whichever that is.
//!
//! Knows nothing about HTTP or MCP types.

use serde::{Deserialize, Serialize};
use tether_store::sql::{Database, Sql, SqlExt};
use tether_store::values;

use crate::clock::now_ms;
use crate::error::Result;

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
pub(crate) fn record_hook(store: &dyn Database, ev: &HookEvent) -> Result<()> {
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
        store.durable(|txn| crate::agents::end_in(txn, &ev.conversation_id))?;
    }
    Ok(())
}

pub(crate) fn chat_activity(store: &dyn Database, conversation_id: &str) -> Result<Option<ChatActivity>> {
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
    fn hooks_round_trip() {
        let s = crate::store::Store::open_in_memory().unwrap();
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
