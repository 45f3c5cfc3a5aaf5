//! Signals between agents and the person: send, reply, drain (exactly once), what waits, the
//! piggyback notice on a tool result. A signal from outside this machine (a cloud run's scoped
//! bearer) is marked `remote`, so a wake it causes waits for the person before it may write.

use serde::{Deserialize, Serialize};

use crate::Tether;
use crate::board::principal::Principal;
use crate::board::signals::{NewSignal, PendingSummary, Signal, SignalDetail, SignalFilter};
use crate::error::Result;
use crate::events::Event;

pub fn send(t: &Tether, who: &Principal, new: &NewSignal) -> Result<Signal> {
    let from = who.sender();
    if who.is_remote() { t.board().signals().send_remote(&from, new) } else { t.board().signals().send(&from, new) }
}

/// A reply to a signal, as hosts send it (the signal is named by the route).
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct Reply {
    pub body: String,
    /// Default: acknowledgment.
    #[serde(default, rename = "type")]
    #[ts(optional, rename = "type")]
    pub kind: Option<String>,
}

/// Replies to `id` (to its sender, in its trace), closing its obligation.
pub fn reply(t: &Tether, who: &Principal, id: &str, r: Reply) -> Result<Signal> {
    let new = NewSignal { reply_to: Some(id.to_owned()), kind: r.kind, body: r.body, ..Default::default() };
    send(t, who, &new)
}

/// The caller's undrained signals, now marked drained (exactly once); its doorbell may ring
/// again.
pub fn drain(t: &Tether, who: &Principal) -> Result<Vec<Signal>> {
    // Re-armed before the drain's write is announced: the doorbell may read the deliveries as
    // soon as it hears of that write, and a signal sent right after the drain (another
    // machine's, say) must find the bell armed, not coalesce into the bell just answered.
    if let Some(session) = who.identity().and_then(|i| i.mcp_session.clone()) {
        t.bus.emit(Event::SignalsDrained { session });
    }
    t.board().signals().drain(&who.recipient())
}

/// The caller's undrained signals, left undrained.
pub fn pending(t: &Tether, who: &Principal) -> Result<Vec<Signal>> {
    t.board().signals().pending(&who.recipient())
}

/// The notice a tool result carries for the caller (recorded as a `piggyback` wake).
pub fn piggyback(t: &Tether, who: &Principal) -> Result<PendingSummary> {
    let session = who.identity().and_then(|i| i.mcp_session.clone());
    t.board().signals().piggyback(&who.recipient(), session.as_deref())
}

pub fn list(t: &Tether, f: &SignalFilter) -> Result<Vec<Signal>> {
    t.board().signals().list(f)
}

/// Signals as the GUI reads them (a list, or those a drain marked read): `{signals}`.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct SignalList {
    pub signals: Vec<Signal>,
}

/// What an agent's drain answers: the signals and whether any needs a reply, in words.
#[derive(Debug, Clone, Serialize)]
pub struct Drained {
    pub signals: Vec<Signal>,
    pub hint: &'static str,
}

impl From<Vec<Signal>> for Drained {
    fn from(signals: Vec<Signal>) -> Self {
        let hint = if signals.iter().any(|s| s.reply_required) {
            "Reply where one is needed: signal_send with reply_to set to the signal's id."
        } else {
            "Nothing here needs a reply."
        };
        Self { signals, hint }
    }
}

/// The piggyback notice a tool result carries when signals wait for its caller.
#[derive(Debug, Clone, Serialize)]
pub struct Notice {
    pub pending_signals: usize,
    pub notice: String,
}

impl Notice {
    /// `None` when nothing waits.
    pub fn of(p: &PendingSummary) -> Option<Self> {
        (p.count > 0).then(|| Self {
            pending_signals: p.count,
            notice: format!("Tether: {} waiting for you; call signals_pending to read them.", p.describe()),
        })
    }
}

pub fn get(t: &Tether, id: &str) -> Result<SignalDetail> {
    t.board().signals().get(id)
}
