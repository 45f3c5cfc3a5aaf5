//! Test support: realistic Cursor data directories for every storage era and pitfall in
//! `shared/reference/cursor-storage.md` §7, written with the exact DDL and TEXT values Cursor
//! uses, plus a generator for large era-mixed databases (see [`generate`]).
//!
//! Dev-dependency only. Never touches the real home: everything lives under a temp dir.

pub mod agents;
pub mod cursor_api;
#[cfg(feature = "daemon")]
pub mod daemon;
pub mod eras;
pub mod fs;
pub mod generate;
pub mod github;
pub mod pg;

/// What `f` gives once it gives something, asked every 50 ms; panics naming `what` after
/// `timeout`. For tests that wait on another process.
pub fn wait_for<T>(what: &str, timeout: Duration, mut f: impl FnMut() -> Option<T>) -> T {
    let t0 = Instant::now();
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(t0.elapsed() < timeout, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Runs `git -C dir args…` as a test's fixture author (Pat, no signing) and answers its stdout;
/// panics with git's stderr when it fails. For tests that build the repositories Tether works on.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=Pat", "-c", "user.email=pat@example.invalid", "-c", "commit.gpgsign=false"])
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// [`wait_for`] a condition.
pub fn wait_until(what: &str, timeout: Duration, mut f: impl FnMut() -> bool) {
    wait_for(what, timeout, || f().then_some(()))
}

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rusqlite::{Connection, params};
use serde_json::{Value, json};

/// The DDL every Cursor key-value table uses (VS Code storage layer).
pub const ITEM_TABLE_DDL: &str = "CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)";
pub const DISK_KV_DDL: &str = "CREATE TABLE cursorDiskKV (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)";

/// A fake home with Cursor's layout under it.
pub struct CursorFixture {
    _root: Option<tempfile::TempDir>,
    pub home: PathBuf,
    /// `<home>/.config/Cursor/User`
    pub user_dir: PathBuf,
    /// `<home>/.cursor`
    pub cursor_home: PathBuf,
}

impl Default for CursorFixture {
    fn default() -> Self {
        Self::new()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Journal {
    /// What the real sampled files use.
    Rollback,
    /// WAL, checkpointed on close (a `-wal` may remain empty or be removed).
    Wal,
    /// WAL with every write left uncheckpointed in the `-wal` file (Cursor running).
    WalUncheckpointed,
}

impl CursorFixture {
    /// A fake home in a temp dir, removed on drop.
    pub fn new() -> Self {
        let root = tempfile::tempdir().expect("temp dir");
        let mut fx = Self::at(&root.path().join("home"));
        fx._root = Some(root);
        fx
    }

    /// A fake home at a given (kept) directory, e.g. for trying the CLI by hand.
    pub fn at(home: &Path) -> Self {
        let user_dir = home.join(".config/Cursor/User");
        let cursor_home = home.join(".cursor");
        std::fs::create_dir_all(user_dir.join("globalStorage")).unwrap();
        std::fs::create_dir_all(user_dir.join("workspaceStorage")).unwrap();
        std::fs::create_dir_all(&cursor_home).unwrap();
        Self { _root: None, home: home.to_owned(), user_dir, cursor_home }
    }

    pub fn global_path(&self) -> PathBuf {
        self.user_dir.join("globalStorage/state.vscdb")
    }

    /// The global `state.vscdb` (created with `ItemTable` + `cursorDiskKV` on first use).
    pub fn global(&self, journal: Journal) -> KvDb {
        KvDb::create(&self.global_path(), journal, true)
    }

    /// A workspace DB at `workspaceStorage/<id>/state.vscdb` with its `workspace.json`.
    /// `folder` is a URI (`file:///…`, `vscode-remote://…`) or `None` for no workspace.json;
    /// `.code-workspace` URIs are written under the `workspace` key as Cursor does.
    pub fn workspace(&self, id: &str, folder: Option<&str>, with_disk_kv: bool) -> KvDb {
        let dir = self.user_dir.join("workspaceStorage").join(id);
        std::fs::create_dir_all(&dir).unwrap();
        if let Some(uri) = folder {
            let key = if uri.ends_with(".code-workspace") { "workspace" } else { "folder" };
            std::fs::write(dir.join("workspace.json"), json!({ key: uri }).to_string()).unwrap();
        }
        KvDb::create(&dir.join("state.vscdb"), Journal::Rollback, with_disk_kv)
    }

    /// A Cursor CLI session store at `chats/<md5(cwd)>/<id>/store.db`.
    /// `messages` are the JSON leaf blobs in order; `hex_meta` picks the meta encoding.
    pub fn cli_store(&self, cwd: &str, id: &str, name: &str, messages: &[Value], hex_meta: bool) -> PathBuf {
        self.cli_store_with(cwd, id, name, messages, hex_meta, &json!({}))
    }

    /// [`Self::cli_store`] with more fields in its meta row (2026.08 on: `blobEncryptionKey`).
    pub fn cli_store_with(
        &self,
        cwd: &str,
        id: &str,
        name: &str,
        messages: &[Value],
        hex_meta: bool,
        extra_meta: &Value,
    ) -> PathBuf {
        use md5::Digest;
        let hash: String = md5::Md5::digest(cwd.as_bytes()).iter().map(|b| format!("{b:02x}")).collect();
        let dir = self.cursor_home.join("chats").join(hash).join(id);
        let mut meta = json!({"agentId": id, "name": name, "mode": "agent",
                          "createdAt": 1_767_000_000_000_i64, "lastUsedModel": "composer-1"});
        for (k, v) in extra_meta.as_object().into_iter().flatten() {
            meta[k] = v.clone();
        }
        let sidecar = json!({"schemaVersion": 1, "createdAtMs": 1_767_000_000_000_i64, "updatedAtMs": 1_767_000_600_000_i64,
                             "hasConversation": true, "cwd": cwd});
        write_agent_store(&dir, cwd, meta, messages, hex_meta, &sidecar)
    }

    /// An ACP session (`cursor-agent acp`, 2026.09) at `acp-sessions/<id>/{store.db, meta.json}`;
    /// its `meta.json` is `{schemaVersion, cwd, title}`.
    pub fn acp_session(&self, cwd: &str, id: &str, title: &str, messages: &[Value]) -> PathBuf {
        let dir = self.cursor_home.join("acp-sessions").join(id);
        let meta = json!({"agentId": id, "createdAt": 1_767_100_000_000_i64});
        write_agent_store(&dir, cwd, meta, messages, true, &json!({"schemaVersion": 1, "cwd": cwd, "title": title}))
    }

    /// A CLI session with a `meta.json` and no `store.db` (cursor-agent 2026.08+ leaves many).
    pub fn cli_meta_only(&self, cwd: &str, id: &str, meta: &Value) -> PathBuf {
        use md5::Digest;
        let hash: String = md5::Md5::digest(cwd.as_bytes()).iter().map(|b| format!("{b:02x}")).collect();
        let dir = self.cursor_home.join("chats").join(hash).join(id);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("meta.json"), meta.to_string()).unwrap();
        dir.join("meta.json")
    }

    /// A Cursor 3 SDK / Agents Window store at
    /// `projects/<slug(workspace)>/sdk-agent-store/<md5(workspace)>/index.db`, with each agent's
    /// blob store at `agents/<id>/store.db` (the cursor-agent format, no `meta.json` beside it).
    ///
    /// The catalog's columns are the ones public readers of `@cursor/sdk` 1.0.x stores use:
    /// `agents(agent_id, workspace_ref, name, created_at, updated_at, status)`,
    /// `runs(run_id, agent_id, turn_number, status, model, started_at, finished_at, result,
    /// created_at, usage_json)` and `run_events(run_id, seq, event_type, payload_json,
    /// created_at)`. Returns the `index.db`'s path.
    pub fn sdk_agent_store(&self, workspace: &str, agents: &[SdkAgent]) -> PathBuf {
        use md5::Digest;
        let hash: String = md5::Md5::digest(workspace.as_bytes()).iter().map(|b| format!("{b:02x}")).collect();
        let slug = workspace.trim_start_matches('/').replace(['/', '.', ' '], "-");
        let dir = self.cursor_home.join("projects").join(slug).join("sdk-agent-store").join(hash);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("index.db");
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS agents (agent_id TEXT PRIMARY KEY, workspace_ref TEXT, name TEXT,
                                                created_at TEXT, updated_at TEXT, status TEXT);
             CREATE TABLE IF NOT EXISTS runs (run_id TEXT, agent_id TEXT, turn_number INTEGER, status TEXT,
                                              model TEXT, started_at TEXT, finished_at TEXT, result TEXT,
                                              created_at TEXT, usage_json TEXT);
             CREATE TABLE IF NOT EXISTS run_events (run_id TEXT, seq INTEGER, event_type TEXT,
                                                    payload_json TEXT, created_at TEXT);",
        )
        .unwrap();
        for a in agents {
            conn.execute(
                "INSERT OR REPLACE INTO agents VALUES (?1, ?2, ?3, ?4, ?5, 'COMPLETED')",
                params![a.id, workspace, a.name, a.created_at, a.updated_at],
            )
            .unwrap();
            for (i, r) in a.runs.iter().enumerate() {
                conn.execute(
                    "INSERT INTO runs VALUES (?1, ?2, ?3, 'COMPLETED', ?4, ?5, ?6, 'Complete', ?5, ?7)",
                    params![
                        format!("{}-run-{i}", a.id),
                        a.id,
                        i as i64 + 1,
                        r.model,
                        r.started_at,
                        r.finished_at,
                        r.usage_json
                    ],
                )
                .unwrap();
            }
            if let Some(messages) = &a.messages {
                let mut meta = json!({"agentId": a.id, "name": a.name, "mode": "agent",
                                      "createdAt": 1_767_200_000_000_i64});
                for (k, v) in a.extra_meta.as_object().into_iter().flatten() {
                    meta[k] = v.clone();
                }
                let store_dir = dir.join("agents").join(&a.id);
                write_agent_store(&store_dir, workspace, meta, messages, true, &Value::Null);
                std::fs::remove_file(store_dir.join("meta.json")).unwrap();
            }
        }
        path
    }

    /// An agent transcript at `projects/<dir_name>/agent-transcripts/<id>/<id>.jsonl`.
    pub fn transcript(&self, dir_name: &str, id: &str, lines: &[String]) -> PathBuf {
        let dir = self.cursor_home.join("projects").join(dir_name).join("agent-transcripts").join(id);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("{id}.jsonl"));
        let mut text = lines.join("\n");
        text.push('\n');
        std::fs::write(&path, text).unwrap();
        path
    }

    /// Every file under the fake home with its bytes (`-wal` and `-shm` included), to prove
    /// nothing was modified.
    pub fn snapshot(&self) -> BTreeMap<PathBuf, Vec<u8>> {
        let mut out = BTreeMap::new();
        let mut stack = vec![self.home.clone()];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap().flatten() {
                let p = e.path();
                if p.is_dir() {
                    stack.push(p);
                } else {
                    out.insert(p.clone(), std::fs::read(&p).unwrap());
                }
            }
        }
        out
    }
}

/// One agent of [`CursorFixture::sdk_agent_store`].
#[derive(Debug, Clone, Default)]
pub struct SdkAgent {
    pub id: String,
    pub name: String,
    /// ISO-8601, as the SDK writes them.
    pub created_at: String,
    pub updated_at: String,
    /// The JSON message blobs of its `store.db`; `None`: no blob store on disk.
    pub messages: Option<Vec<Value>>,
    /// More fields for the blob store's meta row (`blobEncryptionKey` and the like).
    pub extra_meta: Value,
    pub runs: Vec<SdkRun>,
}

/// One run of an [`SdkAgent`]; `usage_json` is written as given (`None`: SQL NULL).
#[derive(Debug, Clone, Default)]
pub struct SdkRun {
    pub model: String,
    pub started_at: String,
    pub finished_at: String,
    pub usage_json: Option<String>,
}

/// A cursor-agent `store.db` in `dir` (`blobs` + `meta`) and the `meta.json` beside it.
fn write_agent_store(
    dir: &Path,
    cwd: &str,
    mut meta: Value,
    messages: &[Value],
    hex_meta: bool,
    sidecar: &Value,
) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join("store.db");
    let conn = Connection::open(&path).unwrap();
    conn.execute_batch(
        "CREATE TABLE blobs (id TEXT PRIMARY KEY, data BLOB); CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);",
    )
    .unwrap();
    let mut leaf_ids = Vec::new();
    for m in messages {
        let data = m.to_string().into_bytes();
        let id = sha256_hex(&data);
        conn.execute("INSERT OR REPLACE INTO blobs VALUES (?1, ?2)", params![id, data]).unwrap();
        leaf_ids.push(id);
    }
    // The root blob as cursor-agent 2026.08+ writes it (`ConversationStateStructure`): field 1
    // the message blob ids, field 2 (`turns_old`) the id of a protobuf turn record, field 8 a
    // turn record inline, field 9 the workspace.
    let turn = vec![0x0a, 0x03, b'a', b'b', b'c', 0x10, 0x01];
    let turn_id = sha256_hex(&turn);
    conn.execute("INSERT OR REPLACE INTO blobs VALUES (?1, ?2)", params![turn_id, turn]).unwrap();
    let mut root = tree_node(&leaf_ids, std::slice::from_ref(&turn_id), None);
    root.extend([(8 << 3) | 2, 2, 0x08, 0x01]);
    root.extend(tree_node(&[], &[], Some(cwd)));
    let root_id = sha256_hex(&root);
    conn.execute("INSERT OR REPLACE INTO blobs VALUES (?1, ?2)", params![root_id, root]).unwrap();
    meta["latestRootBlobId"] = json!(root_id);
    let meta = meta.to_string();
    let value = if hex_meta { meta.bytes().map(|b| format!("{b:02x}")).collect() } else { meta };
    conn.execute("INSERT INTO meta VALUES ('0', ?1)", [value]).unwrap();
    std::fs::write(dir.join("meta.json"), sidecar.to_string()).unwrap();
    path
}

/// A protobuf root blob: field 1 = message blob ids, field 2 = turn record ids, field 9 = workspace.
pub fn tree_node(leaves: &[String], subtrees: &[String], workspace: Option<&str>) -> Vec<u8> {
    let mut out = Vec::new();
    for (field, ids) in [(1u8, leaves), (2u8, subtrees)] {
        for id in ids {
            out.push((field << 3) | 2);
            out.push(32);
            out.extend(hex_bytes(id));
        }
    }
    if let Some(w) = workspace {
        out.push((9 << 3) | 2);
        out.push(w.len() as u8);
        out.extend(w.as_bytes());
    }
    out
}

fn hex_bytes(s: &str) -> Vec<u8> {
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
}

/// A content address in the CLI store's style (64 hex chars). Cursor uses SHA-256; any
/// stable 32-byte digest exercises the same code, so two MD5s keep the dependency list short.
pub fn sha256_hex(data: &[u8]) -> String {
    use md5::Digest;
    let a = md5::Md5::digest(data);
    let b = md5::Md5::digest(a);
    a.iter().chain(b.iter()).map(|x| format!("{x:02x}")).collect()
}

/// A Cursor key-value database (`ItemTable`, optionally `cursorDiskKV`).
pub struct KvDb {
    pub conn: Connection,
    pub path: PathBuf,
}

impl KvDb {
    pub fn create(path: &Path, journal: Journal, with_disk_kv: bool) -> Self {
        let fresh = !path.exists();
        let conn = Connection::open(path).unwrap();
        if fresh {
            conn.execute_batch(&format!(
                "PRAGMA page_size = 4096; PRAGMA user_version = 1; {ITEM_TABLE_DDL};{}",
                if with_disk_kv { format!("{DISK_KV_DDL};") } else { String::new() }
            ))
            .unwrap();
        }
        match journal {
            Journal::Rollback => {}
            Journal::Wal => {
                conn.pragma_update(None, "journal_mode", "WAL").unwrap();
            }
            Journal::WalUncheckpointed => {
                conn.pragma_update(None, "journal_mode", "WAL").unwrap();
                conn.pragma_update(None, "wal_autocheckpoint", 0).unwrap();
                conn.set_db_config(rusqlite::config::DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, true).unwrap();
            }
        }
        Self { conn, path: path.to_owned() }
    }

    /// Write a JSON value as TEXT, the way real Cursor stores it.
    pub fn kv(&self, key: &str, value: &Value) -> &Self {
        self.raw("cursorDiskKV", Some(key), Some(&value.to_string()))
    }

    pub fn item(&self, key: &str, value: &Value) -> &Self {
        self.raw("ItemTable", Some(key), Some(&value.to_string()))
    }

    /// Any row, including NULL keys/values and truncated text.
    pub fn raw(&self, table: &str, key: Option<&str>, value: Option<&str>) -> &Self {
        self.conn.execute(&format!("INSERT INTO {table} (key, value) VALUES (?1, ?2)"), params![key, value]).unwrap();
        self
    }

    /// A BLOB-typed value (some synthetic writers and old builds).
    pub fn kv_blob(&self, key: &str, value: &Value) -> &Self {
        self.conn
            .execute(
                "INSERT INTO cursorDiskKV (key, value) VALUES (?1, ?2)",
                params![key, value.to_string().into_bytes()],
            )
            .unwrap();
        self
    }

    pub fn close(self) {
        self.conn.close().map_err(|(_, e)| e).unwrap();
    }
}

/// A split-form composer: `composerData:<id>` (with headers) plus one `bubbleId:` row per message.
pub struct Composer<'a> {
    pub id: &'a str,
    pub name: Option<&'a str>,
    pub version: i64,
    pub bubble_version: i64,
    pub created_at: i64,
    pub extra: Value,
    /// `(type, bubble JSON without type/_v/bubbleId)`.
    pub bubbles: Vec<(i64, Value)>,
}

impl Composer<'_> {
    pub fn write(&self, db: &KvDb) {
        let mut headers = Vec::new();
        for (i, (ty, b)) in self.bubbles.iter().enumerate() {
            let bid = format!("{}-b{i:04}", self.id);
            let mut bubble = b.clone();
            let o = bubble.as_object_mut().expect("bubble object");
            o.insert("_v".into(), json!(self.bubble_version));
            o.insert("type".into(), json!(ty));
            o.insert("bubbleId".into(), json!(bid));
            o.entry("text").or_insert(json!(""));
            db.kv(&format!("bubbleId:{}:{bid}", self.id), &bubble);
            headers.push(json!({"bubbleId": bid, "type": ty}));
        }
        let mut data = json!({
            "_v": self.version, "composerId": self.id, "createdAt": self.created_at,
            "lastUpdatedAt": self.created_at + 60_000, "status": "completed", "unifiedMode": "agent",
            "fullConversationHeadersOnly": headers, "conversationMap": {},
            "context": {"fileSelections": [], "mentions": {}}, "hasLoaded": true,
        });
        if let Some(n) = self.name {
            data["name"] = json!(n);
        }
        if let (Some(o), Some(extra)) = (data.as_object_mut(), self.extra.as_object()) {
            for (k, v) in extra {
                o.insert(k.clone(), v.clone());
            }
        }
        db.kv(&format!("composerData:{}", self.id), &data);
    }
}

/// A Lexical `richText` string for one paragraph.
pub fn rich_text(text: &str) -> String {
    json!({"root": {"type": "root", "version": 1, "direction": "ltr", "format": "", "indent": 0, "children": [
        {"type": "paragraph", "version": 1, "direction": "ltr", "format": "", "indent": 0, "children": [
            {"type": "text", "version": 1, "detail": 0, "format": 0, "mode": "normal", "style": "", "text": text}
        ]}
    ]}})
    .to_string()
}

/// Serves `app` on `listener` in the background until the returned sender is dropped or sent
/// to (the fakes of outside services stop with their handles).
pub(crate) fn serve_until_stopped(
    listener: tokio::net::TcpListener,
    app: axum::Router,
) -> tokio::sync::oneshot::Sender<()> {
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app)
            .with_graceful_shutdown(async {
                let _ = rx.await;
            })
            .await;
    });
    tx
}
