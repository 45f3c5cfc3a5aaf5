//! What a shared machine and an unlucky second do to Tether: many processes opening one new data
//! dir at once (the daemon at login and a CLI command in the same second), and files other local
//! users must not be able to read.

use std::process::{Command, Stdio};
use std::time::Duration;

fn tether(dir: &std::path::Path) -> Command {
    let mut c = Command::new(assert_cmd::cargo::cargo_bin("tether"));
    c.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", dir.join("home"))
        .env("TETHER_HOME", dir.join("data"))
        .env("TETHER_CURSOR_DIR", dir.join("no-cursor"))
        .env("TETHER_CURSOR_HOME", dir.join("no-cli"))
        .env("TETHER_TOKEN", "hardening-token")
        .env("NO_COLOR", "1");
    c
}

/// The daemon and eight CLI commands start on a fresh data dir at the same moment, five times
/// over: every one of them succeeds and the schema is applied once.
#[test]
fn many_processes_opening_a_new_data_dir_at_once_all_succeed() {
    for round in 0..5 {
        let dir = tempfile::tempdir().unwrap();
        let mut daemon = tether(dir.path())
            .args(["serve", "--port", "0"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let clis: Vec<_> = (0..8)
            .map(|i| {
                let args: &[&str] = match i % 4 {
                    0 => &["sessions", "list", "--json"],
                    1 => &["task", "list", "--json"],
                    2 => &["signals", "list", "--json"],
                    _ => &["runs", "list", "--json"],
                };
                tether(dir.path()).args(args).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap()
            })
            .collect();
        for c in clis {
            let out = c.wait_with_output().unwrap();
            assert!(out.status.success(), "round {round}: {}", String::from_utf8_lossy(&out.stderr));
        }
        std::thread::sleep(Duration::from_millis(300));
        assert!(daemon.try_wait().unwrap().is_none(), "round {round}: the daemon died");
        let _ = Command::new("kill").args(["-TERM", &daemon.id().to_string()]).status();
        let out = daemon.wait_with_output().unwrap();
        assert!(out.status.success(), "round {round}: {}", String::from_utf8_lossy(&out.stderr));
        let db = rusqlite::Connection::open(dir.path().join("data/index.db")).unwrap();
        let version: i64 = db.query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
        assert!(version >= 8, "migrated to the latest schema once");
    }
}

#[cfg(unix)]
#[test]
fn the_data_dir_and_the_index_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = tether(dir.path()).args(["task", "add", "private thoughts"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&data), 0o700, "the data dir is tightened");
    for f in ["index.db", "index.db-wal", "index.db-shm"] {
        let p = data.join(f);
        if p.exists() {
            assert_eq!(mode(&p), 0o600, "{f}");
        }
    }
}

/// Eight people (or scripts) tag chats at the same moment, five rounds: none fails with
/// "database is locked".
#[test]
fn concurrent_tag_writes_all_succeed() {
    let fx = tether_testkit::CursorFixture::new();
    tether_testkit::eras::build_all(&fx);
    let dir = tempfile::tempdir().unwrap();
    let cmd = || {
        let mut c = Command::new(assert_cmd::cargo::cargo_bin("tether"));
        c.env_clear()
            .env("HOME", &fx.home)
            .env("TETHER_HOME", dir.path().join("data"))
            .env("TETHER_CURSOR_DIR", &fx.user_dir)
            .env("TETHER_CURSOR_HOME", &fx.cursor_home)
            .env("NO_COLOR", "1");
        c
    };
    assert!(cmd().arg("index").output().unwrap().status.success());
    let id = tether_testkit::eras::ids::B_SPLIT;
    for round in 0..5 {
        let all: Vec<_> = (0..8)
            .map(|i| {
                cmd()
                    .args(["sessions", "tag", id, "--add", &format!("r{round}-w{i}")])
                    .stdout(Stdio::null())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for c in all {
            let out = c.wait_with_output().unwrap();
            assert!(out.status.success(), "round {round}: {}", String::from_utf8_lossy(&out.stderr));
        }
    }
    let out = cmd().args(["sessions", "show", id, "--json", "--limit", "1"]).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["tags"].as_array().unwrap().len(), 40, "every tag written");
}

/// `tether … | head -c 1`: the pipe closes early; the CLI stops quietly, without a panic.
#[test]
fn a_closed_output_pipe_is_not_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..30 {
        let out = tether(dir.path()).args(["task", "add", &format!("task number {i}")]).output().unwrap();
        assert!(out.status.success());
    }
    let mut child = tether(dir.path())
        .args(["task", "list", "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Read;
    let mut one = [0u8; 1];
    child.stdout.as_mut().unwrap().read_exact(&mut one).unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked") && !err.contains("Broken pipe"), "{err}");

    // A limit above what one list holds is refused, not silently cut.
    let out = tether(dir.path()).args(["task", "list", "--json", "--limit", "1000"]).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("more than 500"), "{}", String::from_utf8_lossy(&out.stderr));
    let out = tether(dir.path()).args(["task", "list", "--json", "--limit", "500"]).output().unwrap();
    let listed: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(listed["tasks"].as_array().map(Vec::len), Some(30));
}

/// `tether open` sends the token only to a daemon of ours: a `daemon.json` owned by another
/// user (someone who took the port after a crash) is not believed. Needs root to hand the file
/// to another user; skipped otherwise.
#[cfg(unix)]
#[test]
fn the_token_goes_only_to_our_own_daemon() {
    use std::os::unix::fs::MetadataExt;
    let dir = tempfile::tempdir().unwrap();
    let mut daemon =
        tether(dir.path()).args(["serve", "--port", "0"]).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    let info = dir.path().join("data/daemon.json");
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while !info.exists() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let ok = tether(dir.path()).args(["open", "--print"]).output().unwrap();
    assert!(ok.status.success() && String::from_utf8_lossy(&ok.stdout).contains("/login?code="));
    if std::fs::metadata(&info).unwrap().uid() == 0 {
        let chown = Command::new("chown").args(["65534", info.to_str().unwrap()]).status().unwrap();
        assert!(chown.success());
        let out = tether(dir.path()).args(["open", "--print"]).output().unwrap();
        assert!(!out.status.success(), "a daemon.json of another user is not trusted");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("not running"),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let _ = Command::new("kill").args(["-TERM", &daemon.id().to_string()]).status();
    let _ = daemon.wait();
}
