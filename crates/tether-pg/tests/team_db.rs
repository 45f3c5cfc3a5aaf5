//! The team database against a real PostgreSQL (a throwaway cluster of Debian's, one per run of
//! this file, a database per test): the board's portable SQL reads the same as on SQLite, each way
//! a connection fails says what to do, the schema migrates once however many machines join at
//! once, a machine's name has one holder, and serializable transactions that meet are retried
//! until every one counts, and the pool reaches a restarted server again by itself.

use std::time::Duration;

use tether_pg::machines::{self, CheckIn};
use tether_pg::migrate::{self, MIGRATIONS};
use tether_pg::{ClientIdentity, ConnectError, PgConn, PgPool, Target};
use tether_store::sql::{Database, Sql, SqlExt, Value};
use tether_store::values;
use tether_testkit::pg::{CERT_USER, Cluster, PASSWORD};

const T: Duration = Duration::from_secs(10);

fn fresh() -> (String, PgConn) {
    let url = Cluster::shared().database();
    let conn = Target::parse(&url).unwrap().connect(Some(PASSWORD), T).unwrap();
    (url, conn)
}

fn migrated() -> PgConn {
    let (_, conn) = fresh();
    migrate::migrate(&conn).unwrap();
    conn
}

#[test]
fn the_same_statements_read_the_same_on_sqlite_and_postgresql() {
    let (_, pg) = fresh();
    pg.batch("CREATE TABLE t (k TEXT PRIMARY KEY, n BIGINT NOT NULL, f DOUBLE PRECISION, j TEXT, b BYTEA, flag BIGINT NOT NULL DEFAULT 0)")
        .unwrap();
    let lite = rusqlite::Connection::open_in_memory().unwrap();
    lite.execute_batch("CREATE TABLE t (k TEXT PRIMARY KEY, n INTEGER NOT NULL, f REAL, j TEXT, b BLOB, flag INTEGER NOT NULL DEFAULT 0) STRICT")
        .unwrap();
    let run = |db: &dyn Sql| -> Vec<Vec<Value>> {
        let upsert = "INSERT INTO t(k, n, f, j, b, flag) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                      ON CONFLICT (k) DO UPDATE SET n = t.n + excluded.n RETURNING n";
        let mut out = Vec::new();
        for (k, n) in [("a", 1i64), ("b", 2), ("a", 40)] {
            let row = db.rows(upsert, values![k, n, 0.25, r#"{"x":[1,"é"]}"#, vec![0u8, 255], true]).unwrap();
            out.push(row[0].values().to_vec());
        }
        assert_eq!(db.execute("UPDATE t SET f = NULL, j = NULL WHERE k = ?1", values!["b"]).unwrap(), 1);
        out.extend(
            db.rows("SELECT k, n, f, j, b, flag FROM t ORDER BY k", &[]).unwrap().iter().map(|r| r.values().to_vec()),
        );
        out.extend(
            db.rows("SELECT count(*), sum(n), COALESCE(max(f), -1.0), min(k) || '!' FROM t WHERE n > ?1", values![0])
                .unwrap()
                .iter()
                .map(|r| r.values().to_vec()),
        );
        out
    };
    let on_pg = run(&pg);
    assert_eq!(on_pg, run(&lite));
    assert_eq!(on_pg[0], vec![Value::Int(1)]);
    assert_eq!(on_pg[2], vec![Value::Int(41)], "the upsert's RETURNING gives the row after the update");
    assert_eq!(
        on_pg.last().unwrap(),
        &vec![Value::Int(2), Value::Int(43), Value::Real(0.25), Value::Text("a!".into())]
    );
}

#[test]
fn each_way_a_connection_fails_says_what_to_do() {
    let cluster = Cluster::shared();
    let good = Target::parse(&cluster.url("postgres")).unwrap();
    assert!(good.connect(Some(PASSWORD), T).is_ok());
    let err = |url: &str, pw: Option<&str>| Target::parse(url).unwrap().connect(pw, T).unwrap_err();

    assert!(
        matches!(err(&cluster.url("postgres"), Some("wrong")), ConnectError::AuthFailed { user } if user == "tether")
    );
    let missing = err(&cluster.url("postgres"), None);
    assert!(matches!(missing, ConnectError::PasswordMissing(_)), "{missing:?}");
    assert_eq!(err(&cluster.url("nosuchdb"), Some(PASSWORD)), ConnectError::NoDatabase("nosuchdb".into()));
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let refused = err(&format!("postgres://tether@127.0.0.1:{closed}/x"), Some(PASSWORD));
    assert_eq!(refused, ConnectError::Refused(format!("127.0.0.1:{closed}")));
    assert!(refused.to_string().contains("is PostgreSQL running there"), "{refused}");
    let tls = err(&format!("{}?sslmode=require", cluster.url("postgres")), Some(PASSWORD));
    assert!(matches!(tls, ConnectError::TlsNotOffered(_)), "{tls:?}");
    let no_root =
        err(&format!("{}?sslmode=verify-full&sslrootcert=/nonexistent/root.crt", cluster.url("postgres")), None);
    assert!(matches!(no_root, ConnectError::Tls(ref m) if m.contains("/nonexistent/root.crt")), "{no_root:?}");
    let plain = Target::parse(&format!("{}?sslmode=disable&connect_timeout=3", cluster.url("postgres"))).unwrap();
    assert!(plain.connect(Some(PASSWORD), T).is_ok());
}

#[test]
fn tls_as_libpq_sslmode_says_up_to_verify_full() {
    let cluster = Cluster::start_tls();
    let ca = cluster.ca_file().display().to_string();
    let url = |host: &str, query: &str| format!("postgres://tether@{host}:{}/postgres?{query}", cluster.port);
    let connect = |u: &str| Target::parse(u).unwrap().connect(Some(PASSWORD), T);

    // The server takes TLS only: without it, pg_hba says no.
    let plain = connect(&url("127.0.0.1", "sslmode=disable")).unwrap_err();
    assert!(matches!(plain, ConnectError::NotAllowed { .. }), "{plain:?}");
    // Encrypted, the server unchecked (no root certificate given), as libpq's require and prefer.
    connect(&url("127.0.0.1", "sslmode=require")).unwrap();
    connect(&url("127.0.0.1", "sslmode=prefer")).unwrap();
    // Checked against the CA and the name in the certificate (127.0.0.1, not localhost).
    let conn = connect(&url("127.0.0.1", &format!("sslmode=verify-full&sslrootcert={ca}"))).unwrap();
    let on: String = tether_store::sql::SqlExt::query_row(
        &conn,
        "SELECT CASE WHEN ssl THEN 'tls' ELSE 'plain' END FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
        &[],
        |r| r.get(0),
    )
    .unwrap();
    assert_eq!(on, "tls");
    let wrong_name = connect(&url("localhost", &format!("sslmode=verify-full&sslrootcert={ca}"))).unwrap_err();
    assert!(matches!(wrong_name, ConnectError::CertificateRefused(_)), "{wrong_name:?}");
    assert!(wrong_name.to_string().contains("host name"), "{wrong_name}");
    connect(&url("localhost", &format!("sslmode=verify-ca&sslrootcert={ca}"))).unwrap();
    let other = cluster.other_ca_file().display().to_string();
    let stranger = connect(&url("127.0.0.1", &format!("sslmode=verify-ca&sslrootcert={other}"))).unwrap_err();
    assert!(matches!(stranger, ConnectError::CertificateRefused(_)), "{stranger:?}");
    // A root certificate given makes require check the chain too, as libpq does.
    let checked = connect(&url("127.0.0.1", &format!("sslmode=require&sslrootcert={other}"))).unwrap_err();
    assert!(matches!(checked, ConnectError::CertificateRefused(_)), "{checked:?}");

    // A user pg_hba signs in by certificate: the one kept apart from the URL (the keyring's)
    // lets it in without a password; none, or one from a CA the server does not trust, does not.
    let as_cert_user =
        format!("postgres://{CERT_USER}@127.0.0.1:{}/postgres?sslmode=verify-full&sslrootcert={ca}", cluster.port);
    let identity = |stranger: bool| {
        let (crt, key) = cluster.client_cert_files(stranger);
        let pem = std::fs::read_to_string(crt).unwrap() + &std::fs::read_to_string(key).unwrap();
        ClientIdentity::parse(&pem).unwrap()
    };
    let with = |id: Option<ClientIdentity>| Target::parse(&as_cert_user).unwrap().with_identity(id).connect(None, T);
    let conn = with(Some(identity(false))).unwrap();
    let user: String = conn.query_row("SELECT current_user::text", &[], |r| r.get(0)).unwrap();
    assert_eq!(user, CERT_USER);
    let none = with(None).unwrap_err();
    assert!(matches!(none, ConnectError::NotAllowed { .. }), "{none:?}");
    assert!(with(Some(identity(true))).is_err(), "a certificate from a CA the server does not trust");
    // The files libpq names in the URL still work when nothing is kept.
    let (crt, key) = cluster.client_cert_files(false);
    let by_files = format!("{as_cert_user}&sslcert={}&sslkey={}", crt.display(), key.display());
    Target::parse(&by_files).unwrap().connect(None, T).unwrap();
    // What is kept is checked, and never shown.
    let bad =
        ClientIdentity::parse("-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n").unwrap_err();
    assert!(bad.contains("client certificate"), "{bad}");
    let cert_only = std::fs::read_to_string(cluster.client_cert_files(false).0).unwrap();
    assert!(ClientIdentity::parse(&cert_only).unwrap_err().contains("private key"));
    assert_eq!(format!("{:?}", identity(false)), "ClientIdentity(…)");
}

#[test]
fn the_schema_migrates_once_however_many_machines_join_at_once() {
    let url = Cluster::shared().database();
    let joined: Vec<usize> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let url = url.clone();
                s.spawn(move || {
                    let conn = Target::parse(&url).unwrap().connect(Some(PASSWORD), T).unwrap();
                    migrate::migrate(&conn).unwrap()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(joined, vec![MIGRATIONS.len(); 4]);
    let conn = Target::parse(&url).unwrap().connect(Some(PASSWORD), T).unwrap();
    let applied: i64 = conn.query_row("SELECT count(*) FROM tether_schema", &[], |r| r.get(0)).unwrap();
    assert_eq!(applied as usize, MIGRATIONS.len());
    insta::assert_snapshot!("team_schema", migrate::dump_schema(&conn).unwrap());

    conn.execute("INSERT INTO tether_schema(version, name) VALUES (99, 'from the future')", &[]).unwrap();
    let newer = migrate::migrate(&conn).unwrap_err().to_string();
    assert!(newer.contains("newer than this Tether knows") && newer.contains("upgrade Tether"), "{newer}");
}

#[test]
fn a_machine_name_has_one_holder_until_it_goes_quiet() {
    let db = migrated();
    let me = |instance: &str, host: &str| CheckIn {
        name: "laptop".into(),
        instance: instance.into(),
        host: host.into(),
        person: format!("pat on {host}"),
        runner: instance == "b",
        labels: vec!["linux".into(), " gpu ".into()],
        version: "0.1.0".into(),
    };
    machines::check_in(&db, &me("a", "host-a")).unwrap();
    machines::check_in(&db, &me("a", "host-a")).unwrap();
    let taken = machines::check_in(&db, &me("b", "host-b")).unwrap_err().to_string();
    assert!(taken.contains("held by another Tether (on host \"host-a\"") && taken.contains("--machine"), "{taken}");
    let seen = machines::list(&db).unwrap();
    assert_eq!((seen.len(), seen[0].host.as_str(), seen[0].runner), (1, "host-a", false));
    assert_eq!(seen[0].person, "pat on host-a", "who works there");
    assert_eq!(seen[0].labels, ["linux", "gpu"]);
    assert!((0..5_000).contains(&seen[0].seen_ago_ms), "{}", seen[0].seen_ago_ms);

    db.execute("UPDATE machines SET last_seen = last_seen - ?1", values![machines::NAME_HELD_MS + 1]).unwrap();
    machines::check_in(&db, &me("b", "host-b")).unwrap();
    let seen = machines::list(&db).unwrap();
    assert_eq!((seen[0].host.as_str(), seen[0].runner), ("host-b", true));
    assert!(machines::check_in(&db, &me("a", "host-a")).is_err(), "the quiet one lost its name to the one that came");
}

#[test]
fn serializable_transactions_that_meet_are_retried_until_every_one_counts() {
    let (url, db) = fresh();
    db.batch("CREATE TABLE counter (n BIGINT NOT NULL); INSERT INTO counter VALUES (0)").unwrap();
    std::thread::scope(|s| {
        for _ in 0..6 {
            let url = url.clone();
            s.spawn(move || {
                let conn = Target::parse(&url).unwrap().connect(Some(PASSWORD), T).unwrap();
                for _ in 0..20 {
                    // Read, then write what was read plus one: lost updates unless serialized.
                    conn.transaction(|tx| {
                        let n: i64 = tx.query_row("SELECT n FROM counter", &[], |r| r.get(0))?;
                        tx.execute("UPDATE counter SET n = ?1", values![n + 1])
                    })
                    .unwrap();
                }
            });
        }
    });
    let n: i64 = db.query_row("SELECT n FROM counter", &[], |r| r.get(0)).unwrap();
    assert_eq!(n, 120);
}

#[test]
fn the_pool_says_what_a_write_changed_and_reaches_a_restarted_server_by_itself() {
    // A cluster of its own: stopping the shared one would cut the other tests off.
    let cluster = Cluster::start();
    let url = cluster.database();
    let pool = PgPool::new(Target::parse(&url).unwrap(), Some(PASSWORD.into()), Duration::from_secs(2));
    let db: &dyn Database = &pool;
    pool.with(|c| {
        c.batch(
            "CREATE TABLE counters (name TEXT PRIMARY KEY, value BIGINT NOT NULL);
             INSERT INTO counters VALUES ('tasks_rev', 0), ('signals_rev', 0), ('runs_rev', 0);
             CREATE TABLE notes (id BIGINT PRIMARY KEY, text TEXT NOT NULL)",
        )
    })
    .unwrap();
    let write = |id: i64| {
        db.durable_changes(|tx| {
            tx.execute("INSERT INTO notes VALUES (?1, ?2)", values![id, "kept"])?;
            tx.execute("UPDATE counters SET value = value + 1 WHERE name = 'tasks_rev'", &[])
        })
    };
    let (_, changed) = write(1).unwrap();
    assert_eq!((changed.tasks, changed.signals, changed.runs), (Some(1), None, None));

    cluster.stop();
    let down = write(2).unwrap_err();
    assert_eq!(down.code(), tether_store::ErrorCode::Busy, "{down}");
    assert!(down.to_string().contains("team database"), "{down}");
    cluster.restart();
    write(3).unwrap();
    let ids: Vec<i64> = db.read(|c| c.query_map("SELECT id FROM notes ORDER BY id", &[], |r| r.get(0))).unwrap();
    assert_eq!(ids, [1, 3], "what was acknowledged is there; what failed is not");
}

/// A table's columns as `(name, type, NOT NULL)`, the type as the engine declares it.
type Columns = std::collections::BTreeMap<String, (String, bool)>;

/// The tables of this machine's SQLite store that are never on a team's database: the chat
/// history and its index, code origin, usage, MCP sessions, the store's own bookkeeping. Every
/// other table of the store is the board's, and the team schema has it too.
/// (A full-text index's shadow tables, `messages_fts_data` and the like, go with it.)
const MACHINE_ONLY: &[&str] = &[
    // The chat history and its index.
    "sources",
    "sessions",
    "messages",
    "messages_fts",
    "titles_fts",
    "fts_terms",
    "skipped",
    "session_meta",
    "session_tags",
    "workspaces",
    "workspace_members",
    // Code origin.
    "trace_edits",
    "trace_lines",
    "trace_repos",
    // Usage as Cursor reports it to this person.
    "chat_usage",
    "usage_events",
    // The MCP sessions this machine's daemon holds.
    "mcp_sessions",
];

/// The tables only a team's database has: its machines and its migrations' record.
const TEAM_ONLY: &[&str] = &["machines", "tether_schema"];

fn sqlite_tables() -> std::collections::BTreeMap<String, Columns> {
    let store = tether_store::Store::open_in_memory().unwrap();
    let conn = store.writer();
    let names: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    names
        .into_iter()
        .map(|t| {
            let cols = conn
                .prepare("SELECT name, upper(type), \"notnull\" OR pk > 0 FROM pragma_table_info(?1)")
                .unwrap()
                .query_map([&t], |r| Ok((r.get::<_, String>(0)?, (r.get::<_, String>(1)?, r.get::<_, bool>(2)?))))
                .unwrap()
                .map(Result::unwrap)
                .collect();
            (t, cols)
        })
        .collect()
}

fn team_tables(conn: &PgConn) -> std::collections::BTreeMap<String, Columns> {
    let mut out = std::collections::BTreeMap::<String, Columns>::new();
    for (t, c, ty, not_null) in conn
        .query_map(
            "SELECT table_name::text, column_name::text, data_type::text, is_nullable = 'NO'
             FROM information_schema.columns WHERE table_schema = current_schema()
             ORDER BY table_name, ordinal_position",
            &[],
            |r| Ok((r.get::<String>(0)?, r.get::<String>(1)?, r.get::<String>(2)?, r.get::<bool>(3)?)),
        )
        .unwrap()
    {
        out.entry(t).or_default().insert(c, (ty, not_null));
    }
    out
}

fn machine_only(table: &str) -> bool {
    MACHINE_ONLY
        .iter()
        .any(|m| table == *m || table.strip_prefix(m).is_some_and(|rest| rest.starts_with('_') && m.ends_with("_fts")))
}

/// The team schema's type for a column SQLite declares as `sqlite` (what `tether_pg::value` maps
/// each storage class to and from).
fn team_types(sqlite: &str) -> &'static [&'static str] {
    match sqlite {
        "INTEGER" => &["bigint"],
        "TEXT" => &["text", "jsonb"],
        "REAL" => &["double precision"],
        "BLOB" => &["bytea"],
        _ => &[],
    }
}

#[test]
fn the_team_schema_has_the_boards_tables_as_sqlite_has_them_and_none_of_the_machines() {
    let sqlite = sqlite_tables();
    let team = team_tables(&migrated());
    let leaked: Vec<&String> = team.keys().filter(|t| machine_only(t)).collect();
    assert!(leaked.is_empty(), "machine-local tables in the team schema: {leaked:?}");
    let board: Vec<&String> = sqlite.keys().filter(|t| !machine_only(t)).collect();
    let shared: Vec<&String> = team.keys().filter(|t| !TEAM_ONLY.contains(&t.as_str())).collect();
    assert_eq!(
        board, shared,
        "the store's board tables and the team schema's differ: a board table goes in both (a store migration \
         and a tether-pg one), a machine's own table in MACHINE_ONLY"
    );
    for t in board {
        let (mine, theirs) = (&sqlite[t], &team[t]);
        assert_eq!(mine.keys().collect::<Vec<_>>(), theirs.keys().collect::<Vec<_>>(), "the columns of {t}");
        for (col, (ty, not_null)) in mine {
            let (pg, pg_not_null) = &theirs[col];
            assert!(team_types(ty).contains(&pg.as_str()), "{t}.{col} is {ty} on SQLite but {pg} in the team schema");
            assert_eq!(not_null, pg_not_null, "{t}.{col}: NOT NULL on one engine only");
        }
    }
}
