//! What the MCP tests share: a daemon over the fixture chats, calling a tool and reading its
//! result as a client sees it (`isError`, the JSON text, the `{code, message}` body), a client
//! handler that records `notifications/resources/updated`, and polling.

use std::future::Future;
use std::path::Path;
use std::time::{Duration, Instant};

use rmcp::model::{CallToolRequestParams, ResourceUpdatedNotificationParam};
use rmcp::service::{NotificationContext, Peer};
use rmcp::{ClientHandler, RoleClient};
use serde_json::Value;
use tether_testkit::daemon::TestDaemon;
use tokio::sync::mpsc;

/// A daemon over every era's fixture chats (`tether_testkit::eras::build_all`), its first index
/// finished.
pub async fn fixture_daemon() -> TestDaemon {
    let d = TestDaemon::start_with(|user| {
        let fx = tether_testkit::CursorFixture::new();
        tether_testkit::eras::build_all(&fx);
        copy_tree(&fx.user_dir, user);
        copy_tree(&fx.cursor_home, &user.parent().expect("cursor dir").join("home"));
    })
    .await;
    poll("the first index", Duration::from_secs(30), || async {
        let done = !d.host.initial_index_running()
            && tether_core::ops::sessions::coverage(d.tether()).is_ok_and(|c| c.total > 0 && c.complete());
        done.then_some(())
    })
    .await;
    d
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("target dir");
    for e in std::fs::read_dir(from).expect("fixture dir").flatten() {
        let dest = to.join(e.file_name());
        if e.file_type().expect("file type").is_dir() {
            copy_tree(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), &dest).expect("copy a fixture file");
        }
    }
}

/// Calls `tool` with `args` (a JSON object): the result as the client received it, as JSON
/// (`content`, `isError`). A protocol error fails the test.
pub async fn call(c: &Peer<RoleClient>, tool: &str, args: Value) -> Value {
    let Value::Object(args) = args else { panic!("arguments must be an object") };
    let r = c
        .call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(args))
        .await
        .unwrap_or_else(|e| panic!("{tool}: protocol error {e}"));
    serde_json::to_value(&r).expect("result as JSON")
}

/// The text of a result's content block `i`.
pub fn text(r: &Value, i: usize) -> &str {
    r["content"][i]["text"].as_str().unwrap_or_else(|| panic!("no text block {i} in {r}"))
}

/// A successful result's JSON (its first block).
pub fn ok(r: &Value) -> Value {
    assert_ne!(r["isError"], true, "the call failed: {r}");
    serde_json::from_str(text(r, 0)).unwrap_or_else(|e| panic!("{e}: not JSON: {r}"))
}

/// A failed result's body, `{code, message}` (checked to be exactly that shape).
pub fn err(r: &Value) -> Value {
    assert_eq!(r["isError"], true, "the call should have failed: {r}");
    let body: Value = serde_json::from_str(text(r, 0)).unwrap_or_else(|e| panic!("{e}: not JSON: {r}"));
    let keys: Vec<&String> = body.as_object().expect("an object").keys().collect();
    assert!(keys.iter().all(|k| *k == "code" || *k == "message"), "only code and message: {body}");
    assert!(body["message"].as_str().is_some_and(|m| !m.is_empty()), "a message: {body}");
    body
}

/// A tool that must succeed: its JSON.
pub async fn tool(c: &Peer<RoleClient>, name: &str, args: Value) -> Value {
    ok(&call(c, name, args).await)
}

/// A tool that must fail: its `{code, message}`.
pub async fn fails(c: &Peer<RoleClient>, name: &str, args: Value) -> Value {
    err(&call(c, name, args).await)
}

/// A client handler that passes on the URI of every `notifications/resources/updated`.
pub struct Bells(mpsc::UnboundedSender<String>);

impl Bells {
    pub fn new() -> (Self, mpsc::UnboundedReceiver<String>) {
        let (tx, rx) = mpsc::unbounded_channel();
        (Self(tx), rx)
    }
}

impl ClientHandler for Bells {
    async fn on_resource_updated(&self, p: ResourceUpdatedNotificationParam, _: NotificationContext<RoleClient>) {
        let _ = self.0.send(p.uri);
    }
}

/// The next update URI, within `secs`.
pub async fn next_bell(rx: &mut mpsc::UnboundedReceiver<String>, secs: u64) -> String {
    tokio::time::timeout(Duration::from_secs(secs), rx.recv())
        .await
        .expect("a notifications/resources/updated in time")
        .expect("the client is open")
}

/// What `f` gives once it gives something, asked every 25 ms; panics naming `what` after `timeout`.
pub async fn poll<T, F: Future<Output = Option<T>>>(what: &str, timeout: Duration, mut f: impl FnMut() -> F) -> T {
    let t0 = Instant::now();
    loop {
        if let Some(v) = f().await {
            return v;
        }
        assert!(t0.elapsed() < timeout, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// The daemon's MCP sessions (`/api/status`): id and open GET streams.
pub async fn mcp_sessions(d: &TestDaemon) -> Vec<(String, u64)> {
    let (status, v) = d.get("/api/status").await;
    assert_eq!(status, 200, "{v}");
    v["mcp_sessions"]
        .as_array()
        .expect("mcp_sessions")
        .iter()
        .map(|s| (s["id"].as_str().unwrap_or_default().to_owned(), s["streams"].as_u64().unwrap_or(0)))
        .collect()
}

/// Waits until `n` MCP sessions hold a GET stream open (what the server pushes on).
pub async fn streams_open(d: &TestDaemon, n: usize) {
    poll("the clients' GET streams", Duration::from_secs(10), || async {
        (mcp_sessions(d).await.iter().filter(|(_, s)| *s > 0).count() >= n).then_some(())
    })
    .await
}

/// Sends a Cursor hook event to `/hook` with the hook token, as `tether hook` forwards it.
pub async fn hook(d: &TestDaemon, event: Value) {
    let token = tether_core::token::hook_token(&d.tether().paths).expect("hook token");
    let res = d.bare(reqwest::Method::POST, "/hook").bearer_auth(token).json(&event).send().await.expect("hook");
    assert!(res.status().is_success(), "hook answered {}", res.status());
}
