//! `tether signal …` end to end across processes: kill -9 during a burst of sends and drains loses
//! no acknowledged signal and hands none out twice; bad input gets coded errors and writes nothing.

use std::collections::HashSet;
use std::process::Child;
use std::time::Duration;

use serde_json::Value;

use crate::env::Sandbox;

fn ids(v: &Value) -> Vec<String> {
    v.as_array().unwrap().iter().map(|s| s["id"].as_str().unwrap().to_owned()).collect()
}

/// Senders and drainers run side by side, each its own process, and every third of each is
/// killed with SIGKILL somewhere between start and commit. Every send that printed its id is
/// stored; no two drains that finished returned the same signal; a drain killed after its
/// commit may take signals with it, but they are marked read, never handed out again.
#[test]
fn kill_9_during_a_burst_of_sends_and_drains_loses_and_duplicates_nothing() {
    let h = Sandbox::new();
    h.json(&["signals", "list"]);
    let mut acked = Vec::new();
    let mut drained: Vec<String> = Vec::new();
    let mut killed = 0;
    let mut running: Vec<(bool, Child)> = Vec::new();
    for i in 0..60u64 {
        let body = format!("burst {i}");
        running.push((true, h.spawn(&["signal", "send", "--to", "human", "--type", "status_update", &body, "--json"])));
        if i % 4 == 0 {
            running.push((false, h.spawn(&["signals", "pending", "--json"])));
        }
        if i % 3 == 0 {
            std::thread::sleep(Duration::from_millis((i * 7) % 30));
            let n = running.len();
            for (_, c) in running.iter_mut().skip(n.saturating_sub(2)) {
                if c.kill().is_ok() {
                    killed += 1;
                }
            }
        }
        if running.len() >= 8 || i == 59 {
            for (send, child) in running.drain(..) {
                let out = child.wait_with_output().unwrap();
                if !out.status.success() {
                    continue;
                }
                let v: Value = serde_json::from_slice(&out.stdout).unwrap();
                if send {
                    acked.push(v["id"].as_str().unwrap().to_owned());
                } else {
                    drained.extend(ids(&v));
                }
            }
        }
    }
    drained.extend(ids(&h.json(&["signals", "pending"])));
    eprintln!("{} sends acknowledged, {} signals drained, {killed} processes killed", acked.len(), drained.len());
    assert!(killed > 0 && acked.len() >= 30, "killed {killed}, acked {}", acked.len());

    let unique: HashSet<&String> = drained.iter().collect();
    assert_eq!(unique.len(), drained.len(), "a signal was handed out twice");
    let stored = h.json(&["signals", "list", "--to", "human", "--limit", "1000"]);
    let stored_ids: HashSet<String> = ids(&stored).into_iter().collect();
    for id in &acked {
        assert!(stored_ids.contains(id), "acknowledged {id} is gone");
    }
    for s in stored.as_array().unwrap() {
        let d = &s["deliveries"][0];
        assert!(d["drained_at"].is_string(), "{} was never drained", s["id"]);
        assert_eq!(d["obligation"], "closed", "a drained status update has no open obligation");
    }
    assert!(h.json(&["signals", "pending"]).as_array().unwrap().is_empty());
}

#[test]
fn bad_signals_get_coded_errors_and_write_nothing() {
    let h = Sandbox::new();
    let big = "x".repeat(16 * 1024 + 1);
    for (args, code) in [
        (vec!["signal", "send", "--to", "nobody", "hi"], "not_found"),
        (vec!["signal", "send", "--to", "human", "--type", "gossip", "hi"], "invalid_input"),
        (vec!["signal", "send", "--to", "human", big.as_str()], "invalid_input"),
        (vec!["signal", "reply", "S-9", "hi"], "not_found"),
        (vec!["signal", "show", "S-9"], "not_found"),
    ] {
        let out = h.cmd().args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && err.starts_with(&format!("error[{code}]")), "{:?}: {err}", &args[..2]);
    }
    assert!(h.json(&["signals", "list"]).as_array().unwrap().is_empty());

    let sent = h.json(&["signal", "send", "--to", "human", "note to self", "--type", "status_update"]);
    let shown = h.cmd().args(["signal", "show", sent["id"].as_str().unwrap()]).output().unwrap();
    let text = String::from_utf8_lossy(&shown.stdout);
    assert!(text.contains("note to self") && text.contains("Deliveries"), "{text}");
}
