//! `tether task …` end to end: the atomic claim across many processes, kill -9 during a burst of
//! task writes, and the human-facing commands.

use std::collections::{HashMap, HashSet};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

use crate::env::Sandbox;

/// A sandbox where `tether task …` runs as one person or another.
struct Home(Sandbox);

impl Home {
    fn new() -> Self {
        Self(Sandbox::new())
    }

    fn cmd(&self, user: &str) -> Command {
        let mut c = self.0.cmd();
        c.env("TETHER_USER", user).arg("task");
        c
    }

    fn run(&self, user: &str, args: &[&str]) -> Output {
        self.cmd(user).args(args).output().unwrap()
    }

    fn json(&self, user: &str, args: &[&str]) -> Value {
        let out = self.run(user, &[args, &["--json"]].concat());
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{args:?} printed invalid JSON: {e}"))
    }
}

/// 50 claimers, each its own process, race for 10 tasks; three rounds on fresh boards. Every task
/// ends with exactly one holder, no claimer holds two, and history records exactly one claim each.
#[test]
fn fifty_processes_racing_for_ten_tasks_never_double_claim() {
    for round in 0..3 {
        let h = Home::new();
        for i in 0..10 {
            h.json("pm", &["add", &format!("task {i}")]);
        }
        let children: Vec<_> = (0..50)
            .map(|c| {
                h.cmd(&format!("claimer-{round}-{c}"))
                    .args(["claim", "--json"])
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        let mut winners: HashMap<String, String> = HashMap::new();
        for (c, child) in children.into_iter().enumerate() {
            let out = child.wait_with_output().unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            if out.status.success() {
                let t: Value = serde_json::from_slice(&out.stdout).unwrap();
                let id = t["id"].as_str().unwrap().to_owned();
                assert_eq!(t["assignee"], format!("claimer-{round}-{c}"));
                assert!(winners.insert(id.clone(), format!("claimer-{round}-{c}")).is_none(), "{id} claimed twice");
            } else {
                assert!(err.contains("error[nothing_to_claim]"), "a loser must be told why: {err}");
            }
        }
        assert_eq!(winners.len(), 10, "round {round}: every task claimed once");
        let board = h.json("pm", &["list"]);
        for t in board["tasks"].as_array().unwrap() {
            let id = t["id"].as_str().unwrap();
            assert_eq!(t["status"], "in_progress");
            assert_eq!(t["assignee"].as_str(), winners.get(id).map(String::as_str), "{id}: the board names the winner");
            let d = h.json("pm", &["show", id]);
            let claims: Vec<&Value> =
                d["history"].as_array().unwrap().iter().filter(|e| e["kind"] == "claimed").collect();
            assert_eq!(claims.len(), 1, "{id}: one claim in the history");
            assert_eq!(claims[0]["actor"].as_str(), winners.get(id).map(String::as_str));
        }
        let holders: HashSet<&String> = winners.values().collect();
        assert_eq!(holders.len(), 10, "no claimer holds two tasks");
    }
}

/// Writers are killed with SIGKILL at random points of a burst; every write they acknowledged is
/// there afterwards, numbers are never reused, and the database is intact.
#[test]
fn kill_9_during_a_burst_of_task_writes_loses_no_acknowledged_write() {
    let h = Home::new();
    let mut acked: Vec<String> = Vec::new();
    let mut killed = 0;
    for i in 0..60u64 {
        let mut child = h
            .cmd("writer")
            .args(["add", &format!("burst {i}"), "--json"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        if i % 3 == 0 {
            // Somewhere between startup and the commit.
            std::thread::sleep(std::time::Duration::from_millis((i * 7) % 40));
            if child.kill().is_ok() {
                killed += 1;
            }
        }
        let out = child.wait_with_output().unwrap();
        if out.status.success() {
            let t: Value = serde_json::from_slice(&out.stdout).unwrap();
            acked.push(t["id"].as_str().unwrap().to_owned());
        }
    }
    assert!(killed > 0 && acked.len() >= 40, "killed {killed}, acked {}", acked.len());
    let all = h.json("pm", &["list", "--limit", "500"]);
    let ids: Vec<&str> = all["tasks"].as_array().unwrap().iter().map(|t| t["id"].as_str().unwrap()).collect();
    for a in &acked {
        assert!(ids.contains(&a.as_str()), "acknowledged {a} is gone");
    }
    let unique: HashSet<&&str> = ids.iter().collect();
    assert_eq!(unique.len(), ids.len(), "no number reused");
    assert!(ids.len() <= acked.len() + killed, "nothing appears that was never written");
    // The next write still works and gets a fresh number.
    let next = h.json("pm", &["add", "after the burst"]);
    assert!(!ids.contains(&next["id"].as_str().unwrap()));
    let db = rusqlite::Connection::open(h.0.dir.path().join("data").join("index.db")).unwrap();
    let ok: String = db.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
    assert_eq!(ok, "ok");
}

#[test]
fn people_work_the_board_from_the_cli_with_clear_coded_errors() {
    let h = Home::new();
    h.json("ann", &["add", "Parser", "-p", "high", "-l", "core", "--accept", "every era"]);
    h.json("ann", &["add", "CLI", "--depends-on", "T-1", "--role", "dev"]);
    let err = |out: Output| String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(err(h.run("bob", &["claim", "T-2"])).contains("error[dependencies_open]: T-2 waits for T-1"));
    assert!(err(h.run("bob", &["add", "x", "--depends-on", "T-9"])).contains("error[not_found]"));
    assert!(err(h.run("bob", &["update", "T-2", "--add-dep", "T-2"])).contains("error[dependency_cycle]"));
    assert!(err(h.run("bob", &["update", "T-1", "--status", "in_review"])).contains("error[illegal_transition]"));
    assert!(err(h.run("bob", &["update", "T-1", "--status", "sideways"])).contains("error[invalid_input]"));

    let c = h.json("bob", &["claim"]);
    assert_eq!((c["id"].as_str(), c["assignee"].as_str()), (Some("T-1"), Some("bob")));
    assert!(err(h.run("cy", &["claim", "T-1"])).contains("error[task_held]: T-1 is held by bob"));
    h.json("cy", &["comment", "T-1", "I know the lexical format"]);
    h.json("bob", &["release", "T-1", "--note", "eras done, lexical left"]);
    h.json("cy", &["claim", "T-1"]);
    let done = h.json("cy", &["done", "T-1", "-s", "all eras parse"]);
    assert_eq!((done["status"].as_str(), done["summary"].as_str()), (Some("done"), Some("all eras parse")));
    let d = h.json("ann", &["show", "T-1"]);
    let notes: Vec<&str> = d["notes"].as_array().unwrap().iter().map(|n| n["kind"].as_str().unwrap()).collect();
    assert_eq!(notes, ["comment", "handoff"]);
    let r = h.json("ann", &["update", "T-2", "--assign", "cy", "--status", "in_progress"]);
    assert_eq!(r["assignee"], "cy");
    // Reopening the dependency blocks nothing already started, and shows on the board.
    h.json("ann", &["update", "T-1", "--status", "todo"]);

    let board = h.run("ann", &["board"]);
    let text = String::from_utf8_lossy(&board.stdout);
    assert!(text.contains("TODO (1)") && text.contains("IN_PROGRESS (1)") && text.contains("T-2 CLI"), "{text}");
    let agents = Command::new(assert_cmd::cargo::cargo_bin("tether"))
        .env_clear()
        .env("HOME", h.0.dir.path().join("home"))
        .env("TETHER_HOME", h.0.dir.path().join("data"))
        .args(["agents", "list", "--json"])
        .output()
        .unwrap();
    let agents: Value = serde_json::from_slice(&agents.stdout).unwrap();
    let names: HashSet<&str> = agents.as_array().unwrap().iter().map(|a| a["name"].as_str().unwrap()).collect();
    assert_eq!(names, HashSet::from(["ann", "bob", "cy"]));

    let md = h.run("ann", &["export", "--format", "md"]);
    assert!(String::from_utf8_lossy(&md.stdout).contains("eras done, lexical left"));
}
