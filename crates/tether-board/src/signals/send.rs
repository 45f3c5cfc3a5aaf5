//! Sending: checking a signal, resolving its recipients (an agent, a role's live agents, the
//! person), recording it with one delivery each, and the answers and notices other parts of the
//! board send inside their own transactions.

use std::str::FromStr;

use tether_store::sql::{Sql, SqlExt};
use tether_store::values;

use super::model::*;
use super::query::{bump_rev, get_signal};
use crate::clock::now_ms;
use crate::error::{Error, Result};
use crate::principal::{AgentKind, HUMAN, Identity, Sender, TETHER};
use tether_store::sql::Database;

fn trace_id() -> Result<String> {
    let mut b = [0u8; 8];
    getrandom::fill(&mut b).map_err(|e| Error::invalid("random", e.to_string()))?;
    Ok(b.iter().map(|x| format!("{x:02x}")).collect())
}

/// Sends a signal and returns it with its deliveries. Nothing is written when any part of it is
/// wrong (unknown type or recipient, oversized body, a missing signal or task).
pub(crate) fn send(store: &dyn Database, from: &Sender, new: &NewSignal) -> Result<Signal> {
    send_with(store, from, new, false)
}

/// [`send`] for a sender outside this machine (a cloud run's scoped bearer): the signal is
/// marked `remote`, so a wake it causes waits for the person before it may write or run commands.
pub(crate) fn send_remote(store: &dyn Database, from: &Sender, new: &NewSignal) -> Result<Signal> {
    send_with(store, from, new, true)
}

fn send_with(store: &dyn Database, from: &Sender, new: &NewSignal, remote: bool) -> Result<Signal> {
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
        task: new
            .task
            .as_deref()
            .filter(|t| !t.trim().is_empty())
            .map(|t| crate::ids::TaskId::parse(t).map(crate::ids::TaskId::num))
            .transpose()?,
        action_required: new.action_required,
    })
}

/// The sender's display name and agent id.
pub(crate) struct From {
    name: String,
    agent: Option<String>,
    remote: bool,
}

pub(crate) fn sender_in(db: &dyn Sql, from: &Sender) -> Result<From> {
    Ok(match from {
        Sender::Agent(who) => {
            let (id, name) = crate::principal::actor_name(db, who)?;
            From { name, agent: Some(id), remote: false }
        }
        Sender::Human => From { name: HUMAN.into(), agent: None, remote: false },
        Sender::Tether => From { name: TETHER.into(), agent: None, remote: false },
    })
}

pub(crate) fn send_in(db: &dyn Sql, from: &From, c: &Checked) -> Result<i64> {
    let now = now_ms();
    let original = match c.reply_to {
        Some(n) => Some(
            db.query_opt("SELECT sender, trace_id FROM signals WHERE num = ?1", values![n], |r| {
                Ok((r.get::<String>(0)?, r.get::<String>(1)?))
            })?
            .ok_or_else(|| Error::SignalNotFound(format_id(n)))?,
        ),
        None => None,
    };
    if let Some(t) = c.task {
        let known = db.query_opt("SELECT 1 FROM tasks WHERE num = ?1", values![t], |_| Ok(()))?.is_some();
        if !known {
            return Err(Error::TaskNotFound(crate::ids::TaskId::new(t).to_string()));
        }
    }
    let kind = c.kind.unwrap_or(if original.is_some() { SignalType::Acknowledgment } else { SignalType::Question });
    let to = match (&c.to, &original) {
        (Some(t), _) => t.clone(),
        (None, Some((sender, _))) if sender != TETHER => sender.clone(),
        _ => return Err(Error::invalid("signal recipient", "say who it is for: an agent's name, a role or `human`")),
    };
    let (address, recipients) = resolve(db, &to, from.agent.as_deref(), now)?;
    let reply_required = kind.reply_required() || (!kind.is_system() && c.action_required == Some(true));
    let trace = match &original {
        Some((_, t)) => t.clone(),
        None => trace_id()?,
    };
    let num: i64 =
        db.query_row("UPDATE counters SET value = value + 1 WHERE name = 'signal_num' RETURNING value", &[], |r| {
            r.get(0)
        })?;
    db.execute(
        "INSERT INTO signals(num, type, sender, sender_agent, address, body, reply_to, task, trace_id,
                             action_required, reply_required, created_at, remote)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
        values![
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
        db.execute(
            "INSERT INTO signal_deliveries(signal, recipient, recipient_name, obligation) VALUES (?1, ?2, ?3, ?4)",
            values![num, id, name, obligation],
        )?;
    }
    if let Some(orig) = c.reply_to {
        answer_in(db, orig, num, from, now)?;
    }
    bump_rev(db)?;
    Ok(num)
}

/// A reply from someone the original went to closes the original's obligation (for every
/// recipient: the question is answered).
fn answer_in(db: &dyn Sql, orig: i64, reply: i64, from: &From, now: i64) -> Result<()> {
    let me = from.agent.as_deref().unwrap_or(from.name.as_str());
    let was_recipient = db
        .query_opt("SELECT 1 FROM signal_deliveries WHERE signal = ?1 AND recipient = ?2", values![orig, me], |_| {
            Ok(())
        })?
        .is_some();
    if !was_recipient {
        return Ok(());
    }
    let open: bool = db.query_row(
        "SELECT reply_required <> 0 AND answered_at IS NULL FROM signals WHERE num = ?1",
        values![orig],
        |r| r.get(0),
    )?;
    if open {
        db.execute("UPDATE signals SET answered_at = ?2, answered_by = ?3 WHERE num = ?1", values![orig, now, reply])?;
        db.execute(
            "UPDATE signal_deliveries SET obligation = 'closed', closed_at = ?2 WHERE signal = ?1 AND obligation = 'open'",
            values![orig, now],
        )?;
    }
    Ok(())
}

/// `human`, an agent's name, or a role (`role:` forces it): the address to record and each
/// recipient's (id, name).
fn resolve(db: &dyn Sql, to: &str, sender_agent: Option<&str>, now: i64) -> Result<(String, Vec<(String, String)>)> {
    if to.eq_ignore_ascii_case(HUMAN) {
        return Ok((HUMAN.into(), vec![(HUMAN.into(), HUMAN.into())]));
    }
    let (role, explicit) = match to.strip_prefix("role:") {
        Some(r) => (r.trim(), true),
        None => (to, false),
    };
    if !explicit
        && let Some(id) = db.query_opt("SELECT id FROM agents WHERE name = ?1", values![to], |r| r.get::<String>(0))?
    {
        return Ok((to.to_owned(), vec![(id, to.to_owned())]));
    }
    let live: Vec<(String, String)> = db.query_map(
        "SELECT a.id, a.name FROM agents a LEFT JOIN chat_activity ca ON ca.conversation_id = a.id
         WHERE a.role = ?1 AND a.ended_at IS NULL
           AND CASE WHEN a.last_seen >= coalesce(ca.last_at, 0) THEN a.last_seen
                    ELSE coalesce(ca.last_at, 0) END >= ?2
           AND a.id IS DISTINCT FROM ?3
         ORDER BY a.name",
        values![role, now - LIVE_WITHIN_MS, sender_agent],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    if live.is_empty() {
        let names: Vec<String> =
            db.query_map("SELECT name FROM agents WHERE ended_at IS NULL ORDER BY last_seen DESC LIMIT 8", &[], |r| {
                r.get(0)
            })?;
        return Err(Error::UnknownRecipient { to: to.to_owned(), known: names });
    }
    Ok((format!("role:{role}"), live))
}

/// Sends a system signal from Tether to every live agent but `about` (which joined or left).
pub(crate) fn announce_in(db: &dyn Sql, kind: SignalType, about: &str, body: &str) -> Result<()> {
    let now = now_ms();
    let peers: Vec<(String, String)> = db.query_map(
        "SELECT a.id, a.name FROM agents a LEFT JOIN chat_activity ca ON ca.conversation_id = a.id
         WHERE a.ended_at IS NULL AND a.kind != 'cli' AND a.id != ?1
           AND CASE WHEN a.last_seen >= coalesce(ca.last_at, 0) THEN a.last_seen
                    ELSE coalesce(ca.last_at, 0) END >= ?2",
        values![about, now - LIVE_WITHIN_MS],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    if peers.is_empty() {
        return Ok(());
    }
    let num: i64 =
        db.query_row("UPDATE counters SET value = value + 1 WHERE name = 'signal_num' RETURNING value", &[], |r| {
            r.get(0)
        })?;
    db.execute(
        "INSERT INTO signals(num, type, sender, address, body, trace_id, action_required, reply_required, created_at)
         VALUES (?1, ?2, ?3, 'peers', ?4, ?5, 0, 0, ?6)",
        values![num, kind.as_str(), TETHER, body, trace_id()?, now],
    )?;
    for (id, name) in peers {
        db.execute(
            "INSERT INTO signal_deliveries(signal, recipient, recipient_name, obligation) VALUES (?1, ?2, ?3, 'none')",
            values![num, id, name],
        )?;
    }
    bump_rev(db)
}

/// A task was given to an agent by someone else: tell it, with an obligation that its reply, or
/// the task reaching review or an end, closes.
pub(crate) fn task_assigned_in(db: &dyn Sql, from: &From, agent_name: &str, task: i64, title: &str) -> Result<()> {
    let c = Checked {
        kind: Some(SignalType::TaskAssigned),
        to: Some(agent_name.to_owned()),
        body: format!(
            "{} assigned {} \"{title}\" to you. Read it with task_list (id), work on it, and reply to this signal \
             (or complete the task) when it is done.",
            from.name,
            crate::ids::TaskId::new(task)
        ),
        reply_to: None,
        task: Some(task),
        action_required: None,
    };
    send_in(db, from, &c).map(|_| ())
}

pub(crate) fn from_actor_in(db: &dyn Sql, who: &Identity) -> Result<From> {
    if who.kind == AgentKind::Cli {
        return Ok(From { name: HUMAN.into(), agent: None, remote: false });
    }
    sender_in(db, &Sender::Agent(who.clone()))
}

/// The task reached review or an end: its open `task_assigned` obligations are met.
pub(crate) fn task_settled_in(db: &dyn Sql, task: i64) -> Result<()> {
    let now = now_ms();
    let n = db.execute(
        "UPDATE signal_deliveries SET obligation = 'closed', closed_at = ?2
         WHERE obligation = 'open' AND signal IN (SELECT num FROM signals WHERE task = ?1 AND type = 'task_assigned')",
        values![task, now],
    )?;
    if n > 0 {
        db.execute(
            "UPDATE signals SET answered_at = ?2 WHERE task = ?1 AND type = 'task_assigned' AND answered_at IS NULL",
            values![task, now],
        )?;
        bump_rev(db)?;
    }
    Ok(())
}
