//! Code origin through the surfaces: an `afterFileEdit` hook carrying what `tether hook`
//! computed is recorded after Cursor has its answer; the GUI's `/api/blame`, a chat's files and
//! the trace routes, and the MCP tool `code_origin` (with the turn that made the edit, and a
//! refusal outside the calling chat's workspace) map onto `ops::trace`.

use std::time::Duration;

use serde_json::{Value, json};
use tether_testkit::eras::ids::B_SPLIT;
use tether_trace::capture::{Replacement, capture, pack};

use crate::mcp_util::{fails, fixture_daemon, hook, poll, tool};

fn git(dir: &std::path::Path, args: &[&str]) {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "P")
        .env("GIT_AUTHOR_EMAIL", "p@x")
        .env("GIT_COMMITTER_NAME", "P")
        .env("GIT_COMMITTER_EMAIL", "p@x")
        .env("GIT_AUTHOR_DATE", "2020-01-01T00:00:00Z")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edit_hook_is_recorded_and_every_surface_answers_which_chat_wrote_a_line() {
    let d = fixture_daemon().await;
    let repo = tempfile::tempdir().unwrap();
    let root = repo.path().canonicalize().unwrap();
    let file = root.join("calc.rs");
    std::fs::write(&file, "fn main() {}\n").unwrap();
    git(&root, &["init", "-q"]);
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-qm", "base"]);
    let new = "fn main() {}\n\nfn area(w: f64, h: f64) -> f64 {\n    w * h\n}\n";
    std::fs::write(&file, new).unwrap();
    let edit = Replacement { old_string: "fn main() {}\n".into(), new_string: new.into() };
    let c = capture(Some(new), &[edit]);
    let path = file.to_string_lossy().into_owned();
    let trace = json!({"edit": "e-1", "file": path, "ranges": c.ranges, "written": pack(&c.written), "replaced": pack(&c.replaced)});
    hook(&d, json!({"hook_event_name": "afterFileEdit", "conversation_id": B_SPLIT, "model": "gpt-5", "workspace_roots": [root], "trace": trace}))
        .await;
    // Hashes that are not hashes: the hook still answers; nothing is recorded.
    hook(&d, json!({"hook_event_name": "afterFileEdit", "conversation_id": "x", "trace": {"edit": "e-2", "file": path, "written": "zz"}}))
        .await;

    let q = format!("/api/blame?path={}", urlencode(&path));
    let b = poll("the edit recorded", Duration::from_secs(10), || async {
        let (s, b) = d.get(&q).await;
        (s == 200 && b["counts"]["ai"] == 4).then_some(b)
    })
    .await;
    let origins: Vec<&str> = b["lines"].as_array().unwrap().iter().map(|l| l["origin"].as_str().unwrap()).collect();
    assert_eq!(origins, ["unknown", "ai", "ai", "ai", "ai"], "{b}");
    assert_eq!(b["edits"].as_array().unwrap().len(), 1, "the malformed edit was not recorded: {b}");
    let e = &b["edits"][0];
    assert_eq!(
        (&e["session"], &e["title"], &e["model"], &e["kind"]),
        (&json!(B_SPLIT), &json!("Date parsing narwhal"), &json!("gpt-5"), &json!("agent")),
        "{b}"
    );
    let (s, one) = d.get(&format!("{q}&line=4")).await;
    assert_eq!((s.as_u16(), one["lines"].as_array().unwrap().len()), (200, 1), "{one}");
    let (s, err) = d.get(&format!("{q}&line=99")).await;
    assert_eq!((s.as_u16(), &err["code"]), (400, &json!("invalid_input")), "{err}");

    let (_, files) = d.get(&format!("/api/sessions/{B_SPLIT}/files")).await;
    assert_eq!(files[0]["path"], "calc.rs", "{files}");
    assert_eq!(
        files[0]["ranges"][0],
        json!({"start_line": 2, "end_line": 5, "content_hash": c.ranges[0].content_hash})
    );

    // MCP: the origin and the words of the turn that made it, for a chat working in the
    // repository (its hook says so: an agent reads origins only inside its chat's workspace).
    let mcp = d.mcp().await;
    let announce = json!({"hook_event_name": "beforeMCPExecution", "conversation_id": B_SPLIT,
        "workspace_roots": [root], "tool_name": "code_origin", "tool_input": {"path": path, "line": 4}});
    hook(&d, announce).await;
    let o = tool(&mcp, "code_origin", json!({"path": path, "line": 4})).await;
    assert_eq!(o["lines"][0]["origin"], "ai", "{o}");
    let excerpt = &o["excerpts"][0];
    assert_eq!(excerpt["session"], B_SPLIT, "{o}");
    assert!(!excerpt["messages"].as_array().unwrap().is_empty(), "{o}");
    // A file outside the chat's workspace is not its agent's to read.
    let elsewhere = tempfile::tempdir().unwrap();
    std::fs::write(elsewhere.path().join("secret.txt"), "x\n").unwrap();
    let refused = fails(&mcp, "code_origin", json!({"path": elsewhere.path().join("secret.txt")})).await;
    assert_eq!(refused["code"], "forbidden", "{refused}");

    // Records into the repository only when asked; the export is JSON lines of Agent Trace.
    let (_, repos) = d.get("/api/trace/repos").await;
    assert_eq!(repos[0]["publish"], Value::Null, "{repos}");
    for bad in ["", "  ", "a\u{0}b", "/no/such/folder"] {
        let (s, e) = d.put("/api/trace/repos", json!({"repo": bad, "store": "notes"})).await;
        assert_eq!((s.as_u16(), &e["code"]), (400, &json!("invalid_input")), "{bad:?}: {e}");
    }
    let (s, on) = d.put("/api/trace/repos", json!({"repo": root, "store": "notes"})).await;
    assert_eq!((s.as_u16(), &on["publish"]), (200, &json!("notes")), "{on}");
    let res = d.request(reqwest::Method::GET, "/api/trace/export").send().await.unwrap();
    let text = res.text().await.unwrap();
    let rec: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(rec["files"][0]["path"], "calc.rs", "{rec}");
    assert_eq!(rec["files"][0]["conversations"][0]["url"], format!("tether://sessions/{B_SPLIT}"));
    assert!(rec["metadata"]["dev.tether"].get("excerpt").is_none(), "no chat text unless asked");
    let (_, written) = d.get("/api/trace/written").await;
    assert_eq!(written[0]["lines"], 4, "{written}");
    d.stop().await;
}

fn urlencode(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-_./".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}
