//! The files a run puts in its workspace — `.cursor/cli.json` with the run's permissions and the
//! role's rule `.cursor/rules/tether-role-<role>.mdc` — and putting the person's own back.
//!
//! Each placement is recorded durably (with what was there: a file's bytes, or a link's target)
//! before the file is written, so whatever happens next (the run ends, fails, is cancelled, or
//! Tether is killed) the old file comes back: at the run's end, or at the next start. A file the
//! person changed while the run went is left as they made it. Runs sharing a workspace share the
//! placement: the last one out restores the person's own bytes.
//!
//! Nothing here follows a symbolic link (see [`crate::nofollow`]): a `.cursor` or `rules` folder
//! that is a link refuses the run; a `cli.json` or role rule that is a link is replaced by the
//! run's file (the link itself, not its target) and put back as the same link.

use std::ffi::OsStr;
use std::path::{Component, Path};

use serde_json::{Value, json};
use tether_board::runs::{PlacedFile, Run};
use tether_core::Tether;

use crate::nofollow::{Dir, Entry, Unsafe};

/// Opens the run's workspace for its start: canonical again, inside the allowed roots again (a
/// folder may have been replaced by a link since the run was queued), the same folder the run
/// was queued for, and held by its handle from here on.
/// A worktree run is held in its worktree's counterpart of the workspace (the workspace itself is
/// checked all the same: the run was allowed for it).
pub fn open_workspace(t: &Tether, run: &Run) -> tether_core::Result<Option<Dir>> {
    let Some(recorded) = run.workspace.as_deref() else { return Ok(None) };
    let canon = tether_core::ops::runs::check_workspace(t, Path::new(recorded))?;
    if canon != Path::new(recorded) {
        return Err(tether_core::Error::UnsafeWorkspace(format!(
            "the workspace {recorded} now leads to {} (it was replaced by a link after the run was queued); \
             the run did not start",
            canon.display()
        )));
    }
    let dir = match &run.worktree {
        Some(w) => std::path::PathBuf::from(w.workspace()),
        None => canon,
    };
    Dir::open_canonical(&dir).map(Some).map_err(|e| unsafe_err(e, "the run did not start"))
}

/// Places the run's files in `ws`; an error here fails the run before the agent starts.
pub fn place(t: &Tether, run: &Run, ws: &Dir) -> tether_core::Result<()> {
    let num = run.num();
    let refuse = |e| unsafe_err(e, "the run did not start");
    if !run.permissions.is_empty() {
        let cursor = folder(t, num, ws, ".cursor")?;
        let name = OsStr::new("cli.json");
        let original = cursor.read(name).map_err(refuse)?;
        let theirs = match &original {
            Entry::File { bytes, .. } => Some(bytes.as_slice()),
            _ => None,
        };
        let placed = cli_json(theirs, &run.permissions.allow, &run.permissions.deny);
        put(t, num, &cursor, name, original, placed.into_bytes())?;
    }
    if let Some(role) = &run.role {
        let text = tether_board::roles::rule(&t.paths.roles_dir(), role)?;
        let rules = folder(t, num, &folder(t, num, ws, ".cursor")?, "rules")?;
        let name = format!("tether-role-{role}.mdc");
        let original = rules.read(OsStr::new(&name)).map_err(refuse)?;
        put(t, num, &rules, OsStr::new(&name), original, text.into_bytes())?;
    }
    Ok(())
}

/// The sub-folder `name` of `parent`, created (and recorded first, so it goes again) when
/// missing; a link there refuses the run.
fn folder(t: &Tether, run: i64, parent: &Dir, name: &str) -> tether_core::Result<Dir> {
    let refuse = |e| unsafe_err(e, "the run did not start");
    if let Some(d) = parent.sub(OsStr::new(name)).map_err(refuse)? {
        return Ok(d);
    }
    let key = format!("{}/", parent.path().join(name).to_string_lossy());
    t.board().runs().placements().record(&PlacedFile { run, path: key, ..PlacedFile::default() })?;
    parent.create_sub(OsStr::new(name)).map_err(refuse)
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

/// Records the placement durably, then writes the file (keeping a file's permissions).
fn put(t: &Tether, run: i64, dir: &Dir, name: &OsStr, original: Entry, placed: Vec<u8>) -> tether_core::Result<()> {
    let mode = match &original {
        Entry::File { mode, .. } => *mode,
        _ => 0o644,
    };
    let (original, original_link) = match original {
        Entry::Missing => (None, None),
        Entry::File { bytes, .. } => (Some(bytes), None),
        Entry::Link(target) => (None, Some(target.to_string_lossy().into_owned())),
    };
    let path = dir.path().join(name).to_string_lossy().into_owned();
    let f = PlacedFile { run, path, original, original_link, placed, workspace: None };
    t.board().runs().placements().record(&f)?;
    dir.write(name, &f.placed, mode).map_err(|e| unsafe_err(e, "the run did not start"))
}

/// Puts back what `run` placed (files first, then the folders it created, deepest first), in
/// `held` — the workspace the run started in — when given.
pub fn restore_run(t: &Tether, run: i64, held: Option<&Dir>) {
    match t.board().runs().placements().take_restores(run) {
        Ok(files) => restore_all(t, files, held),
        Err(e) => tracing::warn!(run, error = %e, "cannot read what the run placed; the next start will put it back"),
    }
}

/// Puts back every placement left by runs that no longer run (after a crash).
pub fn restore_orphans(t: &Tether) {
    match t.board().runs().placements().orphaned() {
        Ok(nums) => {
            for n in nums {
                restore_run(t, n, None);
            }
        }
        Err(e) => tracing::warn!(error = %e, "cannot read the placements to restore"),
    }
}

fn restore_all(t: &Tether, mut files: Vec<PlacedFile>, held: Option<&Dir>) {
    files.sort_by_key(|f| (f.path.ends_with('/'), std::cmp::Reverse(f.path.len())));
    for f in files {
        match restore(&f, held) {
            Ok(()) => {
                if let Err(e) = t.board().runs().placements().mark_restored(f.run, &f.path) {
                    tracing::warn!(path = %f.path, error = %e, "restored, but could not record it");
                }
            }
            Err(e) => tracing::warn!(path = %f.path, error = %e, "could not put the file back"),
        }
    }
}

fn restore(f: &PlacedFile, held: Option<&Dir>) -> Result<(), Unsafe> {
    let Some(ws) = f.workspace.as_deref() else { return Ok(()) };
    let Ok(rel) = Path::new(f.path.trim_end_matches('/')).strip_prefix(ws).map(Path::to_path_buf) else {
        tracing::warn!(path = %f.path, workspace = ws, "a placement outside its run's workspace; left alone");
        return Ok(());
    };
    let opened;
    let base = match held {
        Some(d) => d,
        None => {
            opened = Dir::open_canonical(Path::new(ws))?;
            &opened
        }
    };
    let names: Vec<&OsStr> = rel
        .components()
        .map(|c| match c {
            Component::Normal(n) => Ok(n),
            _ => Err(Unsafe::NotCanonical { path: rel.clone() }),
        })
        .collect::<Result<_, _>>()?;
    let Some((last, parents)) = names.split_last() else { return Ok(()) };
    let mut walked: Option<Dir> = None;
    for name in parents {
        match walked.as_ref().unwrap_or(base).sub(name)? {
            Some(d) => walked = Some(d),
            // The folder is gone, and what the run placed in it with it.
            None => return Ok(()),
        }
    }
    let dir = walked.as_ref().unwrap_or(base);
    if f.path.ends_with('/') {
        // Only when empty: anything the person added there stays.
        dir.remove_empty_dir(last);
        return Ok(());
    }
    let mode = match dir.read(last)? {
        Entry::File { bytes, mode } if bytes == f.placed => mode,
        _ => {
            tracing::warn!(path = %f.path, "changed since the run placed it; left as it is");
            return Ok(());
        }
    };
    match (&f.original, &f.original_link) {
        (Some(bytes), _) => dir.write(last, bytes, mode),
        (None, Some(target)) => dir.symlink(last, Path::new(target)),
        (None, None) => dir.remove(last),
    }
}

fn unsafe_err(e: Unsafe, then: &str) -> tether_core::Error {
    match e {
        Unsafe::Io { context, source } => tether_core::Error::Io { context, source },
        e => tether_core::Error::UnsafeWorkspace(format!("{e}; {then}")),
    }
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
