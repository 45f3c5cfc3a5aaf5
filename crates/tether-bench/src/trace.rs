//! The code-origin benchmark. `tether blame`'s question — each line's origin — on a 5,000-line
//! file of a real repository with 200 recorded edits by 10 chats (committed in ten commits, the
//! last ones not, and a person's edits among them), through `ops::trace::blame`, beside `git
//! blame -w -M` alone on the same file (what following moves on the whole file would cost; Tether
//! follows them only for the lines that need it). And what capture costs on Cursor's
//! hook path: the `tether hook afterFileEdit` process for a 10-line edit of a 200-line file
//! (reading the file, working out what the edit wrote, hashing it) against the same process for
//! an event with nothing to compute, interleaved, both without a daemon so only our own work is
//! timed; and `capture` of a 5 MB edit in-process.
//!
//! Everything lives under `<dir>/trace-bench` (a `Paths::at` of its own) and is removed after.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::Context;
use serde_json::json;
use tether_core::code_origin::{self, EditBy, EditPart};
use tether_core::ops::Principal;
use tether_core::ops::trace::{self, Blame};
use tether_core::{CursorLocations, Paths, Tether};
use tether_trace::capture::{Replacement, capture, pack};

use crate::report::{Row, percentile, sorted};

const LINES: usize = 5_000;
const EDITS: usize = 200;
const BLAME_TARGET_MS: f64 = 200.0;
const CAPTURE_TARGET_MS: f64 = 5.0;

pub struct TraceFigures {
    pub rows: Vec<Row>,
    pub setup: String,
}

fn git(dir: &Path, args: &[&str], backdate: bool) -> anyhow::Result<String> {
    let mut c = Command::new("git");
    c.arg("-C").arg(dir).args(args);
    c.env("GIT_AUTHOR_NAME", "B").env("GIT_AUTHOR_EMAIL", "b@example.com");
    c.env("GIT_COMMITTER_NAME", "B").env("GIT_COMMITTER_EMAIL", "b@example.com");
    if backdate {
        c.env("GIT_AUTHOR_DATE", "2020-01-01T00:00:00Z").env("GIT_COMMITTER_DATE", "2020-01-01T00:00:00Z");
    }
    let out = c.output()?;
    anyhow::ensure!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1000.0
}

pub fn run(dir: &Path, rounds: usize) -> anyhow::Result<TraceFigures> {
    let home = dir.join("trace-bench");
    let _ = std::fs::remove_dir_all(&home);
    let repo = home.join("repo");
    std::fs::create_dir_all(&repo)?;
    let repo = repo.canonicalize()?;
    let file = repo.join("src/big.rs");
    std::fs::create_dir_all(file.parent().context("a folder")?)?;
    let mut lines: Vec<String> =
        (0..LINES).map(|i| format!("let value_{i} = compute({i}, {});", i * 31 % 97)).collect();
    std::fs::write(&file, lines.join("\n") + "\n")?;
    git(&repo, &["init", "-q", "-b", "main"], false)?;
    git(&repo, &["add", "-A"], true)?;
    git(&repo, &["commit", "-q", "-m", "before tracing"], true)?;

    let t = Tether::open(Paths::at(home.join("data")), CursorLocations::explicit(None, None))?;
    let path = file.to_string_lossy().into_owned();
    for k in 0..EDITS {
        let start = (k * 23) % (LINES - 8);
        let old = lines[start..start + 8].join("\n") + "\n";
        for (j, l) in lines[start..start + 8].iter_mut().enumerate() {
            *l = format!("let value_{} = refined_{k}({j}, {});", start + j, k * 7 + j);
        }
        let new = lines[start..start + 8].join("\n") + "\n";
        let text = lines.join("\n") + "\n";
        std::fs::write(&file, &text)?;
        let c = capture(Some(&text), &[Replacement { old_string: old, new_string: new }]);
        let part = EditPart {
            edit: format!("bench-{k}"),
            file: path.clone(),
            ranges: c.ranges,
            written: pack(&c.written),
            replaced: pack(&c.replaced),
        };
        let by = EditBy {
            conversation_id: Some(format!("chat-{}", k % 10)),
            model: Some("gpt-5".into()),
            ..Default::default()
        };
        code_origin::record(&t, &by, &part)?;
        if k % 20 == 19 && k < EDITS - 10 {
            // A commit, then a person's touch on some of the lines just committed (in the next).
            git(&repo, &["commit", "-qam", &format!("work {k}")], false)?;
            for l in lines[start..start + 3].iter_mut() {
                l.push_str(" // checked");
            }
            std::fs::write(&file, lines.join("\n") + "\n")?;
        }
    }

    let me = Principal::person("bench");
    let req = Blame { path: path.clone(), line: None, end_line: None };
    let first = trace::blame(&t, &me, &req)?;
    let c = &first.counts;
    let (mut ours, mut floor) = (Vec::new(), Vec::new());
    // Interleaved, so the machine's noise falls on both alike.
    for _ in 0..(rounds.max(1) * 5) {
        let s = Instant::now();
        std::hint::black_box(trace::blame(&t, &me, &req)?);
        ours.push(ms(s));
        let s = Instant::now();
        git(&repo, &["blame", "--porcelain", "-w", "-M", "--", "src/big.rs"], false)?;
        floor.push(ms(s));
    }
    let (ours, floor) = (sorted(ours), sorted(floor));

    // The hook's own time, with and without an edit to capture (no daemon: the forward fails at
    // once in both, so only the work before it differs).
    let hook_home = home.join("hook-data");
    std::fs::create_dir_all(&hook_home)?;
    let small = repo.join("src/small.rs");
    let small_lines: Vec<String> = (0..200).map(|i| format!("fn f{i}() -> u32 {{ {i} }}")).collect();
    std::fs::write(&small, small_lines.join("\n") + "\n")?;
    let new_block: String = (0..10).map(|i| format!("fn g{i}() -> u32 {{ {} }}\n", i * 2)).collect();
    let old_block: String = small_lines[100..110].iter().map(|l| format!("{l}\n")).collect();
    let mut edited = small_lines[..100].join("\n") + "\n" + &new_block;
    edited.push_str(&(small_lines[110..].join("\n") + "\n"));
    std::fs::write(&small, &edited)?;
    let edit_payload = json!({"hook_event_name": "afterFileEdit", "conversation_id": "c", "file_path": small,
        "edits": [{"old_string": old_block, "new_string": new_block}]})
    .to_string();
    let plain_payload =
        json!({"hook_event_name": "afterAgentResponse", "conversation_id": "c", "text": "done"}).to_string();
    let root = std::env::current_dir()?;
    let bin = std::env::var_os("TETHER_BIN_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target/release"))
        .join("tether");
    let hook = |event: &str, payload: &str| -> anyhow::Result<f64> {
        let s = Instant::now();
        let mut child = Command::new(&bin)
            .args(["hook", event])
            .env("TETHER_HOME", &hook_home)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .with_context(|| format!("starting {}", bin.display()))?;
        child.stdin.take().context("stdin")?.write_all(payload.as_bytes())?;
        child.wait()?;
        Ok(ms(s))
    };
    let (mut with_edit, mut without) = (Vec::new(), Vec::new());
    for _ in 0..(rounds.max(1) * 10) {
        with_edit.push(hook("afterFileEdit", &edit_payload)?);
        without.push(hook("afterAgentResponse", &plain_payload)?);
    }
    let (with_edit, without) = (sorted(with_edit), sorted(without));
    let added = percentile(&with_edit, 50.0) - percentile(&without, 50.0);

    let big: String = (0..130_000).map(|i| format!("ROW_{i} = compute({i}, {})  # generated\n", i * 7)).collect();
    let mut big_times = Vec::new();
    for _ in 0..rounds.clamp(1, 5) {
        let s = Instant::now();
        std::hint::black_box(capture(
            Some(&big),
            &[Replacement { old_string: String::new(), new_string: big.clone() }],
        ));
        big_times.push(ms(s));
    }
    let big_times = sorted(big_times);

    let p = |v: &[f64]| format!("p50 {:.1} ms · p95 {:.1} ms", percentile(v, 50.0), percentile(v, 95.0));
    let rows = vec![
        Row::new(
            &format!("blame: each line's origin, {LINES}-line file, {EDITS} recorded edits"),
            p(&ours),
            "≤ 200 ms",
            Some(BLAME_TARGET_MS / percentile(&ours, 95.0).max(0.001)),
        ),
        Row::new(
            "  `git blame -w -M` of the whole file alone",
            format!("{} · ours/git {:.2}×", p(&floor), percentile(&ours, 50.0) / percentile(&floor, 50.0).max(0.001)),
            "—",
            None,
        ),
        Row::new("hook: `tether hook afterFileEdit` (10-line edit, 200-line file)", p(&with_edit), "—", None),
        Row::new("  the same process, nothing to capture", p(&without), "—", None),
        Row::new(
            "  what capture adds (p50 difference)",
            format!("{added:.1} ms"),
            "≤ 5 ms",
            Some(CAPTURE_TARGET_MS / added.max(0.001)),
        ),
        Row::new(&format!("capture of a {:.1} MB edit, in-process", big.len() as f64 / 1e6), p(&big_times), "—", None),
    ];
    let setup = format!(
        "{LINES} lines, {EDITS} edits of 8 lines by 10 chats, 10 commits with a person's touches ({} ai · {} mixed · {} human · {} unknown); {} blame rounds and {} hook rounds, interleaved; git {}",
        c.ai,
        c.mixed,
        c.human,
        c.unknown,
        ours.len(),
        with_edit.len(),
        String::from_utf8_lossy(&Command::new("git").arg("--version").output()?.stdout)
            .trim()
            .trim_start_matches("git version ")
    );
    drop(t);
    let _ = std::fs::remove_dir_all(&home);
    Ok(TraceFigures { rows, setup })
}
