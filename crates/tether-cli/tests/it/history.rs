//! Cursor's chat history through the binary, against generated Cursor data in a temp HOME: index,
//! list, search, tag, export and doctor; the daemon keeping the index fresh and holding the data
//! dir; `init` and `uninit`.

use std::process::{Command as StdCommand, Stdio};
use std::time::{Duration, Instant};

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::{Value, json};
use tether_testkit::eras::{build_all, ids::*};
use tether_testkit::{Composer, CursorFixture, Journal, wait_until};

use crate::env::tether_on;

struct Env {
    fx: CursorFixture,
    data: tempfile::TempDir,
}

impl Env {
    fn new() -> Self {
        let fx = CursorFixture::new();
        build_all(&fx);
        Self { fx, data: tempfile::tempdir().unwrap() }
    }

    fn cmd(&self) -> Command {
        let mut c = tether_on(&self.fx, self.data.path());
        c.env("NO_COLOR", "1");
        Command::from_std(c)
    }

    fn std_cmd(&self) -> StdCommand {
        let mut c = tether_on(&self.fx, self.data.path());
        c.env("TETHER_TOKEN", "cli-test-token").env("TETHER_PORT", "0");
        c
    }

    fn json(&self, args: &[&str]) -> Value {
        let out = self.cmd().args(args).arg("--json").assert().success().get_output().stdout.clone();
        serde_json::from_slice(&out).unwrap_or_else(|e| panic!("{args:?} printed invalid JSON: {e}"))
    }

    fn indexed() -> Self {
        let e = Self::new();
        e.cmd().arg("index").assert().success();
        e
    }

    fn search_count(&self, q: &str) -> usize {
        let out = self.cmd().args(["sessions", "search", q, "--json"]).output().unwrap();
        serde_json::from_slice::<Value>(&out.stdout).ok().and_then(|v| v.as_array().map(Vec::len)).unwrap_or(0)
    }
}

#[test]
fn index_reports_each_source_and_totals() {
    let e = Env::new();
    let r = e.json(&["index"]);
    let sources = r["sources"].as_array().unwrap();
    assert!(sources.iter().any(|s| s["kind"] == "global" && s["status"] == "partial"));
    assert!(sources.iter().any(|s| s["kind"] == "cli_store" && s["status"] == "complete"));
    assert!(r["sessions_total"].as_u64().unwrap() >= 15);
    e.cmd().arg("index").assert().success().stdout(predicate::str::contains("unchanged"));
    e.cmd().args(["index", "--force"]).assert().success().stdout(predicate::str::contains("partial   global"));
}

#[test]
fn list_json_has_the_documented_fields() {
    let e = Env::indexed();
    let list = e.json(&["sessions", "list", "--limit", "100"]);
    let rows = list.as_array().unwrap();
    assert!(rows.len() >= 15);
    for key in
        ["id", "title", "project", "source", "messages", "created_at", "updated_at", "nickname", "tags", "bookmarked"]
    {
        assert!(rows[0].get(key).is_some(), "missing {key} in {}", rows[0]);
    }
    let cli_only = e.json(&["sessions", "list", "--source", "cli"]);
    assert!(cli_only.as_array().unwrap().iter().all(|s| s["source"] == "cli"));
    let zeta = e.json(&["sessions", "list", "--project", "/home/u/zeta"]);
    assert_eq!(zeta.as_array().unwrap().len(), 2);
}

#[test]
fn search_ranks_and_highlights() {
    let e = Env::indexed();
    let hits = e.json(&["sessions", "search", "axolotl"]);
    let first = &hits[0];
    assert_eq!(first["session_id"], C_V10);
    assert!(first["snippet"].as_str().unwrap().contains("**axolotl**"), "{first}");
    assert!(first["score"].as_f64().unwrap() > 0.0);
    e.cmd()
        .args(["sessions", "search", "\"unclosed"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("invalid search query").and(predicate::str::contains("double quotes")));
}

#[test]
fn tag_nickname_bookmark_and_show_by_nickname() {
    let e = Env::indexed();
    let s =
        e.json(&["sessions", "tag", B_SPLIT, "--nickname", "leapday", "--add", "bug", "--add", "dates", "--bookmark"]);
    assert_eq!(s["nickname"], "leapday");
    assert_eq!(s["tags"], json!(["bug", "dates"]));
    let d = e.json(&["sessions", "show", "leapday"]);
    assert_eq!(d["id"], B_SPLIT);
    assert_eq!(d["messages"][0]["role"], "user");
    let bookmarked = e.json(&["sessions", "list", "--bookmarked"]);
    assert_eq!(bookmarked.as_array().unwrap().len(), 1);
    let tagged = e.json(&["sessions", "list", "--tag", "bug"]);
    assert_eq!(tagged[0]["id"], B_SPLIT);
    e.cmd()
        .args(["sessions", "tag", C_V10, "--nickname", "LeapDay"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("already used"));
    e.cmd()
        .args(["sessions", "show", "nope-nope"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("no session matches"));
}

#[test]
fn no_index_hides_a_chat_until_reenabled() {
    let e = Env::indexed();
    e.cmd().args(["sessions", "tag", C_V10, "--no-index"]).assert().success();
    assert_eq!(e.search_count("axolotl"), 0);
    e.cmd().args(["sessions", "show", C_V10]).assert().failure().stderr(predicate::str::contains("do not index"));
    e.cmd().arg("index").arg("--force").assert().success();
    assert_eq!(e.search_count("axolotl"), 0);
    let s = e.json(&["sessions", "tag", C_V10, "--index"]);
    assert_eq!(s["messages"], 2);
    assert_eq!(e.search_count("axolotl"), 1);
}

#[test]
fn exports_are_complete_escaped_and_secret_free() {
    let e = Env::indexed();
    let out = e.data.path().join("chat.html");
    e.cmd().args(["sessions", "export", P_FUTURE, "--format", "html", "--out"]).arg(&out).assert().success();
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(html.starts_with("<!doctype html>"));
    assert!(html.contains("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;"), "conversation text is escaped");
    assert!(!html.contains("<script>"));
    let md =
        e.cmd().args(["sessions", "export", C_V10, "--format", "md"]).assert().success().get_output().stdout.clone();
    let md = String::from_utf8(md).unwrap();
    assert!(md.contains("# Refactor loader") && md.contains("edit_file_v2") && md.contains("Thinking"));
    let json = e
        .cmd()
        .args(["sessions", "export", D_TABLE, "--format", "json"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v: Value = serde_json::from_slice(&json).unwrap();
    assert_eq!(v["messages"].as_array().unwrap().len(), 2);
    for text in [html, md, String::from_utf8(json).unwrap()] {
        assert!(!text.contains(SECRET_KEY) && !text.contains(SECRET_TOKEN));
    }
    e.cmd()
        .args(["sessions", "export", C_V10, "--format", "pdf"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("use md, json or html"));
}

#[test]
fn doctor_names_partial_sources_and_reasons() {
    let e = Env::indexed();
    let d = e.json(&["doctor"]);
    let global = d["sources"].as_array().unwrap().iter().find(|s| s["kind"] == "global").unwrap().clone();
    assert_eq!(global["status"], "partial");
    assert!(global["reasons"]["missing_bubble"].as_u64().unwrap() >= 1);
    e.cmd()
        .arg("doctor")
        .assert()
        .success()
        .stdout(predicate::str::contains("problems:").and(predicate::str::contains("missing_bubble")));
}

/// What was passed over is said under the kind of store it was looked at as, in the text too
/// (the same grouping Health shows), with the reason.
#[test]
fn doctor_says_what_it_passed_over_by_kind_and_reason() {
    let e = Env::indexed();
    let bare = e.fx.cursor_home.join("projects/home-u-app/sdk-agent-store/0000bare");
    std::fs::create_dir_all(&bare).unwrap();
    let out = e.cmd().arg("doctor").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().find(|l| l.contains("× sdk_agent:")).unwrap_or_else(|| panic!("{text}"));
    assert!(line.trim_start().starts_with("1 × sdk_agent: "), "{line}");
    assert!(text.contains(&bare.display().to_string()), "{text}");
    assert!(text.lines().any(|l| l.trim_start().starts_with("sdk_agent") && l.ends_with("1 passed over")), "{text}");
}

#[test]
fn empty_machine_explains_what_to_do() {
    let home = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        let mut c = Command::cargo_bin("tether").unwrap();
        c.env_clear().env("HOME", home.path()).env("TETHER_HOME", data.path()).env("NO_COLOR", "1").args(args);
        c.assert().success()
    };
    run(&["index"]).stdout(predicate::str::contains("No Cursor data found"));
    run(&["sessions", "list"]).stdout(predicate::str::contains("Run `tether index` first"));
}

/// Waits until `daemon.json` names this child: a file left by a killed predecessor must not count.
fn wait_for_daemon(e: &Env, child: &std::process::Child) {
    let path = e.data.path().join("daemon.json");
    wait_until("daemon.json naming this child", Duration::from_secs(30), || {
        std::fs::read_to_string(&path)
            .ok()
            .and_then(|s| serde_json::from_str::<Value>(&s).ok())
            .is_some_and(|v| v["pid"] == json!(child.id()))
    });
}

#[test]
fn serve_keeps_the_index_fresh_and_holds_the_data_dir() {
    let e = Env::new();
    let mut child = e.std_cmd().arg("serve").stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    let daemon_json = e.data.path().join("daemon.json");
    wait_until("daemon.json", Duration::from_secs(30), || daemon_json.exists());
    let info: Value = serde_json::from_str(&std::fs::read_to_string(&daemon_json).unwrap()).unwrap();
    assert_eq!(info["pid"], child.id());
    assert!(info["url"].as_str().unwrap().starts_with("http://127.0.0.1:"), "{info}");
    wait_until("the initial index", Duration::from_secs(30), || e.search_count("narwhal") == 1);

    e.cmd().arg("serve").assert().failure().stderr(predicate::str::contains("already holds the data dir"));

    // Cursor adds a chat while we run.
    let g = e.fx.global(Journal::Rollback);
    Composer {
        id: "live0000-0000-4000-8000-000000000001",
        name: Some("Live chat"),
        version: 16,
        bubble_version: 3,
        created_at: 1_790_000_000_000,
        extra: json!({}),
        bubbles: vec![(1, json!({"text": "kingfisher arrives live", "createdAt": "2026-11-01T00:00:00Z"}))],
    }
    .write(&g);
    g.close();
    wait_until("the new chat to be searchable", Duration::from_secs(10), || e.search_count("kingfisher") == 1);

    // A new transcript appears in a folder that did not exist before.
    e.fx.transcript(
        "home-u-new",
        "live-transcript-1",
        &[json!({"role": "user", "message": {"content": [{"type": "text", "text": "heron question"}]}}).to_string()],
    );
    wait_until("the new transcript", Duration::from_secs(10), || e.search_count("heron") == 1);

    // Cursor deletes it again.
    std::fs::remove_dir_all(e.fx.cursor_home.join("projects/home-u-new")).unwrap();
    wait_until("the deleted transcript to vanish", Duration::from_secs(10), || e.search_count("heron") == 0);

    StdCommand::new("kill").arg("-TERM").arg(child.id().to_string()).status().unwrap();
    let status = child.wait().unwrap();
    assert!(status.success(), "serve exits cleanly on SIGTERM: {status:?}");
    assert!(!daemon_json.exists(), "daemon.json is removed on shutdown");
}

#[test]
fn kill_9_loses_nothing_and_frees_the_data_dir() {
    let e = Env::indexed();
    e.json(&["sessions", "tag", B_SPLIT, "--nickname", "survivor", "--add", "keep"]);
    for _ in 0..3 {
        let mut child = e.std_cmd().arg("serve").stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
        wait_for_daemon(&e, &child);
        // Kill it mid-flight, while it may be writing.
        e.cmd().args(["index", "--force"]).assert().success();
        child.kill().unwrap();
        child.wait().unwrap();
    }
    let d = e.json(&["sessions", "show", "survivor"]);
    assert_eq!(d["tags"], json!(["keep"]), "user metadata survives kill -9");
    assert_eq!(e.search_count("narwhal"), 1);
    let mut child = e.std_cmd().arg("serve").stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    wait_for_daemon(&e, &child);
    StdCommand::new("kill").arg("-TERM").arg(child.id().to_string()).status().unwrap();
    assert!(child.wait().unwrap().success());
}

#[test]
fn without_a_keyring_the_token_falls_back_to_a_file_unless_refused_and_serve_refuses_non_loopback() {
    let e = Env::new();
    // env_clear() leaves no D-Bus session, so the Secret Service cannot be reached.
    e.cmd().args(["settings", "set", "keyring_only", "true"]).assert().success();
    let out = e.cmd().env_remove("TETHER_TOKEN").args(["serve", "--port", "0"]).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("tether token store file") && err.contains("TETHER_TOKEN"), "{err}");
    assert!(!e.data.path().join("mcp-token").exists(), "keyring_only: no file");

    // By default a machine with no keyring keeps the token in a 0600 file, says so, and stays there.
    e.cmd().args(["settings", "set", "keyring_only", "false"]).assert().success();
    let shown = e.cmd().env_remove("TETHER_TOKEN").args(["token", "show"]).output().unwrap();
    assert!(shown.status.success(), "{}", String::from_utf8_lossy(&shown.stderr));
    let token = String::from_utf8_lossy(&shown.stdout).trim().to_owned();
    assert_eq!(token.len(), 64);
    let warned = String::from_utf8_lossy(&shown.stderr);
    assert!(warned.contains("no OS keyring") && warned.contains("0600"), "{warned}");
    assert_eq!(std::fs::read_to_string(e.data.path().join("mcp-token")).unwrap(), token);
    let doctor = e.json(&["doctor"]);
    assert_eq!(doctor["token_store"], "fallback");

    let out = e.cmd().env("TETHER_TOKEN", "t").args(["serve", "--host", "0.0.0.0", "--port", "0"]).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("only binds to loopback"));

    // The file store chosen outright works headless too.
    e.cmd().args(["token", "store", "file"]).assert().success();
    assert_eq!(String::from_utf8_lossy(&e.cmd().args(["token", "show"]).output().unwrap().stdout).trim(), token);
    e.cmd().args(["token", "rotate"]).assert().success();
    let again = e.cmd().args(["token", "show"]).output().unwrap();
    assert_ne!(String::from_utf8_lossy(&again.stdout).trim(), token);
}

#[test]
fn init_plugin_writes_a_local_plugin_without_the_token_and_uninit_removes_it() {
    let e = Env::new();
    let run = |verb: &str, args: &[&str]| {
        e.cmd().env("TETHER_TOKEN", "plugin-secret-token").arg(verb).args(args).output().unwrap()
    };
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    std::fs::create_dir_all(&e.fx.cursor_home).unwrap();
    let mcp = e.fx.cursor_home.join("mcp.json");
    let theirs = r#"{"mcpServers":{"mine":{"url":"http://example.invalid"}}}"#;
    std::fs::write(&mcp, theirs).unwrap();
    let root = e.fx.cursor_home.join("plugins/local/tether");

    let dry = run("init", &["--plugin", "--dry-run"]);
    assert!(dry.status.success(), "{}", text(&dry.stderr));
    assert!(text(&dry.stdout).contains("plugins/local/tether/.cursor-plugin/plugin.json"), "{}", text(&dry.stdout));
    assert!(!root.exists(), "dry run wrote files");

    let out = run("init", &["--plugin"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    for rel in [
        ".cursor-plugin/plugin.json",
        "mcp.json",
        "hooks/hooks.json",
        "rules/tether.mdc",
        "skills/tether/SKILL.md",
        "commands/tether-recall.md",
        "commands/tether-next-task.md",
    ] {
        assert!(stdout.contains(&format!("created {}", root.join(rel).display())), "{rel} not reported: {stdout}");
        assert!(root.join(rel).is_file(), "{rel} not written");
    }
    let stderr = text(&out.stderr);
    assert!(stderr.contains("Restart Cursor") && stderr.contains("TETHER_TOKEN"), "{stderr}");
    assert!(!stdout.contains("plugin-secret-token") && !stderr.contains("plugin-secret-token"));
    // No file of the plugin holds the token; Cursor's own config is untouched.
    let mut stack = vec![root.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let p = entry.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                assert!(!std::fs::read_to_string(&p).unwrap().contains("plugin-secret-token"), "{}", p.display());
            }
        }
    }
    let plugin_mcp: Value = serde_json::from_str(&std::fs::read_to_string(root.join("mcp.json")).unwrap()).unwrap();
    assert_eq!(plugin_mcp["mcpServers"]["tether"]["headers"]["Authorization"], "Bearer ${env:TETHER_TOKEN}");
    let hooks: Value = serde_json::from_str(&std::fs::read_to_string(root.join("hooks/hooks.json")).unwrap()).unwrap();
    let cmd = hooks["hooks"]["sessionStart"][0]["command"].as_str().unwrap();
    assert!(cmd.starts_with("TETHER_HOME=") && cmd.ends_with(" hook sessionStart"), "{cmd}");
    assert_eq!(std::fs::read_to_string(&mcp).unwrap(), theirs);
    assert!(!e.fx.cursor_home.join("hooks.json").exists() && !e.fx.cursor_home.join("commands").exists());

    let again = run("init", &["--plugin"]);
    assert!(again.status.success() && text(&again.stderr).contains("nothing changed"), "{}", text(&again.stderr));
    let both = run("init", &["--plugin", "--global"]);
    assert!(!both.status.success(), "--plugin with --global was accepted");

    let un = run("uninit", &["--plugin"]);
    assert!(un.status.success(), "{}", text(&un.stderr));
    assert!(text(&un.stdout).contains(&format!("removed {}", root.join(".cursor-plugin/plugin.json").display())));
    assert!(!root.exists(), "uninit --plugin left the plugin folder");
    assert!(e.fx.cursor_home.join("plugins/local").is_dir(), "uninit removed more than the plugin folder");
    assert_eq!(std::fs::read_to_string(&mcp).unwrap(), theirs);
}

#[test]
fn init_writes_cursor_config_that_uninit_removes() {
    let e = Env::new();
    let proj = tempfile::tempdir().unwrap();
    let init =
        |args: &[&str]| e.cmd().env("TETHER_TOKEN", "init-secret-token").arg("init").args(args).output().unwrap();
    let mcp = e.fx.cursor_home.join("mcp.json");
    std::fs::create_dir_all(&e.fx.cursor_home).unwrap();
    std::fs::write(&mcp, r#"{"mcpServers":{"mine":{"url":"http://example.invalid"}}}"#).unwrap();

    let dry = init(&[proj.path().to_str().unwrap(), "--dry-run"]);
    assert!(dry.status.success());
    let diff = String::from_utf8(dry.stdout).unwrap();
    assert!(diff.contains("+      \"url\": \"http://127.0.0.1:") && diff.contains("Bearer ********"), "{diff}");
    assert!(!diff.contains("init-secret-token"), "dry run printed the token");
    assert!(!proj.path().join(".cursor").exists(), "dry run wrote files");

    let out = init(&[proj.path().to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!String::from_utf8_lossy(&out.stdout).contains("init-secret-token"));
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&mcp).unwrap()).unwrap();
    assert_eq!(v["mcpServers"]["mine"]["url"], "http://example.invalid");
    assert_eq!(v["mcpServers"]["tether"]["headers"]["Authorization"], "Bearer init-secret-token");
    let hooks: Value =
        serde_json::from_str(&std::fs::read_to_string(e.fx.cursor_home.join("hooks.json")).unwrap()).unwrap();
    let cmd = hooks["hooks"]["beforeMCPExecution"][0]["command"].as_str().unwrap();
    assert!(cmd.starts_with("TETHER_HOME=") && cmd.ends_with(" hook beforeMCPExecution"), "{cmd}");
    assert!(proj.path().join(".cursor/rules/tether.mdc").exists());

    // The hook command as written runs and answers at once, daemon or not.
    let t = Instant::now();
    let hook = StdCommand::new("sh")
        .arg("-c")
        .arg(cmd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin.take().unwrap().write_all(br#"{"conversation_id":"c1","hook_event_name":"beforeMCPExecution"}"#)?;
            c.wait_with_output()
        })
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&hook.stdout).trim(), r#"{"permission":"allow"}"#);
    assert!(t.elapsed() < Duration::from_secs(2));

    e.cmd().arg("uninit").arg(proj.path()).assert().success();
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&mcp).unwrap()).unwrap();
    assert_eq!(v, json!({"mcpServers":{"mine":{"url":"http://example.invalid"}}}));
    assert!(!e.fx.cursor_home.join("hooks.json").exists());
    assert!(!proj.path().join(".cursor").exists());

    std::fs::write(&mcp, "{ not json").unwrap();
    let bad = init(&["--global"]);
    assert!(!bad.status.success(), "init accepted an invalid mcp.json");
    let err = String::from_utf8(bad.stderr).unwrap();
    assert!(err.contains("mcp.json is not valid JSON") && err.contains("never overwrites"), "{err}");
    assert_eq!(std::fs::read_to_string(&mcp).unwrap(), "{ not json");
}

/// Chats Cursor kept no token figures for show as not recorded — `null` in JSON, `—` in text,
/// an empty CSV cell — never as `0 tokens`.
#[test]
fn usage_of_chats_without_figures_is_absent_not_zero() {
    let e = Env::indexed();
    let r = e.json(&["usage", "--since", "30y", "--source", "chats", "--by", "source"]);
    let total = &r["totals"][0];
    assert_eq!(total["source"], "chats", "{r:#}");
    assert!(total["items"].as_u64() > Some(0), "{r:#}");
    let rows: Vec<&Value> = r["rows"].as_array().unwrap().iter().chain([total]).collect();
    for row in rows.iter().filter(|row| row["with_tokens"] == 0) {
        for k in ["input", "output", "cache_read", "cache_write", "tokens"] {
            assert!(row[k].is_null(), "{k}: {row:#}");
        }
    }
    let by_project = e.json(&["usage", "--since", "30y", "--source", "chats", "--by", "project"]);
    let unknown: Vec<&Value> =
        by_project["rows"].as_array().unwrap().iter().filter(|row| row["with_tokens"] == 0).collect();
    assert!(!unknown.is_empty(), "some project's chats have no figures: {by_project:#}");
    for row in &unknown {
        assert!(row["input"].is_null() && row["tokens"].is_null(), "{row:#}");
    }
    let text = e.cmd().args(["usage", "--since", "30y", "--source", "chats", "--by", "project"]).output().unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    let key = unknown[0]["keys"][0].as_str().unwrap();
    let line = text.lines().find(|l| l.starts_with("chats") && l.contains(key)).unwrap_or_else(|| panic!("{text}"));
    assert!(line.contains('—'), "{line:?}\n{text}");
    let csv =
        e.cmd().args(["usage", "--since", "30y", "--source", "chats", "--by", "project", "--csv"]).output().unwrap();
    let csv = String::from_utf8_lossy(&csv.stdout);
    let line = csv.lines().find(|l| l.contains(key)).unwrap_or_else(|| panic!("{csv}"));
    assert!(line.contains(",,,,,"), "the five figures are empty cells: {line:?}");
}
