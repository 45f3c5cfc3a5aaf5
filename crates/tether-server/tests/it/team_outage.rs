//! Two machines on a team database they can lose (a throwaway cluster of this test's own): a
//! question asked by an agent on one machine rings an agent on the other, whose answer rings
//! the asker back; then PostgreSQL stops mid-way. Meanwhile each machine says the team database
//! is unreachable, refuses board writes with a coded error, and keeps its own chat history
//! working; when PostgreSQL is back, every acknowledged write is there and both daemons carry on
//! by themselves (pools reconnect, the listener hears again).

use serde_json::json;
use tether_core::daemon::RunnerRole;
use tether_server::INBOX_URI;
use tether_testkit::daemon::TestDaemon;
use tether_testkit::pg::Cluster;

use crate::http_support::{assert_error, ok, poll};
use crate::mcp_util::{Bells, next_bell, streams_open, tool};

async fn reachable(d: &TestDaemon) -> bool {
    ok(d.get("/api/team").await)["reachable"] == true
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn machines_ring_each_other_and_ride_out_the_team_database_restarting() {
    let cluster = Cluster::start();
    let url = cluster.database();
    let a = TestDaemon::start_in_team_on(&url, "a", RunnerRole::default(), tether_testkit::eras::cli).await;
    let b = TestDaemon::start_in_team(&url, "b", RunnerRole::default()).await;

    // An agent on each machine; ana (on a) asks bo (on b), bo's answer rings ana.
    let (ha, mut bell_a) = Bells::new();
    let (hb, mut bell_b) = Bells::new();
    let ana = a.mcp_with(ha).await;
    tool(&ana, "session_start", json!({"name": "ana"})).await;
    streams_open(&a, 1).await;
    let bo = b.mcp_with(hb).await;
    tool(&bo, "session_start", json!({"name": "bo"})).await;
    streams_open(&b, 1).await;
    while bell_a.try_recv().is_ok() {}
    let q = tool(&ana, "signal_send", json!({"to": "bo", "type": "question", "body": "Is the schema frozen?"})).await;
    assert_eq!(next_bell(&mut bell_b, 10).await, INBOX_URI);
    let pending = tool(&bo, "signals_pending", json!({})).await;
    assert!(pending.to_string().contains("Is the schema frozen?"), "{pending}");
    tool(&bo, "signal_send", json!({"reply_to": q["id"], "body": "Yes, since Monday."})).await;
    assert_eq!(next_bell(&mut bell_a, 10).await, INBOX_URI);
    let answer = tool(&ana, "signals_pending", json!({})).await;
    assert!(answer.to_string().contains("Yes, since Monday."), "{answer}");

    // Writes acknowledged before the database goes.
    let mut acked = Vec::new();
    for i in 0..10 {
        let t = ok(a.post("/api/tasks", json!({"title": format!("before the outage {i}")})).await);
        acked.push(t["id"].as_str().unwrap().to_owned());
    }
    poll("the chat history indexed", 30, || async {
        let list = ok(a.get("/api/sessions").await);
        list.to_string().contains("Lynx bug hunt").then_some(())
    })
    .await;
    let history = ok(a.get("/api/sessions").await);
    let found = ok(a.get("/api/search?q=lynx").await);
    assert!(found.to_string().contains("Lynx bug hunt"), "{found}");

    cluster.stop();
    assert!(!reachable(&a).await, "a says the team database is unreachable");
    let team = ok(b.get("/api/team").await);
    assert!(team["error"].as_str().is_some_and(|e| !e.is_empty()), "and why: {team}");
    assert_error(&a.post("/api/tasks", json!({"title": "during"})).await, 503, "busy");
    assert_eq!(ok(a.get("/api/sessions").await), history, "the local history keeps working");
    assert_eq!(ok(a.get("/api/search?q=lynx").await), found, "and its search");

    cluster.restart();
    poll("both machines reaching the database again", 30, || async {
        (reachable(&a).await && reachable(&b).await).then_some(())
    })
    .await;
    let seen = ok(b.get("/api/tasks").await).to_string();
    for id in &acked {
        assert!(seen.contains(&format!("\"{id}\"")), "{id} acknowledged before the outage is there: {seen}");
    }
    ok(a.post("/api/tasks", json!({"title": "after the outage"})).await);
    // The listener is back too: bo's signal rings ana well inside the 30 s poll.
    tool(&bo, "signal_send", json!({"to": "ana", "body": "back online"})).await;
    assert_eq!(next_bell(&mut bell_a, 15).await, INBOX_URI);

    ana.cancel().await.unwrap();
    bo.cancel().await.unwrap();
    a.stop().await;
    b.stop().await;
}
