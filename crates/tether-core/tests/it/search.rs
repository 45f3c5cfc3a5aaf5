//! Search over a generated history large enough to reach the broad-query mode.

use tether_history::sessions::SearchQuery;
use tether_testkit::CursorFixture;
use tether_testkit::generate::{GenSpec, generate_global, vocabulary_for};

use crate::Env;

#[test]
fn broad_and_selective_queries_both_return_distinct_highlighted_sessions() {
    let fx = CursorFixture::new();
    let stats = generate_global(&fx.global_path(), &GenSpec { target_bytes: 4 << 20, seed: 3 }).unwrap();
    let e = Env::new(fx);
    e.index();
    assert!(stats.bubbles > 3000, "{stats:?}");
    let vocab = vocabulary_for(3);
    // "function" is in most messages (broad: newest first); a tail word is selective (bm25); a
    // prefix is rewritten into the terms under it, alone or after a word.
    for q in ["function", vocab[5000].as_str(), "\"error handling\"", "conf*", "function conf*"] {
        let hits =
            tether_history::sessions::search(&e.t.store, &SearchQuery { limit: 10, ..SearchQuery::new(q) }).unwrap();
        assert!(!hits.is_empty(), "{q}: no hits");
        assert!(hits.len() <= 10);
        let mut ids: Vec<_> = hits.iter().map(|h| h.session_id.clone()).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), hits.len(), "{q}: one hit per session");
        assert!(hits.iter().all(|h| h.snippet.contains("**")), "{q}: snippets highlight the match: {hits:?}");
        assert!(hits.windows(2).all(|w| w[0].score >= w[1].score), "{q}: ordered by score");
    }
}

/// A prefix is answered as an OR of the terms under it (see `terms`); that must match exactly the
/// rows FTS5's own prefix query matches, for ASCII words and for words FTS5 folds or cuts.
#[test]
fn rewritten_prefixes_match_what_fts5_prefixes_match() {
    let fx = CursorFixture::new();
    let g = fx.global(tether_testkit::Journal::Rollback);
    let texts = [
        "Configure the config loader",
        "Naïve café résumé, ÜBER-config",
        "x\u{301}conf and cafe\u{301} decomposed",
        "naive cafeteria confluence",
        "nothing to see here",
        "fix the config🤔 and pay 100₽",
        "the Conſole",
        "constant 1000",
    ];
    tether_testkit::Composer {
        id: "p1",
        name: Some("Prefix café"),
        version: 10,
        bubble_version: 3,
        created_at: 1,
        extra: serde_json::json!({}),
        bubbles: texts.iter().enumerate().map(|(i, t)| (i as i64 % 2 + 1, serde_json::json!({"text": t}))).collect(),
    }
    .write(&g);
    g.close();
    let e = Env::new(fx);
    e.index();
    e.t.store
        .read(|c| {
            for prefix in ["conf", "caf", "cafe", "naiv", "resu", "uber", "x", "c", "n", "cons", "100", "fix"] {
                let raw = format!("{prefix}*");
                let rewritten = tether_history::terms::expand_prefixes(c, &raw)?;
                let rows = |q: &str| -> rusqlite::Result<Vec<i64>> {
                    let mut st =
                        c.prepare("SELECT rowid FROM messages_fts WHERE messages_fts MATCH ?1 ORDER BY rowid")?;
                    st.query_map([q], |r| r.get(0))?.collect()
                };
                assert_ne!(rewritten, raw, "{prefix}: rewritten");
                assert_eq!(rows(&rewritten)?, rows(&raw)?, "{prefix}: {rewritten}");
                assert!(!rows(&raw)?.is_empty(), "{prefix}");
            }
            Ok(())
        })
        .unwrap();
}

/// Message ids come from their chat's time, newest lowest, whatever order sources and chats were
/// indexed in (IDE DBs before CLI stores, newest chats first): a broad query walks ids, so a CLI
/// chat must not rank above an IDE chat of the same age because it was indexed later.
#[test]
fn message_ids_follow_the_chats_time_across_sources() {
    let fx = CursorFixture::new();
    tether_testkit::eras::build_all(&fx);
    let e = Env::new(fx);
    e.index();
    let spans: Vec<(String, String, i64, i64, i64)> =
        e.t.store
            .read(|c| {
                let mut stmt = c.prepare(
                    "SELECT s.id, s.origin, min(coalesce(s.updated_at, s.created_at, 0), ?1), min(m.id), max(m.id)
                 FROM sessions s JOIN messages m ON m.session_id = s.id GROUP BY s.id ORDER BY 3 DESC",
                )?;
                let rows = stmt.query_map([tether_core::clock::now_ms()], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
                })?;
                Ok(rows.collect::<rusqlite::Result<_>>()?)
            })
            .unwrap();
    assert!(spans.iter().any(|s| s.1 == "cli") && spans.iter().any(|s| s.1 == "ide"), "{spans:?}");
    for w in spans.windows(2) {
        // A minute apart or more: ids are filed by minute.
        if w[0].2 / 60_000 > w[1].2 / 60_000 {
            assert!(w[0].4 < w[1].3, "{:?} is newer than {:?} and must have lower ids", w[0], w[1]);
        }
    }
}

/// A first start lists every chat of the global DB before reading anything else, then reads the
/// CLI's chats (a small file each) before the global chats' messages, so neither waits for the
/// other's bulk.
#[test]
fn a_first_index_lists_global_chats_then_reads_cli_chats_first() {
    use tether_history::cursor::SourceKind;
    use tether_history::index::{Depth, Progress};
    let fx = CursorFixture::new();
    tether_testkit::eras::build_all(&fx);
    let e = Env::new(fx);
    // (id, origin, searchable) of every chat: all of them now, and when the indexer first turns
    // to each kind of source.
    type Chats = Vec<(String, String, bool)>;
    let chats = || -> Chats {
        e.t.store
            .read(|c| {
                let mut stmt = c.prepare("SELECT id, origin, searchable FROM sessions")?;
                let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
                Ok(rows.collect::<rusqlite::Result<_>>()?)
            })
            .unwrap()
    };
    let seen: std::sync::Mutex<Vec<(SourceKind, Chats)>> = Default::default();
    let on_progress = |p: &Progress| {
        if let Progress::Source { kind, .. } = p {
            let mut seen = seen.lock().unwrap();
            if !seen.iter().any(|s| s.0 == *kind) {
                seen.push((*kind, chats()));
            }
        }
    };
    e.t.index(Depth::Deep, &on_progress).unwrap();
    let seen = seen.into_inner().unwrap();
    let kinds: Vec<SourceKind> = seen.iter().map(|s| s.0).collect();
    assert_eq!(
        kinds,
        [SourceKind::Workspace, SourceKind::CliStore, SourceKind::Transcript, SourceKind::Global],
        "workspaces (project membership), the CLI's chats, then the global DB"
    );
    let all = chats();
    let ide: Vec<&String> = all.iter().filter(|c| c.1 == "ide").map(|c| &c.0).collect();
    let cli: Vec<&String> = all.iter().filter(|c| c.1 == "cli").map(|c| &c.0).collect();
    assert!(!ide.is_empty() && !cli.is_empty(), "{all:?}");
    let global: Vec<String> =
        e.t.store
            .read(|c| {
                let mut stmt = c.prepare(
                    "SELECT s.id FROM sessions s JOIN sources src ON src.id = s.source_id WHERE src.kind = 'global'",
                )?;
                Ok(stmt.query_map([], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?)
            })
            .unwrap();
    assert!(!global.is_empty());
    let before_cli = &seen[1].1;
    for id in &global {
        assert!(
            before_cli.iter().any(|c| &c.0 == id && !c.2),
            "{id}: every global chat is listed, and none read, before the CLI's chats: {before_cli:?}"
        );
    }
    let before_global = &seen[3].1;
    for id in cli {
        assert!(before_global.iter().any(|c| &c.0 == id && c.2), "{id} is searchable before the global DB is read");
    }
}
