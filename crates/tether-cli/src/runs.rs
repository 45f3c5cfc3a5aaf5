//! `tether run`, `tether runs …` and `tether cursor-key …`: one thin call into the core per
//! subcommand. A run is queued in the database; the daemon's runner takes it (it watches the
//! database), and without a daemon this process runs it in the foreground until it ends.

use std::io::{IsTerminal, Read};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use tether_core::Tether;
use tether_core::board::runs::{NewRun, Permissions, Run, RunFilter, RunStatus};

use crate::cli::{CloudCmd, CloudLaunchArgs, CursorKeyCmd, RunArgs, RunsCmd};
use crate::output;

fn requested_by() -> String {
    std::env::var("TETHER_USER").or_else(|_| std::env::var("USER")).unwrap_or_else(|_| "me".into())
}

pub fn run(t: Tether, a: RunArgs) -> anyhow::Result<()> {
    let workspace = match (&a.workspace, &a.task) {
        (Some(w), _) => Some(w.to_string_lossy().into_owned()),
        (None, Some(_)) => None,
        (None, None) => {
            Some(std::env::current_dir().context("reading the working directory")?.to_string_lossy().into_owned())
        }
    };
    let new = NewRun {
        prompt: a.prompt,
        task: a.task,
        workspace,
        model: a.model,
        mode: a.mode.as_deref().map(str::parse).transpose()?,
        role: a.role,
        timeout_secs: a.timeout.as_deref().map(parse_duration).transpose()?,
        permissions: Permissions { allow: a.allow, deny: a.deny },
        complete: a.complete,
        ..Default::default()
    };
    let r = t.queue_run(&requested_by(), &new)?;
    start_or_follow(t, r, a.follow, a.out.json)
}

/// Queued: when a daemon runs, it takes the run (print the id, or follow); otherwise run it here.
fn start_or_follow(t: Tether, r: Run, follow: bool, json: bool) -> anyhow::Result<()> {
    let daemon = tether_core::daemon::running(&t.paths).is_some();
    if daemon && !follow {
        if json {
            return output::json(&r);
        }
        println!("{} queued (the daemon runs it). Follow it: tether runs logs {} --follow", r.id, r.id);
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
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    let t = Arc::new(t);
    let id = r.id.clone();
    let end = rt.block_on(async {
        let runner = (!daemon).then(|| tether_runs::Runner::start_for(Arc::clone(&t), &r));
        let interrupted = crate::commands::shutdown_signal()?;
        let follow = follow_events(&t, &id, !json);
        tokio::pin!(interrupted);
        tokio::pin!(follow);
        let end = tokio::select! {
            r = &mut follow => r,
            _ = &mut interrupted => {
                if runner.is_some() {
                    eprintln!("\ncancelling {id} …");
                    let (t2, key) = (Arc::clone(&t), id.clone());
                    let me = tether_core::ops::Principal::person(&requested_by());
                    tokio::task::spawn_blocking(move || tether_core::ops::runs::cancel(&t2, &me, &key)).await??;
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
        output::json(&run)?;
    } else {
        output::run_summary(&run);
    }
    if run.status == RunStatus::Succeeded { Ok(()) } else { std::process::exit(1) }
}

/// Prints events (when `print`) until the run ends; returns it as it ended.
async fn follow_events(t: &Arc<Tether>, id: &str, print: bool) -> anyhow::Result<Run> {
    let mut seq = 0;
    let mut r = output::EventPrinter::default();
    loop {
        let (events, run) = {
            let (t, key) = (Arc::clone(t), id.to_owned());
            tokio::task::spawn_blocking(move || {
                let b = t.board();
                let events = b.run_events_after(&key, seq, 1000)?;
                let run = b.run(&key, Some(0))?.run;
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
        if run.status.is_terminal() && events.is_empty() {
            r.finish();
            return Ok(run);
        }
        if events.is_empty() {
            tokio::time::sleep(Duration::from_millis(150)).await;
        }
    }
}

pub fn runs(t: Tether, cmd: RunsCmd) -> anyhow::Result<()> {
    let b = t.board();
    match cmd {
        RunsCmd::List { statuses, task, limit, out } => {
            let statuses = statuses.iter().map(|s| s.parse()).collect::<Result<Vec<RunStatus>, _>>()?;
            let list = b.runs(&RunFilter { statuses, task, chat: None, limit })?;
            if out.json {
                output::json(&list)
            } else {
                output::runs(&list);
                Ok(())
            }
        }
        RunsCmd::Show { id, events, out } => {
            let d = b.run(&id, if events { None } else { Some(0) })?;
            if out.json {
                output::json(&d)
            } else {
                output::run_detail(&d);
                Ok(())
            }
        }
        RunsCmd::Logs { id, follow } => {
            b.run(&id, Some(0))?;
            if follow {
                let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
                rt.block_on(follow_events(&Arc::new(t), &id, true))?;
            } else {
                // A page at a time: a big run's log is never held whole.
                let mut p = output::EventPrinter::default();
                let mut after = 0;
                loop {
                    let page = b.run_events_after(&id, after, 1000)?;
                    for e in &page {
                        p.print(e);
                    }
                    match page.last() {
                        Some(e) if page.len() == 1000 => after = e.seq,
                        _ => break,
                    }
                }
                p.finish();
            }
            Ok(())
        }
        RunsCmd::Cancel { id, out } => {
            let r = b.cancel_run(&id)?;
            if out.json {
                output::json(&r)
            } else {
                match r.status {
                    RunStatus::Cancelled => println!("{} cancelled before it started.", r.id),
                    _ => println!("{}: asked to stop; its runner ends it within a second.", r.id),
                }
                Ok(())
            }
        }
        RunsCmd::Approve { id, out } => {
            let r = b.approve_run(&id)?;
            if out.json {
                output::json(&r)
            } else {
                println!("{} approved; it starts when a runner is free.", r.id);
                Ok(())
            }
        }
        RunsCmd::Followup { id, prompt, follow, out } => {
            let r = t.followup_run(&requested_by(), &id, &prompt)?;
            start_or_follow(t, r, follow, out.json)
        }
    }
}

/// A key typed at the prompt, or all of stdin when it is not a terminal.
fn read_key() -> anyhow::Result<String> {
    if std::io::stdin().is_terminal() {
        eprint!("Cursor API key (from cursor.com/dashboard → Integrations): ");
        let mut line = String::new();
        std::io::stdin().read_line(&mut line)?;
        Ok(line)
    } else {
        let mut all = String::new();
        std::io::stdin().take(64 * 1024).read_to_string(&mut all)?;
        Ok(all)
    }
}

pub fn cloud(t: Tether, cmd: CloudCmd) -> anyhow::Result<()> {
    use tether_core::token;
    match cmd {
        CloudCmd::Launch(a) => launch(t, a),
        CloudCmd::Login { key_stdin } => {
            if key_stdin && std::io::stdin().is_terminal() {
                anyhow::bail!(
                    "--key-stdin reads the key from a pipe: `printf %s \"$KEY\" | tether cloud login --key-stdin`"
                );
            }
            let key = read_key()?.trim().to_owned();
            anyhow::ensure!(!key.is_empty(), "no key given");
            let settings = t.settings()?;
            let base = tether_cloud::client::base_url(settings.cloud.api_url.as_deref())?;
            let client = tether_cloud::Client::new(&base, key.clone())?;
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
            let me = rt.block_on(client.me()).context("checking the key with Cursor")?;
            token::set_cursor_key(&t.paths, &key)?;
            println!(
                "Logged in{}: the key is kept in {} and used by cloud runs and runs of the Cursor CLI.",
                me.user_email.map(|e| format!(" as {e}")).unwrap_or_default(),
                match token::backend(&t.paths) {
                    token::Backend::Keyring => "the OS keyring",
                    _ => "the data dir's 0600 key file",
                }
            );
            if std::env::var_os("CURSOR_API_KEY").is_some() {
                eprintln!("Note: CURSOR_API_KEY is set in this environment and wins over the stored key.");
            }
            Ok(())
        }
        CloudCmd::Logout => {
            token::forget_cursor_key(&t.paths)?;
            println!("Logged out: the stored Cursor API key is forgotten.");
            Ok(())
        }
        CloudCmd::Webhook { public_url, off } => {
            use tether_core::settings::{CloudSettingsPatch, Settings, SettingsPatch};
            let url = if off { None } else { public_url };
            let patch = SettingsPatch {
                cloud: Some(CloudSettingsPatch { public_url: Some(url.clone()), ..Default::default() }),
                ..Default::default()
            };
            let s = Settings::update(&t.paths, &patch)?;
            match s.cloud.public_url {
                Some(u) => {
                    token::webhook_secret(&t.paths)?;
                    let port = tether_core::daemon::running(&t.paths).and_then(|d| d.port).unwrap_or(47821);
                    println!(
                        "On. New cloud launches ask Cursor to post to {} (signed with a secret kept in {}), and tell the \
                         agent how to call back through {u}.\nExpose this Tether there, e.g. `cloudflared tunnel --url \
                         http://127.0.0.1:{port}` or `tailscale funnel {port}`; only the webhook and callback routes \
                         answer a public host name.",
                        tether_cloud::webhook::url(&u),
                        match token::backend(&t.paths) {
                            token::Backend::Keyring => "the OS keyring",
                            _ => "the data dir",
                        }
                    );
                }
                None => println!("Off: cloud runs are followed by their stream and by polling."),
            }
            Ok(())
        }
        CloudCmd::Doctor { repo, model, verify_repo, out } => {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
            let ask = tether_cloud::doctor::Ask { repo, model, verify_repo, cwd_repo: true };
            let checks = rt.block_on(tether_cloud::doctor::run(&t, &ask));
            let failed = checks.iter().any(|c| c.status == "fail");
            if out.json {
                output::json(&checks)?;
            } else {
                for c in &checks {
                    let mark = match c.status {
                        "ok" => "ok  ",
                        "warn" => "warn",
                        _ => "FAIL",
                    };
                    println!("{mark} {:<11} {}", c.name, c.detail);
                    if let Some(f) = &c.fix {
                        println!("     {:<11} → {f}", "");
                    }
                }
            }
            if failed { std::process::exit(1) } else { Ok(()) }
        }
    }
}

fn launch(t: Tether, a: CloudLaunchArgs) -> anyhow::Result<()> {
    let new = NewRun {
        prompt: a.prompt,
        task: a.task,
        workspace: std::env::current_dir().ok().map(|d| d.to_string_lossy().into_owned()),
        model: a.model,
        mode: a.mode.as_deref().map(str::parse).transpose()?,
        role: a.role,
        timeout_secs: a.timeout.as_deref().map(parse_duration).transpose()?,
        complete: a.complete,
        place: Some("cloud".into()),
        repo: a.repo,
        git_ref: a.git_ref,
        branch: a.branch,
        auto_pr: a.auto_pr,
        ..Default::default()
    };
    let r = t.queue_run(&requested_by(), &new)?;
    start_or_follow(t, r, a.follow, a.out.json)
}

pub fn cursor_key(paths: &tether_core::Paths, cmd: CursorKeyCmd) -> anyhow::Result<()> {
    use tether_core::token;
    match cmd {
        CursorKeyCmd::Set => {
            let key = read_key()?;
            token::set_cursor_key(paths, &key)?;
            println!(
                "Stored. Runs of the Cursor CLI get it as CURSOR_API_KEY (CURSOR_API_KEY in Tether's own environment wins)."
            );
        }
        CursorKeyCmd::Clear => {
            token::forget_cursor_key(paths)?;
            println!("Forgotten.");
        }
        CursorKeyCmd::Status => match token::cursor_key(paths)? {
            Some((_, token::KeySource::Env)) => println!("set, from CURSOR_API_KEY in the environment"),
            Some((_, token::KeySource::Stored)) => println!("set, stored by `tether cursor-key set`"),
            None => println!("not set (the Cursor CLI then uses its own login: `agent login`)"),
        },
    }
    Ok(())
}

/// `90s`, `10m`, `1h`, or plain seconds.
fn parse_duration(s: &str) -> anyhow::Result<u64> {
    let s = s.trim();
    let (n, unit) = s.split_at(s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len()));
    let n: u64 = n.parse().with_context(|| format!("{s:?} is not a duration (e.g. 90s, 10m, 1h)"))?;
    Ok(match unit {
        "" | "s" => n,
        "m" => n * 60,
        "h" => n * 3600,
        _ => anyhow::bail!("{s:?} is not a duration (e.g. 90s, 10m, 1h)"),
    })
}
