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
    for s in t.doctor()?.sources {
        if s.status == "error" {
            let why = s.error.unwrap_or_else(|| "unreadable".into());
            out.push(Attention { kind: "source_failed", message: format!("cannot read {}: {why}", s.path) });
        }
    }
    Ok(out)
}
