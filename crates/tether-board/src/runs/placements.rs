//! The workspace files a run placed, kept (with what was there) so they can always be put back,
//! and shared by runs in one workspace so the last one out restores the person's own.

use rusqlite::{OptionalExtension, params};

use crate::clock::now_ms;
use crate::error::Result;
use crate::store::Store;

/// A workspace file a run placed, with what was there before: a file's bytes (`original`), a
/// symbolic link's target (`original_link`), or nothing. A path ending in `/` is a folder the
/// run created.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PlacedFile {
    pub run: i64,
    pub path: String,
    pub original: Option<Vec<u8>>,
    pub original_link: Option<String>,
    pub placed: Vec<u8>,
    /// The run's workspace (read with the placement; not written by [`record_placement`]).
    pub workspace: Option<String>,
}

/// Records, durably and before the file is touched, what a run is about to write and what the
/// file held. Runs sharing a workspace share the path's placement, counted by their records:
/// the first record's original is the person's and every later one carries it; every record
/// for the path learns what is on disk now (this run's bytes), so whichever run ends last puts
/// the person's own file back.
pub fn record_placement(store: &Store, f: &PlacedFile) -> Result<()> {
    store.durable(|txn| {
        let earlier: Option<(Option<Vec<u8>>, Option<String>)> = txn
            .query_row(
                "SELECT original, original_link FROM run_files WHERE path = ?1 AND restored_at IS NULL
                 ORDER BY rowid LIMIT 1",
                [&f.path],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        let (original, link) = earlier.unwrap_or_else(|| (f.original.clone(), f.original_link.clone()));
        txn.execute(
            "INSERT OR REPLACE INTO run_files(run, path, original, original_link, placed) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![f.run, f.path, original, link, f.placed],
        )?;
        txn.execute(
            "UPDATE run_files SET placed = ?2 WHERE path = ?1 AND restored_at IS NULL AND placed != ?2",
            params![f.path, f.placed],
        )?;
        Ok(())
    })
}

/// A placement with the folder its run worked in: the workspace, or its counterpart in the run's
/// worktree.
const PLACED: &str = "SELECT f.run, f.path, f.original, f.original_link, f.placed,
                             CASE WHEN w.id IS NULL THEN r.workspace WHEN w.subdir = '' THEN w.path
                                  ELSE w.path || '/' || w.subdir END
                      FROM run_files f JOIN runs r ON r.num = f.run LEFT JOIN worktrees w ON w.id = r.worktree";

fn placed_file(r: &rusqlite::Row<'_>) -> rusqlite::Result<PlacedFile> {
    Ok(PlacedFile {
        run: r.get(0)?,
        path: r.get(1)?,
        original: r.get(2)?,
        original_link: r.get(3)?,
        placed: r.get(4)?,
        workspace: r.get(5)?,
    })
}

/// The files `run` placed that still wait to be put back, unless another running run shares
/// the path: then this run's record is done (the other carries the person's original and the
/// bytes on disk) and the last run out restores.
pub fn take_restores(store: &Store, run: i64) -> Result<Vec<PlacedFile>> {
    store.durable(|txn| {
        let mine: Vec<PlacedFile> = txn
            .prepare_cached(&format!("{PLACED} WHERE f.run = ?1 AND f.restored_at IS NULL"))?
            .query_map([run], placed_file)?
            .collect::<rusqlite::Result<_>>()?;
        let mut out = Vec::new();
        for f in mine {
            let shared = txn
                .query_row(
                    "SELECT 1 FROM run_files f JOIN runs r ON r.num = f.run
                     WHERE f.path = ?1 AND f.run != ?2 AND f.restored_at IS NULL AND r.status = 'running' LIMIT 1",
                    params![f.path, run],
                    |_| Ok(()),
                )
                .optional()?
                .is_some();
            if shared {
                txn.execute(
                    "UPDATE run_files SET restored_at = ?3 WHERE run = ?1 AND path = ?2",
                    params![run, f.path, now_ms()],
                )?;
            } else {
                out.push(f);
            }
        }
        Ok(out)
    })
}

/// Runs that are no longer running but left placements not yet put back (a crash, a kill):
/// what a starting runner restores, each through [`take_restores`].
pub fn orphaned_placements(store: &Store) -> Result<Vec<i64>> {
    store.read(|c| {
        Ok(c.prepare_cached(
            "SELECT DISTINCT f.run FROM run_files f JOIN runs r ON r.num = f.run
             WHERE f.restored_at IS NULL AND r.status != 'running' ORDER BY f.run",
        )?
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?)
    })
}

pub fn mark_restored(store: &Store, run: i64, path: &str) -> Result<()> {
    store
        .writer()
        .execute("UPDATE run_files SET restored_at = ?3 WHERE run = ?1 AND path = ?2", params![run, path, now_ms()])?;
    Ok(())
}
