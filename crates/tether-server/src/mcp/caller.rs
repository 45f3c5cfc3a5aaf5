//! Who is calling an MCP tool, as a [`Principal`]: the Cursor chat when Tether's hooks said so
//! (a `beforeMCPExecution` for this tool binds the session to its chat; one Cursor window shares
//! a session across chats, so a fresh announcement always wins), else the agent `session_start`
//! registered for the session, else the MCP session itself. Decided here, once per call.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use tether_core::Tether;
use tether_core::model::agents::{ChatActivity, HookEvent};
use tether_core::model::principal::{AgentKind, Identity, Principal};

/// How long a `beforeMCPExecution` report waits for its call.
const PENDING_TTL: Duration = Duration::from_secs(30);

#[derive(Default)]
pub(crate) struct Callers {
    /// `beforeMCPExecution` events for our tools, waiting for the call they announce.
    pending: Mutex<VecDeque<(Instant, HookEvent)>>,
    /// The chat each MCP session last called from.
    bindings: Mutex<HashMap<String, String>>,
}

/// The caller of one tool call: who it is, and its chat's workspace (for `project: current`).
pub(crate) struct Caller {
    pub who: Principal,
    pub roots: Vec<String>,
}

impl Callers {
    /// A hook told us a call is coming (only `beforeMCPExecution` with a chat matters).
    pub(crate) fn announced(&self, ev: &HookEvent) {
        if ev.hook_event_name == "beforeMCPExecution" && !ev.conversation_id.is_empty() {
            let mut q = self.pending.lock().unwrap_or_else(|p| p.into_inner());
            q.retain(|(at, _)| at.elapsed() < PENDING_TTL);
            q.push_back((Instant::now(), ev.clone()));
        }
    }

    pub(crate) fn forget(&self, session: &str) {
        self.bindings.lock().unwrap_or_else(|p| p.into_inner()).remove(session);
    }

    /// Who calls `tool` on `session`; `query` (when the tool has one) helps match the hook's
    /// announcement of this very call. A lookup spends the announcement.
    pub(crate) fn caller(&self, t: &Tether, tool: &str, session: Option<&str>, query: Option<&str>) -> Caller {
        let chat = self.chat(t, tool, session, query);
        let roots = chat.as_ref().map(|c| c.workspace_roots.clone()).unwrap_or_default();
        let mcp_session = session.map(str::to_owned);
        let who = match chat {
            Some(chat) => Identity {
                id: chat.conversation_id,
                kind: AgentKind::Cursor,
                mcp_session: mcp_session.clone(),
                project: chat.workspace_roots.first().cloned(),
            },
            None => {
                let key = session.map_or_else(|| format!("stdio-{}", std::process::id()), str::to_owned);
                let known = session.and_then(|s| t.board().agents().for_mcp_session(s).ok().flatten());
                Identity {
                    id: known.unwrap_or_else(|| format!("mcp:{key}")),
                    kind: AgentKind::Mcp,
                    mcp_session: mcp_session.clone(),
                    project: None,
                }
            }
        };
        Caller { who: Principal::agent(who), roots }
    }

    fn chat(&self, t: &Tether, tool: &str, session: Option<&str>, query: Option<&str>) -> Option<ChatActivity> {
        let announced = {
            let mut q = self.pending.lock().unwrap_or_else(|p| p.into_inner());
            q.retain(|(at, _)| at.elapsed() < PENDING_TTL);
            let pos = q.iter().position(|(_, ev)| {
                let name_ok = ev
                    .tool_name
                    .as_deref()
                    .is_some_and(|n| n == tool || n.ends_with(&format!("_{tool}")) || n.ends_with(&format!("-{tool}")));
                let input_query = ev.tool_input.as_ref().and_then(|v| v.get("query")).and_then(|v| v.as_str());
                name_ok && (input_query.is_none() || input_query == query)
            });
            pos.and_then(|i| q.remove(i)).map(|(_, ev)| ev.conversation_id)
        };
        let conversation = match (announced, session) {
            (Some(c), Some(s)) => {
                self.bindings.lock().unwrap_or_else(|p| p.into_inner()).insert(s.to_owned(), c.clone());
                Some(c)
            }
            (Some(c), None) => Some(c),
            (None, Some(s)) => self.bindings.lock().unwrap_or_else(|p| p.into_inner()).get(s).cloned(),
            (None, None) => None,
        }?;
        match t.board().chats().activity(&conversation) {
            Ok(Some(a)) => Some(a),
            _ => Some(ChatActivity {
                conversation_id: conversation,
                workspace_roots: Vec::new(),
                status: "working".into(),
                last_event: String::new(),
                last_at: String::new(),
            }),
        }
    }
}

/// The `Mcp-Session-Id` of a request (none on stdio).
pub(crate) fn session_of(ctx: &rmcp::service::RequestContext<rmcp::RoleServer>) -> Option<String> {
    ctx.extensions
        .get::<http::request::Parts>()
        .and_then(|p| p.headers.get("mcp-session-id"))
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}
