//! The executors registered on an engine, by the kind of run each takes.

use std::sync::{Arc, RwLock};

use super::api::{Executor, ExecutorInfo};
use crate::Tether;

/// The executors registered on an engine.
#[derive(Default)]
pub struct Executors {
    all: RwLock<Vec<Arc<dyn Executor>>>,
}

impl std::fmt::Debug for Executors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kinds: Vec<&str> = self.all().iter().map(|e| e.kind()).collect();
        f.debug_struct("Executors").field("kinds", &kinds).finish()
    }
}

impl Executors {
    /// Registers `e` (replacing one of the same kind).
    pub fn register(&self, e: Arc<dyn Executor>) {
        let mut all = self.all.write().unwrap_or_else(|p| p.into_inner());
        all.retain(|x| x.kind() != e.kind());
        all.push(e);
    }

    /// The executor for runs of `kind`.
    pub fn get(&self, kind: &str) -> Option<Arc<dyn Executor>> {
        self.all().into_iter().find(|e| e.kind() == kind)
    }

    /// What the executor of `kind` is on this machine (blocking: see [`Executor::probe`]).
    pub fn probe(&self, t: &Tether, kind: &str) -> ExecutorInfo {
        match self.get(kind) {
            Some(e) => e.probe(t),
            None => {
                ExecutorInfo { hint: Some(format!("nothing in this process runs {kind} runs")), ..Default::default() }
            }
        }
    }

    pub fn all(&self) -> Vec<Arc<dyn Executor>> {
        self.all.read().unwrap_or_else(|p| p.into_inner()).clone()
    }
}
