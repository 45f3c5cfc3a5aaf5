//! Cursor's own AI-code tracking database as a code-origin source (`cursor-tracking`), built in
//! the test from its published shape (the `ai_code_hashes` and `scored_commits` columns public
//! readers dump; reference `cursor-storage.md`): blame and doctor say what it covers, its chats
//! are named from the index, its commit scores sit beside the lines — and no line's origin
//! changes, because its hashes cannot name a line. Read only: the fake home is byte-identical
//! after.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::json;
use tether_core::ops::Principal;
use tether_core::ops::trace::{self, Blame, BlameResult};
use tether_testkit::CursorFixture;

use crate::Env;

const CHAT: &str = "c0000001-0000-4000-8000-000000000001";

fn git(dir: &Path, args: &[&str]) -> String {
    let mut c = Command::new("git");
    c.arg("-C").arg(dir).args(args);
    for (k, _) in std::env::vars_os() {
        if k.to_string_lossy().starts_with("GIT_") {
            c.env_remove(k);
        }
    }
    c.env("GIT_AUTHOR_NAME", "Person").env("GIT_AUTHOR_EMAIL", "p@example.com");
    c.env("GIT_COMMITTER_NAME", "Person").env("GIT_COMMITTER_EMAIL", "p@example.com");
    c.env("GIT_CONFIG_NOSYSTEM", "1").env("HOME", dir);
    let out = c.output().unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// A repository with one committed file; its path and the commit's full id.
fn repo(dir: &Path) -> (PathBuf, String) {
    git(dir, &["init", "-q", "-b", "main"]);
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(dir.join("src/lib.rs"), "pub fn heron() -> u32 {\n    42\n}\n").unwrap();
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-qm", "heron"]);
    (dir.join("src/lib.rs").canonicalize().unwrap(), git(dir, &["rev-parse", "HEAD"]))
}

/// `~/.cursor/ai-tracking/ai-code-tracking.db` as Cursor lays it out, naming `file` and `commit`.
fn tracking_db(cursor_home: &Path, file: &Path, commit: &str) -> PathBuf {
    let path = cursor_home.join("ai-tracking/ai-code-tracking.db");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let c = rusqlite::Connection::open(&path).unwrap();
    c.execute_batch(
        "CREATE TABLE ai_code_hashes (hash TEXT PRIMARY KEY, source TEXT NOT NULL, fileExtension TEXT, fileName TEXT,
             requestId TEXT, conversationId TEXT, timestamp INTEGER, model TEXT, createdAt INTEGER NOT NULL);
         CREATE TABLE scored_commits (commitHash TEXT NOT NULL, branchName TEXT NOT NULL, scoredAt INTEGER NOT NULL,
             linesAdded INTEGER, linesDeleted INTEGER, tabLinesAdded INTEGER, tabLinesDeleted INTEGER,
             composerLinesAdded INTEGER, composerLinesDeleted INTEGER, humanLinesAdded INTEGER,
             humanLinesDeleted INTEGER, blankLinesAdded INTEGER, blankLinesDeleted INTEGER, commitMessage TEXT,
             commitDate TEXT, v1AiPercentage TEXT, v2AiPercentage TEXT, PRIMARY KEY (commitHash, branchName));
         CREATE TABLE conversation_summaries (conversationId TEXT PRIMARY KEY, title TEXT, tldr TEXT, overview TEXT,
             summaryBullets TEXT, model TEXT, mode TEXT, updatedAt INTEGER NOT NULL);
         CREATE TABLE tracking_state (key TEXT PRIMARY KEY, value TEXT);
         INSERT INTO tracking_state VALUES ('trackingStartTime', '1767225600000');",
    )
    .unwrap();
    let file = file.to_string_lossy();
    let mut add = c.prepare("INSERT INTO ai_code_hashes VALUES (?1, ?2, 'rs', ?3, ?4, ?5, ?6, ?7, ?6)").unwrap();
    add.execute(rusqlite::params!["a1b2c3d4", "composer", file, "req-1", CHAT, 1_767_300_000_000_i64, "claude-4.5"])
        .unwrap();
    add.execute(rusqlite::params!["a1b2c3d5", "composer", file, "req-2", CHAT, 1_767_300_500_000_i64, "claude-4.5"])
        .unwrap();
    add.execute(rusqlite::params![
        "e5f6a7b8",
        "tab",
        file,
        None::<String>,
        None::<String>,
        1_767_400_000_000_i64,
        None::<String>
    ])
    .unwrap();
    add.execute(rusqlite::params![
        "00ff00ff",
        "human",
        file,
        None::<String>,
        None::<String>,
        1_767_500_000_000_i64,
        None::<String>
    ])
    .unwrap();
    add.execute(rusqlite::params![
        "c0ffee00",
        "composer",
        "/elsewhere/main.rs",
        "req-3",
        "other-chat",
        1_767_600_000_000_i64,
        "gpt-5"
    ])
    .unwrap();
    c.execute(
        "INSERT INTO scored_commits VALUES (?1, 'main', 1767700000000, 3, 0, 1, 0, 2, 0, 0, 0, 0, 0, 'heron', '2026-01-06', '66.7', '100.0')",
        [commit],
    )
    .unwrap();
    path
}

fn blame(e: &Env, file: &Path) -> BlameResult {
    let req = Blame { path: file.to_string_lossy().into_owned(), line: None, end_line: None };
    trace::blame(&e.t, &Principal::person("me"), &req).unwrap()
}

#[test]
fn cursors_tracking_names_a_files_chats_and_its_commits_scores_without_deciding_a_line() {
    let e = Env::new(CursorFixture::new());
    let user = |t: &str| json!({"role": "user", "message": {"content": [{"type": "text", "text": t}]}}).to_string();
    e.fx.transcript("w", CHAT, &[user("<user_query>\nmake the heron answer 42\n</user_query>")]);
    e.index();
    let work = tempfile::tempdir().unwrap();
    let (file, commit) = repo(&work.path().canonicalize().unwrap());

    // No database: nothing said in blame, "missing" in doctor.
    assert!(blame(&e, &file).cursor_tracking.is_none());
    let d = tether_core::doctor::doctor(&e.t).unwrap();
    assert_eq!(d.cursor_tracking.iter().map(|c| c.status).collect::<Vec<_>>(), ["missing"]);

    let db = tracking_db(&e.fx.cursor_home, &file, &commit);
    let before = e.fx.snapshot();
    let b = blame(&e, &file);
    // Every line keeps the origin Tether's own trace gives it (none recorded: unknown).
    assert_eq!((b.counts.ai, b.counts.mixed, b.counts.human, b.counts.unknown), (0, 0, 0, 3));
    let ct = b.cursor_tracking.expect("the database is read");
    assert_eq!(ct.source, "cursor-tracking");
    assert_eq!(ct.skipped, None);
    assert!(ct.since.as_deref().is_some_and(|s| s.starts_with("2026-01-01")), "{:?}", ct.since);
    let chats: Vec<_> = ct.chats.iter().map(|c| (c.conversation_id.as_str(), c.source.as_str(), c.chunks)).collect();
    // The person's chunk is nobody's chat and the other file's chat is not this file's.
    assert_eq!(chats, [("", "tab", 1), (CHAT, "composer", 2)]);
    let agent = &ct.chats[1];
    assert!(agent.session.is_some(), "the chat is named from the index");
    assert_eq!(agent.title.as_deref(), Some("make the heron answer 42"));
    assert_eq!(agent.model.as_deref(), Some("claude-4.5"));
    assert_eq!(ct.commits.len(), 1);
    let s = &ct.commits[0];
    assert_eq!(
        (s.commit.as_str(), s.lines_added, s.agent_lines_added, s.tab_lines_added, s.human_lines_added),
        (commit.as_str(), Some(3), Some(2), Some(1), Some(0))
    );
    assert!(ct.covers.contains("cannot say which line"));

    let d = tether_core::doctor::doctor(&e.t).unwrap();
    let st = &d.cursor_tracking[0];
    assert_eq!((st.status, st.path.as_str()), ("read", db.to_string_lossy().as_ref()));
    let cov = st.coverage.as_ref().unwrap();
    assert_eq!((cov.chunks, cov.ai_chunks, cov.files, cov.chats, cov.commits), (5, 4, 2, 2, 1));
    assert_eq!(e.fx.snapshot(), before, "Cursor's files are never written");

    // Damaged (or not SQLite at all): said, and blame answers as before.
    std::fs::write(&db, b"SQLite format 3\0 but cut short").unwrap();
    let b = blame(&e, &file);
    assert_eq!(b.counts.unknown, 3);
    let ct = b.cursor_tracking.expect("still reported");
    assert!(ct.skipped.as_deref().is_some_and(|s| s.contains("not readable")), "{:?}", ct.skipped);
    assert!(ct.chats.is_empty() && ct.commits.is_empty());
    let d = tether_core::doctor::doctor(&e.t).unwrap();
    assert_eq!(d.cursor_tracking[0].status, "skipped");
}
