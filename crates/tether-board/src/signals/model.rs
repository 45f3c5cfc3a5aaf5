//! A signal's data model: its types and the obligations they carry, what hosts send
//! ([`NewSignal`]), what the board keeps ([`Signal`], its deliveries and wake telemetry). Types
//! and their parsing only: no SQL.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Bodies are Markdown notes, not documents: a signal points at work, it does not carry it.
pub const MAX_BODY_BYTES: usize = 16 * 1024;
/// The stop hook asks a chat to drain only while Cursor's own follow-up counter is below this.
pub const HOOK_LOOP_LIMIT: u32 = 3;
/// An agent counts as live for role addresses and peer announcements when it has not ended and
/// was active this recently.
pub const LIVE_WITHIN_MS: i64 = 24 * 3600 * 1000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ts_rs::TS)]
#[ts(export, export_to = "board.ts")]
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
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema, ts_rs::TS)]
#[ts(export, export_to = "board.ts", optional_fields = nullable)]
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

#[derive(Debug, Clone, Serialize, PartialEq, ts_rs::TS)]
#[ts(export, export_to = "board.ts")]
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

#[derive(Debug, Clone, Serialize, PartialEq, ts_rs::TS)]
#[ts(export, export_to = "board.ts")]
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
    /// On a team's board, the machine whose Tether wrote it (stamped by that machine's database
    /// session, whatever code path sent it); `None` on a machine's own board.
    pub machine: Option<String>,
    pub deliveries: Vec<Delivery>,
}

/// One push outcome, as the log keeps it.
#[derive(Debug, Clone, Serialize, PartialEq, ts_rs::TS)]
#[ts(export, export_to = "board.ts")]
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

#[derive(Debug, Clone, Serialize, PartialEq, ts_rs::TS)]
#[ts(export, export_to = "board.ts")]
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
    /// When the signal was sent (epoch ms).
    pub sent_at: i64,
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
