//! The `live` suite: what Tether costs while the person works. `tether serve` (the shipped
//! binary) runs over the generated history while a writer does what Cursor does — during the first
//! index, then idle, then while an answer streams (a bubble grown and the composer's row rewritten
//! ten times a second). Measured from outside the daemon: its CPU and wake-ups from `/proc`, and
//! Cursor's side as the writer sees it: how long each of its commits takes beside Tether (against
//! the same writes with no Tether running), and how soon a streamed word, or a change to another
//! chat, is searchable in Tether's index (read by this process, never asking the daemon).
//!
//! Linux only (it reads `/proc`); depends on the test kit's generator and writer, nothing else of
//! Tether's but its binary.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::bail;
use rusqlite::Connection;
use tether_testkit::generate::{self, StreamingChat};

use crate::mcp::{Proc, free_port, health, wait_http};
use crate::report::{Row, percentile, sorted};

const TOKEN: &str = "bench-live-token";
/// Cursor's chunks while an answer streams: ten a second.
const STREAM_HZ: u64 = 10;

/// How long Cursor waits for a lock before a commit fails: SQLite's busy timeout.
const BUSY_TIMEOUT_MS: u64 = 5000;

/// The writer's time asleep in its busy handler since the last [`lock_waited`], in ns: how long
/// its write waited for another process's lock (Tether's, here), apart from its own work and the
/// machine's scheduling. One writer runs at a time (each is joined before the next starts).
static LOCK_WAIT_NS: AtomicU64 = AtomicU64::new(0);

/// SQLite's own busy handler (`sqliteDefaultBusyCallback`: sleeps of 1, 2, 5, 10, 15, 20, 25, 25,
/// 25, 50, 50, then 100 ms, up to the busy timeout), timing its sleeps into [`LOCK_WAIT_NS`].
fn busy_like_sqlite(count: i32) -> bool {
    const DELAYS: [u64; 12] = [1, 2, 5, 10, 15, 20, 25, 25, 25, 50, 50, 100];
    let n = usize::try_from(count).unwrap_or(0);
    let prior: u64 = DELAYS.iter().take(n).sum::<u64>() + 100 * n.saturating_sub(DELAYS.len()) as u64;
    let delay = DELAYS.get(n).copied().unwrap_or(100).min(BUSY_TIMEOUT_MS.saturating_sub(prior));
    if delay == 0 {
        return false;
    }
    let t = Instant::now();
    std::thread::sleep(Duration::from_millis(delay));
    LOCK_WAIT_NS.fetch_add(u64::try_from(t.elapsed().as_nanos()).unwrap_or(u64::MAX), Ordering::Relaxed);
    true
}

/// The lock wait since the last call, in ms.
fn lock_waited() -> f64 {
    LOCK_WAIT_NS.swap(0, Ordering::Relaxed) as f64 / 1e6
}

/// One of Cursor's writes as the writer saw it: its whole time and, of it, its wait for a lock.
#[derive(Default)]
struct Writes {
    total: Vec<f64>,
    lock: Vec<f64>,
}

impl Writes {
    fn sorted(self) -> Self {
        Writes { total: sorted(self.total), lock: sorted(self.lock) }
    }
}

pub(crate) struct LiveFigures {
    pub(crate) setup: String,
    pub(crate) rows: Vec<Row>,
}

/// What `/proc` says of a process at one moment.
#[derive(Clone, Copy)]
struct Sample {
    at: Instant,
    cpu_s: f64,
    /// Voluntary context switches of all its threads: each is a sleep that something woke.
    wakeups: u64,
    switches: u64,
    /// `read`-family system calls (files, sockets, eventfds): a file polled on a timer shows here.
    syscr: u64,
    rss_kb: u64,
}

fn sample(pid: u32) -> Sample {
    let at = Instant::now();
    let cpu_s = crate::index::cpu_secs(&format!("/proc/{pid}/stat"));
    let (mut wakeups, mut switches) = (0, 0);
    if let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) {
        for t in tasks.flatten() {
            let status = std::fs::read_to_string(t.path().join("status")).unwrap_or_default();
            for l in status.lines() {
                let n = || l.split_whitespace().nth(1).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
                if l.starts_with("voluntary_ctxt_switches:") {
                    wakeups += n();
                    switches += n();
                } else if l.starts_with("nonvoluntary_ctxt_switches:") {
                    switches += n();
                }
            }
        }
    }
    let field = |text: &str, name: &str| {
        text.lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
            .unwrap_or(0)
    };
    let syscr = field(&std::fs::read_to_string(format!("/proc/{pid}/io")).unwrap_or_default(), "syscr:");
    let rss_kb = field(&std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default(), "VmRSS:");
    Sample { at, cpu_s, wakeups, switches, syscr, rss_kb }
}

struct Window {
    secs: f64,
    cpu_pct: f64,
    wakeups_per_s: f64,
    switches_per_s: f64,
    syscr_per_min: f64,
}

fn window(a: Sample, b: Sample) -> Window {
    let secs = b.at.duration_since(a.at).as_secs_f64().max(1e-3);
    Window {
        secs,
        cpu_pct: (b.cpu_s - a.cpu_s) / secs * 100.0,
        wakeups_per_s: (b.wakeups.saturating_sub(a.wakeups)) as f64 / secs,
        switches_per_s: (b.switches.saturating_sub(a.switches)) as f64 / secs,
        syscr_per_min: (b.syscr.saturating_sub(a.syscr)) as f64 / secs * 60.0,
    }
}

/// A marker to look for in Tether's index, and when its write committed.
type Probe = (String, Instant);

/// Cursor's writer: streams into `chat` at ten chunks a second until `stop`, timing each commit;
/// every `probe_every` chunks a marker word goes into the answer (sent on `streamed`), and every
/// `elsewhere_every` a new message with a marker goes into another chat (sent on `elsewhere`).
struct Writer {
    db: PathBuf,
    chat: String,
    others: Vec<String>,
    probe_every: u64,
    elsewhere_every: u64,
}

impl Writer {
    fn run(
        &self,
        stop: &AtomicBool,
        streamed: Option<&mpsc::Sender<Probe>>,
        elsewhere: Option<&mpsc::Sender<Probe>>,
    ) -> anyhow::Result<Writes> {
        let mut conn = Connection::open(&self.db)?;
        // Cursor's own wait for a lock, SQLite's busy timeout, with its sleeps timed; a commit
        // that needs more than this fails.
        conn.busy_handler(Some(busy_like_sqlite))?;
        // Without the disk's flushes (tens of ms each on a VM's disk, and nothing of Tether's),
        // a commit's time is its work plus what it waited for a lock.
        conn.pragma_update(None, "synchronous", "OFF")?;
        let run = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH)?.as_millis();
        let mut chat = StreamingChat::start(&conn, &self.chat, &format!("live-{run}"))?;
        let mut waits = Writes::default();
        let period = Duration::from_millis(1000 / STREAM_HZ);
        let mut next = Instant::now();
        let mut i: u64 = 0;
        while !stop.load(Ordering::Relaxed) {
            i += 1;
            let probe =
                (streamed.is_some() && i.is_multiple_of(self.probe_every)).then(|| format!("livestream{run}x{i}"));
            let words = match &probe {
                Some(m) => format!("{m} and then"),
                None => format!("chunk {i} of the answer"),
            };
            let t0 = Instant::now();
            lock_waited();
            chat.step(&mut conn, &words)?;
            waits.total.push(t0.elapsed().as_secs_f64() * 1000.0);
            waits.lock.push(lock_waited());
            if let (Some(m), Some(tx)) = (probe, streamed) {
                let _ = tx.send((m, Instant::now()));
            }
            if let Some(tx) = elsewhere
                && i % self.elsewhere_every == self.elsewhere_every / 2
                && !self.others.is_empty()
            {
                let other = &self.others[(i / self.elsewhere_every) as usize % self.others.len()];
                let marker = format!("liveelsewhere{run}x{i}");
                generate::append_bubble(&mut conn, other, &format!("live-{run}-{i}"), &format!("{marker} arrives"))?;
                let _ = tx.send((marker, Instant::now()));
            }
            next += period;
            match next.checked_duration_since(Instant::now()) {
                Some(d) => std::thread::sleep(d),
                None => next = Instant::now(),
            }
        }
        Ok(waits)
    }
}

/// Waits for each marker to be searchable in Tether's index; the latencies (ms). A marker not
/// found within 20 s counts as 20 s.
fn searchable(index_db: &Path, rx: mpsc::Receiver<Probe>) -> anyhow::Result<Vec<f64>> {
    let conn = Connection::open_with_flags(index_db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    conn.busy_timeout(Duration::from_secs(1))?;
    let mut lat = Vec::new();
    for (marker, t0) in rx {
        loop {
            let n: i64 = conn
                .query_row("SELECT count(*) FROM messages_fts WHERE messages_fts MATCH ?1", [&marker], |r| r.get(0))
                .unwrap_or(0);
            if n > 0 || t0.elapsed() > Duration::from_secs(20) {
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        lat.push(t0.elapsed().as_secs_f64() * 1000.0);
    }
    Ok(lat)
}

fn writes_for(writer: &Writer, d: Duration) -> anyhow::Result<Writes> {
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        let h = s.spawn(|| writer.run(&stop, None, None));
        std::thread::sleep(d);
        stop.store(true, Ordering::Relaxed);
        h.join().map_err(|_| anyhow::anyhow!("the writer panicked"))?
    })
}

fn set_journal(db: &Path, mode: &str) -> anyhow::Result<()> {
    let c = Connection::open(db)?;
    c.busy_timeout(Duration::from_secs(10))?;
    let got: String = c.query_row(&format!("PRAGMA journal_mode = {mode}"), [], |r| r.get(0))?;
    if !got.eq_ignore_ascii_case(mode) {
        bail!("{} stayed in journal mode {got}", db.display());
    }
    Ok(())
}

pub(crate) fn run(dir: &Path, user_dir: &Path, secs: f64, size_mb: u64) -> anyhow::Result<LiveFigures> {
    let db = user_dir.join("globalStorage/state.vscdb");
    let bin_dir = std::env::var_os("TETHER_BIN_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::current_dir().unwrap_or_default().join("target/release"));
    // Real Cursor databases are mostly in rollback-journal mode (cursor-storage.md), where a
    // reader's lock holds a writer's commit: the case that matters. Put back after.
    set_journal(&db, "DELETE")?;
    let r = measure(dir, user_dir, &db, &bin_dir, secs, size_mb);
    set_journal(&db, "WAL")?;
    r
}

fn measure(
    dir: &Path,
    user_dir: &Path,
    db: &Path,
    bin_dir: &Path,
    secs: f64,
    size_mb: u64,
) -> anyhow::Result<LiveFigures> {
    let targets = generate::split_composer_ids(&Connection::open(db)?, 40)?;
    let Some((chat, others)) = targets.split_first() else { bail!("the generated DB has no split-form composers") };
    let writer =
        Writer { db: db.to_owned(), chat: chat.clone(), others: others.to_vec(), probe_every: 50, elsewhere_every: 20 };
    let window_d = Duration::from_secs_f64(secs);
    let alone = writes_for(&writer, window_d.min(Duration::from_secs(10)))?.sorted();

    let home = dir.join("live-home");
    let _ = std::fs::remove_dir_all(&home);
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let port = free_port()?;
    let mut child = crate::mcp::serve(bin_dir, &home, user_dir, &dir.join("no-cli"), port, TOKEN, &[])?;
    let pid = child.id();
    let t_start = Instant::now();
    // Cursor goes on streaming while Tether reads everything for the first time.
    let stop = AtomicBool::new(false);
    let (first_waits, first_index_s) = std::thread::scope(|s| -> anyhow::Result<(Writes, f64)> {
        let h = s.spawn(|| writer.run(&stop, None, None));
        let done = (|| {
            wait_http(&format!("http://127.0.0.1:{port}/mcp"), "tether serve", &mut child)?;
            let deadline = Instant::now() + Duration::from_secs(3600);
            loop {
                let h = health(&rt, port);
                if h.as_ref()
                    .is_some_and(|h| h["index"]["state"] == "idle" && h["index"]["sessions"].as_u64() > Some(0))
                {
                    return Ok(t_start.elapsed().as_secs_f64());
                }
                if Instant::now() > deadline {
                    bail!("tether serve did not finish its first index: {h:?}");
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        })();
        stop.store(true, Ordering::Relaxed);
        let waits = h.join().map_err(|_| anyhow::anyhow!("the writer panicked"))??;
        Ok((waits, done?))
    })?;
    let proc = Proc::new(child);
    let first_waits = first_waits.sorted();

    // Idle: the first index's last writes settle (FTS merges, a recheck), then nothing changes.
    std::thread::sleep(Duration::from_secs(5));
    let a = sample(pid);
    std::thread::sleep(window_d);
    let b = sample(pid);
    let idle = window(a, b);
    let rss_mb = b.rss_kb as f64 / 1024.0;

    // Streaming: Cursor answers in one chat; now and then a change lands in another.
    let index_db = home.join("index.db");
    let stop = AtomicBool::new(false);
    let (s_tx, s_rx) = mpsc::channel::<Probe>();
    let (e_tx, e_rx) = mpsc::channel::<Probe>();
    let (stream_waits, streamed, elsewhere, busy) = std::thread::scope(|s| -> anyhow::Result<_> {
        let s_h = s.spawn(|| searchable(&index_db, s_rx));
        let e_h = s.spawn(|| searchable(&index_db, e_rx));
        let a = sample(pid);
        let (writer, stop) = (&writer, &stop);
        let w = s.spawn(move || {
            let r = writer.run(stop, Some(&s_tx), Some(&e_tx));
            // The probers end once the writer's senders are gone.
            drop((s_tx, e_tx));
            r
        });
        std::thread::sleep(window_d);
        stop.store(true, Ordering::Relaxed);
        let waits = w.join().map_err(|_| anyhow::anyhow!("the writer panicked"))??;
        let b = sample(pid);
        let streamed = s_h.join().map_err(|_| anyhow::anyhow!("a prober panicked"))??;
        let elsewhere = e_h.join().map_err(|_| anyhow::anyhow!("a prober panicked"))??;
        Ok((waits.sorted(), sorted(streamed), sorted(elsewhere), window(a, b)))
    })?;
    drop(proc);

    let p3 =
        |v: &[f64]| format!("{:.1} / {:.1} / {:.1} ms", percentile(v, 50.0), percentile(v, 99.0), percentile(v, 100.0));
    let p95 =
        |v: &[f64]| format!("{:.0} / {:.0} / {:.0} ms", percentile(v, 50.0), percentile(v, 95.0), percentile(v, 100.0));
    let locked = |w: &Writes| {
        let waited = w.lock.iter().filter(|&&ms| ms > 0.0).count();
        let (p99, max) = (percentile(&w.lock, 99.0), percentile(&w.lock, 100.0));
        format!("{waited} of {} / {p99:.1} / {max:.1} ms", w.lock.len())
    };
    // No figure (a window too short for a probe): no verdict.
    let over = |v: &[f64], goal: f64| (!v.is_empty()).then(|| goal / percentile(v, 99.0).max(1e-3));
    let rows = vec![
        Row::new("Cursor's write alone (no Tether), p50 / p99 / max", p3(&alone.total), "—", None),
        Row::new("Cursor's write during Tether's first index, p50 / p99 / max", p3(&first_waits.total), "—", None),
        Row::new(
            "… of it waiting for Tether's lock: writes that waited, p99 / max",
            locked(&first_waits),
            "p99 ≤ 10 ms",
            over(&first_waits.lock, 10.0),
        ),
        Row::new("first index (Cursor streaming beside it)", format!("{first_index_s:.1} s"), "—", None),
        Row::new(
            "idle: CPU, wake-ups, read calls",
            format!("{:.2} % of a core / {:.2} /s / {:.0} /min", idle.cpu_pct, idle.wakeups_per_s, idle.syscr_per_min),
            "wake-ups ≤ 1/s",
            Some(1.0 / idle.wakeups_per_s.max(1e-3)),
        ),
        Row::new(
            "RSS after the first index settles",
            format!("{rss_mb:.0} MB"),
            "≤ 100 MB at 1 GB",
            // The goal is of a 1 GB history: no verdict at other sizes.
            (size_mb == 1024).then(|| 100.0 / rss_mb.max(1e-3)),
        ),
        Row::new(
            "streaming (10 writes/s): daemon CPU, context switches",
            format!("{:.2} % of a core / {:.0} /s", busy.cpu_pct, busy.switches_per_s),
            "≤ 2 % of a core",
            Some(2.0 / busy.cpu_pct.max(1e-3)),
        ),
        Row::new("Cursor's write while Tether follows the stream, p50 / p99 / max", p3(&stream_waits.total), "—", None),
        Row::new(
            "… of it waiting for Tether's lock: writes that waited, p99 / max",
            locked(&stream_waits),
            "p99 ≤ 10 ms",
            over(&stream_waits.lock, 10.0),
        ),
        Row::new(
            "streamed word → searchable p50 / p95 / max",
            p95(&streamed),
            "≤ 1000 ms",
            (!streamed.is_empty()).then(|| 1000.0 / percentile(&streamed, 100.0).max(1e-3)),
        ),
        Row::new(
            "a change to another chat while one streams → searchable p50 / p95 / max",
            p95(&elsewhere),
            "p95 ≤ 100 ms",
            (!elsewhere.is_empty()).then(|| 100.0 / percentile(&elsewhere, 95.0).max(1e-3)),
        ),
    ];
    let setup = format!(
        "`tether serve` from `{}` over the generated {size_mb} MB history in rollback-journal mode (as most real \
         Cursor databases are); windows of {:.0} s. The writer streams into one chat at {STREAM_HZ} commits/s (the \
         answer's bubble grown and the composer's row rewritten, one transaction each, as Cursor does), a word \
         to find every 5 s, and a new message in another chat every 2 s. CPU and wake-ups (voluntary context \
         switches of all the daemon's threads) from `/proc`; a write's time is its whole transaction (without the disk's flushes, \
         so that it is its work and its wait for a lock), first with no Tether running; its wait for Tether's lock is \
         its time asleep in SQLite's busy handler (the same sleeps of 1, 2, 5, 10… ms, a 5 s timeout, timed).",
        bin_dir.display(),
        idle.secs
    );
    Ok(LiveFigures { setup, rows })
}
