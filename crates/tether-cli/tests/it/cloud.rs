//! `tether cloud …` end to end against the test kit's fake of Cursor's Cloud Agents API
//! (`tether-fake-cursor-api`): login checks the key with Cursor before keeping it, doctor says
//! what is right, a launch runs in the foreground to its end (events printed, the PR said, the
//! transcript searchable), a follow-up continues the same agent, Ctrl-C cancels the run at
//! Cursor, and the key shows in no output.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use tether_testkit::{wait_for, wait_until};

use crate::env::{api, bin, http, serve, tether_in};

const KEY: &str = "key_cli_cloud_test_0123456789abcdef";

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
        let d = self.dir.path();
        let mut c = tether_in(d);
        c.env("TETHER_CURSOR_HOME", d.join("home/.cursor"))
            .env("TETHER_CURSOR_API_URL", &self.fake.url)
            .env("TETHER_TOKEN", "cloud-test-token")
            .env("TETHER_USER", "pat")
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

/// A change the CLI makes holds in the running daemon the moment the command returns: it is made
/// through the daemon's API (the settings it holds in memory), not left for its watch of
/// `settings.json` to find a moment later (a launch in that moment went without the webhook).
#[test]
fn a_setting_changed_with_the_cli_holds_in_the_running_daemon_when_the_command_returns() {
    let e = Env::new();
    let (mut daemon, port) = serve(&mut e.cmd(), e.dir.path());
    let held = || {
        let (status, view) = api(port, "cloud-test-token", "GET", "/settings", &Value::Null);
        assert_eq!(status, 200, "{view}");
        view["settings"].clone()
    };
    for round in 0..3 {
        let url = format!("https://tether-{round}.example.com");
        e.ok(&["cloud", "webhook", "--public-url", &url]);
        assert_eq!(held()["cloud"]["public_url"], url.as_str(), "round {round}");
        e.ok(&["settings", "set", "cloud.poll_secs", &format!("{}", 30 + round)]);
        assert_eq!(held()["cloud"]["poll_secs"], 30 + round, "round {round}");
    }
    e.ok(&["cloud", "webhook", "--off"]);
    assert_eq!(held()["cloud"]["public_url"], Value::Null);
    // Refused by the daemon: the same coded error as when the CLI saves it itself.
    let out = e.run(&["settings", "set", "runs.max_total", "999"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("error[invalid_input]"), "{err}");

    daemon.kill().unwrap();
    daemon.wait().unwrap();
}

/// The one-time token a launch's prompt carries.
fn bootstrap_token(prompt: &str) -> Option<String> {
    prompt.split("\"bootstrap_token\": \"").nth(1).and_then(|r| r.split('"').next()).map(str::to_owned)
}

#[test]
fn with_a_public_url_the_webhook_ends_a_run_at_once_and_the_agent_calls_back_with_a_one_time_token() {
    let e = Env::new();
    assert!(e.login(KEY).status.success());
    let data = e.dir.path().join("data");
    let log = std::fs::File::create(e.dir.path().join("daemon.log")).unwrap();
    let mut daemon = e
        .cmd()
        .args(["serve", "--port", "0"])
        .env("TETHER_LOG", "debug")
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .unwrap();
    let port = wait_for("the daemon to start", Duration::from_secs(30), || {
        let info: Value = serde_json::from_slice(&std::fs::read(data.join("daemon.json")).ok()?).ok()?;
        info["port"].as_u64()
    });
    let public = format!("http://127.0.0.1:{port}");
    let (status, body) = http("POST", &format!("{public}/webhooks/cursor"), &[], "{}");
    assert_eq!(status, 404, "callbacks are off without a public URL: {body}");
    let on = e.ok(&["cloud", "webhook", "--public-url", &public]);
    assert!(on.contains(&format!("{public}/webhooks/cursor")), "{on}");
    let checks: Value =
        serde_json::from_str(&e.ok(&["cloud", "doctor", "--repo", "github.com/acme/shop", "--json"])).unwrap();
    let reach = checks.as_array().unwrap().iter().find(|c| c["name"] == "public_url").unwrap();
    assert_eq!(reach["status"], "ok", "our /health answers through the public URL: {checks:#}");
    assert!(checks.as_array().unwrap().iter().any(|c| c["name"] == "webhook_secret" && c["status"] == "ok"));
    // Only the webhook can end this run quickly: its stream is expired and polling is slow.
    e.ok(&["settings", "set", "cloud.poll_secs", "600"]);
    e.ok(&["task", "add", "Price the tapirs"]);
    std::thread::sleep(Duration::from_millis(700)); // the daemon applies saved settings live

    let run: Value = serde_json::from_str(&e.ok(&[
        "cloud",
        "launch",
        "--repo",
        "github.com/acme/shop",
        "--task",
        "T-1",
        "[cloud:gone] [cloud:step=40] tapirs",
        "--json",
    ]))
    .unwrap();
    let id = run["id"].as_str().unwrap().to_owned();
    let end = Instant::now() + Duration::from_secs(30);
    let done = loop {
        let r: Value = serde_json::from_str(&e.ok(&["runs", "show", &id, "--events", "--json"])).unwrap();
        if r["status"] != "queued" && r["status"] != "running" {
            break r;
        }
        assert!(Instant::now() < end, "the webhook did not end the run: {r:#}");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(done["status"], "succeeded", "{done:#}");
    assert_eq!(done["cloud"]["webhook"], true);
    let told =
        done["events"].as_array().unwrap().iter().any(|ev| ev["text"].as_str().is_some_and(|t| t.contains("webhook")));
    assert!(told, "the run says the webhook told it: {done:#}");

    // The launch went through v0 with our webhook; its prompt carried a one-time token.
    let launch = e.fake.requests().into_iter().find(|q| q["path"] == "/v0/agents").expect("a v0 launch");
    assert_eq!(launch["body"]["webhook"]["url"], format!("{public}/webhooks/cursor"));
    let prompt = launch["body"]["prompt"]["text"].as_str().unwrap().to_owned();
    let boot = bootstrap_token(&prompt).unwrap();
    assert!(!done["prompt"].as_str().unwrap().contains(&boot), "the token is not in the stored prompt");
    let secret = std::fs::read_to_string(data.join("cursor-webhook-secret")).unwrap();
    assert!(secret.trim().len() >= 32);

    // The receiver: forged → 401, malformed → 400, a replayed delivery → answered once.
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let hook = format!("{public}/webhooks/cursor");
    let payload =
        r#"{"event":"statusChange","timestamp":"2026-11-23T10:00:00Z","id":"bc-unknown","status":"FINISHED"}"#;
    let post = |secret: &str, id: &str, body: &str| {
        rt.block_on(tether_testkit::cursor_api::post_webhook(&hook, secret, id, body)).unwrap()
    };
    assert_eq!(post("forged-secret-forged-secret-forged", "msg_a", payload), 401);
    assert_eq!(post(secret.trim(), "msg_b", "{not json"), 400);
    assert_eq!(post(secret.trim(), "msg_c", payload), 200);
    let again = http(
        "POST",
        &hook,
        &[
            ("X-Webhook-Event", "statusChange"),
            ("X-Webhook-ID", "msg_c"),
            ("X-Webhook-Signature", &tether_testkit::cursor_api::sign(secret.trim(), payload)),
        ],
        payload,
    );
    assert_eq!(again.0, 200);
    assert!(again.1.contains("duplicate"), "{again:?}");

    // R-1 has ended: its one-time token died with it.
    let dead = http(
        "POST",
        &format!("{public}/api/agent-auth/exchange"),
        &[],
        &format!("{{\"bootstrap_token\": \"{boot}\"}}"),
    );
    assert_eq!(dead.0, 401, "{dead:?}");
    let shown: Value = serde_json::from_str(&e.ok(&["task", "show", "T-1", "--json"])).unwrap();
    assert_eq!(shown["status"], "in_review", "a task-bound cloud run moves its task like a local one");

    // A live run's agent exchanges its token once, for a bearer that may touch only its run's
    // task, signals and skills.
    e.ok(&["task", "add", "Price the tapirs"]);
    let live: Value = serde_json::from_str(&e.ok(&[
        "cloud",
        "launch",
        "--repo",
        "github.com/acme/shop",
        "--task",
        "T-2",
        "[cloud:hang] tapirs, slowly",
        "--json",
    ]))
    .unwrap();
    let live_id = live["id"].as_str().unwrap().to_owned();
    let boot = wait_for("the second launch to reach Cursor", Duration::from_secs(30), || {
        e.fake.requests().into_iter().filter(|q| q["path"] == "/v0/agents").find_map(|q| {
            let p = q["body"]["prompt"]["text"].as_str()?;
            p.contains("slowly").then(|| bootstrap_token(p))?
        })
    });
    let ex = http(
        "POST",
        &format!("{public}/api/agent-auth/exchange"),
        &[],
        &format!("{{\"bootstrap_token\": \"{boot}\"}}"),
    );
    assert_eq!(ex.0, 200, "{ex:?}");
    let bearer = serde_json::from_str::<Value>(&ex.1).unwrap()["token"].as_str().unwrap().to_owned();
    let reused = http(
        "POST",
        &format!("{public}/api/agent-auth/exchange"),
        &[],
        &format!("{{\"bootstrap_token\": \"{boot}\"}}"),
    );
    assert_eq!(reused.0, 401, "spent: {reused:?}");
    let auth = format!("Bearer {bearer}");
    let h = [("Authorization", auth.as_str())];
    let task = http("GET", &format!("{public}/api/agent/task"), &h, "");
    assert_eq!(task.0, 200, "{task:?}");
    assert!(task.1.contains("Price the tapirs") && task.1.contains("T-2"), "{task:?}");
    let upd = http("PATCH", &format!("{public}/api/agent/task"), &h, r#"{"comment": "half the tapirs priced"}"#);
    assert_eq!(upd.0, 200, "{upd:?}");
    let sig = http(
        "POST",
        &format!("{public}/api/agent/signals"),
        &h,
        r#"{"to": "human", "type": "question", "body": "Euros or dollars?"}"#,
    );
    assert_eq!(sig.0, 201, "{sig:?}");
    let skills = http("GET", &format!("{public}/api/skills/index"), &h, "");
    assert!(skills.0 == 200 && skills.1.contains("\"tether\""), "{skills:?}");
    let skill = http("GET", &format!("{public}/api/skills/tether"), &h, "");
    assert!(skill.0 == 200 && skill.1.contains("/api/agent/task"), "{skill:?}");
    for (method, path) in [("GET", "/api/tasks"), ("POST", "/mcp")] {
        let (st, _) = http(method, &format!("{public}{path}"), &[("Authorization", &auth), ("X-Tether", "1")], "{}");
        assert!(st == 401 || st == 403, "{path} refuses the scoped bearer: {st}");
    }
    let done_asked = http("PATCH", &format!("{public}/api/agent/task"), &h, r#"{"status": "done"}"#);
    assert_eq!(done_asked.0, 400, "done skips review; this run was not started with --complete: {done_asked:?}");
    let shown: Value = serde_json::from_str(&e.ok(&["task", "show", "T-2", "--json"])).unwrap();
    assert!(shown.to_string().contains("half the tapirs priced"), "{shown:#}");
    e.ok(&["runs", "cancel", &live_id]);
    wait_until("the cancel to end the live run", Duration::from_secs(30), || {
        serde_json::from_str::<Value>(&e.ok(&["runs", "show", &live_id, "--json"])).unwrap()["status"] == "cancelled"
    });
    let gone = http("GET", &format!("{public}/api/agent/task"), &h, "");
    assert_eq!(gone.0, 401, "the bearer died with its run: {gone:?}");
    let signals = e.ok(&["signals", "list"]);
    assert!(signals.contains("Euros or dollars?"), "{signals}");
    let _ = daemon.kill();
    let _ = daemon.wait();
    assert!(!e.seen.borrow().contains(KEY) && !e.seen.borrow().contains(secret.trim()), "no key or secret printed");
    let logged = std::fs::read_to_string(e.dir.path().join("daemon.log")).unwrap();
    assert!(logged.contains("DEBUG"), "the daemon logged at debug level");
    assert!(
        !logged.contains(KEY) && !logged.contains(secret.trim()) && !logged.contains(&bearer),
        "no secret in the log"
    );
}

/// What a cloud run spent comes from Cursor's usage API (its cost only when Cursor gives one:
/// none is invented), and a budget it goes over while it runs cancels it at Cursor.
#[test]
fn a_cloud_runs_usage_is_cursors_and_its_budget_cancels_it_there() {
    let e = Env::new();
    assert!(e.login(KEY).status.success());
    e.ok(&["settings", "set", "cloud.poll_secs", "1"]);
    let launch = |prompt: &str, extra: &[&str]| -> Value {
        let args =
            [&["cloud", "launch", "--repo", "github.com/acme/shop", prompt, "--follow", "--json"], extra].concat();
        serde_json::from_slice(&e.run(&args).stdout).unwrap()
    };
    let r = launch("[cloud:tokens=5000] [cloud:cost=null] count the quokkas", &[]);
    assert_eq!(r["status"], "succeeded", "{r:#}");
    assert_eq!(
        r["usage"],
        serde_json::json!({"input_tokens": 3000, "output_tokens": 1000, "cache_read_tokens": 750, "cache_write_tokens": 250})
    );
    assert_eq!(r["usage_source"], "cloud");
    assert!(r.get("cost_usd").is_none(), "Cursor said no cost: {r:#}");
    let r = launch("[cloud:tokens=1000] [cloud:cost=0.25] price them", &[]);
    assert_eq!(r["cost_usd"], 0.25, "Cursor's own figure is kept");

    let r = launch("[cloud:hang] [cloud:tokens=4000] loop forever", &["--budget", "1k"]);
    assert_eq!(r["status"], "over_budget", "{r:#}");
    assert!(r["error"].as_str().unwrap().contains("cancelled at Cursor"), "{r:#}");
    assert!(r["usage"]["input_tokens"].as_i64().unwrap() > 0, "what it spent is kept");
    let cancelled = e.fake.requests().iter().any(|q| q["path"].as_str().is_some_and(|p| p.ends_with("/cancel")));
    assert!(cancelled, "the run was cancelled at Cursor");
}
