//! Code origin end to end through `tether`: `init` installs the edit hooks; Cursor's
//! `afterFileEdit` through `tether hook` (a 5 MB edit too: it travels as hashes, in parts under
//! the daemon's 1 MiB limit) reaches the daemon; `tether blame` names the chat, a person's edit
//! and the lines no one recorded; `tether trace export` writes Agent Trace records, and `trace
//! enable` has the daemon write them as git notes on the next commit.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::runs::{Env, nix_term};

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "Person")
        .env("GIT_AUTHOR_EMAIL", "p@example.com")
        .env("GIT_COMMITTER_NAME", "Person")
        .env("GIT_COMMITTER_EMAIL", "p@example.com")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// What Cursor does after an agent's edit: runs the hook with the payload on stdin.
fn hook(e: &Env, event: &str, payload: &Value) -> String {
    let mut child = e.cmd().args(["hook", event]).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    child.stdin.take().unwrap().write_all(payload.to_string().as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

#[test]
fn edit_hooks_reach_blame_export_and_notes() {
    let e = Env::new(json!({}));
    let out = e.run(&["init", "--global"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let hooks: Value = serde_json::from_slice(&std::fs::read(e.home().join(".cursor/hooks.json")).unwrap()).unwrap();
    for event in ["afterFileEdit", "afterTabFileEdit", "afterShellExecution"] {
        assert!(hooks["hooks"][event][0]["command"].as_str().unwrap().ends_with(&format!("hook {event}")), "{hooks}");
    }

    let repo = &e.ws;
    std::fs::write(repo.join("calc.py"), "import math\n").unwrap();
    git(repo, &["init", "-q"]);
    git(repo, &["add", "calc.py"]);
    git(repo, &["commit", "-qm", "base"]);
    // The daemon's log goes to a file: a pipe nobody reads would stall it once full.
    let log = std::fs::File::create(e.dir.path().join("daemon.log")).unwrap();
    let mut daemon = e.cmd().args(["serve", "--port", "0"]).stdout(Stdio::null()).stderr(log).spawn().unwrap();
    e.wait_for("the daemon", 30, || e.dir.path().join("data/daemon.json").exists());

    // An agent's edit: a function added below the import.
    let new = "import math\n\ndef area(r):\n    return math.pi * r * r\n";
    std::fs::write(repo.join("calc.py"), new).unwrap();
    let file = repo.join("calc.py").to_string_lossy().into_owned();
    let payload = json!({"hook_event_name": "afterFileEdit", "conversation_id": "chat-77", "generation_id": "g1",
        "model": "claude-4.5-sonnet", "workspace_roots": [repo], "file_path": file,
        "edits": [{"old_string": "import math\n", "new_string": new}]});
    assert_eq!(hook(&e, "afterFileEdit", &payload), "{}", "the hook answers at once, gating nothing");
    // A 5 MB generated file written by an agent in one edit.
    let big: String = (0..150_000).map(|i| format!("ROW_{i} = compute({i}, {})  # generated row\n", i * 7)).collect();
    assert!(big.len() > 5_000_000);
    std::fs::write(repo.join("table.py"), &big).unwrap();
    let big_file = repo.join("table.py").to_string_lossy().into_owned();
    let payload = json!({"hook_event_name": "afterFileEdit", "conversation_id": "chat-77", "file_path": big_file,
        "workspace_roots": [repo], "edits": [{"old_string": "", "new_string": big}]});
    assert_eq!(hook(&e, "afterFileEdit", &payload), "{}");
    // Bad input never blocks Cursor: no file, a relative path, no JSON at all.
    assert_eq!(hook(&e, "afterFileEdit", &json!({"conversation_id": "c", "edits": "nope"})), "{}");
    assert_eq!(hook(&e, "afterFileEdit", &json!({"file_path": "rel.py", "edits": [{"new_string": "x"}]})), "{}");

    e.wait_for("the big edit recorded", 60, || {
        let b = e.json(&["blame", &big_file, "-L", "149999,150000"]);
        b["counts"]["ai"] == 2
    });
    git(repo, &["add", "-A"]);
    git(repo, &["commit", "-qm", "agent work"]);
    // A person's line after it.
    std::fs::write(repo.join("calc.py"), format!("{new}\nprint(area(2))\n")).unwrap();
    let b = e.json(&["blame", &file]);
    let origins: Vec<&str> = b["lines"].as_array().unwrap().iter().map(|l| l["origin"].as_str().unwrap()).collect();
    assert_eq!(origins, ["unknown", "ai", "ai", "ai", "human", "human"], "{b:#}");
    assert_eq!(b["edits"][0]["conversation_id"], "chat-77");
    let text = String::from_utf8(e.run(&["blame", &file, "-L", "3,4"]).stdout).unwrap();
    assert!(text.lines().any(|l| l.starts_with("3 ai      [1]") && l.ends_with("def area(r):")), "{text}");
    assert!(text.contains("Cursor agent, claude-4.5-sonnet"), "{text}");

    // Agent Trace records: one per edit, chat text left out.
    let out_file = e.dir.path().join("trace.jsonl");
    let out = e.run(&["trace", "export", "--repo", repo.to_str().unwrap(), "-o", out_file.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let records: Vec<Value> =
        std::fs::read_to_string(&out_file).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(records.len(), 2);
    let r = &records[0];
    assert_eq!((&r["version"], &r["files"][0]["path"]), (&json!("0.1"), &json!("calc.py")), "{r}");
    let conv = &r["files"][0]["conversations"][0];
    assert_eq!(conv["contributor"], json!({"type": "ai", "model_id": "anthropic/claude-4.5-sonnet"}));
    assert_eq!((&conv["ranges"][0]["start_line"], &conv["ranges"][0]["end_line"]), (&json!(2), &json!(4)), "{r}");
    assert_eq!(r["vcs"]["revision"].as_str().unwrap().len(), 40);

    // Opt in: the next commit gets its records as a git note; nothing before that did.
    assert!(git(repo, &["notes", "--ref=agent-trace", "list"]).is_empty());
    assert!(e.run(&["trace", "enable", "--repo", repo.to_str().unwrap(), "--store", "notes"]).status.success());
    std::fs::write(repo.join("calc.py"), format!("{new}\ndef circumference(r):\n    return 2 * math.pi * r\n"))
        .unwrap();
    let payload = json!({"hook_event_name": "afterFileEdit", "conversation_id": "chat-78", "file_path": file,
        "workspace_roots": [repo], "edits": [{"old_string": "", "new_string": "\ndef circumference(r):\n    return 2 * math.pi * r\n"}]});
    hook(&e, "afterFileEdit", &payload);
    e.wait_for("the edit recorded", 30, || e.json(&["blame", &file])["counts"]["ai"] == 6);
    git(repo, &["commit", "-qam", "circumference"]);
    e.wait_for("the daemon to write the note", 40, || {
        git(repo, &["notes", "--ref=agent-trace", "list"]).lines().count() == 1
    });
    let note = git(repo, &["notes", "--ref=agent-trace", "show", "HEAD"]);
    let rec: Value = serde_json::from_str(note.lines().next().unwrap()).unwrap();
    assert_eq!(rec["files"][0]["conversations"][0]["url"], "tether://sessions/chat-78", "{note}");
    assert_eq!(git(repo, &["status", "--porcelain"]), "", "notes leave the checkout alone");
    nix_term(&mut daemon);
}

/// `tether hook` reads an edited file only as a regular file inside the chat's workspace roots,
/// without following a link and without blocking: a FIFO there answers at once (it held the hook
/// for good), and a file outside the roots or reached through a link is not read (its edit still
/// travels, as hashes without positions), while a plain file inside has its lines placed.
#[test]
fn the_hook_reads_only_regular_files_inside_the_workspace() {
    let e = Env::new(json!({}));
    let repo = e.ws.canonicalize().unwrap();
    std::fs::write(repo.join("base.py"), "import math\n").unwrap();
    git(&repo, &["init", "-q"]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "base"]);
    let outside = e.dir.path().canonicalize().unwrap().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let text = "SECRET_TOKEN = 1\nOTHER = 2\n";
    std::fs::write(outside.join("secret.py"), text).unwrap();
    std::fs::write(repo.join("plain.py"), text).unwrap();
    tether_testkit::fs::symlink(outside.join("secret.py"), repo.join("link.py")).unwrap();
    let fifo = repo.join("pipe.py");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let log = std::fs::File::create(e.dir.path().join("daemon.log")).unwrap();
    let mut daemon = e.cmd().args(["serve", "--port", "0"]).stdout(Stdio::null()).stderr(log).spawn().unwrap();
    e.wait_for("the daemon", 30, || e.dir.path().join("data/daemon.json").exists());

    let edit = |file: &Path, chat: &str| {
        json!({"hook_event_name": "afterFileEdit", "conversation_id": chat, "workspace_roots": [repo],
            "file_path": file, "edits": [{"old_string": "", "new_string": "OTHER = 2\n"}]})
    };
    // The FIFO: an answer within seconds (before, the hook never answered).
    let mut child =
        e.cmd().args(["hook", "afterFileEdit"]).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    child.stdin.take().unwrap().write_all(edit(&fifo, "chat-fifo").to_string().as_bytes()).unwrap();
    let at = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if at.elapsed() > std::time::Duration::from_secs(15) {
            let _ = child.kill();
            panic!("tether hook is held by a FIFO named as the edited file");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(String::from_utf8(child.wait_with_output().unwrap().stdout).unwrap().trim(), "{}");
    for (file, chat) in [
        (repo.join("plain.py"), "chat-plain"),
        (outside.join("secret.py"), "chat-out"),
        (repo.join("link.py"), "chat-link"),
    ] {
        assert_eq!(hook(&e, "afterFileEdit", &edit(&file, chat)), "{}");
    }
    let out_file = e.dir.path().join("trace.jsonl");
    let mut records = Vec::new();
    e.wait_for("the edits recorded", 30, || {
        let out = e.run(&["trace", "export", "-o", out_file.to_str().unwrap()]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        records = std::fs::read_to_string(&out_file)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .collect();
        records.len() == 4
    });
    let ranges = |chat: &str| -> Value {
        let r = records
            .iter()
            .find(|r| r["files"][0]["conversations"][0]["url"] == format!("tether://sessions/{chat}"))
            .unwrap_or_else(|| panic!("no record of {chat}: {records:?}"));
        r["files"][0]["conversations"][0]["ranges"].clone()
    };
    assert_eq!(ranges("chat-plain")[0]["start_line"], 2, "a plain file in the workspace is read");
    for chat in ["chat-out", "chat-link", "chat-fifo"] {
        assert!(ranges(chat).as_array().is_none_or(|r| r.is_empty()), "{chat}'s file was not read: {}", ranges(chat));
    }
    nix_term(&mut daemon);
}
