//! Telling people and agents about budgets: at 80 % the run's agent gets a signal it sees on its
//! next Tether call (and the GUI a `budget` event), so a well-behaved agent can wrap up; over
//! budget, the person gets a signal in the Inbox (the desktop app notifies the run's end).

use crate::Tether;
use crate::board::runs::Run;
use crate::board::signals::{self, NewSignal, Sender};
use crate::error::Result;
use crate::events::Event;

/// A run passed 80 % of a budget.
pub fn warned(t: &Tether, run: &Run, message: &str) -> Result<()> {
    t.bus.emit(Event::Budget { run: run.id.clone(), level: "warn".into(), message: message.to_owned() });
    let to = format!("run R-{}", run.root);
    let body = format!(
        "{}: {message}. Finish the step you are on, leave the work in a state someone can pick up, and stop; the run is stopped when the budget is spent.",
        run.id
    );
    let new = NewSignal {
        to: Some(to),
        kind: Some("status_update".into()),
        body,
        task: run.task.clone(),
        ..Default::default()
    };
    // The run's agent may not be on the board yet (it registers when it first calls Tether).
    if let Err(e) = t.board().signals().send(&Sender::Tether, &new) {
        tracing::info!(run = %run.id, error = %e, "the budget warning could not be signalled to the run's agent");
    }
    Ok(())
}

/// A run went over a budget and was stopped (or marked when it ended).
pub fn went_over(t: &Tether, run: &Run) -> Result<()> {
    let why = run.error.clone().unwrap_or_else(|| "went over budget".into());
    t.bus.emit(Event::Budget { run: run.id.clone(), level: "over".into(), message: why.clone() });
    let body = format!(
        "{} {why}. What it did so far is kept{}. Runs that continue it wait until you allow them (`tether runs approve R-n`, or Approve in the Runs view).",
        run.id,
        run.task.as_ref().map(|t| format!(", and {t} is back on the board")).unwrap_or_default()
    );
    let new = NewSignal {
        to: Some(signals::HUMAN.into()),
        kind: Some("status_update".into()),
        body,
        task: run.task.clone(),
        ..Default::default()
    };
    t.board().signals().send(&Sender::Tether, &new).map(|_| ())
}
