//! A run's life is the lifecycle's and the registered executor's: an executor of the host's own
//! (as a later Claude Code or Codex one would be) gets the run with its worktree made, and what
//! it leaves there is committed to the run's branch when the run ends — with nothing else of
//! this crate's changed.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use tether_board::principal::Principal;
use tether_board::runs::{NewRun, Outcome, RunStatus, WorktreeState};
use tether_core::executor::{Boxed, Drive, Executor, ExecutorInfo, Prepared};
use tether_core::paths::{CursorLocations, Paths};
use tether_core::settings::{RunSettingsPatch, SettingsPatch};
use tether_core::usage::BudgetWatch;
use tether_core::{Tether, ops};
use tether_runs::Runner;
use tether_testkit::git;
use tokio_util::sync::CancellationToken;

/// Writes a file where the run works and says it succeeded; remembers what it was given.
#[derive(Default)]
struct Scripted {
    given: Mutex<Vec<(String, Option<WorktreeState>, PathBuf)>>,
}

impl Executor for Scripted {
    fn kind(&self) -> &'static str {
        "local"
    }

    fn probe(&self, _t: &Tether) -> ExecutorInfo {
        ExecutorInfo { found: true, version: Some("scripted".into()), ..Default::default() }
    }

    fn drive<'a>(
        &'a self,
        _t: &'a Arc<Tether>,
        run: &'a Prepared,
        _cancel: &'a CancellationToken,
        _budget: &'a Arc<BudgetWatch>,
    ) -> Boxed<'a, Drive> {
        Box::pin(async move {
            let w = run.run.worktree.as_ref();
            let dir = PathBuf::from(w.map(|w| w.path.clone()).unwrap_or_default());
            std::fs::write(dir.join("NOTES.md"), "written by the scripted executor\n").unwrap();
            self.given.lock().unwrap().push((run.run.id.clone(), w.map(|w| w.state), dir));
            Drive::Ended(Outcome { status: RunStatus::Succeeded, ..Default::default() })
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_registered_executor_drives_a_run_between_its_begin_and_its_end() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("app");
    std::fs::create_dir(&repo).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    std::fs::write(repo.join("README.md"), "app\n").unwrap();
    git(&repo, &["add", "README.md"]);
    git(&repo, &["commit", "-q", "-m", "start"]);
    let repo = repo.canonicalize().unwrap();

    let t = Arc::new(Tether::open(Paths::at(dir.path().join("data")), CursorLocations::explicit(None, None)).unwrap());
    t.update_settings(&SettingsPatch {
        runs: Some(RunSettingsPatch { roots: Some(vec![repo.clone()]), ..Default::default() }),
        ..Default::default()
    })
    .unwrap();
    let scripted = Arc::new(Scripted::default());
    t.executors.register(scripted.clone());
    assert_eq!(ops::runs::options(&t).unwrap().cursor_cli.version.as_deref(), Some("scripted"), "ops ask it");

    let new = NewRun {
        prompt: Some("Take notes".into()),
        workspace: Some(repo.to_string_lossy().into_owned()),
        ..Default::default()
    };
    let run = ops::runs::start(&t, &Principal::person("me"), &new).unwrap();
    let runner = Runner::start(Arc::clone(&t));
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(30);
    let ended = loop {
        let r = t.board().runs().get(&run.id, Some(0)).unwrap().run;
        if r.status.is_terminal() {
            break r;
        }
        assert!(tokio::time::Instant::now() < deadline, "waiting for the run to end: {r:#?}");
        tokio::time::sleep(std::time::Duration::from_millis(40)).await;
    };
    runner.stop().await;

    assert_eq!(ended.status, RunStatus::Succeeded, "{ended:#?}");
    let given = scripted.given.lock().unwrap().clone();
    assert_eq!(given.len(), 1, "the host's executor drove it, not the Cursor CLI's");
    assert_eq!(given[0].1, Some(WorktreeState::Ready), "begin made its worktree first");
    let w = ended.worktree.clone().expect("a worktree run");
    assert_eq!(given[0].2, PathBuf::from(&w.path));
    assert_eq!(ended.changes.as_ref().map(|c| c.files), Some(1), "end kept its changes: {ended:#?}");
    let head = ended.head_commit.clone().expect("end committed what it left");
    assert_eq!(git(&repo, &["show", &format!("{head}:NOTES.md")]), "written by the scripted executor\n");
}
