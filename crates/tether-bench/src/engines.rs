//! The engine comparison of issue 13: SQLite FTS5 (what Tether's index uses) next to tantivy, on
//! the messages of a real first index of the generated set. The measuring lives in
//! `bench/engines` (outside the workspace, so tantivy never enters Tether's build or CI); this
//! runs a first index for it to read and turns its JSON into a section of docs/benchmarks.md.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};
use serde_json::Value;

/// Where `scripts/bench --suite engines` builds the engines binary; `TETHER_ENGINES_BIN` overrides.
const ENGINES_BIN: &str = "target/engines/release/tether-engines-bench";

pub fn run(dir: &Path, user_dir: &Path, seed: u64) -> anyhow::Result<String> {
    let bin = std::env::var_os("TETHER_ENGINES_BIN").map_or_else(|| PathBuf::from(ENGINES_BIN), PathBuf::from);
    if !bin.exists() {
        bail!("{} is missing: run `scripts/bench --suite engines`, which builds it", bin.display());
    }
    eprintln!("a first index for the engines to read …");
    let home = dir.join("engines-home");
    let _ = std::fs::remove_dir_all(&home);
    let first = crate::index::index_child_process(&home, user_dir, seed)?;
    eprintln!("engines side by side, each in its own process …");
    let out = Command::new(&bin)
        .arg(home.join("index.db"))
        .arg(dir.join("engines-work"))
        .output()
        .context("running the engines benchmark")?;
    if !out.status.success() {
        bail!("engines benchmark failed: {}", String::from_utf8_lossy(&out.stderr));
    }
    let runs: Value = serde_json::from_slice(&out.stdout)?;
    Ok(render(&runs, &first))
}

fn render(runs: &Value, first: &Value) -> String {
    let fts = &runs["fts5"];
    let mut s = String::new();
    let w = &mut s;
    let _ = writeln!(w, "## Full-text engines side by side\n");
    let _ = writeln!(
        w,
        "Commit `{}`, {}. Machine: {}. The {} messages ({:.0} MB of text) of a first index of the set \
         above (which took {:.1} s end to end, parsing included), loaded into memory first; then each \
         variant in a process of its own, the same messages in the same order (newest chats first), \
         a commit per 32 MB of text. `fts5`: Tether's messages table and FTS5 table, one writer, as \
         the indexer writes them (with FTS5's merging on; a first index defers it). `rows`: the same \
         table without full-text. `tantivy-N`: tantivy 0.27 \
         (positions, BM25, the id as a fast field, text not stored) on N indexing threads. \
         `rows+tantivy`: the rows and tantivy at once, on two threads. Queries: 40 words, 40 two-word \
         phrases and 40 four-letter prefixes taken from random messages, 3 rounds each, the top 20 \
         newest (Tether's order for broad queries) or best by BM25. Peak RSS is over the loaded \
         messages.\n",
        crate::report::git_rev(),
        chrono::Utc::now().format("%Y-%m-%d"),
        crate::report::machine(),
        fts["messages"],
        fts["text_mb"].as_f64().unwrap_or(0.0),
        first["secs"].as_f64().unwrap_or(f64::NAN),
    );
    let _ = writeln!(
        w,
        "| variant | wall s | CPU s | MB/s of text | on disk MB | peak RSS MB | word newest p50/p95 ms | \
         phrase newest p95 | prefix newest p95 | word BM25 p95 | prefix BM25 p95 |"
    );
    let _ = writeln!(w, "|---|---|---|---|---|---|---|---|---|---|---|");
    let f = |v: &Value| v.as_f64().map_or("—".to_owned(), |x| format!("{x:.1}"));
    let ms =
        |r: &Value, k: &str, p: &str| r["latency_ms"][k][p].as_f64().map_or("—".to_owned(), |x| format!("{x:.2}"));
    for (name, r) in runs.as_object().into_iter().flatten() {
        let mbs = r["text_mb"].as_f64().unwrap_or(0.0) / r["wall_secs"].as_f64().unwrap_or(f64::NAN);
        let rss = r["hwm_mb"].as_f64().unwrap_or(0.0) - r["loaded_mb"].as_f64().unwrap_or(0.0);
        let _ = writeln!(
            w,
            "| {name} | {} | {} | {mbs:.0} | {} | {rss:.0} | {} / {} | {} | {} | {} | {} |",
            f(&r["wall_secs"]),
            f(&r["cpu_secs"]),
            f(&r["size_mb"]),
            ms(r, "word newest", "p50"),
            ms(r, "word newest", "p95"),
            ms(r, "phrase newest", "p95"),
            ms(r, "prefix newest", "p95"),
            ms(r, "word best", "p95"),
            ms(r, "prefix best", "p95"),
        );
    }
    let _ = writeln!(w, "\n{}", agreement(runs));
    s
}

/// How often tantivy's newest 20 are FTS5's: both engines must be answering the same question for
/// their timings to compare.
fn agreement(runs: &Value) -> String {
    let (Some(a), Some(b)) = (runs["fts5"]["answers"].as_object(), runs["tantivy-1"]["answers"].as_object()) else {
        return String::new();
    };
    let same = a.iter().filter(|(k, v)| b.get(*k) == Some(v)).count();
    format!("Same newest 20 ids from FTS5 and tantivy for {same} of {} queries.", a.len())
}
