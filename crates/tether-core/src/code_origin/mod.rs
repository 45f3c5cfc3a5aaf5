//! Code origin's engine work, the procedures no person or agent asks for by name: recording the
//! edits Cursor's hooks and Tether's runs report ([`record`], [`from_hook`]), publishing records
//! into opted-in repositories ([`publish`]), the git half of "which chat wrote this line"
//! ([`blame::origins`], for `ops::trace::blame`), and Cursor's own AI-code tracking database as
//! a source beside it ([`cursor_tracking`]). The rule itself is `tether_trace`'s, pure; this
//! is where it meets git, the disk and the store.
//!
//! Called by the engine's components (tether-runs' trace recorder, the server's hook intake, the
//! daemon's publisher, `tether trace publish`) and by `ops::trace`; it decides no authority: what
//! reaches it was already allowed. Must not depend on `ops` beyond git's error mapping, nor on
//! the board beyond the hook event it records from (`board::live::HookEvent`); the chat index
//! only to name an edit's chat.

pub(crate) mod blame;
pub(crate) mod chats;
pub mod cursor_tracking;
mod locate;
mod publish;

use std::path::Path;

use serde::{Deserialize, Serialize};
use tether_git::Repo;
use tether_trace::Range;
use tether_trace::capture::unpack;
use tether_trace::store::{self as traces, EditKind, NewEdit};

use crate::Tether;
use crate::clock::now_ms;
use crate::error::{Error, Result};
use crate::ops::worktrees::git_err;
pub(crate) use locate::{Located, locate};
pub use publish::{NOTES_REF, Published, publish};

/// What the hook forwarder (`tether hook afterFileEdit`) or a run sends for one edit or one part
/// of it: hashes and ranges computed where the edit was seen, never the edit's text.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
pub struct EditPart {
    /// The capturer's id for the edit (parts share it).
    pub edit: String,
    /// The file, absolute.
    pub file: String,
    #[serde(default)]
    pub ranges: Vec<Range>,
    /// Packed line hashes (see `tether_trace::capture::pack`).
    #[serde(default)]
    pub written: String,
    #[serde(default)]
    pub replaced: String,
}

/// Who made the edit, from the hook payload or the run.
#[derive(Debug, Clone, Default)]
pub struct EditBy {
    pub kind: Option<EditKind>,
    pub conversation_id: Option<String>,
    pub generation_id: Option<String>,
    pub model: Option<String>,
    pub run_id: Option<String>,
}

/// Records an edit (or a part of one). Malformed hashes are refused whole; a file outside any
/// repository is kept by its absolute path.
pub fn record(t: &Tether, by: &EditBy, part: &EditPart) -> Result<i64> {
    let file = Path::new(&part.file);
    if !file.is_absolute() || part.edit.trim().is_empty() {
        return Err(Error::invalid("trace", "an edit needs its id and the file's absolute path"));
    }
    let bad = || Error::invalid("trace", "line hashes must be packed 16-hex-digit values");
    let written = unpack(&part.written).ok_or_else(bad)?;
    let replaced = unpack(&part.replaced).ok_or_else(bad)?;
    let file = file.canonicalize().unwrap_or_else(|_| file.to_path_buf());
    let Located { root, path } = locate(&file);
    // HEAD at the time (of the checkout the edit was in), for the record's `vcs.revision`; a
    // repository without commits has none. Only where `locate` found a `.git` it could vouch for.
    let head = root.as_ref().and(file.parent()).and_then(|d| Repo::at(d).resolve("HEAD").ok());
    traces::record(
        &t.store,
        &NewEdit {
            uid: part.edit.clone(),
            at_ms: now_ms(),
            kind: by.kind.unwrap_or(EditKind::Agent),
            conversation_id: by.conversation_id.clone().filter(|c| !c.is_empty()),
            generation_id: by.generation_id.clone().filter(|c| !c.is_empty()),
            model: by.model.clone().filter(|c| !c.is_empty()),
            run_id: by.run_id.clone(),
            repo: root.map(|r| r.to_string_lossy().into_owned()),
            head,
            path,
            ranges: part.ranges.clone(),
            written,
            replaced,
        },
    )
}

/// The edit a Cursor hook carried (`afterFileEdit`: the agent's, `afterTabFileEdit`: Tab's), if
/// it carried one that `tether hook` computed.
pub fn from_hook(t: &Tether, ev: &crate::board::live::HookEvent) -> Result<Option<i64>> {
    let kind = match ev.hook_event_name.as_str() {
        "afterFileEdit" => EditKind::Agent,
        "afterTabFileEdit" => EditKind::Tab,
        _ => return Ok(None),
    };
    let Some(part) = &ev.trace else { return Ok(None) };
    let part: EditPart = serde_json::from_value(part.clone())
        .map_err(|e| Error::invalid("trace", format!("not what `tether hook` sends: {e}")))?;
    let by = EditBy {
        kind: Some(kind),
        conversation_id: Some(ev.conversation_id.clone()),
        generation_id: ev.generation_id.clone(),
        model: ev.model.clone(),
        run_id: None,
    };
    record(t, &by, &part).map(Some)
}

/// The root of the repository `dir` is in.
pub(crate) fn repo_root(dir: &str) -> Result<String> {
    if dir.trim().is_empty() || dir.contains('\0') {
        return Err(Error::invalid("repo", "name a folder of the repository"));
    }
    let d = Path::new(dir).canonicalize().map_err(|e| Error::invalid("repo", format!("{dir}: {e}")))?;
    let r = Repo::open(&d).map_err(git_err)?;
    Ok(r.root.canonicalize().unwrap_or(r.root).to_string_lossy().into_owned())
}
