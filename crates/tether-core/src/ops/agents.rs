//! Agents: who works on the board, with live status and how signals reach them; an agent's
//! session start; waking an idle chat Tether ran (the person's choice); and what Cursor's hooks
//! report about each chat.

use serde::{Deserialize, Serialize};

use crate::Tether;
use crate::board::agents::Agent;
use crate::board::live::HookEvent;
use crate::board::principal::Principal;
use crate::board::tasks::SessionStart;
use crate::error::{Error, Result};
use crate::events::Event;

/// Every agent, with live status and surface support. An MCP agent is reached at once while its
/// session holds a stream open on this machine's daemon (sessions are the machine's, the agents
/// the board's). With no daemon running nothing can reach an agent, so every surface reads
/// `degraded`.
pub fn list(t: &Tether) -> Result<Vec<Agent>> {
    let mut all = t.board().agents().list()?;
    let streaming = t.mcp_sessions().streaming()?;
    for a in &mut all {
        a.reached_over(&streaming);
    }
    if crate::daemon::running(&t.paths).is_none() {
        for a in all.iter_mut().filter(|a| a.surface.is_some()) {
            a.surface = Some("degraded");
        }
    }
    Ok(all)
}

/// The agent list as the GUI reads it: `{agents}`.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct AgentList {
    pub agents: Vec<Agent>,
}

/// What an agent sends to start its session.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
pub struct Start {
    /// Your role, e.g. `dev`, `reviewer`, `tester`: claim-next prefers tasks for it.
    #[serde(default)]
    pub role: Option<String>,
    /// A name to be known by (unique); omit for a generated one such as `brisk-otter`.
    #[serde(default)]
    pub name: Option<String>,
}

/// Registers the calling agent with a role and a name and tells it what it holds.
pub fn start_session(t: &Tether, who: &Principal, s: &Start) -> Result<SessionStart> {
    let Some(id) = who.identity() else {
        return Err(Error::invalid("session", "a session is an agent's; the person needs none"));
    };
    let mut r = t.board().agents().start_session(id, s.role.as_deref(), s.name.as_deref())?;
    r.agent.reached_over(&t.mcp_sessions().streaming()?);
    t.bus.emit(Event::Agents {});
    Ok(r)
}

/// Whether an idle chain of runs is woken by resume.
#[derive(Debug, Clone, Default, Deserialize, ts_rs::TS)]
#[serde(deny_unknown_fields)]
#[ts(export, export_to = "core.ts")]
pub struct SetWake {
    /// The chain's agent, e.g. `run R-3` (a route names it in its path).
    #[serde(default)]
    #[ts(optional, as = "Option<String>")]
    pub agent: String,
    pub wake_by_resume: bool,
}

/// Turns waking by resume on or off for a chain of runs (`run R-3`); the person's choice.
pub fn set_wake(t: &Tether, who: &Principal, req: &SetWake) -> Result<Agent> {
    if !who.is_person() {
        return Err(Error::NotAllowed("whether an idle chat is woken is the person's choice".into()));
    }
    let a = t.board().agents().set_wake_by_resume(&req.agent, req.wake_by_resume)?;
    t.bus.emit(Event::Agents {});
    Ok(a)
}

/// Records what a Cursor hook said about its chat, on the board (its status is for everyone,
/// teammates too; a talking chat renews what it holds). For `stop`, the answer for Cursor: a follow-up message that makes the chat
/// drain its signals, when it has some and was not asked yet in this drain cycle.
pub fn hook(t: &Tether, ev: &HookEvent) -> Result<Option<String>> {
    t.board().chats().record_hook(ev)?;
    t.bus.emit(Event::Agents {});
    if ev.hook_event_name != "stop" {
        return Ok(None);
    }
    t.board().signals().stop_hook(&ev.conversation_id, ev.loop_count.unwrap_or(0), ev.status.as_deref())
}
