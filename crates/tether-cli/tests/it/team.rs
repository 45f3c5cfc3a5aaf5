//! `tether team`: two data dirs joined to one real PostgreSQL database (the test kit's throwaway
//! cluster) act as two machines sharing a board; each way joining fails is a coded error; leaving
//! gives a machine its own board back as it was.

use std::io::Write;
use std::process::{Command, Stdio};

use tether_testkit::pg::{Cluster, PASSWORD};

use crate::env::Sandbox;

fn machine() -> Sandbox {
    let s = Sandbox::new();
    let ok = s.cmd().args(["token", "store", "file"]).output().unwrap().status.success();
    assert!(ok, "token store file");
    s
}

/// `cmd` with `stdin` written to it: (exit ok, stdout, stderr).
fn fed(mut cmd: Command, stdin: &str) -> (bool, String, String) {
    let mut child = cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).into())
}

fn join(m: &Sandbox, url: &str, name: &str, password: &str) -> (bool, String, String) {
    let mut c = m.cmd();
    c.args(["team", "join", url, "--machine", name, "--password-stdin"]);
    fed(c, password)
}

fn run(m: &Sandbox, args: &[&str]) -> String {
    let out = m.cmd().args(args).output().unwrap();
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into()
}

#[test]
fn two_machines_share_one_board_and_leaving_gives_the_local_one_back() {
    let url = Cluster::shared().database();
    let (a, b) = (machine(), machine());
    run(&a, &["task", "add", "only on the laptop"]);

    let (ok, _, err) = join(&a, &url, "laptop", "wrong");
    assert!(!ok && err.contains("error[forbidden]") && err.contains("refused"), "{err}");
    let (ok, _, err) = join(&a, &url.replace(&Cluster::shared().port.to_string(), "1"), "laptop", PASSWORD);
    assert!(!ok && err.contains("error[busy]") && err.contains("nothing answers"), "{err}");
    let (ok, _, err) = join(&a, &url.replace("tether@", "tether:pw@"), "laptop", PASSWORD);
    assert!(!ok && err.contains("error[invalid_input]") && err.contains("carries a password"), "{err}");

    let (ok, out, err) = join(&a, &url, "laptop", PASSWORD);
    assert!(ok && out.contains("reachable"), "{out}{err}");
    let (ok, _, err) = join(&b, &url, "laptop", PASSWORD);
    assert!(!ok && err.contains("error[conflict]") && err.contains("--machine"), "{err}");
    let (ok, _, err) = join(&b, &url, "workstation", PASSWORD);
    assert!(ok, "{err}");

    run(&a, &["task", "add", "write the parser"]);
    let listed = run(&b, &["task", "list"]);
    assert!(listed.contains("T-1") && listed.contains("write the parser"), "{listed}");
    assert!(!listed.contains("only on the laptop"), "the laptop's own board stays its own: {listed}");
    run(&b, &["task", "claim", "T-1"]);
    let seen = a.json(&["task", "show", "T-1"]);
    assert_eq!(seen["status"], "in_progress", "{seen}");

    let status = a.json(&["team", "status"]);
    assert_eq!((status["joined"].as_bool(), status["reachable"].as_bool()), (Some(true), Some(true)), "{status}");
    let names: Vec<&str> = status["machines"].as_array().unwrap().iter().map(|m| m["name"].as_str().unwrap()).collect();
    assert!(names.contains(&"laptop") && names.contains(&"workstation"), "{names:?}");
    assert!(!std::fs::read_to_string(a.dir.path().join("data/team.json")).unwrap().contains(PASSWORD));

    let doctor = run(&a, &["doctor"]);
    assert!(doctor.contains("team") && doctor.contains("as laptop: reachable"), "{doctor}");

    run(&a, &["team", "leave"]);
    let out = a.cmd().args(["run", "tidy up", "--labels", "gpu"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("only in a team"), "{err}");
    let own = run(&a, &["task", "list"]);
    assert!(own.contains("only on the laptop") && !own.contains("write the parser"), "{own}");
    let status = a.json(&["team", "status"]);
    assert_eq!(status["joined"], false);
    let left = b.json(&["team", "status"]);
    assert_eq!(left["machines"].as_array().unwrap().len(), 1, "the laptop's name is free again: {left}");
}
