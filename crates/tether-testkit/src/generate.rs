//! A deterministic generator for large, era-mixed Cursor global databases (benchmarks, soak tests).
//!
//! The shape follows real Cursor data: most chats in the split `composerData` + `bubbleId:` form,
//! some in the older inline `conversation` form, user bubbles carrying both `text` and Lexical
//! `richText`, assistant bubbles with code fences, thinking and tool calls, and the metadata
//! fields that make real rows ~1 KB on average. Word frequencies are skewed (a few very common
//! words, a long tail) so FTS behaves as it does on real chats. Depends only on rusqlite and JSON.

use std::path::Path;

use rusqlite::{Connection, params};
use serde_json::{Value, json};

use crate::{DISK_KV_DDL, ITEM_TABLE_DDL, rich_text};

#[derive(Debug, Clone)]
pub struct GenSpec {
    /// Approximate size of the values written, in bytes.
    pub target_bytes: u64,
    pub seed: u64,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct GenStats {
    pub composers: u64,
    pub bubbles: u64,
    pub value_bytes: u64,
}

/// Words every generated DB contains at a known rate, for fixed benchmark query sets.
pub const COMMON_WORDS: &[&str] =
    &["function", "error", "test", "file", "return", "value", "config", "update", "build", "request"];

/// Collocations sprinkled into sentences, so phrase queries have real matches.
pub const PHRASES: &[&str] = &["the return value", "error handling", "unit test", "build failed", "the config file"];

/// A small deterministic PRNG (splitmix64); stable across releases, unlike library generators.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }
}

/// A vocabulary of real-looking words: programming terms plus generated syllable words.
fn vocabulary(rng: &mut Rng) -> Vec<String> {
    let mut words: Vec<String> = COMMON_WORDS.iter().map(|w| (*w).to_owned()).collect();
    words.extend(
        "the a to and of in is it for that this with you can we be on not are should use
         module struct async await parse index query cursor session message string vector option result
         database table column migration schema server client handler router token secret path directory
         component state render props hook effect layout style button input form validation response"
            .split_whitespace()
            .map(str::to_owned),
    );
    const SYL: &[&str] = &[
        "ka", "lo", "mi", "ter", "van", "dos", "rel", "qui", "sar", "ben", "tor", "mex", "lin", "gra", "pho", "zu",
        "ne", "cro", "fal", "dri", "ost", "ump", "vel", "yor",
    ];
    while words.len() < 6000 {
        let n = 2 + rng.below(3);
        let w: String = (0..n).map(|_| SYL[rng.below(SYL.len() as u64) as usize]).collect();
        words.push(w);
    }
    words
}

/// The generator's vocabulary for a seed, most frequent first (for picking benchmark queries).
pub fn vocabulary_for(seed: u64) -> Vec<String> {
    vocabulary(&mut Rng(seed))
}

struct Writer {
    rng: Rng,
    words: Vec<String>,
}

impl Writer {
    /// Zipf-like pick: cubing a uniform number favours the head of the list.
    fn word(&mut self) -> &str {
        let u = self.rng.unit();
        let i = (u * u * u * self.words.len() as f64) as usize;
        &self.words[i.min(self.words.len() - 1)]
    }

    fn sentence(&mut self, words: usize) -> String {
        let mut s = String::with_capacity(words * 7);
        // Real chats repeat collocations; phrase queries depend on them.
        if self.rng.chance(0.05) {
            s.push_str(PHRASES[self.rng.below(PHRASES.len() as u64) as usize]);
            s.push(' ');
        }
        for i in 0..words {
            if i > 0 {
                s.push(' ');
            }
            let w = self.word().to_owned();
            s.push_str(&w);
        }
        s.push('.');
        s
    }

    fn paragraph(&mut self, approx_bytes: usize) -> String {
        let mut s = String::with_capacity(approx_bytes + 64);
        while s.len() < approx_bytes {
            if !s.is_empty() {
                s.push(' ');
            }
            let n = 6 + self.rng.below(14) as usize;
            let sentence = self.sentence(n);
            s.push_str(&sentence);
        }
        s
    }

    fn uuid(&mut self) -> String {
        let a = self.rng.next();
        let b = self.rng.next();
        format!(
            "{:08x}-{:04x}-4{:03x}-a{:03x}-{:012x}",
            a >> 32,
            (a >> 16) & 0xffff,
            a & 0xfff,
            b >> 52,
            b & 0xffff_ffff_ffff
        )
    }

    fn user_bubble(&mut self, created: &str) -> Value {
        let len = 80 + self.rng.below(400) as usize;
        let text = self.paragraph(len);
        let rich = rich_text(&text);
        // A slice of user bubbles only carry richText, as in some 2025 builds.
        let text_field = if self.rng.chance(0.1) { String::new() } else { text };
        json!({"text": text_field, "richText": rich, "createdAt": created, "unifiedMode": 2,
               "context": {"fileSelections": [], "selections": [], "mentions": {}},
               "isAgentic": true, "tokenCount": {"inputTokens": 0, "outputTokens": 0}})
    }

    fn assistant_bubble(&mut self, created: &str) -> Value {
        let server_id = self.uuid();
        let r = self.rng.unit();
        if r < 0.2 {
            let cmd = format!("cargo {} --{}", self.word().to_owned(), self.word().to_owned());
            let output = {
                let n = 200 + self.rng.below(600) as usize;
                self.paragraph(n)
            };
            json!({"text": "", "capabilityType": 15, "createdAt": created, "serverBubbleId": server_id,
                   "toolFormerData": {"tool": 15, "toolCallId": format!("tool_{}", self.rng.next() % 1_000_000),
                       "name": "run_terminal_cmd", "status": "completed",
                       "params": json!({"command": cmd, "is_background": false}).to_string(),
                       "result": json!({"output": output, "exitCode": 0}).to_string(),
                       "additionalData": {"status": "success"}},
                   "tokenCount": {"inputTokens": 1200, "outputTokens": 40}})
        } else if r < 0.3 {
            let thought = {
                let n = 150 + self.rng.below(400) as usize;
                self.paragraph(n)
            };
            json!({"text": "", "capabilityType": 30, "createdAt": created, "serverBubbleId": server_id,
                   "thinking": {"text": thought, "signature": "opaque"}, "thinkingDurationMs": 1500})
        } else {
            let mut text = {
                let n = 250 + self.rng.below(700) as usize;
                self.paragraph(n)
            };
            if self.rng.chance(0.4) {
                let code = self.paragraph(120);
                text.push_str("\n\n```rust\nfn ");
                let w = self.word().to_owned();
                text.push_str(&w);
                text.push_str("() {\n    // ");
                text.push_str(&code);
                text.push_str("\n}\n```\n");
            }
            json!({"text": text, "createdAt": created, "serverBubbleId": server_id, "codeBlocks": [],
                   "relevantFiles": [], "usageUuid": self.uuid(), "isAgentic": true,
                   "tokenCount": {"inputTokens": 5000, "outputTokens": 300},
                   "capabilityStatuses": {"mutate-request": [], "before-submit-chat": [], "process-stream": []}})
        }
    }
}

fn iso(ms: i64) -> String {
    let secs = ms / 1000;
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z", rem / 3600, rem % 3600 / 60, rem % 60, ms.rem_euclid(1000))
}

/// Howard Hinnant's days-to-civil algorithm; avoids a date dependency in the test kit.
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// The "now" of a generated history: its newest chat ends just before it.
pub const GEN_NOW_MS: i64 = 1_792_800_000_000;
/// Time between the starts of consecutive generated chats.
pub const GEN_SPACING_MS: i64 = 9_000_000;

/// Writes a fresh global `state.vscdb` at `path` (WAL mode, checkpointed, like a quiet Cursor).
pub fn generate_global(path: &Path, spec: &GenSpec) -> rusqlite::Result<GenStats> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))?;
    }
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
    let conn = Connection::open(path)?;
    conn.execute_batch(&format!(
        "PRAGMA page_size = 4096; PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;
         {ITEM_TABLE_DDL}; {DISK_KV_DDL};"
    ))?;
    let mut rng = Rng(spec.seed);
    let words = vocabulary(&mut rng);
    let mut w = Writer { rng, words };
    let mut stats = GenStats::default();
    conn.execute_batch("BEGIN")?;
    {
        let mut put = conn.prepare("INSERT INTO cursorDiskKV (key, value) VALUES (?1, ?2)")?;
        while stats.value_bytes < spec.target_bytes {
            let id = w.uuid();
            let n = 2 + w.rng.below(500) as usize;
            // Newest first, one chat every 2.5 hours back from GEN_NOW_MS: a year of history.
            let created = GEN_NOW_MS - (stats.composers as i64 + 1) * GEN_SPACING_MS - n as i64 * 15_000;
            let inline = w.rng.chance(0.15);
            let mut headers = Vec::with_capacity(n);
            let mut inline_bubbles = Vec::new();
            for i in 0..n {
                let at = iso(created + i as i64 * 15_000);
                let ty = if i % 2 == 0 { 1 } else { 2 };
                let mut b = if ty == 1 { w.user_bubble(&at) } else { w.assistant_bubble(&at) };
                let bid = w.uuid();
                let o = b.as_object_mut().expect("bubble object");
                o.insert("_v".into(), json!(3));
                o.insert("type".into(), json!(ty));
                o.insert("bubbleId".into(), json!(bid));
                if inline {
                    inline_bubbles.push(b);
                } else {
                    let v = b.to_string();
                    stats.value_bytes += v.len() as u64;
                    put.execute(params![format!("bubbleId:{id}:{bid}"), v])?;
                    headers.push(json!({"bubbleId": bid, "type": ty}));
                }
                stats.bubbles += 1;
            }
            let name = {
                let n = 3 + w.rng.below(4) as usize;
                w.sentence(n)
            };
            let mut data = json!({
                "composerId": id, "name": name.trim_end_matches('.'), "createdAt": created,
                "lastUpdatedAt": created + n as i64 * 15_000, "status": "completed", "unifiedMode": "agent",
                "context": {"fileSelections": [], "mentions": {}}, "hasLoaded": true,
            });
            if inline {
                data["_v"] = json!(2);
                data["conversation"] = Value::Array(inline_bubbles);
            } else {
                data["_v"] = json!(if w.rng.chance(0.5) { 3 } else { 10 });
                data["fullConversationHeadersOnly"] = Value::Array(headers);
                data["conversationMap"] = json!({});
            }
            let v = data.to_string();
            stats.value_bytes += v.len() as u64;
            put.execute(params![format!("composerData:{id}"), v])?;
            stats.composers += 1;
        }
    }
    conn.execute_batch("COMMIT; PRAGMA journal_mode = WAL;")?;
    conn.close().map_err(|(_, e)| e)?;
    Ok(stats)
}

/// A history of many short chats (the GUI's scale benchmark): `chats` chats of `min_bubbles` to
/// `max_bubbles` messages, `spacing_ms` apart back from [`GEN_NOW_MS`], plus `long_chats` (one
/// chat each of that many messages, the newest ones) for reading a long chat.
#[derive(Debug, Clone)]
pub struct ChatsSpec {
    pub chats: u64,
    pub min_bubbles: usize,
    pub max_bubbles: usize,
    pub spacing_ms: i64,
    pub long_chats: Vec<usize>,
    pub seed: u64,
}

/// Writes a fresh global `state.vscdb` of [`ChatsSpec`]'s chats, all in the split form; returns
/// the stats and the ids of the long chats, in `long_chats`' order.
pub fn generate_chats(path: &Path, spec: &ChatsSpec) -> rusqlite::Result<(GenStats, Vec<String>)> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))?;
    }
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
    let conn = Connection::open(path)?;
    conn.execute_batch(&format!(
        "PRAGMA page_size = 4096; PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;
         {ITEM_TABLE_DDL}; {DISK_KV_DDL};"
    ))?;
    let mut rng = Rng(spec.seed);
    let words = vocabulary(&mut rng);
    let mut w = Writer { rng, words };
    let mut stats = GenStats::default();
    let mut long_ids = Vec::new();
    conn.execute_batch("BEGIN")?;
    {
        let mut put = conn.prepare("INSERT INTO cursorDiskKV (key, value) VALUES (?1, ?2)")?;
        let total = spec.chats + spec.long_chats.len() as u64;
        for k in 0..total {
            let id = w.uuid();
            let n = match spec.long_chats.get(k as usize) {
                Some(&n) => {
                    long_ids.push(id.clone());
                    n
                }
                None => {
                    let span = spec.max_bubbles.saturating_sub(spec.min_bubbles) as u64 + 1;
                    spec.min_bubbles.max(1) + w.rng.below(span) as usize
                }
            };
            // Newest first; a message every second, so a long chat still ends before the next starts.
            let updated = GEN_NOW_MS - k as i64 * spec.spacing_ms;
            let created = updated - n as i64 * 1000;
            let mut headers = Vec::with_capacity(n);
            for i in 0..n {
                let at = iso(created + i as i64 * 1000);
                let ty = if i % 2 == 0 { 1 } else { 2 };
                let mut b = if ty == 1 { w.user_bubble(&at) } else { w.assistant_bubble(&at) };
                let bid = w.uuid();
                let o = b.as_object_mut().expect("bubble object");
                o.insert("_v".into(), json!(3));
                o.insert("type".into(), json!(ty));
                o.insert("bubbleId".into(), json!(bid));
                let v = b.to_string();
                stats.value_bytes += v.len() as u64;
                put.execute(params![format!("bubbleId:{id}:{bid}"), v])?;
                headers.push(json!({"bubbleId": bid, "type": ty}));
                stats.bubbles += 1;
            }
            let name = {
                let n = 3 + w.rng.below(4) as usize;
                w.sentence(n)
            };
            let data = json!({
                "_v": 10, "composerId": id, "name": name.trim_end_matches('.'), "createdAt": created,
                "lastUpdatedAt": updated, "status": "completed", "unifiedMode": "agent",
                "context": {"fileSelections": [], "mentions": {}}, "hasLoaded": true,
                "fullConversationHeadersOnly": headers, "conversationMap": {},
            });
            let v = data.to_string();
            stats.value_bytes += v.len() as u64;
            put.execute(params![format!("composerData:{id}"), v])?;
            stats.composers += 1;
        }
    }
    conn.execute_batch("COMMIT; PRAGMA journal_mode = WAL;")?;
    conn.close().map_err(|(_, e)| e)?;
    Ok((stats, long_ids))
}

/// Appends one user bubble to a split-form composer the way Cursor does: a new `bubbleId:` row and
/// an updated `composerData` header list, in one transaction on the caller's connection.
pub fn append_bubble(conn: &mut Connection, composer_id: &str, bubble_id: &str, text: &str) -> rusqlite::Result<()> {
    let tx = conn.transaction()?;
    let key = format!("composerData:{composer_id}");
    let raw: String = tx.query_row("SELECT value FROM cursorDiskKV WHERE key = ?1", [&key], |r| r.get(0))?;
    let mut data: Value =
        serde_json::from_str(&raw).map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))?;
    let now = data["lastUpdatedAt"].as_i64().unwrap_or(0) + 1000;
    let bubble = json!({"_v": 3, "type": 1, "bubbleId": bubble_id, "text": text, "richText": rich_text(text),
                        "createdAt": iso(now)});
    tx.execute(
        "INSERT INTO cursorDiskKV (key, value) VALUES (?1, ?2)",
        params![format!("bubbleId:{composer_id}:{bubble_id}"), bubble.to_string()],
    )?;
    if let Some(h) = data["fullConversationHeadersOnly"].as_array_mut() {
        h.push(json!({"bubbleId": bubble_id, "type": 1}));
    }
    data["lastUpdatedAt"] = json!(now);
    tx.execute("UPDATE cursorDiskKV SET value = ?2 WHERE key = ?1", params![key, data.to_string()])?;
    tx.commit()
}

/// A chat Cursor is answering in, written the way Cursor writes while an answer streams: each
/// [`StreamingChat::step`] grows the assistant's bubble by a few words and rewrites the
/// composer's row, both in one transaction. Plain `INSERT`s: the table's `ON CONFLICT REPLACE`
/// replaces each row under a new rowid, as Cursor's writes do.
pub struct StreamingChat {
    composer: String,
    data: Value,
    bubble: String,
    text: String,
    at: i64,
}

impl StreamingChat {
    /// Starts a new assistant bubble `bubble_id` at the end of split-form composer `composer_id`.
    pub fn start(conn: &Connection, composer_id: &str, bubble_id: &str) -> rusqlite::Result<Self> {
        let raw: String = conn.query_row(
            "SELECT value FROM cursorDiskKV WHERE key = ?1",
            [format!("composerData:{composer_id}")],
            |r| r.get(0),
        )?;
        let mut data: Value =
            serde_json::from_str(&raw).map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))?;
        if let Some(h) = data["fullConversationHeadersOnly"].as_array_mut() {
            h.push(json!({"bubbleId": bubble_id, "type": 2}));
        }
        let at = data["lastUpdatedAt"].as_i64().unwrap_or(GEN_NOW_MS) + 1000;
        Ok(Self { composer: composer_id.into(), data, bubble: bubble_id.into(), text: String::new(), at })
    }

    /// Appends `words` to the answer; one transaction, as one streamed chunk.
    pub fn step(&mut self, conn: &mut Connection, words: &str) -> rusqlite::Result<()> {
        if !self.text.is_empty() {
            self.text.push(' ');
        }
        self.text.push_str(words);
        self.at += 100;
        self.data["lastUpdatedAt"] = json!(self.at);
        let bubble = json!({"_v": 3, "type": 2, "bubbleId": self.bubble, "text": self.text,
                            "createdAt": iso(self.at), "isAgentic": true});
        let tx = conn.transaction()?;
        tx.execute(
            "INSERT INTO cursorDiskKV (key, value) VALUES (?1, ?2)",
            params![format!("bubbleId:{}:{}", self.composer, self.bubble), bubble.to_string()],
        )?;
        tx.execute(
            "INSERT INTO cursorDiskKV (key, value) VALUES (?1, ?2)",
            params![format!("composerData:{}", self.composer), self.data.to_string()],
        )?;
        tx.commit()
    }
}

/// Ids of split-form composers in a generated DB, for picking append targets.
pub fn split_composer_ids(conn: &Connection, limit: usize) -> rusqlite::Result<Vec<String>> {
    let mut st = conn.prepare(
        "SELECT substr(key, 14) FROM cursorDiskKV WHERE key >= 'composerData:' AND key < 'composerData;'
         AND instr(value, '\"fullConversationHeadersOnly\"') > 0 LIMIT ?1",
    )?;
    st.query_map([limit as i64], |r| r.get(0))?.collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_and_close_to_target() {
        let dir = tempfile::tempdir().unwrap();
        let spec = GenSpec { target_bytes: 2_000_000, seed: 7 };
        let a = generate_global(&dir.path().join("a.vscdb"), &spec).unwrap();
        let b = generate_global(&dir.path().join("b.vscdb"), &spec).unwrap();
        assert_eq!(a, b);
        assert!(a.value_bytes >= spec.target_bytes && a.value_bytes < spec.target_bytes * 2, "{a:?}");
        let avg = a.value_bytes / a.bubbles;
        assert!((500..2500).contains(&avg), "average row size {avg} should be about 1 KB");
        let c = Connection::open(dir.path().join("a.vscdb")).unwrap();
        let ids = split_composer_ids(&c, 3).unwrap();
        assert!(!ids.is_empty());
    }

    #[test]
    fn many_short_chats_and_a_long_one() {
        let dir = tempfile::tempdir().unwrap();
        let spec =
            ChatsSpec { chats: 30, min_bubbles: 2, max_bubbles: 4, spacing_ms: 60_000, long_chats: vec![50], seed: 3 };
        let (stats, long) = generate_chats(&dir.path().join("a.vscdb"), &spec).unwrap();
        assert_eq!(stats.composers, 31);
        assert_eq!(long.len(), 1);
        assert!(stats.bubbles >= 50 + 60 && stats.bubbles <= 50 + 120, "{stats:?}");
        let c = Connection::open(dir.path().join("a.vscdb")).unwrap();
        let n: i64 = c
            .query_row(
                "SELECT count(*) FROM cursorDiskKV WHERE key LIKE ?1",
                [format!("bubbleId:{}:%", long[0])],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(n, 50);
    }

    #[test]
    fn iso_dates() {
        assert_eq!(iso(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso(1_760_000_000_123), "2025-10-09T08:53:20.123Z");
    }
}
