//! Code origin for runs: the files a local run's tool calls wrote (`editToolCall` with its
//! replacements, `writeToolCall` with the file's text, `applyPatch`) recorded like Cursor's edit
//! hooks record the editor's, so a run's lines answer `tether blame` without any hook installed.
//!
//! What a write replaced is the file as git's index has it (a run's worktree starts from its
//! base), read when the call completes; not a snapshot at the call's start, which would race
//! the agent's own write. Recording happens off the run's event path and never fails the run,
//! but the run waits for it (briefly) before it ends, so a run that says it ended has its lines
//! traced: the Code view opened right after a merge names the run.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;
use tether_core::Tether;
use tether_core::code_origin::{EditBy, EditPart};
use tether_trace::EditKind;
use tether_trace::capture::{Replacement, capture, pack};

/// Follows one run's stdout lines for the edits they report.
pub(crate) struct RunTrace {
    t: Arc<Tether>,
    run_id: String,
    workspace: PathBuf,
    model: Option<String>,
    chat: Option<String>,
    pending: Pending,
}

/// The recordings a run's trace has started and not yet seen finish.
pub(crate) type Pending = Arc<std::sync::Mutex<Vec<tokio::task::JoinHandle<()>>>>;

/// How long a run's end waits for its edits to be recorded.
const SETTLE_FOR: std::time::Duration = std::time::Duration::from_secs(10);

/// Waits for the recordings started so far (each at most [`SETTLE_FOR`] in all).
pub(crate) async fn settle(pending: &Pending) {
    let handles: Vec<_> = std::mem::take(&mut *pending.lock().unwrap_or_else(|p| p.into_inner()));
    let all = async {
        for h in handles {
            let _ = h.await;
        }
    };
    if tokio::time::timeout(SETTLE_FOR, all).await.is_err() {
        tracing::warn!("a run's edits were still being traced when it ended");
    }
}

impl RunTrace {
    pub(crate) fn new(t: Arc<Tether>, run_id: String, workspace: PathBuf, model: Option<String>) -> Self {
        Self { t, run_id, workspace, model, chat: None, pending: Pending::default() }
    }

    /// What this trace has started recording, to [`settle`] before the run ends.
    pub(crate) fn pending(&self) -> Pending {
        Arc::clone(&self.pending)
    }

    /// Looks at one stdout line (cheaply: most lines are not edits).
    pub(crate) fn observe(&mut self, line: &[u8]) {
        let has = |needle: &[u8]| line.windows(needle.len()).any(|w| w == needle);
        let init = self.chat.is_none() && has(b"\"init\"");
        if !init && !(has(b"\"completed\"") && (has(b"editToolCall") || has(b"writeToolCall"))) {
            return;
        }
        let Ok(Value::Object(v)) = serde_json::from_slice::<Value>(line) else { return };
        let s = |k: &str| v.get(k).and_then(Value::as_str);
        if s("type") == Some("system") && s("subtype") == Some("init") {
            self.chat = s("session_id").map(str::to_owned);
            if self.model.is_none() {
                self.model = s("model").map(str::to_owned);
            }
            return;
        }
        if s("type") != Some("tool_call") || s("subtype") != Some("completed") {
            return;
        }
        let Some(call) = v.get("tool_call").and_then(Value::as_object) else { return };
        let Some((kind, body)) = call.iter().find(|(k, _)| *k == "editToolCall" || *k == "writeToolCall") else {
            return;
        };
        // Only what the tool says it did: a rejected or failed write wrote nothing.
        if body.get("result").and_then(|r| r.get("success")).is_none() {
            return;
        }
        let args = body.get("args").cloned().unwrap_or(Value::Null);
        let Some(path) = args.get("path").and_then(Value::as_str) else { return };
        let file = if Path::new(path).is_absolute() { PathBuf::from(path) } else { self.workspace.join(path) };
        let uid = format!("{}:{}", self.run_id, s("call_id").unwrap_or_default());
        let by = EditBy {
            kind: Some(EditKind::Run),
            conversation_id: self.chat.clone(),
            generation_id: None,
            model: self.model.clone(),
            run_id: Some(self.run_id.clone()),
        };
        let (t, kind) = (Arc::clone(&self.t), kind.clone());
        let recording = tokio::task::spawn_blocking(move || {
            let Some(edits) = replacements(&kind, &args, &file) else { return };
            let text = std::fs::read(&file).ok().and_then(|b| String::from_utf8(b).ok());
            let c = capture(text.as_deref(), &edits);
            let part = EditPart {
                edit: uid,
                file: file.to_string_lossy().into_owned(),
                ranges: c.ranges,
                written: pack(&c.written),
                replaced: pack(&c.replaced),
            };
            if let Err(e) = tether_core::code_origin::record(&t, &by, &part) {
                tracing::warn!(error = %e, file = %part.file, "a run's edit was not traced");
            }
        });
        self.pending.lock().unwrap_or_else(|p| p.into_inner()).push(recording);
    }
}

/// The replacements a tool call made: its own strings where it gives them, else the file as
/// the index had it against the file now.
fn replacements(kind: &str, args: &Value, file: &Path) -> Option<Vec<Replacement>> {
    let pair = |v: &Value| -> Option<Replacement> {
        let s = |a: &str, b: &str| v.get(a).or_else(|| v.get(b)).and_then(Value::as_str).map(str::to_owned);
        Some(Replacement { old_string: s("oldText", "old_string")?, new_string: s("newText", "new_string")? })
    };
    if kind == "editToolCall" {
        if let Some(r) = args.get("strReplace").and_then(pair) {
            return Some(vec![r]);
        }
        if let Some(list) = args.get("multiStrReplace").and_then(|m| m.get("edits")).and_then(Value::as_array) {
            return Some(list.iter().filter_map(pair).collect());
        }
    }
    let now = std::fs::read_to_string(file).ok()?;
    let before = indexed(file).unwrap_or_default();
    Some(vec![Replacement { old_string: before, new_string: now }])
}

/// The file as git's index has it, if it is in a repository and known there.
fn indexed(file: &Path) -> Option<String> {
    let repo = tether_git::Repo::discover(file.parent()?).ok()??;
    let rel = file.strip_prefix(repo.root.canonicalize().ok()?).ok().or_else(|| file.strip_prefix(&repo.root).ok())?;
    repo.file_at("", &rel.to_string_lossy()).ok()?
}
