//! Which of the board's domains changed: the revision counters every board write bumps (in any
//! process, on either engine) and what moved between two readings of them. Plain values: the
//! engines read them ([`crate::store`], [`crate::sql`]), this module reads nothing.

/// The board's revision counters, bumped by every write to their domain in any process.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Revisions {
    pub tasks: i64,
    pub signals: i64,
    pub runs: i64,
}

/// Which domains a write (or other processes' writes) changed: each with its new revision.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Changed {
    pub tasks: Option<i64>,
    pub signals: Option<i64>,
    pub runs: Option<i64>,
}

impl Changed {
    pub fn any(self) -> bool {
        self.tasks.is_some() || self.signals.is_some() || self.runs.is_some()
    }
}

impl Revisions {
    /// Domains where `now` is past `self`.
    pub fn changed_to(self, now: Revisions) -> Changed {
        let moved = |was: i64, is: i64| (is > was).then_some(is);
        Changed {
            tasks: moved(self.tasks, now.tasks),
            signals: moved(self.signals, now.signals),
            runs: moved(self.runs, now.runs),
        }
    }

    /// Each domain's later revision of the two.
    pub fn max(self, o: Revisions) -> Revisions {
        Revisions { tasks: self.tasks.max(o.tasks), signals: self.signals.max(o.signals), runs: self.runs.max(o.runs) }
    }
}
