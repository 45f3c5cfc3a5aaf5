//! Two data dirs joined to one team database are two machines: a run queued on one is that
//! machine's runner's alone, and each hears what the other wrote (the daemon's store watcher
//! announces it).

use tether_core::board::runs::{self, Limits, Permissions, RunMode, ValidRun};
use tether_core::ops::Principal;
use tether_core::ops::team::{self, Join};
use tether_core::token::{self, Backend};
use tether_core::{CursorLocations, Paths, Tether};
use tether_testkit::pg::{Cluster, PASSWORD};

const LIMITS: Limits = Limits { total: 2, per_workspace: 1, per_repo: 2, cloud: 1, only: None };

fn machine(url: &str, name: &str) -> (tempfile::TempDir, Tether) {
    let d = tempfile::tempdir().unwrap();
    let t = Tether::open(Paths::at(d.path()), CursorLocations::explicit(None, None)).unwrap();
    token::set_backend(&t.paths, Backend::File).unwrap();
    let join = Join { url: url.into(), machine: Some(name.into()), password: Some(PASSWORD.into()) };
    team::join(&t, &Principal::person("pat"), join).unwrap();
    (d, t)
}

fn prompt(text: &str) -> ValidRun {
    ValidRun {
        prompt: text.into(),
        task: None,
        workspace: "/work/app".into(),
        model: None,
        mode: RunMode::Agent,
        role: None,
        timeout_ms: 60_000,
        permissions: Permissions::default(),
        complete: false,
        parent: None,
        resume_chat: None,
        cloud: None,
        isolation: Default::default(),
        budget: None,
    }
}

#[test]
fn a_run_is_its_machines_and_each_machine_hears_the_others_writes() {
    let url = Cluster::shared().database();
    let (_a_dir, a) = machine(&url, "laptop");
    let (_b_dir, b) = machine(&url, "workstation");
    assert!(b.board_db().foreign_changes().unwrap().runs.is_none(), "nothing since joining");

    let run = runs::create(&*a.board_db(), "pat", &prompt("fix the build")).unwrap();
    assert!(
        runs::claim_next(&*b.board_db(), 7, LIMITS).unwrap().is_none(),
        "the workstation never takes the laptop's run"
    );
    let heard = b.board_db().foreign_changes().unwrap();
    assert!(heard.runs.is_some(), "the workstation hears of the laptop's run: {heard:?}");
    assert!(b.board_db().foreign_changes().unwrap().runs.is_none(), "once");
    assert!(a.board_db().foreign_changes().unwrap().runs.is_none(), "a machine's own write is not foreign to it");

    let claimed = runs::claim_next(&*a.board_db(), 7, LIMITS).unwrap().expect("the laptop's runner takes it");
    assert_eq!(claimed.id, run.id);
    let follow = ValidRun { parent: Some(run.num()), ..prompt("and the tests") };
    let next = runs::create(&*b.board_db(), "pat", &follow).unwrap();
    runs::finish(
        &*a.board_db(),
        run.num(),
        &runs::Outcome { status: runs::RunStatus::Succeeded, ..Default::default() },
    )
    .unwrap();
    assert!(runs::claim_next(&*b.board_db(), 7, LIMITS).unwrap().is_none(), "a follow-up goes where its chat is");
    assert_eq!(runs::claim_next(&*a.board_db(), 7, LIMITS).unwrap().map(|r| r.id), Some(next.id));

    team::leave(&a, &Principal::person("pat")).unwrap();
    assert!(runs::list(&*a.board_db(), &Default::default()).unwrap().is_empty(), "the laptop's own board again");
}
