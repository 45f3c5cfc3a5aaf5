use tether_history::sessions::{ProjectFilter, SearchQuery, ShowOptions};
use tether_testkit::CursorFixture;
use tether_testkit::eras::{build_all, ids::*};

use crate::Env;

fn env() -> Env {
    let fx = CursorFixture::new();
    build_all(&fx);
    let e = Env::new(fx);
    e.index();
    e
}

#[test]
fn every_era_is_indexed_and_searchable() {
    let e = env();
    for (word, id) in [
        ("zebracorn", A_INLINE),
        ("quokka", A_TAB),
        ("wombat", A_TAB_DELEGATE),
        ("narwhal", B_SPLIT),
        ("platypus", B_INLINE_GLOBAL),
        ("axolotl", C_V10),
        ("gecko", C_HEURISTIC),
        ("ibex", C_PANE),
        ("capybara", D_TABLE),
        ("ocelot", D_ITEM),
        ("futureword", P_FUTURE),
        ("mongoose", P_BAD_JSON),
        ("lynx", CLI_HEX),
        ("meerkat", CLI_PLAIN),
        ("pangolin", TRANSCRIPT),
    ] {
        assert_eq!(e.search_ids(word), vec![id.to_string()], "{word} should find exactly {id}");
    }
}

#[test]
fn hidden_things_stay_hidden() {
    let e = env();
    for word in ["orphanword", "subagentword", "systemword", "toolresultword", "agentkv", "replicaword"] {
        assert!(e.search_ids(word).is_empty(), "{word} must not be indexed");
    }
    let ids: Vec<String> = e.all().into_iter().map(|s| s.id).collect();
    assert!(!ids.contains(&D_SUBAGENT.to_string()), "subagents are not top-level sessions");
    assert!(!ids.contains(&P_EMPTY.to_string()), "empty composers are skipped");
    assert!(!ids.iter().any(|i| i == "empty-state-draft"));
}

#[test]
fn projects_are_attributed_by_the_strongest_evidence() {
    let e = env();
    let project = |id: &str| e.all().into_iter().find(|s| s.id == id).and_then(|s| s.project);
    assert_eq!(project(A_INLINE).as_deref(), Some("/home/u/alpha"), "workspace-inline");
    assert_eq!(project(B_SPLIT).as_deref(), Some("c:/Users/x/bproj"), "membership, Windows URI decoded");
    assert_eq!(
        project(C_V10).as_deref(),
        Some("/home/u/work/gamma.code-workspace"),
        "a .code-workspace is its own project"
    );
    assert_eq!(project(C_PANE).as_deref(), Some("/home/u/work/gamma.code-workspace"), "pane pointer membership");
    assert_eq!(project(C_HEURISTIC).as_deref(), Some("/home/u/alpha"), "file paths under a known project");
    assert_eq!(
        project(D_TABLE).as_deref(),
        Some("vscode-remote://ssh-remote+box/srv/delta"),
        "composerHeaders.workspaceId"
    );
    assert_eq!(project(D_ITEM).as_deref(), Some("/home/u/epsilon"), "workspaceIdentifier");
    assert_eq!(project(CLI_HEX).as_deref(), Some("/home/u/zeta"), "CLI cwd");
    assert_eq!(project(TRANSCRIPT).as_deref(), Some("home-u-eta"), "nothing says where: the folder name as it is");
    let alpha = tether_history::sessions::list(
        &e.t.store,
        &tether_history::sessions::ListQuery {
            project: ProjectFilter::Path("/home/u/alpha/src".into()),
            limit: 100,
            ..Default::default()
        },
    )
    .unwrap();
    let ids: Vec<_> = alpha.iter().map(|s| s.id.as_str()).collect();
    assert!(ids.contains(&A_INLINE) && ids.contains(&C_HEURISTIC), "a subfolder of a project selects it: {ids:?}");
}

#[test]
fn messages_keep_order_roles_tools_and_thinking() {
    let e = env();
    let d =
        tether_history::sessions::show(&e.t.store, C_V10, &ShowOptions { include_tools: true, ..Default::default() })
            .unwrap();
    let kinds: Vec<(&str, &str)> = d.messages.iter().map(|m| (m.role.as_str(), m.kind.as_str())).collect();
    assert_eq!(kinds, [("user", "text"), ("assistant", "thinking"), ("assistant", "tool"), ("assistant", "text")]);
    assert_eq!(d.messages[0].text, "Refactor the axolotl loader please", "richText fallback");
    assert_eq!(d.messages[2].tool_name.as_deref(), Some("edit_file_v2"));
    assert_eq!(d.messages[2].text, "src/loader.rs");
    assert_eq!(d.messages[0].created_at.as_deref(), Some("2025-10-31T14:39:16.989Z"));
    assert_eq!(d.session.messages, 2, "message count counts texts, not steps");
    let plain = tether_history::sessions::show(&e.t.store, C_V10, &ShowOptions::default()).unwrap();
    assert_eq!(plain.messages.len(), 2, "tool and thinking parts are optional in show");

    let b =
        tether_history::sessions::show(&e.t.store, B_SPLIT, &ShowOptions { include_tools: true, ..Default::default() })
            .unwrap();
    assert_eq!(b.messages.len(), 3, "a toolFormerData with only additionalData is not a tool call");
    assert_eq!(b.messages[2].text, "npm test", "params given as a JSON string");
    assert_eq!(b.messages[1].model.as_deref(), Some("claude-3.7-sonnet"), "model falls back to modelConfig");
    assert_eq!(b.messages[1].created_at.as_deref(), Some("2025-05-23T11:33:25.000Z"), "timingInfo.clientRpcSendTime");
}

#[test]
fn damage_is_counted_and_sources_marked_partial() {
    let e = env();
    let r = e.index();
    let report = tether_core::ops::system::doctor(&e.t).unwrap();
    let global = report.sources.iter().find(|s| s.kind == "global").unwrap();
    assert_eq!(global.status, "partial");
    for reason in ["null_key", "null_value", "bad_json", "missing_bubble"] {
        assert!(global.reasons.0.contains_key(reason), "{reason} in {:?}", global.reasons);
    }
    for note in ["orphan_bubble", "subagent", "newer_composer_version_99", "header_only", "empty_session"] {
        assert!(global.notes.0.contains_key(note), "{note} in {:?}", global.notes);
    }
    let transcript = report.sources.iter().find(|s| s.path.contains(TRANSCRIPT)).unwrap();
    assert_eq!(transcript.status, "partial", "a broken transcript line is damage");
    assert_eq!(r.sessions_written, 0, "a second pass over unchanged files writes nothing");
}

#[test]
fn todays_ide_chats_are_known_and_leave_their_source_complete() {
    let fx = CursorFixture::new();
    let g = fx.global(tether_testkit::Journal::Rollback);
    tether_testkit::eras::era_d_cursor3(&fx, &g);
    g.close();
    let e = Env::new(fx);
    e.index();
    let report = tether_core::ops::system::doctor(&e.t).unwrap();
    let global = report.sources.iter().find(|s| s.kind == "global").unwrap();
    assert_eq!(global.status, "complete", "{:?}", global.reasons);
    assert!(!global.notes.0.keys().any(|n| n.contains("version")), "17 and 18 are known: {:?}", global.notes);
    assert_eq!(e.search_ids("capybara"), vec![D_TABLE.to_string()]);
    assert_eq!(e.search_ids("ocelot"), vec![D_ITEM.to_string()]);
}

#[test]
fn header_only_chats_are_listed_with_their_title() {
    let e = env();
    let s = e.all().into_iter().find(|s| s.id == D_HEADER_ONLY).expect("header-only chat listed");
    assert_eq!(s.title.as_deref(), Some("Cloud only chat"));
    assert_eq!(s.messages, 0);
    assert_eq!(e.search_ids("cloud"), vec![D_HEADER_ONLY.to_string()], "titles are searchable");
}

#[test]
fn secrets_never_reach_the_index() {
    let fx = CursorFixture::new();
    build_all(&fx);
    // Cursor 3's sdk-agent-store: keys in an agent's blob store meta row and in catalog columns.
    let index = fx.sdk_agent_store(
        "/home/u/theta",
        &[tether_testkit::SdkAgent {
            id: "sdk-secret".into(),
            name: "Tapir agent".into(),
            created_at: "2026-10-04T00:00:00Z".into(),
            updated_at: "2026-10-04T00:00:00Z".into(),
            messages: Some(vec![
                serde_json::json!({"role": "user", "content": "tapir question"}),
                serde_json::json!({"role": "assistant", "content": "tapir answer"}),
            ]),
            extra_meta: serde_json::json!({"blobEncryptionKey": SECRET_KEY, "speculativeSummarizationEncryptionKey": SECRET_KEY,
                                           "cursorAuth/accessToken": SECRET_TOKEN}),
            runs: vec![],
        }],
    );
    let c = rusqlite::Connection::open(&index).unwrap();
    c.execute_batch(&format!(
        "ALTER TABLE agents ADD COLUMN blobEncryptionKey TEXT; ALTER TABLE agents ADD COLUMN auth_token TEXT;
         UPDATE agents SET blobEncryptionKey = '{SECRET_KEY}', auth_token = '{SECRET_TOKEN}';"
    ))
    .unwrap();
    drop(c);
    let e = Env::new(fx);
    e.index();
    assert!(!e.search_ids("tapir").is_empty(), "the SDK agent was read");
    // A second pass (over unchanged files) and a changed CLI store, then every file in the data
    // dir: the index, its -wal and -shm, logs, settings, whatever is there.
    e.index();
    let cli = e.fx.cursor_home.join("chats");
    let store = walk(&cli).into_iter().find(|p| p.ends_with("store.db")).unwrap();
    std::fs::OpenOptions::new().append(true).open(&store).unwrap().set_modified(std::time::SystemTime::now()).unwrap();
    e.index();
    let files = walk(e.data.path());
    assert!(files.iter().any(|p| p.ends_with(e.t.paths.db().file_name().unwrap())), "{files:?}");
    for secret in [SECRET_TOKEN, SECRET_KEY] {
        for f in &files {
            let bytes = std::fs::read(f).unwrap_or_default();
            assert!(
                !bytes.windows(secret.len()).any(|w| w == secret.as_bytes()),
                "{secret} leaked into {}",
                f.display()
            );
        }
    }
    for s in e.all() {
        for f in [
            tether_history::export::Format::Json,
            tether_history::export::Format::Html,
            tether_history::export::Format::Markdown,
        ] {
            if let Ok(out) = tether_history::export::export(&e.t.store, &s.id, f) {
                assert!(!out.contains(SECRET_KEY) && !out.contains(SECRET_TOKEN));
            }
        }
    }
}

/// Every file under `dir`.
fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() { stack.push(p) } else { out.push(p) }
        }
    }
    out
}

#[test]
fn bad_search_syntax_is_a_clear_error() {
    let e = env();
    let err = tether_history::sessions::search(&e.t.store, &SearchQuery::new("\"unclosed")).unwrap_err();
    assert_eq!(err.code(), tether_core::ErrorCode::InvalidInput, "{err}");
    assert!(tether_history::sessions::search(&e.t.store, &SearchQuery::new("parse-date AND")).is_err());
    assert!(!e.search_ids("narwhal leap").is_empty(), "plain words are ANDed");
}

#[test]
fn a_huge_bubble_is_indexed_without_trouble() {
    use tether_testkit::{Composer, Journal};
    let fx = CursorFixture::new();
    let g = fx.global(Journal::Rollback);
    let output = "x".repeat(60 * 1024 * 1024);
    Composer {
        id: "big00000-0000-4000-8000-000000000001",
        name: Some("Huge terminal output"),
        version: 16,
        bubble_version: 3,
        created_at: 1_790_000_000_000,
        extra: serde_json::json!({}),
        bubbles: vec![
            (1, serde_json::json!({"text": "run the hippogriff build"})),
            (2, serde_json::json!({"capabilityType": 15, "toolFormerData": {"name": "run_terminal_cmd", "status": "completed",
                "params": {"command": "make hippogriff"}, "result": serde_json::json!({"output": output}).to_string()}})),
        ],
    }
    .write(&g);
    g.close();
    let e = Env::new(fx);
    e.index();
    assert_eq!(e.search_ids("hippogriff").len(), 1);
    let d = tether_history::sessions::show(
        &e.t.store,
        "big00000",
        &ShowOptions { include_tools: true, ..Default::default() },
    )
    .unwrap();
    assert_eq!(d.messages[1].text, "make hippogriff", "tool output is not copied into the index");
}

#[test]
fn real_world_shapes_get_their_real_project_and_only_chats_are_listed() {
    let fx = CursorFixture::new();
    tether_testkit::eras::real_world(&fx);
    let e = Env::new(fx);
    let r = e.index();
    let project = |id: &str| e.all().into_iter().find(|s| s.id == id).and_then(|s| s.project);
    assert_eq!(project(RW_META).as_deref(), Some("/home/u/my-app"), "meta.json cwd, dashes kept");
    assert_eq!(project(RW_HINT).as_deref(), Some("/srv/data-pipe"), "a path inside the chat");
    assert_eq!(project(RW_NOTHING).as_deref(), Some("opt-some-tool"), "the folder name as it is, not /opt/some/tool");
    assert_eq!(project(RW_BARE).as_deref(), Some("/home/u/bare-ws"), "workspace.json without state.vscdb");
    let (front, back) = (project(RW_FRONT), project(RW_BACK));
    assert_eq!(front.as_deref(), Some("/home/u/mono/front.code-workspace"));
    assert_eq!(back.as_deref(), Some("/home/u/mono/back.code-workspace"), "two workspaces in one folder stay apart");

    let ids: Vec<String> = e.all().into_iter().map(|s| s.id).collect();
    assert!(!ids.contains(&RW_ERROR_ONLY.to_string()), "an error-only transcript is not a chat");
    let src = r.sources.iter().find(|s| s.path.contains(RW_ERROR_ONLY)).expect("its source is reported");
    assert_eq!(src.status, "partial");
    assert_eq!(src.reasons.0.get("no_conversation"), Some(&1));
    let d = tether_history::sessions::show(
        &e.t.store,
        RW_ERROR_INSIDE,
        &ShowOptions { offset: 0, limit: 0, include_tools: true },
    )
    .unwrap();
    let kinds: Vec<(&str, &str)> = d.messages.iter().map(|m| (m.role.as_str(), m.kind.as_str())).collect();
    assert_eq!(kinds, [("user", "text"), ("system", "error"), ("assistant", "text")]);
    assert_eq!(d.messages[1].text, "connection reset");
}
