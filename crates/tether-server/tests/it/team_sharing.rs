//! Sharing a chat with the team: machine `a` previews one of its chats with the secrets in it
//! replaced, shares exactly what was shown (a stale preview is refused), and machine `b` finds
//! it by its words, reads it (the HTTP API and an agent's `sessions_find scope: team` and
//! `session_read SH-…`) marked with who shared it, with no secret in it; then takes it back.
//! Outside a team, sharing is refused.

use serde_json::json;
use tether_core::daemon::RunnerRole;
use tether_testkit::daemon::TestDaemon;
use tether_testkit::pg::Cluster;

use crate::http_support::{assert_error, ok, poll};
use crate::mcp_util::tool;

const CHAT: &str = "e9999999-0000-4000-8000-000000000001";
const TOKEN: &str = "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789";
const DB_PASSWORD: &str = "s3cr3tP4ss";

fn deploy_chat(fx: &tether_testkit::CursorFixture) {
    let ask = format!(
        "deploy the staging app: DATABASE_URL=postgres://admin:{DB_PASSWORD}@db.internal:5432/app, push with {TOKEN}"
    );
    fx.cli_store(
        "/home/u/app",
        CHAT,
        "Staging deploy",
        &[
            json!({"role": "user", "content": ask}),
            json!({"role": "assistant", "content": "Deployed the staging app."}),
        ],
        false,
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chat_shared_redacted_on_one_machine_is_found_and_read_on_another() {
    let url = Cluster::shared().database();
    let a = TestDaemon::start_in_team_on(&url, "a", RunnerRole::default(), deploy_chat).await;
    let b = TestDaemon::start_in_team(&url, "b", RunnerRole::default()).await;
    poll("the chat indexed", 30, || async {
        a.get(&format!("/api/sessions/{CHAT}")).await.0.is_success().then_some(())
    })
    .await;

    let preview = ok(a.get(&format!("/api/sessions/{CHAT}/share")).await);
    let text = preview["text"].as_str().unwrap();
    assert!(!text.contains(TOKEN) && !text.contains(DB_PASSWORD), "secrets replaced: {text}");
    assert!(text.contains("Deployed the staging app.") && text.contains("db.internal"), "the rest kept: {text}");
    let kinds = preview["redactions"].to_string();
    assert!(kinds.contains("github_token") && kinds.contains("connection_string_password"), "{kinds}");

    let stale = a.post(&format!("/api/sessions/{CHAT}/share"), json!({"digest": "not-what-was-shown"})).await;
    assert_error(&stale, 409, "conflict");
    let shared = ok(a.post(&format!("/api/sessions/{CHAT}/share"), json!({"digest": preview["digest"]})).await);
    let id = shared["id"].as_str().unwrap().to_owned();
    assert!(id.starts_with("SH-"), "{shared}");
    assert_eq!((&shared["machine"], &shared["redacted"]), (&json!("a"), &json!(2)), "{shared}");

    // Machine b finds it by its words and reads it, with who shared it.
    let found = ok(b.get("/api/shared?q=STAGING%20deploy").await);
    assert_eq!(found["shared"][0]["id"], id.as_str(), "{found}");
    assert!(ok(b.get("/api/shared?q=production").await)["shared"].as_array().unwrap().is_empty());
    let read = ok(b.get(&format!("/api/shared/{id}")).await);
    assert_eq!(read["body"], preview["text"], "what was shown is what was shared");
    let agent = b.mcp().await;
    tool(&agent, "session_start", json!({"name": "reader"})).await;
    let hits = tool(&agent, "sessions_find", json!({"scope": "team", "query": "staging"})).await;
    assert_eq!((&hits["scope"], &hits["shared"][0]["shared_by"]), (&json!("team"), &shared["shared_by"]), "{hits}");
    let window = tool(&agent, "session_read", json!({"session": id})).await;
    assert!(window["text"].as_str().unwrap().contains("Deployed the staging app."), "{window}");
    assert!(!window.to_string().contains(TOKEN), "{window}");

    assert!(ok(b.delete(&format!("/api/shared/{id}")).await)["unshared"] == id.as_str());
    assert_error(&b.get(&format!("/api/shared/{id}")).await, 404, "not_found");
    agent.cancel().await.unwrap();

    // A machine on its own board has no team to share with.
    let alone = TestDaemon::start_on(deploy_chat).await;
    poll("the chat indexed alone", 30, || async {
        alone.get(&format!("/api/sessions/{CHAT}")).await.0.is_success().then_some(())
    })
    .await;
    if !alone.tether().in_team() {
        assert_error(&alone.post(&format!("/api/sessions/{CHAT}/share"), json!({})).await, 400, "invalid_input");
    }
    a.stop().await;
    b.stop().await;
    alone.stop().await;
}
