//! Who acts on the board, spelled once: the [`Principal`] every operation decides authority on
//! (the person at this machine, an agent, or Tether itself), the identities agents are known by,
//! and what the board's modules take from it — an [`Actor`] on tasks, a [`Sender`] of signals, a
//! [`Recipient`] of them. Agents are registered on first sight here, with a memorable name.
//!
//! Near the bottom of the board: depends on ids, the store and errors, and on no other board
//! module, so tasks, signals and agents all stand on it without leaning on each other.

use serde::Serialize;
use tether_store::sql::{Sql, SqlExt};
use tether_store::values;

use crate::error::{Error, Result};
use crate::ids::RunId;

/// The person's name in a signal's address and as a sender.
pub const HUMAN: &str = "human";
/// Tether's own name as a sender (notices, wakes).
pub const TETHER: &str = "tether";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ts_rs::TS)]
#[ts(export, export_to = "board.ts")]
#[serde(rename_all = "snake_case")]
pub enum AgentKind {
    /// A Cursor chat, known by its `conversation_id` through the hooks.
    Cursor,
    /// Another MCP client, by its session.
    Mcp,
    /// The person at this machine (`cli:<name>`).
    Cli,
    /// A chain of runs of the Cursor CLI that Tether started (`run R-3`).
    Run,
}

impl AgentKind {
    pub fn as_str(self) -> &'static str {
        match self {
            AgentKind::Cursor => "cursor",
            AgentKind::Mcp => "mcp",
            AgentKind::Cli => "cli",
            AgentKind::Run => "run",
        }
    }

    pub fn parse(s: &str) -> Self {
        match s {
            "cursor" => AgentKind::Cursor,
            "mcp" => AgentKind::Mcp,
            "run" => AgentKind::Run,
            _ => AgentKind::Cli,
        }
    }
}

/// Who is asking: enough to find or register the agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// Stable key: a Cursor conversation id, `mcp:<session>`, `cli:<user>` or `run:R-<root>`.
    pub id: String,
    pub kind: AgentKind,
    pub mcp_session: Option<String>,
    pub project: Option<String>,
}

impl Identity {
    /// The person, by the name they go by.
    pub fn cli(user: &str) -> Self {
        Self { id: format!("cli:{user}"), kind: AgentKind::Cli, mcp_session: None, project: None }
    }

    /// The agent a run acts as: one per chain (a run and its follow-ups), named after the
    /// chain's first run, `root`.
    pub fn run(root: RunId, workspace: Option<&str>) -> Self {
        Self {
            id: format!("run:{root}"),
            kind: AgentKind::Run,
            mcp_session: None,
            project: workspace.map(str::to_owned),
        }
    }

    pub fn is_person(&self) -> bool {
        self.kind == AgentKind::Cli
    }
}

/// Who is asking, decided once at the edge of each transport — the CLI and the GUI speak for the
/// person; an MCP session for the chat the hooks bound it to (or the client); a scoped bearer for
/// its run — and the one thing operations decide authority on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Principal {
    /// The person at this machine, by the name they go by on the board.
    Person(String),
    /// An agent. `remote`: it speaks from outside this machine (a cloud run's scoped bearer);
    /// what it causes here never runs with write or shell permissions unasked.
    Agent { who: Identity, lease_ms: Option<i64>, remote: bool },
    /// Tether itself (wakes, notices).
    Tether,
}

impl Principal {
    pub fn person(name: &str) -> Self {
        Principal::Person(name.to_owned())
    }

    /// An agent on this machine, whose claims hold for the default lease.
    pub fn agent(who: Identity) -> Self {
        Principal::Agent { who, lease_ms: Some(DEFAULT_LEASE_MS), remote: false }
    }

    /// A run's chain speaking for itself; `remote` when through a cloud run's scoped bearer.
    pub fn run(root: RunId, workspace: Option<&str>, remote: bool) -> Self {
        Principal::Agent { who: Identity::run(root, workspace), lease_ms: Some(DEFAULT_LEASE_MS), remote }
    }

    pub fn is_person(&self) -> bool {
        matches!(self, Principal::Person(_))
    }

    pub fn is_remote(&self) -> bool {
        matches!(self, Principal::Agent { remote: true, .. })
    }

    /// Who acts on tasks.
    pub fn actor(&self) -> Actor {
        match self {
            Principal::Person(name) => Actor::person(name),
            Principal::Agent { who, lease_ms, .. } => Actor { who: who.clone(), lease_ms: *lease_ms },
            Principal::Tether => Actor { who: Identity::cli(TETHER), lease_ms: None },
        }
    }

    /// Who sends signals.
    pub fn sender(&self) -> Sender {
        match self {
            Principal::Person(_) => Sender::Human,
            Principal::Agent { who, .. } => Sender::Agent(who.clone()),
            Principal::Tether => Sender::Tether,
        }
    }

    /// Whose inbox is read.
    pub fn recipient(&self) -> Recipient {
        match self {
            Principal::Person(_) | Principal::Tether => Recipient::Human,
            Principal::Agent { who, .. } => Recipient::Agent(who.id.clone()),
        }
    }

    /// The agent identity, when an agent asks.
    pub fn identity(&self) -> Option<&Identity> {
        match self {
            Principal::Agent { who, .. } => Some(who),
            _ => None,
        }
    }
}

/// A claim holds this long without activity from its holder (an agent's; a person's never end).
pub const DEFAULT_LEASE_MS: i64 = 30 * 60 * 1000;

/// Who acts on tasks: their identity (registered as an agent on first sight) and how long their
/// claims hold.
#[derive(Debug, Clone)]
pub struct Actor {
    pub who: Identity,
    /// `None`: claims never expire (a person).
    pub lease_ms: Option<i64>,
}

impl Actor {
    pub fn person(user: &str) -> Self {
        Self { who: Identity::cli(user), lease_ms: None }
    }
}

/// Who sends a signal: an agent (registered on first sight), the person, or Tether itself.
#[derive(Debug, Clone)]
pub enum Sender {
    Agent(Identity),
    Human,
    Tether,
}

/// Whose inbox: an agent's (by id), or the person's (`human`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Recipient {
    Agent(String),
    Human,
}

impl Recipient {
    pub(crate) fn key(&self) -> &str {
        match self {
            Recipient::Agent(id) => id,
            Recipient::Human => HUMAN,
        }
    }
}

/// The name an actor goes by on the board (registering it on first sight).
pub(crate) fn actor_label(store: &dyn tether_store::sql::Database, who: &Identity) -> Result<String> {
    store.durable(|txn| actor_name(txn, who).map(|(_, name)| name))
}

/// The agent's id and name, registering it on first sight.
pub(crate) fn actor_name(db: &dyn Sql, who: &Identity) -> Result<(String, String)> {
    let id = ensure_in(db, who)?;
    let name: String = db.query_row("SELECT name FROM agents WHERE id = ?1", values![id], |r| r.get(0))?;
    Ok((id, name))
}

/// The agent's row id and name, registering it on first sight; bumps its last activity.
pub(crate) fn ensure_in(db: &dyn Sql, who: &Identity) -> Result<String> {
    let now = crate::clock::now_ms();
    let known: Option<String> = db.query_opt("SELECT id FROM agents WHERE id = ?1", values![who.id], |r| r.get(0))?;
    match known {
        Some(id) => {
            db.execute(
                "UPDATE agents SET last_seen = ?2, mcp_session = coalesce(?3, mcp_session), project = coalesce(?4, project) WHERE id = ?1",
                values![id, now, who.mcp_session, who.project],
            )?;
            Ok(id)
        }
        None => {
            let name = match who.kind {
                AgentKind::Cli => who.id.trim_start_matches("cli:").to_owned(),
                AgentKind::Run => who.id.replacen("run:", "run ", 1),
                _ => generate_name(db)?,
            };
            let name = unique_name(db, &name)?;
            db.execute(
                "INSERT INTO agents(id, name, kind, project, mcp_session, created_at, last_seen) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)",
                values![who.id, name, who.kind.as_str(), who.project, who.mcp_session, now],
            )?;
            Ok(who.id.clone())
        }
    }
}

/// Names that mean someone else in a signal's address.
fn reserved(n: &str) -> bool {
    n.eq_ignore_ascii_case(HUMAN) || n.eq_ignore_ascii_case(TETHER) || n.starts_with("role:") || n == "peers"
}

pub(crate) fn normalise_name(n: &str) -> Result<String> {
    let n = n.trim();
    if n.is_empty() || n.len() > 40 || n.chars().any(|c| c.is_control()) {
        return Err(Error::invalid("agent name", "give 1–40 printable characters"));
    }
    if reserved(n) {
        return Err(Error::invalid("agent name", format!("{n:?} is reserved for signal addresses")));
    }
    Ok(n.to_owned())
}

fn unique_name(db: &dyn Sql, base: &str) -> Result<String> {
    let taken = |n: &str| -> Result<bool> {
        Ok(db.query_opt("SELECT 1 FROM agents WHERE name = ?1", values![n], |_| Ok(()))?.is_some())
    };
    if !reserved(base) && !taken(base)? {
        return Ok(base.to_owned());
    }
    for i in 2.. {
        let n = format!("{base}-{i}");
        if !taken(&n)? {
            return Ok(n);
        }
    }
    unreachable!("names are finite")
}

const ADJECTIVES: &[&str] = &[
    "amber", "brisk", "calm", "dapper", "eager", "fuzzy", "gentle", "hazel", "ivory", "jolly", "keen", "lucid",
    "mellow", "nimble", "olive", "plucky", "quiet", "rusty", "sunny", "tidy", "umber", "vivid", "witty", "zesty",
];
const ANIMALS: &[&str] = &[
    "otter", "badger", "heron", "lynx", "marten", "puffin", "quokka", "raven", "stoat", "tapir", "wombat", "yak",
    "bison", "crane", "dingo", "egret", "ferret", "gecko", "ibis", "koala", "lemur", "newt", "osprey", "panda",
];

fn generate_name(db: &dyn Sql) -> Result<String> {
    let mut b = [0u8; 2];
    getrandom::fill(&mut b).map_err(|e| Error::invalid("random", e.to_string()))?;
    let name = format!("{}-{}", ADJECTIVES[b[0] as usize % ADJECTIVES.len()], ANIMALS[b[1] as usize % ANIMALS.len()]);
    unique_name(db, &name)
}
