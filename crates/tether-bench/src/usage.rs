//! The usage benchmark: a heavy user's year in a fresh store (20,000 runs over 365 days, 10 %
//! of them cloud runs, 2,000 tasks, 8,000 chats, 30,000 imported account usage events), made
//! from a seed in one transaction, and the usage report over it as the CLI, the GUI and the
//! tray ask for it (`tether_core::usage::report::report`, `ops::usage::summary`), each query
//! timed after warm-ups. Beside them, the SQL reads the report is made of, timed alone, so a
//! miss says whether SQLite or the grouping in Rust takes the time.
//!
//! The store lives under `<dir>/usage-bench` (a `Paths::at` of its own; never the real home)
//! and is removed afterwards.

use std::hint::black_box;
use std::path::Path;
use std::time::Instant;

use rusqlite::params;
use tether_board::usage::SpendFilter;
use tether_core::ops::Principal;
use tether_core::usage::report::{Dim, UsageQuery, report, since_ms};
use tether_core::{CursorLocations, Paths, Tether};

use crate::report::{Row, percentile, sorted};

const P95_TARGET_MS: f64 = 50.0;
const WARMUPS: usize = 3;
const DAY_MS: i64 = 86_400_000;

const RUNS: usize = 20_000;
const TASKS: usize = 2_000;
const CHATS: usize = 8_000;
const EVENTS: usize = 30_000;
const PROJECTS: usize = 15;

/// Six models of the shipped price table (under their ids and an alias) and one it does not know.
const MODELS: [(&str, u32); 7] = [
    ("claude-4.5-sonnet", 35),
    ("sonnet-4.5-thinking", 10),
    ("claude-4.5-opus", 15),
    ("gpt-5", 15),
    ("gemini-3-pro", 8),
    ("composer-1", 12),
    ("acme-internal-llm", 5),
];
const ROLES: [&str; 4] = ["implementer", "reviewer", "tester", "planner"];

pub struct UsageFigures {
    pub rows: Vec<Row>,
    pub setup: String,
}

/// splitmix64: the same year from the same seed, without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// In `[lo, hi)`.
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next() % (hi - lo).max(1) as u64) as i64
    }
    /// True with probability `pct` percent.
    fn pct(&mut self, pct: u64) -> bool {
        self.next() % 100 < pct
    }
    fn model(&mut self) -> &'static str {
        let total: u32 = MODELS.iter().map(|m| m.1).sum();
        let mut n = (self.next() % u64::from(total)) as u32;
        for (m, w) in MODELS {
            if n < w {
                return m;
            }
            n -= w;
        }
        MODELS[0].0
    }
}

fn project(i: usize) -> String {
    const NAMES: [&str; PROJECTS] = [
        "tether",
        "billing",
        "web",
        "mobile",
        "infra",
        "data-pipeline",
        "auth",
        "search",
        "docs",
        "cli",
        "payments",
        "analytics",
        "design-system",
        "ml-platform",
        "ops-tools",
    ];
    format!("/home/dev/code/{}", NAMES[i % PROJECTS])
}

fn agent_id(n: usize) -> String {
    format!("bc-{n:08x}-0000-4000-8000-{:012x}", n * 7919)
}

struct Generated {
    runs: usize,
    cloud_runs: usize,
    runs_with_tokens: usize,
    tasks: usize,
    chats: usize,
    chats_with_tokens: usize,
    events: usize,
    events_by_agent: usize,
    secs: f64,
}

/// A heavy user's year, ending now, into `t`'s store in one transaction.
fn generate(t: &Tether, seed: u64) -> anyhow::Result<Generated> {
    let t0 = Instant::now();
    let mut rng = Rng(seed ^ 0x0075_7361_6765);
    let now = chrono::Utc::now().timestamp_millis();
    let start = now - 365 * DAY_MS;
    let span = now - start;
    let mut g = Generated {
        runs: RUNS,
        cloud_runs: 0,
        runs_with_tokens: 0,
        tasks: TASKS,
        chats: CHATS,
        chats_with_tokens: 0,
        events: EVENTS,
        events_by_agent: 0,
        secs: 0.0,
    };
    t.store.durable(|txn| {
        let mut task = txn.prepare(
            "INSERT INTO tasks(num, title, description, status, priority, role, project, created_by, created_at, updated_at)
             VALUES (?1, ?2, '', ?3, ?4, ?5, ?6, 'bench', ?7, ?8)",
        )?;
        for n in 1..=TASKS {
            let at = start + span * (n as i64 - 1) / TASKS as i64;
            let status = if n > TASKS - 40 { "in_progress" } else if rng.pct(5) { "cancelled" } else { "done" };
            let role = ROLES[n % ROLES.len()];
            task.execute(params![
                n as i64,
                format!("Task {n}: make the {} module do its part", n % 97),
                status,
                rng.range(0, 4),
                role,
                project(n),
                at,
                at + rng.range(DAY_MS / 24, 5 * DAY_MS),
            ])?;
        }

        let mut run = txn.prepare(
            "INSERT INTO runs(num, kind, prompt, workspace, model, role, task, timeout_ms, parent, root, status,
                 requested_by, created_at, started_at, ended_at, duration_ms, input_tokens, output_tokens,
                 cache_read_tokens, cache_write_tokens, cost_usd, usage_source, cloud, exit_code)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 1800000, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18,
                 ?19, ?20, ?21, ?22, ?23)",
        )?;
        let mut roots: Vec<i64> = Vec::with_capacity(RUNS);
        let mut cloud_agents: Vec<(String, i64, i64)> = Vec::new();
        for i in 0..RUNS {
            let num = i as i64 + 1;
            let created = start + span * i as i64 / RUNS as i64 + rng.range(0, 60_000);
            let started = created + rng.range(200, 30_000);
            let ended = started + rng.range(30_000, 30 * 60_000);
            let cloud = rng.pct(10);
            // A follow-up of the run before it, now and then: the same chain (agent).
            let followup = i > 0 && rng.pct(15);
            let (parent, root) = if followup { (Some(num - 1), roots[i - 1]) } else { (None, num) };
            roots.push(root);
            let p = rng.next() as usize % PROJECTS;
            let model = rng.model();
            let role = (!rng.pct(30)).then(|| ROLES[rng.next() as usize % ROLES.len()]);
            let task = rng.pct(70).then(|| ((i * TASKS / RUNS) as i64 + rng.range(0, 3)).clamp(1, TASKS as i64));
            let status = match rng.next() % 100 {
                0..85 => "succeeded",
                85..97 => "failed",
                _ => "over_budget",
            };
            let tokens = (!rng.pct(10)).then(|| {
                (
                    rng.range(20_000, 400_000),
                    rng.range(1_000, 30_000),
                    rng.range(50_000, 2_000_000),
                    rng.range(0, 50_000),
                )
            });
            g.runs_with_tokens += usize::from(tokens.is_some());
            let cost = match tokens {
                Some((i, o, r, w)) if cloud && !rng.pct(5) => {
                    Some(((i + w) as f64 * 3.0 + o as f64 * 15.0 + r as f64 * 0.3) / 1e6)
                }
                _ => None,
            };
            let cloud_spec = cloud.then(|| {
                g.cloud_runs += 1;
                let id = agent_id(root as usize);
                cloud_agents.push((id.clone(), started, ended));
                serde_json::json!({
                    "repo": format!("https://github.com/acme/{}", project(p).rsplit('/').next().unwrap_or("")),
                    "agent_id": id,
                    "continues": followup,
                    "raw_status": "FINISHED",
                })
                .to_string()
            });
            run.execute(params![
                num,
                if cloud { "cloud" } else { "local" },
                format!("Run {num}: fix the failing check in {} and add a test", project(p)),
                (!cloud).then(|| project(p)),
                model,
                role,
                task,
                parent,
                followup.then_some(root),
                status,
                if role.is_some() { "orchestrator" } else { "dev" },
                created,
                started,
                ended,
                ended - started,
                tokens.map(|t| t.0),
                tokens.map(|t| t.1),
                tokens.map(|t| t.2),
                tokens.map(|t| t.3),
                cost,
                tokens.map(|_| if cloud { "cloud" } else { "result" }),
                cloud_spec,
                (!cloud).then_some(i64::from(status != "succeeded")),
            ])?;
        }

        txn.execute(
            "INSERT INTO sources(id, path, kind, status, sessions, indexed_at)
             VALUES (1, '/bench/cursor/User/globalStorage/state.vscdb', 'global', 'complete', ?1, ?2)",
            params![CHATS as i64, now],
        )?;
        let mut chat = txn.prepare(
            "INSERT INTO sessions(id, source_id, origin, format, title, project, project_via, model, created_at,
                 updated_at, message_count, input_tokens, output_tokens)
             VALUES (?1, 1, 'ide', 'composer', ?2, ?3, 'identifier', ?4, ?5, ?6, ?7, ?8, ?9)",
        )?;
        for i in 0..CHATS {
            let created = start + span * i as i64 / CHATS as i64 + rng.range(0, 3_600_000);
            let updated = (created + rng.range(60_000, 3 * DAY_MS)).min(now - 1);
            let tokens = rng.pct(5).then(|| (rng.range(5_000, 500_000), rng.range(500, 40_000)));
            g.chats_with_tokens += usize::from(tokens.is_some());
            chat.execute(params![
                format!("{:08x}-{:04x}-4bench-8000-{:012x}", i, i % 65_536, i * 31),
                format!("Chat {i} about {}", project(i)),
                project(rng.next() as usize % PROJECTS),
                rng.model(),
                created,
                updated,
                rng.range(1, 200),
                tokens.map(|t| t.0),
                tokens.map(|t| t.1),
            ])?;
        }

        let mut event = txn.prepare(
            "INSERT INTO usage_events(at, kind, model, max_mode, cloud_agent, input_cache_write, input_no_cache_write,
                 cache_read, output, total, cost_usd, cost_text, errored, extra, file, line, imported_at)
             VALUES (?1, ?2, ?3, 0, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, '{}', 'usage-events-bench.csv', ?13, ?14)",
        )?;
        for i in 0..EVENTS {
            // Distinct times (the milliseconds step on), so (at, model, kind, tokens, cost) is unique.
            let at = start + span * i as i64 / EVENTS as i64 + rng.range(0, 60_000);
            let (kind, cost, errored) = match rng.next() % 100 {
                0..70 => ("Included", None, false),
                70..97 => ("Usage-based", Some(rng.range(1, 400) as f64 / 100.0), false),
                _ => ("Errored, Not Charged", Some(0.0), true),
            };
            let cost_text = match cost {
                None => "Included".to_owned(),
                Some(c) => format!("${c:.2}"),
            };
            // Now and then a cloud agent's event, by its id.
            let agent = if !cloud_agents.is_empty() && rng.pct(5) {
                let k = (i * cloud_agents.len() / EVENTS).min(cloud_agents.len() - 1);
                Some(cloud_agents[k].0.clone())
            } else {
                None
            };
            g.events_by_agent += usize::from(agent.is_some());
            let (w, nw, r, o) =
                (rng.range(0, 40_000), rng.range(1_000, 200_000), rng.range(0, 1_500_000), rng.range(100, 20_000));
            event.execute(params![
                at,
                kind,
                rng.model(),
                agent,
                w,
                nw,
                r,
                o,
                w + nw + r + o,
                cost,
                cost_text,
                errored,
                i as i64 + 2,
                now,
            ])?;
        }
        Ok(())
    })?;
    g.secs = t0.elapsed().as_secs_f64();
    Ok(g)
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1000.0
}

/// `f` timed `reps` times after the warm-ups, sorted (ms).
fn timed(reps: usize, mut f: impl FnMut() -> anyhow::Result<()>) -> anyhow::Result<Vec<f64>> {
    for _ in 0..WARMUPS {
        f()?;
    }
    let mut v = Vec::with_capacity(reps);
    for _ in 0..reps {
        let t = Instant::now();
        f()?;
        v.push(ms(t));
    }
    Ok(sorted(v))
}

fn q(since: &str, by: &[Dim], source: Option<&str>, limit: Option<usize>) -> UsageQuery {
    UsageQuery { since: Some(since.into()), until: None, by: by.to_vec(), source: source.map(str::to_owned), limit }
}

pub fn run(dir: &Path, seed: u64, reps: usize) -> anyhow::Result<UsageFigures> {
    let reps = reps.max(1);
    let home = dir.join("usage-bench");
    let _ = std::fs::remove_dir_all(&home);
    std::fs::create_dir_all(&home)?;
    let t = Tether::open(
        Paths::at(home.join("home")),
        CursorLocations::explicit(Some(home.join("no-cursor/User")), Some(home.join("no-cursor/home"))),
    )?;
    eprintln!("usage: generating a heavy user's year ({RUNS} runs, {CHATS} chats, {EVENTS} account events) …");
    let g = generate(&t, seed)?;
    eprintln!("usage: generated in {:.1} s; timing the report, {reps} times each after {WARMUPS} warm-ups …", g.secs);

    let queries: Vec<(&str, UsageQuery)> = vec![
        ("`--since 1y --by day`", q("1y", &[Dim::Day], None, None)),
        ("`--since 1y --by model`", q("1y", &[Dim::Model], None, None)),
        ("`--since 1y --by day,model`", q("1y", &[Dim::Day, Dim::Model], None, None)),
        ("`--since 30d --by run --limit 20`", q("30d", &[Dim::Run], None, Some(20))),
        ("`--since 1y --by task --source runs`", q("1y", &[Dim::Task], Some("runs"), None)),
    ];
    let mut rows = Vec::new();
    let mut verdicts = Vec::new();
    let p = |v: &[f64]| {
        format!(
            "p50 {:.1} ms · p95 {:.1} ms · max {:.1} ms",
            percentile(v, 50.0),
            percentile(v, 95.0),
            percentile(v, 100.0)
        )
    };
    let mut first = None;
    for (name, query) in &queries {
        let r = report(&t, query)?;
        anyhow::ensure!(!r.rows.is_empty(), "{name}: no rows");
        if query.limit == Some(20) {
            anyhow::ensure!(r.rows.len() == 20, "{name}: {} rows, not 20", r.rows.len());
        }
        if first.is_none() {
            first = Some(r.coverage.clone());
        }
        let v = timed(reps, || {
            black_box(report(&t, query)?);
            Ok(())
        })?;
        let p95 = percentile(&v, 95.0);
        eprintln!("usage: {name}: {} ({} rows)", p(&v), r.rows.len());
        verdicts.push((name.to_string(), p95));
        rows.push(Row::new(
            &format!("report {name} ({} rows)", r.rows.len()),
            p(&v),
            "p95 ≤ 50 ms",
            Some(P95_TARGET_MS / p95.max(0.001)),
        ));
    }
    let who = Principal::person("bench");
    let v = timed(reps, || {
        black_box(tether_core::ops::usage::summary(&t, &who)?);
        Ok(())
    })?;
    let p95 = percentile(&v, 95.0);
    eprintln!("usage: summary: {}", p(&v));
    verdicts.push(("summary".into(), p95));
    rows.push(Row::new(
        "`ops::usage::summary` (the tray: today's runs, the last 30 days by source)",
        p(&v),
        "p95 ≤ 50 ms",
        Some(P95_TARGET_MS / p95.max(0.001)),
    ));

    // What the report is made of: one source at a time, then the SQL reads alone.
    for (name, query) in [
        ("`--since 1y --by day --source runs`", q("1y", &[Dim::Day], Some("runs"), None)),
        ("`--since 1y --by day --source chats`", q("1y", &[Dim::Day], Some("chats"), None)),
        ("`--since 1y --by day --source account`", q("1y", &[Dim::Day], Some("account"), None)),
    ] {
        let v = timed(reps, || {
            black_box(report(&t, &query)?);
            Ok(())
        })?;
        eprintln!("usage: {name}: {}", p(&v));
        rows.push(Row::new(&format!("  one source: report {name}"), p(&v), "—", None));
    }
    let year = since_ms("1y")?;
    let spend = timed(reps, || {
        black_box(
            tether_core::Board::new(&t.store)
                .usage()
                .spend(&SpendFilter { since_ms: Some(year), ..Default::default() })?,
        );
        Ok(())
    })?;
    let chats = timed(reps, || {
        black_box(tether_history::usage::chats(&t.store, Some(year), None)?);
        Ok(())
    })?;
    let events = timed(reps, || {
        black_box(tether_history::usage::account_events(&t.store, Some(year), None)?);
        Ok(())
    })?;
    let p50 = |v: &[f64]| format!("p50 {:.1} ms · p95 {:.1} ms", percentile(v, 50.0), percentile(v, 95.0));
    rows.push(Row::new("  read alone: runs' spend over the year (`board::usage::spend`)", p50(&spend), "—", None));
    rows.push(Row::new("  read alone: chats over the year (`history::usage::chats`)", p50(&chats), "—", None));
    rows.push(Row::new(
        "  read alone: account events over the year (`history::usage::account_events`)",
        p50(&events),
        "—",
        None,
    ));

    let cov = first.unwrap_or_default();
    let missed: Vec<&str> = verdicts.iter().filter(|(_, p95)| *p95 > P95_TARGET_MS).map(|(n, _)| n.as_str()).collect();
    let setup = format!(
        "A heavy user's year, ending now, from seed {seed}, written in one transaction ({:.1} s) into a fresh \
         store: {} runs over 365 days ({} cloud, {} with token figures; {} tasks; {PROJECTS} projects; \
         7 models, one without a price), {} chats ({} with token figures), {} imported account events \
         ({} by a cloud agent's id). The last year holds {} runs, {} chats and {} account events. \
         `tether_core::usage::report::report` in process, {reps} times per query after {WARMUPS} warm-ups. \
         Goal: usage queries over a year of runs and chats, p95 ≤ 50 ms — {}.",
        g.secs,
        g.runs,
        g.cloud_runs,
        g.runs_with_tokens,
        g.tasks,
        g.chats,
        g.chats_with_tokens,
        g.events,
        g.events_by_agent,
        cov.runs,
        cov.chats,
        cov.account_events,
        if missed.is_empty() { "PASS for every query".to_owned() } else { format!("MISS for {}", missed.join(", ")) },
    );
    drop(t);
    let _ = std::fs::remove_dir_all(&home);
    Ok(UsageFigures { rows, setup })
}
