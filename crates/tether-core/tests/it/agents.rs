//! Claude Code's, Codex CLI's and Gemini CLI's chats beside Cursor's, built in each test from the published
//! shapes (`agent-formats.md`; builders in `tether_testkit::agents`): listed with their agent,
//! searched, read in order with one copy of each message, their recorded tokens summed exactly,
//! bad lines counted, their files never written.

use tether_core::ops::sessions::{Find, FoundChats};
use tether_core::{CursorLocations, Paths, Tether};
use tether_history::index::Depth;
use tether_history::sessions::{ListQuery, ShowOptions};
use tether_testkit::CursorFixture;
use tether_testkit::agents::{self, claude, codex, gemini};

use crate::Env;

const KIWI: &str = "/home/u/kiwi-app.v2";
const HERON: &str = "/home/u/heron";
const CLAUDE_ID: &str = "5f1c2d3e-0000-4000-8000-00000000c1a0";
const CODEX_ID: &str = "0199a000-0000-7000-8000-0000000c0de5";

fn env_with_agents(fx: CursorFixture) -> Env {
    let data = tempfile::tempdir().unwrap();
    let mut loc = CursorLocations::explicit(Some(fx.user_dir.clone()), Some(fx.cursor_home.clone()));
    loc.claude_dirs = vec![agents::claude_dir(&fx)];
    loc.codex_homes = vec![agents::codex_home(&fx)];
    loc.gemini_dirs = vec![agents::gemini_dir(&fx)];
    let t = Tether::open(Paths::at(data.path()), loc).unwrap();
    Env { fx, data, t }
}

/// A Claude Code session: a prompt, a response written as three block lines (thinking with an
/// intermediate usage snapshot, a tool call, then the final snapshot), the tool's result, a
/// Task call answered by a subagent, a compaction, a prompt after it, a copied line (resume),
/// a summary and a half-written last line.
fn claude_chat(fx: &CursorFixture) {
    let s = CLAUDE_ID;
    let t = |n: u32| format!("2026-11-01T10:00:{n:02}.000Z");
    let opus = "claude-opus-4-6";
    let mut lines = vec![
        claude::prompt("u1", s, KIWI, &t(0), "why does the marmoset parser drop tabs"),
        claude::block(
            "a1",
            s,
            KIWI,
            &t(1),
            "msg_1",
            opus,
            serde_json::json!({"type": "thinking", "thinking": "Tabs are stripped in lexer.rs", "signature": "x"}),
            (10, 1000, 0, 2),
        ),
        claude::block(
            "a2",
            s,
            KIWI,
            &t(2),
            "msg_1",
            opus,
            serde_json::json!({"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": format!("{KIWI}/src/lexer.rs")}}),
            (10, 1000, 0, 2),
        ),
        claude::block(
            "a3",
            s,
            KIWI,
            &t(3),
            "msg_1",
            opus,
            serde_json::json!({"type": "text", "text": "The lexer trims tabs before parsing."}),
            (10, 1000, 0, 150),
        ),
        claude::tool_result("u2", s, KIWI, &t(4), "toolu_1", "fn lex(input: &str) { input.trim_matches('\\t') }"),
        claude::block(
            "a4",
            s,
            KIWI,
            &t(5),
            "msg_2",
            opus,
            serde_json::json!({"type": "tool_use", "id": "toolu_2", "name": "Task", "input": {"prompt": "find other trims", "subagent_type": "general-purpose"}}),
            (5, 0, 1010, 40),
        ),
        claude::tool_result("u3", s, KIWI, &t(6), "toolu_2", "Found one more trim in fmt.rs"),
    ];
    lines.extend(claude::compaction("u4", s, KIWI, &t(7), "The user asked about the marmoset parser."));
    lines.extend([
        claude::prompt("u5", s, KIWI, &t(8), "now fix it without touching fmt.rs"),
        claude::block(
            "a5",
            s,
            KIWI,
            &t(9),
            "msg_3",
            opus,
            serde_json::json!({"type": "text", "text": "Fixed: tabs are kept."}),
            (3, 0, 2000, 60),
        ),
        // Resumed sessions copy lines: the same uuid is read once.
        claude::prompt("u5", s, KIWI, &t(8), "now fix it without touching fmt.rs"),
        claude::summary("Marmoset parser keeps tabs", "a5"),
        r#"{"type":"assistant","uuid":"a6","message":{"id":"msg_4","content":[{"type":"te"#.to_owned(),
    ]);
    agents::claude_session(fx, KIWI, s, &lines);
    let sub = "a1b2c3d";
    let haiku = "claude-haiku-4-5-20251001";
    agents::claude_subagent(
        fx,
        KIWI,
        s,
        sub,
        &[
            claude::sidechain(&claude::prompt("s1", s, KIWI, &t(5), "find other trims"), sub),
            claude::sidechain(
                &claude::block(
                    "s2",
                    s,
                    KIWI,
                    &t(6),
                    "msg_s1",
                    haiku,
                    serde_json::json!({"type": "text", "text": "Found one more trim in fmt.rs"}),
                    (7, 0, 0, 11),
                ),
                sub,
            ),
        ],
    );
}

/// A Codex rollout: context, a prompt and an answer each written twice (response item + event),
/// reasoning, a shell call and its output, token counts (a first one without figures, one
/// repeated), a compaction repeating the prompt, and a bad line.
fn codex_chat(fx: &CursorFixture) {
    let t = |n: u32| format!("2026-11-02T09:00:{n:02}.000Z");
    let mut lines = vec![
        codex::meta(&t(0), CODEX_ID, HERON),
        codex::turn(&t(0), HERON, "gpt-5-codex"),
        codex::environment(&t(0), HERON),
        codex::tokens(&t(0), None, 0),
    ];
    lines.extend(codex::said(&t(1), "user", "rename the egret module to wader"));
    lines.extend(codex::reasoning(&t(2), "Look for the egret module first"));
    lines.extend(codex::shell(&t(3), "call_1", &["rg", "-l", "egret"], HERON, "src/egret.rs"));
    lines.push(codex::tokens(&t(3), Some((1200, 1000, 80, 64)), 1280));
    lines.push(codex::tokens(&t(3), Some((1200, 1000, 80, 64)), 1280));
    lines.push("{\"timestamp\":\"2026-11-02T09:00:04.000Z\",\"type\":".to_owned());
    lines.extend(codex::said(&t(5), "assistant", "Renamed egret to wader in three files."));
    lines.push(codex::tokens(&t(5), Some((1500, 1400, 40, 0)), 2820));
    lines.push(codex::compacted(&t(6), "Renamed the module.", "rename the egret module to wader"));
    agents::codex_rollout(fx, "2026/11/02", CODEX_ID, &lines);
}

fn read(e: &Env, id: &str) -> Vec<(String, String, String)> {
    let o = ShowOptions { offset: 0, limit: 0, include_tools: true };
    let d = tether_history::sessions::show(&e.t.store, id, &o).unwrap();
    d.messages.into_iter().map(|m| (m.role, m.kind, m.text)).collect()
}

fn own(v: &[(&str, &str, &str)]) -> Vec<(String, String, String)> {
    v.iter().map(|(a, b, c)| ((*a).into(), (*b).into(), (*c).into())).collect()
}

#[test]
fn claude_code_and_codex_chats_are_listed_searched_and_read_beside_cursors() {
    let fx = CursorFixture::new();
    claude_chat(&fx);
    codex_chat(&fx);
    let before = fx.snapshot();
    let e = env_with_agents(fx);
    let r = e.index();
    assert_eq!(e.fx.snapshot(), before, "not one byte of the agents' files changed");

    let all = e.all();
    let row = |id: &str| all.iter().find(|s| s.id == id).unwrap_or_else(|| panic!("{id} not listed: {all:?}"));
    let c = row(CLAUDE_ID);
    assert_eq!(
        (c.source.as_str(), c.project.as_deref()),
        ("claude-code", Some(KIWI)),
        "project from cwd, not the folder"
    );
    assert_eq!(c.title.as_deref(), Some("Marmoset parser keeps tabs"));
    assert_eq!(c.model.as_deref(), Some("claude-opus-4-6"));
    let x = row(CODEX_ID);
    assert_eq!((x.source.as_str(), x.project.as_deref()), ("codex", Some(HERON)));
    assert_eq!(x.title.as_deref(), Some("rename the egret module to wader"));
    assert_eq!(x.model.as_deref(), Some("gpt-5-codex"));
    assert_eq!(all.len(), 2, "the subagent is read inside its parent: {all:?}");

    let only = |agent: &str| {
        let q = ListQuery { source: Some(agent.into()), limit: 100, ..Default::default() };
        tether_history::sessions::list(&e.t.store, &q).unwrap().into_iter().map(|s| s.id).collect::<Vec<_>>()
    };
    assert_eq!(only("claude-code"), [CLAUDE_ID]);
    assert_eq!(only("codex"), [CODEX_ID]);

    assert_eq!(
        read(&e, CLAUDE_ID),
        own(&[
            ("user", "text", "why does the marmoset parser drop tabs"),
            ("assistant", "thinking", "Tabs are stripped in lexer.rs"),
            ("assistant", "tool", "/home/u/kiwi-app.v2/src/lexer.rs"),
            ("assistant", "text", "The lexer trims tabs before parsing."),
            ("assistant", "tool", "find other trims"),
            (
                "system",
                "text",
                "This session is being continued from a previous conversation. The user asked about the marmoset parser."
            ),
            ("user", "text", "now fix it without touching fmt.rs"),
            ("assistant", "text", "Fixed: tabs are kept."),
            // The subagent, nested: what it was asked, then its answer.
            ("assistant", "tool", "find other trims"),
            ("assistant", "text", "Found one more trim in fmt.rs"),
        ])
    );
    assert_eq!(
        read(&e, CODEX_ID),
        own(&[
            ("system", "text", "<environment_context>\n  <cwd>/home/u/heron</cwd>\n</environment_context>"),
            ("user", "text", "rename the egret module to wader"),
            ("assistant", "thinking", "Look for the egret module first"),
            ("assistant", "tool", "rg -l egret"),
            ("assistant", "text", "Renamed egret to wader in three files."),
        ])
    );

    // What the continue_session prompt (and "Continue in Cursor") has the new chat do: read the
    // Claude Code chat's last messages with session_read, by a prefix of its id as agents pass it.
    let req = tether_core::ops::sessions::Read { session: CLAUDE_ID[..13].into(), ..Default::default() };
    match tether_core::ops::sessions::read_chat(&e.t, req).unwrap() {
        tether_core::ops::sessions::ReadChat::Local(w) => {
            assert_eq!(w.session.id, CLAUDE_ID);
            assert_eq!(w.session.source, "claude-code");
            let texts: Vec<&str> = w.messages.iter().map(|m| m.text.as_str()).collect();
            assert!(texts.contains(&"Fixed: tabs are kept."), "{texts:?}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(e.search_ids("marmoset"), [CLAUDE_ID]);
    assert_eq!(e.search_ids("wader"), [CODEX_ID]);
    assert_eq!(e.search_ids("fmt.rs"), [CLAUDE_ID], "the subagent's words are searchable in its parent");

    // The agent filter, listing and searching (`sessions_find` over MCP maps to this).
    let find = |query: Option<&str>, agent: &str| {
        let f = Find {
            query: query.map(str::to_owned),
            project: Some("all".into()),
            agent: Some(agent.into()),
            ..Default::default()
        };
        match tether_core::ops::sessions::find(&e.t, &[], f).unwrap() {
            FoundChats::Hits { hits, .. } => hits.into_iter().map(|h| h.session_id).collect::<Vec<_>>(),
            FoundChats::Listed { sessions, .. } => sessions.into_iter().map(|s| s.id).collect(),
            other => panic!("{other:?}"),
        }
    };
    assert_eq!(find(None, "codex"), [CODEX_ID]);
    assert_eq!(find(None, "cursor"), Vec::<String>::new());
    assert_eq!(find(Some("fmt.rs"), "claude-code"), [CLAUDE_ID]);
    assert_eq!(find(Some("fmt.rs"), "codex"), Vec::<String>::new());
    let bad = Find { agent: Some("vim".into()), ..Default::default() };
    let err = tether_core::ops::sessions::find(&e.t, &[], bad).unwrap_err();
    assert_eq!(err.code().as_str(), "invalid_input", "{err}");

    // Exact sums: Claude once per response at its last snapshot (input counts cache writes and
    // reads), the subagent's own response added; Codex `last_token_usage` once per new total.
    let tokens = |id: &str| {
        e.t.store
            .read(|c| {
                Ok(c.query_row("SELECT input_tokens, output_tokens FROM sessions WHERE id = ?1", [id], |r| {
                    Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?))
                })?)
            })
            .unwrap()
    };
    assert_eq!(tokens(CLAUDE_ID), (1010 + 1015 + 2003 + 7, 150 + 40 + 60 + 11));
    assert_eq!(tokens(CODEX_ID), (1200 + 1500, 80 + 40));

    // Bad lines are skipped and counted on their source, never fatal.
    let by_kind = |k: &str| r.sources.iter().find(|s| s.kind.as_str() == k).unwrap().clone();
    assert_eq!(by_kind("claude_code").reasons.0.get("bad_json"), Some(&1), "{:?}", r.sources);
    assert_eq!(by_kind("codex").reasons.0.get("bad_json"), Some(&1));
    assert_eq!(by_kind("codex").notes.0.get("compaction"), Some(&1), "{:?}", by_kind("codex"));
}

#[test]
fn an_appended_line_is_read_by_the_next_pass_without_duplicating_the_chat() {
    let fx = CursorFixture::new();
    let t = "2026-11-03T08:00:00.000Z";
    let first = claude::prompt("p1", "c0ffee00-0000-4000-8000-000000000001", KIWI, t, "count the otters");
    let path = agents::claude_session(&fx, KIWI, "c0ffee00-0000-4000-8000-000000000001", std::slice::from_ref(&first));
    let e = env_with_agents(fx);
    e.index();
    assert_eq!(read(&e, "c0ffee00-0000-4000-8000-000000000001").len(), 1);
    let answer = claude::block(
        "p2",
        "c0ffee00-0000-4000-8000-000000000001",
        KIWI,
        "2026-11-03T08:00:05.000Z",
        "msg_o",
        "claude-sonnet-4-5-20250929",
        serde_json::json!({"type": "text", "text": "There are seven otters."}),
        (1, 2, 3, 4),
    );
    std::fs::write(&path, format!("{first}\n{answer}\n{first}\n")).unwrap();
    e.t.index(Depth::Deep, &tether_history::index::no_progress).unwrap();
    assert_eq!(
        read(&e, "c0ffee00-0000-4000-8000-000000000001"),
        own(&[("user", "text", "count the otters"), ("assistant", "text", "There are seven otters.")])
    );
    assert_eq!(e.search_ids("otters"), ["c0ffee00-0000-4000-8000-000000000001"]);
}

#[test]
fn the_watcher_picks_up_a_new_claude_line_a_new_codex_rollout_and_a_new_gemini_session() {
    use std::sync::Arc;
    use std::time::{Duration, Instant};
    use tether_history::watch::WatchConfig;

    let fx = CursorFixture::new();
    let id = "d00d0000-0000-4000-8000-000000000001";
    let first = claude::prompt("w1", id, KIWI, "2026-11-04T08:00:00.000Z", "where are the puffins");
    let path = agents::claude_session(&fx, KIWI, id, std::slice::from_ref(&first));
    codex_chat(&fx);
    let owl = agents::gemini_chats(&fx, "owl-service", Some(OWL));
    let e = env_with_agents(fx);
    e.index();
    let t = Arc::new(e.t);
    let cfg = WatchConfig { debounce: Duration::from_millis(50), deep_every: Duration::from_secs(3600) };
    let w = t.watch(cfg, |_| {}).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let answer = claude::block(
        "w2",
        id,
        KIWI,
        "2026-11-04T08:00:03.000Z",
        "msg_p",
        "claude-opus-4-6",
        serde_json::json!({"type": "text", "text": "The puffins nest on the cliffwordzz."}),
        (1, 0, 0, 1),
    );
    std::fs::write(&path, format!("{first}\n{answer}\n")).unwrap();
    let rollout = [codex::meta("2026-11-05T09:00:00.000Z", "0199b000-0000-7000-8000-0000000000aa", HERON)]
        .into_iter()
        .chain(codex::said("2026-11-05T09:00:01.000Z", "user", "tidy the grebewordzz tests"))
        .collect::<Vec<_>>();
    agents::codex_rollout(&e.fx, "2026/11/05", "0199b000-0000-7000-8000-0000000000aa", &rollout);
    let gid = "e1e1e1e1-0000-4000-8000-000000000001";
    let said = gemini::user("g1", "2026-11-05T10:00:00.000Z", "feed the owlwordzz").to_string();
    agents::gemini_session(&owl, gid, &[gemini::meta(gid, OWL, "2026-11-05T10:00:00.000Z"), said]);
    let found = |q: &str| {
        !tether_history::sessions::search(&t.store, &tether_history::sessions::SearchQuery::new(q)).unwrap().is_empty()
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    while !(found("cliffwordzz") && found("grebewordzz") && found("owlwordzz")) {
        assert!(Instant::now() < deadline, "the agents' changes were never indexed");
        std::thread::sleep(Duration::from_millis(20));
    }
    w.stop();
}

const OWL: &str = "/home/u/owl-service";
const HAWK: &str = "/home/u/hawk";
const GEMINI_ID: &str = "7c9e6679-7425-40de-944b-e07fc1f90ae7";
const GEMINI_OLD_ID: &str = "16fd2706-8baf-433b-82eb-8c7fada847da";

/// Gemini CLI: a 0.39+ JSONL session in a 0.29+ slug folder (`.project_root`): a prompt, a model
/// message appended three times as its tool call runs and its tokens arrive, the tool's output
/// as a functionResponse-only user message, an answer, a rewound exchange, a `$set` summary, a
/// subagent, a bad line, and an older `.json` of the same session its `.jsonl` continues. And a
/// pre-0.29 hash folder holding a 0.38 whole-file JSON session, its root known to `projects.json`.
fn gemini_chats(fx: &CursorFixture) {
    let t = |n: u32| format!("2026-11-03T08:00:{n:02}.000Z");
    let pro = "gemini-2.5-pro";
    let read = |status: &str| {
        serde_json::json!([gemini::call(
            "c1",
            "read_file",
            serde_json::json!({"file_path": format!("{OWL}/src/nest.go")}),
            status
        )])
    };
    let chats = agents::gemini_chats(fx, "owl-service", Some(OWL));
    let lines = [
        gemini::meta(GEMINI_ID, OWL, &t(0)),
        gemini::user("m1", &t(0), "why does the owl nest leak goroutines").to_string(),
        gemini::model("m2", &t(1), pro, "", read("executing"), None).to_string(),
        gemini::model("m2", &t(1), pro, "", read("executing"), Some((4000, 30, 3000, 120))).to_string(),
        gemini::model("m2", &t(1), pro, "", read("success"), Some((4000, 30, 3000, 120))).to_string(),
        gemini::tool_response("m3", &t(2), "c1", "read_file", "func nest() { go loop() }").to_string(),
        gemini::model(
            "m4",
            &t(3),
            pro,
            "The loop goroutine never sees ctx.Done().",
            serde_json::json!([]),
            Some((4200, 60, 4000, 0)),
        )
        .to_string(),
        gemini::user("m5", &t(4), "also rename it").to_string(),
        gemini::model("m6", &t(5), pro, "Renamed.", serde_json::json!([]), Some((100, 5, 0, 0))).to_string(),
        serde_json::json!({"$rewindTo": "m5"}).to_string(),
        serde_json::json!({"$set": {"summary": "Owl nest goroutine leak", "lastUpdated": t(9)}}).to_string(),
        r#"{"id":"m7","timestamp":"2026-11-03T08:00:10.000Z","type":"gem"#.to_owned(),
    ];
    agents::gemini_session(&chats, GEMINI_ID, &lines);
    // The same session before it was resumed by 0.39 (Gemini wrote the .jsonl beside it).
    let old = chats.join(format!("session-2026-11-03T08-00-{}.json", &GEMINI_ID[..8]));
    std::fs::write(
        &old,
        serde_json::json!({"sessionId": GEMINI_ID, "projectHash": gemini::project_hash(OWL), "messages": []})
            .to_string(),
    )
    .unwrap();
    let sub = chats.join(GEMINI_ID).join("b7e2a1f0-0000-4000-8000-00000000000b.jsonl");
    std::fs::create_dir_all(sub.parent().unwrap()).unwrap();
    let sub_lines = [
        serde_json::json!({"sessionId": "b7e2a1f0-0000-4000-8000-00000000000b", "projectHash": gemini::project_hash(OWL), "kind": "subagent"})
            .to_string(),
        gemini::user("s1", &t(2), "list callers of nest").to_string(),
        gemini::model("s2", &t(3), "gemini-2.5-flash", "Two callers: roost.go and perch.go.", serde_json::json!([]), Some((900, 20, 0, 0)))
            .to_string(),
    ];
    std::fs::write(&sub, sub_lines.join("\n") + "\n").unwrap();

    let hash_dir = agents::gemini_chats(fx, &gemini::project_hash(HAWK), None);
    agents::gemini_registry(fx, &[(HAWK, "hawk")]);
    let record = serde_json::json!({"sessionId": GEMINI_OLD_ID, "projectHash": gemini::project_hash(HAWK),
    "startTime": "2026-01-10T10:00:00.000Z", "lastUpdated": "2026-01-10T10:00:05.000Z", "messages": [
        gemini::user("h1", "2026-01-10T10:00:00.000Z", "sharpen the hawk talons"),
        gemini::model("h2", "2026-01-10T10:00:05.000Z", "gemini-2.5-flash", "Talons sharpened.", serde_json::json!([]), Some((50, 7, 0, 3))),
    ]});
    std::fs::write(
        hash_dir.join(format!("session-2026-01-10T10-00-{}.json", &GEMINI_OLD_ID[..8])),
        serde_json::to_string_pretty(&record).unwrap(),
    )
    .unwrap();
}

#[test]
fn gemini_cli_chats_are_listed_with_their_project_searched_read_and_their_tokens_summed() {
    let fx = CursorFixture::new();
    gemini_chats(&fx);
    let before = fx.snapshot();
    let e = env_with_agents(fx);
    let r = e.index();
    assert_eq!(e.fx.snapshot(), before, "not one byte of Gemini's files changed");

    let all = e.all();
    assert_eq!(all.len(), 2, "one chat per session: the continued .json and the subagent are not chats: {all:?}");
    let row = |id: &str| all.iter().find(|s| s.id == id).unwrap_or_else(|| panic!("{id} not listed: {all:?}"));
    let g = row(GEMINI_ID);
    assert_eq!((g.source.as_str(), g.project.as_deref()), ("gemini", Some(OWL)), "project from .project_root");
    assert_eq!(g.title.as_deref(), Some("Owl nest goroutine leak"));
    assert_eq!(g.model.as_deref(), Some("gemini-2.5-pro"));
    let h = row(GEMINI_OLD_ID);
    assert_eq!(
        (h.source.as_str(), h.project.as_deref(), h.format.as_str()),
        ("gemini", Some(HAWK), "gemini-json"),
        "a hash folder's project found by hashing the roots projects.json knows"
    );

    assert_eq!(
        read(&e, GEMINI_ID),
        own(&[
            ("user", "text", "why does the owl nest leak goroutines"),
            ("assistant", "tool", "/home/u/owl-service/src/nest.go"),
            ("assistant", "text", "The loop goroutine never sees ctx.Done()."),
            ("assistant", "tool", "list callers of nest"),
            ("assistant", "text", "Two callers: roost.go and perch.go."),
        ]),
        "one copy of the re-appended message, the tool output and the rewound exchange not shown"
    );
    assert_eq!(e.search_ids("goroutines"), [GEMINI_ID]);
    assert_eq!(e.search_ids("perch.go"), [GEMINI_ID], "the subagent's words are searchable in its parent");
    assert_eq!(e.search_ids("talons"), [GEMINI_OLD_ID]);
    assert!(e.search_ids("rename").is_empty(), "rewound");

    let f = Find { project: Some("all".into()), agent: Some("gemini".into()), ..Default::default() };
    match tether_core::ops::sessions::find(&e.t, &[], f).unwrap() {
        FoundChats::Listed { sessions, .. } => assert_eq!(sessions.len(), 2),
        other => panic!("{other:?}"),
    }

    // Each request once at its last copy, the rewound one too (it was made); input counts the
    // cached part and the tool prompt, output the thoughts.
    let tokens = |id: &str| {
        e.t.store
            .read(|c| {
                Ok(c.query_row("SELECT input_tokens, output_tokens FROM sessions WHERE id = ?1", [id], |r| {
                    Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?))
                })?)
            })
            .unwrap()
    };
    assert_eq!(tokens(GEMINI_ID), (4000 + 4200 + 100 + 900, 30 + 120 + 60 + 5 + 20));
    assert_eq!(tokens(GEMINI_OLD_ID), (50, 7 + 3));

    let src = r.sources.iter().find(|s| s.kind.as_str() == "gemini" && s.path.ends_with(".jsonl")).unwrap();
    assert_eq!(src.reasons.0.get("bad_json"), Some(&1), "{src:?}");
    use tether_history::watch::Indexer;
    let d = tether_history::cursor::discover_all(&e.t.locations());
    assert!(d.skipped.iter().any(|s| s.path.ends_with(".json") && s.reason.contains("continued")), "{:?}", d.skipped);
}

#[test]
fn the_agents_recorded_tokens_are_usage_rows_per_request_cache_priced_apart_and_copies_counted_once() {
    use tether_core::usage::report::{Dim, UsageQuery, report};
    let fx = CursorFixture::new();
    claude_chat(&fx);
    codex_chat(&fx);
    gemini_chats(&fx);
    // A resumed Claude Code session: a new file carrying a copy of msg_3, then a new response.
    let resumed = "5f1c2d3e-0000-4000-8000-00000000c1a1";
    let opus = "claude-opus-4-6";
    let copy = |uuid: &str, msg: &str, ts: &str, text: &str, usage| {
        let block = serde_json::json!({"type": "text", "text": text});
        claude::block(uuid, resumed, KIWI, ts, msg, opus, block, usage)
    };
    agents::claude_session(
        &fx,
        KIWI,
        resumed,
        &[
            copy("a5", "msg_3", "2026-11-01T10:00:09.000Z", "Fixed: tabs are kept.", (3, 0, 2000, 60)),
            claude::prompt("r1", resumed, KIWI, "2026-11-06T10:00:00.000Z", "and the docs?"),
            copy("r2", "msg_9", "2026-11-06T10:00:01.000Z", "Docs updated.", (4, 0, 500, 20)),
        ],
    );
    // A forked Codex rollout replaying the first turn's token event, then a turn of its own.
    let fork = "0199a000-0000-7000-8000-0000000f0f0f";
    let mut lines = vec![
        codex::meta("2026-11-02T09:00:00.000Z", fork, HERON),
        codex::turn("2026-11-02T09:00:00.000Z", HERON, "gpt-5-codex"),
    ];
    lines.extend(codex::said("2026-11-02T09:00:01.000Z", "user", "rename the egret module to wader"));
    lines.push(codex::tokens("2026-11-02T09:00:03.000Z", Some((1200, 1000, 80, 64)), 1280));
    lines.push(codex::tokens("2026-11-07T09:00:00.000Z", Some((600, 0, 10, 0)), 1890));
    agents::codex_rollout(&fx, "2026/11/07", fork, &lines);
    let e = env_with_agents(fx);
    e.index();

    let q = UsageQuery {
        since: Some("100y".into()),
        by: vec![Dim::Agent, Dim::Model],
        source: Some("agents".into()),
        ..Default::default()
    };
    let r = report(&e.t, &q).unwrap();
    let mut got: Vec<(Vec<String>, u64, [Option<i64>; 4])> = r
        .rows
        .iter()
        .map(|row| (row.keys.clone(), row.items, [row.input, row.output, row.cache_read, row.cache_write]))
        .collect();
    got.sort(); // grouped by agent, rows come biggest cost first
    let k = |a: &str, m: &str| vec![a.to_owned(), m.to_owned()];
    assert_eq!(
        got,
        [
            // msg_1, msg_2, msg_3 (once, though two files hold it) and msg_9; input is the uncached part.
            (k("claude-code", "claude-haiku-4-5-20251001"), 1, [Some(7), Some(11), Some(0), Some(0)]),
            (
                k("claude-code", "claude-opus-4-6"),
                4,
                [Some(10 + 5 + 3 + 4), Some(150 + 40 + 60 + 20), Some(1010 + 2000 + 500), Some(1000)]
            ),
            // Two turns, the fork's replay of the first not again, and the fork's own turn.
            (k("codex", "gpt-5-codex"), 3, [Some(200 + 100 + 600), Some(80 + 40 + 10), Some(1000 + 1400), Some(0)]),
            // The subagent's and the 0.38 session's; thoughts are output.
            (k("gemini", "gemini-2.5-flash"), 2, [Some(900 + 50), Some(20 + 10), Some(0), Some(0)]),
            // m2 once (three copies), m4, and the rewound m6 (it was asked).
            (
                k("gemini", "gemini-2.5-pro"),
                3,
                [Some(1000 + 200 + 100), Some(150 + 60 + 5), Some(3000 + 4000), Some(0)]
            ),
        ],
        "{:#?}",
        r.rows
    );
    // Cached input at the cache rate: gpt-5-codex is priced as gpt-5 ($1.25 in, $10 out, $0.125
    // cached per million).
    let codex_row = r.rows.iter().find(|row| row.keys[0] == "codex").unwrap();
    let want = (900.0 * 1.25 + 130.0 * 10.0 + 2400.0 * 0.125) / 1e6;
    assert!((codex_row.cost_usd.unwrap() - want).abs() < 1e-12, "{:?} vs {want}", codex_row.cost_usd);
    assert!(codex_row.cost_estimated);
    assert_eq!(r.coverage.agent_requests, 13);
    assert_eq!(r.coverage.agent_chats, 6);
    assert!(r.coverage.notes.iter().any(|n| n.contains("claude-code: 5 in 2 chats")), "{:?}", r.coverage.notes);

    // Their chats are not counted again from the chats' totals.
    let chats =
        report(&e.t, &UsageQuery { since: Some("100y".into()), source: Some("chats".into()), ..Default::default() })
            .unwrap();
    assert_eq!(chats.coverage.chats, 0, "{:?}", chats.rows);
}

#[test]
fn an_agent_turned_off_is_not_read_and_doctor_tells_each_agent_found_read_and_skipped() {
    use tether_core::paths::AgentEnv;
    let fx = CursorFixture::new();
    claude_chat(&fx);
    codex_chat(&fx);
    gemini_chats(&fx);
    let data = tempfile::tempdir().unwrap();
    let mut loc = CursorLocations::explicit(Some(fx.user_dir.clone()), Some(fx.cursor_home.clone()));
    loc.add_agents(&fx.home, &AgentEnv::default(), &["codex".into()]);
    let t = Tether::open(Paths::at(data.path()), loc).unwrap();
    let e = Env { fx, data, t };
    e.index();
    let sources: Vec<String> = e.all().into_iter().map(|s| s.source).collect();
    assert!(!sources.iter().any(|s| s == "codex"), "codex is off: {sources:?}");
    assert_eq!(sources.iter().filter(|s| *s == "claude-code").count(), 1);

    let d = tether_core::doctor::doctor(&e.t).unwrap();
    let agent = |a: &str| d.agents.iter().find(|s| s.agent == a).unwrap_or_else(|| panic!("{a}: {:?}", d.agents));
    let codex = agent("codex");
    assert!(!codex.enabled && codex.folders.is_empty() && codex.files == 0, "{codex:?}");
    let claude = agent("claude-code");
    assert!(claude.enabled);
    assert_eq!((claude.files, claude.chats, claude.messages), (1, 1, 6), "{claude:?}");
    assert_eq!(claude.problems.0.get("bad_json"), Some(&1), "the half-written line: {claude:?}");
    assert_eq!(claude.folders[0].path, e.fx.home.join(".claude").display().to_string());
    let gemini = agent("gemini");
    assert_eq!((gemini.files, gemini.chats), (2, 2), "{gemini:?}");
    assert_eq!(gemini.incomplete, 1, "the session with a bad line: {gemini:?}");
    assert_eq!(gemini.skipped.len(), 1, "{gemini:?}");
    assert!(gemini.skipped[0].reason.contains("continued in the .jsonl"), "{gemini:?}");
    assert!(d.discovery_notes.iter().any(|n| n.contains("Codex CLI: not read")), "{:?}", d.discovery_notes);
}
