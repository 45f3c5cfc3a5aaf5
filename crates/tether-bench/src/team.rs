//! Team mode on PostgreSQL: a throwaway cluster on loopback that syncs its commits (as a real one
//! does), and Tether instances in this process joined to it as machines.
//!
//! - claim: one agent claiming a task at a time (each claim one conditional statement in a
//!   SERIALIZABLE transaction), then 12 agents over 3 machines racing for 4 tasks, 10 rounds
//!   (each task claimed exactly once, checked);
//! - bell across machines: two daemons (the `Host` `tether serve` runs) on two machines; an agent
//!   on B holds its MCP stream, the person on A signals it; the wait from sending on A to the
//!   `tether://inbox` notification on B (A's commit → NOTIFY → B's store watcher → B's doorbell);
//! - idle runners: N daemons started as runners (`serve --runner`) over an empty queue, each
//!   with every component it runs; the PostgreSQL processes' CPU over a window, as a share of one
//!   core.

use std::path::Path;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use anyhow::Context;
use rmcp::model::ResourceUpdatedNotificationParam;
use rmcp::service::NotificationContext;
use rmcp::{ClientHandler, RoleClient};
use serde_json::json;
use tether_board::principal::{Actor, AgentKind, Identity, Principal};
use tether_board::tasks::{ClaimTarget, NewTask};
use tether_core::daemon::RunnerRole;
use tether_core::ops::team::{self, Join};
use tether_core::token::{self, Backend};
use tether_core::{CursorLocations, Paths, Tether};
use tether_daemon::{Host, HostOptions};
use tether_testkit::pg::{Cluster, PASSWORD};
use tokio::sync::mpsc;

use crate::mcp::{call, call_json, connect_as};
use crate::report::{Row, percentile, sorted};

const CLAIM_P99_TARGET_MS: f64 = 20.0;
const BELL_P99_TARGET_MS: f64 = 100.0;
const IDLE_CORE_TARGET: f64 = 0.05;

pub struct TeamFigures {
    pub rows: Vec<Row>,
    pub setup: String,
}

pub fn run(dir: &Path, runners: usize, window_secs: f64, claims: usize, bells: usize) -> anyhow::Result<TeamFigures> {
    eprintln!("team: a PostgreSQL cluster (fsync on) …");
    let cluster = Cluster::start_durable();
    let root = dir.join("team");
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root)?;
    let mut rows = claim_rows(&cluster, &root, claims)?;
    rows.extend(bell_rows(&cluster, &root, bells)?);
    rows.extend(idle_rows(&cluster, &root, runners, window_secs)?);
    let version = cluster.psql("postgres", "SHOW server_version").trim().to_owned();
    Ok(TeamFigures {
        rows,
        setup: format!(
            "PostgreSQL {version} on loopback (fsync on), Tether instances in this process joined as machines; \
             {claims} single claims, 12 agents over 3 machines racing for 4 tasks × 10 rounds, {bells} signals \
             A → B, {runners} idle runner daemons over {window_secs} s."
        ),
    })
}

/// A Tether on its own data dir, joined to the team database at `url` as `name`.
fn machine(root: &Path, url: &str, name: &str) -> anyhow::Result<Tether> {
    let paths = Paths::at(root.join(name));
    paths.ensure()?;
    token::set_backend(&paths, Backend::File)?;
    let t = Tether::open(paths, CursorLocations::explicit(Some(root.join("no-cursor")), Some(root.join("no-cli"))))?;
    team::join(
        &t,
        &Principal::person("bench"),
        Join { url: url.into(), machine: Some(name.into()), password: Some(PASSWORD.into()), ..Default::default() },
    )?;
    Ok(t)
}

fn agent(id: &str) -> Actor {
    Actor {
        who: Identity { id: id.into(), kind: AgentKind::Mcp, mcp_session: None, project: None },
        lease_ms: Some(600_000),
    }
}

fn claim_rows(cluster: &Cluster, root: &Path, claims: usize) -> anyhow::Result<Vec<Row>> {
    let url = cluster.database();
    let machines: Vec<Arc<Tether>> = ["m1", "m2", "m3"]
        .iter()
        .map(|m| machine(&root.join("claims"), &url, m).map(Arc::new))
        .collect::<anyhow::Result<_>>()?;
    let person = Actor::person("bench");
    eprintln!("team: {claims} claims, one at a time …");
    let a = &machines[0];
    let mut single = Vec::with_capacity(claims);
    for n in 0..claims + 10 {
        let task = a.board().tasks().create(&person, &NewTask { title: format!("t{n}"), ..Default::default() })?;
        let t0 = Instant::now();
        a.board().tasks().claim(&agent(&format!("mcp:solo{n}")), &ClaimTarget::Id(task.id))?;
        if n >= 10 {
            single.push(t0.elapsed().as_secs_f64() * 1000.0);
        }
    }
    eprintln!("team: 12 agents over 3 machines racing for 4 tasks, 10 rounds …");
    let mut raced = Vec::new();
    // Round 0 warms up: each machine's pool opens its connections (as a running daemon's has).
    for round in 0..11 {
        for i in 0..4 {
            a.board().tasks().create(&person, &NewTask { title: format!("r{round} t{i}"), ..Default::default() })?;
        }
        let barrier = Arc::new(Barrier::new(12));
        let handles: Vec<_> = (0..12)
            .map(|k| {
                let (t, barrier) = (Arc::clone(&machines[k % 3]), Arc::clone(&barrier));
                std::thread::spawn(move || {
                    let me = agent(&format!("mcp:r{round}a{k}"));
                    barrier.wait();
                    let t0 = Instant::now();
                    let got = t.board().tasks().claim(&me, &ClaimTarget::Next { role: None, project: None });
                    (got.map(|t| t.id), t0.elapsed().as_secs_f64() * 1000.0)
                })
            })
            .collect();
        let mut won = Vec::new();
        for h in handles {
            let (got, ms) = h.join().map_err(|_| anyhow::anyhow!("a claiming thread panicked"))?;
            if round > 0 {
                raced.push(ms);
            }
            match got {
                Ok(id) => won.push(id),
                Err(e) if e.code() == tether_core::ErrorCode::NothingToClaim => {}
                Err(e) => return Err(e).context("a racing claim"),
            }
        }
        won.sort();
        let before = won.len();
        won.dedup();
        anyhow::ensure!(before == 4 && won.len() == 4, "round {round}: {before} claims of {} tasks", won.len());
    }
    let (single, raced) = (sorted(single), sorted(raced));
    let p = |v: &[f64], q| percentile(v, q);
    Ok(vec![
        Row::new(
            "task claim, one agent at a time, p50 / p99",
            format!("{:.2} / {:.2} ms", p(&single, 50.0), p(&single, 99.0)),
            "p99 ≤ 20 ms",
            Some(CLAIM_P99_TARGET_MS / p(&single, 99.0)),
        ),
        Row::new(
            "task claim, 12 agents over 3 machines racing for 4 tasks, p50 / p99",
            format!("{:.2} / {:.2} ms (each task claimed once, 10 rounds)", p(&raced, 50.0), p(&raced, 99.0)),
            "p99 ≤ 20 ms",
            Some(CLAIM_P99_TARGET_MS / p(&raced, 99.0)),
        ),
    ])
}

/// Tells the benchmark when the inbox bell rang.
#[derive(Clone)]
struct Bell(mpsc::UnboundedSender<Instant>);

impl ClientHandler for Bell {
    async fn on_resource_updated(&self, p: ResourceUpdatedNotificationParam, _: NotificationContext<RoleClient>) {
        if p.uri == "tether://inbox" {
            let _ = self.0.send(Instant::now());
        }
    }
}

/// A daemon on its own data dir, joined to the team database as `name`.
fn daemon(root: &Path, url: &str, name: &str, runner: RunnerRole) -> anyhow::Result<(Arc<Host>, String)> {
    let paths = Paths::at(root.join(name));
    paths.ensure()?;
    token::set_backend(&paths, Backend::File)?;
    let opts = HostOptions { host: "127.0.0.1".into(), port: 0, port_from: "bench", runner };
    let cursor = CursorLocations::explicit(Some(root.join("no-cursor")), Some(root.join("no-cli")));
    let host = Host::start(paths.clone(), cursor, &opts, None)?;
    team::join(
        &host.tether,
        &Principal::person("bench"),
        Join { url: url.into(), machine: Some(name.into()), password: Some(PASSWORD.into()), ..Default::default() },
    )?;
    let token = token::mcp_token(&paths, token::NoKeyring::Refuse)?.0;
    Ok((host, token))
}

fn bell_rows(cluster: &Cluster, root: &Path, bells: usize) -> anyhow::Result<Vec<Row>> {
    let url = cluster.database();
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    let root = root.join("bells");
    rt.block_on(async {
        eprintln!("team: two daemons on two machines, an agent on B, {bells} signals from A …");
        let (a, _) = daemon(&root, &url, "a", RunnerRole::default())?;
        let (b, b_token) = daemon(&root, &url, "b", RunnerRole::default())?;
        let (tx, mut rx) = mpsc::unbounded_channel();
        let agent = connect_as(&b.url(), &b_token, Bell(tx)).await?;
        call_json(&agent, call("session_start", json!({"name": "far-agent"}))).await?;
        tokio::time::sleep(Duration::from_millis(500)).await;
        call_json(&agent, call("signals_pending", json!({}))).await?;
        while rx.try_recv().is_ok() {}
        let me = Principal::person("bench");
        let mut waits = Vec::with_capacity(bells);
        for n in 0..bells + 5 {
            let new = tether_board::signals::NewSignal {
                to: Some("far-agent".into()),
                kind: Some("status_update".into()),
                body: format!("#{n}"),
                ..Default::default()
            };
            let (t, m) = (Arc::clone(&a.tether), me.clone());
            let t0 = Instant::now();
            tokio::task::spawn_blocking(move || tether_core::ops::signals::send(&t, &m, &new)).await??;
            let at = tokio::time::timeout(Duration::from_secs(10), rx.recv())
                .await
                .with_context(|| format!("no bell on B within 10 s for signal #{n}"))?
                .context("bell channel closed")?;
            if n >= 5 {
                waits.push(at.duration_since(t0).as_secs_f64() * 1000.0);
            }
            call_json(&agent, call("signals_pending", json!({}))).await?;
            while rx.try_recv().is_ok() {}
        }
        let _ = agent.cancel().await;
        a.shutdown().await?;
        b.shutdown().await?;
        let waits = sorted(waits);
        let p = |q| percentile(&waits, q);
        Ok(vec![Row::new(
            "signal on machine A → bell on machine B, p50 / p99",
            format!("{:.1} / {:.1} ms (max {:.1})", p(50.0), p(99.0), p(100.0)),
            "p99 ≤ 100 ms",
            Some(BELL_P99_TARGET_MS / p(99.0)),
        )])
    })
}

/// CPU time (user + system, in clock ticks) of the server's main process and its sessions.
fn server_ticks(postmaster: u32) -> u64 {
    let Ok(rd) = std::fs::read_dir("/proc") else { return 0 };
    rd.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            // Fields after the command (which may hold spaces) start after its closing paren.
            let rest = &stat[stat.rfind(')')? + 2..];
            let f: Vec<&str> = rest.split(' ').collect();
            let ppid: u32 = f.get(1)?.parse().ok()?;
            let field = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
            // The postmaster's own time plus what its reaped children used (cutime, cstime), so a
            // session that ends inside the window moves its time, never loses it.
            if pid == postmaster {
                Some(field(11) + field(12) + field(13) + field(14))
            } else {
                (ppid == postmaster).then(|| field(11) + field(12))
            }
        })
        .sum()
}

fn idle_rows(cluster: &Cluster, root: &Path, runners: usize, window_secs: f64) -> anyhow::Result<Vec<Row>> {
    let url = cluster.database();
    let postmaster = cluster.postmaster_pid().context("reading postmaster.pid")?;
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    let root = root.join("idle");
    rt.block_on(async {
        // What the server costs with no machine at all (its own background processes): the
        // runners' share is what they add to it.
        eprintln!("team: the database alone, {window_secs} s …");
        let (b0, bt0) = (Instant::now(), server_ticks(postmaster));
        tokio::time::sleep(Duration::from_secs_f64(window_secs)).await;
        let baseline =
            server_ticks(postmaster).saturating_sub(bt0) as f64 / clock_ticks_per_sec() / b0.elapsed().as_secs_f64();
        eprintln!("team: {runners} runner daemons over an empty queue, {window_secs} s …");
        let mut hosts = Vec::with_capacity(runners);
        for i in 0..runners {
            let role = RunnerRole { takes_others: true, labels: vec!["linux".into()] };
            hosts.push(daemon(&root, &url, &format!("runner-{i}"), role)?.0);
            if (i + 1) % 10 == 0 {
                eprintln!("team: {} runners up …", i + 1);
            }
        }
        // Past their first passes (recovery, first claim, first check-in).
        tokio::time::sleep(Duration::from_secs(3)).await;
        let db = url.rsplit('/').next().unwrap_or_default().to_owned();
        let stats = || -> (i64, i64) {
            let row = cluster.psql(
                "postgres",
                &format!("SELECT sessions, xact_commit + xact_rollback FROM pg_stat_database WHERE datname = '{db}'"),
            );
            let mut f = row.trim().split('|').map(|v| v.parse::<i64>().unwrap_or(0));
            (f.next().unwrap_or(0), f.next().unwrap_or(0))
        };
        let (t0, ticks0, (sessions0, xacts0)) = (Instant::now(), server_ticks(postmaster), stats());
        tokio::time::sleep(Duration::from_secs_f64(window_secs)).await;
        let (secs, ticks) = (t0.elapsed().as_secs_f64(), server_ticks(postmaster).saturating_sub(ticks0));
        let (sessions1, xacts1) = stats();
        eprintln!("team: stopping the runners …");
        for h in hosts {
            h.shutdown().await?;
        }
        let total = ticks as f64 / clock_ticks_per_sec() / secs;
        let core = (total - baseline).max(0.0);
        Ok(vec![Row::new(
            &format!("{runners} idle runners (whole daemons) → the database's CPU"),
            format!(
                "{:.1} % of a core ({:.1} % in all, {:.1} % with no machine; {:.1} transactions/s, {} sessions opened)",
                core * 100.0,
                total * 100.0,
                baseline * 100.0,
                (xacts1 - xacts0) as f64 / secs,
                sessions1 - sessions0
            ),
            "< 5 % of a core",
            Some(if core > 0.0 { IDLE_CORE_TARGET / core } else { f64::INFINITY }),
        )])
    })
}

/// `sysconf(_SC_CLK_TCK)`: 100 on Linux (USER_HZ), fixed by the kernel's ABI.
fn clock_ticks_per_sec() -> f64 {
    100.0
}
