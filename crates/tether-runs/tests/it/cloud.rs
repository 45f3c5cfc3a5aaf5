//! Cloud runs end to end in one process: Tether's runner against the fake of Cursor's Cloud
//! Agents API (tether-testkit), through the same queue, events, task moves and index as local
//! runs. Each test has its own data dir and its own fake (the API URL is a per-data-dir setting).

use std::sync::Arc;
use std::time::Duration;

use tether_board::principal::Principal;
use tether_board::runs::{NewRun, Run, RunStatus};
use tether_board::stream_json::RunEvent;
use tether_core::paths::{CursorLocations, Paths};
use tether_core::settings::{CloudSettingsPatch, SettingsPatch};
use tether_core::{Tether, ops, token};
use tether_history::sessions::SearchQuery;
use tether_runs::Runner;
use tether_testkit::cursor_api::FakeCursorApi;

const KEY: &str = "key_fake_cloud_0123456789abcdef";

struct Env {
    _dir: tempfile::TempDir,
    t: Arc<Tether>,
    fake: FakeCursorApi,
}

async fn env() -> Env {
    let dir = tempfile::tempdir().unwrap();
    let paths = Paths::at(dir.path().join("data"));
    let fake = FakeCursorApi::start(KEY).await;
    let t = Arc::new(Tether::open(paths.clone(), CursorLocations::explicit(None, None)).unwrap());
    // The opt-in 0600 file store: tests never touch the person's keyring.
    token::set_backend(&paths, token::Backend::File).unwrap();
    token::set_cursor_key(&paths, KEY).unwrap();
    // Through the engine, which holds the settings it read at open.
    t.update_settings(&SettingsPatch {
        cloud: Some(CloudSettingsPatch {
            api_url: Some(Some(fake.url.clone())),
            poll_secs: Some(1),
            ..Default::default()
        }),
        ..Default::default()
    })
    .unwrap();
    Env { _dir: dir, t, fake }
}

fn me() -> Principal {
    Principal::person("me")
}

fn cloud(prompt: &str) -> NewRun {
    NewRun {
        prompt: Some(prompt.into()),
        place: Some("cloud".into()),
        repo: Some("https://github.com/acme/shop".into()),
        ..Default::default()
    }
}

async fn until(t: &Tether, id: &str, what: &str, f: impl Fn(&Run) -> bool) -> Run {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let r = t.board().runs().get(id, Some(0)).unwrap().run;
        if f(&r) {
            return r;
        }
        assert!(tokio::time::Instant::now() < deadline, "waiting for {what}: {r:#?}");
        tokio::time::sleep(Duration::from_millis(40)).await;
    }
}

async fn ended(t: &Tether, id: &str) -> Run {
    until(t, id, "the run to end", |r| r.status.is_terminal()).await
}

fn events(t: &Tether, id: &str) -> Vec<RunEvent> {
    t.board().runs().get(id, None).unwrap().events.into_iter().map(|e| e.event).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cloud_run_streams_to_finished_and_its_transcript_is_a_searchable_chat() {
    let e = env().await;
    let run = ops::runs::start(&e.t, &me(), &cloud("Add a README about zebracorn pricing")).unwrap();
    assert_eq!(run.kind, "cloud");
    let runner = Runner::start(Arc::clone(&e.t));
    let r = ended(&e.t, &run.id).await;
    assert_eq!(r.status, RunStatus::Succeeded, "{r:#?}");
    let spec = r.cloud.clone().unwrap();
    assert_eq!(r.chat_id.as_deref(), Some(spec.agent_id.as_str()), "the cloud agent is the run's chat");
    assert!(spec.agent_id.starts_with("bc-") && spec.run_id.as_deref().is_some_and(|i| i.starts_with("run-")));
    assert_eq!(spec.raw_status.as_deref(), Some("FINISHED"));
    assert!(spec.pushed_branch.as_deref().is_some_and(|b| b.starts_with("cursor/")), "{spec:?}");
    assert_eq!(spec.pr_url.as_deref(), Some("https://github.com/acme/shop/pull/7"));
    assert_eq!(r.duration_ms, Some(3 * 60_000), "minutes of fake time, reported, not waited");
    let ev = events(&e.t, &run.id);
    let kinds: Vec<&str> = ev.iter().map(RunEvent::kind).collect();
    for k in ["user", "init", "thinking", "tool_call", "assistant", "result"] {
        assert!(kinds.contains(&k), "{k} in {kinds:?}");
    }
    let text: String = ev
        .iter()
        .filter_map(|e| if let RunEvent::Assistant { text, .. } = e { Some(text.as_str()) } else { None })
        .collect();
    assert_eq!(text, "Worked on: Add a README about zebracorn pricing");
    // One index: the transcript is a chat of source cloud, with the repository as its project.
    let hits = tether_history::sessions::search(&e.t.store, &SearchQuery::new("zebracorn")).unwrap();
    assert_eq!(hits.len(), 1, "{hits:#?}");
    assert_eq!(hits[0].session_id, spec.agent_id);
    assert_eq!(hits[0].source, "cloud");
    assert_eq!(hits[0].project.as_deref(), Some("github.com/acme/shop"));
    // Launch was idempotent by our agent id and authenticated; the key went nowhere else.
    let seen = e.fake.requests();
    let launch = seen.iter().find(|s| s.method == "POST" && s.path == "/v1/agents").unwrap();
    assert_eq!(launch.body["agentId"], spec.agent_id.as_str());
    assert_eq!(launch.idempotency_key.as_deref(), Some(spec.agent_id.as_str()));
    assert!(seen.iter().all(|s| s.auth == "ok"));
    runner.stop().await;
    assert_key_nowhere(&e);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_stream_resumes_after_its_last_event_and_an_expired_one_is_polled() {
    let e = env().await;
    let runner = Runner::start(Arc::clone(&e.t));
    let dropped = ops::runs::start(&e.t, &me(), &cloud("[cloud:drop=3] resume me")).unwrap();
    let gone = ops::runs::start(&e.t, &me(), &cloud("[cloud:gone] poll me")).unwrap();
    let r = ended(&e.t, &dropped.id).await;
    assert_eq!(r.status, RunStatus::Succeeded, "{r:#?}");
    let streams: Vec<_> = e.fake.requests().into_iter().filter(|s| s.path.ends_with("/stream")).collect();
    assert!(streams.iter().any(|s| s.last_event_id.is_some()), "reconnected with Last-Event-ID: {streams:#?}");
    let ev = events(&e.t, &dropped.id);
    let text: String = ev
        .iter()
        .filter_map(|e| if let RunEvent::Assistant { text, .. } = e { Some(text.as_str()) } else { None })
        .collect();
    assert_eq!(text, "Worked on: resume me", "nothing lost, nothing twice");
    let tools = ev.iter().filter(|e| matches!(e, RunEvent::ToolCall { .. })).count();
    assert_eq!(tools, 2);

    let r = ended(&e.t, &gone.id).await;
    assert_eq!(r.status, RunStatus::Succeeded, "{r:#?}");
    assert_eq!(
        r.result.as_deref(),
        Some("Worked on: poll me"),
        "the result comes from the run when the stream is gone"
    );
    assert!(events(&e.t, &gone.id).iter().any(|e| matches!(e, RunEvent::Notice { text } if text.contains("expired"))));
    runner.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn terminal_statuses_map_as_the_seed_says_and_keep_the_raw_one() {
    let e = env().await;
    let runner = Runner::start(Arc::clone(&e.t));
    let cases = [
        ("[cloud:status=EXPIRED] a", RunStatus::Failed, "EXPIRED", "expired"),
        ("[cloud:status=ERROR] b", RunStatus::Failed, "ERROR", "the cloud agent failed"),
        ("[cloud:status=HIBERNATED] c", RunStatus::Failed, "HIBERNATED", "does not know: HIBERNATED"),
        ("[cloud:malformed] d", RunStatus::Succeeded, "FINISHED", ""),
    ];
    let ids: Vec<String> = cases.iter().map(|(p, ..)| ops::runs::start(&e.t, &me(), &cloud(p)).unwrap().id).collect();
    for (id, (_, status, raw, why)) in ids.iter().zip(cases) {
        let r = ended(&e.t, id).await;
        assert_eq!(r.status, status, "{r:#?}");
        assert_eq!(r.cloud.as_ref().unwrap().raw_status.as_deref(), Some(raw));
        assert!(r.error.as_deref().unwrap_or("").contains(why), "{r:#?}");
    }
    let raw = events(&e.t, &ids[3]).into_iter().find(|e| matches!(e, RunEvent::Raw { .. }));
    assert!(
        matches!(raw, Some(RunEvent::Raw { reason, .. }) if reason.contains("not JSON")),
        "a broken frame is kept raw"
    );
    runner.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_and_the_time_limit_cancel_the_run_at_cursor() {
    let e = env().await;
    let runner = Runner::start(Arc::clone(&e.t));
    let hanging = ops::runs::start(&e.t, &me(), &cloud("[cloud:hang] forever")).unwrap();
    let limited =
        ops::runs::start(&e.t, &me(), &NewRun { timeout_secs: Some(1), ..cloud("[cloud:hang] too long") }).unwrap();
    let live =
        until(&e.t, &hanging.id, "a Cursor run id", |r| r.cloud.as_ref().is_some_and(|c| c.run_id.is_some())).await;
    ops::runs::cancel(&e.t, &me(), &hanging.id).unwrap();
    let r = ended(&e.t, &hanging.id).await;
    assert_eq!(r.status, RunStatus::Cancelled, "{r:#?}");
    let cursor_run = live.cloud.unwrap().run_id.unwrap();
    assert_eq!(e.fake.run_status(&cursor_run).as_deref(), Some("CANCELLED"), "cancelled at Cursor, not only here");

    let r = ended(&e.t, &limited.id).await;
    assert_eq!(r.status, RunStatus::TimedOut, "{r:#?}");
    assert!(r.error.as_deref().unwrap().contains("cancelled at Cursor"));
    let cursor_run = r.cloud.unwrap().run_id.unwrap();
    assert_eq!(e.fake.run_status(&cursor_run).as_deref(), Some("CANCELLED"));
    runner.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_re_attaches_to_a_live_cloud_run_and_a_follow_up_continues_the_agent() {
    let e = env().await;
    let first = Runner::start(Arc::clone(&e.t));
    let run = ops::runs::start(&e.t, &me(), &cloud("[cloud:step=150] outlive us")).unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while !events(&e.t, &run.id).iter().any(|e| matches!(e, RunEvent::Thinking { .. })) {
        assert!(tokio::time::Instant::now() < deadline, "no frames came");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    first.stop().await;
    let left = e.t.board().runs().get(&run.id, Some(0)).unwrap().run;
    assert_eq!(left.status, RunStatus::Running, "Tether stopping leaves a cloud run going at Cursor");
    assert!(left.cloud.unwrap().last_event_id.is_some(), "and says where its stream was");

    let second = Runner::start(Arc::clone(&e.t));
    let r = ended(&e.t, &run.id).await;
    assert_eq!(r.status, RunStatus::Succeeded, "{r:#?}");
    let resumed = e.fake.requests().into_iter().rfind(|s| s.path.ends_with("/stream")).unwrap();
    assert!(resumed.last_event_id.is_some(), "re-attached where it left off");
    let text: String = events(&e.t, &run.id)
        .iter()
        .filter_map(|e| if let RunEvent::Assistant { text, .. } = e { Some(text.clone()) } else { None })
        .collect();
    assert_eq!(text, "Worked on: outlive us");

    let next = ops::runs::Followup { run: run.id.clone(), prompt: "and now the tests".into() };
    let f = ops::runs::followup(&e.t, &me(), &next).unwrap();
    assert_eq!(f.cloud.as_ref().unwrap().agent_id, r.cloud.as_ref().unwrap().agent_id);
    let f = ended(&e.t, &f.id).await;
    assert_eq!(f.status, RunStatus::Succeeded, "{f:#?}");
    assert_eq!(f.chat_id, r.chat_id, "the same cloud agent, the same chat");
    assert!(e.fake.requests().iter().any(|s| s.method == "POST" && s.path.ends_with("/runs")), "POST …/runs");
    let chat = tether_history::sessions::show(&e.t.store, r.chat_id.as_deref().unwrap(), &Default::default()).unwrap();
    let users = chat.messages.iter().filter(|m| m.role == "user").count();
    assert_eq!(users, 2, "both prompts in one chat");
    second.stop().await;
}

/// The key is in no stored byte but the key file it was asked to be kept in: not the database
/// (and its WAL), the transcripts, any event.
fn assert_key_nowhere(e: &Env) {
    let data = &e.t.paths.data_dir;
    for entry in walk(data).into_iter().filter(|p| !p.ends_with("cursor-api-key")) {
        let bytes = std::fs::read(&entry).unwrap_or_default();
        assert!(!bytes.windows(KEY.len()).any(|w| w == KEY.as_bytes()), "the key is in {}", entry.display());
    }
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() { out.extend(walk(&p)) } else { out.push(p) }
    }
    out
}
