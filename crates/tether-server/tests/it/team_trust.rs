//! Who may start what on a machine, across a team (two daemons on one throwaway PostgreSQL
//! cluster): a teammate's machine asks the laptop — not a runner — to run an agent that may write,
//! three ways (a run sent to it by name, a follow-up of a run that ran there, a signal that wakes a
//! chat that ran there). None starts: each waits, held for approval, in the laptop's Inbox only,
//! and only the laptop's person can let it go. The laptop's own runs start as always.

use serde_json::{Value, json};
use tether_core::daemon::RunnerRole;
use tether_testkit::daemon::TestDaemon;
use tether_testkit::pg::Cluster;

use crate::http_support::{assert_error, ok, poll, use_fake_agent};
use crate::team_runners::git;

async fn run(d: &TestDaemon, id: &str) -> Value {
    ok(d.get(&format!("/api/runs/{id}")).await)
}

/// The run `id` once it is held for approval; and that it never started.
async fn held(d: &TestDaemon, id: &str) -> Value {
    let r = poll(&format!("{id} held for approval"), 30, || async {
        let r = run(d, id).await;
        (r["held"] == "approval").then_some(r)
    })
    .await;
    assert_eq!(r["status"], "queued", "{r}");
    r
}

async fn asks_about(d: &TestDaemon, id: &str) -> bool {
    let status = ok(d.get("/api/status").await);
    status["attention"].as_array().unwrap().iter().any(|a| a["kind"] == "run_held" && a["subject"] == id)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_teammates_machine_cannot_start_write_runs_on_a_machine_that_is_not_its_runner() {
    let url = Cluster::shared().database();
    let laptop = TestDaemon::start_in_team(&url, "laptop", RunnerRole::default()).await;
    let desk = TestDaemon::start_in_team(&url, "desk", RunnerRole::default()).await;
    let ws = use_fake_agent(&laptop).await;
    let desk_ws = use_fake_agent(&desk).await;
    let remote = laptop.folder("remote.git");
    git(&remote, &["init", "--bare", "-q", "-b", "main"]);
    git(&ws, &["clone", "-q", remote.to_str().unwrap(), "app"]);
    let app = ws.join("app");
    std::fs::write(app.join("README.md"), "the app\n").unwrap();
    git(&app, &["add", "."]);
    git(&app, &["commit", "-q", "-m", "first"]);
    git(&app, &["push", "-q", "origin", "HEAD:main"]);
    git(&desk_ws, &["clone", "-q", remote.to_str().unwrap(), "app"]);
    let write = json!({"allow": ["Write(**)"]});

    // 1. Sent to the laptop by name from the desk: held there, asked there, approved there only.
    let asked = ok(desk
        .post(
            "/api/runs",
            json!({"prompt": "[fake:write=a.txt:a] add a", "workspace": desk_ws.join("app"), "on": "laptop", "permissions": write}),
        )
        .await);
    let id = asked["id"].as_str().unwrap().to_owned();
    assert_eq!(asked["origin"], "desk", "{asked}");
    let r = held(&laptop, &id).await;
    assert!(r.to_string().contains("not a runner"), "the log says why: {r}");
    assert!(asks_about(&laptop, &id).await, "the laptop's Inbox asks its person");
    assert!(!asks_about(&desk, &id).await, "the desk's person is not asked about the laptop");
    assert_error(&desk.post(&format!("/api/runs/{id}/approve"), json!({})).await, 403, "forbidden");
    ok(laptop.post(&format!("/api/runs/{id}/approve"), json!({})).await);
    // Approved, the laptop's runner takes it (in this one-process test both machines see the
    // desk's folder, which the laptop's roots do not include: it starts, then stops there).
    let done = poll("the approved run to start on the laptop", 60, || async {
        let r = run(&laptop, &id).await;
        (r["status"] != "queued").then_some(r)
    })
    .await;
    assert!(done["events"].as_array().unwrap().iter().any(|e| e["status"] == "running"), "{done}");
    assert_eq!(done["machine"], "laptop", "{done}");

    // The laptop's own run with the same permissions starts at once (and its chain can be woken).
    let own = ok(laptop
        .post("/api/runs", json!({"prompt": "[fake:write=b.txt:b] add b", "workspace": app, "permissions": write}))
        .await);
    let own_id = own["id"].as_str().unwrap().to_owned();
    poll("the laptop's own run to succeed", 60, || async {
        (run(&laptop, &own_id).await["status"] == "succeeded").then_some(())
    })
    .await;

    // 2. A follow-up of the laptop's run, asked from the desk: held on the laptop.
    let next = ok(desk.post(&format!("/api/runs/{own_id}/followup"), json!({"prompt": "and c"})).await);
    let next_id = next["id"].as_str().unwrap().to_owned();
    held(&laptop, &next_id).await;
    assert!(asks_about(&laptop, &next_id).await);
    ok(laptop.post(&format!("/api/runs/{next_id}/cancel"), json!({})).await);

    // 3. A signal from the desk wakes the laptop's idle chat (waking by resume is on there): the
    // wake is the desk's request, held on the laptop.
    let agent = format!("run {own_id}");
    ok(laptop.patch(&format!("/api/agents/{}", agent.replace(' ', "%20")), json!({"wake_by_resume": true})).await);
    let sent = ok(desk.post("/api/signals", json!({"to": agent, "body": "Please also add d."})).await);
    assert_eq!(sent["machine"], "desk", "a signal says which machine sent it: {sent}");
    let wake = poll("a held wake on the laptop", 30, || async {
        let q = ok(laptop.get("/api/runs?status=queued").await);
        q["runs"].as_array().unwrap().iter().find(|r| r["held"] == "approval").cloned()
    })
    .await;
    let wake_id = wake["id"].as_str().unwrap().to_owned();
    let wake = held(&laptop, &wake_id).await;
    assert!(wake.to_string().contains("on desk"), "{wake}");
    assert!(asks_about(&laptop, &wake_id).await);

    for d in [laptop, desk] {
        d.stop().await;
    }
}
