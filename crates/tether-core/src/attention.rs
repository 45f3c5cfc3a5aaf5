//! What needs a person's attention: chats that stopped while holding a task, questions agents
//! asked the person, obligations open past their SLA, and Cursor sources that could not be read. The tray, the GUI's health view and its notifications show the same
//! list. Knows nothing about how it is shown.

use serde::Serialize;

use crate::Tether;
use crate::error::Result;

#[derive(Debug, Clone, Serialize, PartialEq, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct Attention {
    /// `idle_with_task`, `question_for_human`, `run_held`, `obligation_overdue` or `source_failed`.
    pub kind: &'static str,
    pub message: String,
    /// What it is about, for a link to it: the signal's id, the agent's name, the source's path.
    pub subject: String,
}

pub fn list(t: &Tether) -> Result<Vec<Attention>> {
    let mut out = Vec::new();
    for a in t.board().agents().list()? {
        if a.status == "idle" && !a.tasks.is_empty() {
            out.push(Attention {
                kind: "idle_with_task",
                message: format!("{} is idle holding {}", a.name, a.tasks.join(", ")),
                subject: a.name.clone(),
            });
        }
    }
    for s in t.board().signals().list(&crate::board::signals::SignalFilter {
        to: Some(crate::board::signals::HUMAN.into()),
        open: true,
        limit: 50,
        ..Default::default()
    })? {
        use crate::board::signals::SignalType as T;
        if matches!(s.kind, T::Question | T::ReviewRequested) {
            let what = if s.kind == T::Question { "question" } else { "review request" };
            out.push(Attention {
                kind: "question_for_human",
                message: format!("unanswered {what} from {} ({}): {}", s.from, s.id, first_line(&s.body)),
                subject: s.id.clone(),
            });
        }
    }
    let held = t.board().runs().list(&crate::board::runs::RunFilter {
        statuses: vec![crate::board::runs::RunStatus::Queued],
        limit: 200,
        ..Default::default()
    })?;
    // On a team's board, each machine's person is asked about what would run on their machine.
    let here = t.board_db().machine();
    let mine = |r: &crate::board::runs::Run| {
        here.is_none() || r.machine.as_ref().or(r.on.as_ref()).is_none_or(|m| Some(m) == here.as_ref())
    };
    for r in held.into_iter().filter(|r| r.held.is_some() && mine(r)) {
        out.push(Attention {
            kind: "run_held",
            message: match r.held.as_deref() {
                Some("budget") => format!(
                    "{} waits: the run before it went over budget (approve to go on): {}",
                    r.id,
                    first_line(&r.prompt)
                ),
                Some("daily") => format!("{} waits: today's budget is spent: {}", r.id, first_line(&r.prompt)),
                _ => format!("{} waits for your approval: {}", r.id, first_line(&r.prompt)),
            },
            subject: r.id.clone(),
        });
    }
    let settings = t.settings().unwrap_or_default();
    for (kind, minutes) in &settings.signal_sla_minutes {
        let Ok(kind) = kind.parse() else { continue };
        for (s, who, age) in t.board().signals().overdue(kind, i64::from(*minutes) * 60_000)? {
            out.push(Attention {
                kind: "obligation_overdue",
                message: format!("{} {} to {who} unanswered for {} min", s.kind, s.id, age / 60_000),
                subject: s.id.clone(),
            });
        }
    }
    // Straight from the sources table: the tray asks every few seconds, and the full doctor
    // report also walks Cursor's folders.
    let failed: Vec<(String, Option<String>)> = t.store.read(|c| {
        let mut stmt = c.prepare("SELECT path, error FROM sources WHERE status = 'error' ORDER BY path")?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    })?;
    for (path, error) in failed {
        let why = error.unwrap_or_else(|| "unreadable".into());
        out.push(Attention { kind: "source_failed", message: format!("cannot read {path}: {why}"), subject: path });
    }
    Ok(out)
}

fn first_line(body: &str) -> String {
    let line = body.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim();
    match line.char_indices().nth(80) {
        Some((i, _)) => format!("{}…", &line[..i]),
        None => line.to_owned(),
    }
}
