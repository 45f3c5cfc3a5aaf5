//! The chat-history tools over MCP (`sessions_find`, `session_read`, `session_tag`) on the
//! fixture chats of every Cursor era: what a client gets back, the filters, paging and budgets,
//! the calling chat as Cursor's hooks announce it (its workspace is `current`, it is what an
//! argument-less `session_tag` tags), and the coded failures.

use serde_json::{Value, json};
use tether_testkit::eras::ids::{A_INLINE, B_SPLIT, C_HEURISTIC, C_V10, SECRET_KEY};

use crate::mcp_util::{call, fails, fixture_daemon, hook, text, tool};

fn ids(rows: &Value, key: &str) -> Vec<String> {
    rows.as_array().expect("rows").iter().map(|r| r[key].as_str().expect("id").to_owned()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn find_read_and_tag_past_chats() {
    let d = fixture_daemon().await;
    let c = d.mcp().await;

    // sessions_find: full text, one hit per chat, the terms marked in the snippet.
    let found = tool(&c, "sessions_find", json!({"query": "narwhal", "project": "all"})).await;
    assert_eq!(found["scope"], "all projects");
    assert_eq!(ids(&found["hits"], "session_id"), [B_SPLIT], "{found}");
    assert!(found["hits"][0]["snippet"].as_str().unwrap().contains("**narwhal**"), "{found}");
    assert!(found.get("still_indexing").is_none(), "the index is complete: {found}");
    let none = tool(&c, "sessions_find", json!({"query": "nosuchwordanywhere", "project": "all"})).await;
    assert_eq!(none["hits"], json!([]));

    // Without a query: the most recent chats, `limit` of them; newest first.
    let listed = tool(&c, "sessions_find", json!({"project": "all", "limit": 3})).await;
    let rows = listed["sessions"].as_array().unwrap();
    assert_eq!(rows.len(), 3, "{listed}");
    let dates: Vec<&str> = rows.iter().map(|r| r["updated_at"].as_str().unwrap_or("")).collect();
    assert!(dates.windows(2).all(|w| w[0] >= w[1]), "newest first: {dates:?}");
    let everything = tool(&c, "sessions_find", json!({"project": "all", "limit": 50})).await;
    let all = everything["sessions"].as_array().unwrap().len();
    assert!(all > 3, "{everything}");
    // No caller workspace is known (no hooks): `current`, the default, means every project.
    let default = tool(&c, "sessions_find", json!({"limit": 50})).await;
    assert_eq!(default["scope"], "all projects");
    assert_eq!(default["sessions"].as_array().unwrap().len(), all);

    // A project path keeps that project's chats only.
    let alpha = tool(&c, "sessions_find", json!({"project": "/home/u/alpha", "limit": 50})).await;
    assert_eq!(alpha["scope"], "/home/u/alpha");
    let in_alpha = ids(&alpha["sessions"], "id");
    assert!(in_alpha.contains(&A_INLINE.to_owned()) && !in_alpha.contains(&B_SPLIT.to_owned()), "{alpha}");
    assert!(alpha["sessions"].as_array().unwrap().iter().all(|s| s["project"] == "/home/u/alpha"), "{alpha}");

    // session_read: a window, paging, a budget centred on a word, tool steps on request.
    let read = tool(&c, "session_read", json!({"session": B_SPLIT, "limit": 1})).await;
    assert_eq!(read["session"]["id"], B_SPLIT);
    assert_eq!(read["messages"].as_array().unwrap().len(), 1);
    assert_eq!((read["offset"].as_u64(), read["next_offset"].as_u64()), (Some(0), Some(1)));
    assert!(read["messages"][0]["text"].as_str().unwrap().contains("leap years"), "{read}");
    let page2 = tool(&c, "session_read", json!({"session": B_SPLIT, "offset": 1, "limit": 1})).await;
    assert_eq!(page2["offset"], 1);
    assert!(page2["messages"][0]["text"].as_str().unwrap().contains("off by one"), "{page2}");
    let tiny = tool(&c, "session_read", json!({"session": B_SPLIT, "max_tokens": 200, "around": "month index"})).await;
    let msgs = tiny["messages"].as_array().unwrap();
    assert!(msgs.iter().any(|m| m["text"].as_str().unwrap().contains("month index")), "{tiny}");
    let talk = tool(&c, "session_read", json!({"session": C_V10})).await;
    let steps = tool(&c, "session_read", json!({"session": C_V10, "include_tools": true})).await;
    assert!(steps["total"].as_i64() > talk["total"].as_i64(), "tools and thinking add messages: {talk} / {steps}");
    let whole = call(&c, "session_read", json!({"session": C_V10, "include_tools": true})).await;
    assert!(text(&whole, 0).contains("axolotl") && !text(&whole, 0).contains(SECRET_KEY), "no secret: {whole}");

    // session_tag: nickname, tags, bookmark (also spelled `bookmark`), then found by each.
    let tagged = tool(
        &c,
        "session_tag",
        json!({"session": B_SPLIT, "nickname": "narwhal-fix", "add_tags": ["dates", "bugs"], "bookmark": true}),
    )
    .await;
    assert_eq!(tagged["id"], B_SPLIT);
    assert_eq!((tagged["nickname"].as_str(), tagged["bookmarked"].as_bool()), (Some("narwhal-fix"), Some(true)));
    assert_eq!(tagged["tags"], json!(["bugs", "dates"]));
    let by_nick = tool(&c, "sessions_find", json!({"nickname": "narwhal-fix"})).await;
    assert_eq!(ids(&by_nick["sessions"], "id"), [B_SPLIT]);
    let by_tag = tool(&c, "sessions_find", json!({"tag": "dates", "project": "all"})).await;
    assert_eq!(ids(&by_tag["sessions"], "id"), [B_SPLIT]);
    let marked = tool(&c, "sessions_find", json!({"bookmarked": true, "project": "all"})).await;
    assert_eq!(ids(&marked["sessions"], "id"), [B_SPLIT]);
    let by_nick_read = tool(&c, "session_read", json!({"session": "narwhal-fix", "limit": 1})).await;
    assert_eq!(by_nick_read["session"]["id"], B_SPLIT);
    // Removing a tag, clearing the nickname (null) and the bookmark.
    let untagged = tool(
        &c,
        "session_tag",
        json!({"session": B_SPLIT, "remove_tags": ["bugs"], "nickname": null, "bookmarked": false}),
    )
    .await;
    assert_eq!(untagged["tags"], json!(["dates"]));
    assert_eq!((untagged["nickname"].clone(), untagged["bookmarked"].as_bool()), (Value::Null, Some(false)));

    // Nicknames are unique.
    tool(&c, "session_tag", json!({"session": B_SPLIT, "nickname": "narwhal-fix"})).await;
    let clash = fails(&c, "session_tag", json!({"session": C_V10, "nickname": "narwhal-fix"})).await;
    assert_eq!(clash["code"], "conflict", "{clash}");
    assert!(clash["message"].as_str().unwrap().contains("already used"), "{clash}");

    // "Do not index": its messages are no longer served.
    let hidden = tool(&c, "session_tag", json!({"session": C_HEURISTIC, "no_index": true})).await;
    assert_eq!(hidden["no_index"], true);
    let refused = fails(&c, "session_read", json!({"session": C_HEURISTIC})).await;
    assert_eq!(refused["code"], "forbidden", "{refused}");
    let gone = tool(&c, "sessions_find", json!({"query": "gecko", "project": "all"})).await;
    assert_eq!(gone["hits"], json!([]), "{gone}");

    // Failures a model can branch on.
    let missing = fails(&c, "session_read", json!({"session": "no-such-chat"})).await;
    assert_eq!(missing["code"], "not_found");
    assert!(missing["message"].as_str().unwrap().contains("no session matches"), "{missing}");
    let nobody = fails(&c, "sessions_find", json!({"nickname": "nobody-has-this"})).await;
    assert_eq!(nobody["code"], "not_found");
    let bad_tag = fails(&c, "session_tag", json!({"session": "no-such-chat", "add_tags": ["x"]})).await;
    assert_eq!(bad_tag["code"], "not_found");
    // Without `session` and without hooks, the calling chat is unknown.
    let who = fails(&c, "session_tag", json!({"add_tags": ["x"]})).await;
    assert_eq!(who["code"], "caller_unknown");
    assert!(who["message"].as_str().unwrap().contains("tether init"), "{who}");

    c.cancel().await.unwrap();
    d.stop().await;
}

/// The calling chat, as Cursor's `beforeMCPExecution` hook announces it: its workspace is what
/// `project: current` means, it is the chat an argument-less `session_tag` tags, and the MCP
/// session stays bound to it for later calls.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_calling_chat_comes_from_the_hooks() {
    let d = fixture_daemon().await;
    let c = d.mcp().await;

    hook(
        &d,
        json!({"conversation_id": C_V10, "hook_event_name": "beforeMCPExecution", "workspace_roots": ["/home/u/alpha"],
               "tool_name": "sessions_find", "tool_input": {"query": "zebracorn"}}),
    )
    .await;
    let found = tool(&c, "sessions_find", json!({"query": "zebracorn"})).await;
    assert_eq!(found["scope"], "/home/u/alpha", "current = the calling chat's workspace: {found}");
    assert_eq!(ids(&found["hits"], "session_id"), [A_INLINE]);
    // The same session, later: still that chat's workspace.
    let narwhal = tool(&c, "sessions_find", json!({"query": "narwhal"})).await;
    assert_eq!((narwhal["scope"].as_str(), narwhal["hits"].clone()), (Some("/home/u/alpha"), json!([])), "{narwhal}");

    // A fresh announcement (Cursor's tool name is prefixed with the server's) wins.
    hook(
        &d,
        json!({"conversation_id": C_V10, "hook_event_name": "beforeMCPExecution", "workspace_roots": ["/home/u/work"],
               "tool_name": "tether-session_tag", "tool_input": {"add_tags": ["mine"]}}),
    )
    .await;
    let tagged = tool(&c, "session_tag", json!({"add_tags": ["mine"]})).await;
    assert_eq!((tagged["id"].as_str(), tagged["tags"].clone()), (Some(C_V10), json!(["mine"])));
    let again = tool(&c, "session_tag", json!({"bookmark": true})).await;
    assert_eq!((again["id"].as_str(), again["bookmarked"].as_bool()), (Some(C_V10), Some(true)));

    // Another MCP session is not that chat.
    let other = d.mcp().await;
    assert_eq!(fails(&other, "session_tag", json!({"add_tags": ["x"]})).await["code"], "caller_unknown");

    other.cancel().await.unwrap();
    c.cancel().await.unwrap();
    d.stop().await;
}
