//! Budgets as one service, what a run's lifecycle and its executor call: refused at queueing
//! (a dollar budget needs a price), the queue held while today's budget is spent, a run's
//! [`BudgetWatch`] (spent before it starts, warned once from 80 %, over past a budget) and the
//! person told when one went over. The rules are `caps`'; telling people and agents is
//! `notice`'s; the figures are the board's.

use std::sync::atomic::{AtomicBool, Ordering};

use super::caps::{self, Caps, Level};
use super::notice;
use crate::Tether;
use crate::board::runs::event::Usage;
use crate::board::runs::{Run, ValidRun};
use crate::error::Result;

/// The budgets of the engine `t`.
pub struct Budgets<'a> {
    t: &'a Tether,
}

impl<'a> Budgets<'a> {
    pub fn of(t: &'a Tether) -> Self {
        Self { t }
    }

    /// Refuses, when a run is queued, a dollar budget it could not keep.
    pub fn check_queued(&self, v: &ValidRun) -> Result<()> {
        caps::check_queued(self.t, v)
    }

    /// Holds queued runs (`daily`) while today's budget is spent; frees them once it is not.
    pub fn hold_if_spent_today(&self) -> Result<()> {
        let why = caps::daily_spent(self.t)?;
        self.t.board().usage().hold_for_daily(why.as_deref()).map(|_| ())
    }

    /// What `run` may spend, with what was spent against each of its budgets before it.
    pub fn watch(&self, run: &Run) -> Result<BudgetWatch> {
        Ok(BudgetWatch { run: run.clone(), caps: caps::caps_for(self.t, run)?, warned: AtomicBool::new(false) })
    }

    /// A run went over a budget: the person is told (the bus, and a signal in the Inbox).
    pub fn went_over(&self, run: &Run) -> Result<()> {
        notice::went_over(self.t, run)
    }
}

/// Where one run stands against its budgets as its figures come in.
#[derive(Debug)]
pub struct BudgetWatch {
    run: Run,
    caps: Caps,
    warned: AtomicBool,
}

impl BudgetWatch {
    /// No budget applies: nothing to watch.
    pub fn is_empty(&self) -> bool {
        self.caps.is_empty()
    }

    /// Why the run must not start: a budget it answers to is spent already.
    pub fn spent_before_start(&self) -> Option<String> {
        match self.caps.check(&Usage::default(), None) {
            Level::Over(why) => Some(why),
            _ => None,
        }
    }

    /// Where the run stands having spent `u` (and `cost` dollars, when Cursor said): over a
    /// budget (why), past 80 % of one (said the first time only), or under.
    pub fn check(&self, u: &Usage, cost: Option<f64>) -> Level {
        match self.caps.check(u, cost) {
            Level::Warn(msg) if !self.warned.swap(true, Ordering::Relaxed) => Level::Warn(msg),
            Level::Warn(_) => Level::Under,
            other => other,
        }
    }

    /// Tells the run's agent (a signal it sees on its next Tether call) and the GUI that it
    /// passed 80 % of a budget: `message` is [`Self::check`]'s warning.
    pub fn warn(&self, t: &Tether, message: &str) -> Result<()> {
        notice::warned(t, &self.run, message)
    }
}
