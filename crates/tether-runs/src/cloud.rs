//! A cloud run: tether-cloud's driver launches or follows up the agent at Cursor and streams
//! it; its events are taken like a local run's, and its transcript is written and indexed while
//! it works.

use std::sync::Arc;
use std::time::Duration;

use tether_core::Tether;
use tether_core::board::runs::event::RunEvent;
use tether_core::board::runs::{self, Outcome, Run};
use tokio::sync::{Notify, mpsc};
use tokio_util::sync::CancellationToken;

use crate::blocking;
use crate::log::{Log, Watch, take_events};

/// Runs a cloud run through tether-cloud's driver, taking its events like a local run's;
/// `None` when Tether is stopping and the run was left going at Cursor.
pub(crate) async fn drive(t: &Arc<Tether>, run: &Run, tok: &CancellationToken, poke: Arc<Notify>) -> Option<Outcome> {
    let (tx, mut rx) = mpsc::channel::<RunEvent>(4096);
    let ctx = tether_cloud::drive::Ctx { tether: Arc::clone(t), events: tx, pace: Default::default(), poke };
    let seq = {
        let (t, num) = (Arc::clone(t), run.num());
        blocking(move || runs::last_seq(&*t.board_db(), num)).await.unwrap_or(0)
    };
    let max_log_mb = t.settings().map(|s| s.runs.max_log_mb).unwrap_or(64);
    let mut watch = Watch::new(seq, max_log_mb);
    let log = Log::start(Arc::clone(t), run.num());
    let driving = async move {
        let end = tether_cloud::drive::drive(&ctx, run, tok).await;
        drop(ctx);
        end
    };
    let consuming = async {
        let mut written = tokio::time::Instant::now();
        while let Some(first) = rx.recv().await {
            take_events(&t.bus, run, first, &mut rx, &mut watch, &log, None);
            // The chat is searchable while the agent works, not only once it ended.
            if written.elapsed() >= Duration::from_secs(2)
                && let Some(chat) = watch.chat.clone()
            {
                written = tokio::time::Instant::now();
                let t = Arc::clone(t);
                let _ = blocking(move || tether_cloud::transcript::write_and_index(&t, &chat)).await;
            }
        }
    };
    let (end, ()) = tokio::join!(driving, consuming);
    log.flush().await;
    match end {
        tether_cloud::drive::End::Done(mut o) => {
            o.log_dropped = watch.dropped();
            Some(o)
        }
        tether_cloud::drive::End::Detached => None,
    }
}
