//! Waking an idle Cursor CLI chat by a follow-up run. No doorbell reaches a chat that is not
//! running; a chat Tether ran can be continued (`--resume`). When an agent that is such a chain
//! of runs has signals waiting, nothing of it is queued or running, and the person opted in for
//! it, its signals are drained into the prompt of a follow-up run of its chat (wake path
//! `resume`). When that run succeeds, its result answers each carried signal that wants a reply
//! and is still unanswered (the agent may have replied itself through Tether's MCP tools).
//! Bounded per agent and hour.
//!
//! Board only: tether-runs runs what this queues; no processes or hosts here.

use tether_store::sql::{Sql, SqlExt};
use tether_store::values;

use super::agents::{self, Agent};
use super::runs::{self, Run, RunStatus};
use super::signals::{self, NewSignal, Sender, Wake, WakePath, WakeResult};
use crate::clock::now_ms;
use crate::error::{Error, Result};
use crate::principal::AgentKind;
use tether_store::sql::Database;

/// Wakes per agent and hour unless the settings say otherwise.
pub const DEFAULT_PER_HOUR: u32 = 4;

const HOUR_MS: i64 = 60 * 60 * 1000;

/// Who sends a waking run's prompt and its queue entry.
const REQUESTED_BY: &str = "tether (wake by resume)";

/// Turns waking by resume on or off for an agent (by name or id). Only a chain of runs (a
/// Cursor CLI chat Tether ran) can be resumed.
pub(crate) fn set(store: &dyn Database, agent: &str, on: bool) -> Result<Agent> {
    let a = agents::get(store, agent)?;
    if on && a.kind != AgentKind::Run {
        return Err(Error::invalid(
            "wake by resume",
            format!("{} is not a Cursor CLI chat that Tether ran; only those can be resumed", a.name),
        ));
    }
    store.durable(|txn| {
        Sql::execute(txn, "UPDATE agents SET wake_by_resume = ?2 WHERE id = ?1", values![a.id, on])?;
        Ok(())
    })?;
    agents::get(store, &a.id)
}

/// An agent is due when it opted in, is not ended, has signals waiting (not system notices), no
/// run of its chain is queued or running, its chain has a chat to resume, and it was woken fewer
/// than `?2` times since `?1`. The agent id is `run:R-<root>`.
const DUE: &str = "
    SELECT a.id FROM agents a
    WHERE a.wake_by_resume = 1 AND a.kind = 'run' AND a.ended_at IS NULL
      AND EXISTS (SELECT 1 FROM signal_deliveries d JOIN signals s ON s.num = d.signal
                  WHERE d.recipient = a.id AND d.drained_at IS NULL
                    AND s.type NOT IN ('peer_joined', 'peer_left', 'master_preempted'))
      AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.root = CAST(substr(a.id, 7) AS INTEGER)
                        AND r.status IN ('queued', 'running'))
      AND EXISTS (SELECT 1 FROM runs r WHERE r.root = CAST(substr(a.id, 7) AS INTEGER) AND r.chat_id IS NOT NULL)
      AND (SELECT count(DISTINCT rs.run) FROM run_signals rs JOIN runs r ON r.num = rs.run
           WHERE r.root = CAST(substr(a.id, 7) AS INTEGER) AND r.created_at > ?1) < ?2";

/// The agents to wake now, each at most once.
pub(crate) fn due(store: &dyn Database, per_hour: u32) -> Result<Vec<String>> {
    store.read(|c| {
        SqlExt::query_map(c, &format!("{DUE} ORDER BY a.id"), values![now_ms() - HOUR_MS, per_hour], |r| r.get(0))
    })
}

/// What bounds a wake: how often per agent and hour, and which senders outside this machine
/// may cause one that writes or runs commands without the person's approval.
#[derive(Debug, Clone)]
pub struct Policy {
    pub per_hour: u32,
    pub allow_remote: Vec<String>,
}

impl Default for Policy {
    fn default() -> Self {
        Self { per_hour: DEFAULT_PER_HOUR, allow_remote: Vec::new() }
    }
}

/// Queues the follow-up run that wakes `agent` with its waiting signals, draining them in the
/// same transaction (so no other reader gets them too). `None`: it is not due (any more).
///
/// A wake acts on the signals' words with the chain's permissions. When any carried signal came
/// from outside this machine (and its sender is not allowed by the person) and those permissions
/// allow writes or commands, the run is queued held (`approval`): it starts only once the person
/// approves it.
pub(crate) fn wake(store: &dyn Database, agent: &str, policy: &Policy) -> Result<Option<Run>> {
    let per_hour = policy.per_hour;
    let num = store.durable(|txn| {
        let db: &dyn Sql = txn;
        let now = now_ms();
        let due = db
            .query_opt(&format!("{DUE} AND a.id = ?3"), values![now - HOUR_MS, per_hour, agent], |_| Ok(()))?
            .is_some();
        if !due {
            return Ok(None);
        }
        let parent: i64 = db.query_row(
            "SELECT max(num) FROM runs WHERE root = CAST(substr(?1, 7) AS INTEGER) AND chat_id IS NOT NULL",
            values![agent],
            |r| r.get(0),
        )?;
        let parent = runs::load(db, parent)?;
        let nums: Vec<i64> = db.query_map(
            "SELECT d.signal FROM signal_deliveries d JOIN signals s ON s.num = d.signal
             WHERE d.recipient = ?1 AND d.drained_at IS NULL
               AND s.type NOT IN ('peer_joined', 'peer_left', 'master_preempted')
             ORDER BY d.signal",
            values![agent],
            |r| r.get(0),
        )?;
        let carried = nums.iter().map(|n| signals::load(db, *n)).collect::<Result<Vec<_>>>()?;
        signals::drain_in(db, agent, &nums, now)?;
        for n in &nums {
            let w = Wake {
                signal: *n,
                recipient: agent.to_owned(),
                path: WakePath::Resume,
                result: WakeResult::Rang,
                mcp_session: None,
            };
            signals::record_in(db, &w, now)?;
        }
        let v = runs::followup_from(&parent, &prompt(&carried))?;
        let num = runs::insert_in(db, REQUESTED_BY, &v)?;
        // From outside the machine the chat runs on: a cloud agent's signal, or one a
        // teammate's machine wrote (its database session stamped it with that machine).
        let runs_on: Option<String> =
            db.query_row("SELECT coalesce(machine, target_machine) FROM runs WHERE num = ?1", values![num], |r| {
                r.get(0)
            })?;
        let outside = |s: &signals::Signal| s.remote || s.machine.as_ref().is_some_and(|m| Some(m) != runs_on.as_ref());
        let mut outsiders: Vec<String> = carried
            .iter()
            .filter(|s| outside(s) && !policy.allow_remote.iter().any(|a| a == &s.from))
            .map(|s| match &s.machine {
                Some(m) if !s.remote => format!("{} on {m}", s.from),
                _ => s.from.clone(),
            })
            .collect();
        outsiders.dedup();
        // Where the wake comes from decides at the machine that takes it (`runs::trust`): this
        // machine's own when every signal is, else the first outside machine's.
        let origin = carried.iter().find(|s| outside(s)).and_then(|s| s.machine.clone()).or(runs_on.clone());
        db.execute("UPDATE runs SET origin = ?2 WHERE num = ?1", values![num, origin])?;
        if !outsiders.is_empty() && v.permissions.allows_writes() {
            let why = format!(
                "held for your approval: signals from {} (outside this machine) would wake chat {} with write or \
                 shell permissions; approve it in the Inbox or with `tether runs approve {}`, or cancel it",
                outsiders.join(", "),
                v.resume_chat.as_deref().unwrap_or("?"),
                runs::format_id(num)
            );
            runs::hold_in(db, num, "approval", &why)?;
        }
        for n in &nums {
            db.execute("INSERT INTO run_signals(run, signal) VALUES (?1, ?2)", values![num, n])?;
        }
        Ok(Some(num))
    })?;
    num.map(|n| runs::get_run(store, n)).transpose()
}

/// What a woken chat reads: each signal with who sent it and whether a reply is expected.
fn prompt(carried: &[signals::Signal]) -> String {
    let n = carried.len();
    let mut p = format!(
        "Tether resumed this chat because {n} signal{} arrived for you while it was idle. Act on {}.\n",
        if n == 1 { "" } else { "s" },
        if n == 1 { "it" } else { "them" }
    );
    for s in carried {
        let ask = if s.reply_required { " (a reply is expected)" } else { "" };
        p.push_str(&format!("\n## {} · {} from {}{ask}\n\n{}\n", s.id, s.kind, s.from, s.body.trim()));
    }
    if carried.iter().any(|s| s.reply_required) {
        p.push_str(
            "\nYour final answer is sent back as the reply to each signal that expects one, unless you \
             reply yourself with Tether's `signal_send` tool (with `reply_to`).\n",
        );
    }
    p
}

/// After a waking run ends: on success, its result answers each carried signal that expects a
/// reply and has none yet, from the run's agent.
pub(crate) fn answer_carried(store: &dyn Database, run: &Run) -> Result<()> {
    let body = run.result.as_deref().map(str::trim).unwrap_or("");
    if run.status != RunStatus::Succeeded || body.is_empty() {
        return Ok(());
    }
    let open: Vec<i64> = store.read(|c| {
        SqlExt::query_map(
            c,
            "SELECT s.num FROM run_signals rs JOIN signals s ON s.num = rs.signal
             WHERE rs.run = ?1 AND s.reply_required <> 0 AND s.answered_at IS NULL ORDER BY s.num",
            values![run.num()],
            |r| r.get(0),
        )
    })?;
    let body = clip(body, signals::MAX_BODY_BYTES - 64, &run.id);
    let from = Sender::Agent(runs::run_identity(run.root, run.workspace.as_deref()));
    for n in open {
        let new = NewSignal {
            reply_to: Some(signals::format_id(n)),
            kind: Some("status_update".into()),
            body: body.clone(),
            ..Default::default()
        };
        signals::send(store, &from, &new)?;
    }
    Ok(())
}

/// `text` cut to `max` bytes (on a character boundary), saying where the rest is.
fn clip(text: &str, max: usize, run: &str) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let note = format!("\n\n… (cut; the whole answer is in run {run})");
    let mut end = max.saturating_sub(note.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}{note}", &text[..end])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runs::event::RunEvent;
    use crate::runs::{Limits, Outcome, Permissions, RunMode, ValidRun};
    use tether_store::sql::Database;
    use tether_testkit::pg::board_engines;

    fn limits() -> Limits {
        Limits { total: 3, per_workspace: 1, per_repo: 3, cloud: 2, ..Limits::default() }
    }

    /// A run that ran to its end in chat `chat` (the chain's first run): its agent is `run R-1`.
    fn finished_run(s: &dyn Database, chat: &str) -> Run {
        finished_run_with(s, chat, Permissions::default())
    }

    fn finished_run_with(s: &dyn Database, chat: &str, permissions: Permissions) -> Run {
        let v = ValidRun {
            prompt: "build it".into(),
            task: None,
            workspace: "/w".into(),
            model: Some("m-1".into()),
            mode: RunMode::Agent,
            role: Some("backend".into()),
            timeout_ms: 90_000,
            permissions,
            complete: false,
            parent: None,
            resume_chat: None,
            cloud: None,
            isolation: Default::default(),
            budget: None,
            target: Default::default(),
        };
        let r = runs::create(s, "me", &v).unwrap();
        ran(s, &r, chat, "built");
        runs::get_run(s, r.num()).unwrap()
    }

    fn ran(s: &dyn Database, r: &Run, chat: &str, result: &str) -> Run {
        let claimed = runs::claim_next(s, 1, &limits()).unwrap().unwrap();
        assert_eq!(claimed.id, r.id);
        runs::append_events(
            s,
            r.num(),
            &[
                RunEvent::Init { session_id: chat.into(), model: None, cwd: None },
                RunEvent::Result {
                    is_error: false,
                    text: result.into(),
                    duration_ms: None,
                    duration_api_ms: None,
                    usage: None,
                },
            ],
        )
        .unwrap();
        crate::Board::new(s)
            .runs()
            .finish(r.num(), &Outcome { status: RunStatus::Succeeded, exit_code: Some(0), ..Default::default() })
            .unwrap()
    }

    fn ask(s: &dyn Database, to: &str, body: &str) -> signals::Signal {
        let new = NewSignal { to: Some(to.into()), body: body.into(), ..Default::default() };
        signals::send(s, &Sender::Human, &new).unwrap()
    }

    #[test]
    fn an_opted_in_idle_chat_is_resumed_with_its_signals_and_its_answer_goes_back() {
        for e in &board_engines() {
            eprintln!("on {}", e.name);
            let s: &dyn Database = &**e;
            let first = finished_run(&s, "chat-9");
            let agent = agents::get(&s, "run R-1").unwrap();
            assert_eq!((agent.kind, agent.status.as_str(), agent.wake_by_resume), (AgentKind::Run, "idle", false));
            let q = ask(&s, "run R-1", "Which port does the API use?");
            assert!(due(&s, 4).unwrap().is_empty(), "not opted in");

            let agent = set(&s, "run R-1", true).unwrap();
            assert_eq!((agent.wake_by_resume, agent.surface), (true, Some("resume")));
            assert_eq!(due(&s, 4).unwrap(), std::slice::from_ref(&agent.id));
            let woke = wake(&s, &agent.id, &Policy { per_hour: 4, ..Policy::default() }).unwrap().expect("queued");
            assert_eq!(woke.parent.as_deref(), Some(first.id.as_str()));
            assert_eq!(woke.resume_chat.as_deref(), Some("chat-9"), "continues the chat");
            assert_eq!((woke.workspace.as_deref(), woke.model.as_deref()), (Some("/w"), Some("m-1")));
            assert!(
                woke.prompt.contains("Which port does the API use?") && woke.prompt.contains(&q.id),
                "{}",
                woke.prompt
            );
            assert_eq!(runs::get(&s, &woke.id, None).unwrap().signals, std::slice::from_ref(&q.id));
            let d = &signals::get(&s, &q.id).unwrap();
            assert!(d.signal.deliveries[0].drained_at.is_some(), "drained into the prompt");
            assert_eq!(d.wakes.last().map(|w| w.path.as_str()), Some("resume"));
            assert!(
                wake(&s, &agent.id, &Policy { per_hour: 4, ..Policy::default() }).unwrap().is_none(),
                "nothing waits any more"
            );
            assert!(signals::pending(&s, &signals::Recipient::Agent(agent.id.clone())).unwrap().is_empty());

            // While the woken run goes, the chain is working; a new signal waits for it to end.
            ask(&s, "run R-1", "And the database?");
            assert!(due(&s, 4).unwrap().is_empty(), "its run is queued");
            let ended = ran(&s, &woke, "chat-9", "Port 8080.");
            assert_eq!(ended.status, RunStatus::Succeeded);
            let q = signals::get(&s, &q.id).unwrap().signal;
            assert!(q.answered_by.is_some(), "the result answered the question");
            let reply =
                signals::list(&s, &signals::SignalFilter { to: Some("human".into()), limit: 10, ..Default::default() })
                    .unwrap();
            assert_eq!((reply[0].from.as_str(), reply[0].body.as_str()), ("run R-1", "Port 8080."));
            assert_eq!(agents::get(&s, "run R-1").unwrap().status, "idle", "one agent for the whole chain");

            // The second question wakes it again; then the hourly bound holds.
            assert_eq!(due(&s, 2).unwrap(), std::slice::from_ref(&agent.id));
            let again = wake(&s, &agent.id, &Policy { per_hour: 2, ..Policy::default() }).unwrap().unwrap();
            ran(&s, &again, "chat-9", "Postgres.");
            ask(&s, "run R-1", "One more?");
            assert!(due(&s, 2).unwrap().is_empty(), "two wakes this hour");
            assert_eq!(due(&s, 3).unwrap().len(), 1);

            // Turned off: not woken.
            set(&s, "run R-1", false).unwrap();
            assert!(due(&s, 3).unwrap().is_empty());
        }
    }

    #[test]
    fn only_chains_of_runs_with_a_chat_are_woken_and_a_failed_wake_leaves_the_question_open() {
        for e in &board_engines() {
            eprintln!("on {}", e.name);
            let s: &dyn Database = &**e;
            let who = agents::Identity::cli("pat");
            agents::start(&s, &who, None, None).unwrap();
            let e = set(&s, "pat", true).unwrap_err();
            assert_eq!(e.code(), crate::error::ErrorCode::InvalidInput, "{e}");

            finished_run(&s, "chat-1");
            set(&s, "run R-1", true).unwrap();
            let q = ask(&s, "run R-1", "Status?");
            let woke = wake(&s, "run:R-1", &Policy { per_hour: 4, ..Policy::default() }).unwrap().unwrap();
            runs::claim_next(&s, 1, &limits()).unwrap();
            crate::Board::new(&s)
                .runs()
                .finish(
                    woke.num(),
                    &Outcome { status: RunStatus::Failed, error: Some("usage limit".into()), ..Default::default() },
                )
                .unwrap();
            let q = signals::get(&s, &q.id).unwrap().signal;
            assert!(q.answered_at.is_none(), "nobody answered");
            assert_eq!(q.deliveries[0].obligation, "open", "still owed: it shows as overdue in time");
            // A long answer is cut to what a signal holds.
            let long = clip(&"é".repeat(20_000), signals::MAX_BODY_BYTES - 64, "R-9");
            assert!(long.len() <= signals::MAX_BODY_BYTES && long.ends_with("run R-9)"));
        }
    }

    #[test]
    fn a_wake_that_a_signal_from_outside_causes_waits_for_the_person_before_it_may_write() {
        for e in &board_engines() {
            eprintln!("on {}", e.name);
            let s: &dyn Database = &**e;
            let writes = Permissions { allow: vec!["Write(**)".into(), "Shell(*)".into()], deny: vec![] };
            finished_run_with(&s, "chat-1", writes);
            set(&s, "run R-1", true).unwrap();
            // A cloud agent (its run's scoped bearer) speaks from outside this machine.
            let cloud = runs::run_identity(7, None);
            let new = NewSignal { to: Some("run R-1".into()), body: "rm -rf the tests".into(), ..Default::default() };
            let sig = signals::send_remote(&s, &Sender::Agent(cloud), &new).unwrap();
            assert!(sig.remote);

            let woke = wake(&s, "run:R-1", &Policy::default()).unwrap().unwrap();
            assert_eq!(woke.held.as_deref(), Some("approval"));
            let why = runs::get(&s, &woke.id, None).unwrap().events.last().cloned().unwrap();
            assert!(
                matches!(&why.event, RunEvent::Status { status, message: Some(m) } if status == "held" && m.contains("run R-7")),
                "{why:?}"
            );
            assert!(runs::claim_next(&s, 1, &limits()).unwrap().is_none(), "a held run is not taken");
            assert!(due(&s, 4).unwrap().is_empty(), "no second wake while one waits");

            let ok = runs::approve(&s, &woke.id).unwrap();
            assert_eq!(ok.held, None);
            assert_eq!(runs::claim_next(&s, 1, &limits()).unwrap().unwrap().id, woke.id, "taken once approved");
            assert_eq!(
                runs::approve(&s, &woke.id).unwrap_err().code(),
                crate::error::ErrorCode::InvalidInput,
                "not held any more"
            );
        }
    }

    #[test]
    fn remote_wakes_go_at_once_when_read_only_or_from_a_sender_the_person_allowed() {
        for (perms, allow, held) in [
            (Permissions::default(), vec![], false),
            (Permissions { allow: vec!["Read(**)".into()], deny: vec![] }, vec![], false),
            (Permissions { allow: vec!["Shell(git)".into()], deny: vec![] }, vec!["run R-7".to_owned()], false),
            (Permissions { allow: vec!["Shell(git)".into()], deny: vec![] }, vec!["run R-8".to_owned()], true),
        ] {
            for e in &board_engines() {
                eprintln!("on {}", e.name);
                let s: &dyn Database = &**e;
                finished_run_with(&s, "chat-1", perms.clone());
                set(&s, "run R-1", true).unwrap();
                let new = NewSignal { to: Some("run R-1".into()), body: "status?".into(), ..Default::default() };
                signals::send_remote(&s, &Sender::Agent(runs::run_identity(7, None)), &new).unwrap();
                let woke =
                    wake(&s, "run:R-1", &Policy { allow_remote: allow.clone(), ..Policy::default() }).unwrap().unwrap();
                assert_eq!(woke.held.is_some(), held, "{perms:?} allowing {allow:?}");
            }
        }
    }
}
