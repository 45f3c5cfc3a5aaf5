//! How MCP tools fail, as a client sees it: arguments that do not fit a tool's schema, values
//! the engine refuses, ids that name nothing and what an agent may not do all come back as a
//! tool result with `isError` and `{code, message}` (the model reads it); a tool that does not
//! exist is a JSON-RPC error.

use rmcp::ServiceError;
use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};
use tether_testkit::daemon::TestDaemon;

use crate::mcp_util::{call, err, fails, tool};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failures_come_back_coded() {
    let d = TestDaemon::start().await;
    let c = d.mcp().await;
    tool(&c, "session_start", json!({"name": "ana"})).await;
    tool(&c, "task_create", json!({"title": "Exists"})).await;

    // Arguments that do not parse (a missing field, a wrong type, a value outside an enum):
    // rmcp's words, in our shape.
    let unparsed = [
        ("task_create", json!({})),
        ("task_create", json!({"title": 7})),
        ("task_list", json!({"limit": "ten"})),
        ("task_claim", json!({"lease_minutes": "five"})),
        ("task_update", json!({"status": "done"})),
        ("task_update", json!({"id": "T-1", "status": "sideways"})),
        ("task_update", json!({"id": "T-1", "add_labels": "one"})),
        ("signal_send", json!({"to": "ana"})),
        ("session_start", json!({"role": ["dev"]})),
        ("sessions_find", json!({"limit": -1})),
        ("session_read", json!({})),
        ("session_tag", json!({"session": "x", "bookmarked": "yes"})),
        ("agent_run", json!({"prompt": "x", "mode": "fast"})),
        ("agent_run", json!({"prompt": "x", "permissions": {"allow": "Write(**)"}})),
    ];
    for (name, args) in unparsed {
        let e = fails(&c, name, args.clone()).await;
        assert_eq!(e["code"], "invalid_input", "{name} {args}: {e}");
        let message = e["message"].as_str().unwrap();
        assert!(!message.starts_with("failed to deserialize"), "{name}: {message}");
    }
    // A budget past the ceiling or not a number is refused naming the forms, never read as no
    // limit (`inf` and `1e309` were i64::MAX tokens).
    for budget in
        [json!("inf"), json!("1e309"), json!("NaN"), json!("-1"), json!("$1e300"), json!(9223372036854775808u64)]
    {
        let e = fails(&c, "agent_run", json!({"prompt": "x", "budget": budget})).await;
        assert_eq!(e["code"], "invalid_input", "{budget}: {e}");
        assert!(e["message"].as_str().unwrap().contains("write tokens (200000, 200k"), "{budget}: {e}");
    }
    let e = fails(&c, "task_update", json!({"id": "T-1", "status": "sideways"})).await;
    assert!(e["message"].as_str().unwrap().contains("use one of todo, in_progress"), "{e}");
    // No arguments at all is the same as `{}`.
    let bare = c.call_tool(CallToolRequestParams::new("task_create")).await.unwrap();
    assert_eq!(err(&serde_json::to_value(bare).unwrap())["code"], "invalid_input");
    let listed = c.call_tool(CallToolRequestParams::new("task_list")).await.unwrap();
    assert_ne!(listed.is_error, Some(true), "task_list needs no arguments");

    // Values the engine refuses.
    let refused = [
        ("task_create", json!({"title": "  "})),
        ("task_create", json!({"title": "x", "priority": "whenever"})),
        ("task_create", json!({"title": "x", "status": "done"})),
        ("task_list", json!({"status": ["nope"]})),
        ("signal_send", json!({"to": "ana", "type": "gossip", "body": "hi"})),
        ("signal_send", json!({"to": "ana", "body": "x".repeat(16 * 1024 + 1)})),
        ("signal_send", json!({"to": "ana", "body": ""})),
        ("session_start", json!({"name": "  "})),
        ("sessions_find", json!({"query": "\"unbalanced", "project": "all"})),
    ];
    for (name, args) in refused {
        let e = fails(&c, name, args.clone()).await;
        assert_eq!(e["code"], "invalid_input", "{name} {args}: {e}");
    }

    // Ids that name nothing.
    let missing = [
        ("task_list", json!({"id": "T-404"}), "T-404"),
        ("task_list", json!({"id": "X-1"}), "task ids look like T-12"),
        ("task_claim", json!({"id": "T-404"}), "T-404"),
        ("task_update", json!({"id": "T-404", "comment": "hello"}), "T-404"),
        ("task_create", json!({"title": "x", "depends_on": ["T-404"]}), "T-404"),
        ("signal_send", json!({"reply_to": "S-404", "body": "hi"}), "S-404"),
        ("signal_send", json!({"to": "nobody", "body": "hi"}), "nobody"),
        ("session_read", json!({"session": "no-such-chat"}), "no-such-chat"),
        ("session_tag", json!({"session": "no-such-chat", "add_tags": ["x"]}), "no-such-chat"),
        ("agent_run", json!({"task": "T-404"}), "T-404"),
        ("agent_run", json!({"followup_of": "R-404", "prompt": "x"}), "R-404"),
    ];
    for (name, args, id) in missing {
        let e = fails(&c, name, args.clone()).await;
        assert_eq!(e["code"], "not_found", "{name} {args}: {e}");
        assert!(e["message"].as_str().unwrap().contains(id), "the message names {id}: {e}");
    }

    // What an agent may not do: force a change (the person's), run outside the allowed roots.
    let e = fails(&c, "task_update", json!({"id": "T-1", "force": true, "status": "cancelled"})).await;
    assert_eq!(e["code"], "forbidden", "{e}");
    assert!(e["message"].as_str().unwrap().contains("only the person"), "{e}");
    let outside = d.folder("outside").to_string_lossy().into_owned();
    let e = fails(&c, "agent_run", json!({"prompt": "x", "workspace": outside})).await;
    assert_eq!(e["code"], "forbidden", "{e}");

    // A failed call changed nothing.
    let tasks = tool(&c, "task_list", json!({"status": ["todo", "cancelled"]})).await;
    let titles: Vec<&Value> = tasks["tasks"].as_array().unwrap().iter().map(|t| &t["title"]).collect();
    assert_eq!(titles, [&json!("Exists")], "{tasks}");

    // A tool that does not exist is a JSON-RPC error, not a tool result.
    let r = c.call_tool(CallToolRequestParams::new("no_such_tool")).await;
    match r {
        Err(ServiceError::McpError(e)) => {
            assert_eq!(e.code.0, -32602, "{e:?}");
            assert!(e.message.contains("no_such_tool") || e.message.contains("not found"), "{e:?}");
        }
        other => panic!("expected a JSON-RPC error, got {other:?}"),
    }
    // And the session goes on.
    assert_eq!(call(&c, "task_list", json!({})).await["isError"], false);

    c.cancel().await.unwrap();
    d.stop().await;
}
