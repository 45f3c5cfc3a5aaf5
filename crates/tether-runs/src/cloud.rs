//! A cloud run ([`CloudAgent`], the executor of `cloud` runs): tether-cloud's driver launches or
//! follows up the agent at Cursor and streams it; its events are taken like a local run's (the
//! run log's writer is this crate's, which is why the adapter lives here and not in
//! tether-cloud), its transcript is written and indexed while it works and once more before
//! the drive returns, so the chat is searchable whole by the time the run says it ended.

use std::sync::Arc;
use std::time::Duration;

use tether_board::runs::event::RunEvent;
use tether_board::runs::{Outcome, Run};
use tether_core::Tether;
use tether_core::events::Event;
use tether_core::executor::{Boxed, Check, DoctorAsk, Drive, Executor, ExecutorInfo, Prepared};
use tether_core::usage::BudgetWatch;
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::{Notify, mpsc};
use tokio_util::sync::CancellationToken;

use crate::blocking;
use crate::log::{Log, Watch, take_events};

/// Cursor Cloud agents, as an [`Executor`].
#[derive(Debug, Default)]
pub struct CloudAgent;

impl Executor for CloudAgent {
    fn kind(&self) -> &'static str {
        "cloud"
    }

    /// Whether a Cursor API key is kept (the cloud doctor checks it against Cursor).
    fn probe(&self, t: &Tether) -> ExecutorInfo {
        let key = tether_core::token::cursor_key(&t.paths).ok().flatten();
        ExecutorInfo {
            found: key.is_some(),
            hint: key.is_none().then(|| "keep a Cursor API key: tether cloud login".to_owned()),
            ..Default::default()
        }
    }

    fn doctor<'a>(&'a self, t: &'a Tether, ask: &'a DoctorAsk) -> Boxed<'a, Vec<Check>> {
        Box::pin(tether_cloud::doctor::run(t, ask))
    }

    fn drive<'a>(
        &'a self,
        t: &'a Arc<Tether>,
        run: &'a Prepared,
        cancel: &'a CancellationToken,
        budget: &'a Arc<BudgetWatch>,
    ) -> Boxed<'a, Drive> {
        Box::pin(async move {
            let run = &run.run;
            let num = run.num();
            // Cursor's webhook says the agent changed: its status is read at once.
            let poke = Arc::new(Notify::new());
            let mut bus = t.bus.subscribe();
            let relay = {
                let poke = Arc::clone(&poke);
                tokio::spawn(async move {
                    loop {
                        match bus.recv().await {
                            Ok(Event::CloudRunChanged { run }) if run == num => poke.notify_one(),
                            Err(RecvError::Closed) => return,
                            _ => {}
                        }
                    }
                })
            };
            let driven = drive(t, run, cancel, poke, Arc::clone(budget)).await;
            relay.abort();
            let Some(o) = driven else { return Drive::Detached };
            let t = Arc::clone(t);
            let written = blocking(move || {
                let chat = t.board().runs().get_run(num)?.chat_id;
                chat.map(|c| tether_cloud::transcript::write_and_index(&t, &c)).transpose().map(|_| ())
            })
            .await;
            if let Err(e) = written {
                tracing::warn!(run = num, error = %e, "writing a cloud run's transcript");
            }
            Drive::Ended(o)
        })
    }
}

/// Runs a cloud run through tether-cloud's driver, taking its events like a local run's;
/// `None` when Tether is stopping and the run was left going at Cursor.
async fn drive(
    t: &Arc<Tether>,
    run: &Run,
    tok: &CancellationToken,
    poke: Arc<Notify>,
    budget: Arc<BudgetWatch>,
) -> Option<Outcome> {
    let (tx, mut rx) = mpsc::channel::<RunEvent>(4096);
    let ctx = tether_cloud::drive::Ctx { tether: Arc::clone(t), events: tx, pace: Default::default(), poke, budget };
    let seq = {
        let (t, num) = (Arc::clone(t), run.num());
        blocking(move || t.board().runs().last_seq(num)).await.unwrap_or(0)
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
