//! The board over HTTP, as the person: tasks (create, list with its filters, show, change,
//! claim; each rule's `{code}`: dependencies_open, dependency_cycle, illegal_transition,
//! task_held, not_found, invalid_input), signals (send as `human`, list, show with its thread,
//! reply, drain exactly once) and agents (list, waking by resume only for a chain of runs).
//! Another person (`pat`, as the CLI would be) acts through the engine.

use serde_json::{Value, json};
use tether_board::principal::{AgentKind, Identity, Principal};
use tether_core::Tether;
use tether_core::ops::agents::Start;
use tether_core::ops::signals::Reply;
use tether_core::ops::tasks::Claim;
use tether_testkit::daemon::TestDaemon;

use crate::http_support::{assert_error, ok};

fn ids(v: &Value, key: &str) -> Vec<String> {
    v[key].as_array().unwrap().iter().map(|t| t["id"].as_str().unwrap().to_owned()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_are_created_listed_changed_and_claimed_as_the_person() {
    let d = TestDaemon::start().await;
    let me = Tether::person();

    let a = ok(d
        .post(
            "/api/tasks",
            json!({"title": "Board work", "priority": "high", "labels": ["ui"], "acceptance": ["it works"],
                   "role": "dev", "project": "/p", "description": "The **board**."}),
        )
        .await);
    let a_id = a["id"].as_str().unwrap().to_owned();
    assert!(a_id.starts_with("T-"), "{a}");
    assert_eq!(
        (&a["status"], &a["priority"], &a["labels"], &a["acceptance"]),
        (&json!("todo"), &json!("high"), &json!(["ui"]), &json!(["it works"]))
    );
    assert_eq!(a["created_by"], me.as_str(), "the GUI acts as the person (TETHER_USER, else USER)");
    let after = ok(d.post("/api/tasks", json!({"title": "After", "depends_on": [a_id]})).await);
    let after_id = after["id"].as_str().unwrap().to_owned();
    assert_eq!(after["blocked_by"], json!([a_id]));

    // Bad input writes nothing.
    assert_error(&d.post("/api/tasks", json!({"title": "  "})).await, 400, "invalid_input");
    assert_error(&d.post("/api/tasks", json!({"title": "x", "priority": "whenever"})).await, 400, "invalid_input");
    assert_error(&d.post("/api/tasks", json!({"title": "x", "depends_on": ["T-99"]})).await, 404, "not_found");
    assert_error(&d.post("/api/tasks", json!({"description": "no title"})).await, 422, "invalid_input");
    assert_eq!(ids(&ok(d.get("/api/tasks").await), "tasks").len(), 2);

    // The rules, each with its code.
    let path = |id: &str| format!("/api/tasks/{id}");
    assert_error(&d.patch(&path(&after_id), json!({"status": "in_progress"})).await, 409, "dependencies_open");
    assert_error(&d.post(&format!("{}/claim", path(&after_id)), json!({})).await, 409, "dependencies_open");
    assert_error(&d.patch(&path(&a_id), json!({"add_depends_on": [after_id]})).await, 409, "dependency_cycle");
    assert_error(&d.patch(&path(&a_id), json!({"status": "in_review"})).await, 409, "illegal_transition");
    assert_error(&d.patch(&path(&a_id), json!({"release": true})).await, 409, "illegal_transition");
    assert_error(&d.patch(&path(&a_id), json!({"status": "sideways"})).await, 422, "invalid_input");
    assert_error(&d.patch(&path("T-99"), json!({"comment": "hi"})).await, 404, "not_found");
    assert_error(&d.get(&path("T-99")).await, 404, "not_found");
    assert_error(&d.get(&path("task-one")).await, 404, "not_found");
    assert_error(&d.post("/api/tasks/T-99/claim", json!({})).await, 404, "not_found");

    // Claimed by the person; then held against another.
    let claimed = ok(d.post(&format!("{}/claim", path(&a_id)), json!({})).await);
    assert_eq!((&claimed["status"], &claimed["assignee"]), (&json!("in_progress"), &json!(me)));
    let pat = Principal::person("pat");
    let b = tether_core::ops::tasks::create(
        d.tether(),
        &pat,
        &tether_board::tasks::NewTask { title: "Pat's".into(), ..Default::default() },
    )
    .unwrap();
    tether_core::ops::tasks::claim(d.tether(), &pat, Claim { id: Some(b.id.clone()), ..Claim::default() }).unwrap();
    assert_error(&d.post(&format!("{}/claim", path(&b.id)), json!({})).await, 409, "task_held");
    assert_error(&d.patch(&path(&b.id), json!({"title": "Mine now"})).await, 409, "task_held");
    let forced = ok(d.patch(&path(&b.id), json!({"title": "Mine now", "force": true})).await);
    assert_eq!(forced["title"], "Mine now");

    // A handoff gives it back; the detail has the note and the history.
    ok(d.patch(&path(&a_id), json!({"comment": "handing over", "handoff": true, "release": true})).await);
    let detail = ok(d.get(&path(&a_id)).await);
    assert_eq!((&detail["status"], &detail["assignee"]), (&json!("todo"), &Value::Null));
    let note = &detail["notes"][0];
    assert_eq!(
        (&note["kind"], &note["detail"]["text"], &note["actor"]),
        (&json!("handoff"), &json!("handing over"), &json!(me)),
        "{detail}"
    );
    assert!(detail["history"].as_array().unwrap().len() >= 3, "{detail}");
    let done = ok(d.patch(&path(&a_id), json!({"summary": "shipped", "force": true})).await);
    assert_eq!((&done["status"], &done["summary"]), (&json!("done"), &json!("shipped")));

    // The list and its filters (status repeats, or is comma-separated).
    let list = |q: &str| {
        let q = q.to_owned();
        let d = &d;
        async move { ids(&ok(d.get(&format!("/api/tasks{q}")).await), "tasks") }
    };
    let mut all = list("").await;
    all.sort();
    assert_eq!(all.len(), 3);
    assert_eq!(list("?status=done").await, [a_id.as_str()]);
    let mut two = list("?status=done&status=in_progress").await;
    two.sort();
    let mut comma = list("?status=done,in_progress").await;
    comma.sort();
    assert_eq!((two.len(), &two), (2, &comma));
    assert_eq!(list("?assignee=pat").await, [b.id.as_str()]);
    assert_eq!(list("?label=ui").await, [a_id.as_str()]);
    // A task with no role (or project) fits any.
    assert_eq!(list("?role=dev").await.len(), 3);
    assert_eq!(list("?role=ops").await, [b.id.clone(), after_id.clone()]);
    assert_eq!(list("?project=/q").await, [b.id.clone(), after_id.clone()]);
    assert_eq!(list("?ready=1").await, [after_id.as_str()], "its dependency is done");
    assert_eq!(list("?limit=1").await.len(), 1);
    assert_error(&d.get("/api/tasks?status=bogus").await, 400, "invalid_input");
    d.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn signals_go_both_ways_and_agents_are_listed() {
    let d = TestDaemon::start().await;
    // Another agent: an MCP client's session named ana.
    let ana = Principal::agent(Identity {
        id: "mcp:s-ana".into(),
        kind: AgentKind::Mcp,
        mcp_session: Some("s-ana".into()),
        project: None,
    });
    let start = Start { name: Some("ana".into()), role: Some("dev".into()) };
    tether_core::ops::agents::start_session(d.tether(), &ana, &start).unwrap();

    // The person asks ana.
    let q = ok(d.post("/api/signals", json!({"to": "ana", "type": "question", "body": "Which branch?"})).await);
    let q_id = q["id"].as_str().unwrap().to_owned();
    assert_eq!(
        (&q["from"], &q["to"], &q["type"], &q["reply_required"]),
        (&json!("human"), &json!("ana"), &json!("question"), &json!(true))
    );
    assert_eq!(q["deliveries"][0]["obligation"], "open", "{q}");

    // Bad signals are refused, and write nothing.
    let big = "x".repeat(16 * 1024 + 1);
    for (body, status, code) in [
        (json!({"to": "nobody", "body": "hi"}), 404, "not_found"),
        (json!({"to": "ana", "type": "shout", "body": "hi"}), 400, "invalid_input"),
        (json!({"to": "ana", "body": big}), 400, "invalid_input"),
        (json!({"to": "ana", "body": "   "}), 400, "invalid_input"),
        (json!({"to": "ana", "body": "hi", "reply_to": "S-99"}), 404, "not_found"),
        (json!({"to": "ana", "body": "hi", "task": "T-99"}), 404, "not_found"),
        (json!({"to": "ana"}), 422, "invalid_input"),
    ] {
        assert_error(&d.post("/api/signals", body.clone()).await, status, code);
    }
    assert_eq!(ids(&ok(d.get("/api/signals").await), "signals"), [q_id.as_str()]);

    // ana answers, and asks back.
    let t = d.tether();
    let answer = tether_core::ops::signals::reply(t, &ana, &q_id, Reply { body: "main".into(), kind: None }).unwrap();
    let ask = tether_core::ops::signals::send(
        t,
        &ana,
        &tether_board::signals::NewSignal {
            to: Some("human".into()),
            kind: Some("question".into()),
            body: "May I merge?".into(),
            ..Default::default()
        },
    )
    .unwrap();

    // The list: newest first, and its filters.
    let list = |q: &str| {
        let q = q.to_owned();
        let d = &d;
        async move { ids(&ok(d.get(&format!("/api/signals{q}")).await), "signals") }
    };
    assert_eq!(list("").await, [ask.id.clone(), answer.id.clone(), q_id.clone()]);
    assert_eq!(list("?to=ana").await, [q_id.as_str()]);
    assert_eq!(list("?from=ana").await, [ask.id.clone(), answer.id.clone()]);
    assert_eq!(list("?to=human").await, [ask.id.clone(), answer.id.clone()]);
    assert_eq!(list("?agent=ana").await.len(), 3);
    let open = list("?open=1").await;
    assert!(open.contains(&ask.id) && !open.contains(&q_id), "the question was answered: {open:?}");
    assert_eq!(list(&format!("?trace={}", q["trace_id"].as_str().unwrap())).await, [answer.id.clone(), q_id.clone()]);
    assert_eq!(list("?limit=1").await, [ask.id.as_str()]);

    // One signal: its thread and its wakes.
    let detail = ok(d.get(&format!("/api/signals/{q_id}")).await);
    assert!(detail["answered_at"].is_string(), "{detail}");
    assert_eq!(ids(&detail, "thread"), [q_id.clone(), answer.id.clone()]);
    assert!(detail["wakes"].is_array());
    assert_error(&d.get("/api/signals/S-999").await, 404, "not_found");
    assert_error(&d.get("/api/signals/nonsense").await, 404, "not_found");

    // The person's inbox, drained exactly once.
    let drained = ok(d.post("/api/signals/drain", json!({})).await);
    assert_eq!(ids(&drained, "signals"), [answer.id.clone(), ask.id.clone()]);
    assert_eq!(ok(d.post("/api/signals/drain", json!({})).await), json!({"signals": []}));

    // The person replies to ana's question: to ana, closing it.
    let reply = ok(d.post(&format!("/api/signals/{}/reply", ask.id), json!({"body": "yes"})).await);
    assert_eq!(
        (&reply["to"], &reply["reply_to"], &reply["type"]),
        (&json!("ana"), &json!(ask.id), &json!("acknowledgment"))
    );
    assert!(!list("?open=1").await.contains(&ask.id));
    let asked = ok(d.get(&format!("/api/signals/{}", ask.id)).await);
    assert_eq!(
        (&asked["answered_by"], &asked["deliveries"][0]["obligation"]),
        (&reply["id"], &json!("closed")),
        "{asked}"
    );
    assert_error(&d.post("/api/signals/S-999/reply", json!({"body": "?"})).await, 404, "not_found");
    assert_error(&d.post(&format!("/api/signals/{}/reply", ask.id), json!({})).await, 422, "invalid_input");

    // Agents: ana is one; waking by resume is only for a chain of runs.
    let agents = ok(d.get("/api/agents").await)["agents"].as_array().cloned().unwrap();
    let p = agents.iter().find(|a| a["name"] == "ana").unwrap_or_else(|| panic!("{agents:?}"));
    assert_eq!((&p["kind"], &p["role"], &p["wake_by_resume"]), (&json!("mcp"), &json!("dev"), &json!(false)), "{p}");
    assert!(p["open_obligations"].is_i64() && p.get("surface").is_some(), "{p}");
    assert_error(&d.patch("/api/agents/ana", json!({"wake_by_resume": true})).await, 400, "invalid_input");
    assert_error(&d.patch("/api/agents/nobody", json!({"wake_by_resume": true})).await, 404, "not_found");
    assert_error(&d.patch("/api/agents/ana", json!({"wake_by_resume": true, "also": 1})).await, 422, "invalid_input");
    d.stop().await;
}
