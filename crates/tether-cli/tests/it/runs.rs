//! `tether run` / `tether runs …` end to end against the test kit's fake Cursor CLI
//! (`tether-fake-agent`, steered by `[fake:…]` directives in the prompt): what the agent gets
//! (flags, an allowlisted environment, the run's permissions and role rule), how each way of
//! ending is reported, that the person's `.cursor/cli.json` is back byte for byte after success,
//! failure, cancel, and a kill -9 of the runner followed by a restart, that workspaces outside
//! the roots are refused, that runs queue past the limits, how a run moves its task, and how an
//! idle chat Tether ran is woken by a follow-up run for its signals.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::env::{bin, tether_in};

const USER_CLI_JSON: &[u8] =
    b"{\n  \"version\": 1,\n  \"permissions\": { \"allow\": [\"Read(**)\"], \"deny\": [\"Shell(rm)\"] }\n}\n";

pub(crate) struct Env {
    pub(crate) dir: tempfile::TempDir,
    pub(crate) ws: PathBuf,
}

impl Env {
    /// A data dir, a home, and a workspace (an allowed root) holding the person's own cli.json.
    pub(crate) fn new(settings: Value) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        std::fs::create_dir_all(ws.join(".cursor")).unwrap();
        std::fs::write(ws.join(".cursor/cli.json"), USER_CLI_JSON).unwrap();
        let ws = ws.canonicalize().unwrap();
        let data = dir.path().join("data");
        std::fs::create_dir_all(&data).unwrap();
        let mut runs = json!({"roots": [ws], "result_grace_secs": 1, "kill_grace_secs": 1});
        if let (Some(r), Some(extra)) = (runs.as_object_mut(), settings.as_object()) {
            r.extend(extra.clone());
        }
        std::fs::write(data.join("settings.json"), json!({"runs": runs}).to_string()).unwrap();
        Self { dir, ws }
    }

    pub(crate) fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    pub(crate) fn cmd(&self) -> Command {
        let mut c = tether_in(self.dir.path());
        c.env("TETHER_CURSOR_HOME", self.home().join(".cursor"))
            .env("TETHER_CURSOR_AGENT", bin("tether-fake-agent"))
            .env("TETHER_TOKEN", "runs-test-token")
            .env("TETHER_USER", "pat");
        c
    }

    pub(crate) fn run(&self, args: &[&str]) -> Output {
        self.cmd().args(args).output().unwrap()
    }

    pub(crate) fn json(&self, args: &[&str]) -> Value {
        let out = self.run(&[args, &["--json"]].concat());
        serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{args:?}: {e}: {}", String::from_utf8_lossy(&out.stderr)))
    }

    /// `tether run PROMPT --workspace WS ARGS… --json` in the foreground: the ended run.
    pub(crate) fn run_here(&self, prompt: &str, extra: &[&str]) -> Value {
        let ws = self.ws.to_string_lossy().into_owned();
        self.json(&[&["run", prompt, "--workspace", &ws], extra].concat())
    }

    pub(crate) fn spawn(&self, args: &[&str]) -> Child {
        self.cmd().args(args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap()
    }

    fn user_file_intact(&self) {
        assert_eq!(std::fs::read(self.ws.join(".cursor/cli.json")).unwrap(), USER_CLI_JSON, "the person's cli.json");
        assert!(!self.ws.join(".cursor/rules").exists(), "the role rule (and its folder) are gone");
    }

    /// The fake's record of one run: argv, env, the cli.json and rules it saw.
    fn dump(&self, chat: &str) -> Value {
        let dir = self.home().join(".fake-agent/runs");
        let mut mine: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with(chat))
            .map(|e| e.path())
            .collect();
        mine.sort();
        let newest = mine.last().unwrap_or_else(|| panic!("no dump for {chat}"));
        serde_json::from_slice(&std::fs::read(newest).unwrap()).unwrap()
    }

    pub(crate) fn wait_for(&self, what: &str, secs: u64, f: impl FnMut() -> bool) {
        tether_testkit::wait_until(what, Duration::from_secs(secs), f);
    }

    /// The run's status, or "" while it does not exist yet.
    pub(crate) fn status(&self, id: &str) -> String {
        let out = self.run(&["runs", "show", id, "--json"]);
        serde_json::from_slice::<Value>(&out.stdout)
            .ok()
            .and_then(|v| v["status"].as_str().map(str::to_owned))
            .unwrap_or_default()
    }
}

#[test]
fn the_agent_gets_its_flags_files_and_only_allowed_environment() {
    let e = Env::new(json!({}));
    let out = e
        .cmd()
        .env("CURSOR_API_KEY", "key-for-the-agent")
        .env("SOME_SECRET", "must-not-leak")
        .args(["run", "Fix the parser", "--workspace", &e.ws.to_string_lossy(), "--json"])
        .args(["--allow", "Write(**)", "--allow", "Shell(cargo)", "--deny", "Shell(curl)", "--role", "backend"])
        .args(["--model", "gpt-5.3-codex"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["status"], "succeeded");
    let chat = r["chat_id"].as_str().unwrap();
    let d = e.dump(chat);
    let argv: Vec<&str> = d["argv"].as_array().unwrap().iter().map(|a| a.as_str().unwrap()).collect();
    for flag in ["-p", "--trust", "--force", "--workspace", "--model", "gpt-5.3-codex"] {
        assert!(argv.contains(&flag), "{flag} in {argv:?}");
    }
    assert!(argv.windows(2).any(|w| w == ["--output-format", "stream-json"]));
    assert!(!argv.contains(&"--continue") && !argv.iter().any(|a| a.contains("Fix the parser")), "prompt on stdin");
    assert_eq!(d["prompt"], "Fix the parser");
    let env: Vec<&String> = d["env"].as_object().unwrap().keys().collect();
    for k in &env {
        assert!(
            ["PATH", "HOME", "USER", "LANG", "TERM", "TMPDIR", "CURSOR_API_KEY"].contains(&k.as_str())
                || k.starts_with("LC_"),
            "{k} leaked into the agent's environment"
        );
    }
    assert_eq!(d["env"]["CURSOR_API_KEY"], "key-for-the-agent");
    let placed: Value = serde_json::from_str(d["cli_json"].as_str().unwrap()).unwrap();
    assert_eq!(placed["permissions"]["allow"], json!(["Write(**)", "Shell(cargo)"]));
    assert_eq!(placed["permissions"]["deny"], json!(["Shell(rm)", "Shell(curl)"]), "the person's deny list stays");
    assert!(d["rules"]["tether-role-backend.mdc"].as_str().unwrap().contains("backend engineer"));
    e.user_file_intact();

    // Read-only runs get no --force, and plan mode says so.
    let r = e.run_here("Plan it", &["--mode", "plan"]);
    let d = e.dump(r["chat_id"].as_str().unwrap());
    let argv: Vec<&str> = d["argv"].as_array().unwrap().iter().map(|a| a.as_str().unwrap()).collect();
    assert!(!argv.contains(&"--force") && argv.windows(2).any(|w| w == ["--mode", "plan"]), "{argv:?}");
    assert!(d["cli_json"].as_str().unwrap().contains("Read(**)"), "no permissions given: the person's file as it is");

    // The run's events are there, typed, and the chat is indexed as a CLI chat.
    let shown = e.json(&["runs", "show", r["id"].as_str().unwrap(), "--events"]);
    let kinds: Vec<&str> = shown["events"].as_array().unwrap().iter().map(|v| v["kind"].as_str().unwrap()).collect();
    for k in ["status", "init", "user", "thinking", "assistant", "tool_call", "result"] {
        assert!(kinds.contains(&k), "{k} in {kinds:?}");
    }
    assert!(e.run(&["index"]).status.success());
    let chats = e.json(&["sessions", "list"]);
    assert!(chats.as_array().unwrap().iter().any(|c| c["id"] == r["chat_id"] && c["source"] == "cli"), "{chats}");
}

#[test]
fn every_way_of_ending_gets_a_clear_status_and_the_files_come_back() {
    let e = Env::new(json!({}));
    let allow = ["--allow", "Write(**)", "--role", "reviewer"];
    let cases: &[(&str, &[&str], &str, &str)] = &[
        ("[fake:fail-result]", &[], "failed", "error"),
        ("[fake:fail=limit]", &[], "failed", "usage limit"),
        ("[fake:fail=force]", &[], "failed", "disabled --force"),
        ("[fake:fail=generic]", &[], "failed", "Error"),
        ("[fake:hang]", &["--timeout", "2s"], "timed_out", "time limit of 2 s"),
        ("[fake:hang][fake:ignore-sigterm]", &["--timeout", "2s"], "timed_out", "time limit"),
        ("[fake:hang-after-result]", &[], "succeeded", ""),
        ("[fake:garbage]", &[], "succeeded", ""),
        ("[fake:big=10]", &[], "succeeded", ""),
        ("[fake:slow-start=1500]", &[], "succeeded", ""),
    ];
    for (prompt, extra, status, says) in cases {
        let t0 = Instant::now();
        let r = e.run_here(prompt, &[&allow[..], extra].concat());
        assert_eq!(r["status"], *status, "{prompt}: {r}");
        let text = format!("{} {}", r["error"], r["warning"]);
        assert!(text.contains(says), "{prompt}: {text}");
        e.user_file_intact();
        assert!(t0.elapsed() < Duration::from_secs(20), "{prompt} took {:?}", t0.elapsed());
        if prompt.contains("hang-after-result") {
            assert!(r["warning"].as_str().unwrap().contains("did not exit"), "{r}");
        }
    }
    assert_eq!(processes_in(&e.ws), 0, "an agent outlived its run");
    let garbage = e.json(&["runs", "show", "R-8", "--events"]);
    let raw = garbage["events"].as_array().unwrap().iter().filter(|v| v["kind"] == "raw").count();
    assert!(raw >= 3, "banner, non-UTF-8 and cut-off lines are kept as raw events");
}

#[test]
fn cancel_and_a_killed_runner_leave_the_workspace_as_it_was() {
    let e = Env::new(json!({}));
    let ws = e.ws.to_string_lossy().into_owned();
    let mut child = e.spawn(&["run", "[fake:hang]", "--workspace", &ws, "--allow", "Write(**)", "--role", "planner"]);
    let started = Instant::now();
    while !(e.status("R-1") == "running" && e.ws.join(".cursor/rules").exists()) {
        if started.elapsed() > Duration::from_secs(15) {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "the first run did not start: {}\nstderr: {}\nruns: {}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr),
                String::from_utf8_lossy(&e.run(&["runs", "list", "--json"]).stdout)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = e.run(&["runs", "cancel", "R-1"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    e.wait_for("the cancel", 10, || e.status("R-1") == "cancelled");
    assert!(!child.wait().unwrap().success(), "the foreground run reports the cancel");
    e.user_file_intact();

    // The runner is killed outright: its agent lives on in its own process group, and the files
    // stay placed — until the next runner starts, stops that agent and puts them back.
    let mut child = e.spawn(&["run", "[fake:hang]", "--workspace", &ws, "--allow", "Write(**)", "--role", "planner"]);
    let started = Instant::now();
    // Running, and its agent has spoken (so it is there to be orphaned).
    while e.status("R-2") != "running" || !e.json(&["runs", "show", "R-2"])["chat_id"].is_string() {
        if started.elapsed() > Duration::from_secs(15) {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "the second run did not start: {}\nstderr: {}\nruns: {}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr),
                e.json(&["runs", "list"])
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert_ne!(std::fs::read(e.ws.join(".cursor/cli.json")).unwrap(), USER_CLI_JSON, "still the run's");
    let r = e.run_here("after the crash", &[]);
    assert_eq!(r["status"], "succeeded");
    assert_eq!(e.status("R-2"), "lost");
    assert!(e.json(&["runs", "show", "R-2"])["error"].as_str().unwrap().contains("Tether stopped"));
    e.user_file_intact();
    e.wait_for("the orphaned agent to go", 5, || processes_in(&e.ws) == 0);
}

#[test]
fn workspaces_outside_the_roots_are_refused_before_anything_starts() {
    let e = Env::new(json!({}));
    let outside = e.dir.path().join("elsewhere");
    std::fs::create_dir_all(&outside).unwrap();
    let escape = e.ws.join("escape");
    tether_testkit::fs::symlink(&outside, &escape).unwrap();
    for (dir, code) in [
        (outside.to_string_lossy().into_owned(), "forbidden"),
        (escape.to_string_lossy().into_owned(), "forbidden"),
        (e.ws.join("missing").to_string_lossy().into_owned(), "invalid_input"),
    ] {
        let out = e.run(&["run", "hi", "--workspace", &dir]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && err.starts_with(&format!("error[{code}]")), "{dir}: {err}");
    }
    let out = e.run(&["run", "hi", "--workspace", &e.ws.to_string_lossy(), "--allow", "Everything"]);
    assert!(String::from_utf8_lossy(&out.stderr).starts_with("error[invalid_input]"));
    assert_eq!(e.json(&["runs", "list"]), json!([]), "nothing was queued");
}

/// A daemon takes queued runs in order within the limits; a run bound to a task claims it and
/// moves it on its outcome; a follow-up continues the chat.
#[test]
fn the_daemon_queues_runs_past_the_limits_and_moves_tasks() {
    let e = Env::new(json!({"max_total": 2, "max_per_workspace": 1}));
    let other = e.dir.path().join("ws2");
    std::fs::create_dir_all(&other).unwrap();
    let other = other.canonicalize().unwrap();
    let data = e.dir.path().join("data/settings.json");
    let mut s: Value = serde_json::from_slice(&std::fs::read(&data).unwrap()).unwrap();
    s["runs"]["roots"] = json!([e.ws, other]);
    std::fs::write(&data, s.to_string()).unwrap();
    let mut daemon = e.spawn(&["serve", "--port", "0"]);
    e.wait_for("the daemon", 30, || e.dir.path().join("data/daemon.json").exists());

    let ws = e.ws.to_string_lossy().into_owned();
    let ws2 = other.to_string_lossy().into_owned();
    for (p, w) in [("[fake:sleep=300] one", &ws), ("[fake:sleep=300] two", &ws), ("[fake:sleep=300] three", &ws2)] {
        let r = e.json(&["run", p, "--workspace", w]);
        assert_eq!(r["status"], "queued", "{r}");
    }
    let mut max_running_ws1 = 0;
    e.wait_for("every run to end", 60, || {
        let list = e.json(&["runs", "list"]);
        let runs = list.as_array().unwrap();
        let in_ws1 = runs.iter().filter(|r| r["status"] == "running" && r["workspace"] == json!(ws)).count();
        max_running_ws1 = max_running_ws1.max(in_ws1);
        runs.iter().all(|r| r["status"] == "succeeded")
    });
    assert!(max_running_ws1 <= 1, "one run at a time in a workspace");
    let ended: Vec<String> =
        ["R-1", "R-2"].iter().map(|id| e.json(&["runs", "show", id])["started_at"].to_string()).collect();
    assert!(ended[0] < ended[1], "in order");

    // A task-bound run claims its task, notes its chat, and sends it to review with its result.
    let t = e.json(&["task", "add", "Fix the date parser", "--project", &ws]);
    let r = e.json(&["run", "--task", t["id"].as_str().unwrap(), "--follow"]);
    assert_eq!(r["status"], "succeeded", "{r}");
    let task = e.json(&["task", "show", t["id"].as_str().unwrap()]);
    assert_eq!(task["status"], "in_review");
    assert!(task["summary"].as_str().unwrap().contains("Fixed"), "{task}");
    let history = task["history"].as_array().unwrap();
    assert!(
        history.iter().any(|h| h["kind"] == "claimed" && h["actor"] == format!("run {}", r["id"].as_str().unwrap()))
    );
    assert!(
        task["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n["detail"]["text"].as_str().unwrap_or("").contains("Cursor chat"))
    );
    // A failing one gives it back with the error as a handoff note.
    let t2 = e.json(&["task", "add", "Break things", "--project", &ws]);
    let r2 = e.json(&["run", "[fake:fail=limit]", "--task", t2["id"].as_str().unwrap(), "--follow"]);
    assert_eq!(r2["status"], "failed");
    let task2 = e.json(&["task", "show", t2["id"].as_str().unwrap()]);
    assert_eq!(task2["status"], "todo");
    assert!(
        task2["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n["kind"] == "handoff" && n["detail"]["text"].as_str().unwrap().contains("usage limit"))
    );

    // A follow-up continues the same chat; an unknown chat is said plainly.
    let f = e.json(&["runs", "followup", r["id"].as_str().unwrap(), "now the docs", "--follow"]);
    assert_eq!((f["status"].as_str(), f["chat_id"].as_str()), (Some("succeeded"), r["chat_id"].as_str()));
    let d = e.dump(f["chat_id"].as_str().unwrap());
    assert!(d.to_string().contains("--resume"));
    std::fs::remove_dir_all(e.home().join(".fake-agent/chats").join(r["chat_id"].as_str().unwrap())).unwrap();
    let g = e.json(&["runs", "followup", f["id"].as_str().unwrap(), "and the tests", "--follow"]);
    assert!(g["warning"].as_str().unwrap().contains("started a fresh chat"), "{g}");

    nix_term(&mut daemon);
    e.user_file_intact();
}

/// A chat Tether ran, idle, with a question waiting: opted in, the daemon resumes it with the
/// question in the prompt (wake path `resume`), and its answer goes back as the reply.
#[test]
fn an_idle_chat_tether_ran_is_woken_by_a_follow_up_run_for_its_signals() {
    let e = Env::new(json!({}));
    let mut daemon = e.spawn(&["serve", "--port", "0"]);
    e.wait_for("the daemon", 30, || e.dir.path().join("data/daemon.json").exists());
    let ws = e.ws.to_string_lossy().into_owned();
    let first = e.json(&["run", "Set up the API", "--workspace", &ws, "--follow"]);
    assert_eq!(first["status"], "succeeded", "{first}");
    let chat = first["chat_id"].as_str().unwrap().to_owned();

    let agent = |name: &str| {
        e.json(&["agents", "list"]).as_array().unwrap().iter().find(|a| a["name"] == name).cloned().unwrap_or_default()
    };
    assert_eq!((agent("run R-1")["kind"].as_str(), agent("run R-1")["status"].as_str()), (Some("run"), Some("idle")));
    let out = e.run(&["agents", "wake", "pat", "on"]);
    assert!(!out.status.success(), "a person cannot be resumed");
    let on = e.json(&["agents", "wake", "run R-1", "on"]);
    assert_eq!((on["wake_by_resume"].as_bool(), on["surface"].as_str()), (Some(true), Some("resume")));

    let q = e.json(&["signal", "send", "--to", "run R-1", "Which port does the API listen on?"]);
    let q_id = q["id"].as_str().unwrap().to_owned();
    e.wait_for("the waking run to end", 30, || e.status("R-2") == "succeeded");
    let woke = e.json(&["runs", "show", "R-2"]);
    assert_eq!((woke["parent"].as_str(), woke["chat_id"].as_str()), (Some("R-1"), Some(chat.as_str())), "{woke}");
    assert_eq!(woke["signals"], json!([q_id]));
    assert!(woke["requested_by"].as_str().unwrap().contains("wake"), "{woke}");
    let argv = e.dump(&chat).to_string();
    assert!(argv.contains("--resume") && argv.contains("Which port does the API listen on?"), "{argv}");

    e.wait_for("the reply", 10, || e.json(&["signal", "show", &q_id])["answered_at"].is_string());
    let shown = e.json(&["signal", "show", &q_id]);
    assert!(shown["wakes"].as_array().unwrap().iter().any(|w| w["path"] == "resume"), "{shown}");
    assert_eq!(shown["deliveries"][0]["obligation"], "closed", "{shown}");
    let reply = shown["thread"].as_array().unwrap().iter().find(|s| s["reply_to"] == json!(q_id)).cloned().unwrap();
    assert_eq!((reply["from"].as_str(), reply["to"].as_str()), (Some("run R-1"), Some("human")));
    assert_eq!(reply["body"], woke["result"]);

    // Turned off, a new question just waits.
    e.json(&["agents", "wake", "run R-1", "off"]);
    e.json(&["signal", "send", "--to", "run R-1", "And the database?"]);
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(e.status("R-3"), "", "no run started");
    nix_term(&mut daemon);
    e.user_file_intact();
}

pub(crate) fn nix_term(child: &mut Child) {
    let _ = Command::new("kill").args(["-TERM", &child.id().to_string()]).status();
    let _ = child.wait();
}

/// Processes whose working directory is `ws` (the agents of this test's runs; other tests run
/// theirs elsewhere).
fn processes_in(ws: &Path) -> usize {
    std::fs::read_dir("/proc")
        .map(|d| {
            d.flatten()
                .filter(|e| e.file_name().to_string_lossy().chars().all(|c| c.is_ascii_digit()))
                .filter(|e| std::fs::read_link(e.path().join("cwd")).is_ok_and(|c| c == ws))
                .count()
        })
        .unwrap_or(0)
}

/// A repository cloned from anywhere shapes its own `.cursor/`: links there never lead a run's
/// files out of the workspace, and nothing outside is ever read into it.
#[test]
fn a_hostile_repositorys_links_never_lead_a_runs_files_out() {
    use tether_testkit::fs::symlink;
    let e = Env::new(json!({}));
    let ws = e.ws.to_string_lossy().into_owned();
    let outside = e.dir.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let secret = outside.join("id_ed25519");
    std::fs::write(&secret, b"-----BEGIN OPENSSH PRIVATE KEY-----\nsecret\n").unwrap();
    let victim = outside.join("victim");
    std::fs::write(&victim, b"keep me").unwrap();
    let cursor = e.ws.join(".cursor");
    let allow = ["--allow", "Write(**)", "--role", "backend"];
    let listing = |d: &Path| {
        let mut v: Vec<String> =
            std::fs::read_dir(d).unwrap().flatten().map(|e| e.file_name().to_string_lossy().into()).collect();
        v.sort();
        v
    };
    let before = listing(&outside);

    // `.cursor` is a link out: refused before the agent starts, nothing written through it.
    std::fs::rename(&cursor, e.dir.path().join("saved-cursor")).unwrap();
    symlink(&outside, &cursor).unwrap();
    let r = e.json(&[&["run", "hi", "--workspace", &ws][..], &allow[..]].concat());
    assert_eq!(r["status"], "failed", "{r}");
    assert!(r["error"].as_str().unwrap().contains(".cursor is a symbolic link"), "{r}");
    assert!(r["chat_id"].is_null(), "the agent never started");
    assert_eq!(listing(&outside), before, "nothing placed outside");
    std::fs::remove_file(&cursor).unwrap();
    std::fs::rename(e.dir.path().join("saved-cursor"), &cursor).unwrap();

    // `.cursor/rules` is a link out: the same.
    symlink(&outside, cursor.join("rules")).unwrap();
    let r = e.json(&[&["run", "hi", "--workspace", &ws][..], &allow[..]].concat());
    assert_eq!(r["status"], "failed", "{r}");
    assert!(r["error"].as_str().unwrap().contains("rules is a symbolic link"), "{r}");
    assert_eq!(listing(&outside), before);
    assert_eq!(std::fs::read(cursor.join("cli.json")).unwrap(), USER_CLI_JSON, "what was placed first came back");
    std::fs::remove_file(cursor.join("rules")).unwrap();

    // `cli.json` is a link to a private key, and the old temporary names are planted as links:
    // the run gets a file of its own, the key is never copied in, and the link comes back as it was.
    std::fs::rename(cursor.join("cli.json"), e.dir.path().join("saved-cli.json")).unwrap();
    symlink(&secret, cursor.join("cli.json")).unwrap();
    symlink(&victim, cursor.join("cli.tether-tmp")).unwrap();
    std::fs::create_dir_all(cursor.join("rules")).unwrap();
    symlink(&victim, cursor.join("rules/tether-role-backend.tether-tmp")).unwrap();
    let r = e.json(&[&["run", "hi", "--workspace", &ws][..], &allow[..]].concat());
    assert_eq!(r["status"], "succeeded", "{r}");
    let d = e.dump(r["chat_id"].as_str().unwrap());
    assert!(d["cli_json"].as_str().unwrap().contains("Write(**)"), "the agent saw the run's permissions: {d}");
    assert_eq!(std::fs::read_link(cursor.join("cli.json")).unwrap(), secret, "put back as the same link");
    assert_eq!(std::fs::read(&secret).unwrap(), b"-----BEGIN OPENSSH PRIVATE KEY-----\nsecret\n");
    assert_eq!(std::fs::read(&victim).unwrap(), b"keep me", "planted names are never written through");
    assert_eq!(listing(&outside), before);
    for entry in walk(&e.ws) {
        if entry.is_file() && !entry.is_symlink() {
            assert!(
                !std::fs::read(&entry).unwrap().windows(6).any(|w| w == b"secret"),
                "{} holds the key",
                entry.display()
            );
        }
    }
}

/// The workspace is checked again when the run starts: a folder replaced by a link after the run
/// was queued (here, while another run held the queue) does not lead the run out of the roots.
#[test]
fn a_workspace_replaced_by_a_link_after_queueing_is_refused_at_start() {
    let e = Env::new(json!({"max_total": 1}));
    let ws = e.ws.to_string_lossy().into_owned();
    let outside = e.dir.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let mut first = e.spawn(&["run", "[fake:hang]", "--workspace", &ws, "--timeout", "20s"]);
    e.wait_for("the first run", 15, || e.status("R-1") == "running");
    let second = e.spawn(&["run", "hi", "--workspace", &ws, "--allow", "Write(**)", "--json"]);
    e.wait_for("the second run to queue", 15, || e.status("R-2") == "queued");
    let moved = e.dir.path().join("moved-ws");
    std::fs::rename(&e.ws, &moved).unwrap();
    tether_testkit::fs::symlink(&outside, &e.ws).unwrap();
    assert!(e.run(&["runs", "cancel", "R-1"]).status.success());
    let _ = first.wait();
    let out = second.wait_with_output().unwrap();
    let r: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    assert_eq!(r["status"], "failed", "{r} {}", String::from_utf8_lossy(&out.stderr));
    let err = r["error"].as_str().unwrap();
    assert!(err.contains("outside the folders runs may use") || err.contains("now leads to"), "{err}");
    assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0, "nothing was placed outside");
    assert_eq!(std::fs::read(moved.join(".cursor/cli.json")).unwrap(), USER_CLI_JSON);
}

/// Two runs sharing a workspace, the later ending first: the last one out puts back exactly the
/// person's bytes, never the other run's permissions.
#[test]
fn overlapping_runs_in_one_workspace_leave_the_persons_own_file() {
    let e = Env::new(json!({"max_per_workspace": 2}));
    let ws = e.ws.to_string_lossy().into_owned();
    let mut first = e.spawn(&["run", "[fake:hang]", "--workspace", &ws, "--allow", "Write(**)", "--timeout", "30s"]);
    e.wait_for("the first run", 15, || e.status("R-1") == "running");
    let r = e.run_here("quick", &["--allow", "Shell(*)"]);
    assert_eq!(r["status"], "succeeded", "{r}");
    let now = std::fs::read_to_string(e.ws.join(".cursor/cli.json")).unwrap();
    assert!(now.contains("Write(**)") || now.contains("Shell(*)"), "the first run still holds a placement: {now}");
    assert!(e.run(&["runs", "cancel", "R-1"]).status.success());
    let _ = first.wait();
    e.wait_for("the first run to end", 10, || e.status("R-1") == "cancelled");
    e.user_file_intact();
}

/// A run printing tens of megabytes keeps every line up to the log's limit and says what it left
/// out past it, never dropping lines silently.
#[test]
fn big_outputs_are_kept_whole_or_say_what_was_left_out() {
    let e = Env::new(json!({"max_log_mb": 8}));
    let r = e.run_here("[fake:big=4]", &[]);
    assert_eq!(r["status"], "succeeded", "{r}");
    assert!(r.get("log_dropped").is_none(), "{r}");
    let events = e.json(&["runs", "show", r["id"].as_str().unwrap(), "--events"]);
    let text: usize = events["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|v| v["kind"] == "assistant")
        .map(|v| v["text"].as_str().unwrap().len())
        .sum();
    assert!(text >= 4 << 20, "every line of 4 MB is stored: {text} bytes");

    let r = e.run_here("[fake:big=20]", &[]);
    assert_eq!(r["status"], "succeeded", "{r}");
    let dropped = &r["log_dropped"];
    assert!(dropped["lines"].as_i64().unwrap() > 1000 && dropped["bytes"].as_i64().unwrap() > 10 << 20, "{r}");
    let shown = e.json(&["runs", "show", r["id"].as_str().unwrap(), "--events"]);
    let kinds: Vec<&str> = shown["events"].as_array().unwrap().iter().map(|v| v["kind"].as_str().unwrap()).collect();
    assert!(kinds.contains(&"result"), "the result is always kept");
    assert!(
        shown["events"].as_array().unwrap().iter().any(|v| v["status"] == "log_truncated"),
        "the log says where it stopped keeping"
    );
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let p = entry.path();
        if p.is_dir() && !p.is_symlink() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}
