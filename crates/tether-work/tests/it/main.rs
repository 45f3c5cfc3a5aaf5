//! A run's git life over a real SQLite board and real git, through a `Context` of the test's
//! own: tether-work needs nothing of tether-core.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use tether_board::principal::Principal;
use tether_board::runs::{self, Isolation, Limits, NewRun, Outcome, RunMode, RunStatus, StoredEvent, ValidRun};
use tether_board::{Board, Engine};
use tether_git::Strategy;
use tether_store::error::Result;
use tether_store::store::Store;
use tether_testkit::git;
use tether_work::{Context, GitHub, WorkSettings};

struct Host {
    store: Store,
    dir: PathBuf,
    appended: Mutex<Vec<(String, usize)>>,
}

impl Context for Host {
    fn board(&self) -> Engine<'_> {
        Engine::Borrowed(&self.store)
    }
    fn settings(&self) -> Result<WorkSettings> {
        Ok(WorkSettings {
            isolate: true,
            worktrees_dir: None,
            worktree_retention_days: 7,
            keep_branch_after_merge: true,
        })
    }
    fn default_worktrees_dir(&self) -> PathBuf {
        self.dir.join("worktrees")
    }
    fn clones_dir(&self) -> PathBuf {
        self.dir.join("repos")
    }
    fn roots(&self) -> Result<Vec<PathBuf>> {
        Ok(vec![self.dir.canonicalize().unwrap()])
    }
    fn github(&self) -> Result<Option<GitHub>> {
        Ok(None)
    }
    fn appended(&self, run: &str, events: Vec<StoredEvent>) {
        self.appended.lock().unwrap().push((run.to_owned(), events.len()));
    }
}

fn host() -> (tempfile::TempDir, Host, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("app");
    std::fs::create_dir(&repo).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    std::fs::write(repo.join("a.txt"), "one\n").unwrap();
    git(&repo, &["add", "a.txt"]);
    git(&repo, &["commit", "-q", "-m", "start"]);
    let store = Store::open(&tmp.path().join("tether.db")).unwrap();
    let host = Host { store, dir: tmp.path().to_owned(), appended: Mutex::default() };
    (tmp, host, repo.canonicalize().unwrap())
}

fn queued(h: &Host, repo: &Path, prompt: &str) -> runs::Run {
    let rs = h.settings().unwrap();
    let isolation = tether_work::place::isolation(h, &rs, repo, &NewRun::default(), None).unwrap();
    assert!(matches!(isolation, Isolation::New { .. }), "a git repository gets a worktree: {isolation:?}");
    let v = ValidRun {
        prompt: prompt.into(),
        task: None,
        workspace: repo.to_string_lossy().into_owned(),
        model: None,
        mode: RunMode::Agent,
        role: None,
        timeout_ms: 60_000,
        permissions: Default::default(),
        complete: false,
        parent: None,
        resume_chat: None,
        cloud: None,
        isolation,
        budget: None,
        target: Default::default(),
    };
    Board::new(&h.store).runs().create("pat", &v).unwrap()
}

#[test]
fn what_a_run_and_then_the_person_left_in_its_worktree_is_committed_and_merged_and_a_swapped_git_is_said() {
    let (_tmp, h, repo) = host();
    let run = queued(&h, &repo, "Fix the greeting\n\nsay hello");
    let limits = Limits { total: 2, per_workspace: 1, per_repo: 2, cloud: 1, ..Limits::default() };
    let claimed = Board::new(&h.store).runs().claim_next(7, &limits).unwrap().expect("the run is taken");
    assert_eq!(claimed.id, run.id);
    let run = claimed;
    let w = tether_work::worktree::make_worktree(&h, &run).unwrap();
    let wt = PathBuf::from(&w.path);
    std::fs::write(wt.join("a.txt"), "hello\n").unwrap();

    let mut ended = Board::new(&h.store).runs().get_run(run.num()).unwrap();
    ended.status = RunStatus::Succeeded;
    let sum = tether_work::worktree::record_end(&h, &ended).unwrap().expect("the worktree was there");
    assert_eq!((sum.files, sum.added, sum.deleted), (1, 1, 1), "the run's edit is on its branch: {sum:?}");
    assert!(git(&repo, &["log", "-1", "--format=%B", &w.branch]).contains("Tether-Run: R-1"), "its commit names it");
    Board::new(&h.store)
        .runs()
        .finish(run.num(), &Outcome { status: RunStatus::Succeeded, ..Default::default() })
        .unwrap();

    // The person edits in the worktree afterwards, and something swapped its `.git`.
    std::fs::write(wt.join("b.txt"), "the person's\n").unwrap();
    let evil = h.dir.join("evil.git");
    git(&h.dir, &["init", "-q", "--bare", &evil.to_string_lossy()]);
    std::fs::remove_file(wt.join(".git")).unwrap();
    std::fs::write(wt.join(".git"), format!("gitdir: {}\n", evil.display())).unwrap();

    let run = Board::new(&h.store).runs().get_run(run.num()).unwrap();
    let (into, merged) =
        tether_work::review::merge(&h, &Principal::person("pat"), "pat", &run, Strategy::Squash, None).unwrap();
    assert_eq!(into, "main");
    assert_eq!(git(&repo, &["show", &format!("{}:b.txt", merged.commit)]), "the person's\n", "their edit landed");
    assert_eq!(git(&repo, &["show", &format!("{}:a.txt", merged.commit)]), "hello\n");
    let message = git(&repo, &["log", "-1", "--format=%B", &merged.commit]);
    assert!(message.starts_with("Fix the greeting\n") && message.contains("Tether-Run: R-1"), "{message}");

    let log = Board::new(&h.store).runs().events_after(&run.id, 0, 100).unwrap();
    let said = log.iter().filter(|e| format!("{:?}", e.event).contains("replaced its worktree's .git")).count();
    assert_eq!(said, 1, "the swapped .git is said in the run's log when the merge commits the edits: {log:?}");
    assert_eq!(*h.appended.lock().unwrap(), [("R-1".to_owned(), 1)], "and told to whoever follows the run");
    assert!(!wt.exists(), "the worktree goes after the merge");
}
