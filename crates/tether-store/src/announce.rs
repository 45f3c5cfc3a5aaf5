//! One write, one announcement, on either engine: the revision bookkeeping that lets a process
//! announce each board write it commits once, right after the commit, and tell apart what others
//! (other processes, other machines) wrote since ([`Announcer`]); and [`Announcing`], any
//! [`Database`] wearing it (the team's pool). The SQLite [`crate::store::Store`] keeps an
//! [`Announcer`] of its own, because its writes are transactions it runs itself.
//!
//! Knows revisions ([`crate::changed`]) and the `Database` trait; nothing of the board's rules,
//! PostgreSQL or hosts.

use std::sync::{Arc, Mutex, OnceLock, RwLock};

use crate::changed::{Changed, Revisions};
use crate::error::Result;
use crate::sql::{Database, Listening, Sql};

/// Told of every write's [`Changed`] right after its commit (the host's event bus).
type Announce = Box<dyn Fn(Changed) + Send + Sync>;

/// The revisions this process has announced, and whom it tells of its own writes.
pub struct Announcer {
    /// The revisions as this process last announced them (its own writes, or others' seen by
    /// [`Announcer::foreign`]); `None` until it first knew where the board stood.
    announced: Mutex<Option<Revisions>>,
    /// Writes hold it shared from before their commit until `announced` has them; asking what
    /// others wrote holds it alone. Otherwise a commit of this process could be seen by the asker
    /// in between (a file watch, a NOTIFY) and the write announced twice.
    gate: RwLock<()>,
    announce: OnceLock<Announce>,
}

impl std::fmt::Debug for Announcer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Announcer").field("announced", &self.announced).finish_non_exhaustive()
    }
}

impl Announcer {
    /// Bookkeeping that starts at `at` (`None`: at the first [`Announcer::start_at`] or
    /// [`Announcer::foreign`]).
    pub fn new(at: Option<Revisions>) -> Self {
        Self { announced: Mutex::new(at), gate: RwLock::new(()), announce: OnceLock::new() }
    }

    /// Tells `f` of every write announced from now on (set once; later calls are ignored).
    pub fn announce_to(&self, f: impl Fn(Changed) + Send + Sync + 'static) {
        let _ = self.announce.set(Box::new(f));
    }

    /// What others write after `now` is news; nothing before (kept if already further).
    pub fn start_at(&self, now: Revisions) {
        let mut held = self.announced.lock().unwrap_or_else(|p| p.into_inner());
        *held = Some(held.map_or(now, |was| was.max(now)));
    }

    /// Runs `write` (one transaction, committed when it returns) as this process's own: what it
    /// changed counts as announced, then is announced once, after the commit.
    pub fn write<T>(&self, write: impl FnOnce() -> Result<(T, Changed)>) -> Result<(T, Changed)> {
        let gate = self.gate.read().unwrap_or_else(|p| p.into_inner());
        let (v, changed) = write()?;
        if changed.any() {
            let mut held = self.announced.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(r) = held.as_mut() {
                let mine = Revisions {
                    tasks: changed.tasks.unwrap_or(r.tasks),
                    signals: changed.signals.unwrap_or(r.signals),
                    runs: changed.runs.unwrap_or(r.runs),
                };
                *r = r.max(mine);
            }
            drop(held);
            drop(gate);
            if let Some(announce) = self.announce.get() {
                announce(changed);
            }
        }
        Ok((v, changed))
    }

    /// What others changed since this process last announced, given the revisions as they are
    /// `now` (read once no write of this process is between its commit and its bookkeeping);
    /// those count as announced from here on. Nothing the first time: that only says where the
    /// board stands.
    pub fn foreign(&self, now: impl FnOnce() -> Result<Revisions>) -> Result<Changed> {
        let _gate = self.gate.write().unwrap_or_else(|p| p.into_inner());
        let now = now()?;
        let mut held = self.announced.lock().unwrap_or_else(|p| p.into_inner());
        let changed = held.map(|was| was.changed_to(now)).unwrap_or_default();
        *held = Some(held.map_or(now, |was| was.max(now)));
        Ok(changed)
    }
}

/// A [`Database`] whose writes through this handle are announced once, after their commit, and
/// whose [`Database::foreign_changes`] says what others wrote since. Announcing starts when the
/// handle is first used: what others wrote before that is not news.
pub struct Announcing<D> {
    inner: D,
    book: Announcer,
    started: OnceLock<()>,
}

impl<D: std::fmt::Debug> std::fmt::Debug for Announcing<D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Announcing").field("inner", &self.inner).field("book", &self.book).finish()
    }
}

impl<D: Database> Announcing<D> {
    /// `inner`, announcing this handle's writes to `announce`.
    pub fn new(inner: D, announce: impl Fn(Changed) + Send + Sync + 'static) -> Self {
        let book = Announcer::new(None);
        book.announce_to(announce);
        Self { inner, book, started: OnceLock::new() }
    }

    pub fn inner(&self) -> &D {
        &self.inner
    }

    fn revisions(&self) -> Result<Revisions> {
        let mut now = Revisions::default();
        self.inner.read_with(&mut |db| {
            now = Revisions::read_from(db)?;
            Ok(())
        })?;
        Ok(now)
    }

    /// Reads where the board stands on first use (the engine is reached then, not before).
    fn start(&self) -> Result<()> {
        if self.started.get().is_none() {
            self.book.start_at(self.revisions()?);
            let _ = self.started.set(());
        }
        Ok(())
    }
}

impl<D: Database> Database for Announcing<D> {
    fn read_with(&self, f: &mut dyn FnMut(&dyn Sql) -> Result<()>) -> Result<()> {
        self.start()?;
        self.inner.read_with(f)
    }

    fn write_with(&self, f: &mut dyn FnMut(&dyn Sql) -> Result<()>) -> Result<Changed> {
        self.start()?;
        self.book.write(|| self.inner.write_with(f).map(|c| ((), c))).map(|((), c)| c)
    }

    fn claim_with(&self, f: &mut dyn FnMut(&dyn Sql) -> Result<()>) -> Result<Changed> {
        self.start()?;
        self.book.write(|| self.inner.claim_with(f).map(|c| ((), c))).map(|((), c)| c)
    }

    fn append_with(&self, f: &mut dyn FnMut(&dyn Sql) -> Result<()>) -> Result<()> {
        self.start()?;
        self.inner.append_with(f)
    }

    fn foreign_changes(&self) -> Result<Changed> {
        self.start()?;
        self.book.foreign(|| self.revisions())
    }

    fn machine(&self) -> Option<String> {
        self.inner.machine()
    }

    fn listen(&self, heard: Arc<dyn Fn() + Send + Sync>) -> Option<Listening> {
        self.inner.listen(heard)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Store;

    /// A second process's view of one SQLite file, as a bare engine (its own writes unannounced).
    #[derive(Debug)]
    struct Bare(Store);

    impl Database for Bare {
        fn read_with(&self, f: &mut dyn FnMut(&dyn Sql) -> Result<()>) -> Result<()> {
            self.0.read_with(f)
        }
        fn write_with(&self, f: &mut dyn FnMut(&dyn Sql) -> Result<()>) -> Result<Changed> {
            self.0.write_with(f)
        }
        fn append_with(&self, f: &mut dyn FnMut(&dyn Sql) -> Result<()>) -> Result<()> {
            self.0.append_with(f)
        }
    }

    #[test]
    fn a_decorated_engine_announces_its_own_writes_once_and_tells_what_others_wrote_after_first_use() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("t.db");
        let other = Store::open(&db).unwrap();
        let bump = |d: &dyn Database, name: &str| {
            d.write_with(&mut |s| {
                s.execute("UPDATE counters SET value = value + 1 WHERE name = ?1", crate::values![name]).map(|_| ())
            })
            .unwrap()
        };
        bump(&other, "tasks_rev");
        let heard = Arc::new(Mutex::new(Vec::new()));
        let h = Arc::clone(&heard);
        let mine = Announcing::new(Bare(Store::open(&db).unwrap()), move |c| h.lock().unwrap().push(c));
        assert!(!mine.foreign_changes().unwrap().any(), "what was written before first use is not news");
        assert_eq!(bump(&mine, "runs_rev"), Changed { runs: Some(1), ..Changed::default() });
        assert_eq!(*heard.lock().unwrap(), vec![Changed { runs: Some(1), ..Changed::default() }]);
        assert!(!mine.foreign_changes().unwrap().any(), "my own write is not news to me");
        bump(&other, "signals_rev");
        assert_eq!(mine.foreign_changes().unwrap(), Changed { signals: Some(1), ..Changed::default() });
        assert!(!mine.foreign_changes().unwrap().any(), "and only once");
        assert_eq!(heard.lock().unwrap().len(), 1, "others' writes are announced by whoever watches for them");
        assert!(!mine.write_with(&mut |_| Ok(())).unwrap().any(), "a write that changes nothing announces nothing");
        assert_eq!(heard.lock().unwrap().len(), 1);
    }
}
