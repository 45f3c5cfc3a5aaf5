//! The doorbell benchmark: the real `tether serve` (release build) with 200 MCP sessions, each
//! an agent holding its GET stream open (rmcp's Streamable HTTP client). One more client sends
//! signals; each recipient measures the wait from the start of the `signal_send` call to the
//! `notifications/resources/updated` for `tether://inbox` on its stream, then drains
//! (`signals_pending`, timed) to re-arm its bell. A second figure sends one signal to a role all
//! 200 agents hold and waits for every bell (fan-out).

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Context;
use rmcp::model::ResourceUpdatedNotificationParam;
use rmcp::service::NotificationContext;
use rmcp::{ClientHandler, RoleClient};
use serde_json::json;
use tokio::sync::mpsc;

use crate::mcp::{call, call_json, connect_with, start_tether_empty};
use crate::report::{Row, percentile, sorted};

const BELL_P50_TARGET_MS: f64 = 5.0;
const BELL_P99_TARGET_MS: f64 = 20.0;

/// Tells the benchmark which agent's bell rang, and when.
#[derive(Clone)]
struct Bell {
    who: usize,
    tx: mpsc::UnboundedSender<(usize, Instant)>,
}

impl ClientHandler for Bell {
    async fn on_resource_updated(&self, p: ResourceUpdatedNotificationParam, _: NotificationContext<RoleClient>) {
        if p.uri == "tether://inbox" {
            let _ = self.tx.send((self.who, Instant::now()));
        }
    }
}

pub struct SignalFigures {
    pub rows: Vec<Row>,
    pub setup: String,
}

pub fn run(dir: &Path, sessions: usize, sends: usize) -> anyhow::Result<SignalFigures> {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    eprintln!("signals: starting tether serve (release) …");
    let (_tether, url) = start_tether_empty(&rt, dir)?;
    rt.block_on(async {
        eprintln!("signals: {sessions} agents connect and open their GET streams …");
        let (tx, mut rx) = mpsc::unbounded_channel();
        let mut agents = Vec::with_capacity(sessions);
        for i in 0..sessions {
            let c = connect_with(&url, Bell { who: i, tx: tx.clone() }).await?;
            call_json(&c, call("session_start", json!({"name": format!("agent-{i}"), "role": "swarm"}))).await?;
            agents.push(c);
        }
        let sender = connect_with(&url, Bell { who: usize::MAX, tx: tx.clone() }).await?;
        call_json(&sender, call("session_start", json!({"name": "bench-sender"}))).await?;
        // Every stream is open and the join announcements (which never ring) are drained.
        tokio::time::sleep(Duration::from_millis(500)).await;
        for c in &agents {
            call_json(c, call("signals_pending", json!({}))).await?;
        }
        while rx.try_recv().is_ok() {}

        eprintln!("signals: {sends} sends, one recipient at a time …");
        let mut bell = Vec::with_capacity(sends);
        let mut drain = Vec::with_capacity(sends);
        for n in 0..sends + 20 {
            let who = (n * 7) % sessions;
            let t0 = Instant::now();
            call_json(
                &sender,
                call(
                    "signal_send",
                    json!({"to": format!("agent-{who}"), "type": "status_update", "body": format!("#{n}")}),
                ),
            )
            .await?;
            let (rang, at) = tokio::time::timeout(Duration::from_secs(5), rx.recv())
                .await
                .context("no bell within 5 s")?
                .context("bell channel closed")?;
            anyhow::ensure!(rang == who, "agent-{rang} rang, expected agent-{who}");
            let d0 = Instant::now();
            let got = call_json(&agents[who], call("signals_pending", json!({}))).await?;
            let d = d0.elapsed();
            anyhow::ensure!(got["signals"].as_array().is_some_and(|a| a.len() == 1), "drain returned {got}");
            if n >= 20 {
                bell.push(at.duration_since(t0).as_secs_f64() * 1000.0);
                drain.push(d.as_secs_f64() * 1000.0);
            }
        }

        eprintln!("signals: one signal to a role all {sessions} agents hold, 10 times …");
        let mut fan = Vec::new();
        for n in 0..10 {
            let t0 = Instant::now();
            call_json(
                &sender,
                call("signal_send", json!({"to": "swarm", "type": "question", "body": format!("all #{n}")})),
            )
            .await?;
            let mut seen = 0;
            while seen < sessions {
                let (_, at) = tokio::time::timeout(Duration::from_secs(10), rx.recv())
                    .await
                    .context("fan-out bell")?
                    .context("bell channel closed")?;
                seen += 1;
                fan.push(at.duration_since(t0).as_secs_f64() * 1000.0);
            }
            for c in &agents {
                call_json(c, call("signals_pending", json!({}))).await?;
            }
        }
        for c in agents {
            let _ = c.cancel().await;
        }
        let _ = sender.cancel().await;

        let (bell, drain, fan) = (sorted(bell), sorted(drain), sorted(fan));
        let p = |v: &[f64], q| percentile(v, q);
        let rows = vec![
            Row::new(
                &format!("signal sent → bell received, {sessions} sessions with GET streams, p50"),
                format!("{:.2} ms", p(&bell, 50.0)),
                "≤ 5 ms",
                Some(BELL_P50_TARGET_MS / p(&bell, 50.0)),
            ),
            Row::new(
                "signal sent → bell received, p99",
                format!("{:.2} ms (p90 {:.2}, max {:.2})", p(&bell, 99.0), p(&bell, 90.0), p(&bell, 100.0)),
                "≤ 20 ms",
                Some(BELL_P99_TARGET_MS / p(&bell, 99.0)),
            ),
            Row::new(
                "drain (signals_pending) p50 / p99",
                format!("{:.2} / {:.2} ms", p(&drain, 50.0), p(&drain, 99.0)),
                "—",
                None,
            ),
            Row::new(
                &format!("one signal to a role of {sessions} agents → every bell, p50 / p99"),
                format!("{:.2} / {:.2} ms", p(&fan, 50.0), p(&fan, 99.0)),
                "—",
                None,
            ),
        ];
        let setup = format!(
            "{sessions} agents, each its own MCP session with its GET stream open, and one sender, all rmcp \
             Streamable HTTP clients in this process on 2 worker threads; `tether serve` in its own process. \
             {sends} `signal_send` calls to one agent at a time (each a durable, FULL-synchronous commit before \
             the bell), timed from the call's start to the bell on the recipient's stream; the recipient then \
             drains, which re-arms its bell."
        );
        anyhow::Ok(SignalFigures { rows, setup })
    })
}
