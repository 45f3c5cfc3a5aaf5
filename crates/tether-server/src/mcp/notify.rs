//! Tells subscribed MCP sessions that a resource changed (`notifications/resources/updated`),
//! from the event bus: the board (`tether://tasks`) on every task write, a chat when it was
//! indexed or tagged, a run as it goes (at most every half second per run while it writes
//! events, at once when its status changes). Sent from spawned tasks: a client that stops
//! reading its stream never stalls the others.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::model::ResourceUpdatedNotificationParam;
use tether_core::events::{Event, RunLog};
use tokio::sync::broadcast::error::RecvError;

use super::resources::{RUN_URI_PREFIX, SESSION_URI_PREFIX, TASKS_URI};
use crate::Server;

const RUN_EVERY: Duration = Duration::from_millis(500);

pub(crate) async fn run(server: Arc<Server>) {
    let mut events = server.tether.bus.subscribe();
    let mut runs = server.tether.bus.subscribe_run_log();
    let mut last_run: HashMap<String, Instant> = HashMap::new();
    loop {
        let uris: HashSet<String> = tokio::select! {
            ev = events.recv() => match ev {
                Ok(Event::Tasks { .. }) => HashSet::from([TASKS_URI.to_owned()]),
                Ok(Event::Sessions { ids: Some(ids) }) => ids.iter().map(|id| format!("{SESSION_URI_PREFIX}{id}")).collect(),
                Ok(_) | Err(RecvError::Lagged(_)) => continue,
                Err(RecvError::Closed) => return,
            },
            u = runs.recv() => match u {
                Ok(RunLog::Status { run, .. }) => {
                    last_run.insert(run.clone(), Instant::now());
                    HashSet::from([format!("{RUN_URI_PREFIX}{run}")])
                }
                Ok(RunLog::Events { run, .. }) => {
                    if last_run.get(&run).is_some_and(|at| at.elapsed() < RUN_EVERY) {
                        continue;
                    }
                    last_run.insert(run.clone(), Instant::now());
                    HashSet::from([format!("{RUN_URI_PREFIX}{run}")])
                }
                Err(RecvError::Lagged(_)) => continue,
                Err(RecvError::Closed) => return,
            },
        };
        for (sid, peer, hit) in server.mcp.subscribers(&uris) {
            tokio::spawn(async move {
                for uri in hit {
                    if let Err(e) = peer.notify_resource_updated(ResourceUpdatedNotificationParam::new(uri)).await {
                        tracing::debug!(session = %sid, error = %e, "dropping a notification for a closed session");
                        break;
                    }
                }
            });
        }
        last_run.retain(|_, at| at.elapsed() < Duration::from_secs(60));
    }
}
