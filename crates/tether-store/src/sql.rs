//! SQL written once for two engines: this machine's SQLite and a team's PostgreSQL (the board's
//! second backend, implemented in `tether-pg`). A statement is written in the dialect both
//! accept (`?N` parameters, `ON CONFLICT`, `RETURNING`, `COALESCE`), values cross as [`Value`]
//! (SQLite's five storage classes, which every column of the board fits) and rows come back
//! read into [`Row`]s, so the board's rules run unchanged on either.
//!
//! Knows nothing about PostgreSQL itself (that engine's driver lives beside the core) nor about
//! the board's tables.

use crate::error::{Error, Result};

/// A value bound to a statement or read from a row: SQLite's storage classes.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
    Blob(Vec<u8>),
}

/// A connection or transaction that runs the board's SQL. Object-safe, so the board's functions
/// take `&dyn Sql` whichever engine is behind it; [`SqlExt`] adds the typed helpers.
pub trait Sql {
    /// Runs a statement; how many rows it changed.
    fn execute(&self, sql: &str, params: &[Value]) -> Result<usize>;
    /// Runs a query and reads every row it returns.
    fn rows(&self, sql: &str, params: &[Value]) -> Result<Vec<Row>>;
    /// The clause that locks the rows a query reads, ` FOR UPDATE {rest}`, where the engine has
    /// row locks (PostgreSQL); nothing where a writer already holds the whole database (SQLite).
    fn row_lock(&self, _rest: &str) -> String {
        String::new()
    }
    /// A FROM item reading `expr`, a JSON list of strings held as text, as rows of one column
    /// `alias.value`: SQLite's `json_each`, PostgreSQL's `jsonb_array_elements_text`. So a rule over
    /// such a list (a run's labels) is decided in the statement, before any row is locked.
    fn json_strings(&self, expr: &str, alias: &str) -> String {
        format!("json_each({expr}) AS {alias}")
    }
}

/// The typed helpers over [`Sql`], in the shape of rusqlite's so the board reads the same.
pub trait SqlExt: Sql {
    /// The first row, read by `f`; no row is an error ([`Error::NoRow`]).
    fn query_row<T>(&self, sql: &str, params: &[Value], f: impl FnOnce(&Row) -> Result<T>) -> Result<T> {
        match self.rows(sql, params)?.first() {
            Some(r) => f(r),
            None => Err(Error::NoRow),
        }
    }

    /// The first row, read by `f`, or `None`.
    fn query_opt<T>(&self, sql: &str, params: &[Value], f: impl FnOnce(&Row) -> Result<T>) -> Result<Option<T>> {
        self.rows(sql, params)?.first().map(f).transpose()
    }

    /// Every row, each read by `f`.
    fn query_map<T>(&self, sql: &str, params: &[Value], f: impl FnMut(&Row) -> Result<T>) -> Result<Vec<T>> {
        self.rows(sql, params)?.iter().map(f).collect()
    }
}

impl<S: Sql + ?Sized> SqlExt for S {}

/// A database the board runs against, whichever engine: this machine's [`crate::Store`] or a
/// team's PostgreSQL. Object-safe; use it through [`Database::read`] and [`Database::durable`].
pub trait Database: Send + Sync + std::fmt::Debug {
    /// Runs `f` over a consistent view (one snapshot for all its statements).
    fn read_with(&self, f: &mut dyn FnMut(&dyn Sql) -> Result<()>) -> Result<()>;
    /// Runs `f` in one transaction, durable before this returns, and says which of the board's
    /// domains it changed. `f` may run more than once: an engine retries a transaction that met
    /// another (PostgreSQL's serialization failures), so it must not act outside the database.
    fn write_with(&self, f: &mut dyn FnMut(&dyn Sql) -> Result<()>) -> Result<crate::changed::Changed>;
    /// Runs `f` in one transaction whose commit need not reach the disk before this returns
    /// (SQLite's ordinary sync; PostgreSQL's commits are durable anyway): for appends a power cut
    /// may shorten but never corrupt, such as a run's event batches. Announces nothing.
    fn append_with(&self, f: &mut dyn FnMut(&dyn Sql) -> Result<()>) -> Result<()>;
    /// [`Database::write_with`] for a queue's claim: every decision `f` makes is a row-locking
    /// read ([`Sql::row_lock`]) or a statement whose condition repeats it, so it holds without
    /// seeing the database alone. An engine may then run it under read committed, where racing
    /// claimers skip each other's rows or wait for one row instead of failing and trying again.
    fn claim_with(&self, f: &mut dyn FnMut(&dyn Sql) -> Result<()>) -> Result<crate::changed::Changed> {
        self.write_with(f)
    }
    /// What others (other processes, other machines) changed on the board since this handle last
    /// announced, now counted as announced. An engine that cannot tell says nothing changed.
    fn foreign_changes(&self) -> Result<crate::changed::Changed> {
        Ok(crate::changed::Changed::default())
    }
    /// The machine this handle speaks for on a shared board (a team's); `None` on a machine's
    /// own board, where everything is this machine's.
    fn machine(&self) -> Option<String> {
        None
    }
    /// Calls `heard` as soon as another machine's write commits, until the returned handle is
    /// dropped; `None` when this engine cannot tell (then only polling does).
    fn listen(&self, _heard: std::sync::Arc<dyn Fn() + Send + Sync>) -> Option<Listening> {
        None
    }
}

/// Listening to a database's writes; dropping it stops.
pub type Listening = Box<dyn std::any::Any + Send>;

/// A reference to a database is one (so `&store` passes where `&dyn Database` is wanted, whatever
/// `store` already is).
impl<D: Database + ?Sized> Database for &D {
    fn read_with(&self, f: &mut dyn FnMut(&dyn Sql) -> Result<()>) -> Result<()> {
        (**self).read_with(f)
    }

    fn write_with(&self, f: &mut dyn FnMut(&dyn Sql) -> Result<()>) -> Result<crate::changed::Changed> {
        (**self).write_with(f)
    }

    fn append_with(&self, f: &mut dyn FnMut(&dyn Sql) -> Result<()>) -> Result<()> {
        (**self).append_with(f)
    }

    fn claim_with(&self, f: &mut dyn FnMut(&dyn Sql) -> Result<()>) -> Result<crate::changed::Changed> {
        (**self).claim_with(f)
    }

    fn foreign_changes(&self) -> Result<crate::changed::Changed> {
        (**self).foreign_changes()
    }

    fn machine(&self) -> Option<String> {
        (**self).machine()
    }

    fn listen(&self, heard: std::sync::Arc<dyn Fn() + Send + Sync>) -> Option<Listening> {
        (**self).listen(heard)
    }
}

impl dyn Database + '_ {
    /// What `f` reads over one consistent view.
    pub fn read<T>(&self, f: impl FnOnce(&dyn Sql) -> Result<T>) -> Result<T> {
        let mut f = Some(f);
        let mut out = None;
        self.read_with(&mut |db| {
            let f = f.take().ok_or_else(|| Error::invalid("read", "ran twice"))?;
            out = Some(f(db)?);
            Ok(())
        })?;
        out.ok_or_else(|| Error::invalid("read", "did not run"))
    }

    /// What `f` wrote, in one durable transaction (see [`Database::write_with`]).
    pub fn durable<T>(&self, f: impl FnMut(&dyn Sql) -> Result<T>) -> Result<T> {
        self.durable_changes(f).map(|(v, _)| v)
    }

    /// What `f` appended (see [`Database::append_with`]).
    pub fn append<T>(&self, f: impl FnMut(&dyn Sql) -> Result<T>) -> Result<T> {
        returning("append", f, |g| self.append_with(g)).map(|(v, ())| v)
    }

    /// What `f` claimed, in one durable transaction (see [`Database::claim_with`]).
    pub fn claiming<T>(&self, f: impl FnMut(&dyn Sql) -> Result<T>) -> Result<T> {
        returning("claim", f, |g| self.claim_with(g)).map(|(v, _)| v)
    }

    /// [`Self::durable`], with the domains the write changed.
    pub fn durable_changes<T>(&self, f: impl FnMut(&dyn Sql) -> Result<T>) -> Result<(T, crate::changed::Changed)> {
        returning("write", f, |g| self.write_with(g))
    }
}

/// Runs a typed `f` through one of [`Database`]'s object-safe transactions (`run`): what `f`
/// gave the last time it ran (an engine may run it again), and what `run` says.
fn returning<T, R>(
    what: &'static str,
    mut f: impl FnMut(&dyn Sql) -> Result<T>,
    run: impl FnOnce(&mut dyn FnMut(&dyn Sql) -> Result<()>) -> Result<R>,
) -> Result<(T, R)> {
    let mut out = None;
    let r = run(&mut |db| {
        out = Some(f(db)?);
        Ok(())
    })?;
    out.map(|v| (v, r)).ok_or_else(|| Error::invalid(what, "did not run"))
}

impl crate::changed::Revisions {
    /// The revisions as `db` (either engine) holds them.
    pub fn read_from(db: &dyn Sql) -> Result<Self> {
        let mut r = Self::default();
        for (name, v) in db.query_map(
            "SELECT name, value FROM counters WHERE name IN ('tasks_rev', 'signals_rev', 'runs_rev')",
            &[],
            |row| Ok((row.get::<String>(0)?, row.get::<i64>(1)?)),
        )? {
            match name.as_str() {
                "tasks_rev" => r.tasks = v,
                "signals_rev" => r.signals = v,
                _ => r.runs = v,
            }
        }
        Ok(r)
    }
}

/// `values![a, b]`: the parameters of a statement, each converted by [`ToValue`].
#[macro_export]
macro_rules! values {
    ($($v:expr),* $(,)?) => { &[$($crate::sql::ToValue::to_value(&$v)),*] as &[$crate::sql::Value] };
}

/// One row read from a query.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    values: Vec<Value>,
}

impl Row {
    pub fn new(values: Vec<Value>) -> Self {
        Self { values }
    }

    /// Column `i`, converted; a wrong type or a missing column is an error naming it.
    pub fn get<T: FromValue>(&self, i: usize) -> Result<T> {
        let v = self.values.get(i).ok_or_else(|| Error::Column { index: i, reason: "no such column".into() })?;
        T::from_value(v).map_err(|reason| Error::Column { index: i, reason })
    }

    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    pub fn values(&self) -> &[Value] {
        &self.values
    }
}

/// A Rust value that binds as a [`Value`].
pub trait ToValue {
    fn to_value(&self) -> Value;
}

/// A Rust value read from a [`Value`]; the error says what was there instead.
pub trait FromValue: Sized {
    fn from_value(v: &Value) -> std::result::Result<Self, String>;
}

impl ToValue for Value {
    fn to_value(&self) -> Value {
        self.clone()
    }
}

macro_rules! int_value {
    ($($t:ty),*) => {$(
        impl ToValue for $t {
            fn to_value(&self) -> Value {
                // Board integers are counts, ids and epoch ms: all far inside i64.
                Value::Int(i64::try_from(*self).unwrap_or(i64::MAX))
            }
        }
        impl FromValue for $t {
            fn from_value(v: &Value) -> std::result::Result<Self, String> {
                match v {
                    Value::Int(i) => <$t>::try_from(*i).map_err(|_| format!("{i} does not fit {}", stringify!($t))),
                    other => Err(format!("expected an integer, found {}", other.kind())),
                }
            }
        }
    )*};
}
int_value!(i64, i32, u32, u64, usize, i16, u16, u8);

impl ToValue for bool {
    fn to_value(&self) -> Value {
        Value::Int(i64::from(*self))
    }
}

impl FromValue for bool {
    fn from_value(v: &Value) -> std::result::Result<Self, String> {
        match v {
            Value::Int(i) => Ok(*i != 0),
            other => Err(format!("expected a boolean, found {}", other.kind())),
        }
    }
}

impl ToValue for f64 {
    fn to_value(&self) -> Value {
        Value::Real(*self)
    }
}

impl FromValue for f64 {
    fn from_value(v: &Value) -> std::result::Result<Self, String> {
        match v {
            Value::Real(f) => Ok(*f),
            // SQLite hands back whole reals as integers where the column has no type.
            Value::Int(i) => Ok(*i as f64),
            other => Err(format!("expected a number, found {}", other.kind())),
        }
    }
}

impl ToValue for str {
    fn to_value(&self) -> Value {
        Value::Text(self.to_owned())
    }
}

impl ToValue for String {
    fn to_value(&self) -> Value {
        Value::Text(self.clone())
    }
}

impl FromValue for String {
    fn from_value(v: &Value) -> std::result::Result<Self, String> {
        match v {
            Value::Text(s) => Ok(s.clone()),
            other => Err(format!("expected text, found {}", other.kind())),
        }
    }
}

impl ToValue for [u8] {
    fn to_value(&self) -> Value {
        Value::Blob(self.to_vec())
    }
}

impl ToValue for Vec<u8> {
    fn to_value(&self) -> Value {
        Value::Blob(self.clone())
    }
}

impl FromValue for Vec<u8> {
    fn from_value(v: &Value) -> std::result::Result<Self, String> {
        match v {
            Value::Blob(b) => Ok(b.clone()),
            other => Err(format!("expected bytes, found {}", other.kind())),
        }
    }
}

impl ToValue for serde_json::Value {
    fn to_value(&self) -> Value {
        Value::Text(self.to_string())
    }
}

impl FromValue for serde_json::Value {
    fn from_value(v: &Value) -> std::result::Result<Self, String> {
        match v {
            Value::Text(s) => serde_json::from_str(s).map_err(|e| format!("not JSON: {e}")),
            other => Err(format!("expected JSON text, found {}", other.kind())),
        }
    }
}

impl<T: ToValue + ?Sized> ToValue for &T {
    fn to_value(&self) -> Value {
        (**self).to_value()
    }
}

impl<T: ToValue> ToValue for Option<T> {
    fn to_value(&self) -> Value {
        self.as_ref().map_or(Value::Null, ToValue::to_value)
    }
}

impl<T: FromValue> FromValue for Option<T> {
    fn from_value(v: &Value) -> std::result::Result<Self, String> {
        match v {
            Value::Null => Ok(None),
            v => T::from_value(v).map(Some),
        }
    }
}

impl FromValue for Value {
    fn from_value(v: &Value) -> std::result::Result<Self, String> {
        Ok(v.clone())
    }
}

impl Value {
    fn kind(&self) -> &'static str {
        match self {
            Value::Null => "NULL",
            Value::Int(_) => "an integer",
            Value::Real(_) => "a real",
            Value::Text(_) => "text",
            Value::Blob(_) => "bytes",
        }
    }
}

impl rusqlite::ToSql for Value {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        use rusqlite::types::{ToSqlOutput, ValueRef};
        Ok(ToSqlOutput::Borrowed(match self {
            Value::Null => ValueRef::Null,
            Value::Int(i) => ValueRef::Integer(*i),
            Value::Real(f) => ValueRef::Real(*f),
            Value::Text(s) => ValueRef::Text(s.as_bytes()),
            Value::Blob(b) => ValueRef::Blob(b),
        }))
    }
}

impl From<rusqlite::types::ValueRef<'_>> for Value {
    fn from(v: rusqlite::types::ValueRef<'_>) -> Self {
        use rusqlite::types::ValueRef;
        match v {
            ValueRef::Null => Value::Null,
            ValueRef::Integer(i) => Value::Int(i),
            ValueRef::Real(f) => Value::Real(f),
            ValueRef::Text(t) => Value::Text(String::from_utf8_lossy(t).into_owned()),
            ValueRef::Blob(b) => Value::Blob(b.to_vec()),
        }
    }
}

/// This machine's store: a connection, or a transaction through its `Deref`.
impl Sql for rusqlite::Connection {
    fn execute(&self, sql: &str, params: &[Value]) -> Result<usize> {
        let mut stmt = self.prepare_cached(sql)?;
        Ok(stmt.execute(rusqlite::params_from_iter(params))?)
    }

    fn rows(&self, sql: &str, params: &[Value]) -> Result<Vec<Row>> {
        let mut stmt = self.prepare_cached(sql)?;
        let n = stmt.column_count();
        let mut rows = stmt.query(rusqlite::params_from_iter(params))?;
        let mut out = Vec::new();
        while let Some(r) = rows.next()? {
            out.push(Row::new((0..n).map(|i| r.get_ref(i).map(Value::from)).collect::<rusqlite::Result<_>>()?));
        }
        Ok(out)
    }
}

impl Sql for rusqlite::Transaction<'_> {
    fn execute(&self, sql: &str, params: &[Value]) -> Result<usize> {
        Sql::execute(&**self, sql, params)
    }

    fn rows(&self, sql: &str, params: &[Value]) -> Result<Vec<Row>> {
        Sql::rows(&**self, sql, params)
    }
}

/// Rewrites `?N` parameters as PostgreSQL's `$N`, leaving string literals, quoted names and
/// comments alone; a bare `?` (SQLite's next-parameter form) is refused, because the board
/// numbers its parameters so one statement reads the same on both engines.
pub fn numbered_params(sql: &str) -> std::result::Result<String, String> {
    let b = sql.as_bytes();
    let mut out = String::with_capacity(sql.len());
    let mut i = 0;
    let mut last = 0;
    while i < b.len() {
        match b[i] {
            q @ (b'\'' | b'"') => {
                i += 1;
                while i < b.len() && b[i] != q {
                    i += 1;
                }
                i += 1;
            }
            b'-' if b.get(i + 1) == Some(&b'-') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'?' => {
                let digits = b[i + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
                if digits == 0 {
                    return Err(format!("a bare `?` at byte {i}: number every parameter (?1, ?2, …)"));
                }
                out.push_str(&sql[last..i]);
                out.push('$');
                last = i + 1;
                i += 1 + digits;
            }
            _ => i += 1,
        }
    }
    out.push_str(&sql[last..]);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbered_parameters_become_dollars_outside_literals_and_comments() {
        assert_eq!(
            numbered_params("SELECT '?1', \"a?2\" FROM t WHERE a = ?1 AND b = ?12 -- ?3\n AND c = ?2").unwrap(),
            "SELECT '?1', \"a?2\" FROM t WHERE a = $1 AND b = $12 -- ?3\n AND c = $2"
        );
        assert!(numbered_params("SELECT ?").unwrap_err().contains("bare `?`"));
    }

    #[test]
    fn rows_come_back_as_values_and_convert_with_errors_that_name_the_column() {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        let c: &dyn Sql = &conn;
        c.execute("CREATE TABLE t (a INTEGER, b TEXT, c REAL, d BLOB)", &[]).unwrap();
        let n = c.execute("INSERT INTO t VALUES (?1, ?2, ?3, ?4)", values![7i64, "x", 1.5, vec![1u8, 2]]).unwrap();
        assert_eq!(n, 1);
        c.execute("INSERT INTO t VALUES (?1, ?2, NULL, NULL)", values![None::<i64>, Some("y")]).unwrap();
        let rows: Vec<(Option<i64>, String, Option<f64>)> =
            c.query_map("SELECT a, b, c FROM t ORDER BY b", &[], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).unwrap();
        assert_eq!(rows, vec![(Some(7), "x".into(), Some(1.5)), (None, "y".into(), None)]);
        let err = c.query_row("SELECT b FROM t", &[], |r| r.get::<i64>(0)).unwrap_err();
        assert!(err.to_string().contains("column 0") && err.to_string().contains("expected an integer"), "{err}");
        assert!(matches!(c.query_row("SELECT a FROM t WHERE 0", &[], |r| r.get::<i64>(0)), Err(Error::NoRow)));
        assert_eq!(c.query_opt("SELECT a FROM t WHERE 0", &[], |r| r.get::<i64>(0)).unwrap(), None);
    }
}
