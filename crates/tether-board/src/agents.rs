//! Agent sessions: who works on tasks. A Cursor chat (known by its `conversation_id` through the
//! hooks), another MCP client, or a person at the CLI, each registered once with a role and a
//! memorable generated name. Live status comes from the hooks (Cursor chats) or last activity.
//!
//! Knows nothing about MCP or HTTP; hosts pass identities in.

use std::collections::HashSet;

use serde::Serialize;
use tether_store::sql::{Sql, SqlExt};
use tether_store::values;

use crate::clock::iso;
use crate::error::{Error, Result};
pub use crate::principal::{AgentKind, Identity};
use crate::principal::{ensure_in, normalise_name};
use crate::signals::SignalType;
use tether_store::sql::Database;

/// An MCP client or CLI user not seen for this long counts as idle.
const IDLE_AFTER_MS: i64 = 5 * 60 * 1000;

#[derive(Debug, Clone, Serialize, PartialEq, ts_rs::TS)]
#[ts(export, export_to = "board.ts")]
pub struct Agent {
    pub id: String,
    pub name: String,
    pub kind: AgentKind,
    pub role: Option<String>,
    pub project: Option<String>,
    /// working | idle | ended
    pub status: String,
    pub last_seen: String,
    /// Ids of the tasks it holds (in progress).
    pub tasks: Vec<String>,
    // (Whether the MCP session holds a stream is the machine's to say: `Agent::reached_over`.)
    /// How signals reach it: `full` while its MCP session holds a GET stream open (the doorbell)
    /// or Cursor's hooks report for its chat (the stop hook), else `degraded` (only the notice on
    /// its next tool call). `None` for people.
    pub surface: Option<&'static str>,
    /// Signals to it whose obligation is still open.
    pub open_obligations: i64,
    /// A chain of runs that Tether wakes by a follow-up run when signals wait for it (opt-in).
    pub wake_by_resume: bool,
    /// The MCP session it speaks through, if any: whether that session holds a stream open is
    /// the machine's to say (its sessions are never on the board), not the board's.
    #[serde(skip)]
    #[ts(skip)]
    pub mcp_session: Option<String>,
}

impl Agent {
    /// `full` when its MCP session is one that `streaming` (the sessions a daemon holds a GET
    /// stream for: `live::sessions::streaming` over the machine's own store, whatever the
    /// board's engine) says is open, as the doorbell then reaches it at once.
    pub fn reached_over(&mut self, streaming: &HashSet<String>) {
        let open = self.mcp_session.as_ref().is_some_and(|s| streaming.contains(s));
        if open && self.kind != AgentKind::Cli && self.status != "ended" {
            self.surface = Some("full");
        }
    }
}

/// Registers the agent (or updates its role/name), returning it. A requested name that another
/// agent holds is a conflict; without one, a fresh memorable name is generated.
pub(crate) fn start(store: &dyn Database, who: &Identity, role: Option<&str>, name: Option<&str>) -> Result<Agent> {
    let name = name.map(normalise_name).transpose()?;
    let role = role.map(str::trim).filter(|r| !r.is_empty());
    store.durable(|txn| {
        let db: &dyn Sql = txn;
        let was_live: bool = db
            .query_opt("SELECT ended_at IS NULL FROM agents WHERE id = ?1", values![who.id], |r| r.get(0))?
            .unwrap_or(false);
        let id = ensure_in(db, who)?;
        if let Some(n) = &name {
            let holder: Option<String> =
                db.query_opt("SELECT id FROM agents WHERE name = ?1", values![n], |r| r.get(0))?;
            match holder {
                Some(h) if h != id => return Err(Error::AgentNameTaken(n.clone())),
                _ => {}
            }
            let old: String = db.query_row("SELECT name FROM agents WHERE id = ?1", values![id], |r| r.get(0))?;
            db.execute("UPDATE agents SET name = ?2 WHERE id = ?1", values![id, n])?;
            // Held tasks show the holder's name; keep them in step.
            db.execute(
                "UPDATE tasks SET assignee = ?2 WHERE assignee_agent = ?1 AND assignee = ?3",
                values![id, n, old],
            )?;
        }
        if let Some(r) = role {
            db.execute("UPDATE agents SET role = ?2 WHERE id = ?1", values![id, r])?;
        }
        db.execute("UPDATE agents SET ended_at = NULL WHERE id = ?1", values![id])?;
        if !was_live {
            let (name, role): (String, Option<String>) =
                db.query_row("SELECT name, role FROM agents WHERE id = ?1", values![id], |r| {
                    Ok((r.get(0)?, r.get(1)?))
                })?;
            let role = role.map(|r| format!(" ({r})")).unwrap_or_default();
            crate::signals::announce_in(db, SignalType::PeerJoined, &id, &format!("{name}{role} joined"))?;
        }
        Ok(())
    })?;
    get(store, &who.id)
}

/// Ends an agent (its chat or session closed), telling its live peers.
pub(crate) fn end_in(db: &dyn Sql, id: &str) -> Result<()> {
    let now = crate::clock::now_ms();
    let name: Option<String> =
        db.query_opt("SELECT name FROM agents WHERE id = ?1 AND ended_at IS NULL", values![id], |r| r.get(0))?;
    if let Some(name) = name {
        db.execute("UPDATE agents SET ended_at = ?2 WHERE id = ?1", values![id, now])?;
        crate::signals::announce_in(db, SignalType::PeerLeft, id, &format!("{name} left"))?;
    }
    Ok(())
}

/// The agent registered for an MCP session by `session_start`, if any.
pub(crate) fn for_mcp_session(store: &dyn Database, session: &str) -> Result<Option<String>> {
    store.read(|c| {
        let db: &dyn Sql = c;
        db.query_opt(
            "SELECT id FROM agents WHERE mcp_session = ?1 ORDER BY last_seen DESC LIMIT 1",
            values![session],
            |r| r.get(0),
        )
    })
}

pub(crate) fn get(store: &dyn Database, id: &str) -> Result<Agent> {
    list(store)?.into_iter().find(|a| a.id == id || a.name == id).ok_or_else(|| Error::AgentNotFound(id.to_owned()))
}

/// Every agent, most recently active first, with live status and held tasks.
pub(crate) fn list(store: &dyn Database) -> Result<Vec<Agent>> {
    let now = crate::clock::now_ms();
    store.read(|c| {
        let db: &dyn Sql = c;
        db.query_map(
            "SELECT a.id, a.name, a.kind, a.role, a.project, a.last_seen, a.ended_at, ca.status, ca.last_at,
                    (SELECT string_agg('T-' || CAST(t.num AS TEXT), ',' ORDER BY t.num) FROM tasks t
                        WHERE t.assignee_agent = a.id AND t.status = 'in_progress'),
                    a.kind = 'cursor' AND ca.conversation_id IS NOT NULL,
                    (SELECT count(*) FROM signal_deliveries d WHERE d.recipient = a.id AND d.obligation = 'open'),
                    a.wake_by_resume,
                    a.kind = 'run' AND EXISTS (SELECT 1 FROM runs r WHERE r.root = CAST(substr(a.id, 7) AS INTEGER)
                        AND r.status IN ('queued', 'running')),
                    a.mcp_session
             FROM agents a LEFT JOIN chat_activity ca ON ca.conversation_id = a.id
             ORDER BY CASE WHEN a.last_seen >= coalesce(ca.last_at, 0) THEN a.last_seen
                           ELSE coalesce(ca.last_at, 0) END DESC, a.name",
            &[],
            |r| {
                let kind: String = r.get(2)?;
                let last_seen: i64 = r.get(5)?;
                let ended: Option<i64> = r.get(6)?;
                let chat_status: Option<String> = r.get(7)?;
                let chat_at: Option<i64> = r.get(8)?;
                let tasks: Option<String> = r.get(9)?;
                let reachable: bool = r.get(10)?;
                let last = last_seen.max(chat_at.unwrap_or(0));
                let wake_by_resume: bool = r.get(12)?;
                let run_going: bool = r.get(13)?;
                let status = if ended.is_some() {
                    "ended".to_owned()
                } else if kind == "run" {
                    // A chain of runs works exactly while one of its runs is queued or running.
                    if run_going { "working" } else { "idle" }.to_owned()
                } else if let Some(s) = chat_status {
                    s
                } else if now - last < IDLE_AFTER_MS {
                    "working".to_owned()
                } else {
                    "idle".to_owned()
                };
                let kind = AgentKind::parse(&kind);
                let surface = match kind {
                    AgentKind::Cli => None,
                    _ if reachable && ended.is_none() => Some("full"),
                    // Not reachable while idle, but a follow-up run reads its signals to it.
                    AgentKind::Run if wake_by_resume && ended.is_none() => Some("resume"),
                    _ => Some("degraded"),
                };
                Ok(Agent {
                    id: r.get(0)?,
                    name: r.get(1)?,
                    kind,
                    role: r.get(3)?,
                    project: r.get(4)?,
                    status,
                    last_seen: iso(last),
                    tasks: tasks.map(|t| t.split(',').map(str::to_owned).collect()).unwrap_or_default(),
                    surface,
                    open_obligations: r.get(11)?,
                    wake_by_resume,
                    mcp_session: r.get(14)?,
                })
            },
        )
    })
}

/// Marks the agents of a closed MCP session as ended (their leases still run out on their own).
pub(crate) fn end_mcp_session(store: &dyn Database, session: &str) -> Result<()> {
    store.durable(|txn| {
        let db: &dyn Sql = txn;
        let ids: Vec<String> = db.query_map(
            "SELECT id FROM agents WHERE mcp_session = ?1 AND kind = 'mcp' AND ended_at IS NULL",
            values![session],
            |r| r.get(0),
        )?;
        for id in ids {
            end_in(db, &id)?;
        }
        Ok(())
    })
}
