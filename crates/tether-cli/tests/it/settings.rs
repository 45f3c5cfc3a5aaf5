//! Saved settings reach a running daemon without a restart: `tether settings set` moves it to a
//! new port (with clients connected) and re-points it at other Cursor folders.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use tether_testkit::{Composer, CursorFixture, Journal, wait_until};

const TOKEN: &str = "settings-token";

fn tether(home: &std::path::Path, data: &std::path::Path) -> Command {
    // No TETHER_CURSOR_* or TETHER_PORT: the settings file decides, as on a person's machine.
    let mut c = Command::new(assert_cmd::cargo::cargo_bin("tether"));
    c.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("TETHER_HOME", data)
        .env("TETHER_TOKEN", TOKEN)
        .env("NO_COLOR", "1");
    c
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// A GET with the bearer token; the status code, or None when nothing listens.
fn status(port: u16, path: &str) -> Option<u16> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {TOKEN}\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut head = [0u8; 12];
    s.read_exact(&mut head).ok()?;
    std::str::from_utf8(&head[9..12]).ok()?.parse().ok()
}

fn one_chat(fx: &CursorFixture, id: &str, title: &str) {
    let g = fx.global(Journal::Rollback);
    Composer {
        id,
        name: Some(title),
        version: 16,
        bubble_version: 3,
        created_at: 1_790_000_000_000,
        extra: json!({}),
        bubbles: vec![(1, json!({"text": format!("{title} body"), "createdAt": "2026-11-01T00:00:00Z"}))],
    }
    .write(&g);
    g.close();
}

#[test]
fn saved_settings_apply_to_a_running_daemon() {
    let dir = tempfile::tempdir().unwrap();
    let (home, data) = (dir.path().join("home"), dir.path().join("data"));
    let first = CursorFixture::new();
    one_chat(&first, "aaaa0000-0000-4000-8000-000000000001", "Otter chat");
    let second = CursorFixture::new();
    one_chat(&second, "bbbb0000-0000-4000-8000-000000000002", "Badger chat");
    let set = |k: &str, v: &str| {
        let out = tether(&home, &data).args(["settings", "set", k, v]).output().unwrap();
        assert!(out.status.success(), "set {k}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    let (p1, p2) = (free_port(), free_port());
    set("port", &p1.to_string());
    set("cursor_user_dir", first.user_dir.to_str().unwrap());
    set("cursor_home", first.cursor_home.to_str().unwrap());

    let daemon = tether(&home, &data).arg("serve").stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    let daemon_port = || {
        std::fs::read_to_string(data.join("daemon.json"))
            .ok()
            .and_then(|s| serde_json::from_str::<Value>(&s).ok())
            .and_then(|v| v["port"].as_u64())
    };
    wait_until("the daemon on the saved port", Duration::from_secs(30), || daemon_port() == Some(p1.into()));
    let titles = || {
        let out = tether(&home, &data).args(["sessions", "list", "--json"]).output().unwrap();
        let list: Value = serde_json::from_slice(&out.stdout).unwrap_or(json!([]));
        let mut t: Vec<String> =
            list.as_array().unwrap().iter().filter_map(|s| s["title"].as_str().map(str::to_owned)).collect();
        t.sort();
        t
    };
    wait_until("the first folder indexed", Duration::from_secs(30), || titles() == ["Otter chat"]);

    // A client holds the GUI's event stream open while the port moves: the move must not wait on it.
    let mut stream = TcpStream::connect(("127.0.0.1", p1)).unwrap();
    write!(stream, "GET /api/events HTTP/1.1\r\nHost: 127.0.0.1:{p1}\r\nAuthorization: Bearer {TOKEN}\r\n\r\n")
        .unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut buf = [0u8; 64];
    assert!(stream.read(&mut buf).unwrap() > 0, "the event stream answered");

    let said = set("port", &p2.to_string());
    assert!(said.contains(&format!("moved to http://127.0.0.1:{p2}/mcp")), "{said}");
    assert_eq!(daemon_port(), Some(p2.into()));
    assert_eq!(status(p2, "/api/status"), Some(200), "serving on the new port");
    assert_eq!(status(p1, "/api/status"), None, "the old port is closed");
    let project = dir.path().join("project");
    std::fs::create_dir(&project).unwrap();
    let init = tether(&home, &data).args(["init", "--dry-run", "--project-mcp"]).arg(&project).output().unwrap();
    let init = String::from_utf8_lossy(&init.stdout);
    assert!(init.contains(&format!("127.0.0.1:{p2}/mcp")), "init names the new port: {init}");

    set("cursor_user_dir", second.user_dir.to_str().unwrap());
    set("cursor_home", second.cursor_home.to_str().unwrap());
    wait_until("the second folder indexed instead", Duration::from_secs(30), || titles() == ["Badger chat"]);
    // Cursor writes to the new folder: the watcher follows it too.
    one_chat(&second, "bbbb0000-0000-4000-8000-000000000003", "Beaver chat");
    wait_until("the watcher on the new folder", Duration::from_secs(30), || titles() == ["Badger chat", "Beaver chat"]);

    // The GUI's save refuses a port another program holds, and saves nothing.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let taken_port = taken.local_addr().unwrap().port();
    let body = format!("{{\"port\": {taken_port}}}");
    let mut s = TcpStream::connect(("127.0.0.1", p2)).unwrap();
    write!(
        s,
        "PATCH /api/settings HTTP/1.1\r\nHost: 127.0.0.1:{p2}\r\nAuthorization: Bearer {TOKEN}\r\nX-Tether: 1\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    s.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 400") && answer.contains("in use"), "{answer}");
    let saved: Value = serde_json::from_slice(&std::fs::read(data.join("settings.json")).unwrap()).unwrap();
    assert_eq!(saved["port"], json!(p2));

    // From the CLI the change goes through the running daemon, which refuses it as the GUI's
    // save does: nothing saved, and the daemon stays put.
    let out = tether(&home, &data).args(["settings", "set", "port", &taken_port.to_string()]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("in use"), "{err}");
    let saved: Value = serde_json::from_slice(&std::fs::read(data.join("settings.json")).unwrap()).unwrap();
    assert_eq!(saved["port"], json!(p2));
    assert_eq!(status(p2, "/api/status"), Some(200), "still serving");

    let _ = Command::new("kill").args(["-TERM", &daemon.id().to_string()]).status();
    let out = daemon.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}
