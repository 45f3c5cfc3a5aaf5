//! The board's tools over MCP: `session_start` (who the caller is, as the server derives it from
//! the MCP session or from Cursor's hooks), `task_create` / `task_list` / `task_claim` /
//! `task_update` (claims are atomic: of two clients racing, exactly one wins; holders, leases,
//! handoffs, clearing and unassigning), and signals: `signal_send` (to a name, a role, the
//! person; replies), `signals_pending` (drained exactly once) and the piggyback notice on every
//! tool result while signals wait.

use serde_json::{Value, json};
use tether_board::principal::Principal;
use tether_testkit::daemon::TestDaemon;

use crate::mcp_util::{call, err, fails, hook, mcp_sessions, ok, streams_open, text, tool};

fn task_ids(list: &Value) -> Vec<String> {
    list["tasks"].as_array().expect("tasks").iter().map(|t| t["id"].as_str().unwrap().to_owned()).collect()
}

fn minutes_left(iso: &Value) -> f64 {
    let until = iso.as_str().expect("a lease");
    let ms = tether_core::clock::parse_iso(until).expect("an RFC 3339 time");
    (ms - tether_core::clock::now_ms()) as f64 / 60_000.0
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agents_share_the_board() {
    let d = TestDaemon::start().await;
    let a = d.mcp().await;

    // The caller is its MCP session: `mcp:<Mcp-Session-Id>`, kind mcp, until it names itself.
    let dev = tool(&a, "session_start", json!({"role": "dev"})).await;
    let sessions = mcp_sessions(&d).await;
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    assert_eq!(dev["agent"]["id"], format!("mcp:{}", sessions[0].0));
    assert_eq!((dev["agent"]["kind"].as_str(), dev["agent"]["role"].as_str()), (Some("mcp"), Some("dev")));
    assert_eq!((dev["agent"]["wake_by_resume"].as_bool(), dev["holding"].clone()), (Some(false), json!([])));
    assert!(dev["instructions"].as_str().unwrap().contains("task_claim"), "{dev}");
    let ann = dev["agent"]["name"].as_str().unwrap().to_owned();
    assert!(!ann.is_empty());

    let b = d.mcp().await;
    let rev = tool(&b, "session_start", json!({"role": "reviewer", "name": "rita"})).await;
    assert_eq!(rev["agent"]["name"], "rita");
    assert_ne!(rev["agent"]["id"], dev["agent"]["id"], "another session, another agent");
    assert_eq!(fails(&a, "session_start", json!({"name": "rita"})).await["code"], "conflict");

    // task_create: every field back as given; the creator is the caller.
    let base = tool(
        &a,
        "task_create",
        json!({"title": "Parse config", "description": "Use **serde**.", "priority": "high", "role": "dev",
               "project": "/w/app", "labels": ["core"], "acceptance": ["rejects unknown keys"]}),
    )
    .await;
    assert_eq!(base["id"], "T-1");
    for (k, v) in [
        ("title", json!("Parse config")),
        ("description", json!("Use **serde**.")),
        ("status", json!("todo")),
        ("priority", json!("high")),
        ("role", json!("dev")),
        ("project", json!("/w/app")),
        ("labels", json!(["core"])),
        ("acceptance", json!(["rejects unknown keys"])),
        ("assignee", Value::Null),
        ("created_by", json!(ann)),
    ] {
        assert_eq!(base[k], v, "{k}: {base}");
    }
    let review =
        tool(&a, "task_create", json!({"title": "Review the parser", "role": "reviewer", "depends_on": ["T-1"]})).await;
    assert_eq!((review["id"].as_str(), review["blocked_by"].clone()), (Some("T-2"), json!(["T-1"])));
    let parked = tool(&a, "task_create", json!({"title": "Someday", "status": "blocked", "priority": "low"})).await;
    assert_eq!((parked["status"].as_str(), parked["priority"].as_str()), (Some("blocked"), Some("low")));
    assert_eq!(
        fails(&a, "task_update", json!({"id": "T-1", "add_depends_on": ["T-2"]})).await["code"],
        "dependency_cycle"
    );

    // task_list: open tasks by default, and each filter.
    assert_eq!(task_ids(&tool(&b, "task_list", json!({})).await), ["T-1", "T-2", "T-3"]);
    assert_eq!(task_ids(&tool(&b, "task_list", json!({"ready": true})).await), ["T-1"]);
    assert_eq!(task_ids(&tool(&b, "task_list", json!({"status": ["blocked"]})).await), ["T-3"]);
    assert_eq!(task_ids(&tool(&b, "task_list", json!({"label": "core"})).await), ["T-1"]);
    // A role's (a project's) tasks are its own and those for any.
    assert_eq!(task_ids(&tool(&b, "task_list", json!({"role": "reviewer"})).await), ["T-2", "T-3"]);
    assert_eq!(task_ids(&tool(&b, "task_list", json!({"role": "qa"})).await), ["T-3"]);
    assert_eq!(task_ids(&tool(&b, "task_list", json!({"project": "/w/other"})).await), ["T-2", "T-3"]);
    assert_eq!(task_ids(&tool(&b, "task_list", json!({"assignee": "none", "limit": 2})).await).len(), 2);
    assert_eq!(fails(&b, "task_list", json!({"limit": 501})).await["code"], "invalid_input");

    // Claims are atomic: two clients race for one task, many times; exactly one wins each time.
    for i in 0..5 {
        let t = tool(&a, "task_create", json!({"title": format!("race {i}")})).await;
        let args = json!({"id": t["id"]});
        let (ra, rb) = tokio::join!(call(&a, "task_claim", args.clone()), call(&b, "task_claim", args.clone()));
        let winners: Vec<&Value> = [&ra, &rb].into_iter().filter(|r| r["isError"] != true).collect();
        assert_eq!(winners.len(), 1, "exactly one wins: {ra} / {rb}");
        let winner = ok(winners[0]);
        let loser = err(if ra["isError"] == true { &ra } else { &rb });
        assert_eq!(loser["code"], "task_held", "{loser}");
        assert!(loser["message"].as_str().unwrap().contains(winner["assignee"].as_str().unwrap()), "{loser}");
        let detail = tool(&a, "task_list", json!({"id": t["id"]})).await;
        let claims = detail["history"].as_array().unwrap().iter().filter(|e| e["kind"] == "claimed").count();
        assert_eq!(claims, 1, "one claim recorded: {detail}");
        let holder = if ra["isError"] == true { &b } else { &a };
        tool(holder, "task_update", json!({"id": t["id"], "status": "cancelled"})).await;
    }

    // Claim-next takes the best ready task for the caller's role, on the lease asked for.
    let mine = tool(&a, "task_claim", json!({"lease_minutes": 5})).await;
    assert_eq!((mine["id"].as_str(), mine["status"].as_str()), (Some("T-1"), Some("in_progress")));
    assert_eq!(mine["assignee"], json!(ann));
    let left = minutes_left(&mine["lease_until"]);
    assert!(left > 4.0 && left <= 5.0, "a 5-minute lease has {left:.2} min left");
    assert_eq!(fails(&a, "task_claim", json!({"role": "dev"})).await["code"], "nothing_to_claim");
    assert_eq!(fails(&b, "task_claim", json!({"id": "T-2"})).await["code"], "dependencies_open");
    assert_eq!(fails(&b, "task_claim", json!({"id": "T-1"})).await["code"], "task_held");
    assert_eq!(task_ids(&tool(&a, "task_list", json!({"assignee": "me"})).await), ["T-1"]);

    // A task another agent holds takes comments only; forcing is the person's.
    assert_eq!(fails(&b, "task_update", json!({"id": "T-1", "title": "mine now"})).await["code"], "task_held");
    assert_eq!(fails(&b, "task_update", json!({"id": "T-1", "force": true, "title": "x"})).await["code"], "forbidden");
    tool(&b, "task_update", json!({"id": "T-1", "comment": "remember the env override"})).await;
    // The holder edits, clears the role and project (null and ""), and hands off.
    let edited = tool(
        &a,
        "task_update",
        json!({"id": "T-1", "title": "Parse the config", "priority": "critical", "role": null, "project": "",
               "add_labels": ["parser"], "remove_labels": ["core"], "acceptance": ["clear errors"]}),
    )
    .await;
    for (k, v) in [
        ("title", json!("Parse the config")),
        ("priority", json!("critical")),
        ("role", Value::Null),
        ("project", Value::Null),
        ("labels", json!(["parser"])),
        ("acceptance", json!(["clear errors"])),
        ("status", json!("in_progress")),
    ] {
        assert_eq!(edited[k], v, "{k}: {edited}");
    }
    let released = tool(
        &a,
        "task_update",
        json!({"id": "T-1", "release": true, "handoff": true, "comment": "parser done, errors left"}),
    )
    .await;
    assert_eq!((released["status"].as_str(), released["assignee"].clone()), (Some("todo"), Value::Null));
    let again = tool(&a, "task_claim", json!({"id": "T-1"})).await;
    assert_eq!(again["assignee"], json!(ann));
    let done = tool(&a, "task_update", json!({"id": "T-1", "summary": "parser with clear errors"})).await;
    assert_eq!((done["status"].as_str(), done["summary"].as_str()), (Some("done"), Some("parser with clear errors")));
    assert_eq!(done["lease_until"], Value::Null);
    assert_eq!(
        fails(&a, "task_update", json!({"id": "T-1", "status": "in_review"})).await["code"],
        "illegal_transition"
    );
    let detail = tool(&b, "task_list", json!({"id": "T-1"})).await;
    let notes: Vec<(&str, &str)> = detail["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| (n["kind"].as_str().unwrap(), n["detail"]["text"].as_str().unwrap()))
        .collect();
    assert_eq!(notes, [("comment", "remember the env override"), ("handoff", "parser done, errors left")]);
    let kinds: Vec<&str> = detail["history"].as_array().unwrap().iter().map(|e| e["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds.iter().filter(|k| **k == "claimed").count(), 2, "{kinds:?}");
    assert_eq!(kinds.last(), Some(&"completed"), "{kinds:?}");

    // T-2 is ready now: the reviewer's claim-next picks it for its role.
    let next = tool(&b, "task_claim", json!({})).await;
    assert_eq!((next["id"].as_str(), next["assignee"].as_str()), (Some("T-2"), Some("rita")));
    let resumed = tool(&b, "session_start", json!({})).await;
    assert_eq!(task_ids(&json!({"tasks": resumed["holding"]})), ["T-2"]);
    assert_eq!(resumed["agent"]["role"], "reviewer", "a resumed session keeps its role");

    // Assigning to an agent tells it (task_assigned); null and "" unassign.
    let given = tool(&a, "task_update", json!({"id": "T-3", "assignee": "rita"})).await;
    assert_eq!(given["assignee"], "rita");
    let inbox = tool(&b, "signals_pending", json!({})).await;
    let assigned: Vec<&Value> =
        inbox["signals"].as_array().unwrap().iter().filter(|s| s["type"] == "task_assigned").collect();
    assert_eq!(assigned.len(), 1, "{inbox}");
    assert_eq!((assigned[0]["task"].as_str(), assigned[0]["from"].as_str()), (Some("T-3"), Some(ann.as_str())));
    let unassigned = tool(&a, "task_update", json!({"id": "T-3", "assignee": null})).await;
    assert_eq!(unassigned["assignee"], Value::Null);
    tool(&a, "task_update", json!({"id": "T-3", "assignee": "pat"})).await;
    let empty = tool(&a, "task_update", json!({"id": "T-3", "assignee": ""})).await;
    assert_eq!(empty["assignee"], Value::Null);

    // A claimed task its holder unassigns is free again (todo): another agent may claim it.
    let loose = tool(&a, "task_create", json!({"title": "Loose end"})).await;
    tool(&a, "task_claim", json!({"id": loose["id"]})).await;
    let dropped = tool(&a, "task_update", json!({"id": loose["id"], "assignee": null})).await;
    let free = (dropped["assignee"].clone(), dropped["status"].as_str(), dropped["lease_until"].clone());
    assert_eq!(free, (Value::Null, Some("todo"), Value::Null), "{dropped}");
    let taken = tool(&b, "task_claim", json!({"id": loose["id"]})).await;
    assert_eq!((taken["assignee"].as_str(), taken["status"].as_str()), (Some("rita"), Some("in_progress")));

    // The board reads the same through the engine (the person's view).
    let board = tether_core::ops::tasks::markdown(d.tether()).unwrap();
    assert!(board.contains("**T-2** Review the parser [medium] — rita"), "{board}");

    a.cancel().await.unwrap();
    b.cancel().await.unwrap();
    d.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn signals_are_sent_drained_once_and_answered() {
    let d = TestDaemon::start().await;
    let (a, b, c) = (d.mcp().await, d.mcp().await, d.mcp().await);
    tool(&a, "session_start", json!({"role": "dev", "name": "ana"})).await;
    tool(&b, "session_start", json!({"role": "reviewer", "name": "bo"})).await;
    tool(&c, "session_start", json!({"role": "reviewer", "name": "cy"})).await;

    // To a name: a question needs a reply.
    let q = tool(&a, "signal_send", json!({"to": "bo", "type": "question", "body": "Is T-1 ready?"})).await;
    assert_eq!((q["from"].as_str(), q["to"].as_str(), q["type"].as_str()), (Some("ana"), Some("bo"), Some("question")));
    assert_eq!((q["reply_required"].as_bool(), q["deliveries"][0]["obligation"].as_str()), (Some(true), Some("open")));
    // The default type is a question; a status update needs nothing back.
    let plain = tool(&a, "signal_send", json!({"to": "bo", "body": "ping"})).await;
    assert_eq!(plain["type"], "question");
    let fyi = tool(&a, "signal_send", json!({"to": "bo", "type": "status_update", "body": "CI is green"})).await;
    assert_eq!(fyi["reply_required"], false);
    // To a role: every live agent with it.
    let role =
        tool(&a, "signal_send", json!({"to": "reviewer", "type": "review_requested", "body": "Please review."})).await;
    assert_eq!(role["to"], "role:reviewer");
    let mut to: Vec<&str> =
        role["deliveries"].as_array().unwrap().iter().map(|x| x["recipient"].as_str().unwrap()).collect();
    to.sort_unstable();
    assert_eq!(to, ["bo", "cy"]);

    // While signals wait, every tool result carries a notice (count and types, never a body).
    let listed = call(&b, "task_list", json!({})).await;
    assert_eq!(listed["content"].as_array().unwrap().len(), 2, "{listed}");
    let notice: Value = serde_json::from_str(text(&listed, 1)).unwrap();
    assert_eq!(notice["pending_signals"], 4, "{notice}");
    let words = notice["notice"].as_str().unwrap();
    assert!(words.contains("signals_pending") && words.contains("question") && !words.contains("ping"), "{words}");

    // signals_pending drains, in order, exactly once (with the system notice that cy joined); the
    // hint says whether a reply is due.
    let got = tool(&b, "signals_pending", json!({})).await;
    let order: Vec<(&str, &str)> = got["signals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["id"].as_str().unwrap(), s["type"].as_str().unwrap()))
        .collect();
    let sent = [&q, &plain, &fyi, &role].map(|v| (v["id"].as_str().unwrap(), v["type"].as_str().unwrap()));
    assert_eq!(order[0].1, "peer_joined", "{got}");
    assert_eq!(order[1..], sent);
    assert!(got["hint"].as_str().unwrap().contains("reply_to"), "{got}");
    let empty = tool(&b, "signals_pending", json!({})).await;
    assert_eq!((empty["signals"].clone(), empty["hint"].as_str()), (json!([]), Some("Nothing here needs a reply.")));
    assert_eq!(call(&b, "task_list", json!({})).await["content"].as_array().unwrap().len(), 1, "no notice now");

    // A reply (no `to`) goes to the sender, in the same trace, and closes the question.
    let reply = tool(&b, "signal_send", json!({"reply_to": q["id"], "body": "Yes, merged."})).await;
    assert_eq!((reply["to"].as_str(), reply["type"].as_str()), (Some("ana"), Some("acknowledgment")));
    assert_eq!((reply["reply_to"].clone(), reply["trace_id"].clone()), (q["id"].clone(), q["trace_id"].clone()));
    let detail = tether_core::ops::signals::get(d.tether(), q["id"].as_str().unwrap()).unwrap();
    assert_eq!(detail.signal.answered_by.as_deref(), reply["id"].as_str());
    assert_eq!(detail.signal.deliveries[0].obligation, "closed");
    let thread: Vec<&str> = detail.thread.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(thread, [q["id"].as_str().unwrap(), reply["id"].as_str().unwrap()]);
    let status = tether_core::ops::signals::get(d.tether(), fyi["id"].as_str().unwrap()).unwrap();
    assert_eq!(status.signal.deliveries[0].obligation, "closed", "a status update closes when drained");

    // Ana hears of the peers who joined after her (system signals) and of the reply.
    let back = tool(&a, "signals_pending", json!({})).await;
    let kinds: Vec<(&str, &str)> = back["signals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["type"].as_str().unwrap(), s["from"].as_str().unwrap()))
        .collect();
    assert_eq!(kinds, [("peer_joined", "tether"), ("peer_joined", "tether"), ("acknowledgment", "bo")], "{back}");

    // The person: an agent asks `human`, the person answers (here through the engine), the
    // agent drains the answer.
    let ask = tool(&a, "signal_send", json!({"to": "human", "body": "Which DB should I use?"})).await;
    assert_eq!(ask["deliveries"][0]["recipient"], "human");
    let person = Principal::person("pat");
    let body = tether_core::ops::signals::Reply { body: "SQLite.".into(), kind: None };
    tether_core::ops::signals::reply(d.tether(), &person, ask["id"].as_str().unwrap(), body).unwrap();
    let answer = tool(&a, "signals_pending", json!({})).await;
    let last = answer["signals"].as_array().unwrap().last().cloned().unwrap();
    assert_eq!((last["from"].as_str(), last["body"].as_str()), (Some("human"), Some("SQLite.")));

    for s in [a, b, c] {
        s.cancel().await.unwrap();
    }
    d.stop().await;
}

/// A Cursor chat known through the hooks is the caller: its conversation id, kind `cursor`, its
/// workspace as the project; what it creates and claims is in its name.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chat_announced_by_the_hooks_is_the_actor() {
    const CHAT: &str = "c5555555-0000-4000-8000-00000000000a";
    let d = TestDaemon::start().await;
    let c = d.mcp().await;
    hook(
        &d,
        json!({"conversation_id": CHAT, "hook_event_name": "beforeMCPExecution", "workspace_roots": ["/home/u/cproj"],
               "tool_name": "session_start", "tool_input": {"role": "dev"}}),
    )
    .await;
    let s = tool(&c, "session_start", json!({"role": "dev", "name": "chatty"})).await;
    assert_eq!((s["agent"]["id"].as_str(), s["agent"]["kind"].as_str()), (Some(CHAT), Some("cursor")));
    assert_eq!(s["agent"]["project"], "/home/u/cproj");
    // The MCP session stays bound to the chat.
    let t = tool(&c, "task_create", json!({"title": "From a chat"})).await;
    assert_eq!(t["created_by"], "chatty");
    let claimed = tool(&c, "task_claim", json!({"id": t["id"]})).await;
    assert_eq!(claimed["assignee"], "chatty");
    let agent = tether_core::ops::agents::list(d.tether()).unwrap().into_iter().find(|a| a.id == CHAT).unwrap();
    assert_eq!((agent.status.as_str(), agent.tasks.clone()), ("working", vec![t["id"].as_str().unwrap().to_owned()]));

    // Another session, without an announcement, is its own agent.
    let other = d.mcp().await;
    let o = tool(&other, "session_start", json!({})).await;
    assert!(o["agent"]["id"].as_str().unwrap().starts_with("mcp:"), "{o}");

    other.cancel().await.unwrap();
    c.cancel().await.unwrap();
    d.stop().await;
}

/// An agent connected over MCP with its GET stream open is reached at once (`full`), in its own
/// session start and on the Agents list, on a machine's own board and on a team's: its session
/// is this machine's (never on the team database), its agent the board's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agents_connected_over_mcp_are_reachable_on_a_machines_board_and_on_a_teams() {
    for in_team in [false, true] {
        let d = if in_team {
            TestDaemon::start_in_team(&tether_testkit::pg::team_board_url(), "laptop", Default::default()).await
        } else {
            TestDaemon::start().await
        };
        let a = d.mcp().await;
        streams_open(&d, 1).await;
        let started = tool(&a, "session_start", json!({"name": "ann"})).await;
        assert_eq!(started["agent"]["surface"], "full", "in a team: {in_team}: {started}");
        let (status, listed) = d.get("/api/agents").await;
        assert_eq!(status, 200, "{listed}");
        let agents = listed["agents"].as_array().cloned().unwrap_or_default();
        let ann = agents.iter().find(|x| x["name"] == "ann").unwrap_or_else(|| panic!("{agents:?}"));
        assert_eq!(ann["surface"], "full", "in a team: {in_team}: {ann}");
        a.cancel().await.unwrap();
    }
}
