//! The team schema's migrations: append-only files in `migrations/`, applied in one transaction
//! under an advisory lock, so machines joining at once apply them once and a half-applied schema
//! never exists. A database migrated by a newer Tether is refused, never written to blind.

use tether_store::error::{Error, Result};
use tether_store::sql::SqlExt;

use crate::conn::PgConn;

/// Every migration, in order; a released one is never edited, only followed.
pub const MIGRATIONS: &[(&str, &str)] = &[
    ("0001_machines", include_str!("../migrations/0001_machines.sql")),
    ("0002_board", include_str!("../migrations/0002_board.sql")),
    ("0003_run_targets", include_str!("../migrations/0003_run_targets.sql")),
    ("0004_shared_chats", include_str!("../migrations/0004_shared_chats.sql")),
    ("0005_machine_person", include_str!("../migrations/0005_machine_person.sql")),
    ("0006_signal_machine", include_str!("../migrations/0006_signal_machine.sql")),
    ("0007_no_mcp_sessions", include_str!("../migrations/0007_no_mcp_sessions.sql")),
];

/// Brings the team schema to this build's version; the version it is at.
pub fn migrate(conn: &PgConn) -> Result<usize> {
    conn.batch("BEGIN")?;
    let out = (|| {
        // One key for every Tether: concurrent joiners queue here, inside the transaction.
        conn.batch(
            "SELECT pg_advisory_xact_lock(7391748223);
             CREATE TABLE IF NOT EXISTS tether_schema (
                 version    INTEGER PRIMARY KEY,
                 name       TEXT NOT NULL,
                 applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
             )",
        )?;
        let at: i64 = conn.query_row("SELECT COALESCE(max(version), 0) FROM tether_schema", &[], |r| r.get(0))?;
        let at = usize::try_from(at).unwrap_or(0);
        if at > MIGRATIONS.len() {
            return Err(Error::Conflict(format!(
                "the team database's schema is at version {at}, newer than this Tether knows ({}): upgrade Tether on this machine",
                MIGRATIONS.len()
            )));
        }
        for (i, (name, sql)) in MIGRATIONS.iter().enumerate().skip(at) {
            conn.batch(sql).map_err(|e| Error::Conflict(format!("team schema migration {name}: {e}")))?;
            tether_store::sql::Sql::execute(
                conn,
                "INSERT INTO tether_schema(version, name) VALUES (?1, ?2)",
                tether_store::values![i + 1, *name],
            )?;
        }
        Ok(MIGRATIONS.len())
    })();
    match out {
        Ok(v) => conn.batch("COMMIT").map(|()| v),
        Err(e) => {
            let _ = conn.batch("ROLLBACK");
            Err(e)
        }
    }
}

/// The schema as PostgreSQL's catalog describes it (tables, columns, constraints, indexes,
/// functions), one line each in a stable order: what the snapshot test pins.
pub fn dump_schema(conn: &PgConn) -> Result<String> {
    let mut out = Vec::new();
    out.extend(conn.query_map(
        "SELECT table_name || '.' || column_name || ' ' || data_type
                || CASE WHEN is_nullable = 'NO' THEN ' NOT NULL' ELSE '' END
                || COALESCE(' DEFAULT ' || column_default, '')
         FROM information_schema.columns WHERE table_schema = current_schema()
         ORDER BY table_name, ordinal_position",
        &[],
        |r| r.get::<String>(0),
    )?);
    out.extend(conn.query_map(
        "SELECT conrelid::regclass::text || ' ' || pg_get_constraintdef(oid) FROM pg_constraint
         WHERE connamespace = current_schema()::regnamespace ORDER BY 1",
        &[],
        |r| r.get::<String>(0),
    )?);
    out.extend(conn.query_map(
        "SELECT indexdef FROM pg_indexes WHERE schemaname = current_schema() ORDER BY indexname",
        &[],
        |r| r.get::<String>(0),
    )?);
    out.extend(conn.query_map(
        "SELECT 'function ' || p.proname || '(' || pg_get_function_arguments(p.oid) || ') '
                || pg_get_function_result(p.oid)
         FROM pg_proc p WHERE p.pronamespace = current_schema()::regnamespace ORDER BY 1",
        &[],
        |r| r.get::<String>(0),
    )?);
    Ok(out.join("\n") + "\n")
}
