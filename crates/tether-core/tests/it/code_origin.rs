//! Code origin over real git: a corpus of edit sequences (AI edit, a person's edit of the same
//! lines, move, rename, rebase, squash, revert, CRLF, re-indenting, two chats, Tab, no git) with
//! the origin expected for every line, as `ops::trace::blame` decides it.

use std::path::{Path, PathBuf};
use std::process::Command;

use tether_core::code_origin::{self, EditBy, EditPart};
use tether_core::ops::Principal;
use tether_core::ops::trace::{self, Blame};
use tether_core::{CursorLocations, Paths, Tether};
use tether_trace::EditKind;
use tether_trace::capture::{Replacement, capture, pack};

struct Fixture {
    _data: tempfile::TempDir,
    dir: tempfile::TempDir,
    t: Tether,
}

fn fixture(git: bool) -> Fixture {
    let data = tempfile::tempdir().unwrap();
    let t = Tether::open(Paths::at(data.path()), CursorLocations::explicit(None, None)).unwrap();
    let f = Fixture { _data: data, dir: tempfile::tempdir().unwrap(), t };
    if git {
        f.git(&["init", "-q", "-b", "main"]);
    }
    f
}

impl Fixture {
    fn root(&self) -> PathBuf {
        self.dir.path().canonicalize().unwrap()
    }

    fn git(&self, args: &[&str]) -> String {
        self.git_dated(args, None)
    }

    /// Git with a fixed identity; `date` backdates the author (work from before tracing began).
    fn git_dated(&self, args: &[&str], date: Option<&str>) -> String {
        let mut c = Command::new("git");
        c.arg("-C").arg(self.root()).args(args);
        for (k, _) in std::env::vars_os() {
            if k.to_string_lossy().starts_with("GIT_") {
                c.env_remove(k);
            }
        }
        c.env("GIT_AUTHOR_NAME", "Person").env("GIT_AUTHOR_EMAIL", "p@example.com");
        c.env("GIT_COMMITTER_NAME", "Person").env("GIT_COMMITTER_EMAIL", "p@example.com");
        c.env("GIT_CONFIG_NOSYSTEM", "1").env("HOME", self.root());
        if let Some(d) = date {
            c.env("GIT_AUTHOR_DATE", d).env("GIT_COMMITTER_DATE", d);
        }
        let out = c.output().unwrap();
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn commit(&self, msg: &str) {
        self.git(&["add", "-A"]);
        self.git(&["commit", "-qm", msg]);
    }

    /// What the person had before Tether traced anything.
    fn old_commit(&self, msg: &str) {
        self.git(&["add", "-A"]);
        self.git_dated(&["commit", "-qm", msg], Some("2020-01-01T00:00:00Z"));
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.root().join(rel)
    }

    fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.path(rel)).unwrap()
    }

    fn write(&self, rel: &str, text: &str) {
        let p = self.path(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    /// An agent rewrites the file to `text`, recorded as the hook forwarder would.
    fn ai(&self, rel: &str, text: &str, chat: &str) {
        self.edit_by(rel, text, chat, EditKind::Agent);
    }

    fn edit_by(&self, rel: &str, text: &str, chat: &str, kind: EditKind) {
        let old = std::fs::read_to_string(self.path(rel)).unwrap_or_default();
        self.write(rel, text);
        record(&self.t, &self.path(rel), &old, text, chat, kind);
    }

    /// Each line's origin, as `ai:<chat>`, `mixed:<chat>`, `human` or `unknown`.
    fn origins(&self, rel: &str) -> Vec<String> {
        origins_of(&self.t, &self.path(rel))
    }
}

fn record(t: &Tether, file: &Path, old: &str, new: &str, chat: &str, kind: EditKind) {
    let c = capture(Some(new), &[Replacement { old_string: old.into(), new_string: new.into() }]);
    let part = EditPart {
        edit: tether_core::token::generate(),
        file: file.to_string_lossy().into_owned(),
        ranges: c.ranges,
        written: pack(&c.written),
        replaced: pack(&c.replaced),
    };
    let by = EditBy {
        kind: Some(kind),
        conversation_id: Some(chat.into()),
        model: Some("gpt-5".into()),
        ..Default::default()
    };
    code_origin::record(t, &by, &part).unwrap();
}

fn origins_of(t: &Tether, file: &Path) -> Vec<String> {
    let me = Principal::person("me");
    let b =
        trace::blame(t, &me, &Blame { path: file.to_string_lossy().into_owned(), line: None, end_line: None }).unwrap();
    let chat = |id: Option<i64>| {
        let e = b.edits.iter().find(|e| Some(e.id) == id).unwrap();
        e.conversation_id.clone().unwrap()
    };
    b.lines
        .iter()
        .map(|l| match l.origin.as_str() {
            o @ ("ai" | "mixed") => format!("{o}:{}", chat(l.edit)),
            o => o.to_owned(),
        })
        .collect()
}

fn v(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

const BASE: &str = "fn main() {\n    run();\n}\n";
const WITH_ADD: &str =
    "fn main() {\n    run();\n    let s = add(2, 3);\n}\n\nfn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n";

#[test]
fn an_ai_edit_a_persons_edit_of_it_and_their_own_lines() {
    let f = fixture(true);
    f.write("src/main.rs", BASE);
    f.old_commit("base");
    f.ai("src/main.rs", WITH_ADD, "A");
    // Uncommitted, then committed: the same answer. Of the two identical `}`, git keeps the last
    // one as the base's (it matched the old line there), so that one is not the edit's.
    let expected = v(&["unknown", "unknown", "ai:A", "ai:A", "ai:A", "ai:A", "ai:A", "unknown"]);
    assert_eq!(f.origins("src/main.rs"), expected);
    f.commit("add");
    assert_eq!(f.origins("src/main.rs"), expected);

    // The person edits an AI line and adds one of their own.
    let edited = f.read("src/main.rs").replace("    a + b\n", "    a + b + 0\n") + "// checked by hand\n";
    f.write("src/main.rs", &edited);
    let expected = v(&["unknown", "unknown", "ai:A", "ai:A", "ai:A", "ai:A", "mixed:A", "unknown", "human"]);
    assert_eq!(f.origins("src/main.rs"), expected, "uncommitted");
    f.commit("by hand");
    assert_eq!(f.origins("src/main.rs"), expected, "committed");
}

#[test]
fn content_survives_moves_renames_crlf_and_reindenting() {
    let f = fixture(true);
    f.write("a.rs", BASE);
    f.old_commit("base");
    f.ai("a.rs", WITH_ADD, "A");
    f.commit("add");
    // Moved to the top of the file by a person.
    let moved = "fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n\nfn main() {\n    run();\n    let s = add(2, 3);\n}\n";
    f.write("a.rs", moved);
    f.commit("move");
    let after_move = v(&["ai:A", "ai:A", "ai:A", "ai:A", "unknown", "unknown", "ai:A", "ai:A"]);
    assert_eq!(f.origins("a.rs"), after_move);
    // Renamed.
    f.git(&["mv", "a.rs", "b.rs"]);
    f.commit("rename");
    assert_eq!(f.origins("b.rs"), after_move);
    // CRLF and tabs instead of spaces.
    f.write("b.rs", &moved.replace("    ", "\t").replace('\n', "\r\n"));
    f.commit("crlf, tabs");
    assert_eq!(f.origins("b.rs"), after_move);
}

#[test]
fn rebased_and_squashed_commits_keep_their_chat_and_a_revert_is_unknown() {
    let f = fixture(true);
    f.write("lib.rs", BASE);
    f.write("other.rs", "x\n");
    f.old_commit("base");
    f.git(&["checkout", "-qb", "feature"]);
    f.ai("lib.rs", WITH_ADD, "A");
    f.commit("feature");
    f.git(&["checkout", "-q", "main"]);
    f.write("other.rs", "y\n");
    f.commit("main moves on");
    let expected = v(&["unknown", "unknown", "ai:A", "ai:A", "ai:A", "ai:A", "ai:A", "unknown"]);

    // Rebase: new commits, same content.
    f.git(&["checkout", "-q", "feature"]);
    f.git(&["rebase", "-q", "main"]);
    assert_eq!(f.origins("lib.rs"), expected, "rebased");
    // Squash merge into main.
    f.git(&["checkout", "-q", "main"]);
    f.git(&["merge", "-q", "--squash", "feature"]);
    f.commit("squashed");
    assert_eq!(f.origins("lib.rs"), expected, "squashed");

    // Reverted: the AI's lines are gone; the lines it had replaced are back, as old as before.
    f.git(&["revert", "--no-edit", "HEAD"]);
    assert_eq!(f.origins("lib.rs"), v(&["unknown", "unknown", "unknown"]));
}

#[test]
fn two_chats_in_one_file_tab_edits_and_files_outside_git() {
    let f = fixture(true);
    f.write("m.rs", "// module\n");
    f.old_commit("base");
    f.ai("m.rs", "// module\nfn alpha() -> u8 {\n    1\n}\n", "A");
    f.ai("m.rs", "// module\nfn alpha() -> u8 {\n    1\n}\nfn beta() -> u8 {\n    2\n}\n", "B");
    f.edit_by(
        "m.rs",
        "// module\nfn alpha() -> u8 {\n    1\n}\nfn beta() -> u8 {\n    2\n}\nconst GAMMA: u8 = 3;\n",
        "C",
        EditKind::Tab,
    );
    f.commit("three");
    assert_eq!(f.origins("m.rs"), v(&["unknown", "ai:A", "ai:A", "ai:A", "ai:B", "ai:B", "ai:B", "ai:C"]));
    let me = Principal::person("me");
    let b = trace::blame(
        &f.t,
        &me,
        &Blame { path: f.path("m.rs").to_string_lossy().into(), line: Some(8), end_line: None },
    )
    .unwrap();
    assert_eq!((b.lines.len(), b.edits[0].kind), (1, EditKind::Tab));

    // Not in git: what the trace holds, else unknown (no history to say a person wrote it).
    let plain = fixture(false);
    plain.write("notes.py", "x = 1\n");
    plain.ai("notes.py", "x = 1\ndef f():\n    return x\n", "D");
    plain.write("notes.py", "x = 1\ndef f():\n    return x\ny = 2\n");
    assert_eq!(plain.origins("notes.py"), v(&["unknown", "ai:D", "ai:D", "unknown"]));
}

/// Runs `f` on a thread of its own and fails the test if it has not returned within `secs`
/// (a call blocked on a FIFO never returns; the thread is left behind).
fn within<T: Send + 'static>(secs: u64, what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(std::time::Duration::from_secs(secs))
        .unwrap_or_else(|_| panic!("{what} was still blocked after {secs} s"))
}

fn mkfifo(p: &Path) {
    let out = Command::new("mkfifo").arg(p).output().unwrap();
    assert!(out.status.success(), "mkfifo: {}", String::from_utf8_lossy(&out.stderr));
}

/// A `.git` beside an edited file is the agent's to write: a FIFO there (or a `.git` file naming
/// a git folder whose `commondir` is one, or a link to one) never holds the recording of the edit
/// or a blame, and the file counts as outside any repository.
#[test]
fn an_odd_git_beside_an_edited_file_never_holds_recording_or_blame() {
    let f = fixture(true);
    f.write("base.rs", BASE);
    f.commit("base");
    f.write("fifo/a.rs", BASE);
    mkfifo(&f.path("fifo/.git"));
    f.write("linked/a.rs", BASE);
    tether_testkit::fs::symlink(f.path("fifo/.git"), f.path("linked/.git")).unwrap();
    f.write("gitfile/a.rs", BASE);
    f.write("gitfile/.git", "gitdir: gd\n");
    f.write("gitfile/gd/HEAD", "ref: refs/heads/main\n");
    mkfifo(&f.path("gitfile/gd/commondir"));
    f.write("head/a.rs", BASE);
    std::fs::create_dir_all(f.path("head/.git/objects")).unwrap();
    std::fs::create_dir_all(f.path("head/.git/refs")).unwrap();
    mkfifo(&f.path("head/.git/HEAD"));
    let t = std::sync::Arc::new(f.t);
    for dir in ["fifo", "linked", "gitfile", "head"] {
        let file = f.dir.path().canonicalize().unwrap().join(dir).join("a.rs");
        let t2 = std::sync::Arc::clone(&t);
        let f2 = file.clone();
        within(20, &format!("recording an edit in {dir}/"), move || {
            record(&t2, &f2, BASE, WITH_ADD, "chat-odd", EditKind::Agent)
        });
        let t2 = std::sync::Arc::clone(&t);
        let b = within(20, &format!("blame in {dir}/"), move || {
            let me = Principal::person("me");
            trace::blame(&t2, &me, &Blame { path: file.to_string_lossy().into_owned(), line: None, end_line: None })
        })
        .unwrap();
        assert_eq!(b.repo, None, "{dir}/.git is not a repository Tether vouches for");
    }
}

/// Publishing into `.agent-trace/traces.jsonl`: a FIFO there is refused at once (it held the
/// publisher, and every repository after it, forever), as is a hard link to a file elsewhere
/// (appending wrote there); the other repository gets its records, and the refused one gets them
/// once its file is a plain file again.
#[test]
fn publishing_refuses_a_fifo_or_hard_linked_traces_file_and_goes_on_with_the_others() {
    let a = fixture(true);
    let b = fixture(true);
    let me = Principal::person("me");
    for f in [&a, &b] {
        f.write("calc.rs", BASE);
        f.commit("base");
        let on = trace::Publish { repo: f.root().to_string_lossy().into_owned(), store: Some("files".into()) };
        trace::set_publish(&a.t, &me, &on).unwrap();
        let old = f.read("calc.rs");
        f.write("calc.rs", WITH_ADD);
        record(&a.t, &f.path("calc.rs"), &old, WITH_ADD, "chat-pub", EditKind::Agent);
        f.commit("agent work");
    }
    std::fs::create_dir_all(a.path(".agent-trace")).unwrap();
    mkfifo(&a.path(".agent-trace/traces.jsonl"));
    let ar = a.root();
    let t = std::sync::Arc::new(a.t);
    let publish = |t: &std::sync::Arc<Tether>| {
        let t = std::sync::Arc::clone(t);
        within(20, "publishing", move || code_origin::publish(&t).unwrap())
    };
    let p = publish(&t);
    assert_eq!(p.records, 1, "only the good repository's record is written: {p:?}");
    assert_eq!(b.read(".agent-trace/traces.jsonl").lines().count(), 1);
    // A hard link to a file elsewhere: refused, the file untouched.
    let victim = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(victim.path(), "keep\n").unwrap();
    std::fs::remove_file(ar.join(".agent-trace/traces.jsonl")).unwrap();
    std::fs::hard_link(victim.path(), ar.join(".agent-trace/traces.jsonl")).unwrap();
    assert_eq!(publish(&t).records, 0);
    assert_eq!(std::fs::read_to_string(victim.path()).unwrap(), "keep\n");
    // A link to the folder: refused too.
    std::fs::remove_dir_all(ar.join(".agent-trace")).unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    tether_testkit::fs::symlink(elsewhere.path(), ar.join(".agent-trace")).unwrap();
    assert_eq!(publish(&t).records, 0);
    assert_eq!(std::fs::read_dir(elsewhere.path()).unwrap().count(), 0);
    // A plain file again: the records held back are written.
    std::fs::remove_file(ar.join(".agent-trace")).unwrap();
    assert_eq!(publish(&t).records, 1);
    let rec: serde_json::Value = serde_json::from_str(
        std::fs::read_to_string(ar.join(".agent-trace/traces.jsonl")).unwrap().lines().next().unwrap(),
    )
    .unwrap();
    assert_eq!(rec["files"][0]["path"], "calc.rs", "{rec}");
}

/// An agent reads origins only inside its own chat's workspace roots, not in every repository a
/// hook ever named (another chat's traced repository); people read any.
#[test]
fn an_agent_reads_origins_only_inside_its_own_chats_workspace() {
    let mine = fixture(true);
    let theirs = fixture(true);
    for f in [&mine, &theirs] {
        f.write("calc.rs", BASE);
        f.commit("base");
        f.write("calc.rs", WITH_ADD);
        record(&mine.t, &f.path("calc.rs"), BASE, WITH_ADD, "chat-x", EditKind::Agent);
    }
    let agent = Principal::agent(tether_board::principal::Identity {
        id: "chat-mine".into(),
        kind: tether_board::principal::AgentKind::Cursor,
        mcp_session: None,
        project: Some(mine.root().to_string_lossy().into_owned()),
    });
    let roots = vec![mine.root().to_string_lossy().into_owned()];
    let ask =
        |f: &Fixture| Blame { path: f.path("calc.rs").to_string_lossy().into_owned(), line: None, end_line: None };
    let o = trace::code_origin(&mine.t, &agent, &roots, &ask(&mine)).unwrap();
    assert!(o.counts.ai > 0, "{o:?}");
    // Relative to the chat's workspace.
    let rel = Blame { path: "calc.rs".into(), line: Some(3), end_line: None };
    assert_eq!(trace::code_origin(&mine.t, &agent, &roots, &rel).unwrap().lines.len(), 1);
    for (roots, f) in [(roots.clone(), &theirs), (Vec::new(), &mine)] {
        let e = trace::code_origin(&mine.t, &agent, &roots, &ask(f)).unwrap_err();
        assert_eq!(e.code(), tether_core::ErrorCode::Forbidden, "{e}");
    }
    let person = Principal::person("me");
    assert!(trace::code_origin(&mine.t, &person, &[], &ask(&theirs)).unwrap().counts.ai > 0);
}

/// `trace export --with-excerpts`: the turn's words leave Tether through the redaction sharing a
/// chat uses — the chat's token and password replaced, the rest kept.
#[test]
fn excerpts_in_an_export_carry_no_secrets() {
    use serde_json::json;
    use tether_testkit::{Composer, CursorFixture, Journal};
    let fx = CursorFixture::new();
    let g = fx.global(Journal::Rollback);
    Composer {
        id: "secret-chat",
        name: Some("Deploy the app"),
        version: 10,
        bubble_version: 3,
        created_at: 1_700_000_000_000,
        extra: json!({}),
        bubbles: vec![
            (1, json!({"text": "Deploy with DATABASE_URL=postgres://admin:s3cr3tP4ss@db.example.com:5432/app and token ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"})),
            (2, json!({"text": "Done: the area function multiplies width by height."})),
        ],
    }
    .write(&g);
    g.close();
    let e = crate::Env::new(fx);
    e.index();
    let repo = tempfile::tempdir().unwrap();
    let file = repo.path().canonicalize().unwrap().join("area.rs");
    std::fs::write(&file, "fn area(w: f64, h: f64) -> f64 {\n    w * h\n}\n").unwrap();
    record(&e.t, &file, "", "fn area(w: f64, h: f64) -> f64 {\n    w * h\n}\n", "secret-chat", EditKind::Agent);
    let me = Principal::person("me");
    let records = trace::export(&e.t, &me, &trace::Export { since: None, repo: None, with_excerpts: true }).unwrap();
    let text = serde_json::to_string(&records).unwrap();
    assert!(text.contains("the area function multiplies width by height"), "the excerpt is there: {text}");
    for secret in ["s3cr3tP4ss", "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"] {
        assert!(!text.contains(secret), "{secret} left in {text}");
    }
}
