//! The doors, as a client meets them: the GUI's API takes the bearer (or the login cookie, see
//! http_system) and `X-Tether: 1` on writes, and only loopback Host and our own Origin; `/mcp`
//! refuses foreign or malformed Origins before its bearer; answers for unknown routes, wrong
//! methods, malformed bodies and queries, and over-long paths are `{code, message}`; `/hook`
//! checks its token before the body and the body's shape after; the cloud callbacks are off
//! without a public URL, then take only their own credentials, within 256 KiB and 5 s; and
//! idle or stalled strangers cannot take the connections `/health` and token holders need.

use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::{Value, json};
use tether_server::http::conn::{Budget, raise_descriptor_limit};
use tether_server::http::routes::CALLBACK_ROUTES;
use tether_testkit::daemon::TestDaemon;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::http_support::{assert_error, mcp_init, ok};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_api_takes_a_credential_a_loopback_host_our_origin_and_the_header_for_writes() {
    let d = TestDaemon::start().await;
    let port = d.host.port();

    // No credential, or a wrong one: 401, saying how to get in.
    let r = TestDaemon::send(d.bare(Method::GET, "/api/sessions")).await;
    assert_error(&r, 401, "unauthorized");
    assert!(r.1["message"].as_str().unwrap().contains("tether open"), "{}", r.1);
    assert_error(
        &TestDaemon::send(d.bare(Method::GET, "/api/tasks").bearer_auth("not-the-token")).await,
        401,
        "unauthorized",
    );

    // A write without `X-Tether: 1` is refused before it writes; a read needs no header.
    for header in [None, Some("0"), Some("true")] {
        let mut rb = d.bare(Method::POST, "/api/tasks").bearer_auth(&d.token).json(&json!({"title": "sneaky"}));
        if let Some(h) = header {
            rb = rb.header("X-Tether", h);
        }
        let r = TestDaemon::send(rb).await;
        assert_error(&r, 403, "forbidden");
        assert!(r.1["message"].as_str().unwrap().contains("X-Tether"), "{}", r.1);
    }
    let r = TestDaemon::send(d.bare(Method::GET, "/api/tasks").bearer_auth(&d.token)).await;
    assert_eq!(ok(r)["tasks"], json!([]), "nothing was written");

    // Only loopback names reach the GUI's routes (DNS rebinding ends here).
    for host in ["evil.example", "127.0.0.1:80.evil.example.com", "10.0.0.1", "127.0.0.1:"] {
        let r = TestDaemon::send(d.request(Method::GET, "/api/status").header("Host", host)).await;
        assert_error(&r, 403, "forbidden");
    }
    for host in [format!("localhost:{port}"), format!("[::1]:{port}"), "127.0.0.2".into()] {
        let r = TestDaemon::send(d.request(Method::GET, "/api/status").header("Host", &host)).await;
        assert_eq!(r.0, 200, "Host {host}: {}", r.1);
    }

    // Only our own origin (or the desktop app's webview) may send a page's requests.
    let ours = d.base.clone();
    for origin in [
        "http://evil.example",
        &format!("http://127.0.0.1:{port}.evil.example.com"),
        &format!("http://localhost:{port}"),
        &format!("{ours}/"),
        "null",
    ] {
        let r = TestDaemon::send(d.request(Method::GET, "/api/tags").header("Origin", origin)).await;
        assert_error(&r, 403, "forbidden");
    }
    for origin in [ours.as_str(), "tauri://localhost", "http://tauri.localhost"] {
        let r = TestDaemon::send(d.request(Method::GET, "/api/tags").header("Origin", origin)).await;
        assert_eq!(r.0, 200, "Origin {origin}: {}", r.1);
    }

    // What names nothing, or is malformed, is answered as JSON too.
    assert_error(&d.get("/api/nope").await, 404, "not_found");
    assert_error(&d.get("/api/tasks/T-1/nope").await, 404, "not_found");
    let res = d.request(Method::PUT, "/api/tasks").json(&json!({})).send().await.unwrap();
    assert!(res.headers().get("allow").is_some(), "a 405 says what is allowed");
    let r = (res.status(), res.json::<Value>().await.unwrap());
    assert_error(&r, 405, "invalid_input");
    let broken = d.request(Method::POST, "/api/tasks").header("Content-Type", "application/json").body("{\"title\":");
    assert_error(&TestDaemon::send(broken).await, 400, "invalid_input");
    let untyped = d.request(Method::POST, "/api/tasks").body("{\"title\": \"no content type\"}");
    assert_error(&TestDaemon::send(untyped).await, 415, "invalid_input");
    assert_error(&d.post("/api/tasks", json!({"title": 7})).await, 422, "invalid_input");
    assert_error(&d.get("/api/sessions?limit=many").await, 400, "invalid_input");
    assert_eq!(ok(d.get("/api/tasks").await)["tasks"], json!([]), "still nothing was written");
    d.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_refuses_foreign_or_malformed_origins_and_wrong_bearers() {
    let d = TestDaemon::start().await;
    let port = d.host.port();
    for origin in [
        "http://evil.example",
        &format!("http://127.0.0.1:{port}.evil.example.com"),
        &format!("http://user@127.0.0.1:{port}"),
        &format!("http://127.0.0.1:{port}/path"),
        "ftp://127.0.0.1",
        "not an origin",
    ] {
        let res = mcp_init(&d, Some(&d.token), Some(origin)).send().await.unwrap();
        assert_eq!(res.status(), 403, "Origin {origin}");
    }
    for token in [None, Some("wrong")] {
        let res = mcp_init(&d, token, None).send().await.unwrap();
        assert_eq!(res.status(), 401, "bearer {token:?}");
        assert!(res.headers().get("www-authenticate").is_none(), "no OAuth challenge for Cursor to follow");
    }
    for origin in [None, Some(format!("http://localhost:{port}")), Some(d.base.clone())] {
        let res = mcp_init(&d, Some(&d.token), origin.as_deref()).send().await.unwrap();
        assert_eq!(res.status(), 200, "Origin {origin:?}");
        assert!(res.headers().get("mcp-session-id").is_some());
    }
    d.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_overlong_path_is_answered_at_once() {
    let d = TestDaemon::start().await;
    let segments = "/a".repeat(10_000);
    for prefix in ["", "/api", "/mcp", "/api/sessions"] {
        let t0 = Instant::now();
        let r = tokio::time::timeout(
            Duration::from_secs(5),
            TestDaemon::send(d.request(Method::GET, &format!("{prefix}{segments}"))),
        )
        .await
        .expect("answered without hanging");
        assert_error(&r, 414, "invalid_input");
        assert!(t0.elapsed() < Duration::from_secs(2), "{prefix}: {:?}", t0.elapsed());
    }
    // A segment longer than any file name names nothing.
    for path in [format!("/{}", "x".repeat(300)), format!("/api/sessions/{}", "x".repeat(300))] {
        assert_error(&d.get(&path).await, 404, "not_found");
    }
    d.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hook_door_checks_its_token_before_the_body_and_the_body_after() {
    let d = TestDaemon::start().await;
    let token = tether_core::token::hook_token(&d.tether().paths).unwrap();
    let hook = |bearer: Option<&str>, body: Vec<u8>| {
        let rb = d.bare(Method::POST, "/hook").header("Content-Type", "application/json").body(body);
        match bearer {
            Some(b) => rb.bearer_auth(b),
            None => rb,
        }
    };
    for bearer in [None, Some("wrong")] {
        assert_eq!(hook(bearer, b"{}".to_vec()).send().await.unwrap().status(), 401);
    }
    // Refused before a byte of the body is read: it answers a request whose 2 MiB never come.
    let head =
        "POST /hook HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 2097152\r\n\r\n";
    let (answer, after) = stall(d.host.port(), head).await;
    assert!(answer.starts_with("HTTP/1.1 401") && after < Duration::from_secs(2), "{answer} after {after:?}");
    // The MCP token does not open this door.
    assert_eq!(hook(Some(&d.token), b"{}".to_vec()).send().await.unwrap().status(), 401);

    for body in ["[\"stop\", \"chat-1\"]", "[]", "\"stop\"", "42", "null", "{\"hook_event_name\":", ""] {
        let r = TestDaemon::send(hook(Some(&token), body.into())).await;
        assert_error(&r, 400, "invalid_input");
    }
    assert!(
        d.tether().board().chats().activity("chat-1").unwrap().is_none(),
        "a payload that is not an object records nothing"
    );
    let ev = json!({"hook_event_name": "beforeSubmitPrompt", "conversation_id": "chat-2", "workspace_roots": ["/w"]});
    let r = hook(Some(&token), ev.to_string().into()).send().await.unwrap();
    assert_eq!(r.status(), 204);
    let seen = d.tether().board().chats().activity("chat-2").unwrap().expect("recorded");
    assert_eq!((seen.status.as_str(), seen.workspace_roots), ("working", vec!["/w".to_owned()]));
    let stop = json!({"hook_event_name": "stop", "conversation_id": "chat-2", "status": "completed", "loop_count": 0});
    assert_eq!(
        hook(Some(&token), stop.to_string().into()).send().await.unwrap().status(),
        204,
        "no signals: no follow-up"
    );
    // At most 1 MiB (one byte more, all of it read: no reset races the answer).
    let big = [b"{".as_slice(), &vec![b' '; (1 << 20) - 1], b"}"].concat();
    assert_error(&TestDaemon::send(hook(Some(&token), big)).await, 413, "invalid_input");
    d.stop().await;
}

/// Sends `head` (a request's headers and the start of its body) and stalls: the answer, or ""
/// when the server closed without one, and how long it took.
async fn stall(port: u16, head: &str) -> (String, Duration) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    s.write_all(head.as_bytes()).await.unwrap();
    let t0 = Instant::now();
    let mut buf = vec![0; 4096];
    let n = tokio::time::timeout(Duration::from_secs(10), s.read(&mut buf)).await.expect("answered").unwrap_or(0);
    (String::from_utf8_lossy(&buf[..n]).into_owned(), t0.elapsed())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn callbacks_are_off_without_a_public_url_then_take_only_their_own_credentials() {
    let d = TestDaemon::start().await;
    // Whatever Host a tunnel sends.
    let tunnel = |m: &str, path: &str| {
        let m = Method::from_bytes(m.to_uppercase().as_bytes()).unwrap();
        d.bare(m, path).header("Host", "tunnel.example.com").header("Content-Type", "application/json")
    };
    for (method, path) in CALLBACK_ROUTES {
        let path = path.replace("{name}", "tether");
        let r = TestDaemon::send(tunnel(method, &path).body("{}")).await;
        assert_error(&r, 404, "not_found");
        assert!(r.1["message"].as_str().unwrap().contains("public URL"), "{method} {path}: {}", r.1);
        // Not even the MCP token opens them.
        let r = TestDaemon::send(tunnel(method, &path).bearer_auth(&d.token).body("{}")).await;
        assert_error(&r, 404, "not_found");
    }

    ok(d.patch("/api/settings", json!({"cloud": {"public_url": "https://tunnel.example.com"}})).await);
    // A body that stalls is given up on after 5 s (started now, checked at the end).
    let port = d.host.port();
    let stalled = tokio::spawn(stall(
        port,
        concat!(
            "POST /api/agent-auth/exchange HTTP/1.1\r\nHost: tunnel.example.com\r\n",
            "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"bootstrap",
        ),
    ));

    let r = TestDaemon::send(tunnel("post", "/api/agent-auth/exchange").body("{}")).await;
    assert_error(&r, 400, "invalid_input");
    let r =
        TestDaemon::send(tunnel("post", "/api/agent-auth/exchange").body("{\"bootstrap_token\": \"never-issued\"}"))
            .await;
    assert_error(&r, 401, "invalid_token");
    // A run's routes take a run's bearer: neither none nor the MCP token.
    for (method, path) in [
        ("get", "/api/agent/task"),
        ("patch", "/api/agent/task"),
        ("post", "/api/agent/signals"),
        ("get", "/api/skills/index"),
        ("get", "/api/skills/tether"),
    ] {
        for bearer in [None, Some(d.token.as_str())] {
            let mut rb = tunnel(method, path).body("{\"body\": \"hi\", \"to\": \"human\"}");
            if let Some(b) = bearer {
                rb = rb.bearer_auth(b);
            }
            assert_error(&TestDaemon::send(rb).await, 401, "invalid_token");
        }
    }
    let r =
        TestDaemon::send(tunnel("post", "/webhooks/cursor").header("X-Webhook-Event", "statusChange").body("{}")).await;
    assert_error(&r, 401, "bad_signature");
    assert!(d.tether().store.path().exists());

    // At most 256 KiB (one byte more, all of it read: no reset races the answer).
    let big = format!("{{\"bootstrap_token\": \"{}\"}}", "x".repeat((256 << 10) - 22));
    assert_eq!(big.len(), (256 << 10) + 1);
    for path in ["/api/agent-auth/exchange", "/webhooks/cursor"] {
        assert_error(&TestDaemon::send(tunnel("post", path).body(big.clone())).await, 413, "invalid_input");
    }
    let (answer, after) = stalled.await.unwrap();
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(after >= Duration::from_secs(4), "{after:?}");
    let body = answer.split("\r\n\r\n").nth(1).unwrap_or("");
    assert_eq!(
        serde_json::from_str::<Value>(body).ok().map(|v| v["code"].clone()),
        Some(json!("invalid_input")),
        "{answer}"
    );
    d.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_and_stalled_strangers_do_not_starve_health_or_token_holders() {
    // The server raises the soft limit toward the hard one at start, the same way; this is the
    // limit its budget follows. This process holds both ends of each connection.
    let limit = raise_descriptor_limit() as usize;
    let (_, strangers) = Budget::for_descriptors(limit as u64).caps();
    let (idle, stalled) = (strangers + 32, 16);
    let needed = 2 * (idle + stalled) + 512;
    if limit < needed {
        eprintln!("skipped: {limit} descriptors, {needed} needed to hold {} connections at both ends", idle + stalled);
        return;
    }
    let d = TestDaemon::start().await;
    let port = d.host.port();
    let mut held = Vec::with_capacity(idle + stalled);
    for _ in 0..idle {
        held.push(TcpStream::connect(("127.0.0.1", port)).await.unwrap());
    }
    for _ in 0..stalled {
        let mut s = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        s.write_all(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ").await.unwrap();
        held.push(s);
    }

    let t0 = Instant::now();
    let health = tokio::time::timeout(Duration::from_secs(2), d.bare(Method::GET, "/health").send())
        .await
        .expect("/health within 2 s")
        .unwrap();
    assert_eq!(health.status(), 200);
    let init = tokio::time::timeout(Duration::from_secs(2), mcp_init(&d, Some(&d.token), None).send())
        .await
        .expect("an MCP initialize within 2 s")
        .unwrap();
    assert_eq!(init.status(), 200);
    assert!(t0.elapsed() < Duration::from_secs(3), "{:?}", t0.elapsed());

    // The oldest strangers made room: the server closed them.
    let mut first = held.swap_remove(0);
    let mut buf = [0u8; 16];
    let n = tokio::time::timeout(Duration::from_secs(2), first.read(&mut buf)).await.expect("closed by the server");
    assert_eq!(n.unwrap_or(0), 0);
    drop(held);
    d.stop().await;
}
