//! `agent_run` over MCP and the run resource `tether://run/{id}`: requests that cannot run are
//! refused with a code and queue nothing; a real local run of the test kit's fake Cursor CLI
//! (`tether-fake-agent`, run through a wrapper that gives it a home in the temp dir) is queued
//! at once, pushed to its subscribers as it goes and read as Markdown; a task-bound run moves
//! its task to in_review; a follow-up continues the run's chat.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rmcp::RoleClient;
use rmcp::model::{ReadResourceRequestParams, SubscribeRequestParams};
use rmcp::service::Peer;
use serde_json::json;
use tether_testkit::daemon::TestDaemon;

use crate::mcp_util::{Bells, fails, next_bell, poll, streams_open, tool};

const USER_CLI_JSON: &str = "{\"version\":1,\"permissions\":{\"allow\":[],\"deny\":[]}}\n";

/// The test kit's fake Cursor CLI, built when missing (as tether-cli's tests do).
fn fake_agent() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary");
    let dir = exe.parent().and_then(Path::parent).expect("target dir");
    let bin = dir.join(format!("tether-fake-agent{}", std::env::consts::EXE_SUFFIX));
    if !bin.exists() {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let ok = std::process::Command::new(cargo)
            .args(["build", "-p", "tether-testkit", "--bin", "tether-fake-agent"])
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok && bin.exists(), "building tether-fake-agent");
    }
    bin
}

/// A daemon whose runs start the fake CLI (with `HOME` in the temp dir, where it keeps its
/// chats) in `ws`, the one allowed root, holding the person's own `.cursor/cli.json`.
async fn run_daemon() -> (TestDaemon, PathBuf) {
    let d = TestDaemon::start().await;
    let ws = d.folder("ws");
    std::fs::create_dir_all(ws.join(".cursor")).unwrap();
    std::fs::write(ws.join(".cursor/cli.json"), USER_CLI_JSON).unwrap();
    let ws = ws.canonicalize().unwrap();
    let home = d.folder("agent-home");
    let wrapper = d.dir.path().join("cursor-agent");
    let script = format!("#!/bin/sh\nHOME='{}' exec '{}' \"$@\"\n", home.display(), fake_agent().display());
    std::fs::write(&wrapper, script).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let patch: tether_core::settings::SettingsPatch = serde_json::from_value(json!({"runs": {
        "cursor_agent": wrapper, "roots": [ws], "result_grace_secs": 1, "kill_grace_secs": 1}}))
    .unwrap();
    d.tether().update_settings(&patch).unwrap();
    (d, ws)
}

async fn read(c: &Peer<RoleClient>, uri: &str) -> String {
    let r = c.read_resource(ReadResourceRequestParams::new(uri)).await.unwrap_or_else(|e| panic!("{uri}: {e}"));
    serde_json::to_value(&r).unwrap()["contents"][0]["text"].as_str().unwrap().to_owned()
}

fn runs(d: &TestDaemon) -> Vec<String> {
    let all = tether_core::ops::runs::list(d.tether(), &Default::default()).unwrap();
    all.into_iter().map(|r| r.id).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_that_cannot_run_are_refused_and_queue_nothing() {
    let (d, ws) = run_daemon().await;
    let c = d.mcp().await;
    let ws = ws.to_string_lossy().into_owned();
    let outside = d.folder("elsewhere").to_string_lossy().into_owned();
    let cases = [
        (json!({"prompt": "x", "workspace": outside}), "forbidden", "outside the folders runs may use"),
        (json!({"prompt": "x", "workspace": "/no/such/folder"}), "invalid_input", "give an existing project folder"),
        (json!({"prompt": "x"}), "invalid_input", "which project folder"),
        (json!({"workspace": ws}), "invalid_input", "give a prompt, a task, or both"),
        (json!({"prompt": "x", "workspace": ws, "where": "moon"}), "invalid_input", "use local or cloud"),
        (
            json!({"prompt": "x", "workspace": ws, "permissions": {"allow": ["All"]}}),
            "invalid_input",
            "Cursor's tokens",
        ),
        (json!({"prompt": "x", "workspace": ws, "role": "no-such-role"}), "invalid_input", "no role"),
        (json!({"prompt": "x", "workspace": ws, "repo": "github.com/a/b"}), "invalid_input", "for cloud runs"),
        (json!({"task": "T-99"}), "not_found", "T-99"),
        (json!({"followup_of": "R-99", "prompt": "x"}), "not_found", "R-99"),
        (json!({"where": "cloud", "prompt": "no repository and no folder"}), "invalid_input", "repository"),
        (json!({"where": "cloud", "repo": "not a repo", "prompt": "x"}), "invalid_input", "repo"),
        (
            json!({"where": "cloud", "repo": "github.com/a/b", "prompt": "x", "permissions": {"allow": ["Write(**)"]}}),
            "invalid_input",
            "sandbox",
        ),
        (
            json!({"where": "cloud", "repo": "github.com/a/b", "prompt": "x", "mode": "ask"}),
            "invalid_input",
            "agent or plan",
        ),
    ];
    for (args, code, words) in cases {
        let e = fails(&c, "agent_run", args.clone()).await;
        assert_eq!(e["code"], code, "{args}: {e}");
        assert!(e["message"].as_str().unwrap().contains(words), "{args}: {e}");
    }
    assert_eq!(runs(&d), Vec::<String>::new(), "nothing was queued");
    c.cancel().await.unwrap();
    d.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_local_run_of_the_fake_cli_end_to_end() {
    let (d, ws) = run_daemon().await;
    let (h, mut bells) = Bells::new();
    let c = d.mcp_with(h).await;
    tool(&c, "session_start", json!({"role": "lead", "name": "lena"})).await;

    // Queued at once, in the caller's name; the runner takes it.
    let run = tool(
        &c,
        "agent_run",
        json!({"prompt": "[fake:sleep=100] Fix the flaky test", "workspace": ws,
               "permissions": {"allow": ["Write(**)", "Shell(cargo)"]}, "role": "backend", "mode": "agent"}),
    )
    .await;
    assert_eq!((run["id"].as_str(), run["status"].as_str()), (Some("R-1"), Some("queued")), "{run}");
    assert_eq!((run["requested_by"].as_str(), run["role"].as_str()), (Some("lena"), Some("backend")));
    assert_eq!(run["permissions"], json!({"allow": ["Write(**)", "Shell(cargo)"], "deny": []}));
    assert!(run.get("note").is_none(), "a daemon runs it: {run}");

    // Its subscribers hear as it goes; the resource reads its status, chat and events.
    let uri = format!("{}R-1", tether_server::RUN_URI_PREFIX);
    #[allow(deprecated)]
    c.subscribe(SubscribeRequestParams::new(uri.clone())).await.unwrap();
    streams_open(&d, 1).await;
    assert_eq!(next_bell(&mut bells, 20).await, uri);
    let md = poll("R-1 to succeed", Duration::from_secs(30), || async {
        let md = read(&c, &uri).await;
        let first = md.lines().next().unwrap_or_default().to_owned();
        assert!(!first.contains("failed"), "{md}");
        first.contains("succeeded").then_some(md)
    })
    .await;
    assert!(md.starts_with("# R-1 — succeeded"), "{md}");
    assert!(md.contains(&format!("- workspace: {}", ws.display())) && md.contains("- Cursor chat: "), "{md}");
    assert!(md.contains("## Result") && md.contains("## Last events") && md.contains("cargo test"), "{md}");

    // Bound to a task: the run's prompt is the task; it moves the task to in_review.
    let task = tool(&c, "task_create", json!({"title": "Write the docs", "project": ws})).await;
    let bound = tool(&c, "agent_run", json!({"task": task["id"]})).await;
    assert_eq!(bound["task"], task["id"]);
    assert!(bound["prompt"].as_str().unwrap().contains("Write the docs"), "{bound}");
    let moved = poll("the task to reach in_review", Duration::from_secs(30), || async {
        let t = tool(&c, "task_list", json!({"id": task["id"]})).await;
        (t["status"] == "in_review").then_some(t)
    })
    .await;
    assert!(moved["summary"].as_str().is_some_and(|s| !s.is_empty()), "{moved}");

    // A follow-up continues R-1's chat.
    let follow = tool(&c, "agent_run", json!({"followup_of": "R-1", "prompt": "and the changelog"})).await;
    assert_eq!((follow["parent"].as_str(), follow["prompt"].as_str()), (Some("R-1"), Some("and the changelog")));
    assert!(follow["resume_chat"].as_str().is_some_and(|c| !c.is_empty()), "{follow}");
    let ended = poll("every run to end", Duration::from_secs(30), || async {
        let all = tether_core::ops::runs::list(d.tether(), &Default::default()).unwrap();
        let done = all.iter().all(|r| !matches!(r.status.as_str(), "queued" | "running"));
        done.then_some(all)
    })
    .await;
    let statuses: Vec<(&str, &str)> = ended.iter().map(|r| (r.id.as_str(), r.status.as_str())).collect();
    assert_eq!(statuses.len(), 3, "{statuses:?}");
    assert!(statuses.iter().all(|(_, s)| *s == "succeeded"), "{statuses:?}");
    // The person's cli.json is back byte for byte.
    assert_eq!(std::fs::read_to_string(ws.join(".cursor/cli.json")).unwrap(), USER_CLI_JSON);
    // The folder is no git repository: the runs worked in place, and their diff says so.
    let e = fails(&c, "run_diff", json!({"run": "R-1"})).await;
    assert_eq!(e["code"], "not_found", "{e}");
    assert!(e["message"].as_str().unwrap().contains("worked in place (not a git repository)"), "{e}");

    c.cancel().await.unwrap();
    d.stop().await;
}
