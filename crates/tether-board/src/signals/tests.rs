//! Sending, resolving, draining, obligations and wake telemetry, on each engine.
use tether_store::sql::Database;
use tether_testkit::pg::board_engines;

use super::*;
use crate::agents;
use crate::agents::{AgentKind, Identity};

fn agent(id: &str) -> Identity {
    Identity { id: id.into(), kind: AgentKind::Mcp, mcp_session: Some(format!("sess-{id}")), project: None }
}

fn ask(to: &str, body: &str) -> NewSignal {
    NewSignal { to: Some(to.into()), kind: Some("question".into()), body: body.into(), ..Default::default() }
}

#[test]
fn question_reply_and_drain_close_the_right_obligations() {
    for e in &board_engines() {
        eprintln!("on {}", e.name);
        let s: &dyn Database = &**e;
        let a = agents::start(&s, &agent("a"), Some("dev"), Some("ana")).unwrap();
        agents::start(&s, &agent("b"), Some("reviewer"), Some("bo")).unwrap();
        let q = send(&s, &Sender::Agent(agent("a")), &ask("bo", "is the parser done?")).unwrap();
        assert_eq!((q.from.as_str(), q.to.as_str(), q.reply_required), ("ana", "bo", true));
        assert_eq!(q.deliveries[0].obligation, "open");

        let got = drain(&s, &Recipient::Agent("b".into())).unwrap();
        assert_eq!(got.iter().map(|g| g.id.as_str()).collect::<Vec<_>>(), vec![q.id.as_str()]);
        assert!(drain(&s, &Recipient::Agent("b".into())).unwrap().is_empty(), "drained once");
        // A question stays open after the drain, until its answer.
        assert_eq!(get(&s, &q.id).unwrap().signal.deliveries[0].obligation, "open");

        let reply = NewSignal { reply_to: Some(q.id.clone()), body: "yes".into(), ..Default::default() };
        let r = send(&s, &Sender::Agent(agent("b")), &reply).unwrap();
        assert_eq!(
            (r.to.as_str(), r.kind, r.trace_id.as_str()),
            ("ana", SignalType::Acknowledgment, q.trace_id.as_str())
        );
        let q2 = get(&s, &q.id).unwrap().signal;
        assert_eq!((q2.deliveries[0].obligation.as_str(), q2.answered_by.as_deref()), ("closed", Some(r.id.as_str())));

        // An acknowledgment closes when drained.
        assert_eq!(r.deliveries[0].obligation, "open");
        drain(&s, &Recipient::Agent(a.id)).unwrap();
        assert_eq!(get(&s, &r.id).unwrap().signal.deliveries[0].obligation, "closed");
    }
}

#[test]
fn bad_input_is_refused_and_writes_nothing() {
    for e in &board_engines() {
        eprintln!("on {}", e.name);
        let s: &dyn Database = &**e;
        agents::start(&s, &agent("a"), None, Some("ana")).unwrap();
        let me = Sender::Agent(agent("a"));
        let code = |n: NewSignal| send(&s, &me, &n).unwrap_err().code();
        use crate::error::ErrorCode as C;
        assert_eq!(code(ask("nobody", "hi")), C::NotFound);
        assert_eq!(code(NewSignal { kind: Some("gossip".into()), ..ask("ana", "hi") }), C::InvalidInput);
        assert_eq!(code(ask("ana", &"x".repeat(MAX_BODY_BYTES + 1))), C::InvalidInput);
        assert_eq!(code(ask("ana", "  ")), C::InvalidInput);
        assert_eq!(code(NewSignal { reply_to: Some("S-99".into()), ..ask("ana", "hi") }), C::NotFound);
        assert_eq!(code(NewSignal { task: Some("T-9".into()), ..ask("ana", "hi") }), C::NotFound);
        assert_eq!(code(NewSignal { action_required: Some(false), ..ask("ana", "hi") }), C::InvalidInput);
        assert!(list(&s, &SignalFilter::default()).unwrap().is_empty());
        assert_eq!(revision(&s).unwrap(), 0);
    }
}

#[test]
fn a_role_reaches_every_live_agent_with_it_but_the_sender() {
    for e in &board_engines() {
        eprintln!("on {}", e.name);
        let s: &dyn Database = &**e;
        for (id, name) in [("a", "ana"), ("b", "bo"), ("c", "cy")] {
            agents::start(&s, &agent(id), Some("reviewer"), Some(name)).unwrap();
        }
        let sig = send(&s, &Sender::Agent(agent("a")), &ask("reviewer", "please look at T-1")).unwrap();
        assert_eq!(sig.to, "role:reviewer");
        let names: Vec<&str> = sig.deliveries.iter().map(|d| d.recipient.as_str()).collect();
        assert_eq!(names, vec!["bo", "cy"]);
        // Every agent joining announced itself to those already there; none of that rings.
        assert!(unrung(&s).unwrap().iter().filter(|r| r.kind.is_system()).count() >= 3);
    }
}

#[test]
fn the_stop_hook_asks_once_per_drain_cycle() {
    for e in &board_engines() {
        eprintln!("on {}", e.name);
        let s: &dyn Database = &**e;
        let chat = Identity { id: "conv-1".into(), kind: AgentKind::Cursor, mcp_session: None, project: None };
        agents::start(&s, &chat, None, Some("chatty")).unwrap();
        assert_eq!(stop_hook(&s, "conv-1", 0, Some("completed")).unwrap(), None, "nothing pending");
        send(&s, &Sender::Human, &ask("chatty", "status?")).unwrap();
        let msg = stop_hook(&s, "conv-1", 0, Some("completed")).unwrap().expect("asks to drain");
        assert!(msg.contains("1 signal (question)") && !msg.contains("status?"), "{msg}");
        assert_eq!(stop_hook(&s, "conv-1", 0, Some("completed")).unwrap(), None, "once per cycle");
        drain(&s, &Recipient::Agent("conv-1".into())).unwrap();
        send(&s, &Sender::Human, &ask("chatty", "and now?")).unwrap();
        assert_eq!(stop_hook(&s, "conv-1", HOOK_LOOP_LIMIT, Some("completed")).unwrap(), None, "loop limit");
        assert_eq!(stop_hook(&s, "conv-1", 0, Some("aborted")).unwrap(), None, "aborted turn");
        assert!(stop_hook(&s, "conv-1", 1, None).unwrap().is_some(), "a new cycle asks again");
        let q = list(&s, &SignalFilter { to: Some("chatty".into()), ..Default::default() }).unwrap();
        assert_eq!(q[0].deliveries[0].last_wake_path.as_deref(), Some("hook"));
    }
}
