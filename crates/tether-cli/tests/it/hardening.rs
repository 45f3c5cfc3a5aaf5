//! What a shared machine and an unlucky second do to Tether: many processes opening one new data
//! dir at once (the daemon at login and a CLI command in the same second), and files other local
//! users must not be able to read.

use std::process::{Command, Stdio};
use std::time::Duration;

use crate::env::{tether_in, tether_on};

fn tether(dir: &std::path::Path) -> Command {
    let mut c = tether_in(dir);
    c.env("TETHER_TOKEN", "hardening-token");
    c
}

/// The daemon and eight CLI commands start on a fresh data dir at the same moment, five times
/// over: every one of them succeeds and the schema is applied once.
#[test]
fn many_processes_opening_a_new_data_dir_at_once_all_succeed() {
    for round in 0..5 {
        let dir = tempfile::tempdir().unwrap();
        let mut daemon = tether(dir.path())
            .args(["serve", "--port", "0"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let clis: Vec<_> = (0..8)
            .map(|i| {
                let args: &[&str] = match i % 4 {
                    0 => &["sessions", "list", "--json"],
                    1 => &["task", "list", "--json"],
                    2 => &["signals", "list", "--json"],
                    _ => &["runs", "list", "--json"],
                };
                tether(dir.path()).args(args).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap()
            })
            .collect();
        for c in clis {
            let out = c.wait_with_output().unwrap();
            assert!(out.status.success(), "round {round}: {}", String::from_utf8_lossy(&out.stderr));
        }
        std::thread::sleep(Duration::from_millis(300));
        assert!(daemon.try_wait().unwrap().is_none(), "round {round}: the daemon died");
        let _ = Command::new("kill").args(["-TERM", &daemon.id().to_string()]).status();
        let out = daemon.wait_with_output().unwrap();
        assert!(out.status.success(), "round {round}: {}", String::from_utf8_lossy(&out.stderr));
        let db = rusqlite::Connection::open(dir.path().join("data/index.db")).unwrap();
        let version: i64 = db.query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
        assert!(version >= 8, "migrated to the latest schema once");
    }
}

#[cfg(unix)]
#[test]
fn the_data_dir_and_the_index_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = tether(dir.path()).args(["task", "add", "private thoughts"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&data), 0o700, "the data dir is tightened");
    for f in ["index.db", "index.db-wal", "index.db-shm"] {
        let p = data.join(f);
        if p.exists() {
            assert_eq!(mode(&p), 0o600, "{f}");
        }
    }
}

/// Eight people (or scripts) tag chats at the same moment, five rounds: none fails with
/// "database is locked".
#[test]
fn concurrent_tag_writes_all_succeed() {
    let fx = tether_testkit::CursorFixture::new();
    tether_testkit::eras::build_all(&fx);
    let dir = tempfile::tempdir().unwrap();
    let cmd = || {
        let mut c = tether_on(&fx, &dir.path().join("data"));
        c.env("NO_COLOR", "1");
        c
    };
    assert!(cmd().arg("index").output().unwrap().status.success());
    let id = tether_testkit::eras::ids::B_SPLIT;
    for round in 0..5 {
        let all: Vec<_> = (0..8)
            .map(|i| {
                cmd()
                    .args(["sessions", "tag", id, "--add", &format!("r{round}-w{i}")])
                    .stdout(Stdio::null())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for c in all {
            let out = c.wait_with_output().unwrap();
            assert!(out.status.success(), "round {round}: {}", String::from_utf8_lossy(&out.stderr));
        }
    }
    let out = cmd().args(["sessions", "show", id, "--json", "--limit", "1"]).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["tags"].as_array().unwrap().len(), 40, "every tag written");
}

/// `tether … | head -c 1`: the pipe closes early; the CLI stops quietly, without a panic.
#[test]
fn a_closed_output_pipe_is_not_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..30 {
        let out = tether(dir.path()).args(["task", "add", &format!("task number {i}")]).output().unwrap();
        assert!(out.status.success());
    }
    let mut child = tether(dir.path())
        .args(["task", "list", "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Read;
    let mut one = [0u8; 1];
    child.stdout.as_mut().unwrap().read_exact(&mut one).unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked") && !err.contains("Broken pipe"), "{err}");

    // A limit above what one list holds is refused, not silently cut.
    let out = tether(dir.path()).args(["task", "list", "--json", "--limit", "1000"]).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("more than 500"), "{}", String::from_utf8_lossy(&out.stderr));
    let out = tether(dir.path()).args(["task", "list", "--json", "--limit", "500"]).output().unwrap();
    let listed: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(listed["tasks"].as_array().map(Vec::len), Some(30));
}

/// `tether open` sends the token only to a daemon of ours: a `daemon.json` owned by another
/// user (someone who took the port after a crash) is not believed. Needs root to hand the file
/// to another user; skipped otherwise.
#[cfg(unix)]
#[test]
fn the_token_goes_only_to_our_own_daemon() {
    use std::os::unix::fs::MetadataExt;
    let dir = tempfile::tempdir().unwrap();
    let mut daemon =
        tether(dir.path()).args(["serve", "--port", "0"]).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    let info = dir.path().join("data/daemon.json");
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while !info.exists() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let ok = tether(dir.path()).args(["open", "--print"]).output().unwrap();
    assert!(ok.status.success() && String::from_utf8_lossy(&ok.stdout).contains("/login?code="));
    if std::fs::metadata(&info).unwrap().uid() == 0 {
        let chown = Command::new("chown").args(["65534", info.to_str().unwrap()]).status().unwrap();
        assert!(chown.success());
        let out = tether(dir.path()).args(["open", "--print"]).output().unwrap();
        assert!(!out.status.success(), "a daemon.json of another user is not trusted");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("not running"),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let _ = Command::new("kill").args(["-TERM", &daemon.id().to_string()]).status();
    let _ = daemon.wait();
}

/// What a finished index holds, for comparing two: sessions (id, title, count, searchable) and
/// every message's (session, seq, content hash).
type IndexContent = (Vec<(String, Option<String>, i64, bool)>, Vec<(String, i64, i64)>);

fn index_content(data: &std::path::Path) -> IndexContent {
    let db = rusqlite::Connection::open(data.join("index.db")).unwrap();
    // FTS5 checks its index against the messages table; an error here means they disagree.
    db.execute("INSERT INTO messages_fts(messages_fts, rank) VALUES ('integrity-check', 1)", []).unwrap();
    let mut s = db.prepare("SELECT id, title, message_count, searchable FROM sessions ORDER BY id").unwrap();
    let sessions = s.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))).unwrap();
    let mut m = db.prepare("SELECT session_id, seq, hash FROM messages ORDER BY session_id, seq").unwrap();
    let messages = m.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).unwrap();
    (sessions.map(Result::unwrap).collect(), messages.map(Result::unwrap).collect())
}

/// FTS5's stored automerge setting (`None`: never set, its default). Read by the kill tests,
/// which are Unix's (SIGKILL).
#[cfg(unix)]
fn automerge(db: &rusqlite::Connection) -> Option<i64> {
    use rusqlite::OptionalExtension;
    db.query_row("SELECT v FROM messages_fts_config WHERE k = 'automerge'", [], |r| r.get(0)).optional().unwrap()
}

/// A first index killed with SIGKILL at several points (after listing every chat, after one and
/// after three batches of chats) converges when run again: every chat once, all searchable, the
/// same messages and search results as an index never interrupted, and a tag set meanwhile kept.
/// At each stop the chats already searchable are the newest ones. The killed pass is a bulk one
/// (FTS5 merging deferred); the pass after it puts merging back.
#[cfg(unix)]
#[test]
fn a_first_index_killed_at_any_point_converges() {
    use tether_testkit::generate::{GenSpec, generate_global};
    let fx = tether_testkit::CursorFixture::new();
    let stats = generate_global(&fx.global_path(), &GenSpec { target_bytes: 3 << 20, seed: 7 }).unwrap();
    let run = |dir: &std::path::Path, args: &[&str]| {
        let out = tether(dir).env("TETHER_CURSOR_DIR", &fx.user_dir).args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    let clean = tempfile::tempdir().unwrap();
    // Uninterrupted and a bulk pass: it merges at the end and puts FTS5's merging back.
    let out = tether(clean.path())
        .env("TETHER_CURSOR_DIR", &fx.user_dir)
        .env("TETHER_TEST_BULK_BYTES", "0")
        .args(["index"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let want = index_content(&clean.path().join("data"));
    assert_eq!(want.0.len() as u64, stats.composers, "every generated chat is indexed");
    let db = rusqlite::Connection::open(clean.path().join("data/index.db")).unwrap();
    assert_eq!(automerge(&db), Some(4), "a bulk pass restores FTS5's merging when done");
    drop(db);
    let word = "\"return value\"";
    let want_hits = run(clean.path(), &["sessions", "search", word, "--json"]);

    let batch = 3;
    for pause_at in [1u64, 2, 4] {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("paused");
        let mut child = tether(dir.path())
            .env("TETHER_CURSOR_DIR", &fx.user_dir)
            .env("TETHER_TEST_BATCH_SESSIONS", batch.to_string())
            .env("TETHER_TEST_PAUSE_AFTER_BATCHES", pause_at.to_string())
            .env("TETHER_TEST_PAUSE_MARKER", &marker)
            // A bulk pass, whatever the size: FTS5 merging deferred until the end.
            .env("TETHER_TEST_BULK_BYTES", "0")
            .args(["index"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        tether_testkit::wait_until("the first index to pause", Duration::from_secs(60), || marker.exists());
        let db = rusqlite::Connection::open(dir.path().join("data/index.db")).unwrap();
        let rows: Vec<(String, i64, bool)> = db
            .prepare("SELECT id, coalesce(updated_at, 0), searchable FROM sessions ORDER BY 2 DESC")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(rows.len(), want.0.len(), "pause {pause_at}: every chat is listed");
        let searchable = rows.iter().filter(|r| r.2).count();
        assert_eq!(searchable, (batch * (pause_at - 1) as usize).min(rows.len()), "pause {pause_at}");
        assert!(rows.iter().take(searchable).all(|r| r.2), "pause {pause_at}: the newest chats go first: {rows:?}");
        let pending = rows.iter().find(|r| !r.2).expect("a chat not read yet").0.clone();
        if pause_at > 1 {
            assert_eq!(automerge(&db), Some(0), "pause {pause_at}: the bulk pass defers merging");
        }
        drop(db);
        // Search answers from what is indexed and says how much that is.
        let out = tether(dir.path())
            .env("TETHER_CURSOR_DIR", &fx.user_dir)
            .args(["sessions", "search", word, "--json", "--limit", "100"])
            .output()
            .unwrap();
        let hits: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let ready: Vec<&str> = rows.iter().filter(|r| r.2).map(|r| r.0.as_str()).collect();
        for h in hits.as_array().unwrap() {
            let id = h["session_id"].as_str().unwrap();
            assert!(ready.contains(&id) || h["seq"].is_null(), "pause {pause_at}: a hit in a chat not read yet: {h}");
        }
        let note = format!("still indexing: {searchable} of {} chats searchable", rows.len());
        assert!(String::from_utf8_lossy(&out.stderr).contains(&note), "pause {pause_at}: {out:?}");
        run(dir.path(), &["sessions", "tag", &pending, "--add", "keep"]);
        let listed = run(dir.path(), &["sessions", "list", "--json", "--limit", "1000"]);
        assert!(listed.contains("\"searchable\": false"), "the list marks chats not read yet");
        child.kill().unwrap();
        child.wait().unwrap();

        // Not a bulk pass (a small fixture): it finds the killed pass's setting and restores it.
        run(dir.path(), &["index"]);
        assert_eq!(index_content(&dir.path().join("data")), want, "pause {pause_at}: converged");
        let db = rusqlite::Connection::open(dir.path().join("data/index.db")).unwrap();
        assert_ne!(automerge(&db), Some(0), "pause {pause_at}: FTS5 merges as it writes again");
        assert_eq!(run(dir.path(), &["sessions", "search", word, "--json"]), want_hits, "pause {pause_at}");
        let tagged = run(dir.path(), &["sessions", "list", "--tag", "keep", "--json"]);
        assert!(tagged.contains(&pending), "pause {pause_at}: the tag survives: {tagged}");
    }
}

/// A composer that Cursor's DB cannot give us (a damaged page, here a test hook) is skipped and
/// counted: the source says partial and why, every other chat is read, older ones included, and
/// the next pass over the DB (once Cursor writes to it) reads it.
#[test]
fn an_unreadable_composer_is_skipped_counted_and_read_again_later() {
    use tether_testkit::generate::{GenSpec, generate_global};
    let fx = tether_testkit::CursorFixture::new();
    generate_global(&fx.global_path(), &GenSpec { target_bytes: 1 << 20, seed: 5 }).unwrap();
    let index = |dir: &std::path::Path, unreadable: Option<&str>| {
        let mut cmd = tether(dir);
        cmd.env("TETHER_CURSOR_DIR", &fx.user_dir).args(["index"]);
        if let Some(id) = unreadable {
            cmd.env("TETHER_TEST_UNREADABLE", id);
        }
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    };
    let clean = tempfile::tempdir().unwrap();
    index(clean.path(), None);
    let want = index_content(&clean.path().join("data"));
    // The newest chat: every other one is read after it.
    let newest: String = rusqlite::Connection::open(clean.path().join("data/index.db"))
        .unwrap()
        .query_row("SELECT id FROM sessions ORDER BY coalesce(updated_at, created_at) DESC LIMIT 1", [], |r| r.get(0))
        .unwrap();

    let dir = tempfile::tempdir().unwrap();
    index(dir.path(), Some(&newest));
    let got = index_content(&dir.path().join("data"));
    let others: Vec<_> = want.0.iter().filter(|s| s.0 != newest).cloned().collect();
    assert!(got.0 == others, "every other chat is read and searchable; the unreadable one is not listed");
    let db = rusqlite::Connection::open(dir.path().join("data/index.db")).unwrap();
    let (status, reasons): (String, String) = db
        .query_row("SELECT status, reasons FROM sources WHERE kind = 'global'", [], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap();
    assert_eq!((status.as_str(), reasons.as_str()), ("partial", r#"{"unreadable":1}"#));
    drop(db);

    // Cursor writes to its DB again (another chat gets a message): the next pass reads it.
    let mut cursor = rusqlite::Connection::open(fx.global_path()).unwrap();
    let other = tether_testkit::generate::split_composer_ids(&cursor, 10)
        .unwrap()
        .into_iter()
        .find(|id| *id != newest)
        .unwrap();
    tether_testkit::generate::append_bubble(&mut cursor, &other, "appended-bubble", "one more message").unwrap();
    drop(cursor);
    index(dir.path(), None);
    let got = index_content(&dir.path().join("data"));
    let session = |c: &IndexContent| c.0.iter().find(|s| s.0 == newest).cloned();
    let messages = |c: &IndexContent| c.1.iter().filter(|m| m.0 == newest).cloned().collect::<Vec<_>>();
    assert!(session(&got).is_some() && session(&got) == session(&want), "read on the next pass");
    assert!(messages(&got) == messages(&want), "with all its messages");
    let db = rusqlite::Connection::open(dir.path().join("data/index.db")).unwrap();
    let status: String = db.query_row("SELECT status FROM sources WHERE kind = 'global'", [], |r| r.get(0)).unwrap();
    assert_eq!(status, "complete");
    drop(db);

    // A chat read before that turns unreadable keeps what was read, and is read again later.
    let mut cursor = rusqlite::Connection::open(fx.global_path()).unwrap();
    tether_testkit::generate::append_bubble(&mut cursor, &newest, "appended-to-newest", "a later message").unwrap();
    drop(cursor);
    let count = |dir: &std::path::Path| messages(&index_content(&dir.join("data"))).len();
    let before = count(dir.path());
    index(dir.path(), Some(&newest));
    let got = index_content(&dir.path().join("data"));
    assert!(messages(&got) == messages(&want), "what was read of it stays, unchanged");
    let db = rusqlite::Connection::open(dir.path().join("data/index.db")).unwrap();
    let reasons: String = db.query_row("SELECT reasons FROM sources WHERE kind = 'global'", [], |r| r.get(0)).unwrap();
    assert_eq!(reasons, r#"{"unreadable":1}"#);
    drop(db);
    index(dir.path(), None);
    assert_eq!(count(dir.path()), before + 1, "read again by the next pass, with the new message");
}
