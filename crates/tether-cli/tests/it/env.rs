//! The sandbox every test runs `tether` in: a clean environment (nothing of the caller's but
//! PATH), its own home and data dir, and Cursor's data either absent or a generated fixture; and
//! the workspace's binaries, the test kit's fakes built on first use.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use tether_testkit::CursorFixture;

/// A binary of the workspace. Cargo builds this package's own (`tether`) for its tests; the
/// test kit's fakes (`tether-fake-agent`, `tether-fake-cursor-api`) are built here when missing.
pub fn bin(name: &str) -> PathBuf {
    let b = assert_cmd::cargo::cargo_bin(name);
    if !b.exists() {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let ok = Command::new(cargo)
            .args(["build", "-p", "tether-testkit", "--bin", name])
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok && b.exists(), "building {name}");
    }
    b
}

/// `tether` in the sandbox at `dir`: home `dir/home`, data dir `dir/data`, no Cursor data.
pub fn tether_in(dir: &Path) -> Command {
    let mut c = Command::new(bin("tether"));
    c.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", dir.join("home"))
        .env("TETHER_HOME", dir.join("data"))
        .env("TETHER_CURSOR_DIR", dir.join("no-cursor"))
        .env("TETHER_CURSOR_HOME", dir.join("no-cursor-cli"))
        .env("NO_COLOR", "1")
        // Local days (usage reports) the same on every machine.
        .env("TZ", "UTC");
    c
}

/// `tether` over a fixture of Cursor's data (its home, its User dir and CLI home), with its data
/// dir at `data`. Nothing else is set: not even NO_COLOR, which callers add.
pub fn tether_on(fx: &CursorFixture, data: &Path) -> Command {
    let mut c = Command::new(bin("tether"));
    c.env_clear()
        .env("HOME", &fx.home)
        .env("TETHER_HOME", data)
        .env("TETHER_CURSOR_DIR", &fx.user_dir)
        .env("TETHER_CURSOR_HOME", &fx.cursor_home);
    c
}

/// A temp dir holding one sandbox for [`tether_in`]; removed when dropped.
pub struct Sandbox {
    pub dir: tempfile::TempDir,
}

impl Sandbox {
    pub fn new() -> Self {
        Self { dir: tempfile::tempdir().unwrap() }
    }

    pub fn cmd(&self) -> Command {
        tether_in(self.dir.path())
    }

    pub fn spawn(&self, args: &[&str]) -> Child {
        self.cmd().args(args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap()
    }

    /// `tether ARGS… --json`, which must succeed: what it printed.
    pub fn json(&self, args: &[&str]) -> serde_json::Value {
        let out = self.cmd().args(args).arg("--json").output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap()
    }
}

/// A plain HTTP/1.1 request to a loopback URL: `(status, body)`. Its Host is a public name (what
/// a tunnel passes on) unless `headers` give one.
pub fn http(method: &str, url: &str, headers: &[(&str, &str)], body: &str) -> (u16, String) {
    let rest = url.trim_start_matches("http://");
    let (addr, path) = rest.split_once('/').map_or((rest, "/".to_owned()), |(a, p)| (a, format!("/{p}")));
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    let host = headers.iter().find(|(k, _)| k.eq_ignore_ascii_case("host")).map_or("tether.example.net", |(_, v)| v);
    let mut req =
        format!("{method} {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\nContent-Length: {}\r\n", body.len());
    for (k, v) in headers.iter().filter(|(k, _)| !k.eq_ignore_ascii_case("host")) {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    req.push_str(body);
    s.write_all(req.as_bytes()).unwrap();
    let mut resp = String::new();
    std::io::Read::read_to_string(&mut s, &mut resp).unwrap();
    let status = resp.split_whitespace().nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
    let body = resp.split_once("\r\n\r\n").map(|(_, b)| b.to_owned()).unwrap_or_default();
    // Chunked bodies: the JSON is what matters here; drop the chunk-size lines.
    let body = if body.lines().next().is_some_and(|l| u64::from_str_radix(l.trim(), 16).is_ok()) {
        body.lines().skip(1).step_by(2).collect::<Vec<_>>().join("")
    } else {
        body
    };
    (status, body)
}

/// `method` `/api/…` on the daemon listening on `port`, as a script calls it (the bearer token,
/// a loopback Host, `X-Tether`): `(status, JSON)`.
pub fn api(port: u64, token: &str, method: &str, path: &str, body: &serde_json::Value) -> (u16, serde_json::Value) {
    let auth = format!("Bearer {token}");
    let headers = [
        ("Host", "127.0.0.1"),
        ("Authorization", auth.as_str()),
        ("X-Tether", "1"),
        ("Content-Type", "application/json"),
    ];
    let body = if body.is_null() { String::new() } else { body.to_string() };
    let (status, text) = http(method, &format!("http://127.0.0.1:{port}/api{path}"), &headers, &body);
    (status, serde_json::from_str(&text).unwrap_or_else(|e| panic!("{method} {path}: {status}, {e}: {text}")))
}

/// Starts `tether serve` (port 0) in the sandbox at `dir` and waits until it says its port.
pub fn serve(cmd: &mut Command, dir: &Path) -> (Child, u64) {
    let log = std::fs::File::create(dir.join("daemon.log")).unwrap();
    let child = cmd.args(["serve", "--port", "0"]).stdout(Stdio::null()).stderr(log).spawn().unwrap();
    let info = dir.join("data/daemon.json");
    let port = tether_testkit::wait_for("the daemon to start", std::time::Duration::from_secs(30), || {
        let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&info).ok()?).ok()?;
        v["port"].as_u64()
    });
    (child, port)
}
