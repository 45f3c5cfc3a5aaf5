//! Runs over HTTP. Local runs against the test kit's fake Cursor CLI (`tether-fake-agent`,
//! behind a wrapper that gives it a temp HOME): the run form's options, a run checked before it
//! is queued (each refusal's `{code}`, nothing queued), one run followed live to its end on its
//! event stream (`events` batches, `status`, the end), read back a page at a time (`tail`,
//! `before`, `events_total`), listed with filters, followed up, queued behind a running one,
//! cancelled, and — its idle chat woken by a signal from outside this machine — held until the
//! person approves it. Cloud runs against the fake Cursor API: the cloud doctor, a run launched
//! there, and what it may do through the public URL with its scoped bearer (its task, signals,
//! skills) — and Cursor's signed webhook.

use std::path::PathBuf;
use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};
use tether_board::ids::RunId;
use tether_board::principal::Principal;
use tether_board::signals::NewSignal;
use tether_testkit::cursor_api::{FakeCursorApi, post_webhook};
use tether_testkit::daemon::{SseEvent, TestDaemon};

use crate::http_support::{assert_error, ok, poll, use_fake_agent};

/// A daemon whose runs use the fake Cursor CLI (its state under a temp HOME) in `ws`, the one
/// allowed root.
async fn with_fake_agent() -> (TestDaemon, PathBuf) {
    let d = TestDaemon::start().await;
    let ws = use_fake_agent(&d).await;
    (d, ws)
}

/// A run's status now.
async fn status(d: &TestDaemon, id: &str) -> String {
    ok(d.get(&format!("/api/runs/{id}?tail=0")).await)["status"].as_str().unwrap().to_owned()
}

async fn until_status(d: &TestDaemon, id: &str, want: &str) {
    poll(&format!("{id} {want}"), 30, || async { (status(d, id).await == want).then_some(()) }).await;
}

fn seqs(events: &Value) -> Vec<i64> {
    events.as_array().unwrap().iter().map(|e| e["seq"].as_i64().unwrap()).collect()
}

fn ids(v: &Value) -> Vec<String> {
    v["runs"].as_array().unwrap().iter().map(|r| r["id"].as_str().unwrap().to_owned()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_is_checked_before_it_is_queued() {
    let (d, ws) = with_fake_agent().await;

    let o = ok(d.get("/api/runs/options").await);
    assert!(
        o["roles"].as_array().unwrap().iter().any(|r| r["name"] == "backend" && r["description"].is_string()),
        "{o}"
    );
    assert_eq!(o["roots"], json!([ws]));
    let cli = &o["cursor_cli"];
    assert_eq!((&cli["found"], &cli["from"]), (&json!(true), &json!("settings")), "{o}");
    assert!(cli["version"].as_str().is_some_and(|v| v.contains("fake")), "{o}");
    assert_eq!((&o["defaults"]["max_per_workspace"], &o["cloud"]["key"]), (&json!(1), &json!(false)), "{o}");
    assert!(o["cloud"]["defaults"]["max_running"].is_u64(), "{o}");

    let outside = d.folder("elsewhere");
    let missing = d.dir.path().join("missing");
    let w = json!(ws);
    for (body, status, code) in [
        (json!({"workspace": w}), 400, "invalid_input"),
        (json!({"prompt": "  ", "workspace": w}), 400, "invalid_input"),
        (json!({"prompt": "hi"}), 400, "invalid_input"),
        (json!({"prompt": "hi", "workspace": outside}), 403, "forbidden"),
        (json!({"prompt": "hi", "workspace": missing}), 400, "invalid_input"),
        (json!({"prompt": "hi", "workspace": w, "role": "no such role"}), 400, "invalid_input"),
        (json!({"prompt": "hi", "workspace": w, "role": "astronaut"}), 400, "invalid_input"),
        (json!({"prompt": "hi", "workspace": w, "model": "-rf"}), 400, "invalid_input"),
        (json!({"prompt": "hi", "workspace": w, "timeout_secs": 0}), 400, "invalid_input"),
        (json!({"prompt": "hi", "workspace": w, "permissions": {"allow": ["Teleport(**)"]}}), 400, "invalid_input"),
        (json!({"prompt": "hi", "workspace": w, "where": "moon"}), 400, "invalid_input"),
        (json!({"prompt": "hi", "workspace": w, "repo": "https://github.com/o/r"}), 400, "invalid_input"),
        (json!({"prompt": "hi", "task": "T-9"}), 404, "not_found"),
        (json!({"prompt": "hi", "workspace": w, "mode": "fly"}), 422, "invalid_input"),
        (
            json!({"prompt": "hi", "where": "cloud", "repo": "https://github.com/o/r", "mode": "ask"}),
            400,
            "invalid_input",
        ),
        (json!({"prompt": "hi", "where": "cloud", "workspace": w}), 400, "invalid_input"),
        (json!({"prompt": "hi", "where": "cloud", "repo": "not a repo"}), 400, "invalid_input"),
        (
            json!({"prompt": "hi", "where": "cloud", "repo": "https://github.com/o/r",
                   "permissions": {"allow": ["Read(**)"]}}),
            400,
            "invalid_input",
        ),
    ] {
        let r = d.post("/api/runs", body.clone()).await;
        assert_eq!((r.0.as_u16(), r.1["code"].as_str()), (status, Some(code)), "{body}: {}", r.1);
    }
    assert_eq!(ok(d.get("/api/runs").await), json!({"runs": []}), "nothing was queued");
    assert_error(&d.get("/api/runs/R-9").await, 404, "not_found");
    assert_error(&d.get("/api/runs/run-one").await, 404, "not_found");
    assert_error(&d.get("/api/runs/R-9/events").await, 404, "not_found");
    for action in ["cancel", "approve"] {
        assert_error(&d.post(&format!("/api/runs/R-9/{action}"), json!({})).await, 404, "not_found");
    }
    assert_error(&d.post("/api/runs/R-9/followup", json!({"prompt": "more"})).await, 404, "not_found");
    assert_error(&d.get("/api/runs?status=bogus").await, 400, "invalid_input");
    d.stop().await;
}

/// Reads a run's event stream to its end: every stored event it carried, and its other events.
pub(crate) async fn follow(d: &TestDaemon, path: &str) -> (Vec<Value>, Vec<SseEvent>) {
    let mut s = d.events(path).await;
    let (mut events, mut other) = (Vec::new(), Vec::new());
    while let Some(e) = s.next(Duration::from_secs(30)).await {
        if e.name == "events" {
            let batch = e.data.as_array().expect("a batch is an array").clone();
            assert_eq!(
                e.id.as_deref(),
                batch.last().map(|l| l["seq"].to_string()).as_deref(),
                "its id is its last seq"
            );
            events.extend(batch);
        } else {
            other.push(e);
        }
    }
    assert!(s.ended, "the stream ends when the run does");
    (events, other)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_local_run_is_followed_paged_followed_up_queued_and_cancelled() {
    let (d, ws) = with_fake_agent().await;
    let me = tether_core::Tether::person();

    let run = ok(d
        .post(
            "/api/runs",
            json!({"prompt": "Say hello", "workspace": ws, "role": "backend", "permissions": {"allow": ["Write(**)"]}}),
        )
        .await);
    assert_eq!((&run["id"], &run["kind"], &run["requested_by"]), (&json!("R-1"), &json!("local"), &json!(me)), "{run}");
    assert_eq!(run["workspace"], json!(ws));
    assert!(["queued", "running"].contains(&run["status"].as_str().unwrap()), "{run}");

    // Its stream: every event once and in order, then its end.
    let (streamed, other) = follow(&d, "/api/runs/R-1/events").await;
    let last = other.last().expect("a status at the end");
    assert_eq!((last.name.as_str(), &last.data), ("status", &json!({"run": "R-1", "status": "succeeded"})));
    assert!(other.iter().all(|e| e.name == "status"), "{other:?}");
    let all: Vec<i64> = streamed.iter().map(|e| e["seq"].as_i64().unwrap()).collect();
    assert_eq!(all, (1..=all.len() as i64).collect::<Vec<_>>(), "each once, in order");

    // Read back: the whole log, a page of it, the page before.
    let detail = ok(d.get("/api/runs/R-1").await);
    assert_eq!(detail["status"], "succeeded", "{detail}");
    assert!(detail["chat_id"].is_string(), "{detail}");
    assert_eq!((&detail["children"], &detail["signals"]), (&json!([]), &json!([])));
    assert_eq!(detail["events_total"], all.len());
    assert_eq!(seqs(&detail["events"]), all, "the default page (500) holds them all");
    assert!(all.len() >= 6, "{all:?}");
    let tail = ok(d.get("/api/runs/R-1?tail=3").await);
    assert_eq!(seqs(&tail["events"]), all[all.len() - 3..]);
    assert_eq!(tail["events_total"], all.len());
    let before = tail["events"][0]["seq"].as_i64().unwrap();
    let page = ok(d.get(&format!("/api/runs/R-1?tail=2&before={before}")).await);
    assert_eq!(seqs(&page["events"]), [before - 2, before - 1]);
    assert_eq!(seqs(&ok(d.get("/api/runs/R-1?before=3").await)["events"]), [1, 2]);
    assert_error(&d.get("/api/runs/R-1?tail=some").await, 400, "invalid_input");
    // The stream of an ended run from a point: what came after it, then its status.
    let n = all.len() as i64;
    let (later, other) = follow(&d, &format!("/api/runs/R-1/events?after={}", n - 2)).await;
    assert_eq!(later.iter().map(|e| e["seq"].as_i64().unwrap()).collect::<Vec<_>>(), [n - 1, n]);
    assert_eq!(other.len(), 1);

    // Listed, with filters.
    let chat = detail["chat_id"].as_str().unwrap();
    assert_eq!(ids(&ok(d.get("/api/runs").await)), ["R-1"]);
    assert_eq!(ids(&ok(d.get("/api/runs?status=succeeded").await)), ["R-1"]);
    assert!(ids(&ok(d.get("/api/runs?status=queued,running").await)).is_empty());
    assert_eq!(ids(&ok(d.get(&format!("/api/runs?chat={chat}")).await)), ["R-1"]);
    assert!(ids(&ok(d.get("/api/runs?chat=another").await)).is_empty());

    // An ended run can be neither cancelled nor approved.
    assert_error(&d.post("/api/runs/R-1/cancel", json!({})).await, 409, "conflict");
    assert_error(&d.post("/api/runs/R-1/approve", json!({})).await, 409, "conflict");

    // Its chain is an agent the person may let be woken by resume.
    let agent = ok(d.patch("/api/agents/run%20R-1", json!({"wake_by_resume": true})).await);
    assert_eq!((&agent["kind"], &agent["wake_by_resume"]), (&json!("run"), &json!(true)), "{agent}");

    // A follow-up continues its chat (and holds the workspace); another run waits its turn.
    assert_error(&d.post("/api/runs/R-1/followup", json!({})).await, 422, "invalid_input");
    let next = ok(d.post("/api/runs/R-1/followup", json!({"prompt": "[fake:hang] keep going"})).await);
    assert_eq!(
        (&next["id"], &next["parent"], &next["resume_chat"]),
        (&json!("R-2"), &json!("R-1"), &json!(chat)),
        "{next}"
    );
    until_status(&d, "R-2", "running").await;
    assert_eq!(ok(d.get("/api/runs/R-1").await)["children"], json!(["R-2"]));
    let waiting = ok(d.post("/api/runs", json!({"prompt": "After that", "workspace": ws})).await);
    assert_eq!(waiting["id"], "R-3");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(status(&d, "R-3").await, "queued", "one run per workspace");
    assert_error(&d.post("/api/runs/R-3/approve", json!({})).await, 400, "invalid_input");
    let cancelled = ok(d.post("/api/runs/R-3/cancel", json!({})).await);
    assert_eq!(cancelled["status"], "cancelled", "a queued run ends at once");
    let asked = ok(d.post("/api/runs/R-2/cancel", json!({})).await);
    assert_eq!((&asked["status"], &asked["cancel_requested"]), (&json!("running"), &json!(true)), "{asked}");
    until_status(&d, "R-2", "cancelled").await;

    // A signal from outside this machine wakes the idle chat (waking by resume is on) with
    // write permissions: the run waits, held, for the person's approval.
    let outsider = Principal::run(RunId::new(9), None, true);
    let note = NewSignal { to: Some("run R-1".into()), body: "Please also add a test.".into(), ..Default::default() };
    let sent = tether_core::ops::signals::send(d.tether(), &outsider, &note).unwrap();
    let held = poll("a held wake", 30, || async {
        let queued = ok(d.get("/api/runs?status=queued").await);
        queued["runs"].as_array().unwrap().first().filter(|r| r["held"] == "approval").cloned()
    })
    .await;
    let id = held["id"].as_str().unwrap().to_owned();
    assert_eq!((&held["parent"], &held["resume_chat"]), (&json!("R-2"), &json!(chat)), "{held}");
    assert_eq!(ok(d.get(&format!("/api/runs/{id}")).await)["signals"], json!([sent.id]));
    let approved = ok(d.post(&format!("/api/runs/{id}/approve"), json!({})).await);
    assert!(approved.get("held").is_none() && approved["status"] != "cancelled", "{approved}");
    until_status(&d, &id, "succeeded").await;
    d.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cloud_run_is_checked_by_the_doctor_and_calls_back_with_its_own_bearer() {
    let api = FakeCursorApi::start("cursor-key-1").await;
    let d = TestDaemon::start().await;
    tether_core::token::set_cursor_key(&d.tether().paths, "cursor-key-1").unwrap();
    // The public URL is this daemon itself, as a tunnel would lead to it.
    ok(d.patch("/api/settings", json!({"cloud": {"api_url": api.url, "public_url": d.base}})).await);

    let checks = ok(d.get("/api/cloud/doctor").await)["checks"].as_array().cloned().unwrap();
    let check =
        |name: &str| checks.iter().find(|c| c["name"] == name).cloned().unwrap_or_else(|| panic!("{name}: {checks:?}"));
    for name in ["api_url", "key", "key_valid", "public_url"] {
        assert_eq!(check(name)["status"], "ok", "{checks:?}");
    }
    assert!(checks.iter().all(|c| c["detail"].is_string()));

    // A cloud run on a task: launched at Cursor (the fake), running until cancelled.
    let task = ok(d.post("/api/tasks", json!({"title": "Cloud work"})).await);
    let run = ok(d
        .post(
            "/api/runs",
            json!({"where": "cloud", "repo": "github.com/acme/app", "task": task["id"], "prompt": "[cloud:hang]"}),
        )
        .await);
    assert_eq!((&run["id"], &run["kind"], &run["task"]), (&json!("R-1"), &json!("cloud"), &task["id"]), "{run}");
    assert_eq!(run["cloud"]["repo"], "https://github.com/acme/app", "{run}");
    assert!(run["cloud"]["agent_id"].as_str().is_some_and(|a| a.starts_with("bc-")), "{run}");
    until_status(&d, "R-1", "running").await;

    // What the run got in its prompt: a one-time token, exchanged for a bearer.
    let boot = d.tether().board().cloud().grant_bootstrap(1).unwrap();
    let tunnel = |m: Method, path: &str| d.bare(m, path).header("Host", "tunnel.example.com");
    let ex =
        ok(TestDaemon::send(tunnel(Method::POST, "/api/agent-auth/exchange").json(&json!({"bootstrap_token": boot})))
            .await);
    assert_eq!((&ex["run"], &ex["task"]), (&json!("R-1"), &task["id"]), "{ex}");
    assert!(ex["expires_at"].is_string(), "{ex}");
    let bearer = ex["token"].as_str().unwrap().to_owned();
    let again =
        TestDaemon::send(tunnel(Method::POST, "/api/agent-auth/exchange").json(&json!({"bootstrap_token": boot})))
            .await;
    assert_error(&again, 401, "invalid_token");

    // With it: its task, a note on it, a signal to the person (remote), the skills.
    let as_run = |m: Method, path: &str| tunnel(m, path).bearer_auth(&bearer);
    let t = ok(TestDaemon::send(as_run(Method::GET, "/api/agent/task")).await);
    assert_eq!((&t["id"], &t["status"]), (&task["id"], &json!("in_progress")), "{t}");
    let t = ok(TestDaemon::send(as_run(Method::PATCH, "/api/agent/task").json(&json!({"comment": "halfway"}))).await);
    assert_eq!(t["id"], task["id"]);
    let notes = ok(d.get(&format!("/api/tasks/{}", task["id"].as_str().unwrap())).await)["notes"].clone();
    assert!(notes.as_array().unwrap().iter().any(|n| n["detail"]["text"] == "halfway"), "{notes}");
    let res = as_run(Method::POST, "/api/agent/signals")
        .json(&json!({"to": "human", "type": "question", "body": "Which database?"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 201);
    let s: Value = res.json().await.unwrap();
    assert_eq!((&s["from"], &s["to"], &s["remote"]), (&json!("run R-1"), &json!("human"), &json!(true)), "{s}");
    let skills = ok(TestDaemon::send(as_run(Method::GET, "/api/skills/index")).await)["skills"].clone();
    assert!(skills.as_array().unwrap().iter().any(|s| s["name"] == "tether"), "{skills}");
    let res = as_run(Method::GET, "/api/skills/tether").send().await.unwrap();
    assert_eq!(res.status(), 200);
    assert!(res.headers()["content-type"].to_str().unwrap().starts_with("text/markdown"));
    assert!(res.text().await.unwrap().contains("/api/agent/task"));
    assert_error(&TestDaemon::send(as_run(Method::GET, "/api/skills/no-such")).await, 404, "not_found");
    // The bad requests it may send.
    let bad =
        TestDaemon::send(as_run(Method::PATCH, "/api/agent/task").header("Content-Type", "application/json").body("{"))
            .await;
    assert_error(&bad, 400, "invalid_input");
    let bad =
        TestDaemon::send(as_run(Method::POST, "/api/agent/signals").json(&json!({"to": "nobody", "body": "hi"}))).await;
    assert_error(&bad, 404, "not_found");
    // The run's bearer opens nothing else: not the GUI's API, not MCP.
    assert_error(&TestDaemon::send(d.bare(Method::GET, "/api/tasks").bearer_auth(&bearer)).await, 401, "unauthorized");
    let mcp = d.bare(Method::POST, "/mcp").bearer_auth(&bearer).header("Content-Type", "application/json").body("{}");
    assert_eq!(mcp.send().await.unwrap().status(), 401);

    // Cursor's webhook: signed with this Tether's secret, each delivery applied once.
    let secret = tether_core::token::webhook_secret(&d.tether().paths).unwrap();
    // Cursor's id for the agent, as the launch recorded it.
    let launched = ok(d.get("/api/runs/R-1?tail=0").await);
    let agent = launched["cloud"]["agent_id"].as_str().unwrap();
    let body = json!({"event": "statusChange", "id": agent, "status": "RUNNING"}).to_string();
    let hook = format!("{}/webhooks/cursor", d.base);
    assert_eq!(post_webhook(&hook, &secret, "delivery-1", &body).await.unwrap(), 200);
    assert_eq!(post_webhook(&hook, &secret, "delivery-1", &body).await.unwrap(), 200, "a duplicate is answered");
    assert_eq!(post_webhook(&hook, "not-the-secret-not-the-secret-xx", "delivery-2", &body).await.unwrap(), 401);
    let signed = |delivery: &str, body: &str, event: &str| {
        tunnel(Method::POST, "/webhooks/cursor")
            .header("X-Webhook-Event", event)
            .header("X-Webhook-ID", delivery)
            .header("X-Webhook-Signature", tether_testkit::cursor_api::sign(&secret, body))
            .body(body.to_owned())
    };
    let r = TestDaemon::send(signed("delivery-3", &body, "somethingElse")).await;
    assert_error(&r, 400, "invalid_input");
    let r = TestDaemon::send(signed("delivery-4", "[]", "statusChange")).await;
    assert_error(&r, 400, "invalid_input");
    let r = TestDaemon::send(signed("delivery-5", &body, "statusChange")).await;
    assert_eq!(ok(r), json!({"ok": true, "run": "R-1"}));

    // Cancelled here, and at Cursor.
    ok(d.post("/api/runs/R-1/cancel", json!({})).await);
    until_status(&d, "R-1", "cancelled").await;
    d.stop().await;
}

/// A run on a git repository over HTTP: its diff, a comment quoting its lines, the worktrees
/// report, a squash merge; refusals keep their codes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_runs_changes_are_diffed_commented_and_merged_over_http() {
    let (d, ws) = with_fake_agent().await;
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git").arg("-C").arg(&ws).args(args).output().unwrap();
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    };
    git(&["init", "-q", "-b", "main"]);
    std::fs::write(ws.join("a.txt"), "a\n").unwrap();
    git(&["add", "-A"]);
    git(&["-c", "user.name=P", "-c", "user.email=p@example.com", "commit", "-q", "-m", "first"]);
    let body =
        json!({"prompt": "[fake:write=b.txt:bee] Add b", "workspace": ws, "permissions": {"allow": ["Write(**)"]}});
    let run = ok(d.post("/api/runs", body).await);
    let id = run["id"].as_str().unwrap();
    until_status(&d, id, "succeeded").await;

    let diff = ok(d.get(&format!("/api/runs/{id}/diff")).await);
    assert_eq!(diff["files"], json!([{"path": "b.txt", "old_path": null, "kind": "added", "added": 1, "deleted": 0}]));
    assert!(diff["patch"].as_str().unwrap().contains("+bee"), "{diff}");
    let c = ok(d
        .post(
            &format!("/api/runs/{id}/comments"),
            json!({"path": "b.txt", "start_line": 1, "end_line": 1, "body": "Bee?"}),
        )
        .await);
    assert_eq!(
        (c["quote"].as_str(), c["author"].as_str()),
        (Some("bee"), Some(tether_core::Tether::person().as_str()))
    );
    let bad = json!({"path": "a.txt", "start_line": 1, "end_line": 1, "body": "x"});
    assert_error(&d.post(&format!("/api/runs/{id}/comments"), bad).await, 400, "invalid_input");
    assert_eq!(ok(d.get("/api/worktrees").await)["count"], 1);

    let m = ok(d.post(&format!("/api/runs/{id}/merge"), json!({"strategy": "squash"})).await);
    assert_eq!(m["into"], "main");
    assert_eq!(git(&["show", "main:b.txt"]), "bee");
    assert_eq!(ok(d.get("/api/worktrees").await)["count"], 0);
    assert_error(&d.post(&format!("/api/runs/{id}/merge"), json!({})).await, 409, "conflict");
    assert_error(&d.get("/api/runs/R-99/diff").await, 404, "not_found");
}

/// A run allowed only to write files leaves a `.git` of its own in its worktree (pointing at a
/// config whose keys run a command, and hooks): ending the run, its diff and its merge run none of
/// it, and the run's log says what it did.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_that_may_only_write_files_cannot_make_tethers_git_run_a_command() {
    let (d, ws) = with_fake_agent().await;
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git").arg("-C").arg(&ws).args(args).output().unwrap();
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    };
    git(&["init", "-q", "-b", "main"]);
    std::fs::write(ws.join("a.txt"), "a\n").unwrap();
    git(&["add", "-A"]);
    git(&["-c", "user.name=P", "-c", "user.email=p@example.com", "commit", "-q", "-m", "first"]);
    let (marker, log) = (d.folder("trap").join("marker.sh"), d.folder("trap").join("ran.log"));
    std::fs::write(&marker, format!("#!/bin/sh\necho \"$1\" >> {}\ncat >/dev/null 2>&1\n", log.display())).unwrap();
    tether_testkit::fs::set_mode(&marker, 0o755).unwrap();
    let m = marker.display();
    let config = format!(
        "[core]\n\trepositoryformatversion = 0\n\tfsmonitor = \"{m} fsmonitor\"\n\thooksPath = hooks\n\tpager = \"{m} pager\"\n\
         [diff]\n\texternal = \"{m} diff\"\n[filter \"evil\"]\n\tclean = \"{m} clean\"\n\tsmudge = \"{m} smudge\"\n"
    );
    let hook = format!("#!/bin/sh\n{m} hook\n");
    let files = [
        (".git", "gitdir: evilgit".to_owned()),
        ("evilgit/HEAD", "ref: refs/heads/main".to_owned()),
        ("evilgit/objects/info/keep", String::new()),
        ("evilgit/refs/heads/keep", String::new()),
        ("evilgit/config", config),
        ("hooks/pre-commit", hook.clone()),
        ("hooks/post-commit", hook),
        (".gitattributes", "* filter=evil".to_owned()),
        ("a.txt", "the run's a".to_owned()),
    ];
    let directives: String =
        files.iter().map(|(p, t)| format!("[fake:writehex={p}:{}]", hex::encode(format!("{t}\n")))).collect();
    let body =
        json!({"prompt": format!("{directives} Edit a"), "workspace": ws, "permissions": {"allow": ["Write(**)"]}});
    let id = ok(d.post("/api/runs", body).await)["id"].as_str().unwrap().to_owned();
    until_status(&d, &id, "succeeded").await;

    let run = ok(d.get(&format!("/api/runs/{id}")).await);
    assert!(run.to_string().contains("replaced its worktree's .git"), "the run's log says so: {run}");
    let diff = ok(d.get(&format!("/api/runs/{id}/diff")).await);
    let paths: Vec<&str> = diff["files"].as_array().unwrap().iter().map(|f| f["path"].as_str().unwrap()).collect();
    assert!(paths.contains(&"a.txt") && !paths.iter().any(|p| *p == ".git" || p.starts_with(".git/")), "{paths:?}");
    ok(d.post(&format!("/api/runs/{id}/merge"), json!({"strategy": "squash"})).await);
    assert_eq!(git(&["show", "main:a.txt"]), "the run's a");
    assert!(
        !log.exists(),
        "Tether's git ran the run's commands: {}",
        std::fs::read_to_string(&log).unwrap_or_default()
    );
}

/// A run's branch as a pull request, against the fake of GitHub's REST API: pushed to `origin`
/// (its push URL a local bare repository), opened once and then answered, with GitHub's 401 and
/// 422 and a missing token as coded errors.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_runs_branch_becomes_a_pull_request_on_github() {
    use tether_testkit::github::FakeGitHub;
    let (d, ws) = with_fake_agent().await;
    let gh = FakeGitHub::start("ghp_right", &["acme/shop"]).await;
    ok(d.patch("/api/settings", json!({"github": {"api_url": gh.url}})).await);
    let bare = d.folder("origin.git");
    let git = |dir: &std::path::Path, args: &[&str]| {
        let out = std::process::Command::new("git").arg("-C").arg(dir).args(args).output().unwrap();
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    };
    git(&bare, &["init", "-q", "--bare"]);
    git(&ws, &["init", "-q", "-b", "main"]);
    std::fs::write(ws.join("a.txt"), "a\n").unwrap();
    git(&ws, &["add", "-A"]);
    git(&ws, &["-c", "user.name=P", "-c", "user.email=p@example.com", "commit", "-q", "-m", "first"]);
    git(&ws, &["remote", "add", "origin", "https://github.com/acme/shop.git"]);
    git(&ws, &["config", "remote.origin.pushurl", bare.to_str().unwrap()]);
    let body =
        json!({"prompt": "[fake:write=b.txt:bee] Add b", "workspace": ws, "permissions": {"allow": ["Write(**)"]}});
    let id = ok(d.post("/api/runs", body).await)["id"].as_str().unwrap().to_owned();
    until_status(&d, &id, "succeeded").await;
    let pr = format!("/api/runs/{id}/pr");

    assert_error(&d.post(&pr, json!({})).await, 400, "invalid_input");
    tether_core::token::set_github_token(&d.tether().paths, "ghp_wrong").unwrap();
    assert_error(&d.post(&pr, json!({})).await, 403, "forbidden");
    tether_core::token::set_github_token(&d.tether().paths, "ghp_right").unwrap();
    let first = ok(d.post(&pr, json!({})).await);
    assert_eq!((first["created"].as_bool(), first["number"].as_i64()), (Some(true), Some(1)), "{first}");
    assert_eq!(first["url"], "https://github.com/acme/shop/pull/1");
    assert_eq!(first["run"]["worktree"]["pr_url"], first["url"]);
    let branch = first["run"]["worktree"]["branch"].as_str().unwrap().to_owned();
    assert_eq!(git(&bare, &["show", &format!("{branch}:b.txt")]), "bee", "pushed");
    let pulls = gh.pulls();
    assert_eq!(
        (pulls[0].1.as_str(), pulls[0].2.as_str(), pulls[0].3.as_str()),
        (branch.as_str(), "main", "[fake:write=b.txt:bee] Add b")
    );
    assert!(pulls[0].4.contains(&format!("Tether-Run: {id}")) && pulls[0].4.contains("- `b.txt`"), "{}", pulls[0].4);
    let again = ok(d.post(&pr, json!({})).await);
    assert_eq!((again["created"].as_bool(), again["number"].as_i64()), (Some(false), Some(1)));
    assert_eq!(gh.pulls().len(), 1);
    // Merged on GitHub: the runner's next look removes the worktree and keeps the branch.
    let sync = || tokio::task::block_in_place(|| tether_core::ops::changes::sync_pulls(d.tether()).unwrap());
    assert!(sync().is_empty(), "still open");
    gh.merge(1);
    assert_eq!(sync(), std::slice::from_ref(&id));
    let w = &ok(d.get(&format!("/api/runs/{id}?tail=0")).await)["worktree"];
    assert_eq!((w["removed_why"].as_str(), w["merged_into"].as_str()), (Some("merged"), Some("main")), "{w}");
    assert!(!std::path::Path::new(w["path"].as_str().unwrap()).exists());
    // GitHub's validation (a pull request into its own branch) comes back coded, with its words.
    let id2 = ok(d
        .post(
            "/api/runs",
            json!({"prompt": "[fake:write=c.txt:c] Add c", "workspace": ws, "permissions": {"allow": ["Write(**)"]}}),
        )
        .await)["id"]
        .as_str()
        .unwrap()
        .to_owned();
    until_status(&d, &id2, "succeeded").await;
    let b2 = ok(d.get(&format!("/api/runs/{id2}?tail=0")).await)["worktree"]["branch"].as_str().unwrap().to_owned();
    // An origin holding a password is refused before anything is pushed, and the refusal does
    // not repeat it.
    git(&ws, &["remote", "set-url", "origin", "https://pat:hunter2pass@github.com/acme/shop.git"]);
    let r = d.post(&format!("/api/runs/{id2}/pr"), json!({})).await;
    assert_error(&r, 400, "invalid_input");
    let message = r.1["message"].as_str().unwrap();
    assert!(
        message.contains("carries credentials") && message.contains("https://***@github.com/acme/shop.git"),
        "{r:?}"
    );
    assert!(!r.1.to_string().contains("hunter2pass"), "{r:?}");
    assert!(git(&bare, &["branch", "--list", &b2]).is_empty(), "nothing pushed");
    git(&ws, &["remote", "set-url", "origin", "https://github.com/acme/shop.git"]);
    let r = d.post(&format!("/api/runs/{id2}/pr"), json!({"base": b2})).await;
    assert_error(&r, 400, "invalid_input");

    // The reaper: a worktree whose runs ended past the retention goes, its branch stays.
    let num = RunId::parse(&id2).unwrap().num();
    let eight_days_ago = tether_core::clock::now_ms() - 8 * 86_400_000;
    let ended = [tether_core::sql::Value::Int(num), tether_core::sql::Value::Int(eight_days_ago)];
    d.tether().board_db().append(|db| db.execute("UPDATE runs SET ended_at = ?2 WHERE num = ?1", &ended)).unwrap();
    let reaped = tether_core::ops::worktrees::reap(d.tether()).unwrap();
    assert_eq!(reaped.iter().map(|w| w.branch.as_str()).collect::<Vec<_>>(), [b2.as_str()]);
    let w = &ok(d.get(&format!("/api/runs/{id2}?tail=0")).await)["worktree"];
    assert_eq!(w["removed_why"], "reaped");
    assert!(!std::path::Path::new(w["path"].as_str().unwrap()).exists());
    assert_eq!(git(&ws, &["branch", "--list", &b2]), b2, "the branch is kept");
}
