//! A team's run queue across machines: three daemons on one team database (PostgreSQL in a
//! throwaway cluster) — a laptop, a workstation that is a runner with labels, a tablet. A run the
//! laptop queues for a `gpu` runner runs on the workstation, in its own clone of the repository
//! (found by the checkout's remote), and its events reach the laptop's stream live; a run the
//! laptop sends to the workstation by name stops when the tablet cancels it. What cannot go
//! elsewhere is refused before anything is queued.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;
use tether_core::daemon::RunnerRole;
use tether_testkit::daemon::TestDaemon;
use tether_testkit::pg::Cluster;

use crate::http_runs::follow;
use crate::http_support::{assert_error, ok, poll, use_fake_agent};

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=Pat", "-c", "user.email=pat@example.com"])
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

async fn status(d: &TestDaemon, id: &str) -> String {
    ok(d.get(&format!("/api/runs/{id}?tail=0")).await)["status"].as_str().unwrap_or_default().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_queued_on_one_machine_runs_on_a_team_runner_and_stops_when_a_third_cancels_it() {
    let url = Cluster::shared().database();
    let laptop = TestDaemon::start_in_team(&url, "laptop", RunnerRole::default()).await;
    let gpu = RunnerRole { takes_others: true, labels: vec!["gpu".into(), "linux".into()] };
    let station = TestDaemon::start_in_team(&url, "workstation", gpu).await;
    let tablet = TestDaemon::start_in_team(&url, "tablet", RunnerRole::default()).await;
    let ws = use_fake_agent(&laptop).await;
    use_fake_agent(&station).await;

    // The team's repository, and the laptop's checkout of it (the workstation has none).
    let remote = laptop.folder("remote.git");
    git(&remote, &["init", "--bare", "-q", "-b", "main"]);
    git(&ws, &["clone", "-q", remote.to_str().unwrap(), "app"]);
    let app = ws.join("app");
    std::fs::write(app.join("README.md"), "the app\n").unwrap();
    git(&app, &["add", "."]);
    git(&app, &["commit", "-q", "-m", "first"]);
    git(&app, &["push", "-q", "origin", "HEAD:main"]);

    // Refused before anything is queued: a machine the team has not seen, a folder no other
    // machine could find, and labels outside a team are the CLI's test.
    let nowhere = laptop.post("/api/runs", json!({"prompt": "x", "workspace": app, "on": "nowhere"})).await;
    assert_error(&nowhere, 400, "invalid_input");
    let lone = laptop.folder("ws/scratch");
    let unfindable = laptop.post("/api/runs", json!({"prompt": "x", "workspace": lone, "on": "workstation"})).await;
    assert_error(&unfindable, 400, "invalid_input");
    assert!(unfindable.1["message"].as_str().unwrap().contains("no origin remote"), "{}", unfindable.1);

    // For a `gpu` runner: the workstation takes it, clones the repository and runs it there,
    // and the laptop's stream carries it live to its end.
    let run = ok(laptop
        .post(
            "/api/runs",
            json!({"prompt": "[fake:events=20][fake:sleep=20] tidy up", "workspace": app, "labels": ["gpu"]}),
        )
        .await);
    let id = run["id"].as_str().unwrap().to_owned();
    assert_eq!((&run["origin"], &run["labels"]), (&json!("laptop"), &json!(["gpu"])), "{run}");
    let (events, other) = follow(&laptop, &format!("/api/runs/{id}/events")).await;
    let statuses: Vec<&str> = other.iter().filter_map(|e| e.data["status"].as_str()).collect();
    assert_eq!(statuses.last(), Some(&"succeeded"), "{other:?}");
    let deltas = events.iter().filter(|e| e["text"].as_str().is_some_and(|t| t.starts_with('#'))).count();
    assert!(deltas >= 20, "the laptop saw the workstation's output: {deltas} of 20 in {events:?}");
    let done = ok(laptop.get(&format!("/api/runs/{id}?tail=0")).await);
    assert_eq!(done["machine"], "workstation", "{done}");
    let station_data = station.tether().paths.data_dir.canonicalize().unwrap();
    let worked_in = done["worktree"]["path"].as_str().unwrap();
    assert!(Path::new(worked_in).starts_with(&station_data), "in the workstation's own worktree: {worked_in}");
    assert!(
        station_data.join("repos").read_dir().unwrap().next().is_some(),
        "the workstation cloned the repository it had no checkout of"
    );

    // By name, and cancelled from the tablet: the workstation stops it.
    let run = ok(laptop
        .post("/api/runs", json!({"prompt": "[fake:hang] wait", "workspace": app, "on": "workstation"}))
        .await);
    let id = run["id"].as_str().unwrap().to_owned();
    poll("the workstation to start it", 60, || async { (status(&tablet, &id).await == "running").then_some(()) }).await;
    let asked = Instant::now();
    ok(tablet.post(&format!("/api/runs/{id}/cancel"), json!({})).await);
    poll("every machine to see it cancelled", 20, || async {
        let all = [status(&laptop, &id).await, status(&station, &id).await, status(&tablet, &id).await];
        all.iter().all(|s| s == "cancelled").then_some(())
    })
    .await;
    eprintln!("cancel on the tablet → cancelled everywhere in {:?}", asked.elapsed());
    assert!(asked.elapsed() < Duration::from_secs(10));

    for d in [laptop, station, tablet] {
        d.stop().await;
    }
}
