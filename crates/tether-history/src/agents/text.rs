//! Reading a file another agent may be writing at this moment, for the readers beside it
//! (`claude`, `codex`). Depends on nothing of theirs.

use std::path::Path;

/// The text of a file an agent may be writing: lossy UTF-8, never an error for a bad byte.
pub(crate) fn read_text(path: &Path) -> crate::error::Result<String> {
    let bytes = std::fs::read(path).map_err(|e| crate::error::Error::io(format!("reading {}", path.display()), e))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}
