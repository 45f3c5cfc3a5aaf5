//! Data dirs joined to one team database are machines: a run goes where it may (the machine it
//! names, a runner with its labels, the machine that queued it first), each hears what the
//! others wrote (the daemon's store watcher announces it), and a runner machine that stops
//! checking in has its runs lost and their tasks handed back.

use std::time::Duration;

use tether_board::principal::{Actor, AgentKind, Identity};
use tether_board::runs::{self, Limits, Permissions, RepoRef, RunMode, RunStatus, RunTarget, ValidRun};
use tether_board::tasks::{self, NewTask};
use tether_core::ops::Principal;
use tether_core::ops::team::{self, Join};
use tether_core::token::{self, Backend};
use tether_core::{Board, CursorLocations, Paths, Tether};
use tether_testkit::pg::{CERT_USER, Cluster, PASSWORD};

fn limits() -> Limits {
    Limits { total: 2, per_workspace: 1, per_repo: 2, cloud: 1, ..Limits::default() }
}

fn machine(url: &str, name: &str) -> (tempfile::TempDir, Tether) {
    let d = tempfile::tempdir().unwrap();
    let t = Tether::open(Paths::at(d.path()), CursorLocations::explicit(None, None)).unwrap();
    token::set_backend(&t.paths, Backend::File).unwrap();
    let join =
        Join { url: url.into(), machine: Some(name.into()), password: Some(PASSWORD.into()), ..Default::default() };
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
        target: Default::default(),
    }
}

#[test]
fn a_run_is_its_machines_and_each_machine_hears_the_others_writes() {
    let url = Cluster::shared().database();
    let (_a_dir, a) = machine(&url, "laptop");
    let (_b_dir, b) = machine(&url, "workstation");
    assert!(b.board_db().foreign_changes().unwrap().runs.is_none(), "nothing since joining");

    let run = a.board().runs().create("pat", &prompt("fix the build")).unwrap();
    assert!(
        b.board().runs().claim_next(7, &limits()).unwrap().is_none(),
        "the workstation never takes the laptop's run"
    );
    let heard = b.board_db().foreign_changes().unwrap();
    assert!(heard.runs.is_some(), "the workstation hears of the laptop's run: {heard:?}");
    assert!(b.board_db().foreign_changes().unwrap().runs.is_none(), "once");
    assert!(a.board_db().foreign_changes().unwrap().runs.is_none(), "a machine's own write is not foreign to it");

    let claimed = a.board().runs().claim_next(7, &limits()).unwrap().expect("the laptop's runner takes it");
    assert_eq!(claimed.id, run.id);
    let follow = ValidRun { parent: Some(run.num()), ..prompt("and the tests") };
    let next = b.board().runs().create("pat", &follow).unwrap();
    a.board()
        .runs()
        .finish(run.num(), &runs::Outcome { status: runs::RunStatus::Succeeded, ..Default::default() })
        .unwrap();
    assert!(b.board().runs().claim_next(7, &limits()).unwrap().is_none(), "a follow-up goes where its chat is");
    assert_eq!(a.board().runs().claim_next(7, &limits()).unwrap().map(|r| r.id), Some(next.id));

    team::leave(&a, &Principal::person("pat")).unwrap();
    assert!(a.board().runs().list(&Default::default()).unwrap().is_empty(), "the laptop's own board again");
}

fn runner(labels: &[&str]) -> Limits {
    Limits { takes_others: true, labels: labels.iter().map(|l| (*l).to_owned()).collect(), ..limits() }
}

fn findable(text: &str, target: RunTarget) -> ValidRun {
    let repo = Some(RepoRef { url: "git@example.com:team/app.git".into(), subdir: String::new() });
    ValidRun { target: RunTarget { repo, ..target }, ..prompt(text) }
}

#[test]
fn a_run_goes_to_the_machine_it_names_a_runner_with_its_labels_or_its_own_machine_first() {
    let url = Cluster::shared().database();
    let (_a_dir, laptop) = machine(&url, "laptop");
    let (_b_dir, station) = machine(&url, "station");
    let gpu = runner(&["gpu", "linux"]);

    // Named: only that machine takes it, runner or not.
    let named = laptop
        .board()
        .runs()
        .create("pat", &findable("on the station", RunTarget { machine: Some("station".into()), ..Default::default() }))
        .unwrap();
    assert_eq!((named.origin.as_deref(), named.on.as_deref()), (Some("laptop"), Some("station")));
    assert!(laptop.board().runs().claim_next(1, &runner(&["gpu"])).unwrap().is_none());
    let took = station.board().runs().claim_next(2, &limits()).unwrap().expect("the named machine takes it");
    assert_eq!((took.id.as_str(), took.machine.as_deref()), (named.id.as_str(), Some("station")));
    let done = runs::Outcome { status: RunStatus::Succeeded, ..Default::default() };
    station.board().runs().finish(took.num(), &done).unwrap();

    // Labels: a runner without all of them never takes it; one with them takes it at once, as
    // the laptop that queued it lacks them (its head start is for taking its own run).
    let labelled = laptop
        .board()
        .runs()
        .create("pat", &findable("train", RunTarget { labels: vec!["gpu".into()], ..Default::default() }))
        .unwrap();
    assert!(station.board().runs().claim_next(2, &runner(&["linux"])).unwrap().is_none(), "lacks gpu");
    assert!(laptop.board().runs().claim_next(1, &limits()).unwrap().is_none(), "the laptop lacks gpu");
    assert!(station.board().runs().claim_next(2, &limits()).unwrap().is_none(), "not a runner: only its own");
    let took = station.board().runs().claim_next(2, &gpu).unwrap().expect("a gpu runner takes it at once");
    assert_eq!(took.id, labelled.id);

    // Any runner, this machine first: the laptop takes its own at once.
    let mine = laptop.board().runs().create("pat", &findable("lint", RunTarget::default())).unwrap();
    assert!(station.board().runs().claim_next(2, &gpu).unwrap().is_none(), "the laptop's moment");
    assert_eq!(laptop.board().runs().claim_next(1, &limits()).unwrap().map(|r| r.id), Some(mine.id));

    // A folder no other machine could find stays with the machine that queued it.
    let stuck = laptop.board().runs().create("pat", &prompt("local only")).unwrap();
    assert_eq!(stuck.on.as_deref(), Some("laptop"));
}

#[test]
fn a_runner_machine_that_stops_checking_in_loses_its_runs_and_hands_their_tasks_back() {
    let url = Cluster::shared().database();
    let (_a_dir, laptop) = machine(&url, "laptop");
    let (_g_dir, ghost) = machine(&url, "ghost");
    let task = laptop
        .board()
        .tasks()
        .create(&Actor::person("pat"), &NewTask { title: "port it".into(), ..Default::default() })
        .unwrap();
    let num = tasks::parse_id(&task.id).unwrap();
    let on_ghost = RunTarget { machine: Some("ghost".into()), ..Default::default() };
    let run = laptop.board().runs().create("pat", &ValidRun { task: Some(num), ..findable("port", on_ghost) }).unwrap();
    let took = ghost.board().runs().claim_next(4242, &limits()).unwrap().unwrap();
    assert_eq!((took.id.as_str(), took.status), (run.id.as_str(), RunStatus::Running));
    assert!(laptop.board().tasks().get(&task.id).unwrap().task.assignee.is_some(), "the run holds its task");

    // Within its lease nothing happens; the ghost then says nothing more.
    assert!(team::sweep(&laptop, Duration::from_secs(60)).unwrap().is_empty());
    std::thread::sleep(Duration::from_millis(700));
    assert!(team::sweep(&ghost, Duration::from_millis(300)).unwrap().is_empty(), "a machine never judges itself");
    assert_eq!(team::sweep(&laptop, Duration::from_millis(300)).unwrap(), vec![run.id.clone()]);
    assert!(team::sweep(&laptop, Duration::from_millis(300)).unwrap().is_empty(), "once");

    let lost = laptop.board().runs().get_run(run.num()).unwrap();
    assert_eq!(lost.status, RunStatus::Lost);
    assert!(lost.error.as_deref().is_some_and(|e| e.contains("ghost")), "{:?}", lost.error);
    let back = laptop.board().tasks().get(&task.id).unwrap();
    assert!(back.task.assignee.is_none(), "handed back: {:?}", back.task);
    assert!(
        back.history.iter().any(|h| format!("{h:?}").contains("ghost")),
        "its history says why: {:?}",
        back.history
    );
}

#[test]
fn twelve_agents_over_three_machines_racing_for_four_tasks_each_win_one_once_every_round() {
    let url = Cluster::shared().database();
    let machines: Vec<_> = ["m1", "m2", "m3"].iter().map(|m| machine(&url, m)).collect();
    let board = |k: usize| machines[k % 3].1.board_db();
    for round in 0..10 {
        for i in 0..4 {
            let new = NewTask { title: format!("round {round} task {i}"), ..Default::default() };
            Board::new(&*board(0)).tasks().create(&Actor::person("pat"), &new).unwrap();
        }
        let barrier = std::sync::Barrier::new(12);
        let won: Vec<String> = std::thread::scope(|s| {
            let racers: Vec<_> = (0..12)
                .map(|k| {
                    let (db, barrier) = (board(k), &barrier);
                    s.spawn(move || {
                        let who = Identity {
                            id: format!("mcp:r{round}a{k}"),
                            kind: AgentKind::Mcp,
                            mcp_session: None,
                            project: None,
                        };
                        let me = Actor { who, lease_ms: Some(60_000) };
                        barrier.wait();
                        match Board::new(&*db)
                            .tasks()
                            .claim(&me, &tasks::ClaimTarget::Next { role: None, project: None })
                        {
                            Ok(t) => Some(t.id),
                            Err(e) if e.code() == tether_core::ErrorCode::NothingToClaim => None,
                            Err(e) => panic!("round {round}, agent {k}: {e}"),
                        }
                    })
                })
                .collect();
            racers.into_iter().filter_map(|r| r.join().unwrap()).collect()
        });
        let mut distinct = won.clone();
        distinct.sort();
        distinct.dedup();
        assert_eq!((won.len(), distinct.len()), (4, 4), "round {round}: {won:?}");
    }
}

#[test]
fn a_client_certificate_given_at_join_is_kept_as_a_secret_and_signs_in_after_a_restart() {
    let cluster = Cluster::start_tls();
    cluster.psql("postgres", &format!("CREATE DATABASE team OWNER {CERT_USER}"));
    let ca = cluster.ca_file();
    let url = format!(
        "postgres://{CERT_USER}@127.0.0.1:{}/team?sslmode=verify-full&sslrootcert={}",
        cluster.port,
        ca.display()
    );
    let (crt, key) = cluster.client_cert_files(false);
    let (cert, key) = (std::fs::read_to_string(crt).unwrap(), std::fs::read_to_string(key).unwrap());
    let d = tempfile::tempdir().unwrap();
    let open = || Tether::open(Paths::at(d.path()), CursorLocations::explicit(None, None)).unwrap();
    let pat = Principal::person("pat");
    {
        let t = open();
        token::set_backend(&t.paths, Backend::File).unwrap();
        let bad = Join { url: url.clone(), client_cert: Some("not a certificate".into()), ..Default::default() };
        let e = team::join(&t, &pat, bad).unwrap_err();
        assert_eq!(e.code().as_str(), "invalid_input", "{e}");
        let none = team::join(&t, &pat, Join { url: url.clone(), ..Default::default() }).unwrap_err();
        assert_eq!(none.code().as_str(), "forbidden", "without it pg_hba says no: {none}");
        let join = Join { url: url.clone(), client_cert: Some(cert), client_key: Some(key), ..Default::default() };
        assert!(team::join(&t, &pat, join).unwrap().reachable);
    }
    // Kept where the password goes (here the 0600 file store), never beside the team's address.
    let team_json = std::fs::read_to_string(d.path().join("team.json")).unwrap();
    assert!(!team_json.contains("PRIVATE KEY") && !team_json.contains("CERTIFICATE"), "{team_json}");
    // Opened again (the daemon restarting), the board is back on the team database through it.
    let t = open();
    let s = team::status(&t).unwrap();
    assert!(s.reachable, "{:?}", s.error);
    assert!(t.in_team());
    team::leave(&t, &pat).unwrap();
    assert_eq!(token::team_identity(&t.paths).unwrap(), None, "leaving forgets it");
}
