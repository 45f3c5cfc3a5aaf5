use serde_json::json;
use tether_history::index::{Depth, no_progress};
use tether_history::sessions::{ShowOptions, TagUpdate};
use tether_testkit::eras::{build_all, ids::*};
use tether_testkit::{Composer, CursorFixture, Journal};

use crate::Env;

#[test]
fn only_changed_sessions_are_rewritten() {
    let fx = CursorFixture::new();
    build_all(&fx);
    let e = Env::new(fx);
    let first = e.index();
    assert!(first.sessions_written > 10);
    let g = e.fx.global(Journal::Rollback);
    g.kv(
        &format!("bubbleId:{B_SPLIT}:new-bubble"),
        &json!({"_v": 2, "type": 2, "bubbleId": "new-bubble", "text": "a fresh dugong reply"}),
    );
    let mut data: serde_json::Value = serde_json::from_str(
        &g.conn
            .query_row("SELECT value FROM cursorDiskKV WHERE key = ?1", [format!("composerData:{B_SPLIT}")], |r| {
                r.get::<_, String>(0)
            })
            .unwrap(),
    )
    .unwrap();
    data["fullConversationHeadersOnly"].as_array_mut().unwrap().push(json!({"bubbleId": "new-bubble", "type": 2}));
    g.kv(&format!("composerData:{B_SPLIT}"), &data);
    g.close();
    for depth in [Depth::Quick, Depth::Deep] {
        let r = e.t.index(depth, &no_progress).unwrap();
        let global = r.sources.iter().find(|s| s.path.ends_with("globalStorage/state.vscdb")).unwrap();
        if depth == Depth::Quick {
            assert_eq!(global.written, 1, "only the changed composer is re-read");
        } else {
            assert_eq!(global.written, 0, "nothing changed since the quick pass");
        }
    }
    assert_eq!(e.search_ids("dugong"), vec![B_SPLIT.to_string()]);
}

#[test]
fn in_place_updates_are_caught_by_a_deep_pass() {
    let fx = CursorFixture::new();
    let g = fx.global(Journal::Rollback);
    Composer {
        id: "x1",
        name: Some("t"),
        version: 10,
        bubble_version: 3,
        created_at: 1,
        extra: json!({}),
        bubbles: vec![(1, json!({"text": "before"}))],
    }
    .write(&g);
    g.close();
    let e = Env::new(fx);
    e.index();
    let g = e.fx.global(Journal::Rollback);
    // A plain UPDATE keeps the rowid; only the length tells.
    g.conn
        .execute(
            "UPDATE cursorDiskKV SET value = replace(value, 'before', 'afterwards') WHERE key LIKE 'bubbleId:%'",
            [],
        )
        .unwrap();
    g.conn
        .execute("UPDATE cursorDiskKV SET value = replace(value, '\"name\":\"t\"', '\"name\":\"renamed walrus\"')", [])
        .unwrap();
    g.close();
    e.index();
    assert_eq!(e.search_ids("afterwards"), vec!["x1".to_string()]);
    assert!(e.search_ids("before").is_empty(), "the old text leaves the index");
    assert_eq!(e.search_ids("walrus"), vec!["x1".to_string()], "a renamed title is searchable");
}

#[test]
fn deleted_sessions_vanish_but_keep_user_metadata() {
    let fx = CursorFixture::new();
    build_all(&fx);
    let e = Env::new(fx);
    e.index();
    tether_history::sessions::tag(
        &e.t.store,
        B_SPLIT,
        &TagUpdate {
            nickname: Some(Some("leapday".into())),
            add_tags: vec!["bug".into()],
            bookmarked: Some(true),
            ..Default::default()
        },
    )
    .unwrap();
    let g = e.fx.global(Journal::Rollback);
    g.conn
        .execute(
            "DELETE FROM cursorDiskKV WHERE key >= ?1 AND key < ?2",
            [format!("composerData:{B_SPLIT}"), format!("composerData:{B_SPLIT}~")],
        )
        .unwrap();
    g.close();
    std::fs::remove_dir_all(e.fx.user_dir.join("workspaceStorage/bbbb0000000000000000000000000002")).unwrap();
    let known = |term: &str| -> bool {
        e.t.store
            .read(|c| Ok(c.query_row("SELECT EXISTS (SELECT 1 FROM fts_terms WHERE term = ?1)", [term], |r| r.get(0))?))
            .unwrap()
    };
    assert!(known("narwhal"));
    e.index();
    assert!(e.search_ids("narwhal").is_empty(), "deleted session disappears from search");
    assert!(!known("narwhal"), "its words leave the vocabulary (prefix queries) too");
    assert!(tether_history::sessions::show(&e.t.store, "leapday", &ShowOptions::default()).is_err());
    // It comes back (Cursor restored it): the metadata reattaches.
    let g = e.fx.global(Journal::Rollback);
    tether_testkit::eras::era_b_global_v3(&e.fx, &g);
    g.close();
    e.index();
    let d = tether_history::sessions::show(&e.t.store, "leapday", &ShowOptions::default()).unwrap();
    assert_eq!(d.session.id, B_SPLIT);
    assert_eq!(d.session.tags, vec!["bug"]);
    assert!(d.session.bookmarked);
}

#[test]
fn user_metadata_survives_a_forced_reindex_and_do_not_index_drops_messages() {
    let fx = CursorFixture::new();
    build_all(&fx);
    let e = Env::new(fx);
    e.index();
    tether_history::sessions::tag(
        &e.t.store,
        C_V10,
        &TagUpdate { nickname: Some(Some("Loader".into())), add_tags: vec!["Refactor".into()], ..Default::default() },
    )
    .unwrap();
    let clash = tether_history::sessions::tag(
        &e.t.store,
        B_SPLIT,
        &TagUpdate { nickname: Some(Some("loader".into())), ..Default::default() },
    )
    .unwrap_err();
    assert_eq!(clash.code(), tether_core::ErrorCode::Conflict, "nicknames are unique, case-insensitively");
    e.t.index(Depth::Force, &no_progress).unwrap();
    let s = tether_history::sessions::show(&e.t.store, "loader", &ShowOptions::default()).unwrap().session;
    assert_eq!((s.id.as_str(), s.tags.clone()), (C_V10, vec!["refactor".to_string()]));

    let known = |term: &str| -> bool {
        e.t.store
            .read(|c| Ok(c.query_row("SELECT EXISTS (SELECT 1 FROM fts_terms WHERE term = ?1)", [term], |r| r.get(0))?))
            .unwrap()
    };
    assert!(known("axolotl") && known("modules") && known("loader"));
    tether_history::sessions::tag(&e.t.store, "loader", &TagUpdate { no_index: Some(true), ..Default::default() })
        .unwrap();
    assert!(e.search_ids("axolotl").is_empty());
    assert!(!known("axolotl") && !known("modules"), "the chat's own words leave the vocabulary");
    assert!(known("loader"), "a word its title (or another chat) still holds stays");
    assert_eq!(
        tether_history::sessions::show(&e.t.store, "loader", &ShowOptions::default()).unwrap_err().code(),
        tether_core::ErrorCode::Forbidden
    );
    e.t.index(Depth::Force, &no_progress).unwrap();
    assert!(e.search_ids("axolotl").is_empty(), "a re-index does not bring back do-not-index messages");
    assert!(!known("axolotl"), "nor their words");
    tether_history::sessions::tag(&e.t.store, "loader", &TagUpdate { no_index: Some(false), ..Default::default() })
        .unwrap();
    e.index();
    assert_eq!(e.search_ids("axolotl"), vec![C_V10.to_string()], "re-enabling indexes it again");
}

#[test]
fn uncheckpointed_wal_content_is_read() {
    let fx = CursorFixture::new();
    let g = tether_testkit::eras::wal_uncheckpointed(&fx);
    g.close();
    assert!(tether_history::cursor::sqlite::sidecar(&fx.global_path(), "-wal").metadata().unwrap().len() > 0);
    let e = Env::new(fx);
    e.index();
    assert_eq!(e.search_ids("walrusword"), vec![WAL.to_string()]);
}

/// One change, one pass: our own read-only passes touch the database (opens, `-shm` read marks),
/// and the watcher must not take that for a change, or it re-indexes in a loop while idle.
#[test]
fn the_watcher_settles_after_a_change_instead_of_triggering_itself() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Mutex};
    use std::time::{Duration, Instant};
    use tether_history::watch::{WatchConfig, WatchEvent};

    let fx = CursorFixture::new();
    // A live WAL database, as while Cursor runs: every reader writes to its -shm.
    let live = tether_testkit::eras::wal_uncheckpointed(&fx);
    let e = Env::new(fx);
    e.index();
    let t = Arc::new(e.t);
    let passes = Arc::new(AtomicUsize::new(0));
    let found = Arc::new(Mutex::new(false));
    let (p, f, t2) = (Arc::clone(&passes), Arc::clone(&found), Arc::clone(&t));
    let cfg = WatchConfig { debounce: Duration::from_millis(50), deep_every: Duration::from_secs(3600) };
    let w = t
        .watch(cfg, move |ev| {
            if let WatchEvent::Indexed(_) = ev {
                p.fetch_add(1, Ordering::SeqCst);
                if !tether_history::sessions::search(
                    &t2.store,
                    &tether_history::sessions::SearchQuery::new("otterword"),
                )
                .unwrap()
                .is_empty()
                {
                    *f.lock().unwrap() = true;
                }
            }
        })
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    Composer {
        id: "w2",
        name: Some("second"),
        version: 16,
        bubble_version: 3,
        created_at: 5,
        extra: json!({}),
        bubbles: vec![(1, json!({"text": "otterword arrives"}))],
    }
    .write(&live);
    let deadline = Instant::now() + Duration::from_secs(10);
    while !*found.lock().unwrap() {
        assert!(Instant::now() < deadline, "the change was never indexed");
        std::thread::sleep(Duration::from_millis(20));
    }
    let after_change = passes.load(Ordering::SeqCst);
    std::thread::sleep(Duration::from_secs(2));
    let idle = passes.load(Ordering::SeqCst) - after_change;
    w.stop();
    drop(live);
    assert!(idle <= 1, "{idle} passes in 2 idle seconds: the watcher is reacting to its own reads");
}

/// A first start takes each chat's bubble stats just before reading it, not in one scan up
/// front; what it stores must be what a later pass computes, or every chat would be read again.
#[test]
fn a_first_index_leaves_fingerprints_a_deep_pass_agrees_with() {
    let fx = CursorFixture::new();
    build_all(&fx);
    let e = Env::new(fx);
    let fingerprints = || -> Vec<(String, Option<String>)> {
        e.t.store
            .read(|c| {
                let mut st = c.prepare("SELECT id, fingerprint FROM sessions ORDER BY id")?;
                let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
                Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
            })
            .unwrap()
    };
    assert!(e.index().sessions_written > 10);
    let first = fingerprints();
    // A row no chat owns, so that the file changed and the deep pass looks at every chat.
    let g = e.fx.global(Journal::Rollback);
    g.kv("unrelated:key", &json!({"x": 1}));
    g.close();
    e.t.index(Depth::Deep, &no_progress).unwrap();
    assert_eq!(fingerprints(), first, "a deep pass finds every chat as the first index left it");
}

/// While Cursor streams an answer into one chat, a quick pass reads what changed and no more: the
/// streamed chat at most every `STREAM_EVERY` (put off in between, with a time to come back
/// said), any other chat that changed at once; and the words streamed in are searchable, by
/// prefix too (only the written messages' words are added to the vocabulary).
#[test]
fn a_chat_cursor_streams_into_is_read_at_most_every_stream_every_and_other_chats_at_once() {
    use tether_history::cursor::{SourceKind, discover};
    use tether_history::index::STREAM_EVERY;

    let fx = CursorFixture::new();
    let g = fx.global(Journal::Rollback);
    for (id, word) in [("s1", "first"), ("s2", "second")] {
        Composer {
            id,
            name: Some(id),
            version: 16,
            bubble_version: 3,
            created_at: 5,
            extra: json!({}),
            bubbles: vec![(1, json!({"text": format!("a {word} question")})), (2, json!({"text": "an answer"}))],
        }
        .write(&g);
    }
    let e = Env::new(fx);
    e.index();
    let global: Vec<_> = discover(&e.t.cursor()).into_iter().filter(|s| s.kind == SourceKind::Global).collect();
    let grow = |text: &str| {
        g.kv("bubbleId:s1:s1-b0001", &json!({"_v": 3, "type": 2, "bubbleId": "s1-b0001", "text": text}));
    };
    let pass = || e.t.index_sources(&global, Depth::Quick).unwrap();

    grow("an answer that streams platypusword");
    let r = pass();
    assert_eq!((r.sessions_written, r.retry_after_ms), (1, None), "a chat changing for the first time is read at once");
    assert_eq!(e.search_ids("platypusword"), ["s1"]);

    grow("an answer that streams platypusword and wombatword");
    g.kv("bubbleId:s2:s2-b0001", &json!({"_v": 3, "type": 2, "bubbleId": "s2-b0001", "text": "quokkaword"}));
    let r = pass();
    assert_eq!(r.changed, ["s2"], "the other chat at once, the streaming one put off");
    let retry = r.retry_after_ms.expect("a time to come back for the chat put off");
    assert!(retry <= STREAM_EVERY.as_millis() as u64 + 1, "{retry} ms");
    assert!(e.search_ids("wombatword").is_empty());

    std::thread::sleep(std::time::Duration::from_millis(retry));
    let r = pass();
    assert_eq!((r.changed.as_slice(), r.retry_after_ms), (&["s1".to_string()][..], None), "read once its time came");
    assert_eq!(e.search_ids("wombatword"), ["s1"]);
    assert_eq!(e.search_ids("wombatw*"), ["s1"], "a streamed word is in the vocabulary for prefixes");
    assert_eq!(e.search_ids("platypusword"), ["s1"], "the words streamed before stay");
    assert_eq!(e.search_ids("quokkaword"), ["s2"]);

    // Put off with nothing else changed: our database is left as it was (no write several times a
    // second); when the stream stops (the watcher heard nothing for a moment) the next pass reads
    // the chat at once, before its time.
    grow("an answer that streams platypusword and wombatword and echidnaword");
    let r = pass();
    assert_eq!((r.sessions_written, r.changed.len()), (0, 0));
    assert!(r.retry_after_ms.is_some(), "put off again: it was read a moment ago");
    tether_history::index::streams_stopped(&global);
    assert_eq!(pass().changed, ["s1"]);
    assert_eq!(e.search_ids("echidnaword"), ["s1"]);
    g.close();
}

/// The connection a watcher keeps to Cursor's file between its passes (while Cursor streams) is
/// closed once the watcher has been quiet a moment: no handle on Cursor's files stays open while
/// nothing happens (on Windows one would keep Cursor from replacing its own file).
#[cfg(target_os = "linux")]
#[test]
fn a_quiet_watcher_holds_no_handle_on_cursors_files() {
    use std::time::{Duration, Instant};

    let fx = CursorFixture::new();
    let g = fx.global(Journal::Rollback);
    Composer {
        id: "h1",
        name: Some("h1"),
        version: 16,
        bubble_version: 3,
        created_at: 5,
        extra: json!({}),
        bubbles: vec![(1, json!({"text": "a question"}))],
    }
    .write(&g);
    let e = Env::new(fx);
    let global = e.fx.global_path();
    let open_on_it = || {
        std::fs::read_dir("/proc/self/fd")
            .unwrap()
            .filter_map(|f| std::fs::read_link(f.ok()?.path()).ok())
            .any(|target| target.starts_with(&global))
    };
    let t = std::sync::Arc::new(e.t);
    t.index(Depth::Quick, &no_progress).unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let w = t
        .watch(tether_history::watch::WatchConfig::default(), move |ev| {
            if let tether_history::watch::WatchEvent::Indexed(r) = ev {
                let _ = tx.send(r.sessions_written);
            }
        })
        .unwrap();
    g.kv("bubbleId:h1:h1-b0001", &json!({"_v": 3, "type": 2, "bubbleId": "h1-b0001", "text": "lemurword"}));
    let deadline = Instant::now() + Duration::from_secs(20);
    while rx.recv_timeout(Duration::from_secs(1)).unwrap_or(0) == 0 {
        assert!(Instant::now() < deadline, "the watcher read the change");
    }
    // Cursor's own connection (the fixture's) goes; the watcher's is what is left to close.
    g.close();
    let deadline = Instant::now() + Duration::from_secs(20);
    while open_on_it() {
        assert!(Instant::now() < deadline, "the kept connection was closed once quiet");
        std::thread::sleep(Duration::from_millis(100));
    }
    w.stop();
}
