//! How many connections the server holds, and which ones give way.
//!
//! Anyone who can reach the port can open connections without a token (with a public URL, anyone
//! on the internet), and each costs a descriptor. So connections are admitted up to a cap that
//! follows the descriptor limit the process actually has, and every connection starts
//! *untrusted*: it becomes trusted once a request on it proves a credential (the MCP bearer, the
//! GUI's cookie, the hook token, a run's scoped bearer, a signed webhook). Untrusted connections
//! have their own, smaller budget, and when it (or the whole cap) is full the oldest untrusted
//! connection is closed to make room. A stalled or idle stranger therefore never holds a seat a
//! token holder, `/health` or a newer stranger needs; trusted connections are never closed for
//! room.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use tokio_util::sync::CancellationToken;

/// Descriptors kept free for everything else: the database, the watcher, agents' pipes.
const RESERVED_FDS: u64 = 192;
/// Never more than this many connections, however many descriptors there are.
const MAX_CONNECTIONS: usize = 2048;

/// Set on a response by whatever checked a credential on its request: the connection it came
/// on is trusted from then on.
#[derive(Debug, Clone, Copy)]
pub struct Authenticated;

#[derive(Debug)]
pub struct Budget {
    max: usize,
    max_untrusted: usize,
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    next: u64,
    untrusted: usize,
    /// By admission order, so the first untrusted one found is the oldest.
    conns: BTreeMap<u64, (bool, CancellationToken)>,
}

/// A connection's seat; it is given back when dropped.
#[derive(Debug)]
pub struct Seat {
    budget: Arc<Budget>,
    id: u64,
    /// Cancelled when the seat is taken back for room.
    pub evicted: CancellationToken,
}

impl Budget {
    /// A budget for a process that may hold `fd_limit` descriptors.
    pub fn for_descriptors(fd_limit: u64) -> Arc<Self> {
        let max = (fd_limit.saturating_sub(RESERVED_FDS) as usize).clamp(16, MAX_CONNECTIONS);
        Arc::new(Budget { max, max_untrusted: (max / 2).max(8), inner: Mutex::default() })
    }

    /// (connections in all, untrusted ones) this budget admits.
    pub fn caps(&self) -> (usize, usize) {
        (self.max, self.max_untrusted)
    }

    /// A seat for a new connection, making room by closing the oldest untrusted one when a
    /// budget is full; `None` when every seat is held by a trusted connection.
    pub fn admit(self: &Arc<Self>) -> Option<Seat> {
        let mut g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        if g.untrusted >= self.max_untrusted || g.conns.len() >= self.max {
            let oldest = g.conns.iter().find(|(_, (trusted, _))| !trusted).map(|(id, _)| *id);
            match oldest {
                Some(id) => {
                    if let Some((_, tok)) = g.conns.remove(&id) {
                        tok.cancel();
                    }
                    g.untrusted -= 1;
                }
                None => return None,
            }
        }
        let id = g.next;
        g.next += 1;
        let evicted = CancellationToken::new();
        g.conns.insert(id, (false, evicted.clone()));
        g.untrusted += 1;
        Some(Seat { budget: Arc::clone(self), id, evicted })
    }

    fn trust(&self, id: u64) {
        let mut g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((trusted, _)) = g.conns.get_mut(&id)
            && !*trusted
        {
            *trusted = true;
            g.untrusted -= 1;
        }
    }

    /// (connections, untrusted ones) now.
    #[cfg(test)]
    fn counts(&self) -> (usize, usize) {
        let g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        (g.conns.len(), g.untrusted)
    }
}

impl Seat {
    /// A credential was proven on this connection.
    pub fn trust(&self) {
        self.budget.trust(self.id);
    }
}

impl Drop for Seat {
    fn drop(&mut self) {
        let mut g = self.budget.inner.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((trusted, _)) = g.conns.remove(&self.id)
            && !trusted
        {
            g.untrusted -= 1;
        }
    }
}

/// Lifts the soft limit on open files toward the hard one and returns the limit obtained (Linux
/// defaults the soft one to 1,024; it cannot always be raised).
pub fn raise_descriptor_limit() -> u64 {
    #[cfg(unix)]
    {
        use nix::sys::resource::{Resource, getrlimit, setrlimit};
        if let Ok((soft, hard)) = getrlimit(Resource::RLIMIT_NOFILE) {
            let want = hard.min(65_536);
            if soft < want && setrlimit(Resource::RLIMIT_NOFILE, want, hard).is_ok() {
                return want;
            }
            return soft;
        }
    }
    1024
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_follows_the_descriptors_and_strangers_give_way_oldest_first() {
        assert_eq!(Budget::for_descriptors(1024).max, 832);
        assert_eq!(Budget::for_descriptors(1 << 20).max, MAX_CONNECTIONS);
        let b = Budget::for_descriptors(RESERVED_FDS + 40);
        assert_eq!((b.max, b.max_untrusted), (40, 20));
        let trusted: Vec<Seat> = (0..15).map(|_| b.admit().unwrap()).collect();
        trusted.iter().for_each(Seat::trust);
        let strangers: Vec<Seat> = (0..20).map(|_| b.admit().unwrap()).collect();
        assert_eq!(b.counts(), (35, 20));
        // The untrusted budget is full: the oldest stranger gives way, never a trusted one.
        let newer = b.admit().unwrap();
        assert!(strangers[0].evicted.is_cancelled() && !strangers[1].evicted.is_cancelled());
        assert!(trusted.iter().all(|s| !s.evicted.is_cancelled()));
        newer.trust();
        drop(strangers);
        assert_eq!(b.counts(), (16, 0));
        // Every seat trusted: a new connection finds none.
        let more: Vec<Seat> = (0..24)
            .map(|_| {
                let s = b.admit().unwrap();
                s.trust();
                s
            })
            .collect();
        assert_eq!(b.counts(), (40, 0));
        assert!(b.admit().is_none());
        drop(more);
    }
}
