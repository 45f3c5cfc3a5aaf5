use std::sync::{Arc, Barrier};

use tether_board::agents::{AgentKind, Identity};
use tether_board::tasks::{self, Actor, ClaimTarget, NewTask, Status, TaskChange, TaskFilter};
use tether_core::sql::Database;
use tether_core::{Board, ErrorCode};
use tether_testkit::pg::board_engines;

fn agent(id: &str, lease_ms: i64) -> Actor {
    Actor {
        who: Identity { id: id.into(), kind: AgentKind::Mcp, mcp_session: None, project: None },
        lease_ms: Some(lease_ms),
    }
}

fn new(title: &str) -> NewTask {
    NewTask { title: title.into(), ..NewTask::default() }
}

#[test]
fn lifecycle_with_handoff_and_history() {
    for e in &board_engines() {
        eprintln!("on {}", e.name);
        let s: &dyn Database = &**e;
        let alice = Actor::person("alice");
        let a = agent("mcp:a", tasks::DEFAULT_LEASE_MS);
        let b = agent("mcp:b", tasks::DEFAULT_LEASE_MS);
        let t = Board::new(&s)
            .tasks()
            .create(
                &alice,
                &NewTask {
                    title: "Write the parser".into(),
                    priority: Some("high".into()),
                    labels: vec!["core".into(), "core".into()],
                    acceptance: vec!["parses every era".into()],
                    ..new("")
                },
            )
            .unwrap();
        assert_eq!((t.id.as_str(), t.status, t.priority), ("T-1", Status::Todo, "high"));
        assert_eq!(t.labels, ["core"]);

        let c = Board::new(&s).tasks().claim(&a, &ClaimTarget::Id("t-1".into())).unwrap();
        let a_name = Board::new(&s).agents().get("mcp:a").unwrap().name;
        assert_eq!(c.status, Status::InProgress);
        assert_eq!(c.assignee.as_deref(), Some(a_name.as_str()));
        assert!(c.lease_until.is_some());

        let held = Board::new(&s).tasks().claim(&b, &ClaimTarget::Id("T-1".into())).unwrap_err();
        assert_eq!(held.code(), ErrorCode::TaskHeld);
        assert!(held.to_string().contains(&a_name), "{held}");
        let edit = Board::new(&s).tasks().update(
            &b,
            "T-1",
            &TaskChange { title: Some("mine now".into()), ..Default::default() },
        );
        assert_eq!(edit.unwrap_err().code(), ErrorCode::TaskHeld);
        // Comments are always allowed.
        Board::new(&s)
            .tasks()
            .update(&b, "T-1", &TaskChange { comment: Some("I can help with eras".into()), ..Default::default() })
            .unwrap();

        // Hand off: a releases with a note; b claims and completes.
        let r = Board::new(&s)
            .tasks()
            .update(
                &a,
                "T-1",
                &TaskChange {
                    release: true,
                    comment: Some("lexical done, CLI left".into()),
                    handoff: true,
                    ..Default::default()
                },
            )
            .unwrap();
        assert_eq!((r.status, r.assignee.as_deref()), (Status::Todo, None));
        Board::new(&s).tasks().claim(&b, &ClaimTarget::Next { role: None, project: None }).unwrap();
        let done = Board::new(&s)
            .tasks()
            .update(&b, "T-1", &TaskChange { summary: Some("all eras parsed".into()), ..Default::default() })
            .unwrap();
        assert_eq!(done.status, Status::Done);
        assert_eq!(done.summary.as_deref(), Some("all eras parsed"));

        let d = Board::new(&s).tasks().get("T-1").unwrap();
        let kinds: Vec<&str> = d.history.iter().map(|e| e.kind.as_str()).collect();
        assert_eq!(kinds, ["created", "claimed", "comment", "released", "handoff", "claimed", "completed"]);
        assert_eq!(d.notes.len(), 2);
        assert_eq!(d.notes[1].detail["text"], "lexical done, CLI left");
        assert_eq!(d.history[0].actor, "alice");

        // History is append-only, even for someone with SQL access.
        assert!(s.append(|db| db.execute("UPDATE task_events SET actor = 'mallory'", &[])).is_err());
        assert!(s.append(|db| db.execute("DELETE FROM task_events", &[])).is_err());
    }
}

#[test]
fn illegal_transitions_cycles_and_unknown_ids_are_clear_errors_and_write_nothing() {
    for e in &board_engines() {
        eprintln!("on {}", e.name);
        let s: &dyn Database = &**e;
        let p = Actor::person("pat");
        for t in ["a", "b", "c"] {
            Board::new(&s).tasks().create(&p, &new(t)).unwrap();
        }
        let rev = Board::new(&s).tasks().revision().unwrap();
        let e = Board::new(&s)
            .tasks()
            .update(&p, "T-1", &TaskChange { status: Some(Status::InReview), ..Default::default() })
            .unwrap_err();
        assert_eq!(e.code(), ErrorCode::IllegalTransition);
        assert!(e.to_string().contains("todo to in_review"), "{e}");

        Board::new(&s)
            .tasks()
            .update(&p, "T-2", &TaskChange { add_deps: vec!["T-1".into()], ..Default::default() })
            .unwrap();
        Board::new(&s)
            .tasks()
            .update(&p, "T-3", &TaskChange { add_deps: vec!["T-2".into()], ..Default::default() })
            .unwrap();
        let rev = rev + 2;
        let e = Board::new(&s)
            .tasks()
            .update(
                &p,
                "T-1",
                &TaskChange { add_deps: vec!["T-3".into()], title: Some("renamed".into()), ..Default::default() },
            )
            .unwrap_err();
        assert_eq!(e.code(), ErrorCode::DependencyCycle);
        assert!(e.to_string().contains("T-1 → T-3 → T-2 → T-1"), "{e}");
        assert_eq!(Board::new(&s).tasks().get("T-1").unwrap().task.title, "a", "nothing half-written");
        assert_eq!(Board::new(&s).tasks().revision().unwrap(), rev);

        let e = Board::new(&s).tasks().update(&p, "T-99", &TaskChange::default()).unwrap_err();
        assert_eq!(e.code(), ErrorCode::NotFound);
        let e =
            Board::new(&s).tasks().create(&p, &NewTask { depends_on: vec!["T-42".into()], ..new("x") }).unwrap_err();
        assert_eq!(e.code(), ErrorCode::NotFound);
        assert!(Board::new(&s).tasks().get("T-4").is_err(), "the failed create left no task behind");
        // The failed create still used no number: the next task is T-4.
        assert_eq!(Board::new(&s).tasks().create(&p, &new("d")).unwrap().id, "T-4");
    }
}

#[test]
fn dependencies_block_claims_and_claim_next_picks_the_best() {
    for e in &board_engines() {
        eprintln!("on {}", e.name);
        let s: &dyn Database = &**e;
        let p = Actor::person("pat");
        let base = Board::new(&s).tasks().create(&p, &NewTask { priority: Some("low".into()), ..new("base") }).unwrap();
        Board::new(&s)
            .tasks()
            .create(
                &p,
                &NewTask { priority: Some("critical".into()), depends_on: vec![base.id.clone()], ..new("blocked") },
            )
            .unwrap();
        Board::new(&s)
            .tasks()
            .create(&p, &NewTask { priority: Some("high".into()), role: Some("tester".into()), ..new("tests") })
            .unwrap();
        Board::new(&s).tasks().create(&p, &NewTask { priority: Some("high".into()), ..new("any role") }).unwrap();
        Board::new(&s)
            .tasks()
            .create(&p, &NewTask { priority: Some("high".into()), role: Some("dev".into()), ..new("dev work") })
            .unwrap();

        let e = Board::new(&s).tasks().claim(&agent("mcp:x", 60_000), &ClaimTarget::Id("T-2".into())).unwrap_err();
        assert_eq!(e.code(), ErrorCode::DependenciesOpen);
        assert!(e.to_string().contains("T-1"));

        let next = |who: &str, role: Option<&str>| {
            Board::new(&s)
                .tasks()
                .claim(&agent(who, 60_000), &ClaimTarget::Next { role: role.map(Into::into), project: None })
        };
        // A dev gets high-priority dev work before role-less work, and never the tester's task.
        assert_eq!(next("mcp:d1", Some("dev")).unwrap().title, "dev work");
        assert_eq!(next("mcp:d2", Some("dev")).unwrap().title, "any role");
        assert_eq!(next("mcp:d3", Some("dev")).unwrap().title, "base");
        assert_eq!(next("mcp:d4", Some("dev")).unwrap_err().code(), ErrorCode::NothingToClaim);
        // Finishing the dependency frees the critical task.
        Board::new(&s)
            .tasks()
            .update(&agent("mcp:d3", 60_000), "T-1", &TaskChange { status: Some(Status::Done), ..Default::default() })
            .unwrap();
        assert_eq!(next("mcp:d4", Some("dev")).unwrap().title, "blocked");
        assert_eq!(next("mcp:t1", Some("tester")).unwrap().title, "tests");
    }
}

#[test]
fn an_expired_lease_frees_the_task_and_activity_renews_it() {
    for e in &board_engines() {
        eprintln!("on {}", e.name);
        let s: &dyn Database = &**e;
        Board::new(&s).tasks().create(&Actor::person("pat"), &new("flaky")).unwrap();
        let crashed = agent("mcp:crashed", 1);
        Board::new(&s).tasks().claim(&crashed, &ClaimTarget::Id("T-1".into())).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let listed = Board::new(&s).tasks().list(&TaskFilter { ready: true, ..Default::default() }).unwrap();
        assert!(listed[0].lease_expired);
        let t = Board::new(&s)
            .tasks()
            .claim(&agent("mcp:rescuer", 60_000), &ClaimTarget::Next { role: None, project: None })
            .unwrap();
        assert!(!t.lease_expired);
        let kinds: Vec<String> =
            Board::new(&s).tasks().get("T-1").unwrap().history.into_iter().map(|e| e.kind).collect();
        assert!(kinds.contains(&"lease_expired".to_owned()), "{kinds:?}");
        // The crashed agent lost it for good.
        let e = Board::new(&s).tasks().update(
            &crashed,
            "T-1",
            &TaskChange { status: Some(Status::Done), ..Default::default() },
        );
        assert_eq!(e.unwrap_err().code(), ErrorCode::TaskHeld);

        let before = Board::new(&s).tasks().get("T-1").unwrap().task.lease_until.unwrap();
        std::thread::sleep(std::time::Duration::from_millis(5));
        assert_eq!(Board::new(&s).tasks().renew_leases("mcp:rescuer", 120_000).unwrap(), 1);
        assert!(Board::new(&s).tasks().get("T-1").unwrap().task.lease_until.unwrap() > before);
    }
}

#[test]
fn fifty_threads_with_their_own_connections_never_double_claim() {
    for e in &board_engines() {
        eprintln!("on {}", e.name);
        let s: &dyn Database = &**e;
        for round in 0..3 {
            for i in 0..10 {
                Board::new(&s).tasks().create(&Actor::person("pat"), &new(&format!("r{round} t{i}"))).unwrap();
            }
            let barrier = Arc::new(Barrier::new(50));
            let handles: Vec<_> = (0..50)
                .map(|k| {
                    let other = e.connect();
                    let barrier = Arc::clone(&barrier);
                    std::thread::spawn(move || {
                        let s = &*other;
                        let me = agent(&format!("mcp:r{round}c{k}"), 600_000);
                        barrier.wait();
                        Board::new(&s)
                            .tasks()
                            .claim(&me, &ClaimTarget::Next { role: None, project: None })
                            .map(|t| t.id)
                    })
                })
                .collect();
            let mut won = Vec::new();
            for h in handles {
                match h.join().unwrap() {
                    Ok(id) => won.push(id),
                    Err(e) => assert_eq!(e.code(), ErrorCode::NothingToClaim, "{e}"),
                }
            }
            won.sort();
            let before = won.len();
            won.dedup();
            assert_eq!((before, won.len()), (10, 10), "round {round}: every task claimed exactly once");
            for id in &won {
                let claims =
                    Board::new(&s).tasks().get(id).unwrap().history.iter().filter(|e| e.kind == "claimed").count();
                assert_eq!(claims, 1, "{id}");
            }
        }
    }
}

#[test]
fn agents_get_memorable_unique_names_and_live_status() {
    for e in &board_engines() {
        eprintln!("on {}", e.name);
        let s: &dyn Database = &**e;
        let who =
            Identity { id: "conv-1".into(), kind: AgentKind::Cursor, mcp_session: Some("m1".into()), project: None };
        let a = Board::new(&s).agents().start(&who, Some("dev"), None).unwrap();
        assert!(a.name.contains('-'), "{}", a.name);
        assert_eq!(a.role.as_deref(), Some("dev"));
        let other = Identity { id: "conv-2".into(), ..who.clone() };
        let e = Board::new(&s).agents().start(&other, None, Some(&a.name)).unwrap_err();
        assert_eq!(e.code(), ErrorCode::Conflict);
        let b = Board::new(&s).agents().start(&other, Some("tester"), Some("ada")).unwrap();
        assert_eq!(b.name, "ada");
        Board::new(&s).tasks().create(&Actor::person("pat"), &new("x")).unwrap();
        Board::new(&s)
            .tasks()
            .claim(&Actor { who: other.clone(), lease_ms: Some(60_000) }, &ClaimTarget::Id("T-1".into()))
            .unwrap();
        let listed = Board::new(&s).agents().list().unwrap();
        let ada = listed.iter().find(|a| a.name == "ada").unwrap();
        assert_eq!(ada.tasks, ["T-1"]);
        assert_eq!(ada.status, "working");
        // Renaming keeps the held task's assignee in step.
        Board::new(&s).agents().start(&other, None, Some("ada2")).unwrap();
        assert_eq!(Board::new(&s).tasks().get("T-1").unwrap().task.assignee.as_deref(), Some("ada2"));
    }
}
