//! What needs a person's attention: chats that stopped while holding a task, and Cursor sources
//! that could not be read. The tray, the GUI's health view and its notifications show the same
//! list. Knows nothing about how it is shown.

use serde::Serialize;

use crate::Tether;
use crate::error::Result;

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Attention {
    /// `idle_with_task` or `source_failed`.
    pub kind: &'static str,
    pub message: String,
}

pub fn list(t: &Tether) -> Result<Vec<Attention>> {
    let mut out = Vec::new();
    for a in crate::agents::list(&t.store)? {
        if a.status == "idle" && !a.tasks.is_empty() {
            out.push(Attention {
                kind: "idle_with_task",
                message: format!("{} is idle holding {}", a.name, a.tasks.join(", ")),
            });
        }
    }
    // Straight from the sources table: the tray asks every few seconds, and the full doctor
    // report also walks Cursor's folders.
    let failed: Vec<(String, Option<String>)> = t.store.read(|c| {
        let mut stmt = c.prepare("SELECT path, error FROM sources WHERE status = 'error' ORDER BY path")?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    })?;
    for (path, error) in failed {
        let why = error.unwrap_or_else(|| "unreadable".into());
        out.push(Attention { kind: "source_failed", message: format!("cannot read {path}: {why}") });
    }
    Ok(out)
}
