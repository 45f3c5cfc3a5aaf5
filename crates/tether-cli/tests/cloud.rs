//! `tether cloud …` end to end against the test kit's fake of Cursor's Cloud Agents API
//! (`tether-fake-cursor-api`): login checks the key with Cursor before keeping it, doctor says
//! what is right, a launch runs in the foreground to its end (events printed, the PR said, the
//! transcript searchable), a follow-up continues the same agent, Ctrl-C cancels the run at
//! Cursor, and the key shows in no output.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

const KEY: &str = "key_cli_cloud_test_0123456789abcdef";

fn bin(name: &str) -> PathBuf {
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

struct Fake {
    child: Child,
    url: String,
}

impl Fake {
    fn start() -> Self {
        let mut child =
            Command::new(bin("tether-fake-cursor-api")).args(["--key", KEY]).stdout(Stdio::piped()).spawn().unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        Self { child, url: line.trim().to_owned() }
    }

    fn requests(&self) -> Vec<Value> {
        // A plain HTTP/1.1 GET; the fake's control routes take no key.
        let addr = self.url.trim_start_matches("http://");
        let mut s = std::net::TcpStream::connect(addr).unwrap();
        write!(s, "GET /_fake/requests HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").unwrap();
        let mut resp = String::new();
        std::io::Read::read_to_string(&mut s, &mut resp).unwrap();
        let body = resp.split_once("\r\n\r\n").map(|(_, b)| b).unwrap_or("[]");
        serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body}"))
    }
}

impl Drop for Fake {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

struct Env {
    dir: tempfile::TempDir,
    fake: Fake,
    seen: std::cell::RefCell<String>,
}

impl Env {
    fn new() -> Self {
        Self { dir: tempfile::tempdir().unwrap(), fake: Fake::start(), seen: Default::default() }
    }

    fn cmd(&self) -> Command {
        let mut c = Command::new(assert_cmd::cargo::cargo_bin("tether"));
        let d = self.dir.path();
        c.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", d.join("home"))
            .env("TETHER_HOME", d.join("data"))
            .env("TETHER_CURSOR_DIR", d.join("no-cursor"))
            .env("TETHER_CURSOR_HOME", d.join("home/.cursor"))
            .env("TETHER_CURSOR_API_URL", &self.fake.url)
            .env("TETHER_TOKEN", "cloud-test-token")
            .env("TETHER_USER", "pat")
            .env("NO_COLOR", "1")
            .current_dir(d);
        c
    }

    fn keep(&self, out: &Output) {
        let mut s = self.seen.borrow_mut();
        s.push_str(&String::from_utf8_lossy(&out.stdout));
        s.push_str(&String::from_utf8_lossy(&out.stderr));
    }

    fn run(&self, args: &[&str]) -> Output {
        let out = self.cmd().args(args).output().unwrap();
        self.keep(&out);
        out
    }

    fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "{args:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn login(&self, key: &str) -> Output {
        let mut c = self
            .cmd()
            .args(["cloud", "login", "--key-stdin"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        c.stdin.take().unwrap().write_all(key.as_bytes()).unwrap();
        let out = c.wait_with_output().unwrap();
        self.keep(&out);
        out
    }
}

#[test]
fn login_doctor_launch_follow_up_and_find_the_agents_work() {
    let e = Env::new();
    let bad = e.login("key_not_the_right_one_000000000");
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("refused the API key"), "{bad:?}");
    let doctor = e.run(&["cloud", "doctor", "--json"]);
    assert!(!doctor.status.success(), "no key yet: doctor fails");
    let checks: Value = serde_json::from_slice(&doctor.stdout).unwrap();
    assert_eq!(checks[1]["name"], "key");
    assert_eq!(checks[1]["status"], "fail", "{checks:#}");

    let good = e.login(KEY);
    assert!(good.status.success(), "{good:?}");
    assert!(String::from_utf8_lossy(&good.stdout).contains("Logged in as dev@example.com"));
    let checks: Value = serde_json::from_str(&e.ok(&[
        "cloud",
        "doctor",
        "--repo",
        "github.com/acme/shop",
        "--model",
        "codex",
        "--verify-repo",
        "--json",
    ]))
    .unwrap();
    let statuses: Vec<(&str, &str)> = checks
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["name"].as_str().unwrap(), c["status"].as_str().unwrap()))
        .collect();
    assert_eq!(
        statuses,
        [
            ("api_url", "ok"),
            ("key", "ok"),
            ("key_valid", "ok"),
            ("repository", "ok"),
            ("model", "ok"),
            ("public_url", "ok")
        ]
    );

    // No daemon: the launch runs here, printing its events, until the agent is done.
    let out =
        e.ok(&["cloud", "launch", "--repo", "github.com/acme/shop", "--auto-pr", "Price the quokkas", "--follow"]);
    assert!(out.contains("Worked on: Price the quokkas"), "{out}");
    assert!(out.contains("R-1 succeeded") && out.contains("PR https://github.com/acme/shop/pull/7"), "{out}");
    let run: Value = serde_json::from_str(&e.ok(&["runs", "show", "R-1", "--json"])).unwrap();
    assert_eq!(run["kind"], "cloud");
    assert_eq!(run["cloud"]["repo"], "https://github.com/acme/shop");
    let agent = run["chat_id"].as_str().unwrap().to_owned();
    let hits: Value = serde_json::from_str(&e.ok(&["sessions", "search", "quokkas", "--json"])).unwrap();
    assert_eq!(hits[0]["session_id"], agent.as_str(), "{hits:#}");
    assert_eq!(hits[0]["source"], "cloud");

    let out = e.ok(&["runs", "followup", "R-1", "now the tests for quokkas", "--follow", "--json"]);
    let f: Value = serde_json::from_str(&out).unwrap();
    assert_eq!((f["status"].as_str(), f["chat_id"].as_str()), (Some("succeeded"), Some(agent.as_str())));
    let shown: Value = serde_json::from_str(&e.ok(&["sessions", "show", &agent, "--json"])).unwrap();
    let users = shown["messages"].as_array().unwrap().iter().filter(|m| m["role"] == "user").count();
    assert_eq!(users, 2, "one chat holds the launch and the follow-up");

    // Ctrl-C on a foreground cloud run cancels it at Cursor.
    let mut child = e
        .cmd()
        .args(["cloud", "launch", "--repo", "https://github.com/acme/shop", "[cloud:hang] wait", "--follow"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let end = Instant::now() + Duration::from_secs(30);
    loop {
        let r: Value = serde_json::from_slice(&e.run(&["runs", "show", "R-3", "--json"]).stdout).unwrap_or(Value::Null);
        if r["cloud"]["run_id"].is_string() {
            break;
        }
        assert!(Instant::now() < end, "the hanging run never started: {r:#}");
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = Command::new("kill").args(["-INT", &child.id().to_string()]).status();
    let wait_end = Instant::now() + Duration::from_secs(30);
    while child.try_wait().unwrap().is_none() {
        assert!(Instant::now() < wait_end, "Ctrl-C did not end the launch");
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    e.keep(&out);
    let r: Value = serde_json::from_str(&e.ok(&["runs", "show", "R-3", "--json"])).unwrap();
    assert_eq!(r["status"], "cancelled", "{r:#}");
    let cancels =
        e.fake.requests().into_iter().filter(|q| q["path"].as_str().is_some_and(|p| p.ends_with("/cancel"))).count();
    assert_eq!(cancels, 1, "the cancel reached Cursor");
    assert!(!e.seen.borrow().contains(KEY), "the key was printed");
}
