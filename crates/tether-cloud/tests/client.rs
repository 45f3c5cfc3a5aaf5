//! The client against the fake of Cursor's API: retries and their waits (recorded, not slept),
//! the error shapes, the repositories limit, and a key that never shows in an error.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tether_cloud::client::{Launch, Pace};
use tether_cloud::{Client, Kind};
use tether_testkit::cursor_api::{FakeCursorApi, Fault};

const KEY: &str = "key_client_test_abcdef0123456789";

fn recording() -> (Pace, Arc<Mutex<Vec<Duration>>>) {
    let waits = Arc::new(Mutex::new(Vec::new()));
    let w = Arc::clone(&waits);
    let pace = Pace {
        sleep: Arc::new(move |d| {
            w.lock().unwrap().push(d);
            Box::pin(async {})
        }),
        ..Pace::default()
    };
    (pace, waits)
}

fn fault(path: &str, status: u16, times: u32) -> Fault {
    Fault { method: None, path: path.into(), status, body: None, retry_after: None, times }
}

#[tokio::test]
async fn rate_limits_and_server_errors_are_retried_with_the_waits_cursor_asks_for() {
    let fake = FakeCursorApi::start(KEY).await;
    let (pace, waits) = recording();
    let c = Client::new(&fake.url, KEY).unwrap().with_pace(pace);

    fake.fault(Fault { retry_after: Some(95), ..fault("/v1/me", 429, 1) });
    assert_eq!(c.me().await.unwrap().user_email.as_deref(), Some("dev@example.com"));
    assert_eq!(*waits.lock().unwrap(), vec![Duration::from_secs(95)], "Retry-After honoured, minutes not slept");

    waits.lock().unwrap().clear();
    fake.fault(fault("/v1/models", 503, 2));
    assert_eq!(c.models().await.unwrap().len(), 2);
    let w = waits.lock().unwrap().clone();
    assert_eq!(w.len(), 2);
    assert!(w[0] >= Duration::from_millis(375) && w[0] <= Duration::from_millis(625), "backoff with jitter: {w:?}");
    assert!(w[1] >= Duration::from_millis(750) && w[1] <= Duration::from_millis(1250), "doubled: {w:?}");

    fake.fault(fault("/v1/me", 500, 50));
    let e = c.me().await.unwrap_err();
    assert_eq!((e.kind, e.status), (Kind::Server, Some(500)));
    let tries = fake.requests().iter().filter(|s| s.path == "/v1/me").count();
    assert_eq!(tries, 2 + 5, "the 429 and its retry earlier, then the first try and four retries: bounded");
    assert!(e.to_string().contains("GET /v1/me") && e.to_string().contains("req-fake-fault"), "{e}");
}

#[tokio::test]
async fn cursors_errors_are_typed_and_never_carry_the_key() {
    let fake = FakeCursorApi::start(KEY).await;
    let (pace, _) = recording();
    let wrong = "key_wrong_9999999999999999999";
    let e = Client::new(&fake.url, wrong).unwrap().with_pace(pace.clone()).me().await.unwrap_err();
    assert_eq!((e.kind, e.code.as_deref()), (Kind::Auth, Some("unauthorized")));
    assert!(!format!("{e} {e:?}").contains(wrong), "the key is not in the error: {e:?}");

    let c = Client::new(&fake.url, KEY).unwrap().with_pace(pace);
    fake.fault(Fault { body: Some("{\"items\": [oops".into()), ..fault("/v1/models", 200, 1) });
    assert_eq!(c.models().await.unwrap_err().kind, Kind::Malformed);

    let l = Launch {
        agent_id: tether_board::cloud::mint_agent_id(),
        prompt: "[cloud:hang] busy".into(),
        repo: "https://github.com/acme/shop".into(),
        ..Default::default()
    };
    let (agent, run) = c.launch(&l).await.unwrap();
    assert_eq!(agent.id, l.agent_id);
    let again = c.launch(&l).await.unwrap();
    assert_eq!(again.1.id, run.id, "a repeated launch finds the agent our id made (409 agent_id_conflict)");
    let busy = c.followup(&agent.id, "more", None, None, "k-1").await.unwrap_err();
    assert_eq!(busy.kind, Kind::Busy);
    assert!(busy.to_string().contains("still running"), "{busy}");
    assert!(c.cancel(&agent.id, &run.id).await.unwrap(), "cancelled");
    assert!(!c.cancel(&agent.id, &run.id).await.unwrap(), "409 run_not_cancellable: already ended");
    assert_eq!(c.run(&agent.id, &run.id).await.unwrap().status, "CANCELLED");
    assert_eq!(c.agent("bc-nope").await.unwrap_err().kind, Kind::NotFound);
    assert_eq!(Client::new("http://10.0.0.8", KEY).unwrap_err().kind, Kind::Config, "no plain http off this machine");
    assert_eq!(Client::new("https://api.cursor.com", " ").unwrap_err().kind, Kind::Config, "no key");
}

#[tokio::test]
async fn repositories_are_held_to_cursors_limit_and_served_from_the_cache() {
    let fake = FakeCursorApi::start(KEY).await;
    let (pace, _) = recording();
    let c = Client::new(&fake.url, KEY).unwrap().with_pace(pace);
    let first = c.repositories().await.unwrap();
    assert_eq!(first, ["https://github.com/acme/shop", "https://github.com/acme/api"]);
    assert_eq!(c.repositories().await.unwrap(), first);
    let calls = fake.requests().iter().filter(|s| s.path == "/v1/repositories").count();
    assert_eq!(calls, 1, "the second answer came from the cache, not a second call within the minute");
}
