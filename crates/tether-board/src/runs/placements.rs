//! The workspace files a run placed, kept (with what was there) so they can always be put back,
//! and shared by runs in one workspace so the last one out restores the person's own.

use tether_store::sql::{Row, Sql, SqlExt};
use tether_store::values;

use crate::clock::now_ms;
use crate::error::Result;
use tether_store::sql::Database;

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
pub(crate) fn record_placement(store: &dyn Database, f: &PlacedFile) -> Result<()> {
    store.durable(|txn| {
        let db: &dyn Sql = txn;
        // Every record still waiting for the path carries the same original (each copied the
        // first's), so any of them will do; by run, for one answer on either engine.
        let earlier: Option<(Option<Vec<u8>>, Option<String>)> = db.query_opt(
            "SELECT original, original_link FROM run_files WHERE path = ?1 AND restored_at IS NULL
             ORDER BY run LIMIT 1",
            values![f.path],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        let (original, link) = earlier.unwrap_or_else(|| (f.original.clone(), f.original_link.clone()));
        // A run placing the path again starts its record afresh (not restored), as a replaced row did.
        db.execute(
            "INSERT INTO run_files(run, path, original, original_link, placed) VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT (run, path) DO UPDATE SET original = excluded.original,
                 original_link = excluded.original_link, placed = excluded.placed, restored_at = NULL",
            values![f.run, f.path, original, link, f.placed],
        )?;
        db.execute(
            "UPDATE run_files SET placed = ?2 WHERE path = ?1 AND restored_at IS NULL AND placed != ?2",
            values![f.path, f.placed],
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

fn placed_file(r: &Row) -> Result<PlacedFile> {
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
pub(crate) fn take_restores(store: &dyn Database, run: i64) -> Result<Vec<PlacedFile>> {
    store.durable(|txn| {
        let db: &dyn Sql = txn;
        let mine: Vec<PlacedFile> =
            db.query_map(&format!("{PLACED} WHERE f.run = ?1 AND f.restored_at IS NULL"), values![run], placed_file)?;
        let mut out = Vec::new();
        for f in mine {
            let shared = db
                .query_opt(
                    "SELECT 1 FROM run_files f JOIN runs r ON r.num = f.run
                     WHERE f.path = ?1 AND f.run != ?2 AND f.restored_at IS NULL AND r.status = 'running' LIMIT 1",
                    values![f.path, run],
                    |_| Ok(()),
                )?
                .is_some();
            if shared {
                db.execute(
                    "UPDATE run_files SET restored_at = ?3 WHERE run = ?1 AND path = ?2",
                    values![run, f.path, now_ms()],
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
pub(crate) fn orphaned_placements(store: &dyn Database) -> Result<Vec<i64>> {
    store.read(|c| {
        SqlExt::query_map(
            c,
            "SELECT DISTINCT f.run FROM run_files f JOIN runs r ON r.num = f.run
             WHERE f.restored_at IS NULL AND r.status != 'running' ORDER BY f.run",
            &[],
            |r| r.get(0),
        )
    })
}

pub(crate) fn mark_restored(store: &dyn Database, run: i64, path: &str) -> Result<()> {
    store.append(|db| {
        db.execute("UPDATE run_files SET restored_at = ?3 WHERE run = ?1 AND path = ?2", values![run, path, now_ms()])
    })?;
    Ok(())
}
