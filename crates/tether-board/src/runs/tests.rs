//! The queue, the log, placements and recovery, on each engine.
use tether_store::sql::Database;
use tether_testkit::pg::board_engines;

use super::event::{RunEvent, Usage};
use super::finish::finish;
use super::placements::*;
use super::recover::*;
use super::*;

fn valid(prompt: &str, ws: &str) -> ValidRun {
    ValidRun {
        prompt: prompt.into(),
        task: None,
        workspace: ws.into(),
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
fn the_queue_respects_both_limits_and_order() {
    for e in &board_engines() {
        eprintln!("on {}", e.name);
        let s: &dyn Database = &**e;
        for (p, ws) in [("a", "/w1"), ("b", "/w1"), ("c", "/w2"), ("d", "/w3")] {
            create(&s, "me", &valid(p, ws)).unwrap();
        }
        let limits = Limits { total: 2, per_workspace: 1, per_repo: 3, cloud: 2, ..Limits::default() };
        let first = claim_next(&s, 1, &limits).unwrap().unwrap();
        let second = claim_next(&s, 1, &limits).unwrap().unwrap();
        assert_eq!((first.prompt.as_str(), second.prompt.as_str()), ("a", "c"), "b waits for /w1");
        assert!(claim_next(&s, 1, &limits).unwrap().is_none(), "two in all");
        finish(&s, first.num(), &Outcome { status: RunStatus::Succeeded, exit_code: Some(0), ..Default::default() })
            .unwrap();
        assert_eq!(claim_next(&s, 1, &limits).unwrap().unwrap().prompt, "b");
    }
}

#[test]
fn the_door_finds_a_run_by_its_number_its_typed_id_or_its_spelling() {
    for e in &board_engines() {
        eprintln!("on {}", e.name);
        let board = crate::Board::new(&**e);
        let runs = board.runs();
        let r = runs.create("me", &valid("go", "/w")).unwrap();
        let id = crate::ids::RunId::new(r.num());
        for found in [runs.get_run(id), runs.get_run(r.num()), runs.get_run(r.id.as_str()), runs.get_run("r-1")] {
            assert_eq!(found.unwrap().id, r.id);
        }
        let missing = runs.get_run(crate::ids::RunId::new(99)).unwrap_err();
        assert_eq!(missing.code(), crate::error::ErrorCode::NotFound, "{missing}");
    }
}

#[test]
fn events_carry_the_chat_and_the_result_and_cancel_is_exactly_once() {
    for e in &board_engines() {
        eprintln!("on {}", e.name);
        let s: &dyn Database = &**e;
        let r = create(&s, "me", &valid("go", "/w")).unwrap();
        claim_next(&s, 7, &Limits { total: 3, per_workspace: 1, per_repo: 3, cloud: 2, ..Limits::default() }).unwrap();
        let ev = append_events(
            &s,
            r.num(),
            &[
                RunEvent::Init { session_id: "chat-1".into(), model: None, cwd: None },
                RunEvent::Result {
                    is_error: false,
                    text: "all done".into(),
                    duration_ms: Some(5),
                    duration_api_ms: Some(4),
                    usage: Some(Usage { input_tokens: 10, output_tokens: 2, ..Default::default() }),
                },
            ],
        )
        .unwrap();
        assert_eq!(ev.iter().map(|e| e.seq).collect::<Vec<_>>(), vec![3, 4], "after queued and running");
        let got = get_run(&s, r.num()).unwrap();
        assert_eq!((got.chat_id.as_deref(), got.result.as_deref()), (Some("chat-1"), Some("all done")));
        assert_eq!(got.usage.unwrap().input_tokens, 10);
        assert_eq!(cancel_requested(&s, 7).unwrap(), Vec::<i64>::new());
        request_cancel(&s, &r.id).unwrap();
        assert_eq!(cancel_requested(&s, 7).unwrap(), vec![r.num()]);
        finish(&s, r.num(), &Outcome { status: RunStatus::Cancelled, ..Default::default() }).unwrap();
        finish(&s, r.num(), &Outcome { status: RunStatus::Succeeded, ..Default::default() }).unwrap();
        assert_eq!(get_run(&s, r.num()).unwrap().status, RunStatus::Cancelled, "the first ending stands");
        assert_eq!(request_cancel(&s, &r.id).unwrap_err().code(), crate::error::ErrorCode::Conflict);
    }
}

#[test]
fn a_dead_runner_leaves_lost_runs_and_files_to_restore() {
    for e in &board_engines() {
        eprintln!("on {}", e.name);
        let s: &dyn Database = &**e;
        let r = create(&s, "me", &valid("go", "/w")).unwrap();
        claim_next(&s, 4242, &Limits { total: 3, per_workspace: 1, per_repo: 3, cloud: 2, ..Limits::default() })
            .unwrap();
        set_child(&s, r.num(), 999, Some(12)).unwrap();
        let f = PlacedFile {
            run: r.num(),
            path: "/w/.cursor/cli.json".into(),
            original: Some(b"mine".to_vec()),
            placed: b"run".to_vec(),
            ..PlacedFile::default()
        };
        record_placement(&s, &f).unwrap();
        assert!(orphaned_placements(&s).unwrap().is_empty(), "its run still runs");
        let lost = mark_lost(&s, |pid| pid != 4242).unwrap();
        assert_eq!(lost, vec![Orphan { num: r.num(), child_pid: Some(999), child_started: Some(12) }]);
        assert_eq!(get_run(&s, r.num()).unwrap().status, RunStatus::Lost);
        assert_eq!(orphaned_placements(&s).unwrap(), vec![r.num()]);
        let back = take_restores(&s, r.num()).unwrap();
        assert_eq!(back, vec![PlacedFile { workspace: Some("/w".into()), ..f }]);
    }
}

/// Runs sharing a workspace share a placement: whichever order they end in, only the last one
/// out restores, and it restores the person's bytes (or their link) over the bytes on disk.
#[test]
fn overlapping_placements_are_counted_and_the_last_run_out_restores_the_persons_file() {
    let limits = Limits { total: 3, per_workspace: 3, per_repo: 3, cloud: 2, ..Limits::default() };
    for order in [[0, 1, 2], [2, 1, 0], [1, 2, 0]] {
        for e in &board_engines() {
            eprintln!("on {}", e.name);
            let s: &dyn Database = &**e;
            let runs: Vec<Run> = (0..3).map(|i| create(&s, "me", &valid(&format!("r{i}"), "/w")).unwrap()).collect();
            for _ in 0..3 {
                claim_next(&s, 1, &limits).unwrap().unwrap();
            }
            let path = "/w/.cursor/cli.json".to_owned();
            for (i, r) in runs.iter().enumerate() {
                // Each run reads what is on disk: the person's link first, then the earlier run's bytes.
                let (original, original_link) =
                    if i == 0 { (None, Some("/home/me/.ssh/key".to_owned())) } else { (Some(vec![i as u8]), None) };
                let f = PlacedFile {
                    run: r.num(),
                    path: path.clone(),
                    original,
                    original_link,
                    placed: vec![10 + i as u8],
                    workspace: None,
                };
                record_placement(&s, &f).unwrap();
            }
            for (n, i) in order.iter().enumerate() {
                let r = &runs[*i];
                let back = take_restores(&s, r.num()).unwrap();
                finish(&s, r.num(), &Outcome { status: RunStatus::Succeeded, ..Default::default() }).unwrap();
                if n < 2 {
                    assert!(back.is_empty(), "{order:?}: run {i} ended while others still run");
                    continue;
                }
                assert_eq!(back.len(), 1, "{order:?}");
                let last = &back[0];
                assert_eq!(last.original_link.as_deref(), Some("/home/me/.ssh/key"), "the person's link, {order:?}");
                assert_eq!(last.original, None);
                assert_eq!(last.placed, vec![12], "what is on disk: the last placement, {order:?}");
            }
        }
    }
}

#[test]
fn a_run_over_budget_holds_its_follow_ups_and_its_tasks_next_run_until_approved() {
    for e in &board_engines() {
        eprintln!("on {}", e.name);
        let s: &dyn Database = &**e;
        let actor = crate::principal::Actor::person("pat");
        let task = crate::tasks::create(&s, &actor, &crate::tasks::NewTask { title: "t".into(), ..Default::default() })
            .unwrap();
        let num = crate::tasks::parse_id(&task.id).unwrap();
        let limits = Limits { total: 3, per_workspace: 3, per_repo: 3, cloud: 2, ..Limits::default() };
        let first = create(&s, "me", &ValidRun { task: Some(num), ..valid("a", "/w") }).unwrap();
        claim_next(&s, 1, &limits).unwrap();
        finish(
            &s,
            first.num(),
            &Outcome { status: RunStatus::OverBudget, error: Some("went over".into()), ..Default::default() },
        )
        .unwrap();
        let next = create(&s, "me", &ValidRun { task: Some(num), ..valid("b", "/w") }).unwrap();
        let follow = create(&s, "me", &ValidRun { parent: Some(first.num()), ..valid("c", "/w") }).unwrap();
        let other = create(&s, "me", &valid("d", "/w")).unwrap();
        assert_eq!((next.held.as_deref(), follow.held.as_deref(), other.held), (Some("budget"), Some("budget"), None));
        assert_eq!(claim_next(&s, 1, &limits).unwrap().unwrap().id, other.id, "only the unrelated run goes");
        approve(&s, &next.id).unwrap();
        assert!(get_run(&s, first.num()).unwrap().budget_allowed, "the person let the chain go on");
        assert_eq!(get_run(&s, follow.num()).unwrap().held, None, "what the same run held goes too");
    }
}
