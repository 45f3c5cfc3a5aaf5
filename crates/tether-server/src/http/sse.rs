//! The GUI's Server-Sent Events: the daemon's event stream (`/api/events`: every board write,
//! index progress and settings change once, from the bus) and one run's log (`/api/runs/{id}/
//! events`: its backlog read from the store a page at a time, then live until it ends). A
//! subscriber that falls behind is told so and caught up from the store, so it holds at most a
//! page and the bus's buffer in memory, however big the run.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Path, Query, State};
use axum::response::sse::{Event as Sse_, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt;
use serde::Deserialize;
use serde_json::json;
use tether_core::events::{Event, RunLog};
use tether_core::model::runs::{RunStatus, StoredEvent};
use tether_core::ops;
use tokio::sync::broadcast::Receiver;
use tokio::sync::broadcast::error::RecvError;

use super::error::{ApiError, run};
use crate::state::Ctx;

fn keep_alive() -> KeepAlive {
    KeepAlive::new().interval(Duration::from_secs(15))
}

/// `hello`, then every event with a GUI name, as it happens.
pub(crate) async fn events(State(ctx): State<Ctx>) -> Response {
    let rx = ctx.tether.bus.subscribe();
    let hello = Sse_::default().event("hello").json_data(json!({"version": env!("CARGO_PKG_VERSION")}));
    let first = futures_util::stream::iter(hello.ok().map(Ok::<_, Infallible>));
    let rest = futures_util::stream::unfold(rx, |mut rx| async move {
        loop {
            match rx.recv().await {
                Ok(ev) => {
                    if let Some(e) = gui_event(&ev) {
                        return Some((Ok(e), rx));
                    }
                }
                // A slow reader missed some: it refetches everything.
                Err(RecvError::Lagged(_)) => {
                    return Some((Ok(Sse_::default().event("sessions").data("{\"ids\":null}")), rx));
                }
                Err(RecvError::Closed) => return None,
            }
        }
    });
    Sse::new(futures_util::StreamExt::chain(first, rest)).keep_alive(keep_alive()).into_response()
}

/// The SSE form of a bus event: its name and its data (`None` for component-only events).
pub(crate) fn gui_event(ev: &Event) -> Option<Sse_> {
    let name = ev.name()?;
    let data = serde_json::to_value(ev).ok()?.get("data").cloned().unwrap_or(json!({}));
    Sse_::default().event(name).json_data(data).ok()
}

#[derive(Deserialize, Default, ts_rs::TS)]
#[ts(export, export_to = "server.ts", rename = "RunEventsQuery", optional_fields)]
pub(crate) struct RunEventsParams {
    /// Replay events after this one (0: from the start).
    after: Option<i64>,
}

/// A run's events (`events`: a batch of stored events; `status` when it changes; `lagged` when
/// this subscriber fell behind the live log): what is stored after `after` first, then live
/// until the run ends.
pub(crate) async fn run_events(
    State(ctx): State<Ctx>,
    Path(id): Path<String>,
    Query(p): Query<RunEventsParams>,
) -> Result<Response, ApiError> {
    // Subscribe before reading the backlog, so nothing falls between the two.
    let live = ctx.tether.bus.subscribe_run_log();
    let key = id.clone();
    let detail = run(&ctx, move |t| ops::runs::get(t, &key, None, Some(0))).await?;
    let follow = Follow {
        ctx: Arc::clone(&ctx),
        live: (!detail.run.status.is_terminal()).then_some(live),
        run: detail.run.id,
        status: Some(detail.run.status),
        last: p.after.unwrap_or(0),
        catching_up: true,
    };
    let stream = futures_util::stream::unfold(follow, |mut f| async move {
        let ev = f.next().await?;
        Some((ev, f))
    });
    Ok(Sse::new(stream.map(Ok::<_, Infallible>)).keep_alive(keep_alive()).into_response())
}

/// Events read from the store per step while catching up.
const PAGE: usize = 500;
/// How often a team's run log is read for what another machine's runner wrote.
const TEAM_TICK: std::time::Duration = std::time::Duration::from_millis(500);

struct Follow {
    ctx: Ctx,
    live: Option<Receiver<RunLog>>,
    run: String,
    /// The status to say once caught up (then cleared).
    status: Option<RunStatus>,
    last: i64,
    catching_up: bool,
}

impl Follow {
    async fn stored_after(&self, after: i64, limit: usize) -> Vec<StoredEvent> {
        let id = self.run.clone();
        run(&self.ctx, move |t| ops::runs::events_after(t, &id, after, limit)).await.unwrap_or_default()
    }

    fn batch(&mut self, events: &[StoredEvent]) -> Option<Sse_> {
        let end = events.last()?.seq;
        self.last = end;
        let items: Vec<String> = events.iter().filter_map(|e| serde_json::to_string(e).ok()).collect();
        Some(Sse_::default().event("events").id(end.to_string()).data(format!("[{}]", items.join(","))))
    }

    async fn next(&mut self) -> Option<Sse_> {
        loop {
            if self.catching_up {
                let page = self.stored_after(self.last, PAGE).await;
                if page.len() < PAGE {
                    self.catching_up = false;
                }
                if let Some(ev) = self.batch(&page) {
                    return Some(ev);
                }
                continue;
            }
            if let Some(st) = self.status.take() {
                return Sse_::default().event("status").json_data(json!({"run": self.run, "status": st})).ok();
            }
            let in_team = self.ctx.tether.in_team();
            let rx = self.live.as_mut()?;
            // On a team's board another machine's runner may be running it: its events reach
            // this machine only through the database, so they are read every tick too.
            let got = if in_team {
                tokio::select! {
                    r = rx.recv() => Some(r),
                    _ = tokio::time::sleep(TEAM_TICK) => None,
                }
            } else {
                Some(rx.recv().await)
            };
            let Some(got) = got else {
                let page = self.stored_after(self.last, PAGE).await;
                if let Some(ev) = self.batch(&page) {
                    return Some(ev);
                }
                let id = self.run.clone();
                if let Ok(d) = run(&self.ctx, move |t| ops::runs::get(t, &id, None, Some(0))).await
                    && d.run.status.is_terminal()
                {
                    self.live = None;
                    self.catching_up = true;
                    self.status = Some(d.run.status);
                }
                continue;
            };
            match got {
                Ok(RunLog::Events { run, events }) if run == self.run => {
                    let fresh: Vec<StoredEvent> = events.iter().filter(|e| e.seq > self.last).cloned().collect();
                    let Some(first) = fresh.first().map(|e| e.seq) else { continue };
                    if first > self.last + 1 {
                        // Shown live before this subscriber came: the store has them (or will in
                        // a moment: the log is written right behind the live view).
                        let mut gap = self.stored_after(self.last, (first - self.last - 1) as usize).await;
                        gap.retain(|e| e.seq < first);
                        gap.extend(fresh);
                        return self.batch(&gap);
                    }
                    return self.batch(&fresh);
                }
                Ok(RunLog::Status { run, status }) if run == self.run => {
                    if status.is_terminal() {
                        // Whatever was stored before the end, then the end.
                        self.live = None;
                        self.catching_up = true;
                    }
                    self.status = Some(status);
                }
                Ok(_) => {}
                Err(RecvError::Lagged(n)) => {
                    self.catching_up = true;
                    return Sse_::default()
                        .event("lagged")
                        .json_data(json!({"run": self.run, "skipped_updates": n, "after": self.last}))
                        .ok();
                }
                Err(RecvError::Closed) => return None,
            }
        }
    }
}
