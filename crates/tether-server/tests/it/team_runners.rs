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

/// git in `dir` as a person with a name would run it (the team tests' repositories).
pub(crate) fn git(dir: &Path, args: &[&str]) {
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

/// Three runners, one of them with the `gpu` label, and a tablet that is not a runner: a run
/// queued for `gpu` (by the tablet, or by a runner without the label) starts on the `gpu` runner
/// within a second, round after round. Runners without the label never lock it (they used to,
/// for a moment, so the one with the label passed over it and slept 30 s), and the queueing
/// machine's head start is moot when it could not take the run itself.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_labelled_run_starts_at_once_on_the_one_runner_with_its_label() {
    let url = Cluster::shared().database();
    let linux = || RunnerRole { takes_others: true, labels: vec!["linux".into()] };
    let a = TestDaemon::start_in_team(&url, "runner-a", linux()).await;
    let b = TestDaemon::start_in_team(&url, "runner-b", linux()).await;
    let gpu_role = RunnerRole { takes_others: true, labels: vec!["gpu".into(), "linux".into()] };
    let gpu = TestDaemon::start_in_team(&url, "runner-gpu", gpu_role).await;
    let tablet = TestDaemon::start_in_team(&url, "tablet", RunnerRole::default()).await;
    for d in [&b, &gpu] {
        use_fake_agent(d).await;
    }
    let (a_ws, tablet_ws) = (use_fake_agent(&a).await, use_fake_agent(&tablet).await);

    // The team's repository; the tablet and runner A each have a checkout, the others clone it.
    let remote = tablet.folder("remote.git");
    git(&remote, &["init", "--bare", "-q", "-b", "main"]);
    git(&tablet_ws, &["clone", "-q", remote.to_str().unwrap(), "app"]);
    let tablet_app = tablet_ws.join("app");
    std::fs::write(tablet_app.join("README.md"), "the app\n").unwrap();
    git(&tablet_app, &["add", "."]);
    git(&tablet_app, &["commit", "-q", "-m", "first"]);
    git(&tablet_app, &["push", "-q", "origin", "HEAD:main"]);
    git(&a_ws, &["clone", "-q", remote.to_str().unwrap(), "app"]);
    let a_app = a_ws.join("app");

    for round in 0..6 {
        let (from, app) = if round % 2 == 0 { (&tablet, &tablet_app) } else { (&a, &a_app) };
        let asked = Instant::now();
        let run = ok(from
            .post(
                "/api/runs",
                json!({"prompt": format!("[fake:events=2] round {round}"), "workspace": app, "labels": ["gpu"]}),
            )
            .await);
        let id = run["id"].as_str().unwrap().to_owned();
        let took = poll("a runner to take it", 90, || async {
            let r = ok(gpu.get(&format!("/api/runs/{id}?tail=0")).await);
            (r["status"] != "queued").then_some(r)
        })
        .await;
        let waited = asked.elapsed();
        assert_eq!(took["machine"], "runner-gpu", "round {round}: {took}");
        assert!(waited < Duration::from_secs(1), "round {round}: the gpu runner took {id} after {waited:?}");
        poll("the run to end", 60, || async { (status(&gpu, &id).await == "succeeded").then_some(()) }).await;
    }

    for d in [a, b, gpu, tablet] {
        d.stop().await;
    }
}
