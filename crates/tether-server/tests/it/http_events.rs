//! `GET /api/events`: `hello` on connect, then one event per write — whoever wrote it. A write
//! through the API announces itself once (the store watcher must not announce it again a moment
//! later); another process's write is announced once by the watcher; the settings saved, once.

use std::time::Duration;

use serde_json::json;
use tether_board::principal::Principal;
use tether_board::tasks::NewTask;
use tether_core::Tether;
use tether_testkit::daemon::{Sse, SseEvent, TestDaemon};

use crate::http_support::{indexed, ok};

/// Every event that arrives within `quiet` of the one before (the first within 8 s: the store
/// watcher also polls every 5 s, should a file event be missed).
async fn burst(ev: &mut Sse, quiet: Duration) -> Vec<SseEvent> {
    let mut got = Vec::new();
    let mut wait = Duration::from_secs(8);
    while let Some(e) = ev.next(wait).await {
        got.push(e);
        wait = quiet;
    }
    got
}

/// The names and data of events, for messages.
fn names(evs: &[SseEvent]) -> Vec<String> {
    evs.iter().map(|e| format!("{} {}", e.name, e.data)).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_write_is_one_event_whoever_makes_it() {
    let d = TestDaemon::start().await;
    indexed(&d).await;
    // Someone to signal: the CLI's person `pat`, on the board by a task (before subscribing).
    let pat = Principal::person("pat");
    tether_core::ops::tasks::create(d.tether(), &pat, &NewTask { title: "Pat's".into(), ..Default::default() })
        .unwrap();

    let mut ev = d.events("/api/events").await;
    let hello = ev.next(Duration::from_secs(5)).await.expect("hello");
    assert_eq!(hello.name, "hello");
    assert!(hello.data["version"].is_string(), "{:?}", hello.data);
    assert!(ev.next(Duration::from_millis(300)).await.is_none(), "quiet before the first write");

    // A task created: one `tasks` event, and nothing a moment (1.5 s) later.
    let task = ok(d.post("/api/tasks", json!({"title": "One event"})).await);
    let got = burst(&mut ev, Duration::from_millis(1500)).await;
    assert_eq!(got.len(), 1, "{:?}", names(&got));
    assert_eq!(got[0].name, "tasks");
    let rev = got[0].data["rev"].as_i64().expect("{rev}");

    // A change to it: one more, with a higher revision.
    ok(d.patch(&format!("/api/tasks/{}", task["id"].as_str().unwrap()), json!({"comment": "noted"})).await);
    let got = burst(&mut ev, Duration::from_millis(1500)).await;
    assert_eq!(got.len(), 1, "{:?}", names(&got));
    assert_eq!(got[0].name, "tasks");
    assert!(got[0].data["rev"].as_i64().unwrap() > rev, "{:?}", got[0].data);

    // A signal sent: one `signals` event for the send. The doorbell then records its attempt
    // to wake pat (no stream: `uncaptured`), a write of its own with its own event; no revision
    // is announced twice.
    let before = d.tether().board().signals().revision().unwrap();
    let sent = ok(d.post("/api/signals", json!({"to": "pat", "type": "status_update", "body": "done with T-1"})).await);
    let got = burst(&mut ev, Duration::from_millis(1500)).await;
    assert!(got.iter().all(|e| e.name == "signals"), "{:?}", names(&got));
    let revs: Vec<i64> = got.iter().map(|e| e.data["rev"].as_i64().expect("{rev}")).collect();
    let now = d.tether().board().signals().revision().unwrap();
    assert_eq!(revs, (before + 1..=now).collect::<Vec<_>>(), "one event per write: {:?}", names(&got));
    let detail = ok(d.get(&format!("/api/signals/{}", sent["id"].as_str().unwrap())).await);
    assert_eq!(revs.len(), 1 + detail["wakes"].as_array().unwrap().len(), "the send, and each wake recorded: {detail}");
    assert!(revs.len() <= 2, "{:?}", names(&got));

    // Another process's write (its own engine on the same data dir): the store watcher
    // announces it, once.
    let other = Tether::open(d.tether().paths.clone(), d.tether().cursor()).unwrap();
    tether_core::ops::tasks::create(&other, &pat, &NewTask { title: "From the CLI".into(), ..Default::default() })
        .unwrap();
    let got = burst(&mut ev, Duration::from_millis(1500)).await;
    assert_eq!(got.len(), 1, "{:?}", names(&got));
    assert_eq!(got[0].name, "tasks");

    // The settings saved: one `settings` event.
    ok(d.patch("/api/settings", json!({"notifications": false})).await);
    let got = burst(&mut ev, Duration::from_millis(1500)).await;
    assert_eq!(got.len(), 1, "{:?}", names(&got));
    assert_eq!((got[0].name.as_str(), &got[0].data), ("settings", &json!({})));
    drop(ev);
    d.stop().await;
}
