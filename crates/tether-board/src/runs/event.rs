//! A run's events, typed: what the agent said or did (from the Cursor CLI's stream, or a cloud
//! agent's), and what happened to the run. The parsers that produce them live with the executors
//! (`tether-runs`, `tether-cloud`); the board stores and serves them.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Tool argument and result strings longer than this are cut (a file's whole text, a build log).
pub const MAX_FIELD_CHARS: usize = 4000;
/// A result's text (every assistant message of the turn) is kept up to this many characters.
pub const MAX_RESULT_CHARS: usize = 256 * 1024;

/// Token counts from the `result` line (`usage`, camelCase or snake_case).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[ts(export, export_to = "board.ts")]
pub struct Usage {
    pub input_tokens: i64,
    pub output_tokens: i64,
    pub cache_read_tokens: i64,
    pub cache_write_tokens: i64,
}

impl Usage {
    /// Every token: input, output, cache writes and, unless left out, cache reads.
    pub fn total(&self, cache_reads: bool) -> i64 {
        self.input_tokens
            + self.output_tokens
            + self.cache_write_tokens
            + if cache_reads { self.cache_read_tokens } else { 0 }
    }

    pub fn add(&mut self, o: &Usage) {
        self.input_tokens += o.input_tokens;
        self.output_tokens += o.output_tokens;
        self.cache_read_tokens += o.cache_read_tokens;
        self.cache_write_tokens += o.cache_write_tokens;
    }
}

/// One event of a run: what the agent said or did, or what happened to the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[ts(export, export_to = "board.ts")]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RunEvent {
    /// `system/init`: the chat id and the model's display name.
    Init {
        session_id: String,
        #[serde(default)]
        model: Option<String>,
        #[serde(default)]
        cwd: Option<String>,
    },
    /// The prompt as the CLI echoed it.
    User { text: String },
    /// Assistant text: a whole message between tool calls, or a delta (`partial`) when the run
    /// streams partial output.
    Assistant {
        text: String,
        #[serde(default)]
        partial: bool,
    },
    Thinking {
        #[serde(default)]
        text: Option<String>,
        #[serde(default)]
        done: bool,
    },
    /// A tool call started or completed. `tool` is the kind (`shell`, `edit`, `read`, `mcp`…);
    /// `path` / `command` are lifted out of the arguments for display.
    ToolCall {
        call_id: String,
        tool: String,
        phase: String,
        #[serde(default)]
        path: Option<String>,
        #[serde(default)]
        command: Option<String>,
        /// `success`, `rejected`, `error`… once completed.
        #[serde(default)]
        outcome: Option<String>,
        #[serde(default)]
        args: Value,
        #[serde(default)]
        result: Value,
    },
    Result {
        is_error: bool,
        text: String,
        #[serde(default)]
        duration_ms: Option<i64>,
        #[serde(default)]
        duration_api_ms: Option<i64>,
        #[serde(default)]
        usage: Option<Usage>,
    },
    /// One turn's tokens (a `usage` line of the stream), before the run's final figures.
    Usage { usage: Usage },
    /// Connection trouble or retries the CLI reported.
    Notice { text: String },
    /// A line of the agent's stderr.
    Stderr { text: String },
    /// A stdout line we could not read as a known event.
    Raw { text: String, reason: String },
    /// What happened to the run (queued, started, timed out, cancelled, ended…), from the runner.
    Status {
        status: String,
        #[serde(default)]
        message: Option<String>,
    },
}

impl RunEvent {
    /// Roughly how many bytes the event takes in a log: its texts, and its tool call's arguments
    /// and result (each already cut to [`MAX_FIELD_CHARS`]).
    pub fn approx_len(&self) -> usize {
        let opt = |o: &Option<String>| o.as_ref().map_or(0, String::len);
        64 + match self {
            RunEvent::Init { session_id, model, cwd } => session_id.len() + opt(model) + opt(cwd),
            RunEvent::User { text }
            | RunEvent::Assistant { text, .. }
            | RunEvent::Notice { text }
            | RunEvent::Stderr { text } => text.len(),
            RunEvent::Thinking { text, .. } => opt(text),
            RunEvent::ToolCall { call_id, tool, path, command, args, result, .. } => {
                call_id.len()
                    + tool.len()
                    + opt(path)
                    + opt(command)
                    + args.to_string().len()
                    + result.to_string().len()
            }
            RunEvent::Result { text, .. } => text.len(),
            RunEvent::Usage { .. } => 64,
            RunEvent::Raw { text, reason } => text.len() + reason.len(),
            RunEvent::Status { status, message } => status.len() + opt(message),
        }
    }

    /// What a log always keeps, past its size limit too: how the run started, its result, and
    /// what happened to it.
    pub fn is_essential(&self) -> bool {
        matches!(
            self,
            RunEvent::Init { .. } | RunEvent::Result { .. } | RunEvent::Status { .. } | RunEvent::Usage { .. }
        )
    }

    pub fn kind(&self) -> &'static str {
        match self {
            RunEvent::Init { .. } => "init",
            RunEvent::User { .. } => "user",
            RunEvent::Assistant { .. } => "assistant",
            RunEvent::Thinking { .. } => "thinking",
            RunEvent::ToolCall { .. } => "tool_call",
            RunEvent::Result { .. } => "result",
            RunEvent::Usage { .. } => "usage",
            RunEvent::Notice { .. } => "notice",
            RunEvent::Stderr { .. } => "stderr",
            RunEvent::Raw { .. } => "raw",
            RunEvent::Status { .. } => "status",
        }
    }

    pub fn status(status: &str, message: Option<String>) -> Self {
        RunEvent::Status { status: status.to_owned(), message }
    }
}
