//! Signals: short messages between agents and people, each carrying the obligation its type
//! implies, with the wake telemetry of every attempt to get it read.
//!
//! A signal goes to an agent (by name), to a role (every live agent with that role gets its own
//! delivery) or to `human`. Its type decides the obligation (Prism SPEC-088 §5.3): a question, an
//! assigned task or a review request stays open until someone it went to replies; a status update
//! or an acknowledgment closes when it is drained; system types (`peer_joined`, `peer_left`,
//! `master_preempted`) carry none and never ring a doorbell, but are still drained.
//!
//! Every write is one `BEGIN IMMEDIATE` transaction with a FULL-synchronous commit
//! ([`Store::durable`]): a signal acknowledged to its sender survives kill -9, and a drain marks
//! what it returns inside the same transaction, so two drains never return the same delivery.
//! How a doorbell rings is the host's business; this module records what the host says happened.
//! Knows nothing about MCP, HTTP or the CLI.

use std::fmt;
use std::str::FromStr;

use rusqlite::{OptionalExtension, Transaction, params};
use serde::{Deserialize, Serialize};

pub use crate::principal::{HUMAN, Recipient, Sender, TETHER};
use crate::principal::{AgentKind, Identity};
use crate::clock::{iso, now_ms};
use crate::error::{Error, Result};
use crate::store::Store;

/// Bodies are Markdown notes, not documents: a signal points at work, it does not carry it.
pub const MAX_BODY_BYTES: usize = 16 * 1024;
/// The stop hook asks a chat to drain only while Cursor's own follow-up counter is below this.
pub const HOOK_LOOP_LIMIT: u32 = 3;
/// An agent counts as live for role addresses and peer announcements when it has not ended and
/// was active this recently.
pub const LIVE_WITHIN_MS: i64 = 24 * 3600 * 1000;


#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SignalType {
    Question,
    TaskAssigned,
    ReviewRequested,
    StatusUpdate,
    Acknowledgment,
    PeerJoined,
    PeerLeft,
    MasterPreempted,
}

impl SignalType {
    pub const ALL: [SignalType; 8] = [
        SignalType::Question,
        SignalType::TaskAssigned,
        SignalType::ReviewRequested,
        SignalType::StatusUpdate,
        SignalType::Acknowledgment,
        SignalType::PeerJoined,
        SignalType::PeerLeft,
        SignalType::MasterPreempted,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            SignalType::Question => "question",
            SignalType::TaskAssigned => "task_assigned",
            SignalType::ReviewRequested => "review_requested",
            SignalType::StatusUpdate => "status_update",
            SignalType::Acknowledgment => "acknowledgment",
            SignalType::PeerJoined => "peer_joined",
            SignalType::PeerLeft => "peer_left",
            SignalType::MasterPreempted => "master_preempted",
        }
    }

    /// System types: no obligation, never ring a doorbell, still drained.
    pub fn is_system(self) -> bool {
        matches!(self, SignalType::PeerJoined | SignalType::PeerLeft | SignalType::MasterPreempted)
    }

    /// Action and a reply required: the obligation stays open until a reply.
    pub fn reply_required(self) -> bool {
        matches!(self, SignalType::Question | SignalType::TaskAssigned | SignalType::ReviewRequested)
    }
}

impl fmt::Display for SignalType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for SignalType {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        let s = s.trim();
        SignalType::ALL.into_iter().find(|t| t.as_str() == s).ok_or_else(|| {
            let all: Vec<&str> = SignalType::ALL.iter().map(|t| t.as_str()).collect();
            Error::invalid("signal type", format!("{s:?} is not one of {}", all.join(", ")))
        })
    }
}

pub fn parse_id(s: &str) -> Result<i64> {
    crate::ids::SignalId::parse(s).map(crate::ids::SignalId::num)
}

pub fn format_id(num: i64) -> String {
    crate::ids::SignalId::new(num).to_string()
}


/// A signal to send, as hosts receive it. Its docs are also the MCP tool's argument descriptions.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
pub struct NewSignal {
    /// An agent's name, a role (every live agent with it; `role:NAME` to be explicit), or `human`.
    /// May be left out for a reply: it then goes to the sender of the signal it answers.
    #[serde(default)]
    pub to: Option<String>,
    /// question, task_assigned, review_requested (need a reply), status_update, acknowledgment.
    /// Default: acknowledgment for a reply, else question.
    #[serde(default, rename = "type")]
    pub kind: Option<String>,
    /// Markdown, at most 16 KiB.
    pub body: String,
    /// The signal this answers, e.g. "S-4": closes its obligation and goes to its sender.
    #[serde(default)]
    pub reply_to: Option<String>,
    /// A task this is about, e.g. "T-2".
    #[serde(default)]
    pub task: Option<String>,
    /// true: the recipient must reply (the default for question, task_assigned, review_requested).
    #[serde(default)]
    pub action_required: Option<bool>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Delivery {
    pub recipient: String,
    pub drained_at: Option<String>,
    /// none (system types) | open | closed
    pub obligation: String,
    pub closed_at: Option<String>,
    pub wake_attempt_count: i64,
    pub last_wake_at: Option<String>,
    /// sse | hook | piggyback | resume
    pub last_wake_path: Option<String>,
    /// rang | coalesced | filtered | uncaptured | send_failed
    pub last_wake_result: Option<String>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Signal {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: SignalType,
    pub from: String,
    pub to: String,
    pub body: String,
    pub reply_to: Option<String>,
    pub task: Option<String>,
    pub trace_id: String,
    pub action_required: bool,
    pub reply_required: bool,
    pub created_at: String,
    pub answered_at: Option<String>,
    pub answered_by: Option<String>,
    /// Sent from outside this machine (a cloud run's scoped bearer): what it wakes runs only
    /// with the person's approval when it would write or run commands.
    pub remote: bool,
    pub deliveries: Vec<Delivery>,
}

/// One push outcome, as the log keeps it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct WakeRecord {
    pub signal: String,
    #[serde(rename = "type")]
    pub kind: SignalType,
    pub trace_id: String,
    pub recipient: String,
    pub at: String,
    pub path: String,
    pub result: String,
    pub mcp_session: Option<String>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct SignalDetail {
    #[serde(flatten)]
    pub signal: Signal,
    /// Every push outcome for it, oldest first.
    pub wakes: Vec<WakeRecord>,
    /// The whole conversation it belongs to (same trace), oldest first.
    pub thread: Vec<Signal>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WakePath {
    Sse,
    Hook,
    Piggyback,
    Resume,
}

impl WakePath {
    pub fn as_str(self) -> &'static str {
        match self {
            WakePath::Sse => "sse",
            WakePath::Hook => "hook",
            WakePath::Piggyback => "piggyback",
            WakePath::Resume => "resume",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WakeResult {
    Rang,
    Coalesced,
    Filtered,
    Uncaptured,
    SendFailed,
}

impl WakeResult {
    pub fn as_str(self) -> &'static str {
        match self {
            WakeResult::Rang => "rang",
            WakeResult::Coalesced => "coalesced",
            WakeResult::Filtered => "filtered",
            WakeResult::Uncaptured => "uncaptured",
            WakeResult::SendFailed => "send_failed",
        }
    }
}

/// What a host did to get one delivery read.
#[derive(Debug, Clone)]
pub struct Wake {
    pub signal: i64,
    pub recipient: String,
    pub path: WakePath,
    pub result: WakeResult,
    pub mcp_session: Option<String>,
}

/// A delivery no doorbell has tried yet, with where its recipient was last seen.
#[derive(Debug, Clone, PartialEq)]
pub struct Ring {
    pub signal: i64,
    pub kind: SignalType,
    pub recipient: String,
    pub mcp_session: Option<String>,
}

/// Undrained signals that want attention (system types left out), for notices.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct PendingSummary {
    pub count: usize,
    /// Each type once, in the order first seen.
    pub types: Vec<SignalType>,
}

impl PendingSummary {
    /// "2 signals (question, status_update)".
    pub fn describe(&self) -> String {
        let types: Vec<&str> = self.types.iter().map(|t| t.as_str()).collect();
        let n = self.count;
        format!("{n} signal{} ({})", if n == 1 { "" } else { "s" }, types.join(", "))
    }
}

#[derive(Debug, Clone, Default)]
pub struct SignalFilter {
    /// Sent to this recipient: an agent name, `human`, or `role:NAME` for role-addressed ones.
    pub to: Option<String>,
    /// Sent by this agent name, `human` or `tether`.
    pub from: Option<String>,
    /// Sent by or to this agent name.
    pub agent: Option<String>,
    pub trace: Option<String>,
    /// Only signals with an open obligation.
    pub open: bool,
    pub limit: usize,
}

fn bump_rev(txn: &Transaction<'_>) -> Result<()> {
    txn.execute("UPDATE counters SET value = value + 1 WHERE name = 'signals_rev'", [])?;
    Ok(())
}

/// Changes whenever any signal is sent, drained, answered or woken, in any process.
pub fn revision(store: &Store) -> Result<i64> {
    store.read(|c| Ok(c.query_row("SELECT value FROM counters WHERE name = 'signals_rev'", [], |r| r.get(0))?))
}

fn trace_id() -> Result<String> {
    let mut b = [0u8; 8];
    getrandom::fill(&mut b).map_err(|e| Error::invalid("random", e.to_string()))?;
    Ok(b.iter().map(|x| format!("{x:02x}")).collect())
}

/// Sends a signal and returns it with its deliveries. Nothing is written when any part of it is
/// wrong (unknown type or recipient, oversized body, a missing signal or task).
pub fn send(store: &Store, from: &Sender, new: &NewSignal) -> Result<Signal> {
    send_with(store, from, new, false)
}

/// [`send`] for a sender outside this machine (a cloud run's scoped bearer): the signal is
/// marked `remote`, so a wake it causes waits for the person before it may write or run commands.
pub fn send_remote(store: &Store, from: &Sender, new: &NewSignal) -> Result<Signal> {
    send_with(store, from, new, true)
}

fn send_with(store: &Store, from: &Sender, new: &NewSignal, remote: bool) -> Result<Signal> {
    let checked = check(new)?;
    let num = store.durable(|txn| {
        let mut sender = sender_in(txn, from)?;
        sender.remote = remote;
        send_in(txn, &sender, &checked)
    })?;
    get_signal(store, num)
}

/// A signal whose text and type are valid; recipients are resolved inside the transaction.
#[derive(Debug, Clone)]
pub(crate) struct Checked {
    kind: Option<SignalType>,
    to: Option<String>,
    body: String,
    reply_to: Option<i64>,
    task: Option<i64>,
    action_required: Option<bool>,
}

pub(crate) fn check(new: &NewSignal) -> Result<Checked> {
    let kind = new.kind.as_deref().map(str::trim).filter(|k| !k.is_empty()).map(SignalType::from_str).transpose()?;
    let body = new.body.trim();
    if body.is_empty() {
        return Err(Error::invalid("signal body", "it is empty; say what you need"));
    }
    if body.len() > MAX_BODY_BYTES {
        return Err(Error::invalid(
            "signal body",
            format!(
                "it is {} bytes, more than the {MAX_BODY_BYTES} allowed; point to the work (a task, a file) instead",
                body.len()
            ),
        ));
    }
    if let (Some(k), Some(false)) = (kind, new.action_required)
        && k.reply_required()
    {
        return Err(Error::invalid("action_required", format!("a {k} always needs a reply")));
    }
    Ok(Checked {
        kind,
        to: new.to.as_deref().map(str::trim).filter(|t| !t.is_empty()).map(str::to_owned),
        body: body.to_owned(),
        reply_to: new.reply_to.as_deref().filter(|r| !r.trim().is_empty()).map(parse_id).transpose()?,
        task: new.task.as_deref().filter(|t| !t.trim().is_empty()).map(super::tasks::parse_id).transpose()?,
        action_required: new.action_required,
    })
}

/// The sender's display name and agent id.
pub(crate) struct From {
    name: String,
    agent: Option<String>,
    remote: bool,
}

pub(crate) fn sender_in(txn: &Transaction<'_>, from: &Sender) -> Result<From> {
    Ok(match from {
        Sender::Agent(who) => {
            let (id, name) = crate::principal::actor_name(txn, who)?;
            From { name, agent: Some(id), remote: false }
        }
        Sender::Human => From { name: HUMAN.into(), agent: None, remote: false },
        Sender::Tether => From { name: TETHER.into(), agent: None, remote: false },
    })
}

pub(crate) fn send_in(txn: &Transaction<'_>, from: &From, c: &Checked) -> Result<i64> {
    let now = now_ms();
    let original = match c.reply_to {
        Some(n) => Some(
            txn.query_row("SELECT sender, trace_id FROM signals WHERE num = ?1", [n], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
            })
            .optional()?
            .ok_or_else(|| Error::SignalNotFound(format_id(n)))?,
        ),
        None => None,
    };
    if let Some(t) = c.task {
        let known = txn.query_row("SELECT 1 FROM tasks WHERE num = ?1", [t], |_| Ok(())).optional()?.is_some();
        if !known {
            return Err(Error::TaskNotFound(super::tasks::format_id(t)));
        }
    }
    let kind = c.kind.unwrap_or(if original.is_some() { SignalType::Acknowledgment } else { SignalType::Question });
    let to = match (&c.to, &original) {
        (Some(t), _) => t.clone(),
        (None, Some((sender, _))) if sender != TETHER => sender.clone(),
        _ => return Err(Error::invalid("signal recipient", "say who it is for: an agent's name, a role or `human`")),
    };
    let (address, recipients) = resolve(txn, &to, from.agent.as_deref(), now)?;
    let reply_required = kind.reply_required() || (!kind.is_system() && c.action_required == Some(true));
    let trace = match &original {
        Some((_, t)) => t.clone(),
        None => trace_id()?,
    };
    let num: i64 =
        txn.query_row("UPDATE counters SET value = value + 1 WHERE name = 'signal_num' RETURNING value", [], |r| {
            r.get(0)
        })?;
    txn.execute(
        "INSERT INTO signals(num, type, sender, sender_agent, address, body, reply_to, task, trace_id,
                             action_required, reply_required, created_at, remote)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
        params![
            num,
            kind.as_str(),
            from.name,
            from.agent,
            address,
            c.body,
            c.reply_to,
            c.task,
            trace,
            reply_required || c.action_required == Some(true),
            reply_required,
            now,
            from.remote
        ],
    )?;
    let obligation = if kind.is_system() { "none" } else { "open" };
    for (id, name) in &recipients {
        txn.execute(
            "INSERT INTO signal_deliveries(signal, recipient, recipient_name, obligation) VALUES (?1, ?2, ?3, ?4)",
            params![num, id, name, obligation],
        )?;
    }
    if let Some(orig) = c.reply_to {
        answer_in(txn, orig, num, from, now)?;
    }
    bump_rev(txn)?;
    Ok(num)
}

/// A reply from someone the original went to closes the original's obligation (for every
/// recipient: the question is answered).
fn answer_in(txn: &Transaction<'_>, orig: i64, reply: i64, from: &From, now: i64) -> Result<()> {
    let me = from.agent.as_deref().unwrap_or(from.name.as_str());
    let was_recipient = txn
        .query_row(
            "SELECT 1 FROM signal_deliveries WHERE signal = ?1 AND recipient = ?2",
            params![orig, me],
            |_| Ok(()),
        )
        .optional()?
        .is_some();
    if !was_recipient {
        return Ok(());
    }
    let open: bool =
        txn.query_row("SELECT reply_required AND answered_at IS NULL FROM signals WHERE num = ?1", [orig], |r| {
            r.get(0)
        })?;
    if open {
        txn.execute("UPDATE signals SET answered_at = ?2, answered_by = ?3 WHERE num = ?1", params![orig, now, reply])?;
        txn.execute(
            "UPDATE signal_deliveries SET obligation = 'closed', closed_at = ?2 WHERE signal = ?1 AND obligation = 'open'",
            params![orig, now],
        )?;
    }
    Ok(())
}

/// `human`, an agent's name, or a role (`role:` forces it): the address to record and each
/// recipient's (id, name).
fn resolve(
    txn: &Transaction<'_>,
    to: &str,
    sender_agent: Option<&str>,
    now: i64,
) -> Result<(String, Vec<(String, String)>)> {
    if to.eq_ignore_ascii_case(HUMAN) {
        return Ok((HUMAN.into(), vec![(HUMAN.into(), HUMAN.into())]));
    }
    let (role, explicit) = match to.strip_prefix("role:") {
        Some(r) => (r.trim(), true),
        None => (to, false),
    };
    if !explicit
        && let Some(id) =
            txn.query_row("SELECT id FROM agents WHERE name = ?1", [to], |r| r.get::<_, String>(0)).optional()?
    {
        return Ok((to.to_owned(), vec![(id, to.to_owned())]));
    }
    let mut stmt = txn.prepare_cached(
        "SELECT a.id, a.name FROM agents a LEFT JOIN chat_activity ca ON ca.conversation_id = a.id
         WHERE a.role = ?1 AND a.ended_at IS NULL AND max(a.last_seen, coalesce(ca.last_at, 0)) >= ?2
           AND a.id IS NOT ?3
         ORDER BY a.name",
    )?;
    let live: Vec<(String, String)> = stmt
        .query_map(params![role, now - LIVE_WITHIN_MS, sender_agent], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    if live.is_empty() {
        let names: Vec<String> = txn
            .prepare_cached("SELECT name FROM agents WHERE ended_at IS NULL ORDER BY last_seen DESC LIMIT 8")?
            .query_map([], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        return Err(Error::UnknownRecipient { to: to.to_owned(), known: names });
    }
    Ok((format!("role:{role}"), live))
}

/// Sends a system signal from Tether to every live agent but `about` (which joined or left).
pub(crate) fn announce_in(txn: &Transaction<'_>, kind: SignalType, about: &str, body: &str) -> Result<()> {
    let now = now_ms();
    let peers: Vec<(String, String)> = txn
        .prepare_cached(
            "SELECT a.id, a.name FROM agents a LEFT JOIN chat_activity ca ON ca.conversation_id = a.id
             WHERE a.ended_at IS NULL AND a.kind != 'cli' AND a.id != ?1
               AND max(a.last_seen, coalesce(ca.last_at, 0)) >= ?2",
        )?
        .query_map(params![about, now - LIVE_WITHIN_MS], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    if peers.is_empty() {
        return Ok(());
    }
    let num: i64 =
        txn.query_row("UPDATE counters SET value = value + 1 WHERE name = 'signal_num' RETURNING value", [], |r| {
            r.get(0)
        })?;
    txn.execute(
        "INSERT INTO signals(num, type, sender, address, body, trace_id, action_required, reply_required, created_at)
         VALUES (?1, ?2, ?3, 'peers', ?4, ?5, 0, 0, ?6)",
        params![num, kind.as_str(), TETHER, body, trace_id()?, now],
    )?;
    for (id, name) in peers {
        txn.execute(
            "INSERT INTO signal_deliveries(signal, recipient, recipient_name, obligation) VALUES (?1, ?2, ?3, 'none')",
            params![num, id, name],
        )?;
    }
    bump_rev(txn)
}

/// A task was given to an agent by someone else: tell it, with an obligation that its reply, or
/// the task reaching review or an end, closes.
pub(crate) fn task_assigned_in(
    txn: &Transaction<'_>,
    from: &From,
    agent_name: &str,
    task: i64,
    title: &str,
) -> Result<()> {
    let c = Checked {
        kind: Some(SignalType::TaskAssigned),
        to: Some(agent_name.to_owned()),
        body: format!(
            "{} assigned {} \"{title}\" to you. Read it with task_list (id), work on it, and reply to this signal \
             (or complete the task) when it is done.",
            from.name,
            super::tasks::format_id(task)
        ),
        reply_to: None,
        task: Some(task),
        action_required: None,
    };
    send_in(txn, from, &c).map(|_| ())
}

pub(crate) fn from_actor_in(txn: &Transaction<'_>, who: &Identity) -> Result<From> {
    if who.kind == AgentKind::Cli {
        return Ok(From { name: HUMAN.into(), agent: None, remote: false });
    }
    sender_in(txn, &Sender::Agent(who.clone()))
}

/// The task reached review or an end: its open `task_assigned` obligations are met.
pub(crate) fn task_settled_in(txn: &Transaction<'_>, task: i64) -> Result<()> {
    let now = now_ms();
    let n = txn.execute(
        "UPDATE signal_deliveries SET obligation = 'closed', closed_at = ?2
         WHERE obligation = 'open' AND signal IN (SELECT num FROM signals WHERE task = ?1 AND type = 'task_assigned')",
        params![task, now],
    )?;
    if n > 0 {
        txn.execute(
            "UPDATE signals SET answered_at = ?2 WHERE task = ?1 AND type = 'task_assigned' AND answered_at IS NULL",
            params![task, now],
        )?;
        bump_rev(txn)?;
    }
    Ok(())
}


/// Drains the caller's inbox: returns every undrained signal to it (oldest first) and marks them
/// drained in the same transaction, closing the obligations a drain closes.
pub fn drain(store: &Store, who: &Recipient) -> Result<Vec<Signal>> {
    let key = who.key().to_owned();
    let nums = store.durable(|txn| {
        let now = now_ms();
        let nums: Vec<i64> = txn
            .prepare_cached(
                "SELECT signal FROM signal_deliveries WHERE recipient = ?1 AND drained_at IS NULL ORDER BY signal",
            )?
            .query_map([&key], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        if nums.is_empty() {
            return Ok(nums);
        }
        drain_in(txn, &key, &nums, now)?;
        txn.execute("UPDATE agents SET last_seen = ?2 WHERE id = ?1", params![key, now])?;
        Ok(nums)
    })?;
    store.read(|c| nums.iter().map(|n| load(c, *n)).collect())
}

/// Marks these deliveries to `key` drained at `now`, closing the obligations a drain closes.
pub(crate) fn drain_in(txn: &Transaction<'_>, key: &str, nums: &[i64], now: i64) -> Result<()> {
    let mut drained = txn.prepare_cached(
        "UPDATE signal_deliveries SET drained_at = ?3 WHERE recipient = ?1 AND signal = ?2 AND drained_at IS NULL",
    )?;
    for n in nums {
        drained.execute(params![key, n, now])?;
    }
    txn.execute(
        "UPDATE signal_deliveries SET obligation = 'closed', closed_at = ?2
         WHERE recipient = ?1 AND drained_at = ?2 AND obligation = 'open'
           AND signal IN (SELECT num FROM signals WHERE NOT reply_required)",
        params![key, now],
    )?;
    txn.execute(
        "INSERT INTO signal_inboxes(recipient, drained_at) VALUES (?1, ?2)
         ON CONFLICT(recipient) DO UPDATE SET drained_at = excluded.drained_at",
        params![key, now],
    )?;
    bump_rev(txn)
}

/// Undrained signals to the caller, oldest first, without draining them.
pub fn pending(store: &Store, who: &Recipient) -> Result<Vec<Signal>> {
    store.read(|c| {
        let nums: Vec<i64> = c
            .prepare_cached(
                "SELECT signal FROM signal_deliveries WHERE recipient = ?1 AND drained_at IS NULL ORDER BY signal",
            )?
            .query_map([who.key()], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        nums.iter().map(|n| load(c, *n)).collect()
    })
}

/// How many undrained signals that want attention (not system types) wait for the caller.
pub fn pending_summary(store: &Store, who: &Recipient) -> Result<PendingSummary> {
    store.read(|c| summary_of(c, who.key()))
}

fn summary_of(c: &rusqlite::Connection, key: &str) -> Result<PendingSummary> {
    let mut stmt = c.prepare_cached(
        "SELECT s.type FROM signal_deliveries d JOIN signals s ON s.num = d.signal
         WHERE d.recipient = ?1 AND d.drained_at IS NULL
           AND s.type NOT IN ('peer_joined', 'peer_left', 'master_preempted')
         ORDER BY d.signal",
    )?;
    let mut out = PendingSummary::default();
    for t in stmt.query_map([key], |r| r.get::<_, String>(0))? {
        let t: SignalType = t?.parse()?;
        out.count += 1;
        if !out.types.contains(&t) {
            out.types.push(t);
        }
    }
    Ok(out)
}

/// The deliveries no doorbell has tried yet, oldest first, with each recipient's MCP session.
pub fn unrung(store: &Store) -> Result<Vec<Ring>> {
    store.read(|c| {
        let mut stmt = c.prepare_cached(
            "SELECT d.signal, s.type, d.recipient, a.mcp_session
             FROM signal_deliveries d JOIN signals s ON s.num = d.signal LEFT JOIN agents a ON a.id = d.recipient
             WHERE d.wake_attempt_count = 0 AND d.recipient != 'human'
             ORDER BY d.signal LIMIT 10000",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?, r.get::<_, String>(2)?, r.get::<_, Option<String>>(3)?))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (signal, kind, recipient, mcp_session) = row?;
            out.push(Ring { signal, kind: kind.parse()?, recipient, mcp_session });
        }
        Ok(out)
    })
}

/// Records push outcomes: each counts as a wake attempt (successful or not) on its delivery and
/// goes into the append-only log.
pub fn record_wakes(store: &Store, wakes: &[Wake]) -> Result<()> {
    if wakes.is_empty() {
        return Ok(());
    }
    store.durable(|txn| {
        let now = now_ms();
        for w in wakes {
            record_in(txn, w, now)?;
        }
        bump_rev(txn)
    })
}

pub(crate) fn record_in(txn: &Transaction<'_>, w: &Wake, now: i64) -> Result<()> {
    txn.execute(
        "INSERT INTO signal_wakes(signal, recipient, at, path, result, mcp_session) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![w.signal, w.recipient, now, w.path.as_str(), w.result.as_str(), w.mcp_session],
    )?;
    txn.execute(
        "UPDATE signal_deliveries SET wake_attempt_count = wake_attempt_count + 1, last_wake_at = ?3,
             last_wake_path = ?4, last_wake_result = ?5
         WHERE signal = ?1 AND recipient = ?2",
        params![w.signal, w.recipient, now, w.path.as_str(), w.result.as_str()],
    )?;
    Ok(())
}

/// The piggyback notice for a tool result: what waits for the caller. The first time each
/// delivery is announced this way is recorded as a wake by path `piggyback`.
pub fn piggyback(store: &Store, who: &Recipient, mcp_session: Option<&str>) -> Result<PendingSummary> {
    let summary = pending_summary(store, who)?;
    if summary.count == 0 {
        return Ok(summary);
    }
    let fresh: Vec<i64> = store.read(|c| {
        Ok(c.prepare_cached(
            "SELECT d.signal FROM signal_deliveries d JOIN signals s ON s.num = d.signal
             WHERE d.recipient = ?1 AND d.drained_at IS NULL AND d.last_wake_path IS NOT 'piggyback'
               AND s.type NOT IN ('peer_joined', 'peer_left', 'master_preempted')",
        )?
        .query_map([who.key()], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?)
    })?;
    let wakes: Vec<Wake> = fresh
        .into_iter()
        .map(|signal| Wake {
            signal,
            recipient: who.key().to_owned(),
            path: WakePath::Piggyback,
            result: WakeResult::Rang,
            mcp_session: mcp_session.map(str::to_owned),
        })
        .collect();
    record_wakes(store, &wakes)?;
    Ok(summary)
}

/// Cursor's `stop` hook for a chat: when it has undrained signals and was not asked yet in this
/// drain cycle, the follow-up message that makes it drain them (counts and types only, never a
/// body). `None`: nothing to say. Aborted or failed turns and Cursor's loop counter at our limit
/// are left alone.
pub fn stop_hook(
    store: &Store,
    conversation_id: &str,
    loop_count: u32,
    status: Option<&str>,
) -> Result<Option<String>> {
    if conversation_id.is_empty() || loop_count >= HOOK_LOOP_LIMIT || status.is_some_and(|s| s != "completed") {
        return Ok(None);
    }
    let key = conversation_id.to_owned();
    store.durable(|txn| {
        let known = txn.query_row("SELECT 1 FROM agents WHERE id = ?1", [&key], |_| Ok(())).optional()?.is_some();
        if !known {
            return Ok(None);
        }
        let summary = summary_of(txn, &key)?;
        if summary.count == 0 {
            return Ok(None);
        }
        let asked: Option<(Option<i64>, Option<i64>)> = txn
            .query_row("SELECT drained_at, hook_at FROM signal_inboxes WHERE recipient = ?1", [&key], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .optional()?;
        if let Some((drained, Some(hook))) = asked
            && drained.is_none_or(|d| hook > d)
        {
            return Ok(None);
        }
        let now = now_ms();
        txn.execute(
            "INSERT INTO signal_inboxes(recipient, hook_at) VALUES (?1, ?2)
             ON CONFLICT(recipient) DO UPDATE SET hook_at = excluded.hook_at",
            params![key, now],
        )?;
        let nums: Vec<i64> = txn
            .prepare_cached(
                "SELECT d.signal FROM signal_deliveries d JOIN signals s ON s.num = d.signal
                 WHERE d.recipient = ?1 AND d.drained_at IS NULL
                   AND s.type NOT IN ('peer_joined', 'peer_left', 'master_preempted')",
            )?
            .query_map([&key], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        for signal in nums {
            let w = Wake {
                signal,
                recipient: key.clone(),
                path: WakePath::Hook,
                result: WakeResult::Rang,
                mcp_session: None,
            };
            record_in(txn, &w, now)?;
        }
        bump_rev(txn)?;
        Ok(Some(format!(
            "Tether: {} waiting for you. Call the tether MCP tool `signals_pending` to read them, then act on \
             them (reply with `signal_send` and `reply_to` where one is asked for).",
            summary.describe()
        )))
    })
}

pub fn get(store: &Store, id: &str) -> Result<SignalDetail> {
    let num = parse_id(id)?;
    store.read(|c| {
        let signal = load(c, num)?;
        let mut stmt = c.prepare_cached(
            "SELECT w.recipient, w.at, w.path, w.result, w.mcp_session, s.type, s.trace_id,
                    coalesce(d.recipient_name, w.recipient)
             FROM signal_wakes w JOIN signals s ON s.num = w.signal
             LEFT JOIN signal_deliveries d ON d.signal = w.signal AND d.recipient = w.recipient
             WHERE w.signal = ?1 ORDER BY w.id",
        )?;
        let wakes = stmt
            .query_map([num], |r| {
                Ok(WakeRecord {
                    signal: format_id(num),
                    kind: r.get::<_, String>(5)?.parse().unwrap_or(SignalType::StatusUpdate),
                    trace_id: r.get(6)?,
                    recipient: r.get(7)?,
                    at: iso(r.get(1)?),
                    path: r.get(2)?,
                    result: r.get(3)?,
                    mcp_session: r.get(4)?,
                })
            })?
            .collect::<rusqlite::Result<_>>()?;
        let thread_nums: Vec<i64> = c
            .prepare_cached("SELECT num FROM signals WHERE trace_id = ?1 ORDER BY num LIMIT 200")?
            .query_map([&signal.trace_id], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        let thread = thread_nums.iter().map(|n| load(c, *n)).collect::<Result<_>>()?;
        Ok(SignalDetail { signal, wakes, thread })
    })
}

fn get_signal(store: &Store, num: i64) -> Result<Signal> {
    store.read(|c| load(c, num))
}

/// Signals newest first, filtered.
pub fn list(store: &Store, f: &SignalFilter) -> Result<Vec<Signal>> {
    let limit = if f.limit == 0 { 200 } else { f.limit.min(10_000) } as i64;
    store.read(|c| {
        let to_key = match f.to.as_deref().map(str::trim).filter(|t| !t.is_empty()) {
            None => None,
            Some(t) if t.eq_ignore_ascii_case(HUMAN) => Some(HUMAN.to_owned()),
            Some(t) => Some(t.to_owned()),
        };
        let mut stmt = c.prepare_cached(
            "SELECT s.num FROM signals s
             WHERE (?1 IS NULL OR s.address = ?1 OR EXISTS (SELECT 1 FROM signal_deliveries d
                       WHERE d.signal = s.num AND d.recipient_name = ?1))
               AND (?2 IS NULL OR s.sender = ?2)
               AND (?3 IS NULL OR s.sender = ?3 OR EXISTS (SELECT 1 FROM signal_deliveries d
                       WHERE d.signal = s.num AND d.recipient_name = ?3))
               AND (?4 IS NULL OR s.trace_id = ?4)
               AND (NOT ?5 OR EXISTS (SELECT 1 FROM signal_deliveries d WHERE d.signal = s.num AND d.obligation = 'open'))
             ORDER BY s.num DESC LIMIT ?6",
        )?;
        let nums: Vec<i64> = stmt
            .query_map(
                params![
                    to_key,
                    f.from.as_deref().map(str::trim).filter(|t| !t.is_empty()),
                    f.agent.as_deref().map(str::trim).filter(|t| !t.is_empty()),
                    f.trace.as_deref().map(str::trim).filter(|t| !t.is_empty()),
                    f.open,
                    limit
                ],
                |r| r.get(0),
            )?
            .collect::<rusqlite::Result<_>>()?;
        nums.iter().map(|n| load(c, *n)).collect()
    })
}

/// Open obligations per recipient (name), for the agents view.
pub fn open_obligations(store: &Store) -> Result<Vec<(String, i64)>> {
    store.read(|c| {
        Ok(c.prepare_cached(
            "SELECT recipient_name, count(*) FROM signal_deliveries WHERE obligation = 'open' GROUP BY recipient_name",
        )?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?)
    })
}

/// Open obligations older than `min_age_ms`, oldest first: (signal, recipient name, age ms).
pub fn overdue(store: &Store, kind: SignalType, min_age_ms: i64) -> Result<Vec<(Signal, String, i64)>> {
    let now = now_ms();
    store.read(|c| {
        let rows: Vec<(i64, String, i64)> = c
            .prepare_cached(
                "SELECT d.signal, d.recipient_name, s.created_at FROM signal_deliveries d JOIN signals s ON s.num = d.signal
                 WHERE d.obligation = 'open' AND s.type = ?1 AND s.created_at <= ?2 ORDER BY d.signal LIMIT 100",
            )?
            .query_map(params![kind.as_str(), now - min_age_ms], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
            .collect::<rusqlite::Result<_>>()?;
        rows.into_iter().map(|(n, who, at)| Ok((load(c, n)?, who, now - at))).collect()
    })
}

pub(crate) fn load(c: &rusqlite::Connection, num: i64) -> Result<Signal> {
    let mut stmt = c.prepare_cached(
        "SELECT type, sender, address, body, reply_to, task, trace_id, action_required, reply_required,
                created_at, answered_at, answered_by, remote
         FROM signals WHERE num = ?1",
    )?;
    let mut s = stmt
        .query_row([num], |r| {
            Ok(Signal {
                id: format_id(num),
                kind: r.get::<_, String>(0)?.parse().unwrap_or(SignalType::StatusUpdate),
                from: r.get(1)?,
                to: r.get(2)?,
                body: r.get(3)?,
                reply_to: r.get::<_, Option<i64>>(4)?.map(format_id),
                task: r.get::<_, Option<i64>>(5)?.map(super::tasks::format_id),
                trace_id: r.get(6)?,
                action_required: r.get(7)?,
                reply_required: r.get(8)?,
                created_at: iso(r.get(9)?),
                answered_at: r.get::<_, Option<i64>>(10)?.map(iso),
                answered_by: r.get::<_, Option<i64>>(11)?.map(format_id),
                remote: r.get(12)?,
                deliveries: Vec::new(),
            })
        })
        .optional()?
        .ok_or_else(|| Error::SignalNotFound(format_id(num)))?;
    let mut stmt = c.prepare_cached(
        "SELECT recipient_name, drained_at, obligation, closed_at, wake_attempt_count, last_wake_at,
                last_wake_path, last_wake_result
         FROM signal_deliveries WHERE signal = ?1 ORDER BY recipient_name",
    )?;
    s.deliveries = stmt
        .query_map([num], |r| {
            Ok(Delivery {
                recipient: r.get(0)?,
                drained_at: r.get::<_, Option<i64>>(1)?.map(iso),
                obligation: r.get(2)?,
                closed_at: r.get::<_, Option<i64>>(3)?.map(iso),
                wake_attempt_count: r.get(4)?,
                last_wake_at: r.get::<_, Option<i64>>(5)?.map(iso),
                last_wake_path: r.get(6)?,
                last_wake_result: r.get(7)?,
            })
        })?
        .collect::<rusqlite::Result<_>>()?;
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agents;
    use crate::agents::{AgentKind, Identity};

    fn agent(id: &str) -> Identity {
        Identity { id: id.into(), kind: AgentKind::Mcp, mcp_session: Some(format!("sess-{id}")), project: None }
    }

    fn ask(to: &str, body: &str) -> NewSignal {
        NewSignal { to: Some(to.into()), kind: Some("question".into()), body: body.into(), ..Default::default() }
    }

    #[test]
    fn question_reply_and_drain_close_the_right_obligations() {
        let s = Store::open_in_memory().unwrap();
        let a = agents::start(&s, &agent("a"), Some("dev"), Some("ana")).unwrap();
        agents::start(&s, &agent("b"), Some("reviewer"), Some("bo")).unwrap();
        let q = send(&s, &Sender::Agent(agent("a")), &ask("bo", "is the parser done?")).unwrap();
        assert_eq!((q.from.as_str(), q.to.as_str(), q.reply_required), ("ana", "bo", true));
        assert_eq!(q.deliveries[0].obligation, "open");

        let got = drain(&s, &Recipient::Agent("b".into())).unwrap();
        assert_eq!(got.iter().map(|g| g.id.as_str()).collect::<Vec<_>>(), vec![q.id.as_str()]);
        assert!(drain(&s, &Recipient::Agent("b".into())).unwrap().is_empty(), "drained once");
        // A question stays open after the drain, until its answer.
        assert_eq!(get(&s, &q.id).unwrap().signal.deliveries[0].obligation, "open");

        let reply = NewSignal { reply_to: Some(q.id.clone()), body: "yes".into(), ..Default::default() };
        let r = send(&s, &Sender::Agent(agent("b")), &reply).unwrap();
        assert_eq!(
            (r.to.as_str(), r.kind, r.trace_id.as_str()),
            ("ana", SignalType::Acknowledgment, q.trace_id.as_str())
        );
        let q2 = get(&s, &q.id).unwrap().signal;
        assert_eq!((q2.deliveries[0].obligation.as_str(), q2.answered_by.as_deref()), ("closed", Some(r.id.as_str())));

        // An acknowledgment closes when drained.
        assert_eq!(r.deliveries[0].obligation, "open");
        drain(&s, &Recipient::Agent(a.id)).unwrap();
        assert_eq!(get(&s, &r.id).unwrap().signal.deliveries[0].obligation, "closed");
    }

    #[test]
    fn bad_input_is_refused_and_writes_nothing() {
        let s = Store::open_in_memory().unwrap();
        agents::start(&s, &agent("a"), None, Some("ana")).unwrap();
        let me = Sender::Agent(agent("a"));
        let code = |n: NewSignal| send(&s, &me, &n).unwrap_err().code();
        use crate::error::ErrorCode as C;
        assert_eq!(code(ask("nobody", "hi")), C::NotFound);
        assert_eq!(code(NewSignal { kind: Some("gossip".into()), ..ask("ana", "hi") }), C::InvalidInput);
        assert_eq!(code(ask("ana", &"x".repeat(MAX_BODY_BYTES + 1))), C::InvalidInput);
        assert_eq!(code(ask("ana", "  ")), C::InvalidInput);
        assert_eq!(code(NewSignal { reply_to: Some("S-99".into()), ..ask("ana", "hi") }), C::NotFound);
        assert_eq!(code(NewSignal { task: Some("T-9".into()), ..ask("ana", "hi") }), C::NotFound);
        assert_eq!(code(NewSignal { action_required: Some(false), ..ask("ana", "hi") }), C::InvalidInput);
        assert!(list(&s, &SignalFilter::default()).unwrap().is_empty());
        assert_eq!(revision(&s).unwrap(), 0);
    }

    #[test]
    fn a_role_reaches_every_live_agent_with_it_but_the_sender() {
        let s = Store::open_in_memory().unwrap();
        for (id, name) in [("a", "ana"), ("b", "bo"), ("c", "cy")] {
            agents::start(&s, &agent(id), Some("reviewer"), Some(name)).unwrap();
        }
        let sig = send(&s, &Sender::Agent(agent("a")), &ask("reviewer", "please look at T-1")).unwrap();
        assert_eq!(sig.to, "role:reviewer");
        let names: Vec<&str> = sig.deliveries.iter().map(|d| d.recipient.as_str()).collect();
        assert_eq!(names, vec!["bo", "cy"]);
        // Every agent joining announced itself to those already there; none of that rings.
        assert!(unrung(&s).unwrap().iter().filter(|r| r.kind.is_system()).count() >= 3);
    }

    #[test]
    fn the_stop_hook_asks_once_per_drain_cycle() {
        let s = Store::open_in_memory().unwrap();
        let chat = Identity { id: "conv-1".into(), kind: AgentKind::Cursor, mcp_session: None, project: None };
        agents::start(&s, &chat, None, Some("chatty")).unwrap();
        assert_eq!(stop_hook(&s, "conv-1", 0, Some("completed")).unwrap(), None, "nothing pending");
        send(&s, &Sender::Human, &ask("chatty", "status?")).unwrap();
        let msg = stop_hook(&s, "conv-1", 0, Some("completed")).unwrap().expect("asks to drain");
        assert!(msg.contains("1 signal (question)") && !msg.contains("status?"), "{msg}");
        assert_eq!(stop_hook(&s, "conv-1", 0, Some("completed")).unwrap(), None, "once per cycle");
        drain(&s, &Recipient::Agent("conv-1".into())).unwrap();
        send(&s, &Sender::Human, &ask("chatty", "and now?")).unwrap();
        assert_eq!(stop_hook(&s, "conv-1", HOOK_LOOP_LIMIT, Some("completed")).unwrap(), None, "loop limit");
        assert_eq!(stop_hook(&s, "conv-1", 0, Some("aborted")).unwrap(), None, "aborted turn");
        assert!(stop_hook(&s, "conv-1", 1, None).unwrap().is_some(), "a new cycle asks again");
        let q = list(&s, &SignalFilter { to: Some("chatty".into()), ..Default::default() }).unwrap();
        assert_eq!(q[0].deliveries[0].last_wake_path.as_deref(), Some("hook"));
    }
}
