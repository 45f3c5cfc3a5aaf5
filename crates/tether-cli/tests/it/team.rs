//! `tether team`: two data dirs joined to one real PostgreSQL database (the test kit's throwaway
//! cluster) act as two machines sharing a board; each way joining fails is a coded error; leaving
//! gives a machine its own board back as it was.

use std::io::Write;
use std::process::{Command, Stdio};

use tether_testkit::pg::{Cluster, PASSWORD};

use crate::env::{Sandbox, api, serve};

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

    // Joining merged nothing; asked, the laptop's own tasks go up, once.
    let moved = run(&a, &["team", "import-local"]);
    assert!(moved.contains("1 new") && moved.contains("laptop:T-1"), "{moved}");
    let listed = run(&b, &["task", "list"]);
    assert!(listed.contains("only on the laptop"), "{listed}");
    let again = a.json(&["team", "import-local"]);
    assert_eq!((again["created"].as_array().unwrap().len(), again["unchanged"].as_array().unwrap().len()), (0, 1));

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

/// Two daemons already serving, each machine's CLI joins the team: each daemon is on the team's
/// board as the command returns (a task one claims, the other sees claimed), and leaving gives
/// each its own board back — no restart anywhere.
#[test]
fn joining_and_leaving_with_the_cli_moves_a_running_daemons_board_without_a_restart() {
    let url = Cluster::shared().database();
    let (a, b) = (machine(), machine());
    run(&a, &["task", "add", "only on the laptop"]);
    let (mut a_daemon, a_port) = serve(&mut a.cmd(), a.dir.path());
    let (mut b_daemon, b_port) = serve(&mut b.cmd(), b.dir.path());
    let (a_token, b_token) = (run(&a, &["token", "show"]), run(&b, &["token", "show"]));
    let on_a = |method: &str, path: &str, body: serde_json::Value| api(a_port, a_token.trim(), method, path, &body);
    let on_b = |method: &str, path: &str, body: serde_json::Value| api(b_port, b_token.trim(), method, path, &body);

    // Refused by the daemon, coded as the CLI's own refusals are.
    let (ok, _, err) = join(&a, &url, "laptop", "wrong");
    assert!(!ok && err.contains("error[forbidden]") && err.contains("refused"), "{err}");

    let (ok, out, err) = join(&a, &url, "laptop", PASSWORD);
    assert!(ok && out.contains("reachable"), "{out}{err}");
    let (ok, out, err) = join(&b, &url, "workstation", PASSWORD);
    assert!(ok && out.contains("reachable"), "{out}{err}");
    let (_, team) = on_a("GET", "/team", serde_json::Value::Null);
    assert_eq!((&team["joined"], &team["machine"]), (&serde_json::json!(true), &serde_json::json!("laptop")), "{team}");

    let (status, task) = on_a("POST", "/tasks", serde_json::json!({"title": "write the parser"}));
    assert_eq!(status, 200, "{task}");
    let id = task["id"].as_str().unwrap().to_owned();
    let (status, claimed) = on_b("POST", &format!("/tasks/{id}/claim"), serde_json::json!({}));
    assert_eq!((status, &claimed["status"]), (200, &serde_json::json!("in_progress")), "{claimed}");
    let (_, seen) = on_a("GET", &format!("/tasks/{id}"), serde_json::Value::Null);
    assert_eq!(seen["status"], "in_progress", "the laptop's daemon sees the workstation's claim: {seen}");

    type Api<'a> = &'a dyn Fn(&str, &str, serde_json::Value) -> (u16, serde_json::Value);
    for (m, on) in [(&a, &on_a as Api), (&b, &on_b as Api)] {
        run(m, &["team", "leave"]);
        let (_, team) = on("GET", "/team", serde_json::Value::Null);
        assert_eq!(team["joined"], false, "{team}");
        let (_, tasks) = on("GET", "/tasks", serde_json::Value::Null);
        let text = tasks.to_string();
        assert!(!text.contains("write the parser"), "its own board again: {text}");
    }
    let (_, own) = on_a("GET", "/tasks", serde_json::Value::Null);
    assert!(own.to_string().contains("only on the laptop"), "{own}");

    for d in [&mut a_daemon, &mut b_daemon] {
        d.kill().unwrap();
        d.wait().unwrap();
    }
}

fn git(dir: &std::path::Path, args: &[&str]) {
    let out = Command::new("git").arg("-C").arg(dir).args(args).output().unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

/// The runner image's entry point (`deploy/runner/entrypoint`), run as the container runs it but
/// without a container runtime: only the environment says which team, which machine, which
/// labels and where the (mounted) Cursor CLI is.
fn runner_entry(dir: &std::path::Path, url: &str, password_file: &std::path::Path) -> Command {
    let entry = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../deploy/runner/entrypoint");
    let tether_dir = crate::env::bin("tether").parent().unwrap().to_path_buf();
    let path = std::env::join_paths(
        std::iter::once(tether_dir).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())),
    )
    .unwrap();
    let mut cmd = Command::new("sh");
    cmd.arg(entry)
        .env_clear()
        .env("PATH", path)
        .env("HOME", dir.join("home"))
        .env("TETHER_HOME", dir.join("data"))
        .env("TETHER_CURSOR_DIR", dir.join("no-cursor"))
        .env("TETHER_CURSOR_HOME", dir.join("no-cursor-cli"))
        .env("TETHER_PORT", "0")
        .env("TETHER_TEAM_URL", url)
        .env("TETHER_TEAM_PASSWORD_FILE", password_file)
        .env("TETHER_MACHINE", "box")
        .env("TETHER_RUNNER_LABELS", "gpu,linux")
        .env("TETHER_CURSOR_AGENT", crate::env::bin("tether-fake-agent"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    cmd
}

/// A laptop joined to the team with a checkout (`app`, an allowed root) of a repository the
/// runner can reach by its remote.
fn laptop_with_repo(url: &str) -> (Sandbox, std::path::PathBuf) {
    let laptop = machine();
    let (ok, _, err) = join(&laptop, url, "laptop", PASSWORD);
    assert!(ok, "{err}");
    let root = laptop.dir.path().to_path_buf();
    git(&root, &["init", "-q", "--bare", "-b", "main", "origin.git"]);
    let app = root.join("app");
    std::fs::create_dir_all(&app).unwrap();
    git(&app, &["init", "-q", "-b", "main"]);
    std::fs::write(app.join("README.md"), "# app\n").unwrap();
    git(&app, &["add", "."]);
    git(&app, &["-c", "user.name=Pat", "-c", "user.email=pat@example.com", "commit", "-qm", "first"]);
    git(&app, &["remote", "add", "origin", &root.join("origin.git").to_string_lossy()]);
    git(&app, &["push", "-q", "origin", "main"]);
    run(&laptop, &["settings", "set", "runs.roots", &serde_json::json!([root]).to_string()]);
    (laptop, app)
}

/// Starts the runner's entry point in `dir` and waits until the laptop sees it checked in.
fn start_runner(laptop: &Sandbox, dir: &std::path::Path, url: &str, env: &[(&str, &str)]) -> std::process::Child {
    let secret = dir.join("team-password");
    std::fs::write(&secret, PASSWORD).unwrap();
    let mut cmd = runner_entry(dir, url, &secret);
    cmd.envs(env.iter().copied());
    let mut entry = cmd.spawn().unwrap();
    tether_testkit::wait_until("the runner to check in with its labels", std::time::Duration::from_secs(60), || {
        if let Ok(Some(status)) = entry.try_wait() {
            let mut err = String::new();
            std::io::Read::read_to_string(entry.stderr.as_mut().unwrap(), &mut err).unwrap();
            panic!("the entry point ended ({status}): {err}");
        }
        let s = laptop.json(&["team", "status"]);
        let labels = serde_json::json!(["gpu", "linux"]);
        s["machines"].as_array().unwrap().iter().any(|m| m["name"] == "box" && m["labels"] == labels)
    });
    entry
}

/// The run as it is once its status is one of `until`.
fn wait_run(laptop: &Sandbox, id: &str, until: &[&str]) -> serde_json::Value {
    let mut seen = serde_json::Value::Null;
    tether_testkit::wait_until(&format!("{id} to be {until:?}"), std::time::Duration::from_secs(60), || {
        seen = laptop.json(&["runs", "show", id]);
        until.contains(&seen["status"].as_str().unwrap_or_default())
    });
    seen
}

#[test]
fn the_runner_images_entry_point_joins_the_team_as_a_runner_and_runs_what_a_laptop_queues() {
    let url = Cluster::shared().database();
    let (laptop, app) = laptop_with_repo(&url);
    let box_dir = tempfile::tempdir().unwrap();
    let mut entry = start_runner(&laptop, box_dir.path(), &url, &[]);

    let queued = laptop.json(&["run", "say hello", "--workspace", &app.to_string_lossy(), "--labels", "gpu"]);
    let ended = wait_run(&laptop, queued["id"].as_str().unwrap(), &["succeeded", "failed", "cancelled", "lost"]);
    assert_eq!((ended["status"].as_str(), ended["machine"].as_str()), (Some("succeeded"), Some("box")), "{ended}");
    let clone =
        box_dir.path().join("data/repos").read_dir().unwrap().next().expect("the runner's own clone").unwrap().path();

    // What the laptop pushes next is what the runner's next run works on.
    std::fs::write(app.join("NEXT.md"), "next\n").unwrap();
    git(&app, &["add", "."]);
    git(&app, &["-c", "user.name=Pat", "-c", "user.email=pat@example.com", "commit", "-qm", "second"]);
    git(&app, &["push", "-q", "origin", "main"]);
    let queued = laptop.json(&["run", "and again", "--workspace", &app.to_string_lossy(), "--labels", "gpu"]);
    let again = wait_run(&laptop, queued["id"].as_str().unwrap(), &["succeeded", "failed", "cancelled", "lost"]);
    assert_eq!(again["status"], "succeeded", "{again}");
    let head = |dir: &std::path::Path| {
        let out = Command::new("git").arg("-C").arg(dir).args(["rev-parse", "HEAD"]).output().unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    };
    assert_eq!(head(&clone), head(&app), "the runner's clone was brought up to date");

    // SIGTERM (what `docker stop` sends) ends it cleanly.
    let ok = Command::new("kill").args(["-TERM", &entry.id().to_string()]).status().unwrap().success();
    assert!(ok);
    let status = entry.wait().unwrap();
    assert!(status.success(), "{status}");
}

#[test]
fn a_runner_killed_mid_run_has_its_run_lost_and_its_task_handed_back_by_another_machine() {
    let url = Cluster::shared().database();
    let (laptop, app) = laptop_with_repo(&url);
    // The laptop's daemon is the machine that notices; a 2 s lease keeps the test short.
    let mut watcher = laptop
        .cmd()
        .args(["serve"])
        .env("TETHER_PORT", "0")
        .env("TETHER_TEAM_LEASE_SECS", "2")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let box_dir = tempfile::tempdir().unwrap();
    let mut entry = start_runner(&laptop, box_dir.path(), &url, &[("TETHER_TEAM_LEASE_SECS", "2")]);

    run(&laptop, &["task", "add", "port the parser"]);
    let ws = app.to_string_lossy();
    let prompt = "[fake:events=100][fake:sleep=200] port it";
    let queued = laptop.json(&["run", prompt, "--task", "T-1", "--workspace", &ws, "--labels", "gpu"]);
    let id = queued["id"].as_str().unwrap().to_owned();
    let running = wait_run(&laptop, &id, &["running"]);
    assert_eq!(running["machine"], "box", "{running}");
    tether_testkit::wait_until("the run to hold its task", std::time::Duration::from_secs(10), || {
        laptop.json(&["task", "show", "T-1"])["status"] == "in_progress"
    });

    entry.kill().unwrap();
    entry.wait().unwrap();
    let lost = wait_run(&laptop, &id, &["lost", "succeeded", "failed"]);
    assert_eq!(lost["status"], "lost", "{lost}");
    assert!(lost["error"].as_str().is_some_and(|e| e.contains("box")), "says which machine: {lost}");
    let task = laptop.json(&["task", "show", "T-1"]);
    assert_eq!(task["status"], "todo", "handed back: {task}");
    assert!(task.to_string().contains("box"), "its history says why: {task}");

    watcher.kill().unwrap();
    watcher.wait().unwrap();
}

#[test]
fn sharing_a_chat_asks_first_shows_the_redacted_text_and_teammates_list_and_read_it() {
    let url = Cluster::shared().database();
    let laptop = machine();
    let fx = tether_testkit::CursorFixture::at(&laptop.dir.path().join("cursor"));
    let token = "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789";
    let chat = "e9999999-0000-4000-8000-000000000002";
    let ask = serde_json::json!({"role": "user", "content": format!("release it with {token}")});
    fx.cli_store("/home/u/app", chat, "Release checklist", &[ask], false);
    let on_laptop = |args: &[&str]| {
        let mut c = laptop.cmd();
        c.env("TETHER_CURSOR_DIR", &fx.user_dir).env("TETHER_CURSOR_HOME", &fx.cursor_home).args(args);
        c.output().unwrap()
    };
    assert!(on_laptop(&["index"]).status.success());
    let (ok, _, err) = join(&laptop, &url, "laptop", PASSWORD);
    assert!(ok, "{err}");

    let asked = on_laptop(&["sessions", "share", chat]);
    let err = String::from_utf8_lossy(&asked.stderr);
    assert!(!asked.status.success() && err.contains("--preview") && err.contains("--yes"), "{err}");
    let preview = on_laptop(&["sessions", "share", chat, "--preview"]);
    let (shown, summary) = (String::from_utf8_lossy(&preview.stdout), String::from_utf8_lossy(&preview.stderr));
    assert!(shown.contains("release it with <SECRET_1>") && !shown.contains(token), "{shown}");
    assert!(summary.contains("github_token ×1"), "{summary}");
    let shared = on_laptop(&["sessions", "share", chat, "--yes", "--json"]);
    let shared: serde_json::Value = serde_json::from_slice(&shared.stdout).unwrap();
    assert_eq!(shared["id"], "SH-1", "{shared}");

    let desk = machine();
    let (ok, _, err) = join(&desk, &url, "desk", PASSWORD);
    assert!(ok, "{err}");
    let listed = run(&desk, &["sessions", "list", "--team"]);
    assert!(
        listed.contains("SH-1") && listed.contains("Release checklist") && listed.contains("on laptop"),
        "{listed}"
    );
    let read = run(&desk, &["sessions", "show", "SH-1"]);
    assert!(read.contains("<SECRET_1>") && !read.contains(token), "{read}");
    run(&desk, &["sessions", "unshare", "SH-1"]);
    assert!(run(&desk, &["sessions", "search", "release", "--team"]).contains("No chats shared"));
}
