//! The executors registered on an engine, by the kind of run each takes.

use std::sync::{Arc, RwLock};

use super::api::Executor;

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

    pub fn all(&self) -> Vec<Arc<dyn Executor>> {
        self.all.read().unwrap_or_else(|p| p.into_inner()).clone()
    }
}
