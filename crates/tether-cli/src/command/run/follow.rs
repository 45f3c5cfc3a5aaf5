//! A queued run, seen to its end: the daemon takes it when one runs, else this process runs it
//! in the foreground; following prints its events as a readable log and then how it ended.
//! Shared by `tether run`, `tether runs` and `tether cloud launch`.

use std::sync::Arc;
use std::time::Duration;

use tether_core::Tether;
use tether_core::model::runs::{Run, RunStatus, StoredEvent};
use tether_core::ops::{self, Principal};

use crate::render::{self, bold, cut, dim};
use crate::rt;

/// Queued: when a daemon runs, it takes the run (print the id, or follow); otherwise run it here.
/// Exits 1 when a run followed to its end did not succeed.
pub fn start_or_follow(t: Tether, me: &Principal, r: Run, follow: bool, json: bool) -> anyhow::Result<()> {
    // A run for another machine (or for runners with labels) is the team's runners' to run.
    let elsewhere = r.on.as_ref().is_some_and(|m| Some(m) != t.board_db().machine().as_ref()) || !r.labels.is_empty();
    let daemon = elsewhere || tether_core::daemon::running(&t.paths).is_some();
    if daemon && !follow {
        if json {
            return render::json(&r);
        }
        let by = match (&r.on, r.labels.is_empty()) {
            _ if !elsewhere => "the daemon runs it".to_owned(),
            (Some(m), _) => format!("{m}'s runner runs it"),
            (None, _) => format!("a team runner with labels {} runs it", r.labels.join(", ")),
        };
        println!("{} queued ({by}). Follow it: tether runs logs {} --follow", r.id, r.id);
        return Ok(());
    }
    if !json {
        if daemon {
            eprintln!("{} queued; the daemon runs it (Ctrl-C stops following, not the run)", r.id);
        } else {
            eprintln!(
                "{} queued; no Tether daemon is running, so it runs here until it ends (Ctrl-C cancels it)",
                r.id
            );
        }
    }
    let rt = rt::multi_thread()?;
    let t = Arc::new(t);
    let id = r.id.clone();
    let end = rt.block_on(async {
        let runner = (!daemon).then(|| tether_runs::Runner::start_for(Arc::clone(&t), &r));
        let interrupted = rt::shutdown_signal()?;
        let follow = follow_events(&t, &id, !json, !daemon);
        tokio::pin!(interrupted);
        tokio::pin!(follow);
        let end = tokio::select! {
            r = &mut follow => r,
            _ = &mut interrupted => {
                if runner.is_some() {
                    eprintln!("\ncancelling {id} …");
                    let (t2, key, me) = (Arc::clone(&t), id.clone(), me.clone());
                    tokio::task::spawn_blocking(move || ops::runs::cancel(&t2, &me, &key)).await??;
                    follow.await
                } else {
                    return Ok::<_, anyhow::Error>(None);
                }
            }
        };
        if let Some(h) = runner {
            h.stop().await;
        }
        end.map(Some)
    })?;
    let Some(run) = end else { return Ok(()) };
    if json {
        render::json(&run)?;
    } else {
        print_summary(&run);
    }
    if run.status == RunStatus::Succeeded { Ok(()) } else { std::process::exit(1) }
}

/// Prints events (when `print`) until the run ends (or, with `until_held`, is held for the
/// person: this process will not run it); returns it as it ended.
pub async fn follow_events(t: &Arc<Tether>, id: &str, print: bool, until_held: bool) -> anyhow::Result<Run> {
    let mut seq = 0;
    let mut r = EventPrinter::default();
    loop {
        let (events, run) = {
            let (t, key) = (Arc::clone(t), id.to_owned());
            tokio::task::spawn_blocking(move || {
                let events = ops::runs::events_after(&t, &key, seq, 1000)?;
                let run = ops::runs::get(&t, &key, None, Some(0))?.run;
                Ok::<_, tether_core::Error>((events, run))
            })
            .await??
        };
        for e in &events {
            seq = e.seq;
            if print {
                r.print(e);
            }
        }
        if (run.status.is_terminal() || (until_held && run.held.is_some())) && events.is_empty() {
            r.finish();
            return Ok(run);
        }
        if events.is_empty() {
            tokio::time::sleep(Duration::from_millis(150)).await;
        }
    }
}

/// How a run ended: status, time, tokens, error, its chat and, for a cloud run, branch and PR.
pub fn print_summary(r: &Run) {
    let took = r.duration_ms.map(|ms| format!(" in {:.1} s", ms as f64 / 1000.0)).unwrap_or_default();
    let tokens = r
        .usage
        .as_ref()
        .map(|u| {
            format!(
                ", {} in / {} out tokens",
                u.input_tokens + u.cache_read_tokens + u.cache_write_tokens,
                u.output_tokens
            )
        })
        .unwrap_or_default();
    let cost = r.cost_usd.map(|c| format!(", ${c:.2}")).unwrap_or_default();
    let budget = r.budget.map(|b| format!(" (budget {b})")).unwrap_or_default();
    println!("{} {}{took}{tokens}{cost}{budget}", bold(&r.id), r.status);
    if let Some(h) = &r.held {
        let how = if h == "daily" {
            "it goes when today's budget allows (tomorrow, or raise usage.daily_budget) and a daemon runs".to_owned()
        } else {
            format!("approve it (tether runs approve {}) and a daemon (tether serve) runs it", r.id)
        };
        println!("  held ({h}): {how}");
    }
    if let Some(e) = &r.error {
        println!("  error: {e}");
    }
    if let Some(w) = &r.warning {
        println!("  note: {w}");
    }
    if let Some(c) = &r.chat_id {
        let what = if r.is_cloud() { "Cursor Cloud agent" } else { "Cursor chat" };
        println!("  {what} {c} (tether sessions show {c}; follow up: tether runs followup {} \"…\")", r.id);
    }
    match (&r.worktree, &r.in_place) {
        (Some(w), _) => {
            let changed = r
                .changes
                .map(|c| format!(" · {} files +{} −{} (tether runs diff {})", c.files, c.added, c.deleted, r.id))
                .unwrap_or_default();
            let state = match (&w.merged_into, &w.removed_why) {
                (Some(into), _) => format!(" · merged into {into}"),
                (None, Some(why)) => format!(" · worktree removed ({why})"),
                _ => format!(" · in {}", w.path),
            };
            println!("  branch {}{changed}{state}", w.branch);
        }
        (None, Some(why)) => println!("  worked in place: {why}"),
        _ => {}
    }
    if let Some(c) = &r.cloud {
        if let Some(u) = &c.agent_url {
            println!("  at Cursor: {u}");
        }
        if let Some(b) = &c.pushed_branch {
            println!("  branch {b}{}", c.pr_url.as_deref().map(|p| format!(" · PR {p}")).unwrap_or_default());
        }
    }
}

/// Renders run events as a readable log: assistant text as it comes, tool calls on one line
/// each, thinking folded.
#[derive(Default)]
pub struct EventPrinter {
    /// Inside assistant text (no newline printed yet).
    mid_text: bool,
    thinking: bool,
}

impl EventPrinter {
    pub fn print(&mut self, e: &StoredEvent) {
        use tether_core::model::runs::RunEvent as E;
        let line = |p: &mut Self, s: String| {
            if p.mid_text {
                println!();
                p.mid_text = false;
            }
            println!("{s}");
        };
        match &e.event {
            E::Assistant { text, partial } => {
                self.thinking = false;
                if *partial {
                    print!("{text}");
                    self.mid_text = true;
                } else {
                    line(self, text.clone());
                }
            }
            E::Thinking { .. } if self.thinking => {}
            E::Thinking { .. } => {
                self.thinking = true;
                line(self, dim("(thinking…)"));
            }
            E::Init { session_id, model, .. } => line(
                self,
                dim(&format!(
                    "▸ {} {session_id} · {}",
                    // Cursor's cloud agent ids are `bc-<uuid>`; the CLI's chats are bare uuids.
                    if session_id.starts_with("bc-") { "Cursor Cloud agent" } else { "Cursor chat" },
                    model.as_deref().unwrap_or("default model")
                )),
            ),
            E::User { text } => line(self, format!("{} {}", bold("you:"), cut(text.trim(), 200))),
            E::ToolCall { tool, phase, path, command, outcome, .. } => {
                self.thinking = false;
                let what = command.clone().or_else(|| path.clone()).unwrap_or_default();
                match phase.as_str() {
                    "started" => line(self, dim(&format!("  ⚙ {tool} {}", cut(&what, 100)))),
                    _ => {
                        let o = outcome.as_deref().unwrap_or("done");
                        let mark = if o == "success" { "✓" } else { "✗" };
                        line(self, dim(&format!("  {mark} {tool} {} ({o})", cut(&what, 80))));
                    }
                }
            }
            E::Result { is_error, duration_ms, .. } => {
                let took = duration_ms.map(|ms| format!(" in {:.1} s", ms as f64 / 1000.0)).unwrap_or_default();
                line(
                    self,
                    bold(&format!("— {}{took}", if *is_error { "the agent reported an error" } else { "result" })),
                );
            }
            // A turn's tokens: the run's total is said at its end.
            E::Usage { .. } => {}
            E::Notice { text } => line(self, dim(&format!("  ({text})"))),
            E::Stderr { text } => line(self, dim(&format!("  stderr: {}", cut(text, 300)))),
            E::Raw { text, .. } => line(self, dim(&format!("  ? {}", cut(text, 200)))),
            E::Status { status, message } => {
                let m = message.as_deref().map(|m| format!(": {m}")).unwrap_or_default();
                line(self, dim(&format!("[{status}{m}]")));
            }
        }
    }

    pub fn finish(&mut self) {
        if self.mid_text {
            println!();
            self.mid_text = false;
        }
    }
}
