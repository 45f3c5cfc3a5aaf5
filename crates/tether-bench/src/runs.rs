//! The run-events benchmark: `tether serve` (release) runs the test kit's fake Cursor CLI, which
//! writes assistant events at a fixed rate, each stamped with the time it was written; a client of
//! the GUI's API follows the run's Server-Sent Events and measures, per event, the wait from the
//! child's write to its arrival — the whole path (pipe, parser, store, broadcast, SSE).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde_json::{Value, json};

use crate::mcp::{Proc, free_port, wait_http};
use crate::report::{Row, percentile, sorted};

const TOKEN: &str = "bench-token-not-a-secret";
const P99_TARGET_MS: f64 = 50.0;

pub struct RunFigures {
    pub rows: Vec<Row>,
    pub setup: String,
}

fn now_ms() -> f64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64() * 1000.0)
}

pub fn run(dir: &Path, events: usize, rate: usize) -> anyhow::Result<RunFigures> {
    let root = std::env::current_dir()?;
    let bin_dir = std::env::var_os("TETHER_BIN_DIR").map(PathBuf::from).unwrap_or_else(|| root.join("target/release"));
    let home = dir.join("runs-home");
    let _ = std::fs::remove_dir_all(&home);
    let ws = home.join("workspace");
    std::fs::create_dir_all(&ws)?;
    let data = home.join("data");
    std::fs::create_dir_all(&data)?;
    std::fs::write(data.join("settings.json"), json!({"runs": {"roots": [ws], "result_grace_secs": 1}}).to_string())?;
    let port = free_port()?;
    let extra = [("HOME", home.join("user")), ("TETHER_CURSOR_AGENT", bin_dir.join("tether-fake-agent"))];
    let (no_cursor, no_cli) = (home.join("no-cursor"), home.join("no-cli"));
    let mut child = crate::mcp::serve(&bin_dir, &data, &no_cursor, &no_cli, port, TOKEN, &extra)?;
    let base = format!("http://127.0.0.1:{port}");
    wait_http(&format!("{base}/mcp"), "tether serve", &mut child)?;
    let _proc = Proc::new(child);

    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    rt.block_on(async {
        let http = reqwest::Client::new();
        let prompt = format!("[fake:slow-start=1500][fake:events={events}][fake:rate={rate}] bench");
        let id = start_run(&http, &base, TOKEN, &prompt, &ws).await?;
        let mut res = http
            .get(format!("{base}/api/runs/{id}/events"))
            .bearer_auth(TOKEN)
            .header("Accept", "text/event-stream")
            .send()
            .await?
            .error_for_status()?;
        let mut lat = Vec::with_capacity(events);
        let mut buf = String::new();
        let t0 = Instant::now();
        let mut status = String::new();
        while let Some(chunk) =
            tokio::time::timeout(Duration::from_secs(60), res.chunk()).await.context("the stream went quiet")??
        {
            let at = now_ms();
            buf.push_str(&String::from_utf8_lossy(&chunk));
            while let Some(end) = buf.find("\n\n") {
                let msg: String = buf.drain(..end + 2).collect();
                for line in msg.lines().filter_map(|l| l.strip_prefix("data:")) {
                    let v: Value = serde_json::from_str(line.trim()).unwrap_or(Value::Null);
                    if let Some(s) = v.get("status").and_then(Value::as_str) {
                        status = s.to_owned();
                    }
                    let items = if v.is_array() { v.as_array().cloned().unwrap_or_default() } else { vec![v] };
                    for e in items {
                        let text = e.get("text").and_then(Value::as_str).unwrap_or("");
                        if let Some(written) = text.split_once('@').and_then(|(_, ms)| ms.trim().parse::<f64>().ok()) {
                            lat.push(at - written);
                        }
                    }
                }
            }
            if matches!(status.as_str(), "succeeded" | "failed" | "timed_out" | "cancelled" | "lost") {
                break;
            }
        }
        if status != "succeeded" {
            bail!("the benchmark run ended {status:?}");
        }
        let secs = t0.elapsed().as_secs_f64();
        anyhow::ensure!(lat.len() >= events * 9 / 10, "only {} of {events} events arrived", lat.len());
        let lat = sorted(lat);
        let p = |q| percentile(&lat, q);
        let rows = vec![
            Row::new(
                &format!("run events: child stdout → SSE subscriber at {rate} events/s, p50 / p99"),
                format!("{:.2} / {:.2} ms (max {:.2}, {} events)", p(50.0), p(99.0), p(100.0), lat.len()),
                "p99 ≤ 50 ms",
                Some(P99_TARGET_MS / p(99.0).max(0.001)),
            ),
            Row::new("run wall time incl. 1.5 s slow start", format!("{secs:.2} s"), "—", None),
        ];
        let setup = format!(
            "`tether serve` (release) runs the test kit's fake Cursor CLI, which writes {events} `assistant` events at \
             {rate}/s, each stamped with its write time; this process follows `GET /api/runs/{{id}}/events` and \
             measures write → arrival per event (every event is parsed, stored in SQLite and broadcast on the way)."
        );
        anyhow::Ok(RunFigures { rows, setup })
    })
}

/// Starts a run of the (fake) Cursor CLI through the daemon's API; its id.
pub(crate) async fn start_run(
    http: &reqwest::Client,
    base: &str,
    token: &str,
    prompt: &str,
    ws: &Path,
) -> anyhow::Result<String> {
    let started: Value = http
        .post(format!("{base}/api/runs"))
        .bearer_auth(token)
        .header("X-Tether", "1")
        .json(&json!({"prompt": prompt, "workspace": ws}))
        .send()
        .await?
        .error_for_status()?
        .json()
        .await?;
    Ok(started["id"].as_str().context("no run id")?.to_owned())
}
