//! Full-text engines side by side, on the messages of a real Tether index: SQLite FTS5 as Tether
//! uses it (rows and FTS in one transaction per batch), the same rows without full-text, and
//! tantivy alone, on one or two indexing threads and next to the SQLite rows. Each variant runs in
//! a child process of its own (peak RSS and CPU time are per process) over the same messages in
//! the same order, then answers the same queries; the parent prints one JSON document that
//! `tether-bench --suite engines` turns into a section of docs/benchmarks.md.
//!
//! Kept out of Tether's workspace (and its CI) on purpose: it exists to make and re-check the engine
//! decision, and depends on nothing of Tether's but the index file it reads.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, bail};
use rusqlite::{Connection, OpenFlags, params};
use serde_json::{Value, json};
use tantivy::collector::TopDocs;
use tantivy::query::{PhraseQuery, Query, RegexQuery, TermQuery};
use tantivy::schema::{FAST, INDEXED, IndexRecordOption, Schema, TextFieldIndexing, TextOptions};
use tantivy::tokenizer::{AsciiFoldingFilter, LowerCaser, SimpleTokenizer, TextAnalyzer};
use tantivy::{Index, IndexWriter, Order, TantivyDocument, Term};

/// One transaction (or tantivy commit) per this much message text, like the indexer's batches.
const BATCH_BYTES: usize = 32 << 20;
/// Memory tantivy's writer may use for its in-RAM segments, across its threads.
const TANTIVY_HEAP: usize = 96 << 20;
const VARIANTS: [&str; 5] = ["fts5", "rows", "tantivy-1", "tantivy-2", "rows+tantivy"];

struct Message {
    id: i64,
    session_id: String,
    seq: i64,
    role: String,
    kind: String,
    text: String,
    external_id: Option<String>,
    hash: i64,
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(String::as_str) {
        Some("child") if args.len() == 5 => {
            let out = child(&args[2], &args[3], Path::new(&args[4]))?;
            println!("{out}");
        }
        Some(index) if args.len() == 3 => {
            let work = PathBuf::from(&args[2]);
            let mut runs = serde_json::Map::new();
            for v in VARIANTS {
                let _ = std::fs::remove_dir_all(&work);
                std::fs::create_dir_all(&work)?;
                let out = Command::new(std::env::current_exe()?).args(["child", v, index]).arg(&work).output()?;
                if !out.status.success() {
                    bail!("{v}: {}", String::from_utf8_lossy(&out.stderr));
                }
                let r: Value = serde_json::from_slice(&out.stdout).with_context(|| format!("{v}'s report"))?;
                eprintln!("{v}: {:.1} s wall, {:.1} s CPU", r["wall_secs"], r["cpu_secs"]);
                runs.insert(v.to_owned(), r);
            }
            let _ = std::fs::remove_dir_all(&work);
            println!("{}", Value::Object(runs));
        }
        _ => bail!("usage: tether-engines-bench <tether index.db> <scratch dir>"),
    }
    Ok(())
}

fn child(variant: &str, index: &str, work: &Path) -> anyhow::Result<Value> {
    let messages = load(index)?;
    let bytes: usize = messages.iter().map(|m| m.text.len()).sum();
    let queries = query_set(&messages);
    let loaded_kb = hwm_kb()?;
    let (cpu0, t0) = (cpu_secs(), Instant::now());
    let db = work.join("index.db");
    let tv = work.join("tantivy");
    let searcher: Option<Box<dyn Searcher>> = match variant {
        "fts5" => Some(Box::new(sqlite_build(&db, &messages, true)?)),
        "rows" => sqlite_build(&db, &messages, false).map(|_| None)?,
        "tantivy-1" => Some(Box::new(tantivy_build(&tv, &messages, 1)?)),
        "tantivy-2" => Some(Box::new(tantivy_build(&tv, &messages, 2)?)),
        "rows+tantivy" => std::thread::scope(|s| -> anyhow::Result<Option<Box<dyn Searcher>>> {
            let rows = s.spawn(|| sqlite_build(&db, &messages, false));
            let t = tantivy_build(&tv, &messages, 1)?;
            rows.join().expect("rows thread")?;
            Ok(Some(Box::new(t)))
        })?,
        other => bail!("unknown variant {other}"),
    };
    let wall = t0.elapsed().as_secs_f64();
    let cpu = cpu_secs() - cpu0;
    let size = dir_size(work)?;
    let mut latencies: Vec<(String, Vec<f64>)> = Vec::new();
    let mut answers = serde_json::Map::new();
    let asked = searcher.as_ref().map_or(&[][..], |_| &queries[..]);
    for (kind, qs) in asked {
        let searcher = searcher.as_ref().expect("asked only with a searcher");
        for order in ["newest", "best"] {
            let mut lat = Vec::new();
            for round in 0..3 {
                for q in qs {
                    let t = Instant::now();
                    let ids = searcher.search(q, order == "newest")?;
                    lat.push(t.elapsed().as_secs_f64() * 1000.0);
                    if round == 0 && order == "newest" {
                        answers.insert(format!("{kind}:{}", q.fts5()), json!(ids));
                    }
                }
            }
            latencies.push((format!("{kind} {order}"), lat));
        }
    }
    let lat: serde_json::Map<String, Value> = latencies
        .into_iter()
        .map(|(k, mut v)| {
            v.sort_by(f64::total_cmp);
            let p = |x: f64| v[((v.len() as f64 - 1.0) * x).round() as usize];
            (k, json!({"p50": p(0.5), "p95": p(0.95), "n": v.len()}))
        })
        .collect();
    Ok(json!({
        "wall_secs": wall,
        "cpu_secs": cpu,
        "text_mb": bytes as f64 / 1e6,
        "messages": messages.len(),
        "size_mb": size as f64 / 1e6,
        "loaded_mb": loaded_kb as f64 / 1024.0,
        "hwm_mb": hwm_kb()? as f64 / 1024.0,
        "latency_ms": lat,
        "answers": answers,
    }))
}

/// Every message of the index in id order (Tether's ids put the newest chats first, as the first
/// index writes them).
fn load(index: &str) -> anyhow::Result<Vec<Message>> {
    let conn = Connection::open_with_flags(index, OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    let mut stmt =
        conn.prepare("SELECT id, session_id, seq, role, kind, text, external_id, hash FROM messages ORDER BY id")?;
    let rows = stmt.query_map([], |r| {
        Ok(Message {
            id: r.get(0)?,
            session_id: r.get(1)?,
            seq: r.get(2)?,
            role: r.get(3)?,
            kind: r.get(4)?,
            text: r.get(5)?,
            external_id: r.get(6)?,
            hash: r.get(7)?,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// A query in both engines' terms.
enum Q {
    Word(String),
    Phrase(Vec<String>),
    Prefix(String),
}

impl Q {
    fn fts5(&self) -> String {
        match self {
            Q::Word(w) => format!("\"{w}\""),
            Q::Phrase(ws) => format!("\"{}\"", ws.join(" ")),
            Q::Prefix(p) => format!("{p}*"),
        }
    }
}

/// Words, two-word phrases and four-letter prefixes from messages picked at random (fixed seed),
/// so both engines answer the same questions about text that is there.
fn query_set(messages: &[Message]) -> Vec<(&'static str, Vec<Q>)> {
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let (mut words, mut phrases, mut prefixes) = (Vec::new(), Vec::new(), Vec::new());
    while words.len() < 40 {
        let m = &messages[(next() % messages.len() as u64) as usize];
        let toks: Vec<String> = m
            .text
            .split(|c: char| !c.is_ascii_alphanumeric())
            .filter(|t| t.len() >= 4 && t.chars().all(|c| c.is_ascii_lowercase()))
            .map(str::to_owned)
            .collect();
        if toks.len() < 2 {
            continue;
        }
        let i = (next() % (toks.len() as u64 - 1)) as usize;
        words.push(Q::Word(toks[i].clone()));
        phrases.push(Q::Phrase(vec![toks[i].clone(), toks[i + 1].clone()]));
        prefixes.push(Q::Prefix(toks[i][..4].to_owned()));
    }
    vec![("word", words), ("phrase", phrases), ("prefix", prefixes)]
}

trait Searcher {
    /// Ids of the top 20: the newest (lowest ids) or the best by BM25.
    fn search(&self, q: &Q, newest: bool) -> anyhow::Result<Vec<i64>>;
}

struct Sqlite(Connection);

/// The schema and pragmas of Tether's index (store.rs, migrations 0001/0002), with or without the
/// FTS5 table, filled the way the indexer fills it: explicit FTS rows after each message row, one
/// transaction per batch.
fn sqlite_build(path: &Path, messages: &[Message], fts: bool) -> anyhow::Result<Sqlite> {
    let conn = Connection::open(path)?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    conn.pragma_update(None, "temp_store", "MEMORY")?;
    conn.pragma_update(None, "cache_size", -32_768)?;
    conn.execute_batch(
        "CREATE TABLE messages (
            id INTEGER PRIMARY KEY, session_id TEXT NOT NULL, seq INTEGER NOT NULL, role TEXT NOT NULL,
            kind TEXT NOT NULL, text TEXT NOT NULL, tool_name TEXT, tool_status TEXT, model TEXT,
            created_at INTEGER, external_id TEXT, hash INTEGER NOT NULL, UNIQUE (session_id, seq)) STRICT;",
    )?;
    if fts {
        conn.execute_batch(
            "CREATE VIRTUAL TABLE messages_fts USING fts5(
                 text, content='messages', content_rowid='id', tokenize='unicode61 remove_diacritics 2');
             INSERT INTO messages_fts(messages_fts, rank) VALUES ('hashsize', 16777216);",
        )?;
    }
    let mut batch = 0;
    conn.execute_batch("BEGIN")?;
    for m in messages {
        conn.prepare_cached(
            "INSERT INTO messages(id, session_id, seq, role, kind, text, external_id, hash)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        )?
        .execute(params![m.id, m.session_id, m.seq, m.role, m.kind, m.text, m.external_id, m.hash])?;
        if fts {
            conn.prepare_cached("INSERT INTO messages_fts(rowid, text) VALUES (?1, ?2)")?
                .execute(params![m.id, m.text])?;
        }
        batch += m.text.len();
        if batch >= BATCH_BYTES {
            conn.execute_batch("COMMIT; BEGIN")?;
            batch = 0;
        }
    }
    conn.execute_batch("COMMIT")?;
    Ok(Sqlite(conn))
}

impl Searcher for Sqlite {
    fn search(&self, q: &Q, newest: bool) -> anyhow::Result<Vec<i64>> {
        let order = if newest { "rowid" } else { "rank" };
        let mut stmt = self
            .0
            .prepare_cached(&format!(
                "SELECT rowid FROM messages_fts WHERE messages_fts MATCH ?1 ORDER BY {order} LIMIT 20"
            ))
            .context("the rows-only variant has no full-text table")?;
        Ok(stmt.query_map([q.fts5()], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?)
    }
}

struct Tantivy {
    reader: tantivy::IndexReader,
    text: tantivy::schema::Field,
}

/// Tantivy with what Tether's search needs: positions (phrases), BM25, the message id as a fast
/// field (newest first), and a tokenizer close to FTS5's `unicode61 remove_diacritics 2`. Text is
/// not stored: SQLite keeps it either way. A commit per batch, as each batch must be searchable.
fn tantivy_build(dir: &Path, messages: &[Message], threads: usize) -> anyhow::Result<Tantivy> {
    std::fs::create_dir_all(dir)?;
    let mut sb = Schema::builder();
    let id = sb.add_u64_field("id", INDEXED | FAST);
    let indexing =
        TextFieldIndexing::default().set_tokenizer("folded").set_index_option(IndexRecordOption::WithFreqsAndPositions);
    let text = sb.add_text_field("text", TextOptions::default().set_indexing_options(indexing));
    let index = Index::create_in_dir(dir, sb.build())?;
    index.tokenizers().register(
        "folded",
        TextAnalyzer::builder(SimpleTokenizer::default()).filter(LowerCaser).filter(AsciiFoldingFilter).build(),
    );
    let mut writer: IndexWriter = index.writer_with_num_threads(threads, TANTIVY_HEAP)?;
    let mut batch = 0;
    for m in messages {
        let mut doc = TantivyDocument::default();
        doc.add_u64(id, m.id as u64);
        doc.add_text(text, &m.text);
        writer.add_document(doc)?;
        batch += m.text.len();
        if batch >= BATCH_BYTES {
            writer.commit()?;
            batch = 0;
        }
    }
    writer.commit()?;
    writer.wait_merging_threads()?;
    let reader = index.reader()?;
    Ok(Tantivy { reader, text })
}

impl Searcher for Tantivy {
    fn search(&self, q: &Q, newest: bool) -> anyhow::Result<Vec<i64>> {
        let term = |w: &str| Term::from_field_text(self.text, w);
        let query: Box<dyn Query> = match q {
            Q::Word(w) => Box::new(TermQuery::new(term(w), IndexRecordOption::WithFreqs)),
            Q::Phrase(ws) => Box::new(PhraseQuery::new(ws.iter().map(|w| term(w)).collect())),
            Q::Prefix(p) => Box::new(RegexQuery::from_pattern(&format!("{p}.*"), self.text)?),
        };
        let searcher = self.reader.searcher();
        let addrs: Vec<tantivy::DocAddress> = if newest {
            let top = TopDocs::with_limit(20).order_by_u64_field("id", Order::Asc);
            searcher.search(&query, &top)?.into_iter().map(|(_, a)| a).collect()
        } else {
            searcher.search(&query, &TopDocs::with_limit(20).order_by_score())?.into_iter().map(|(_, a)| a).collect()
        };
        let mut ids = Vec::with_capacity(addrs.len());
        for a in addrs {
            let col = searcher.segment_reader(a.segment_ord).fast_fields().u64("id")?;
            ids.push(col.first(a.doc_id).unwrap_or_default() as i64);
        }
        Ok(ids)
    }
}

fn cpu_secs() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<f64> = after.split_whitespace().map(|x| x.parse().unwrap_or(0.0)).collect();
    // utime and stime, fields 14 and 15 of proc(5), in clock ticks (100 per second on Linux).
    (f.get(11).unwrap_or(&0.0) + f.get(12).unwrap_or(&0.0)) / 100.0
}

fn hwm_kb() -> anyhow::Result<u64> {
    let status = std::fs::read_to_string("/proc/self/status")?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).context("no VmHWM")?;
    Ok(line.split_whitespace().nth(1).context("VmHWM")?.parse()?)
}

fn dir_size(dir: &Path) -> anyhow::Result<u64> {
    let mut total = 0;
    for e in std::fs::read_dir(dir)? {
        let e = e?;
        let md = e.metadata()?;
        total += if md.is_dir() { dir_size(&e.path())? } else { md.len() };
    }
    Ok(total)
}
