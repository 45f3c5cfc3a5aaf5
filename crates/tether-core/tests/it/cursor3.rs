//! Cursor 3.x's agent stores, built in each test from their published shapes (reference:
//! `cursor-3x-drift.md` D1–D3, D8, D9): legacy text transcripts, subagents, markers and injected
//! text, cursor-agent 2026.08+ stores, sessions with only a `meta.json`, ACP sessions, and the
//! SDK / Agents Window's `sdk-agent-store` (its catalog's columns as public readers give them).

use serde_json::json;
use tether_history::sessions::ShowOptions;
use tether_testkit::{CursorFixture, SdkAgent, SdkRun};

use crate::Env;

fn show(e: &Env, id: &str) -> Vec<(String, String, String)> {
    let d = tether_history::sessions::show(&e.t.store, id, &ShowOptions { offset: 0, limit: 0, include_tools: true })
        .unwrap();
    d.messages.into_iter().map(|m| (m.role, m.kind, m.text)).collect()
}

fn own(v: &[(&str, &str, &str)]) -> Vec<(String, String, String)> {
    v.iter().map(|(a, b, c)| ((*a).into(), (*b).into(), (*c).into())).collect()
}

#[test]
fn legacy_text_transcripts_subagents_markers_and_injected_text_read_as_chats() {
    let fx = CursorFixture::new();
    let transcripts = fx.cursor_home.join("projects/home-u-birds/agent-transcripts");
    std::fs::create_dir_all(&transcripts).unwrap();
    // A legacy flat `.txt` (written until about Feb 2026).
    let txt = "b0000001-0000-4000-8000-000000000001";
    std::fs::write(
        transcripts.join(format!("{txt}.txt")),
        "user:\n<attached_files>\n<file path=\"/home/u/birds/src/heron.rs\"/>\n</attached_files>\n<user_query>\nfind the heron bug\n</user_query>\n\n\
assistant:\n[Thinking] Looking for the heron.\n\nSearching now. [REDACTED]\n[Tool call] Grep\n  pattern: heron\n  path: /home/u/birds/src\n\n[Tool result] Grep\n\n\
assistant:\n[Thinking] [REDACTED]\n\n\
assistant:\nThe heron bug is fixed.\n[REDACTED]\n",
    )
    .unwrap();
    // A JSONL transcript whose first user line is only Cursor's notification, with a subagent.
    let parent = "b0000001-0000-4000-8000-000000000002";
    let user = |t: &str| json!({"role": "user", "message": {"content": [{"type": "text", "text": t}]}}).to_string();
    let said =
        |t: &str| json!({"role": "assistant", "message": {"content": [{"type": "text", "text": t}]}}).to_string();
    fx.transcript(
        "home-u-birds",
        parent,
        &[
            user("<system_notification>\nThe background build finished.\n</system_notification>"),
            user("<timestamp>Saturday, Jul 11, 2026, 1:01 PM (UTC+8)</timestamp>\n<user_query>\nwhere do the egrets nest\n</user_query>"),
            said("Asking a subagent."),
            json!({"role": "assistant", "message": {"content": [{"type": "thinking", "thinking": "[REDACTED]"}]}}).to_string(),
        ],
    );
    let subs = transcripts.join(parent).join("subagents");
    std::fs::create_dir_all(&subs).unwrap();
    std::fs::write(
        subs.join("sub-1.jsonl"),
        format!("{}\n{}\n", user("<user_query>\nlist egret nests\n</user_query>"), said("egret nests: three")),
    )
    .unwrap();
    // A subagent whose parent transcript is gone.
    let orphan_dir = transcripts.join("b0000001-0000-4000-8000-000000000003/subagents");
    std::fs::create_dir_all(&orphan_dir).unwrap();
    std::fs::write(orphan_dir.join("orphan-1.jsonl"), format!("{}\n{}\n", user("count the ibis"), said("ibis: four")))
        .unwrap();

    let e = Env::new(fx);
    let r = e.index();
    for s in &r.sources {
        assert_eq!(s.status, "complete", "{}: {:?}", s.path, s.reasons);
    }

    let all = e.all();
    let summary = |id: &str| all.iter().find(|s| s.id == id).unwrap_or_else(|| panic!("{id} listed"));
    assert_eq!(summary(txt).title.as_deref(), Some("find the heron bug"));
    assert_eq!(summary(txt).format, "transcript-txt");
    assert_eq!(summary(txt).project.as_deref(), Some("/home/u/birds"), "from the tool call's path");
    assert_eq!(
        show(&e, txt),
        own(&[
            ("user", "text", "find the heron bug"),
            ("assistant", "thinking", "Looking for the heron."),
            ("assistant", "text", "Searching now."),
            ("assistant", "tool", "/home/u/birds/src pattern=heron"),
            ("assistant", "text", "The heron bug is fixed."),
        ])
    );

    assert_eq!(summary(parent).title.as_deref(), Some("where do the egrets nest"), "never the notification");
    assert_eq!(summary(parent).created_at.as_deref(), Some("2026-07-11T05:01:00.000Z"), "the <timestamp>");
    assert_eq!(
        show(&e, parent),
        own(&[
            ("system", "text", "The background build finished."),
            ("user", "text", "where do the egrets nest"),
            ("assistant", "text", "Asking a subagent."),
            ("assistant", "tool", "list egret nests"),
            ("assistant", "text", "egret nests: three"),
        ]),
        "the subagent nested under its parent, its prompt the parent's step, not the person's words"
    );
    assert!(!all.iter().any(|s| s.id == "sub-1"), "a subagent with a parent is not listed on its own");
    assert_eq!(summary("orphan-1").title.as_deref(), Some("count the ibis"), "an orphan is listed on its own");
    assert_eq!(e.search_ids("egret"), vec![parent.to_string()]);
    assert!(e.search_ids("REDACTED").is_empty(), "markers are not text");

    let report = tether_core::ops::system::doctor(&e.t).unwrap();
    let notes = |p: &str| report.sources.iter().find(|s| s.path.contains(p)).unwrap().notes.clone();
    assert_eq!(notes(txt).0.get("redacted"), Some(&3), "markers counted");
    assert_eq!(notes(parent).0.get("redacted"), Some(&1));
    // Doctor says what it found and what it passed over.
    let transcripts_found = report.found.iter().find(|f| f.kind == "transcript").expect("transcripts found");
    assert_eq!((transcripts_found.files, transcripts_found.sessions), (3, 3), "{:?}", report.found);
    let sub = report.skipped.iter().find(|s| s.path.ends_with("sub-1.jsonl")).expect("the nested subagent is said");
    assert!(sub.reason.contains("nested"), "{}", sub.reason);
    assert_eq!(r.skipped, report.skipped, "the index pass reports the same");
}

#[test]
fn todays_cursor_agent_stores_meta_only_sessions_and_acp_sessions() {
    let fx = CursorFixture::new();
    let msgs = |word: &str| {
        vec![
            json!({"role": "system", "content": "You are an agent."}),
            json!({"role": "user", "content": [{"type": "text", "text": format!("<user_query>\nhelp with {word}\n</user_query>")}]}),
            json!({"role": "assistant", "content": [{"type": "text", "text": format!("{word} done")}]}),
            json!({"role": "tool", "content": [{"type": "tool-result", "toolCallId": "c", "result": "x"}]}),
        ]
    };
    // 2026.08+: a root blob with `turns_old` and `turns` beside the message ids (testkit layout).
    fx.cli_store("/home/u/kestrel", "c0000001-0000-4000-8000-000000000001", "Kestrel", &msgs("kestrel"), true);
    // A meta.json with no store.db: listed from it.
    fx.cli_meta_only(
        "/home/u/merlin",
        "c0000001-0000-4000-8000-000000000002",
        &json!({"schemaVersion": 1, "createdAtMs": 1_788_000_000_000_i64, "updatedAtMs": 1_788_000_600_000_i64,
                "hasConversation": true, "cwd": "/home/u/merlin"}),
    );
    fx.cli_meta_only(
        "/home/u/merlin",
        "c0000001-0000-4000-8000-000000000003",
        &json!({"schemaVersion": 1, "createdAtMs": 1_788_000_000_000_i64, "hasConversation": false, "cwd": "/home/u/merlin"}),
    );
    // ACP (`cursor-agent acp`, 2026.09): store.db + meta.json{schemaVersion, cwd, title}.
    fx.acp_session("/home/u/osprey", "c0000001-0000-4000-8000-000000000004", "Osprey plan", &msgs("osprey"));

    let e = Env::new(fx);
    let r = e.index();
    for s in &r.sources {
        assert_eq!(s.status, "complete", "{}: {:?}", s.path, s.reasons);
    }
    let all = e.all();
    let summary = |id: &str| all.iter().find(|s| s.id == id).unwrap_or_else(|| panic!("{id} listed"));
    let kestrel = summary("c0000001-0000-4000-8000-000000000001");
    assert_eq!((kestrel.title.as_deref(), kestrel.project.as_deref()), (Some("Kestrel"), Some("/home/u/kestrel")));
    assert_eq!(
        show(&e, "c0000001-0000-4000-8000-000000000001"),
        own(&[("user", "text", "help with kestrel"), ("assistant", "text", "kestrel done")])
    );
    let merlin = summary("c0000001-0000-4000-8000-000000000002");
    assert_eq!(merlin.project.as_deref(), Some("/home/u/merlin"));
    assert_eq!(merlin.updated_at.as_deref(), Some("2026-08-29T10:50:00.000Z"));
    assert_eq!(merlin.messages, 0);
    assert!(!all.iter().any(|s| s.id == "c0000001-0000-4000-8000-000000000003"), "no conversation, not listed");
    let osprey = summary("c0000001-0000-4000-8000-000000000004");
    assert_eq!((osprey.title.as_deref(), osprey.project.as_deref()), (Some("Osprey plan"), Some("/home/u/osprey")));
    assert_eq!(e.search_ids("osprey"), vec!["c0000001-0000-4000-8000-000000000004".to_string()]);
}

#[test]
fn a_store_without_meta_json_takes_no_project_from_file_states() {
    // Older cursor-agent builds: no meta.json, field 9 of the root blob holds file states.
    let fx = CursorFixture::new();
    let store = fx.cli_store(
        "/home/u/wren",
        "c0000002-0000-4000-8000-000000000001",
        "Wren",
        &[json!({"role": "user", "content": "wren question"}), json!({"role": "assistant", "content": "wren answer"})],
        false,
    );
    std::fs::remove_file(store.parent().unwrap().join("meta.json")).unwrap();
    let c = rusqlite::Connection::open(&store).unwrap();
    let meta: String = c.query_row("SELECT value FROM meta WHERE key = '0'", [], |r| r.get(0)).unwrap();
    let meta: serde_json::Value = serde_json::from_str(&meta).unwrap();
    let root_id = meta["latestRootBlobId"].as_str().unwrap().to_owned();
    let mut root: Vec<u8> = c.query_row("SELECT data FROM blobs WHERE id = ?1", [&root_id], |r| r.get(0)).unwrap();
    // Replace the workspace (the last field) by a file-state map entry.
    let cut = root.len() - (2 + "/home/u/wren".len());
    root.truncate(cut);
    let entry = b"\x0a\x15/home/u/proj/src/a.ts\x12\x02\x08\x01";
    root.extend([0x4a, entry.len() as u8]);
    root.extend(entry);
    c.execute("UPDATE blobs SET data = ?1 WHERE id = ?2", rusqlite::params![root, root_id]).unwrap();
    drop(c);
    let e = Env::new(fx);
    let r = e.index();
    assert_eq!(r.sources[0].status, "complete", "{:?}", r.sources[0].reasons);
    let s = e.all().into_iter().find(|s| s.id == "c0000002-0000-4000-8000-000000000001").unwrap();
    assert_eq!(s.project, None, "no garbage project");
    assert_eq!(e.search_ids("wren"), vec!["c0000002-0000-4000-8000-000000000001".to_string()]);
}

#[test]
fn sdk_agent_stores_are_read_with_their_runs_tokens_as_recorded_usage() {
    let fx = CursorFixture::new();
    let run = |model: &str, at: &str, usage: Option<&str>| SdkRun {
        model: model.into(),
        started_at: format!("2026-10-04T{at}:00Z"),
        finished_at: format!("2026-10-04T{at}:30Z"),
        usage_json: usage.map(str::to_owned),
    };
    let index = fx.sdk_agent_store(
        "/home/u/heron",
        &[
            SdkAgent {
                id: "sdk-agent-1".into(),
                name: "Heron migration".into(),
                created_at: "2026-10-04T00:00:00Z".into(),
                updated_at: "2026-10-04T00:00:00Z".into(),
                messages: Some(vec![
                    json!({"role": "user", "content": [{"type": "text", "text": "<user_query>\nmigrate the heron table\n</user_query>"}]}),
                    json!({"role": "assistant", "content": [{"type": "text", "text": "heron table migrated"},
                            {"type": "tool-call", "toolCallId": "c1", "toolName": "Shell", "args": {"command": "cargo test heron"}}]}),
                    json!({"role": "tool", "content": [{"type": "tool-result", "toolCallId": "c1", "result": "ok"}]}),
                ]),
                extra_meta: json!({}),
                runs: vec![
                    run("composer-2", "00:01", Some(r#"{"inputTokens":1200,"outputTokens":300,"cacheReadTokens":50}"#)),
                    run("composer-2", "00:02", Some(r#"{"inputTokens":800,"outputTokens":100}"#)),
                ],
            },
            // No run recorded figures: the chat's tokens stay absent, never 0.
            SdkAgent {
                id: "sdk-agent-2".into(),
                name: "Egret review".into(),
                created_at: "2026-10-05T00:00:00Z".into(),
                updated_at: "2026-10-05T00:10:00Z".into(),
                messages: Some(vec![json!({"role": "user", "content": "review the egret module"}),
                                    json!({"role": "assistant", "content": "egret reviewed"})]),
                extra_meta: json!({}),
                runs: vec![run("gpt-5", "00:03", None), run("gpt-5", "00:04", Some(r#"{"outputTokens":9}"#))],
            },
            // A catalog row whose blob store is not on disk: listed from the catalog.
            SdkAgent {
                id: "sdk-agent-3".into(),
                name: "Ibis idea".into(),
                created_at: "2026-10-06T00:00:00Z".into(),
                updated_at: "2026-10-06T00:00:00Z".into(),
                ..Default::default()
            },
        ],
    );
    // Malformed rows are counted and skipped, never fatal.
    let c = rusqlite::Connection::open(&index).unwrap();
    c.execute_batch(
        "INSERT INTO agents VALUES (NULL, '/home/u/heron', 'no id', NULL, NULL, NULL);
         INSERT INTO runs VALUES ('bad', 'sdk-agent-1', 3, 'ERROR', 'composer-2', '2026-10-04T00:05:00Z', NULL, NULL, NULL, '{broken');",
    )
    .unwrap();
    drop(c);

    let e = Env::new(fx);
    let r = e.index();
    let src = r.sources.iter().find(|s| s.path.ends_with("index.db")).expect("the catalog is a source");
    assert_eq!(src.reasons.0.get("bad_agent_row"), Some(&1), "{:?}", src.reasons);
    assert_eq!(src.reasons.0.get("bad_usage_json"), Some(&1), "{:?}", src.reasons);
    let all = e.all();
    let summary = |id: &str| all.iter().find(|s| s.id == id).unwrap_or_else(|| panic!("{id} listed: {all:?}"));
    let heron = summary("sdk-agent-1");
    assert_eq!((heron.title.as_deref(), heron.project.as_deref()), (Some("Heron migration"), Some("/home/u/heron")));
    assert_eq!(heron.created_at.as_deref(), Some("2026-10-04T00:00:00.000Z"));
    assert_eq!(heron.updated_at.as_deref(), Some("2026-10-04T00:05:00.000Z"), "the latest run");
    assert_eq!(
        show(&e, "sdk-agent-1"),
        own(&[
            ("user", "text", "migrate the heron table"),
            ("assistant", "text", "heron table migrated"),
            ("assistant", "tool", "cargo test heron"),
        ])
    );
    assert_eq!(e.search_ids("egret"), vec!["sdk-agent-2".to_string()]);
    assert_eq!(summary("sdk-agent-3").messages, 0);

    // The runs' figures are usage Cursor recorded, exact: one row per run with figures (the
    // broken one and the ones without figures add none), cached input apart.
    use tether_core::usage::report::{Dim, UsageQuery, report as usage};
    let q = |source: Option<&str>, by: Vec<Dim>| UsageQuery {
        since: Some("2026-01-01".into()),
        by,
        source: source.map(str::to_owned),
        ..Default::default()
    };
    let sdk_rows = |e: &Env| {
        let rep = usage(&e.t, &q(Some("sdk"), vec![Dim::Agent, Dim::Model])).unwrap();
        let rows: Vec<_> = rep
            .rows
            .iter()
            .map(|r| (r.keys.clone(), r.items, [r.input, r.output, r.cache_read, r.cache_write]))
            .collect();
        (rows, rep.coverage)
    };
    let (rows, coverage) = sdk_rows(&e);
    assert_eq!(
        rows,
        [(vec!["cursor-sdk".to_string(), "composer-2".to_string()], 2, [Some(2000), Some(400), Some(50), Some(0)])]
    );
    assert_eq!((coverage.sdk_runs, coverage.sdk_agents, coverage.agent_requests), (2, 1, 0));
    assert!(
        coverage.notes.iter().any(|n| n.contains("Agents Window agents' tokens are exact")),
        "{:?}",
        coverage.notes
    );
    // The heron chat is counted from its runs, not again from its total; the egret chat (no
    // run recorded figures) stays a chat without figures.
    let chats = usage(&e.t, &q(Some("chats"), vec![Dim::Project])).unwrap();
    let heron_row = chats.rows.iter().find(|r| r.keys == ["/home/u/heron"]).expect("a heron row");
    assert_eq!((heron_row.items, heron_row.with_tokens, heron_row.input), (1, 0, None), "{heron_row:?}");
    // Every source at once: the heron runs once, under `sdk`.
    let every = usage(&e.t, &q(None, vec![Dim::Source])).unwrap();
    let tokens: Vec<_> = every.totals.iter().map(|t| (t.source.as_str(), t.input)).collect();
    assert_eq!(tokens, [("chats", None), ("sdk", Some(2000))], "{:?}", every.totals);

    // A re-read (the catalog touched, everything read again) replaces the rows, never adds.
    let c = rusqlite::Connection::open(&index).unwrap();
    c.execute("UPDATE agents SET updated_at = '2026-10-04T00:06:00Z' WHERE agent_id = 'sdk-agent-1'", []).unwrap();
    drop(c);
    e.index();
    let heron = e.all().into_iter().find(|s| s.id == "sdk-agent-1").unwrap();
    assert_eq!(heron.updated_at.as_deref(), Some("2026-10-04T00:06:00.000Z"), "read again");
    assert_eq!(sdk_rows(&e).0, rows, "a re-index does not double count");

    let report = tether_core::ops::system::doctor(&e.t).unwrap();
    let found = report.found.iter().find(|f| f.kind == "sdk_agent").expect("doctor lists the kind");
    assert_eq!((found.files, found.sessions), (1, 3), "{:?}", report.found);
    // A store folder without its catalog is passed over, said under its kind (Health groups by it).
    let bare = index.parent().unwrap().with_file_name("0000bare");
    std::fs::create_dir_all(&bare).unwrap();
    let report = tether_core::ops::system::doctor(&e.t).unwrap();
    let skipped: Vec<_> = report.skipped.iter().filter(|s| s.path == bare.display().to_string()).collect();
    assert_eq!(skipped.len(), 1, "{:?}", report.skipped);
    assert_eq!(skipped[0].kind, "sdk_agent", "{:?}", skipped[0]);
}
