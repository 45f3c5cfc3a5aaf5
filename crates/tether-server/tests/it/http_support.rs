//! What the HTTP tests share: the `{code, message}` body every failure carries, waiting for a
//! daemon's first index, and polling from async code.

use std::future::Future;
use std::time::{Duration, Instant};

use reqwest::{Method, StatusCode};
use serde_json::Value;
use tether_testkit::daemon::{TestDaemon, testkit_bin};

/// An error answer: `status`, and `{code, message}` with a sentence in it.
#[track_caller]
pub fn assert_error(got: &(StatusCode, Value), status: u16, code: &str) {
    let (s, body) = got;
    assert_eq!(s.as_u16(), status, "{body}");
    assert_eq!(body["code"], code, "{body}");
    assert!(body["message"].as_str().is_some_and(|m| !m.trim().is_empty()), "a message: {body}");
}

/// A 2xx answer's body.
#[track_caller]
pub fn ok(got: (StatusCode, Value)) -> Value {
    assert!(got.0.is_success(), "{}: {}", got.0, got.1);
    got.1
}

/// What `f` gives once it gives something, asked every 50 ms; fails naming `what` after `secs`.
pub async fn poll<T, F, Fut>(what: &str, secs: u64, mut f: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let t0 = Instant::now();
    loop {
        if let Some(v) = f().await {
            return v;
        }
        assert!(t0.elapsed() < Duration::from_secs(secs), "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Waits until the daemon's first index pass is over (its events are sent by then).
pub async fn indexed(d: &TestDaemon) {
    poll("the first index pass", 30, || async { (!d.host.initial_index_running()).then_some(()) }).await;
    poll("the index to be idle", 30, || async {
        let (_, s) = d.get("/api/status").await;
        (s["index"]["state"] == "idle").then_some(())
    })
    .await;
}

/// `POST /mcp` with an initialize, the bearer `token` and `origin` when given.
pub fn mcp_init(d: &TestDaemon, token: Option<&str>, origin: Option<&str>) -> reqwest::RequestBuilder {
    let init = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}});
    let mut rb = d.bare(Method::POST, "/mcp").header("Accept", "application/json, text/event-stream").json(&init);
    if let Some(t) = token {
        rb = rb.bearer_auth(t);
    }
    if let Some(o) = origin {
        rb = rb.header("Origin", o);
    }
    rb
}

/// Makes `d`'s runs use the fake Cursor CLI (its state under a temp HOME) in `ws/`, the one
/// allowed root; returns `ws`.
pub async fn use_fake_agent(d: &TestDaemon) -> std::path::PathBuf {
    let ws = d.folder("ws").canonicalize().unwrap();
    let home = d.folder("agent-home");
    let script = d.folder("bin").join("cursor-agent");
    let fake = testkit_bin("tether-fake-agent");
    std::fs::write(&script, format!("#!/bin/sh\nHOME='{}' exec '{}' \"$@\"\n", home.display(), fake.display()))
        .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    ok(d.patch(
        "/api/settings",
        serde_json::json!({"runs": {"roots": [ws], "cursor_agent": script, "result_grace_secs": 0, "kill_grace_secs": 1}}),
    )
    .await);
    ws
}
