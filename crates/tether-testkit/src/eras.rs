//! One fixture per Cursor storage era and pitfall (reference §7), each carrying a unique word
//! so tests can prove it was indexed (or, for orphans and secrets, that it was not).

use serde_json::{Value, json};

use crate::{Composer, CursorFixture, Journal, KvDb, rich_text};

/// Ids and words the fixtures plant, for assertions.
pub mod ids {
    pub const A_INLINE: &str = "a1111111-0000-4000-8000-000000000001";
    pub const A_TAB: &str = "tab-legacy-1";
    pub const A_TAB_DELEGATE: &str = "tab-legacy-2";
    pub const B_SPLIT: &str = "b2222222-0000-4000-8000-000000000001";
    pub const B_INLINE_GLOBAL: &str = "b2222222-0000-4000-8000-000000000002";
    pub const C_V10: &str = "c3333333-0000-4000-8000-000000000001";
    pub const C_HEURISTIC: &str = "c3333333-0000-4000-8000-000000000002";
    pub const C_PANE: &str = "c3333333-0000-4000-8000-000000000003";
    pub const D_TABLE: &str = "d4444444-0000-4000-8000-000000000001";
    pub const D_ITEM: &str = "d4444444-0000-4000-8000-000000000002";
    pub const D_HEADER_ONLY: &str = "d4444444-0000-4000-8000-000000000003";
    pub const D_SUBAGENT: &str = "d4444444-0000-4000-8000-000000000004";
    pub const P_NULL_VALUE: &str = "p5555555-0000-4000-8000-000000000001";
    pub const P_EMPTY: &str = "p5555555-0000-4000-8000-000000000002";
    pub const P_FUTURE: &str = "p5555555-0000-4000-8000-000000000003";
    pub const P_BAD_JSON: &str = "p5555555-0000-4000-8000-000000000004";
    pub const CLI_HEX: &str = "e6666666-0000-4000-8000-000000000001";
    pub const CLI_PLAIN: &str = "e6666666-0000-4000-8000-000000000002";
    pub const TRANSCRIPT: &str = "f7777777-0000-4000-8000-000000000001";
    pub const WAL: &str = "w8888888-0000-4000-8000-000000000001";

    pub const SECRET_TOKEN: &str = "SECRET-TOKEN-DO-NOT-LEAK-1f3e";
    pub const SECRET_KEY: &str = "SECRET-KEY-DO-NOT-LEAK-9a7c";
    pub const RW_META: &str = "r0000001-0000-4000-8000-000000000001";
    pub const RW_HINT: &str = "r0000001-0000-4000-8000-000000000002";
    pub const RW_NOTHING: &str = "r0000001-0000-4000-8000-000000000003";
    pub const RW_ERROR_ONLY: &str = "r0000001-0000-4000-8000-000000000004";
    pub const RW_ERROR_INSIDE: &str = "r0000001-0000-4000-8000-000000000005";
    pub const RW_BARE: &str = "r0000001-0000-4000-8000-000000000006";
    pub const RW_FRONT: &str = "r0000001-0000-4000-8000-000000000007";
    pub const RW_BACK: &str = "r0000001-0000-4000-8000-000000000008";
}

use ids::*;

const T0: i64 = 1_748_000_000_000; // May 2025

/// Everything at once: every era and pitfall in one fake home.
pub fn build_all(fx: &CursorFixture) {
    era_a_workspace_inline(fx);
    let g = fx.global(Journal::Rollback);
    era_b_global_v3(fx, &g);
    era_c_global_v10(fx, &g);
    era_d_cursor3(fx, &g);
    pitfalls(&g);
    secrets(&g);
    g.close();
    cli(fx);
}

/// Era A (≤ 0.42): workspace-only, no `cursorDiskKV`; inline composers and Chat-panel tabs.
pub fn era_a_workspace_inline(fx: &CursorFixture) {
    let ws = fx.workspace("aaaa0000000000000000000000000001", Some("file:///home/u/alpha"), false);
    ws.item(
        "composer.composerData",
        &json!({"allComposers": [{
            "composerId": A_INLINE, "name": "Sidebar customization", "createdAt": T0 - 200_000_000,
            "lastUpdatedAt": T0 - 199_000_000, "status": "completed", "context": {}, "codeBlockData": {},
            "tabs": [{"type": "composer"}], "newlyCreatedFiles": [],
            "conversation": [
                {"type": 1, "bubbleId": "a-b1", "text": "How do I tweak the zebracorn sidebar?", "relevantFiles": [], "context": {}},
                {"type": 2, "bubbleId": "a-b2", "text": "Set the zebracorn width in settings.json.", "codeBlocks": [], "relevantFiles": []}
            ]}], "selectedComposerId": A_INLINE, "composerDataVersion": 0}),
    );
    ws.item(
        "workbench.panel.aichat.view.aichat.chatdata",
        &json!({"tabs": [
            {"tabId": A_TAB, "chatTitle": "Legacy quokka chat", "lastSendTime": T0 - 210_000_000, "tabState": "chat",
             "bubbles": [
                {"type": "user", "id": "q1", "messageType": 2, "text": "", "richText": rich_text("Explain the quokka module"), "selections": []},
                {"type": "ai", "id": "q2", "messageType": 3, "text": "The quokka module wraps IO.", "modelType": "claude-3.5-sonnet"}
             ]},
            {"tabId": A_TAB_DELEGATE, "chatTitle": "", "lastSendTime": T0 - 220_000_000,
             "bubbles": [{"type": "user", "delegate": {"a": "delegated wombat question"}}]}
        ], "selectedTabId": A_TAB, "chatDataVersion": 0}),
    );
    ws.item("aiService.prompts", &json!([{"text": "How do I tweak the zebracorn sidebar?", "commandType": 4}]));
    ws.close();
}

/// Era B (≤ 0.50, May 2025): global `_v:3` split form, bubbles `_v:2` without `createdAt`;
/// a Windows workspace that lists the composer as a head entry; an inline global composer.
pub fn era_b_global_v3(fx: &CursorFixture, g: &KvDb) {
    Composer {
        id: B_SPLIT,
        name: Some("Date parsing narwhal"),
        version: 3,
        bubble_version: 2,
        created_at: T0,
        extra: json!({"modelConfig": {"modelName": "claude-3.7-sonnet"}}),
        bubbles: vec![
            (1, json!({"text": "Why does parseDate fail on leap years? narwhal", "richText": rich_text("Why does parseDate fail on leap years? narwhal")})),
            (2, json!({"text": "The month index is off by one.", "serverBubbleId": "s1",
                       "timingInfo": {"clientStartTime": 1136746.9, "clientRpcSendTime": T0 + 5_000, "clientSettleTime": T0 + 9_000, "clientEndTime": T0 + 9_000}})),
            (2, json!({"text": "", "capabilityType": 15, "toolFormerData": {"tool": 15, "toolCallId": "tool_1", "name": "run_terminal_cmd",
                       "status": "completed", "rawArgs": "{\"command\": \"npm test\"}",
                       "params": "{\"command\":\"npm test\",\"requireUserApproval\":true}",
                       "result": "{\"output\":\"ok\",\"exitCodeV2\":0}", "additionalData": {"status": "success"}, "userDecision": "accepted"}})),
            (2, json!({"text": "", "toolFormerData": {"additionalData": {"status": "success"}}})),
        ],
    }
    .write(g);
    // A header pointing at a bubble that does not exist.
    let mut data: Value = serde_json::from_str(&read_kv(g, &format!("composerData:{B_SPLIT}"))).unwrap();
    data["fullConversationHeadersOnly"].as_array_mut().unwrap().push(json!({"bubbleId": "missing-bubble", "type": 2}));
    g.kv(&format!("composerData:{B_SPLIT}"), &data);

    g.kv(
        &format!("composerData:{B_INLINE_GLOBAL}"),
        &json!({"composerId": B_INLINE_GLOBAL, "name": "Inline global era", "createdAt": T0 - 100_000_000,
        "conversation": [
            {"type": 1, "bubbleId": "i1", "text": "platypus inline question", "timingInfo": null},
            {"type": 2, "bubbleId": "i2", "text": "platypus inline answer"}
        ]}),
    );

    let ws = fx.workspace("bbbb0000000000000000000000000002", Some("file:///c%3A/Users/x/bproj"), true);
    ws.item(
        "composer.composerData",
        &json!({"allComposers": [{"type": "head", "composerId": B_SPLIT, "name": "Date parsing narwhal", "createdAt": T0,
                                   "unifiedMode": "agent", "forceMode": "edit"}],
                "selectedComposerIds": [B_SPLIT], "hasMigratedComposerData": true, "hasMigratedMultipleComposers": true}),
    );
    ws.close();
}

/// Era C (Nov 2025): `_v:10`, bubbles `_v:3` with ISO `createdAt`, thinking (30) and tool (15)
/// steps, `modelInfo`; a `.code-workspace` workspace that points at the composer only through a
/// pane key; a composer attributed by file paths alone.
pub fn era_c_global_v10(fx: &CursorFixture, g: &KvDb) {
    Composer {
        id: C_V10,
        name: Some("Refactor loader"),
        version: 10,
        bubble_version: 3,
        created_at: T0 + 15_000_000_000,
        extra: json!({"modelConfig": {"modelName": "default", "maxMode": false},
                      "speculativeSummarizationEncryptionKey": crate::eras::ids::SECRET_KEY}),
        bubbles: vec![
            (1, json!({"text": "", "richText": rich_text("Refactor the axolotl loader please"), "createdAt": "2025-10-31T14:39:16.989Z",
                       "modelInfo": {"modelName": "claude-4.5-sonnet"}, "context": {"fileSelections": []}})),
            (2, json!({"capabilityType": 30, "thinking": {"text": "**Planning** the axolotl refactor", "signature": "opaque"},
                       "thinkingDurationMs": 1782, "createdAt": "2025-10-31T14:39:20.000Z"})),
            (2, json!({"capabilityType": 15, "createdAt": "2025-10-31T14:39:25.000Z",
                       "toolFormerData": {"tool": 38, "name": "edit_file_v2", "status": "completed",
                                          "params": {"relativeWorkspacePath": "src/loader.rs", "instructions": "split"},
                                          "result": "{\"afterContentId\":\"composer.content.abc\"}"}})),
            (2, json!({"text": "Split the axolotl loader into two modules.", "createdAt": "2025-10-31T14:39:39.886Z",
                       "codeBlocks": [{"uri": {"scheme": "file", "path": "/home/u/work/src/loader.rs"}, "content": "mod a;", "languageId": "rust"}]})),
        ],
    }
    .write(g);
    Composer {
        id: C_HEURISTIC,
        name: Some("Heuristic gecko"),
        version: 10,
        bubble_version: 3,
        created_at: T0 + 15_100_000_000,
        extra: json!({"codeBlockData": {"file:///home/u/alpha/src/gecko.rs": [{"diffId": "d1"}]}}),
        bubbles: vec![(1, json!({"text": "gecko in alpha", "createdAt": "2025-11-01T10:00:00Z"}))],
    }
    .write(g);
    Composer {
        id: C_PANE,
        name: Some("Pane pointer ibex"),
        version: 10,
        bubble_version: 3,
        created_at: T0 + 15_200_000_000,
        extra: json!({}),
        bubbles: vec![(1, json!({"text": "ibex question", "createdAt": "2025-11-02T10:00:00Z"}))],
    }
    .write(g);
    let ws = fx.workspace("cccc0000000000000000000000000003", Some("file:///home/u/work/gamma.code-workspace"), true);
    ws.item(
        &format!("workbench.panel.composerChatViewPane.{}", "pane-1"),
        &json!({ format!("workbench.panel.aichat.view.{C_PANE}"): {"collapsed": false, "isHidden": false, "size": 948} }),
    );
    ws.item(
        "composer.composerData",
        &json!({"allComposers": [{"type": "head", "composerId": C_V10, "name": "Refactor loader"}], "selectedComposerIds": []}),
    );
    ws.close();
}

/// Era D (Cursor 3.x): the `composerHeaders` table and global ItemTable `composer.composerHeaders`,
/// a migrated workspace without `allComposers`, `agentKv:blob` noise, a header-only chat, a subagent.
pub fn era_d_cursor3(fx: &CursorFixture, g: &KvDb) {
    g.conn
        .execute_batch(
            "CREATE TABLE composerHeaders (composerId TEXT PRIMARY KEY, workspaceId TEXT, createdAt INTEGER,
                lastUpdatedAt INTEGER, isArchived INTEGER, isSubagent INTEGER, recency INTEGER, checkpointAt INTEGER,
                value TEXT, subagentTypeName TEXT)",
        )
        .unwrap();
    let t = T0 + 30_000_000_000;
    let header = |id: &str, ws: &str, name: &str, sub: i64| {
        g.conn
            .execute(
                "INSERT INTO composerHeaders (composerId, workspaceId, createdAt, lastUpdatedAt, isArchived, isSubagent, value)
                 VALUES (?1, ?2, ?3, ?4, 0, ?5, ?6)",
                rusqlite::params![id, ws, t, t + 1000, sub, json!({"name": name, "unifiedMode": "agent"}).to_string()],
            )
            .unwrap();
    };
    header(D_TABLE, "dddd0000000000000000000000000004", "Remote capybara", 0);
    header(D_HEADER_ONLY, "dddd0000000000000000000000000004", "Cloud only chat", 0);
    header(D_SUBAGENT, "dddd0000000000000000000000000004", "Subagent task", 1);
    // Cursor 3.15/3.16 (`_v` 17): a type-30 record among the bubbles, a bubble of structured
    // tool results only, one holding only agentKv blob ids (cyber-overseer recon §1.3).
    Composer {
        id: D_TABLE,
        name: None,
        version: 17,
        bubble_version: 3,
        created_at: t,
        extra: json!({"blobEncryptionKey": crate::eras::ids::SECRET_KEY, "agentBackend": "cursor-agent",
                      "conversationState": "~", "queueItems": [], "draftTarget": null}),
        bubbles: vec![
            (1, json!({"text": "Deploy the capybara service", "createdAt": "2026-05-01T10:00:00Z"})),
            (30, json!({"createdAt": "2026-05-01T10:00:01Z"})),
            (2, json!({"toolResults": [{"toolCallId": "tc1", "result": {"exitCode": 0}}]})),
            (2, json!({"contentBlobIds": [format!("agentKv:blob:{:064x}", 7)]})),
            (2, json!({"text": "capybara deployed", "createdAt": "2026-05-01T10:00:05Z"})),
        ],
    }
    .write(g);
    // An orphan bubble (left by an edit or regeneration): stored, never shown.
    g.kv(
        &format!("bubbleId:{D_TABLE}:orphan-1"),
        &json!({"_v": 3, "type": 2, "text": "orphanword should stay hidden"}),
    );
    Composer {
        id: D_SUBAGENT,
        name: Some("Subagent task"),
        version: 16,
        bubble_version: 3,
        created_at: t,
        extra: json!({"isSubagent": true}),
        bubbles: vec![(1, json!({"text": "subagentword"}))],
    }
    .write(g);
    // Sep 2026 on (`_v` 18): `workspaceIdentifier` of a window-less chat has no `uri`.
    Composer {
        id: D_ITEM,
        name: None,
        version: 18,
        bubble_version: 3,
        created_at: t + 5000,
        extra: json!({}),
        bubbles: vec![(1, json!({"text": "ocelot question in epsilon", "createdAt": "2026-05-02T10:00:00Z"}))],
    }
    .write(g);
    g.item(
        "composer.composerHeaders",
        &json!({"allComposers": [
            {"type": "head", "composerId": D_ITEM, "name": "Ocelot project", "createdAt": t + 5000, "lastUpdatedAt": t + 6000,
             "workspaceIdentifier": {"id": "eeee0000000000000000000000000005",
                                      "uri": {"$mid": 1, "fsPath": "/home/u/epsilon", "external": "file:///home/u/epsilon", "path": "/home/u/epsilon", "scheme": "file"}}},
            {"type": "head", "composerId": "empty-state-draft", "name": "draft"}
        ]}),
    );
    for i in 0..3 {
        g.kv_blob(&format!("agentKv:blob:{i:064x}"), &json!({"role": "assistant", "content": "agentkv noise"}));
    }
    let ws = fx.workspace("dddd0000000000000000000000000004", Some("vscode-remote://ssh-remote%2Bbox/srv/delta"), true);
    ws.item(
        "composer.composerData",
        &json!({"selectedComposerIds": [], "lastFocusedComposerIds": [], "hasMigratedComposerData": true, "hasMigratedMultipleComposers": true}),
    );
    ws.close();
}

/// Damage and drift in the global DB.
pub fn pitfalls(g: &KvDb) {
    g.raw("cursorDiskKV", None, Some("{\"orphan\": true}"));
    g.raw("cursorDiskKV", Some(&format!("composerData:{P_NULL_VALUE}")), None);
    Composer {
        id: P_EMPTY,
        name: None,
        version: 10,
        bubble_version: 3,
        created_at: T0,
        extra: json!({"status": "none"}),
        bubbles: vec![],
    }
    .write(g);
    Composer {
        id: P_FUTURE,
        name: Some("From the future"),
        version: 99,
        bubble_version: 7,
        created_at: T0 + 40_000_000_000,
        extra: json!({"brandNewField": {"x": 1}}),
        bubbles: vec![
            (1, json!({"text": "futureword question <script>alert('x')</script>", "createdAt": 1_790_000_000_000_i64})),
            (2, json!({"text": "", "richText": {"type": "doc", "content": [{"type": "paragraph", "content": [{"type": "text", "text": "futureword prosemirror answer"}]}]}})),
            (2, json!({"text": "", "toolFormerData": {"name": "mcp_tool", "status": "error", "params": "not json at all"}})),
        ],
    }
    .write(g);
    Composer {
        id: P_BAD_JSON,
        name: Some("Damaged bubbles"),
        version: 13,
        bubble_version: 3,
        created_at: T0 + 20_000_000_000,
        extra: json!({}),
        bubbles: vec![
            (1, json!({"text": "mongoose survives damage"})),
            (2, json!({"text": "placeholder"})),
            (2, json!({"text": "null me"})),
        ],
    }
    .write(g);
    g.raw(
        "cursorDiskKV",
        Some(&format!("bubbleId:{P_BAD_JSON}:{P_BAD_JSON}-b0001")),
        Some("{\"_v\":3,\"type\":2,\"text\":\"trunc"),
    );
    g.raw("cursorDiskKV", Some(&format!("bubbleId:{P_BAD_JSON}:{P_BAD_JSON}-b0002")), None);
    g.kv(&format!("bubbleId:{P_BAD_JSON}:extra"), &Value::Null);
}

/// Secrets a reader must never output.
pub fn secrets(g: &KvDb) {
    g.item("cursorAuth/accessToken", &json!(ids::SECRET_TOKEN));
    g.item("cursorAuth/refreshToken", &json!(ids::SECRET_TOKEN));
    g.item("secret://{\"extensionId\":\"x\",\"key\":\"k\"}", &json!(ids::SECRET_TOKEN));
    g.item("blobEncryptionKey", &json!(ids::SECRET_KEY));
}

/// The Cursor CLI: two store.db sessions (hex and plain meta, two wire shapes) and a transcript.
pub fn cli(fx: &CursorFixture) {
    fx.cli_store(
        "/home/u/zeta",
        CLI_HEX,
        "Lynx bug hunt",
        &[
            json!({"role": "system", "content": "You are a coding agent. systemword"}),
            json!({"role": "user", "content": [{"type": "text", "text": "<timestamp>Mon</timestamp>\n<user_query>\nfind the lynx bug\n</user_query>"}]}),
            json!({"role": "assistant", "content": [{"type": "reasoning", "text": "look for lynx"}, {"type": "text", "text": "lynx fixed"},
                    {"type": "tool-call", "toolCallId": "c1", "toolName": "Shell", "args": {"command": "cargo test"}}]}),
            json!({"role": "tool", "content": [{"type": "tool-result", "toolCallId": "c1", "result": "toolresultword"}]}),
        ],
        true,
    );
    // cursor-agent 2026.08 on: the meta row carries the store's keys (values still plaintext).
    fx.cli_store_with(
        "/home/u/zeta",
        CLI_PLAIN,
        "Meerkat refactor",
        &[
            json!({"role": "user", "content": "rename the meerkat struct"}),
            json!({"role": "assistant", "content": "meerkat renamed", "tool_calls": [{"id": "t", "function": {"name": "read_file", "arguments": "{\"path\":\"src/meerkat.rs\"}"}}]}),
        ],
        false,
        &json!({"blobEncryptionKey": SECRET_KEY, "speculativeSummarizationEncryptionKey": SECRET_KEY,
                "cursorAuth/accessToken": SECRET_TOKEN}),
    );
    fx.transcript(
        "home-u-eta",
        TRANSCRIPT,
        &[
            json!({"role": "user", "message": {"content": [{"type": "text", "text": "<user_query>\npangolin search please\n</user_query>"}]}}).to_string(),
            "{not json".to_owned(),
            json!({"role": "assistant", "message": {"content": [{"type": "text", "text": "pangolin found"}, {"type": "tool_use", "name": "Grep", "input": {"pattern": "pangolin"}}]}}).to_string(),
            json!({"type": "turn_ended", "status": "success"}).to_string(),
        ],
    );
    // A transcript replica of a global composer: the global copy must win.
    fx.transcript(
        "home-u-work",
        C_V10,
        &[json!({"role": "user", "message": {"content": [{"type": "text", "text": "replicaword"}]}}).to_string()],
    );
}

/// A global DB whose only content sits uncheckpointed in its `-wal` (Cursor running).
pub fn wal_uncheckpointed(fx: &CursorFixture) -> KvDb {
    let g = fx.global(Journal::WalUncheckpointed);
    Composer {
        id: WAL,
        name: Some("Walrus in the WAL"),
        version: 16,
        bubble_version: 3,
        created_at: T0 + 40_000_000_000,
        extra: json!({}),
        bubbles: vec![(1, json!({"text": "walrusword only in the wal", "createdAt": "2026-06-01T00:00:00Z"}))],
    }
    .write(&g);
    g
}

fn read_kv(g: &KvDb, key: &str) -> String {
    g.conn.query_row("SELECT value FROM cursorDiskKV WHERE key = ?1", [key], |r| r.get(0)).unwrap()
}

/// Shapes taken from real installs that earlier versions got wrong: CLI project folders whose
/// names have dashes (with a `meta.json` beside no `store.db`, with only a path inside the chat,
/// with nothing), a workspace id whose folder lost its `state.vscdb`, two `.code-workspace` files
/// in one folder, a transcript holding only an error line, and an error inside a real chat.
pub fn real_world(fx: &CursorFixture) {
    use md5::Digest;
    let user = |t: &str| {
        json!({"role": "user", "message": {"content": [{"type": "text", "text": format!("<user_query>\n{t}\n</user_query>")}]}}).to_string()
    };
    let assistant =
        |t: &str| json!({"role": "assistant", "message": {"content": [{"type": "text", "text": t}]}}).to_string();
    // A dashed folder; the chat's meta.json (no store.db beside it) says the real cwd.
    fx.transcript("home-u-my-app", ids::RW_META, &[user("dash one"), assistant("dashmeta answered")]);
    let hash: String = md5::Md5::digest(b"/home/u/my-app").iter().map(|b| format!("{b:02x}")).collect();
    let meta_dir = fx.cursor_home.join("chats").join(hash).join(ids::RW_META);
    std::fs::create_dir_all(&meta_dir).unwrap();
    std::fs::write(meta_dir.join("meta.json"), json!({"cwd": "/home/u/my-app", "schemaVersion": 1}).to_string())
        .unwrap();
    // Only a path inside the chat says where it ran.
    let tool = json!({"role": "assistant", "message": {"content": [
        {"type": "text", "text": "dashpath reading"},
        {"type": "tool_use", "name": "Read", "input": {"path": "/srv/data-pipe/src/main.py"}}]}})
    .to_string();
    fx.transcript("srv-data-pipe", ids::RW_HINT, &[user("dash two"), tool]);
    // Nothing says: the folder name is all there is.
    fx.transcript("opt-some-tool", ids::RW_NOTHING, &[user("dash three"), assistant("dashnone done")]);
    // Only an error line: not a chat.
    fx.transcript("home-u-errs", ids::RW_ERROR_ONLY, &[json!({"type": "error", "error": "rate limited"}).to_string()]);
    // An error inside a real chat stays an error.
    fx.transcript(
        "home-u-errs",
        ids::RW_ERROR_INSIDE,
        &[
            user("errinside question"),
            json!({"type": "error", "error": {"message": "connection reset"}}).to_string(),
            assistant("errinside answer"),
        ],
    );
    // A workspace folder with workspace.json but no state.vscdb; a global chat points at it.
    let bare = fx.user_dir.join("workspaceStorage").join("eeee0000000000000000000000000005");
    std::fs::create_dir_all(&bare).unwrap();
    std::fs::write(bare.join("workspace.json"), json!({"folder": "file:///home/u/bare-ws"}).to_string()).unwrap();
    let g = fx.global(Journal::Rollback);
    g.item(
        "composer.composerHeaders",
        &json!({"allComposers": [
        {"composerId": ids::RW_BARE, "name": "Bare workspace chat", "createdAt": T0, "lastUpdatedAt": T0 + 1000,
         "workspaceIdentifier": {"id": "eeee0000000000000000000000000005"}}]}),
    );
    Composer {
        id: ids::RW_BARE,
        name: Some("Bare workspace chat"),
        version: 10,
        bubble_version: 3,
        created_at: T0,
        extra: json!({}),
        bubbles: vec![(1, json!({"text": "bareword question"})), (2, json!({"text": "bareword answer"}))],
    }
    .write(&g);
    g.close();
    // Two multi-root workspaces in one folder.
    for (ws, file, id, word) in [
        ("ffff0000000000000000000000000006", "front", ids::RW_FRONT, "frontword"),
        ("ffff0000000000000000000000000007", "back", ids::RW_BACK, "backword"),
    ] {
        let db = fx.workspace(ws, Some(&format!("file:///home/u/mono/{file}.code-workspace")), false);
        db.item(
            "composer.composerData",
            &json!({"allComposers": [{"composerId": id, "name": word, "createdAt": T0, "lastUpdatedAt": T0 + 5,
                "conversation": [{"type": 1, "text": word, "bubbleId": "b1"}, {"type": 2, "text": format!("{word} reply"), "bubbleId": "b2"}]}]}),
        );
        db.close();
    }
}
