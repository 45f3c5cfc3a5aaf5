//! A run's work after the run, end to end through `tether` and its daemon, on a real repository
//! with the fake Cursor CLI editing files: two runs in parallel in worktrees of their own (the
//! person's checkout — files, index, HEAD, stash, branches — untouched, both diffs exact), a
//! comment sent back in a follow-up, a squash merge with its trailers into the checked-out
//! branch, a conflicting merge refused with nothing changed, discard; and a daemon killed mid-run
//! whose next start commits what the run left and keeps git's worktree list consistent.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

use crate::env::{bin, tether_in};

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git").arg("-C").arg(dir).args(args).output().unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim_end().to_owned()
}

struct Env {
    dir: tempfile::TempDir,
    repo: PathBuf,
}

impl Env {
    /// A data dir, a home, and the person's repository mid-work (an allowed root): a commit on
    /// `main`, another branch, a stash, an unstaged edit and an untracked file.
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("project");
        std::fs::create_dir_all(repo.join("src")).unwrap();
        git(&repo, &["init", "-q", "-b", "main"]);
        git(&repo, &["config", "user.name", "Person"]);
        git(&repo, &["config", "user.email", "person@example.com"]);
        std::fs::write(repo.join("src/lib.rs"), "pub fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n").unwrap();
        std::fs::write(repo.join("README.md"), "# project\n").unwrap();
        // Cursor's worktree setup convention, committed with the project.
        std::fs::create_dir_all(repo.join(".cursor")).unwrap();
        let setup = r#"{"setup-worktree": ["echo ready > setup.txt", "test -f .env"]}"#;
        std::fs::write(repo.join(".cursor/worktrees.json"), setup).unwrap();
        git(&repo, &["add", "-A"]);
        git(&repo, &["commit", "-q", "-m", "first"]);
        git(&repo, &["branch", "feature"]);
        std::fs::write(repo.join("README.md"), "# stashed\n").unwrap();
        git(&repo, &["stash", "-q"]);
        std::fs::write(repo.join("README.md"), "# project, being edited\n").unwrap();
        std::fs::write(repo.join("notes.txt"), "mine\n").unwrap();
        std::fs::write(repo.join(".env"), "SECRET=1\n").unwrap();
        let repo = repo.canonicalize().unwrap();
        let data = dir.path().join("data");
        std::fs::create_dir_all(&data).unwrap();
        let runs = json!({"roots": [repo], "result_grace_secs": 1, "kill_grace_secs": 1, "copy_files": [".env"]});
        std::fs::write(data.join("settings.json"), json!({"runs": runs}).to_string()).unwrap();
        Self { dir, repo }
    }

    fn cmd(&self) -> Command {
        let mut c = tether_in(self.dir.path());
        c.env("TETHER_CURSOR_HOME", self.dir.path().join("home/.cursor"))
            .env("TETHER_CURSOR_AGENT", bin("tether-fake-agent"))
            .env("TETHER_TOKEN", "changes-test-token")
            .env("TETHER_USER", "pat");
        c
    }

    fn run(&self, args: &[&str]) -> Output {
        self.cmd().args(args).output().unwrap()
    }

    fn json(&self, args: &[&str]) -> Value {
        let out = self.run(&[args, &["--json"]].concat());
        serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{args:?}: {e}: {}", String::from_utf8_lossy(&out.stderr)))
    }

    /// A command that must fail: its `error[code]: message`.
    fn fails(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(!out.status.success(), "{args:?} should fail");
        String::from_utf8_lossy(&out.stderr).into_owned()
    }

    fn daemon(&self) -> Daemon {
        let _ = std::fs::remove_file(self.dir.path().join("data/daemon.json"));
        // Its log, so that a daemon that does not come up says why.
        let log = self.dir.path().join("serve.log");
        let out = std::fs::File::create(&log).unwrap();
        let child = self.cmd().args(["serve", "--port", "0"]).stdout(Stdio::null()).stderr(out).spawn().unwrap();
        let mut d = Daemon(child);
        self.wait_for("the daemon", 30, || {
            if let Ok(Some(status)) = d.0.try_wait() {
                panic!("the daemon ended ({status}): {}", std::fs::read_to_string(&log).unwrap_or_default());
            }
            self.dir.path().join("data/daemon.json").exists()
        });
        d
    }

    fn queue(&self, prompt: &str) -> String {
        let ws = self.repo.to_string_lossy().into_owned();
        let r = self.json(&["run", prompt, "--workspace", &ws, "--allow", "Write(**)", "--allow", "Shell(*)"]);
        assert_eq!(r["status"], "queued", "{r}");
        r["id"].as_str().unwrap().to_owned()
    }

    fn show(&self, id: &str) -> Value {
        self.json(&["runs", "show", id])
    }

    fn wait_for(&self, what: &str, secs: u64, f: impl FnMut() -> bool) {
        tether_testkit::wait_until(what, Duration::from_secs(secs), f);
    }

    /// Everything of the person's checkout an isolated run leaves as it was.
    fn checkout(&self) -> Vec<String> {
        let r = &self.repo;
        let files = ["README.md", "notes.txt", "src/lib.rs"]
            .iter()
            .map(|f| std::fs::read_to_string(r.join(f)).unwrap_or_default())
            .collect();
        let mine = git(r, &["for-each-ref", "--format=%(refname) %(objectname)", "refs/heads", "refs/stash"])
            .lines()
            .filter(|l| !l.starts_with("refs/heads/tether/"))
            .collect::<Vec<_>>()
            .join("\n");
        vec![
            files,
            git(r, &["status", "--porcelain"]),
            git(r, &["ls-files", "--stage"]),
            git(r, &["symbolic-ref", "HEAD"]),
            mine,
        ]
    }
}

/// A daemon stopped when the test ends, however it ends (a failed assertion included).
struct Daemon(Child);

impl Drop for Daemon {
    fn drop(&mut self) {
        kill(self, "-TERM");
    }
}

fn kill(d: &mut Daemon, signal: &str) {
    // Once it has been waited for, its pid may be another process's.
    if matches!(d.0.try_wait(), Ok(Some(_))) {
        return;
    }
    let _ = Command::new("kill").args([signal, &d.0.id().to_string()]).status();
    let _ = d.0.wait();
}

fn files_of(diff: &Value) -> Vec<(String, String, i64, i64)> {
    diff["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let n = |k: &str| f[k].as_i64().unwrap_or(-1);
            (f["path"].as_str().unwrap().to_owned(), f["kind"].as_str().unwrap().to_owned(), n("added"), n("deleted"))
        })
        .collect()
}

#[test]
fn runs_in_parallel_worktrees_are_reviewed_commented_merged_and_discarded() {
    let e = Env::new();
    let before = e.checkout();
    let mut daemon = e.daemon();

    let one = e.queue("[fake:sleep=250][fake:write=src/one.rs:pub const ONE: u8 = 1;] Add one");
    let two = e.queue("[fake:sleep=250][fake:write=src/two.rs:pub const TWO: u8 = 2;][fake:delete=src/lib.rs] Add two");
    let mut together = 0;
    e.wait_for("both runs to end", 60, || {
        let list = e.json(&["runs", "list"]);
        let runs = list.as_array().unwrap();
        together = together.max(runs.iter().filter(|r| r["status"] == "running").count());
        runs.iter().all(|r| r["status"] == "succeeded")
    });
    assert_eq!(together, 2, "two runs on one repository run at once, each in its own worktree");
    let (r1, r2) = (e.show(&one), e.show(&two));
    assert_ne!(r1["worktree"]["path"], r2["worktree"]["path"]);
    assert!(r1["worktree"]["branch"].as_str().unwrap().starts_with("tether/R-1-"), "{r1}");
    assert_eq!(r1["worktree"]["base_branch"], "main");
    assert_eq!(e.checkout(), before, "the person's checkout is untouched");
    // The worktree was readied (the listed file copied, the setup run) and neither is the run's work.
    let wt1 = PathBuf::from(r1["worktree"]["path"].as_str().unwrap());
    assert_eq!(std::fs::read_to_string(wt1.join(".env")).unwrap(), "SECRET=1\n");
    assert_eq!(std::fs::read_to_string(wt1.join("setup.txt")).unwrap(), "ready\n");
    assert_eq!(r1["worktree"]["setup_paths"], json!([".env", "setup.txt"]));

    let d1 = e.json(&["runs", "diff", &one]);
    assert_eq!(files_of(&d1), [("src/one.rs".to_owned(), "added".to_owned(), 1, 0)]);
    assert!(d1["patch"].as_str().unwrap().contains("+pub const ONE: u8 = 1;"), "{d1}");
    let d2 = e.json(&["runs", "diff", &two, "--stat"]);
    assert_eq!(
        files_of(&d2),
        [("src/lib.rs".to_owned(), "deleted".to_owned(), 0, 3), ("src/two.rs".to_owned(), "added".to_owned(), 1, 0)]
    );
    assert_eq!(d2["patch"], Value::Null);
    assert_eq!(r2["changes"], json!({"files": 2, "added": 1, "deleted": 3, "binary": 0}));

    // A comment goes back to the agent in a follow-up, in the same worktree and chat.
    let c = e.json(&["runs", "comment", &one, "src/one.rs:1", "Make it a u32"]);
    assert_eq!(c["quote"], "pub const ONE: u8 = 1;");
    assert!(e.fails(&["runs", "comment", &one, "src/one.rs:2-3", "x"]).contains("error[invalid_input]"));
    let f = e.json(&["runs", "followup", &one, "--comments", "--follow"]);
    assert_eq!((f["status"].as_str(), f["chat_id"].as_str()), (Some("succeeded"), r1["chat_id"].as_str()), "{f}");
    assert_eq!(f["worktree"]["path"], r1["worktree"]["path"]);
    assert!(
        f["prompt"].as_str().unwrap().contains("src/one.rs line 1:\n   > pub const ONE: u8 = 1;\n   Make it a u32")
    );
    let after = e.json(&["runs", "diff", f["id"].as_str().unwrap()]);
    assert_eq!(after["comments"][0]["sent_in"], f["id"]);
    assert!(after["comments"][0]["addressed_at"].is_string(), "{after}");

    // Squash merge into the checked-out main: one commit with the trailers; the person's
    // unstaged edit and untracked file stay theirs.
    let m = e.json(&["runs", "merge", &one]);
    assert_eq!((m["into"].as_str(), m["checkout"].as_str()), (Some("main"), e.repo.to_str()));
    let msg = git(&e.repo, &["log", "-1", "--format=%B", "main"]);
    let chat = format!("Cursor-Chat: {}", r1["chat_id"].as_str().unwrap());
    for trailer in [format!("Tether-Run: {one}"), format!("Tether-Run: {}", f["id"].as_str().unwrap()), chat] {
        assert!(msg.contains(&trailer), "{trailer} in {msg}");
    }
    assert_eq!(git(&e.repo, &["rev-list", "--count", "main"]), "2");
    assert_eq!(std::fs::read_to_string(e.repo.join("src/one.rs")).unwrap(), "pub const ONE: u8 = 1;\n");
    assert_eq!(git(&e.repo, &["status", "--porcelain"]), " M README.md\n?? .env\n?? notes.txt");
    assert!(!Path::new(r1["worktree"]["path"].as_str().unwrap()).exists(), "the merged worktree is gone");
    assert_eq!(m["run"]["worktree"]["removed_why"], "merged");
    // Which chat wrote it, after the squash merge: the run, from its own write tool call.
    let b = e.json(&["blame", e.repo.join("src/one.rs").to_str().unwrap()]);
    assert_eq!(b["lines"][0]["origin"], "ai", "{b}");
    assert_eq!((&b["edits"][0]["kind"], &b["edits"][0]["run_id"]), (&json!("run"), &json!(one)), "{b}");
    assert_eq!(b["edits"][0]["conversation_id"], r1["chat_id"], "{b}");

    // The person's own src/two.rs conflicts with R-2's: refused, naming it, nothing changed.
    std::fs::write(e.repo.join("src/two.rs"), "// the person's\n").unwrap();
    git(&e.repo, &["add", "src/two.rs"]);
    git(&e.repo, &["commit", "-q", "-m", "mine"]);
    let head = git(&e.repo, &["rev-parse", "main"]);
    let refused = e.fails(&["runs", "merge", &two]);
    assert!(refused.contains("error[conflict]") && refused.contains("src/two.rs"), "{refused}");
    assert_eq!(git(&e.repo, &["rev-parse", "main"]), head);
    assert_eq!(git(&e.repo, &["status", "--porcelain"]), " M README.md\n?? .env\n?? notes.txt");

    e.json(&["runs", "discard", &two]);
    assert!(!Path::new(r2["worktree"]["path"].as_str().unwrap()).exists());
    let branches = git(&e.repo, &["branch", "--list", "tether/*"]);
    assert!(branches.contains("tether/R-1-") && !branches.contains("tether/R-2-"), "{branches}");
    assert!(e.fails(&["runs", "merge", &two]).contains("error[conflict]"));

    // A task's next run continues in the worktree its last run left.
    let repo = e.repo.to_string_lossy().into_owned();
    let task = e.json(&["task", "add", "Tidy the docs", "--project", &repo]);
    let tid = task["id"].as_str().unwrap();
    let a = e.json(&["run", "--task", tid, "--follow"]);
    // Reviewed and sent back: its next run picks up the same branch.
    e.json(&["task", "release", tid]);
    let b = e.json(&["run", "--task", tid, "--follow"]);
    assert!(a["worktree"]["branch"].as_str().unwrap().ends_with("-t-1-tidy-the-docs"), "{a}");
    // It may not run commands, so the repository's setup commands did not run for it either.
    let wt = PathBuf::from(a["worktree"]["path"].as_str().unwrap());
    assert!(wt.join(".env").exists() && !wt.join("setup.txt").exists());
    assert_eq!((a["status"].as_str(), b["status"].as_str()), (Some("succeeded"), Some("succeeded")), "{b}");
    assert_eq!(a["worktree"]["id"], b["worktree"]["id"], "{b}");
    kill(&mut daemon, "-TERM");
}

#[test]
fn a_daemon_killed_mid_run_leaves_work_the_next_start_commits() {
    let e = Env::new();
    let mut daemon = e.daemon();
    let id = e.queue("[fake:write=wip.txt:half done][fake:hang] Start the refactor");
    let mut path = String::new();
    e.wait_for("the run to write in its worktree", 30, || {
        let r = e.show(&id);
        path = r["worktree"]["path"].as_str().unwrap_or_default().to_owned();
        r["status"] == "running" && Path::new(&path).join("wip.txt").exists()
    });
    kill(&mut daemon, "-KILL");
    let mut again = e.daemon();
    e.wait_for("the run to be found lost and its work committed", 30, || {
        let r = e.show(&id);
        r["status"] == "lost" && !r["changes"].is_null()
    });
    let r = e.show(&id);
    assert_eq!(r["changes"]["files"], 1, "{r}");
    let branch = r["worktree"]["branch"].as_str().unwrap();
    assert_eq!(git(&e.repo, &["show", &format!("{branch}:wip.txt")]), "half done");
    assert!(git(&e.repo, &["worktree", "list", "--porcelain"]).contains(&path));
    // The work can be thrown away like any other, and git's list agrees.
    e.json(&["runs", "discard", &id]);
    assert!(!git(&e.repo, &["worktree", "list", "--porcelain"]).contains(&path));
    kill(&mut again, "-TERM");
}

/// A repository's setup command printing more than the run's log keeps (here 3 MB past a 1 MiB
/// limit): its output reaches the log as it comes (the first line while the command still runs)
/// up to the log's limit, past which the log says it was cut and the run counts what was left
/// out, as for an agent's output. Before, it was gathered whole in the daemon's memory and only
/// its last 200 lines kept.
#[test]
fn a_setup_commands_output_streams_into_the_log_under_its_limit() {
    let e = Env::new();
    let settings_path = e.dir.path().join("data/settings.json");
    let mut settings: Value = serde_json::from_str(&std::fs::read_to_string(&settings_path).unwrap()).unwrap();
    settings["runs"]["max_log_mb"] = json!(1);
    std::fs::write(&settings_path, settings.to_string()).unwrap();
    let setup = json!({"setup-worktree": [
        "echo first-line; sleep 6; yes 'a line of setup output, one of many' | head -c 3000000; echo last-line"
    ]});
    std::fs::write(e.repo.join(".cursor/worktrees.json"), setup.to_string()).unwrap();
    git(&e.repo, &["add", ".cursor/worktrees.json"]);
    git(&e.repo, &["commit", "-q", "-m", "noisy setup"]);
    let _daemon = e.daemon();
    let id = e.queue("[fake:write=src/one.rs:pub const ONE: u8 = 1;] Add one");
    let notices = |v: &Value| -> Vec<String> {
        v["events"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter(|e| e["kind"] == "notice")
                    .map(|e| e["text"].as_str().unwrap_or("").to_owned())
                    .collect()
            })
            .unwrap_or_default()
    };
    // While the command sleeps: its first line is in the log already, nothing cut yet.
    e.wait_for("the setup's first line in the log", 30, || {
        notices(&e.json(&["runs", "show", &id, "--events"])).iter().any(|n| n == "setup: first-line")
    });
    let now = e.json(&["runs", "show", &id, "--events"]);
    assert!(
        !notices(&now).iter().any(|n| n.starts_with("setup: a line of")),
        "seen while the command still ran: {now}"
    );
    e.wait_for("the run to end", 60, || e.show(&id)["status"] == "succeeded");
    let shown = e.json(&["runs", "show", &id, "--events"]);
    let events = shown["events"].as_array().unwrap();
    assert!(events.iter().any(|v| v["status"] == "log_truncated"), "the log says where it stopped keeping");
    let kept: usize = notices(&shown).iter().filter(|n| n.starts_with("setup: a line of")).map(String::len).sum();
    assert!(kept > 300_000 && kept <= 1 << 20, "kept up to the limit: {kept} bytes");
    assert!(!notices(&shown).iter().any(|n| n == "setup: last-line"), "past the limit lines are not kept");
    let dropped = &e.show(&id)["log_dropped"];
    assert!(dropped["lines"].as_i64().unwrap_or(0) > 10_000, "the run counts what was left out: {dropped}");
}
