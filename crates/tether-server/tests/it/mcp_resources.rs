//! MCP resources and prompts: the list and templates, each resource read as Markdown (the board,
//! the caller's inbox, a past chat), prompts listed and filled in; and what subscribers hear —
//! one write, one `notifications/resources/updated` per subscriber and none for others; the
//! doorbell on `tether://inbox` (once per drain cycle, coalesced until the drain, re-armed by
//! it, never for system signals).

use std::time::Duration;

use rmcp::RoleClient;
use rmcp::ServiceError;
use rmcp::model::{
    GetPromptRequestParams, ReadResourceRequestParams, SubscribeRequestParams, UnsubscribeRequestParams,
};
use rmcp::service::Peer;
use serde_json::{Value, json};
use tether_server::{INBOX_URI, SESSION_URI_PREFIX, TASKS_URI, USAGE_URI};
use tether_testkit::daemon::TestDaemon;
use tether_testkit::eras::ids::{B_SPLIT, C_V10, SECRET_KEY};
use tokio::sync::mpsc::UnboundedReceiver;

use crate::mcp_util::{Bells, fixture_daemon, next_bell, poll, streams_open, tool};

/// A resource as the client reads it: `(mimeType, text)` of its one content.
async fn read(c: &Peer<RoleClient>, uri: &str) -> (String, String) {
    let r = c.read_resource(ReadResourceRequestParams::new(uri)).await.unwrap_or_else(|e| panic!("{uri}: {e}"));
    let v = serde_json::to_value(&r).unwrap();
    let contents = v["contents"].as_array().unwrap();
    assert_eq!(contents.len(), 1, "{v}");
    assert_eq!(contents[0]["uri"], uri);
    (contents[0]["mimeType"].as_str().unwrap_or("").to_owned(), contents[0]["text"].as_str().unwrap().to_owned())
}

/// The JSON-RPC error a request failed with: `(code, message, data)`.
fn protocol_error<T: std::fmt::Debug>(r: Result<T, ServiceError>) -> (i32, String, Value) {
    match r {
        Err(ServiceError::McpError(e)) => (e.code.0, e.message.to_string(), e.data.unwrap_or(Value::Null)),
        other => panic!("expected a JSON-RPC error, got {other:?}"),
    }
}

fn args(v: Value) -> serde_json::Map<String, Value> {
    v.as_object().cloned().expect("an object")
}

/// What a client learns from the handshake and the tool list: a few tools (Cursor's budget),
/// names short enough for it, each described with an object schema.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_the_server_offers() {
    let d = TestDaemon::start().await;
    let c = d.mcp().await;
    let info = serde_json::to_value(&*c.peer_info().expect("the server's handshake")).unwrap();
    assert_eq!(info["serverInfo"]["name"], "tether", "{info}");
    assert_eq!(info["capabilities"]["resources"]["subscribe"], true, "{info}");
    assert!(info["capabilities"]["tools"].is_object() && info["capabilities"]["prompts"].is_object(), "{info}");
    assert!(info["instructions"].as_str().unwrap().contains("sessions_find"), "{info}");

    let tools = serde_json::to_value(c.list_all_tools().await.unwrap()).unwrap();
    let mut names: Vec<&str> = tools.as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "agent_run",
            "code_origin",
            "run_diff",
            "session_read",
            "session_start",
            "session_tag",
            "sessions_find",
            "signal_send",
            "signals_pending",
            "task_claim",
            "task_create",
            "task_list",
            "task_update"
        ]
    );
    for t in tools.as_array().unwrap() {
        let name = t["name"].as_str().unwrap();
        assert!(format!("tether_{name}").len() < 60, "{name}: Cursor shows server + tool name");
        assert!(t["description"].as_str().is_some_and(|d| d.len() > 10), "{name} is described");
        assert_eq!(t["inputSchema"]["type"], "object", "{name}");
    }
    let find = tools.as_array().unwrap().iter().find(|t| t["name"] == "sessions_find").unwrap();
    assert!(find["description"].as_str().unwrap().contains("PAST"), "{find}");
    let run = tools.as_array().unwrap().iter().find(|t| t["name"] == "agent_run").unwrap();
    for p in ["prompt", "task", "workspace", "where", "repo", "ref", "branch", "auto_pr", "followup_of"] {
        assert!(run["inputSchema"]["properties"].get(p).is_some(), "agent_run takes {p}: {run}");
    }
    c.cancel().await.unwrap();
    d.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resources_and_prompts_read_as_markdown() {
    let d = fixture_daemon().await;
    let c = d.mcp().await;

    // The list: the board, the inbox, then the recent chats (newest first).
    let listed = serde_json::to_value(c.list_all_resources().await.unwrap()).unwrap();
    let uris: Vec<&str> = listed.as_array().unwrap().iter().map(|r| r["uri"].as_str().unwrap()).collect();
    assert_eq!(uris[..3], [TASKS_URI, INBOX_URI, USAGE_URI], "{listed}");
    assert!(uris.contains(&format!("{SESSION_URI_PREFIX}{B_SPLIT}").as_str()), "{uris:?}");
    let narwhal = listed.as_array().unwrap().iter().find(|r| r["uri"].as_str().unwrap().ends_with(B_SPLIT)).unwrap();
    assert_eq!(narwhal["name"], "Date parsing narwhal");
    assert!(listed.as_array().unwrap().iter().all(|r| r["mimeType"] == "text/markdown"), "{listed}");
    let templates = serde_json::to_value(c.list_all_resource_templates().await.unwrap()).unwrap();
    let t: Vec<&str> = templates.as_array().unwrap().iter().map(|r| r["uriTemplate"].as_str().unwrap()).collect();
    assert_eq!(t, ["tether://session/{id}", "tether://run/{id}"]);

    // A past chat, as Markdown, without the secrets Cursor keeps next to it.
    let (mime, md) = read(&c, &format!("{SESSION_URI_PREFIX}{B_SPLIT}")).await;
    assert_eq!(mime, "text/markdown");
    assert!(md.contains("Date parsing narwhal") && md.contains("leap years"), "{md}");
    let (_, secret) = read(&c, &format!("{SESSION_URI_PREFIX}{C_V10}")).await;
    assert!(secret.contains("axolotl") && !secret.contains(SECRET_KEY), "{secret}");

    // Usage: what runs spent today against the budgets, the last 30 days by model, and how much
    // of it is known at all.
    let (mime, usage) = read(&c, USAGE_URI).await;
    assert_eq!(mime, "text/markdown");
    assert!(usage.starts_with("# Usage\n\nRuns today: 0 tokens"), "{usage}");
    assert!(usage.contains("tokens known for 0% of chats"), "{usage}");

    // The board: empty, then with what was written.
    let (mime, board) = read(&c, TASKS_URI).await;
    assert_eq!(mime, "text/markdown");
    assert!(board.starts_with("# Tasks\n") && board.contains("## todo (0)"), "{board}");
    tool(&c, "task_create", json!({"title": "Write the docs"})).await;
    let (_, board) = read(&c, TASKS_URI).await;
    assert!(board.contains("## todo (1)\n- **T-1** Write the docs [medium]"), "{board}");

    // The inbox is the caller's, read without draining.
    let (_, empty) = read(&c, INBOX_URI).await;
    assert_eq!(empty, "No signals are waiting for you.\n");
    let me = tool(&c, "session_start", json!({"name": "reader"})).await;
    let other = d.mcp().await;
    let s = tool(&other, "signal_send", json!({"to": "reader", "type": "status_update", "body": "hello"})).await;
    let (_, inbox) = read(&c, INBOX_URI).await;
    assert!(inbox.starts_with("# 1 signal(s) waiting"), "{inbox}");
    assert!(inbox.contains(&format!("- {} status_update from ", s["id"].as_str().unwrap())), "{inbox}");
    assert!(!inbox.contains("hello"), "the inbox lists, the drain reads: {inbox}");
    let (_, theirs) = read(&other, INBOX_URI).await;
    assert_eq!(theirs, "No signals are waiting for you.\n", "another caller's inbox");
    let got = tool(&c, "signals_pending", json!({})).await;
    assert_eq!(got["signals"][0]["id"], s["id"], "still there to drain: {got} ({me})");

    // What does not exist is a JSON-RPC error (a resource is not a tool).
    let (code, message, _) = protocol_error(c.read_resource(ReadResourceRequestParams::new("tether://nope/1")).await);
    assert_eq!(code, -32002, "resource not found: {message}");
    assert!(message.contains("unknown resource"), "{message}");
    let gone = c.read_resource(ReadResourceRequestParams::new(format!("{SESSION_URI_PREFIX}no-such-chat"))).await;
    let (_, message, data) = protocol_error(gone);
    assert_eq!(data["code"], "not_found", "{message}");
    let (_, _, data) = protocol_error(c.read_resource(ReadResourceRequestParams::new("tether://run/R-9")).await);
    assert_eq!(data["code"], "not_found");

    // Prompts: listed with their required argument, filled in with it.
    let prompts = serde_json::to_value(c.list_all_prompts().await.unwrap()).unwrap();
    let mut names: Vec<(&str, &str, bool)> = prompts
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let a = &p["arguments"][0];
            (p["name"].as_str().unwrap(), a["name"].as_str().unwrap(), a["required"] == true)
        })
        .collect();
    names.sort_unstable();
    assert_eq!(names, [("continue_session", "session", true), ("summarize_work", "topic", true)]);
    let p = c
        .get_prompt(
            GetPromptRequestParams::new("continue_session").with_arguments(args(json!({"session": "narwhal-fix"}))),
        )
        .await
        .unwrap();
    let p = serde_json::to_value(p).unwrap();
    assert_eq!((p["messages"].as_array().unwrap().len(), p["messages"][0]["role"].as_str()), (1, Some("user")));
    let words = p["messages"][0]["content"]["text"].as_str().unwrap();
    assert!(words.contains("session_read") && words.contains("session=\"narwhal-fix\""), "{words}");
    let p = c
        .get_prompt(
            GetPromptRequestParams::new("summarize_work").with_arguments(args(json!({"topic": "date parsing"}))),
        )
        .await
        .unwrap();
    let words = serde_json::to_value(p).unwrap()["messages"][0]["content"]["text"].as_str().unwrap().to_owned();
    assert!(words.contains("sessions_find with query=\"date parsing\" and project=\"all\""), "{words}");
    let (code, _, _) = protocol_error(c.get_prompt(GetPromptRequestParams::new("summarize_work")).await);
    assert_eq!(code, -32602, "a missing argument is invalid params");
    let (code, _, _) = protocol_error(c.get_prompt(GetPromptRequestParams::new("no_such_prompt")).await);
    assert_eq!(code, -32602);

    other.cancel().await.unwrap();
    c.cancel().await.unwrap();
    d.stop().await;
}

#[allow(deprecated)] // resources/subscribe is the legacy (≤ 2025-11-25) way, the one Cursor speaks.
async fn subscribe(c: &Peer<RoleClient>, uri: &str) {
    c.subscribe(SubscribeRequestParams::new(uri)).await.unwrap();
}

#[allow(deprecated)]
async fn unsubscribe(c: &Peer<RoleClient>, uri: &str) {
    c.unsubscribe(UnsubscribeRequestParams::new(uri)).await.unwrap();
}

/// Nothing more arrives within `ms` (long enough for the store watcher's own pass over the
/// write: it must not announce it a second time).
async fn quiet(rx: &mut UnboundedReceiver<String>, ms: u64, who: &str) {
    tokio::time::sleep(Duration::from_millis(ms)).await;
    if let Ok(extra) = rx.try_recv() {
        panic!("{who} got an unexpected update: {extra}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_write_one_update_per_subscriber() {
    let d = TestDaemon::start().await;
    let (h1, mut rx1) = Bells::new();
    let (h2, mut rx2) = Bells::new();
    let (h3, mut rx3) = Bells::new();
    let (s1, s2, bystander) = (d.mcp_with(h1).await, d.mcp_with(h2).await, d.mcp_with(h3).await);
    subscribe(&s1, TASKS_URI).await;
    subscribe(&s2, TASKS_URI).await;
    streams_open(&d, 3).await;

    // One task written by a client that did not subscribe: each subscriber hears of it once.
    tool(&bystander, "task_create", json!({"title": "Heard once"})).await;
    assert_eq!(next_bell(&mut rx1, 10).await, TASKS_URI);
    assert_eq!(next_bell(&mut rx2, 10).await, TASKS_URI);
    quiet(&mut rx1, 1500, "subscriber 1").await;
    quiet(&mut rx2, 0, "subscriber 2").await;
    quiet(&mut rx3, 0, "the bystander").await;

    // A write by the person (the engine, as the GUI and CLI make it) is heard the same way.
    let person = tether_board::principal::Principal::person("pat");
    let new = tether_board::tasks::NewTask { title: "From the person".into(), ..Default::default() };
    tether_core::ops::tasks::create(d.tether(), &person, &new).unwrap();
    assert_eq!(next_bell(&mut rx1, 10).await, TASKS_URI);
    assert_eq!(next_bell(&mut rx2, 10).await, TASKS_URI);

    // Unsubscribed: no longer told.
    unsubscribe(&s2, TASKS_URI).await;
    tool(&s1, "task_update", json!({"id": "T-1", "comment": "still here"})).await;
    assert_eq!(next_bell(&mut rx1, 10).await, TASKS_URI);
    quiet(&mut rx1, 300, "subscriber 1").await;
    quiet(&mut rx2, 0, "the unsubscribed").await;

    for c in [s1, s2, bystander] {
        c.cancel().await.unwrap();
    }
    d.stop().await;
}

/// A tagged chat tells its subscribers (through the event bus), and only them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chat_subscriber_hears_of_its_chat() {
    let d = fixture_daemon().await;
    let (h1, mut rx1) = Bells::new();
    let (h2, mut rx2) = Bells::new();
    let (s1, s2) = (d.mcp_with(h1).await, d.mcp_with(h2).await);
    let narwhal = format!("{SESSION_URI_PREFIX}{B_SPLIT}");
    subscribe(&s1, &narwhal).await;
    subscribe(&s2, &format!("{SESSION_URI_PREFIX}{C_V10}")).await;
    streams_open(&d, 2).await;
    tool(&s2, "session_tag", json!({"session": B_SPLIT, "add_tags": ["heard"]})).await;
    assert_eq!(next_bell(&mut rx1, 10).await, narwhal);
    quiet(&mut rx1, 300, "the chat's subscriber").await;
    quiet(&mut rx2, 0, "another chat's subscriber").await;
    for c in [s1, s2] {
        c.cancel().await.unwrap();
    }
    d.stop().await;
}

/// The wake outcomes recorded for a signal: `(recipient, path, result)`.
fn wakes(d: &TestDaemon, id: &Value) -> Vec<(String, String, String)> {
    let s = tether_core::ops::signals::get(d.tether(), id.as_str().unwrap()).unwrap();
    s.wakes.into_iter().map(|w| (w.recipient, w.path, w.result)).collect()
}

async fn wakes_of(d: &TestDaemon, id: &Value) -> Vec<(String, String, String)> {
    poll("the doorbell's outcome", Duration::from_secs(10), || async {
        let w = wakes(d, id);
        (!w.is_empty()).then_some(w)
    })
    .await
}

fn wake(who: &str, path: &str, result: &str) -> (String, String, String) {
    (who.to_owned(), path.to_owned(), result.to_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_doorbell_rings_once_per_drain_cycle() {
    let d = TestDaemon::start().await;
    let (ha, mut qa) = Bells::new();
    let (hb, mut qb) = Bells::new();
    let a = d.mcp_with(ha).await;
    tool(&a, "session_start", json!({"role": "dev", "name": "ana"})).await;
    streams_open(&d, 1).await;
    let b = d.mcp_with(hb).await;
    tool(&b, "session_start", json!({"role": "reviewer", "name": "bo"})).await;
    streams_open(&d, 2).await;

    // Bo joining told ana (a system signal): recorded, never rung.
    let joined = tether_core::ops::signals::list(d.tether(), &Default::default()).unwrap();
    let joined = json!(joined.iter().find(|s| s.kind.as_str() == "peer_joined").unwrap().id);
    assert_eq!(wakes_of(&d, &joined).await, [wake("ana", "sse", "filtered")]);

    // A question rings bo's inbox once; more before the drain are coalesced.
    let q = tool(&a, "signal_send", json!({"to": "bo", "type": "question", "body": "Is T-1 ready?"})).await;
    assert_eq!(next_bell(&mut qb, 10).await, INBOX_URI);
    assert_eq!(wakes_of(&d, &q["id"]).await, [wake("bo", "sse", "rang")]);
    let more = tool(&a, "signal_send", json!({"to": "bo", "type": "status_update", "body": "note"})).await;
    assert_eq!(wakes_of(&d, &more["id"]).await, [wake("bo", "sse", "coalesced")]);
    quiet(&mut qb, 0, "bo before the drain").await;

    // The drain re-arms it: the next signal rings again.
    assert_eq!(tool(&b, "signals_pending", json!({})).await["signals"].as_array().unwrap().len(), 2);
    let again = tool(&a, "signal_send", json!({"to": "bo", "body": "one more thing"})).await;
    assert_eq!(next_bell(&mut qb, 10).await, INBOX_URI);
    assert_eq!(wakes_of(&d, &again["id"]).await, [wake("bo", "sse", "rang")]);

    // The reply rings the asker.
    let reply = tool(&b, "signal_send", json!({"reply_to": q["id"], "body": "Yes."})).await;
    assert_eq!(next_bell(&mut qa, 10).await, INBOX_URI);
    assert_eq!(wakes_of(&d, &reply["id"]).await, [wake("ana", "sse", "rang")]);
    quiet(&mut qa, 300, "ana").await;

    a.cancel().await.unwrap();
    b.cancel().await.unwrap();
    d.stop().await;
}
