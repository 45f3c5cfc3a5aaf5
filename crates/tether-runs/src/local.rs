//! A local run ([`LocalCli`], the executor of `local` runs): the Cursor CLI in its own process
//! group, in its own worktree (made and readied by the run's begin) or the workspace itself, checked again and held by its handle, with the run's files placed, an allowlisted environment and the prompt on
//! stdin; its stdout parsed into events, its stderr kept; ended by its result, its exit, its
//! time limit or a cancel (SIGTERM to the group, a grace, SIGKILL), and the outcome said in
//! words a person acts on.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tether_board::runs::event::RunEvent;
use tether_board::runs::{self, Outcome, Run, RunStatus};
use tether_core::Tether;
use tether_core::executor::{Boxed, Drive, Executor, ExecutorInfo, Prepared};
use tether_core::usage::{BudgetWatch, Level};
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::blocking;
use crate::log::{Log, Watch, note, take_events};
use crate::probe::INSTALL_HINT;
use crate::stream_json::{self, StreamParser};
use crate::{files, nofollow, process};

/// How a stopped run is told apart from one that failed.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Stop {
    Cancelled,
    TimedOut,
    /// Tether itself is shutting down.
    Shutdown,
    /// It went over a budget (why).
    OverBudget(String),
}

/// The Cursor CLI on this machine, as an [`Executor`].
#[derive(Debug, Default)]
pub struct LocalCli;

impl Executor for LocalCli {
    fn kind(&self) -> &'static str {
        "local"
    }

    fn probe(&self, t: &Tether) -> ExecutorInfo {
        crate::probe::probe(t)
    }

    fn preflight(&self, t: &Tether) -> Option<String> {
        let saved = t.settings().ok().and_then(|s| s.runs.cursor_agent);
        let found = tether_core::paths::cursor_agent(saved.as_deref()).is_some();
        (!found).then(|| format!("the Cursor CLI was not found: {INSTALL_HINT}"))
    }

    fn drive<'a>(
        &'a self,
        t: &'a Arc<Tether>,
        run: &'a Prepared,
        cancel: &'a CancellationToken,
        budget: &'a Arc<BudgetWatch>,
    ) -> Boxed<'a, Drive> {
        Box::pin(async move {
            let mut held = None;
            let o = match drive(t, run, cancel, budget, &mut held).await {
                Ok(o) => o,
                Err(e) => Outcome { status: RunStatus::Failed, error: Some(e.to_string()), ..Default::default() },
            };
            // Put back in the folder the run started in (held by its handle), whatever its name
            // leads to now.
            let (t, num) = (Arc::clone(t), run.run.num());
            let _ = blocking(move || {
                files::restore_run(&t, num, held.as_ref());
                Ok(())
            })
            .await;
            Drive::Ended(o)
        })
    }
}

/// Checks the workspace again and holds it, places the files, runs the agent and watches it
/// to its end. `held` keeps the workspace's handle for putting the files back.
async fn drive(
    t: &Arc<Tether>,
    prepared: &Prepared,
    tok: &CancellationToken,
    caps: &Arc<BudgetWatch>,
    held: &mut Option<nofollow::Dir>,
) -> tether_core::Result<Outcome> {
    let t = Arc::clone(t);
    let run = &prepared.run;
    let settings = t.settings()?.runs;
    let Some((bin, _)) = tether_core::paths::cursor_agent(settings.cursor_agent.as_deref()) else {
        return Ok(failed(format!("the Cursor CLI was not found: {INSTALL_HINT}")));
    };
    // Where the agent works: the run's own worktree, else the folder itself.
    let workspace = PathBuf::from(match &run.worktree {
        Some(w) => w.workspace(),
        None => run.workspace.clone().unwrap_or_default(),
    });
    let ws = {
        let (t, r) = (Arc::clone(&t), run.clone());
        match blocking(move || {
            let ws = files::open_workspace(&t, &r)?;
            if let Some(d) = &ws {
                files::place(&t, &r, d)?;
            }
            Ok(ws)
        })
        .await
        {
            Ok(Some(ws)) => ws,
            Ok(None) => return Ok(failed("a local run needs a workspace".into())),
            Err(e) => return Ok(failed(e.to_string())),
        }
    };
    let cwd = ws.path_for_child();
    *held = Some(ws);
    let mut args: Vec<String> =
        ["-p", "--output-format", "stream-json", "--trust", "--workspace"].map(str::to_owned).into();
    args.push(workspace.to_string_lossy().into_owned());
    if let Some(m) = &run.model {
        args.extend(["--model".into(), m.clone()]);
    }
    if run.mode != runs::RunMode::Agent {
        args.extend(["--mode".into(), run.mode.as_str().into()]);
    }
    let resume = run.resume_chat.clone();
    if let Some(c) = &resume {
        args.extend(["--resume".into(), c.clone()]);
    }
    if run.mode == runs::RunMode::Agent && run.permissions.allows_writes() {
        args.push("--force".into());
    }
    let mut env = tether_core::paths::run_environment();
    if let Ok(Some((key, _))) = tether_core::token::cursor_key(&t.paths) {
        env.push(("CURSOR_API_KEY".into(), key));
    }
    let mut child = match process::spawn(&bin, &args, &env, &cwd) {
        Ok(c) => c,
        Err(e) => return Ok(failed(format!("could not start {}: {e}", bin.display()))),
    };
    if let Some(pid) = child.id() {
        let (t, num) = (Arc::clone(&t), run.num());
        let started = process::start_time(pid);
        blocking(move || t.board().runs().set_child(num, pid, started)).await?;
    }
    if let Some(mut stdin) = child.stdin.take() {
        let prompt = run.prompt.clone().into_bytes();
        tokio::spawn(async move {
            let _ = stdin.write_all(&prompt).await;
            let _ = stdin.shutdown().await;
        });
    }
    let (tx, mut rx) = mpsc::channel::<RunEvent>(4096);
    let stderr_tail = Arc::new(Mutex::new(Vec::<String>::new()));
    let mut traced = crate::trace::RunTrace::new(Arc::clone(&t), run.id.clone(), workspace.clone(), run.model.clone());
    let tracing_edits = traced.pending();
    let out_reader = child.stdout.take().map(|out| {
        let tx = tx.clone();
        tokio::spawn(async move {
            let mut r = BufReader::new(out);
            let mut parser = StreamParser::new(false);
            let mut buf = Vec::new();
            while let Ok(Some(())) = process::next_line(&mut r, &mut buf).await {
                traced.observe(&buf);
                if let Some(ev) = parser.parse(&buf)
                    && tx.send(ev).await.is_err()
                {
                    break;
                }
            }
        })
    });
    let err_reader = child.stderr.take().map(|err| {
        let (tx, tail) = (tx.clone(), Arc::clone(&stderr_tail));
        tokio::spawn(async move {
            let mut r = BufReader::new(err);
            let mut buf = Vec::new();
            while let Ok(Some(())) = process::next_line(&mut r, &mut buf).await {
                let text = String::from_utf8_lossy(&buf).trim_end().to_owned();
                if text.trim().is_empty() {
                    continue;
                }
                {
                    let mut t = tail.lock().unwrap_or_else(|p| p.into_inner());
                    if t.len() >= 40 {
                        t.remove(0);
                    }
                    t.push(text.clone());
                }
                if tx.send(RunEvent::Stderr { text }).await.is_err() {
                    break;
                }
            }
        })
    });
    drop(tx);

    let kill_grace = Duration::from_secs(u64::from(settings.kill_grace_secs));
    let result_grace = Duration::from_secs(u64::from(settings.result_grace_secs));
    let deadline = tokio::time::Instant::now() + Duration::from_millis(run.timeout_secs.max(1) as u64 * 1000);
    let seq = {
        let (t, num) = (Arc::clone(&t), run.num());
        blocking(move || t.board().runs().last_seq(num)).await?
    };
    let mut watch = Watch::new(seq, settings.max_log_mb);
    watch.carry(&prepared.log);
    let log = Log::start(Arc::clone(&t), run.num());
    let mut lingered = false;
    let mut stopped: Option<Stop> = None;
    let mut exit: Option<std::process::ExitStatus> = None;
    let mut events_open = true;
    loop {
        let grace_end = watch.result_at.map(|at| at + result_grace);
        tokio::select! {
            ev = rx.recv(), if events_open => match ev {
                Some(first) => {
                    take_events(&t.bus, run, first, &mut rx, &mut watch, &log, resume.as_deref());
                    // Over by a turn's figures: stopped now. Over by the result's, the CLI is done
                    // already: it exits as usual (its chat saved) and the run is marked at its end.
                    if watch.final_usage.is_none()
                        && let Some(why) = over_budget(&t, run, caps, &mut watch, &log).await
                    {
                        stopped = Some(Stop::OverBudget(why));
                        break;
                    }
                }
                None => events_open = false,
            },
            st = child.wait(), if exit.is_none() => {
                exit = st.ok();
                break;
            }
            _ = tokio::time::sleep_until(deadline), if stopped.is_none() => {
                stopped = Some(Stop::TimedOut);
                break;
            }
            _ = tok.cancelled(), if stopped.is_none() => {
                // Our own cancel, or Tether shutting down (the parent token).
                let asked = {
                    let t = Arc::clone(&t);
                    let id = run.id.clone();
                    blocking(move || t.board().runs().get_run(&id)).await.map(|r| r.cancel_requested).unwrap_or(false)
                };
                stopped = Some(if asked { Stop::Cancelled } else { Stop::Shutdown });
                break;
            }
            _ = sleep_until_opt(grace_end), if grace_end.is_some() => {
                lingered = true;
                break;
            }
        }
    }
    if exit.is_none() {
        process::stop_group(&mut child, kill_grace).await;
        exit = child.try_wait().ok().flatten();
    } else if let Some(pid) = child.id() {
        // The CLI is gone; anything it started in its group goes with it.
        process::signal_group(pid, process::Sig::Kill);
    }
    // What is still in the pipes belongs to the run's log: read until both readers end
    // (every line kept however much there is), unless nothing comes for 2 s (something
    // outside the process group holds the pipe open).
    while let Ok(Some(first)) = tokio::time::timeout(Duration::from_secs(2), rx.recv()).await {
        take_events(&t.bus, run, first, &mut rx, &mut watch, &log, resume.as_deref());
    }
    for r in [out_reader, err_reader].into_iter().flatten() {
        r.abort();
    }
    crate::trace::settle(&tracing_edits).await;
    // Known only from the final figures: marked when it ends (no warning then: it is over).
    if stopped.is_none()
        && let Level::Over(why) = caps.check(&watch.spent(), None)
    {
        stopped = Some(Stop::OverBudget(why));
    }
    log.flush().await;
    let stderr = stderr_tail.lock().unwrap_or_else(|p| p.into_inner()).join("\n");
    Ok(outcome(OutcomeInput {
        stopped: stopped.clone(),
        exit,
        lingered,
        result_grace,
        watch: &watch,
        stderr: &stderr,
        timeout_secs: run.timeout_secs,
        resume: resume.as_deref(),
    }))
}

struct OutcomeInput<'a> {
    stopped: Option<Stop>,
    exit: Option<std::process::ExitStatus>,
    lingered: bool,
    result_grace: Duration,
    watch: &'a Watch,
    stderr: &'a str,
    timeout_secs: i64,
    resume: Option<&'a str>,
}

/// How the run ended, in words a person acts on.
fn outcome(i: OutcomeInput<'_>) -> Outcome {
    let exit_code = i.exit.and_then(|e| e.code()).map(i64::from);
    let mut warning = None;
    if i.watch.fresh_chat {
        warning = Some(format!(
            "asked to continue chat {}, but the Cursor CLI started a fresh chat {} (the earlier conversation is not in it)",
            i.resume.unwrap_or("?"),
            i.watch.chat.as_deref().unwrap_or("?")
        ));
    }
    match i.stopped {
        Some(Stop::OverBudget(why)) => {
            return Outcome {
                status: RunStatus::OverBudget,
                exit_code,
                error: Some(why),
                warning,
                log_dropped: i.watch.dropped(),
            };
        }
        Some(Stop::Cancelled) => {
            return Outcome {
                status: RunStatus::Cancelled,
                exit_code,
                error: Some("cancelled".into()),
                warning,
                log_dropped: i.watch.dropped(),
            };
        }
        Some(Stop::TimedOut) => {
            let m = i.timeout_secs / 60;
            let limit = if m >= 1 { format!("{m} min") } else { format!("{} s", i.timeout_secs) };
            return Outcome {
                status: RunStatus::TimedOut,
                exit_code,
                error: Some(format!("ran past its time limit of {limit}; stopped")),
                warning,
                log_dropped: i.watch.dropped(),
            };
        }
        Some(Stop::Shutdown) => {
            return Outcome {
                status: RunStatus::Lost,
                exit_code,
                error: Some("Tether stopped while the run was going (its agent was stopped too)".into()),
                warning,
                log_dropped: i.watch.dropped(),
            };
        }
        None => {}
    }
    if i.lingered && warning.is_none() {
        warning = Some(format!(
            "the Cursor CLI did not exit {} s after its result; Tether ended it",
            i.result_grace.as_secs()
        ));
    }
    match &i.watch.result {
        Some((false, _)) => {
            Outcome { status: RunStatus::Succeeded, exit_code, error: None, warning, log_dropped: i.watch.dropped() }
        }
        Some((true, text)) => {
            let why =
                if text.trim().is_empty() { "the agent reported an error".to_owned() } else { text.trim().to_owned() };
            Outcome { status: RunStatus::Failed, exit_code, error: Some(why), warning, log_dropped: i.watch.dropped() }
        }
        None => {
            let first = i.stderr.lines().map(str::trim).find(|l| !l.is_empty());
            let unknown_chat = i.resume.is_some() && stream_json::is_unknown_chat_error(i.stderr);
            let why = if unknown_chat {
                format!(
                    "the Cursor CLI cannot continue chat {} ({})",
                    i.resume.unwrap_or("?"),
                    first.unwrap_or("unknown chat")
                )
            } else {
                match (stream_json::explain_failure(i.stderr), first, exit_code) {
                    (Some(plain), Some(line), _) => format!("{plain} ({line})"),
                    (Some(plain), None, _) => plain.to_owned(),
                    (None, Some(line), _) => line.to_owned(),
                    (None, None, Some(0)) => "the Cursor CLI exited without a result".to_owned(),
                    (None, None, Some(c)) => format!("the Cursor CLI exited with code {c} and said nothing"),
                    (None, None, None) => "the Cursor CLI was killed by a signal".to_owned(),
                }
            };
            Outcome { status: RunStatus::Failed, exit_code, error: Some(why), warning, log_dropped: i.watch.dropped() }
        }
    }
}

/// Where the run stands against its budgets after the events just taken: warned once past 80 %
/// (the log, the bus, a signal to its agent); over, why it stops.
async fn over_budget(
    t: &Arc<Tether>,
    run: &Run,
    caps: &Arc<BudgetWatch>,
    watch: &mut Watch,
    log: &Log,
) -> Option<String> {
    if caps.is_empty() {
        return None;
    }
    match caps.check(&watch.spent(), None) {
        Level::Under => None,
        Level::Over(why) => Some(why),
        Level::Warn(msg) => {
            note(&t.bus, run, RunEvent::status("budget_warning", Some(msg.clone())), watch, log);
            let (t, caps) = (Arc::clone(t), Arc::clone(caps));
            let _ = blocking(move || caps.warn(&t, &msg)).await;
            None
        }
    }
}

fn failed(msg: String) -> Outcome {
    Outcome { status: RunStatus::Failed, error: Some(msg), ..Default::default() }
}

async fn sleep_until_opt(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}
