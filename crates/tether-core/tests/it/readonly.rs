//! Cursor's files are never written, not one byte, by anything Tether does to read them: a full
//! and a quick index, the watcher's passes, listing, searching and `doctor` — for a rollback
//! journal, a WAL file with a stale `-shm` left by a Cursor that is gone, a WAL file without
//! sidecars, and a live writer in another process (read correctly while it appends and
//! checkpoints, and not written while it stays open).

use std::io::{BufRead, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;
use tether_history::index::{Depth, no_progress};
use tether_history::sessions::{ListQuery, SearchQuery};
use tether_history::watch::WatchConfig;
use tether_testkit::eras::build_all;
use tether_testkit::{Composer, CursorFixture, Journal};

use tether_core::{Paths, Tether};

use crate::Env;

/// Everything a reader of Cursor's files does: index (full and quick), a watcher's first pass,
/// list, search and doctor.
fn read_every_way(e: &Env) {
    e.t.index(Depth::Force, &no_progress).unwrap();
    e.t.index(Depth::Quick, &no_progress).unwrap();
    let t = std::sync::Arc::new(Tether::open(Paths::at(e.data.path().join("watch")), e.t.cursor()).unwrap());
    let (tx, rx) = std::sync::mpsc::channel();
    // A deep pass soon after start: the watcher's own reading of every source.
    let cfg = WatchConfig { deep_every: Duration::from_millis(100), ..WatchConfig::default() };
    let w = t
        .watch(cfg, move |ev| {
            let _ = tx.send(matches!(ev, tether_history::watch::WatchEvent::Indexed(_)));
        })
        .unwrap();
    assert!(rx.recv_timeout(Duration::from_secs(10)).unwrap_or(false), "the watcher made a pass");
    w.stop();
    tether_history::sessions::list(&e.t.store, &ListQuery::default()).unwrap();
    tether_history::sessions::search(&e.t.store, &SearchQuery::new("word")).unwrap();
    tether_core::ops::system::doctor(&e.t).unwrap();
}

fn assert_untouched(before: &std::collections::BTreeMap<std::path::PathBuf, Vec<u8>>, fx: &CursorFixture) {
    let after = fx.snapshot();
    assert_eq!(
        before.keys().collect::<Vec<_>>(),
        after.keys().collect::<Vec<_>>(),
        "no file created or removed in Cursor's dirs"
    );
    for (p, b) in before {
        assert!(after[p] == *b, "{} changed", p.display());
    }
}

#[test]
fn indexing_never_modifies_cursor_files_rollback() {
    let fx = CursorFixture::new();
    build_all(&fx);
    let before = fx.snapshot();
    let e = Env::new(fx);
    read_every_way(&e);
    assert_untouched(&before, &e.fx);
}

#[test]
fn indexing_never_modifies_cursor_files_wal() {
    // A stale -shm: the writer (Cursor) is gone and left its -wal and -shm behind.
    let fx = CursorFixture::new();
    tether_testkit::eras::wal_uncheckpointed(&fx).close();
    let shm = tether_history::cursor::sqlite::sidecar(&fx.global_path(), "-shm");
    assert!(shm.exists(), "the fixture leaves a -shm");
    let before = fx.snapshot();
    let e = Env::new(fx);
    read_every_way(&e);
    assert_untouched(&before, &e.fx);
    assert_eq!(e.search_ids("walrusword").len(), 1, "content only in the -wal is read");
}

#[test]
fn a_cleanly_closed_wal_db_gets_no_new_sidecars() {
    let fx = CursorFixture::new();
    let g = fx.global(Journal::Wal);
    tether_testkit::eras::era_d_cursor3(&fx, &g);
    g.close();
    let wal = tether_history::cursor::sqlite::sidecar(&fx.global_path(), "-wal");
    assert!(!wal.exists(), "SQLite removes the -wal on a clean close");
    let before = fx.snapshot();
    let e = Env::new(fx);
    read_every_way(&e);
    assert!(!wal.exists(), "opening read-only must not create a -wal next to Cursor's DB");
    assert_untouched(&before, &e.fx);
    assert_eq!(e.search_ids("capybara").len(), 1);
}

const WRITER: &str = r#"
import json, sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("PRAGMA journal_mode=WAL")
db.execute("PRAGMA wal_autocheckpoint=0")
cid = sys.argv[2]
key = "composerData:" + cid
for i in range(int(sys.argv[3])):
    data = json.loads(db.execute("SELECT value FROM cursorDiskKV WHERE key = ?", (key,)).fetchone()[0])
    bid = "live-%04d" % i
    bubble = {"_v": 3, "type": 1, "bubbleId": bid, "text": "liveword%04d" % i, "createdAt": "2026-11-23T10:00:00.000Z"}
    data["fullConversationHeadersOnly"].append({"bubbleId": bid, "type": 1})
    data["lastUpdatedAt"] = data.get("lastUpdatedAt", 0) + 1000
    db.execute("BEGIN IMMEDIATE")
    db.execute("INSERT INTO cursorDiskKV (key, value) VALUES (?, ?)", ("bubbleId:%s:%s" % (cid, bid), json.dumps(bubble)))
    db.execute("UPDATE cursorDiskKV SET value = ? WHERE key = ?", (json.dumps(data), key))
    db.execute("COMMIT")
    if i % 25 == 24:
        db.execute("PRAGMA wal_checkpoint(%s)" % ("TRUNCATE" if i % 100 == 99 else "PASSIVE")).fetchall()
    time.sleep(0.004)
print("idle", flush=True)
sys.stdin.read()
"#;

#[test]
fn a_live_writer_in_another_process_is_read_right_and_never_written() {
    let fx = CursorFixture::new();
    let g = fx.global(Journal::Wal);
    let id = "1ive0000-0000-4000-8000-000000000001";
    Composer {
        id,
        name: Some("Live writer"),
        version: 3,
        bubble_version: 3,
        created_at: 1_767_000_000_000,
        extra: json!({}),
        bubbles: vec![(1, json!({"text": "the first word"}))],
    }
    .write(&g);
    g.close();
    let n = 300;
    let mut writer = match Command::new("python3")
        .args(["-c", WRITER, &fx.global_path().to_string_lossy(), id, &n.to_string()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
    {
        Ok(w) => w,
        Err(e) => panic!("python3 runs the stand-in for Cursor's writer: {e}"),
    };
    let e = Env::new(CursorFixture::at(&fx.home));
    // Read while it writes and checkpoints: never an error, never a torn session.
    let (tx, rx) = std::sync::mpsc::channel();
    let mut out = std::io::BufReader::new(writer.stdout.take().unwrap());
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = out.read_line(&mut line);
        let _ = tx.send(line);
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut passes = 0;
    while rx.try_recv().is_err() {
        assert!(Instant::now() < deadline, "the writer did not finish");
        e.t.index(Depth::Quick, &no_progress).unwrap();
        passes += 1;
    }
    assert!(passes > 1, "read while the writer was going");
    // It is done but still open (Cursor idle): one more quick pass, the watcher's once the chat
    // it put off while it streamed is due, has every message (a bubble committed while a pass
    // listed used to fall below its high-water mark)…
    std::thread::sleep(tether_history::index::STREAM_EVERY);
    e.t.index(Depth::Quick, &no_progress).unwrap();
    let live = e.all().into_iter().find(|s| s.id == id).expect("the live chat is listed");
    assert_eq!(live.messages as usize, n + 1, "every appended message, once");
    assert_eq!(e.search_ids("liveword0299").len(), 1);
    // …and reading it every way changes none of its files while it stays open.
    let before = e.fx.snapshot();
    read_every_way(&e);
    assert_untouched(&before, &e.fx);
    writer.stdin.take().unwrap().write_all(b"").unwrap();
    let _ = writer.wait();
}
