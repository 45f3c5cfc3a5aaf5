//! A run's log as it happens: events numbered as they come, shown live on the bus at once (in
//! batches bounded in count and bytes), and written to the store right behind by a writer of
//! their own (a slow commit never holds up the live view); what the stream said so far (its
//! chat, its result); and the log's size limit, past which lines are counted, not kept.

use std::sync::Arc;
use tether_core::executor::LogUsed;

use tether_board::runs::event::RunEvent;
use tether_board::runs::{self, Run, StoredEvent};
use tether_core::Tether;
use tether_core::events::{Bus, RunLog};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::blocking;

/// A live batch holds at most this many bytes of events: with the bus's capacity this bounds
/// what a stalled subscriber can hold in memory to a few MiB.
const BATCH_BYTES: usize = 64 << 10;

/// Numbers `first` and whatever else is waiting, shows them to subscribers at once, and hands
/// them to the log's writer: a slow commit (a WAL checkpoint) never holds up the live view.
pub(crate) fn take_events(
    bus: &Bus,
    run: &Run,
    first: RunEvent,
    rx: &mut mpsc::Receiver<RunEvent>,
    watch: &mut Watch,
    log: &Log,
    resume: Option<&str>,
) {
    // Bounded in count and bytes: a subscriber that stalls holds at most the broadcast's
    // capacity of these.
    let mut bytes = first.approx_len();
    let mut batch = vec![first];
    while batch.len() < 512 && bytes < BATCH_BYTES {
        match rx.try_recv() {
            Ok(e) => {
                bytes += e.approx_len();
                batch.push(e);
            }
            Err(_) => break,
        }
    }
    let mut chat_seen = false;
    for e in &batch {
        match e {
            RunEvent::Init { session_id, .. } => {
                chat_seen = watch.chat.is_none();
                watch.chat = Some(session_id.clone());
                if let Some(asked) = resume
                    && asked != session_id
                {
                    watch.fresh_chat = true;
                }
            }
            RunEvent::Result { is_error, text, usage, .. } => {
                watch.result_at = Some(tokio::time::Instant::now());
                watch.result = Some((*is_error, text.clone()));
                if usage.is_some() {
                    watch.final_usage.clone_from(usage);
                }
            }
            RunEvent::Usage { usage } => watch.turns.add(usage),
            _ => {}
        }
    }
    let now = tether_core::clock::now_ms();
    let mut kept = Vec::with_capacity(batch.len());
    for event in batch {
        let len = event.approx_len() as u64;
        if watch.kept + len > watch.cap && !event.is_essential() {
            if watch.dropped_lines == 0 {
                // Said once, where it happens, and on the run when it ends.
                kept.push(RunEvent::status(
                    "log_truncated",
                    Some(format!(
                        "the log keeps the first {} MiB of output (runs.max_log_mb); later lines are counted, not kept",
                        watch.cap >> 20
                    )),
                ));
            }
            watch.dropped_lines += 1;
            watch.dropped_bytes += len as i64;
            continue;
        }
        watch.kept += len;
        kept.push(event);
    }
    if kept.is_empty() {
        return;
    }
    let stored: Vec<StoredEvent> = kept
        .into_iter()
        .map(|event| {
            watch.seq += 1;
            StoredEvent { seq: watch.seq, at: tether_core::clock::iso(now), at_ms: now, event }
        })
        .collect();
    bus.run_log(RunLog::Events { run: run.id.clone(), events: stored.clone().into() });
    log.send(stored, run.task.is_some() && chat_seen);
}

/// Adds one event of Tether's own (a budget warning) to the run's log, numbered after the rest.
pub(crate) fn note(bus: &Bus, run: &Run, event: RunEvent, watch: &mut Watch, log: &Log) {
    watch.seq += 1;
    let now = tether_core::clock::now_ms();
    let stored = vec![StoredEvent { seq: watch.seq, at: tether_core::clock::iso(now), at_ms: now, event }];
    bus.run_log(RunLog::Events { run: run.id.clone(), events: stored.clone().into() });
    log.send(stored, false);
}

/// Writes a run's events to its log in the background, in order, batching what piles up.
pub(crate) struct Log {
    tx: mpsc::UnboundedSender<(Vec<StoredEvent>, bool)>,
    task: JoinHandle<()>,
}

impl Log {
    pub(crate) fn start(t: Arc<Tether>, num: i64) -> Self {
        let (tx, mut rx) = mpsc::unbounded_channel::<(Vec<StoredEvent>, bool)>();
        let task = tokio::spawn(async move {
            while let Some((mut events, mut note_chat)) = rx.recv().await {
                while let Ok((more, note)) = rx.try_recv() {
                    events.extend(more);
                    note_chat |= note;
                }
                let t = Arc::clone(&t);
                let r = blocking(move || {
                    t.board().runs().store_events(num, &events)?;
                    if note_chat {
                        t.board().runs().note_chat_on_task(num)?;
                    }
                    Ok(())
                })
                .await;
                if let Err(e) = r {
                    tracing::warn!(run = num, error = %e, "storing run events");
                }
            }
        });
        Self { tx, task }
    }

    pub(crate) fn send(&self, events: Vec<StoredEvent>, note_chat: bool) {
        let _ = self.tx.send((events, note_chat));
    }

    /// Waits until everything sent is stored.
    pub(crate) async fn flush(self) {
        drop(self.tx);
        let _ = self.task.await;
    }
}

/// What the stream said so far.
#[derive(Debug, Default)]
pub(crate) struct Watch {
    /// The last event number given out.
    pub(crate) seq: i64,
    /// What the log may keep (bytes), what it kept, and what it left out past that.
    pub(crate) cap: u64,
    pub(crate) kept: u64,
    pub(crate) dropped_lines: i64,
    pub(crate) dropped_bytes: i64,
    pub(crate) chat: Option<String>,
    /// A `--resume` that the CLI answered with another chat.
    pub(crate) fresh_chat: bool,
    pub(crate) result: Option<(bool, String)>,
    pub(crate) result_at: Option<tokio::time::Instant>,
    /// Tokens so far: the turns' figures summed, until the result's replace them.
    pub(crate) turns: runs::event::Usage,
    pub(crate) final_usage: Option<runs::event::Usage>,
}

impl Watch {
    pub(crate) fn new(seq: i64, max_log_mb: u32) -> Self {
        Watch { seq, cap: u64::from(max_log_mb) << 20, ..Watch::default() }
    }

    /// Counts what an earlier part of the same log (the worktree's setup) kept and left out: the
    /// whole log answers to one limit, and says it was cut once.
    pub(crate) fn carry(&mut self, earlier: &LogUsed) {
        self.kept += earlier.kept;
        self.dropped_lines += earlier.dropped_lines;
        self.dropped_bytes += earlier.dropped_bytes;
    }

    /// What the run has spent so far, as far as the stream said.
    pub(crate) fn spent(&self) -> runs::event::Usage {
        self.final_usage.clone().unwrap_or_else(|| self.turns.clone())
    }

    pub(crate) fn dropped(&self) -> Option<runs::LogDropped> {
        (self.dropped_lines > 0).then_some(runs::LogDropped { lines: self.dropped_lines, bytes: self.dropped_bytes })
    }
}
