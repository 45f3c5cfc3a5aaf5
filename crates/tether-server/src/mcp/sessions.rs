//! The live state of one daemon's MCP sessions: push handles, subscriptions, open streams, the
//! doorbell's armed bells and who calls on each. State only; the tasks that act on it live in
//! their own modules.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use rmcp::{Peer, RoleServer};

use super::caller::Callers;
use super::streams::Streams;

#[derive(Default)]
pub(crate) struct Doorbell {
    /// Sessions whose bell rang and was not answered by a drain yet.
    outstanding: Mutex<HashSet<String>>,
}

impl Doorbell {
    /// The session drained signals: its next signal may ring again.
    pub(crate) fn rearm(&self, session: &str) {
        self.outstanding.lock().unwrap_or_else(|p| p.into_inner()).remove(session);
    }

    pub(crate) fn forget(&self, session: &str) {
        self.rearm(session);
    }

    /// Takes the bell of `session` if it is armed.
    pub(crate) fn take(&self, session: &str) -> bool {
        self.outstanding.lock().unwrap_or_else(|p| p.into_inner()).insert(session.to_owned())
    }
}

/// The MCP sessions of one daemon: their push handles, subscriptions, streams, bells and callers.
#[derive(Default)]
pub struct Sessions {
    peers: Mutex<HashMap<String, Peer<RoleServer>>>,
    subscriptions: Mutex<HashMap<String, HashSet<String>>>,
    pub(crate) streams: Streams,
    pub(crate) doorbell: Doorbell,
    pub(crate) caller: Callers,
}

impl Sessions {
    /// Counted from the same map as [`Self::report`], so `/health` and `/api/status` agree (a
    /// session is there from its first request after `initialize`; its push handle a moment later).
    pub(crate) fn count(&self) -> usize {
        self.streams.count()
    }

    /// Each session with its last request and open GET streams, newest first.
    pub(crate) fn report(&self) -> Vec<super::streams::McpSessionView> {
        self.streams.report()
    }

    pub(crate) fn peer(&self, session: &str) -> Option<Peer<RoleServer>> {
        self.peers.lock().unwrap_or_else(|p| p.into_inner()).get(session).cloned()
    }

    pub(crate) fn register_peer(&self, session: &str, peer: Peer<RoleServer>) {
        self.peers.lock().unwrap_or_else(|p| p.into_inner()).insert(session.to_owned(), peer);
    }

    pub(crate) fn forget(&self, session: &str) {
        self.streams.forget(session);
        self.doorbell.forget(session);
        self.caller.forget(session);
        self.peers.lock().unwrap_or_else(|p| p.into_inner()).remove(session);
        self.subscriptions.lock().unwrap_or_else(|p| p.into_inner()).remove(session);
    }

    pub(crate) fn subscribe(&self, session: &str, uri: &str) {
        self.subscriptions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(session.to_owned())
            .or_default()
            .insert(uri.to_owned());
    }

    pub(crate) fn unsubscribe(&self, session: &str, uri: &str) {
        if let Some(s) = self.subscriptions.lock().unwrap_or_else(|p| p.into_inner()).get_mut(session) {
            s.remove(uri);
        }
    }

    /// The sessions subscribed to any of `uris`, with their peer and the URIs each wants.
    pub(crate) fn subscribers(&self, uris: &HashSet<String>) -> Vec<(String, Peer<RoleServer>, Vec<String>)> {
        let subs = self.subscriptions.lock().unwrap_or_else(|p| p.into_inner());
        let peers = self.peers.lock().unwrap_or_else(|p| p.into_inner());
        subs.iter()
            .filter_map(|(sid, set)| {
                let hit: Vec<String> = set.intersection(uris).cloned().collect();
                let peer = peers.get(sid)?.clone();
                (!hit.is_empty()).then(|| (sid.clone(), peer, hit))
            })
            .collect()
    }
}
