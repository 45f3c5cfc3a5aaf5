//! The files a run puts in its workspace — `.cursor/cli.json` with the run's permissions and the
//! role's rule `.cursor/rules/tether-role-<role>.mdc` — and putting the person's own back.
//!
//! Each placement is recorded durably (with the file's old bytes) before the file is written,
//! so whatever happens next (the run ends, fails, is cancelled, or Tether is killed) the old
//! file comes back: at the run's end, or at the next start. A file the person changed while the
//! run went is left as they made it.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use tether_core::Tether;
use tether_core::board::runs::{self, PlacedFile, Run};

/// Places the run's files; an error here fails the run before the agent starts.
pub fn place(t: &Tether, run: &Run) -> tether_core::Result<()> {
    let Some(ws) = run.workspace.as_deref().map(PathBuf::from) else { return Ok(()) };
    let num = run.num();
    if !run.permissions.is_empty() {
        let path = ws.join(".cursor").join("cli.json");
        let original = read(&path)?;
        let placed = cli_json(original.as_deref(), &run.permissions.allow, &run.permissions.deny);
        put(t, num, &ws, &path, original, placed.into_bytes())?;
    }
    if let Some(role) = &run.role {
        let text = tether_core::board::roles::rule(&t.paths.roles_dir(), role)?;
        let path = ws.join(".cursor").join("rules").join(format!("tether-role-{role}.mdc"));
        let original = read(&path)?;
        put(t, num, &ws, &path, original, text.into_bytes())?;
    }
    Ok(())
}

/// The run's permissions as Cursor's project `cli.json`. The person's own `deny` list is kept:
/// a run may be allowed more, never less guarded than they chose.
fn cli_json(original: Option<&[u8]>, allow: &[String], deny: &[String]) -> String {
    let theirs: Vec<String> = original
        .and_then(|b| serde_json::from_slice::<Value>(b).ok())
        .and_then(|v| v.pointer("/permissions/deny").cloned())
        .and_then(|d| serde_json::from_value(d).ok())
        .unwrap_or_default();
    let mut all_deny = theirs;
    for d in deny {
        if !all_deny.contains(d) {
            all_deny.push(d.clone());
        }
    }
    let v = json!({"version": 1, "permissions": {"allow": allow, "deny": all_deny}});
    format!("{}\n", serde_json::to_string_pretty(&v).unwrap_or_default())
}

/// Records the placement (and each folder it creates) durably, then writes the file.
fn put(
    t: &Tether,
    run: i64,
    ws: &Path,
    path: &Path,
    original: Option<Vec<u8>>,
    placed: Vec<u8>,
) -> tether_core::Result<()> {
    let mut missing: Vec<PathBuf> =
        path.ancestors().skip(1).take_while(|d| *d != ws && !d.exists()).map(Path::to_path_buf).collect();
    missing.reverse();
    for d in &missing {
        let dir = PlacedFile { run, path: dir_key(d), original: None, placed: Vec::new() };
        runs::record_placement(&t.store, &dir)?;
    }
    let f = PlacedFile { run, path: path.to_string_lossy().into_owned(), original, placed };
    runs::record_placement(&t.store, &f)?;
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| io(parent, e))?;
    }
    write_atomic(path, &f.placed)
}

/// Folders are recorded with a trailing `/`: removed at restore when empty.
fn dir_key(d: &Path) -> String {
    format!("{}/", d.to_string_lossy())
}

/// Puts back what `run` placed (files first, then the folders it created, deepest first).
pub fn restore_run(t: &Tether, run: i64) {
    match runs::take_restores(&t.store, run) {
        Ok(files) => restore_all(t, files),
        Err(e) => tracing::warn!(run, error = %e, "cannot read what the run placed; the next start will put it back"),
    }
}

/// Puts back every placement left by runs that no longer run (after a crash).
pub fn restore_orphans(t: &Tether) {
    match runs::orphaned_placements(&t.store) {
        Ok(files) => restore_all(t, files),
        Err(e) => tracing::warn!(error = %e, "cannot read the placements to restore"),
    }
}

fn restore_all(t: &Tether, mut files: Vec<PlacedFile>) {
    files.sort_by_key(|f| (f.path.ends_with('/'), std::cmp::Reverse(f.path.len())));
    for f in files {
        match restore(&f) {
            Ok(()) => {
                if let Err(e) = runs::mark_restored(&t.store, f.run, &f.path) {
                    tracing::warn!(path = %f.path, error = %e, "restored, but could not record it");
                }
            }
            Err(e) => tracing::warn!(path = %f.path, error = %e, "could not put the file back"),
        }
    }
}

fn restore(f: &PlacedFile) -> tether_core::Result<()> {
    if let Some(dir) = f.path.strip_suffix('/') {
        // Only when empty: anything the person added there stays.
        let _ = std::fs::remove_dir(dir);
        return Ok(());
    }
    let path = Path::new(&f.path);
    let now = read(path)?;
    if now.as_deref() != Some(&f.placed[..]) {
        tracing::warn!(path = %f.path, "changed since the run placed it; left as it is");
        return Ok(());
    }
    match &f.original {
        Some(bytes) => write_atomic(path, bytes),
        None => std::fs::remove_file(path).map_err(|e| io(path, e)),
    }
}

fn read(path: &Path) -> tether_core::Result<Option<Vec<u8>>> {
    match std::fs::read(path) {
        Ok(b) => Ok(Some(b)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io(path, e)),
    }
}

/// Writes through a temporary file and a rename, keeping the old file's permissions.
fn write_atomic(path: &Path, bytes: &[u8]) -> tether_core::Result<()> {
    let tmp = path.with_extension("tether-tmp");
    std::fs::write(&tmp, bytes).map_err(|e| io(&tmp, e))?;
    if let Ok(meta) = std::fs::metadata(path) {
        let _ = std::fs::set_permissions(&tmp, meta.permissions());
    }
    std::fs::rename(&tmp, path).map_err(|e| io(path, e))
}

fn io(path: &Path, e: std::io::Error) -> tether_core::Error {
    tether_core::Error::Io { context: format!("writing {} for a run", path.display()), source: e }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_persons_deny_list_is_kept() {
        let mine = br#"{"version":1,"permissions":{"allow":["Read(**)"],"deny":["Shell(rm)"]}}"#;
        let v: Value =
            serde_json::from_str(&cli_json(Some(mine), &["Write(src/**)".into()], &["Shell(curl)".into()])).unwrap();
        assert_eq!(v["permissions"]["allow"], json!(["Write(src/**)"]));
        assert_eq!(v["permissions"]["deny"], json!(["Shell(rm)", "Shell(curl)"]));
    }
}
