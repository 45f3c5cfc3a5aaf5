//! Chats over HTTP, against every era of Cursor's storage (tether_testkit::eras): list with its
//! filters and paging, search (marked snippets, coverage), one chat (paging, tool calls, "do not
//! index"), tags, nickname and bookmark (and the `sessions` event they send), export in each
//! format, projects, renaming and deleting tags — and the `{code, message}` of each bad request.

use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};
use tether_testkit::daemon::TestDaemon;
use tether_testkit::eras::{self, ids};

use crate::http_support::{assert_error, indexed, ok};

fn list(v: &Value) -> Vec<Value> {
    v["sessions"].as_array().cloned().unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chats_are_listed_searched_read_tagged_and_exported() {
    let d = TestDaemon::start_on(eras::build_all).await;
    indexed(&d).await;

    // The list: newest first, all read by now; its filters and pages.
    let all = list(&ok(d.get("/api/sessions?limit=1000").await));
    assert!(all.iter().any(|s| s["id"] == ids::B_SPLIT), "{all:?}");
    assert!(all.iter().all(|s| s["searchable"] == true));
    let times: Vec<&str> = all.iter().filter_map(|s| s["updated_at"].as_str()).collect();
    assert!(times.windows(2).all(|w| w[0] >= w[1]), "newest first: {times:?}");
    let cli = list(&ok(d.get("/api/sessions?source=cli").await));
    assert!(!cli.is_empty() && cli.iter().all(|s| s["source"] == "cli"), "{cli:?}");
    assert!(cli.len() < all.len());
    assert_eq!(list(&ok(d.get("/api/sessions?limit=1").await)), all[..1]);
    assert_eq!(list(&ok(d.get("/api/sessions?limit=2&offset=1").await)), all[1..3]);
    // A page says how long the whole list is (the GUI pages it as it scrolls), filters included.
    let page = ok(d.get("/api/sessions?limit=2&offset=1").await);
    assert_eq!(
        (page["total"].as_u64(), page["pending"].as_u64(), page["offset"].as_u64()),
        (Some(all.len() as u64), Some(0), Some(1))
    );
    assert_eq!(ok(d.get("/api/sessions?source=cli&limit=1").await)["total"].as_u64(), Some(cli.len() as u64));
    // Insights' narrowing: chats started in [since, until), a model (`unknown`: none named).
    let b_started =
        all.iter().find(|s| s["id"] == ids::B_SPLIT).and_then(|s| s["created_at"].as_str()).expect("a start");
    let ms = tether_core::clock::parse_iso(b_started).expect("an ISO time");
    let that_ms = list(&ok(d.get(&format!("/api/sessions?since={ms}&until={}", ms + 1)).await));
    assert!(that_ms.iter().any(|s| s["id"] == ids::B_SPLIT), "{that_ms:?}");
    assert!(that_ms.iter().all(|s| s["created_at"] == b_started), "{that_ms:?}");
    assert!(list(&ok(d.get(&format!("/api/sessions?since={}", ms + 1)).await)).iter().all(|s| s["id"] != ids::B_SPLIT));
    let unknown = list(&ok(d.get("/api/sessions?model=unknown&limit=1000").await));
    assert!(
        unknown.iter().all(|s| s["model"].as_str().is_none_or(|m| m.trim().is_empty() || m == "unknown")),
        "{unknown:?}"
    );
    let b = all.iter().find(|s| s["id"] == ids::B_SPLIT).unwrap();
    let project = b["project"].as_str().expect("a project");
    let mine = list(&ok(d.get(&format!("/api/sessions?project={}", urlencode(project))).await));
    assert!(mine.iter().any(|s| s["id"] == ids::B_SPLIT) && mine.iter().all(|s| s["project"] == project), "{mine:?}");
    assert_error(&d.get("/api/sessions?offset=-1").await, 400, "invalid_input");

    // Search: one hit per chat, matches marked with \u{2}…\u{3}, and how much was searched.
    let found = ok(d.get("/api/search?q=narwhal").await);
    let hit = &found["hits"][0];
    assert_eq!(hit["session_id"], ids::B_SPLIT, "{found}");
    assert!(hit["snippet"].as_str().unwrap().contains("\u{2}narwhal\u{3}"), "{hit}");
    let cov = &found["coverage"];
    assert!(cov["total"].as_u64().unwrap() > 0 && cov["searchable"] == cov["total"], "{cov}");
    assert_eq!(ok(d.get("/api/search?q=zebracorn+OR+narwhal&limit=1").await)["hits"].as_array().unwrap().len(), 1);
    assert_eq!(ok(d.get("/api/search?q=nothingmatchesthis").await)["hits"], json!([]));
    for q in ["", "?q=", "?q=%20%20"] {
        assert_error(&d.get(&format!("/api/search{q}")).await, 400, "invalid_input");
    }
    assert_error(&d.get("/api/search?q=%22unbalanced").await, 400, "invalid_input");

    // One chat: the summary's fields, its messages (tool calls on request), a page of them.
    let full = ok(d.get(&format!("/api/sessions/{}?tools=1", ids::B_SPLIT)).await);
    assert_eq!(full["id"], ids::B_SPLIT);
    assert_eq!(full["offset"], 0);
    assert!(full["parts"].is_i64() && full["message_count"].is_i64(), "{full}");
    let with_tools = full["messages"].as_array().unwrap().len();
    let plain = ok(d.get(&format!("/api/sessions/{}", ids::B_SPLIT)).await);
    let without = plain["messages"].as_array().unwrap().len();
    assert!(without >= 2 && with_tools > without, "{with_tools} with tools, {without} without");
    let page = ok(d.get(&format!("/api/sessions/{}?offset=1&limit=1", ids::B_SPLIT)).await);
    assert_eq!((page["offset"].clone(), page["messages"].as_array().unwrap().len()), (json!(1), 1));
    assert_eq!(page["messages"][0], plain["messages"][1]);
    assert_error(&d.get("/api/sessions/no-such-chat").await, 404, "not_found");

    // Tags, nickname, bookmark; each edit is a `sessions` event naming the chat.
    let mut ev = d.events("/api/events").await;
    let path = format!("/api/sessions/{}", ids::B_SPLIT);
    let s = ok(d.patch(&path, json!({"nickname": "narwhal", "add_tags": ["dates", "bug"], "bookmarked": true})).await);
    assert_eq!(
        (&s["nickname"], &s["tags"], &s["bookmarked"]),
        (&json!("narwhal"), &json!(["bug", "dates"]), &json!(true))
    );
    let e = ev.next_named("sessions", Duration::from_secs(5)).await.expect("a sessions event");
    assert_eq!(e.data, json!({"ids": [ids::B_SPLIT]}));
    let s = ok(d.patch(&path, json!({"nickname": null, "remove_tags": ["nope"]})).await);
    assert_eq!((&s["nickname"], &s["tags"]), (&Value::Null, &json!(["bug", "dates"])));
    assert_error(&d.get("/api/sessions/narwhal").await, 404, "not_found");
    for q in ["bookmarked=1", "tag=bug"] {
        let got = list(&ok(d.get(&format!("/api/sessions?{q}")).await));
        assert_eq!(got.iter().map(|s| s["id"].clone()).collect::<Vec<_>>(), [json!(ids::B_SPLIT)], "{q}");
    }
    assert_error(&d.patch("/api/sessions/no-such-chat", json!({"bookmarked": true})).await, 404, "not_found");
    assert_error(&d.patch(&path, json!({"bookmarked": "yes"})).await, 422, "invalid_input");

    // A chat marked "do not index" is not shown.
    ok(d.patch(&format!("/api/sessions/{}", ids::C_PANE), json!({"no_index": true})).await);
    assert_error(&d.get(&format!("/api/sessions/{}", ids::C_PANE)).await, 403, "forbidden");

    // Export: a download in each format.
    for (format, mime, ext, has) in [
        ("", "text/markdown", "md", "narwhal"),
        ("md", "text/markdown", "md", "narwhal"),
        ("json", "application/json", "json", "narwhal"),
        ("JSON", "application/json", "json", "narwhal"),
        ("html", "text/html", "html", "<html"),
    ] {
        let query = if format.is_empty() { String::new() } else { format!("?format={format}") };
        let res = d.request(Method::GET, &format!("{path}/export{query}")).send().await.unwrap();
        assert_eq!(res.status(), 200, "{format}");
        let header = |k: &str| res.headers().get(k).and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
        assert!(header("content-type").starts_with(mime), "{format}: {}", header("content-type"));
        let want = format!("attachment; filename=\"tether-{}.{ext}\"", ids::B_SPLIT);
        assert_eq!(header("content-disposition"), want, "{format}");
        let body = res.text().await.unwrap();
        assert!(body.to_lowercase().contains(has), "{format}: {body}");
        if ext == "json" {
            serde_json::from_str::<Value>(&body).expect("JSON");
        }
    }
    assert_error(&d.get(&format!("{path}/export?format=pdf")).await, 400, "invalid_input");
    assert_error(&d.get("/api/sessions/no-such-chat/export").await, 404, "not_found");

    // Projects and tags.
    let projects = ok(d.get("/api/projects").await)["projects"].as_array().cloned().unwrap();
    assert!(projects.iter().any(|p| p["path"] == project && p["sessions"].as_i64() >= Some(1)), "{projects:?}");
    let tags = ok(d.get("/api/tags").await);
    assert_eq!(tags, json!({"tags": [{"tag": "bug", "sessions": 1}, {"tag": "dates", "sessions": 1}]}));
    assert_eq!(
        ok(d.post("/api/tags/rename", json!({"from": "bug", "to": "dates"})).await),
        json!({"tag": "dates", "sessions": 1})
    );
    assert_error(&d.post("/api/tags/rename", json!({"from": "dates"})).await, 422, "invalid_input");
    assert_eq!(ok(d.delete("/api/tags/dates").await), json!({"removed_from": 1}));
    assert_eq!(ok(d.get("/api/tags").await), json!({"tags": []}));
    assert_eq!(ok(d.delete("/api/tags/dates").await), json!({"removed_from": 0}));
    drop(ev);
    d.stop().await;
}

/// A query parameter's value, percent-encoded.
fn urlencode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}
