//! One function per subcommand, each a few lines into tether-core.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};
use tether_core::history::index::{Depth, Progress};
use tether_core::history::sessions::{ListQuery, ProjectFilter, SearchQuery, ShowOptions, TagUpdate};
use tether_core::settings::Settings;
use tether_core::{CursorLocations, Paths, Tether};

use crate::cli::{AgentsCmd, Cli, Command, InitArgs, McpCmd, ServeArgs, SessionsCmd, TagArgs, TokenCmd};
use crate::output;

pub fn run(cli: Cli) -> anyhow::Result<()> {
    let paths = Paths::from_env().context("finding the data dir")?;
    let settings = Settings::load(&paths)?;
    let cursor = CursorLocations::discover(cli.cursor_dir.clone(), &settings.cursor_dirs());
    let port = |flag: Option<u16>| tether_daemon::choose_port(flag, "--port/TETHER_PORT", &settings);
    let open = || {
        Tether::open(paths.clone(), cursor.clone())
            .with_context(|| format!("opening the index in {}", paths.data_dir.display()))
    };
    match cli.command {
        Command::Index(a) => {
            let t = open()?;
            let depth = if a.force { Depth::Force } else { Depth::Deep };
            let report = with_progress(!a.out.json, |p| t.index(depth, p))?;
            if a.out.json {
                output::json(&report)
            } else {
                output::index_report(&report);
                Ok(())
            }
        }
        Command::Serve(a) => serve(paths, cursor, &a, port(a.port)),
        Command::Mcp(McpCmd::Stdio) => mcp_stdio(open()?),
        Command::Token(cmd) => token(&paths, cmd),
        Command::Init(a) => init(&paths, &cursor, &a, port(a.port).0, false),
        Command::Uninit(a) => init(&paths, &cursor, &a, port(a.port).0, true),
        Command::Hook { event } => {
            crate::hook::run(&paths, &event);
            Ok(())
        }
        Command::Stats(a) => crate::stats::stats(open()?, a),
        Command::Doctor(o) => {
            let t = open()?;
            let d = t.doctor()?;
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
            let cli = rt.block_on(tether_runs::probe(&t));
            if o.json {
                let mut v = serde_json::to_value(&d)?;
                v["cursor_cli"] = serde_json::to_value(&cli)?;
                output::json(&v)
            } else {
                output::doctor(&d);
                output::cursor_cli(&cli);
                Ok(())
            }
        }
        Command::Sessions(cmd) => sessions(&open()?, cmd),
        Command::Open { print } => open_gui(&paths, print),
        Command::Task(a) => crate::tasks::run(&open()?, a),
        Command::Run(a) => crate::runs::run(open()?, a),
        Command::Runs(cmd) => crate::runs::runs(open()?, cmd),
        Command::CursorKey(cmd) => crate::runs::cursor_key(&paths, cmd),
        Command::Cloud(cmd) => crate::runs::cloud(open()?, cmd),
        Command::Settings(cmd) => crate::settings::run(&paths, cmd),
        Command::Signal(cmd) => crate::signals::signal(&open()?, cmd),
        Command::Signals(cmd) => crate::signals::signals(&open()?, cmd),
        Command::Agents(AgentsCmd::Wake { name, state, out }) => {
            let a = open()?.board().set_wake_by_resume(&name, state == "on")?;
            if out.json {
                return output::json(&a);
            }
            if a.wake_by_resume {
                println!(
                    "{} is woken by a follow-up run when signals wait for it (while `tether serve` runs).",
                    a.name
                );
            } else {
                println!("{} is no longer woken by a follow-up run.", a.name);
            }
            Ok(())
        }
        Command::Agents(AgentsCmd::List(o)) => {
            let list = open()?.agents()?;
            if o.json {
                output::json(&list)
            } else {
                output::agents(&list);
                Ok(())
            }
        }
    }
}

fn project_filter(p: &str) -> anyhow::Result<ProjectFilter> {
    Ok(match p {
        "all" => ProjectFilter::All,
        "current" => {
            let cwd = std::env::current_dir().context("reading the working directory")?;
            ProjectFilter::Path(cwd.canonicalize().unwrap_or(cwd).to_string_lossy().into_owned())
        }
        path => {
            let pb = PathBuf::from(path);
            ProjectFilter::Path(pb.canonicalize().unwrap_or(pb).to_string_lossy().into_owned())
        }
    })
}

fn sessions(t: &Tether, cmd: SessionsCmd) -> anyhow::Result<()> {
    match cmd {
        SessionsCmd::List { filters, tag, bookmarked, source, offset, out } => {
            let q = ListQuery {
                project: project_filter(&filters.project)?,
                tag,
                bookmarked,
                source,
                limit: filters.limit,
                offset,
            };
            let list = t.list(&q)?;
            if out.json {
                output::json(&list)
            } else {
                output::sessions(&list);
                Ok(())
            }
        }
        SessionsCmd::Search { query, filters, out } => {
            let mut q = SearchQuery::new(query);
            q.project = project_filter(&filters.project)?;
            q.limit = filters.limit;
            if !out.json && output::color() {
                q.highlight = ("\x1b[1;33m".into(), "\x1b[0m".into());
            }
            let hits = t.search(&q)?;
            if let Some(n) = t.coverage()?.notice() {
                eprintln!("tether: {n}");
            }
            if out.json {
                output::json(&hits)
            } else {
                output::hits(&hits);
                Ok(())
            }
        }
        SessionsCmd::Show { id, limit, offset, tools, out } => {
            let d = t.show(&id, &ShowOptions { offset, limit, include_tools: tools })?;
            if out.json {
                output::json(&d)
            } else {
                output::detail(&d);
                Ok(())
            }
        }
        SessionsCmd::Tag(a) => tag(t, a),
        SessionsCmd::Export { id, format, out } => {
            let format: tether_core::history::export::Format = format.parse()?;
            output::to_file_or_stdout(out.as_deref(), &t.export(&id, format)?)
        }
    }
}

fn tag(t: &Tether, a: TagArgs) -> anyhow::Result<()> {
    let u = TagUpdate {
        nickname: if a.clear_nickname { Some(None) } else { a.nickname.map(Some) },
        add_tags: a.add,
        remove_tags: a.remove,
        bookmarked: if a.bookmark {
            Some(true)
        } else if a.unbookmark {
            Some(false)
        } else {
            None
        },
        no_index: if a.no_index {
            Some(true)
        } else if a.index {
            Some(false)
        } else {
            None
        },
    };
    let mut s = t.tag(&a.id, &u)?;
    if a.index {
        // Bring the messages back now rather than at the next pass.
        t.index(Depth::Deep, &tether_core::history::index::no_progress)?;
        s = t
            .list(&ListQuery { limit: 1_000_000, ..Default::default() })?
            .into_iter()
            .find(|x| x.id == s.id)
            .unwrap_or(s);
    }
    if a.out.json {
        output::json(&s)
    } else {
        output::sessions(std::slice::from_ref(&s));
        Ok(())
    }
}

/// Run `f` with a progress bar on a terminal; plain otherwise.
fn with_progress<T>(show: bool, f: impl FnOnce(&(dyn Fn(&Progress) + Sync)) -> T) -> T {
    if !show || !std::io::stderr().is_terminal() {
        return f(&|_| {});
    }
    let bar = progress_bar();
    let cb = |p: &Progress| match p {
        Progress::Started { sources } => {
            bar.set_length(*sources as u64);
            bar.set_message("indexing");
        }
        Progress::Source { index, path, kind } => {
            bar.set_position(*index as u64);
            bar.set_message(format!("{}: {}", kind.as_str(), path.rsplit('/').nth(1).unwrap_or(path)));
        }
        other => show_progress(&bar, other),
    };
    f(&cb)
}

fn progress_bar() -> ProgressBar {
    let bar = ProgressBar::new(0);
    bar.set_style(
        ProgressStyle::with_template("{spinner} {msg:40!} [{bar:30}] {pos}/{len}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar
}

/// The chats of a Cursor DB: listed, then read newest first, with a count and an ETA.
fn show_progress(bar: &ProgressBar, p: &Progress) {
    match p {
        Progress::Listed { sessions } if *sessions > 0 => {
            bar.println(format!("tether: {sessions} chats listed; reading them, newest first"));
        }
        Progress::Sessions { done, total, eta_ms, .. } => {
            bar.set_length(*total);
            bar.set_position(*done);
            let eta = eta_ms.filter(|_| done < total).map(|ms| format!(", about {} s left", ms.div_ceil(1000)));
            bar.set_message(format!("indexing chats{}", eta.unwrap_or_default()));
        }
        Progress::Finished { .. } => bar.finish_and_clear(),
        _ => {}
    }
}

fn serve(
    paths: Paths,
    cursor: CursorLocations,
    a: &ServeArgs,
    (port, port_from): (u16, &'static str),
) -> anyhow::Result<()> {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    let _g = rt.enter();
    // Signal handlers first, so SIGTERM during the initial index still shuts down cleanly.
    let shutdown = shutdown_signal()?;
    let bar = std::io::stderr().is_terminal().then(progress_bar);
    let progress: Option<tether_daemon::ProgressSink> =
        bar.clone().map(|b| Arc::new(move |p: &Progress| show_progress(&b, p)) as tether_daemon::ProgressSink);
    let opts = tether_daemon::HostOptions { host: a.host.clone(), port, port_from };
    let host = tether_daemon::Host::start(paths, cursor, &opts, progress)?;
    eprintln!(
        "tether: MCP endpoint {} (token in the {}; `tether init` configures Cursor); GUI: `tether open`",
        host.url(),
        host.token_backend.as_str()
    );
    eprintln!("tether: indexing, then watching for changes (Ctrl-C to stop)");
    rt.block_on(shutdown);
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    eprintln!("tether: stopping");
    rt.block_on(host.shutdown())?;
    drop(host);
    // An initial index still running holds only uncommitted transactions: leave it to the exit.
    rt.shutdown_background();
    Ok(())
}

fn mcp_stdio(t: Tether) -> anyhow::Result<()> {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    // No HTTP here, so no bearer or hook token: whoever spawned us already has our privileges.
    let server = tether_server::Server::new(Arc::new(t), String::new(), String::new());
    rt.block_on(tether_server::serve_stdio(server))?;
    Ok(())
}

fn token(paths: &Paths, cmd: TokenCmd) -> anyhow::Result<()> {
    match cmd {
        TokenCmd::Show => {
            let (t, b) = tether_core::token::mcp_token(paths)?;
            eprintln!("(from the {}; treat it like a password)", b.as_str());
            println!("{t}");
        }
        TokenCmd::Rotate => {
            let (_, b) = tether_core::token::rotate(paths)?;
            eprintln!(
                "tether: new token stored in the {}. Restart `tether serve` and run `tether init` again so Cursor gets it.",
                b.as_str()
            );
        }
        TokenCmd::Store { backend } => {
            let b = if backend == "file" {
                tether_core::token::Backend::File
            } else {
                tether_core::token::Backend::Keyring
            };
            tether_core::token::set_backend(paths, b)?;
            eprintln!("tether: the MCP token is now kept in the {backend}");
        }
    }
    Ok(())
}

fn init(paths: &Paths, cursor: &CursorLocations, a: &InitArgs, port: u16, remove: bool) -> anyhow::Result<()> {
    use tether_core::init;
    let project = if a.global {
        None
    } else {
        Some(match &a.project {
            Some(p) => p.clone(),
            None => std::env::current_dir().context("reading the working directory")?,
        })
    };
    let req = init::Request { project, project_mcp: a.project_mcp, token_env: a.token_env, port, remove };
    let plan = init::plan_request(paths, cursor, &req).context("planning the Cursor setup")?;
    let running = tether_core::daemon::running(paths);
    for s in &plan.skipped {
        eprintln!("tether: skipped {s}");
    }
    if a.dry_run {
        let diff = plan.diff();
        if diff.is_empty() {
            eprintln!("tether: nothing to change");
        }
        print!("{diff}");
        return Ok(());
    }
    plan.apply()?;
    let mut changed = 0;
    for c in plan.effective() {
        changed += 1;
        let verb = match (&c.before, &c.after) {
            (_, None) => "removed",
            (None, Some(_)) => "created",
            (Some(_), Some(_)) => "updated",
        };
        println!("{verb} {}", c.path.display());
    }
    if changed == 0 {
        eprintln!("tether: already {}; nothing changed", if remove { "removed" } else { "set up" });
    } else if !remove {
        eprintln!("tether: done. In Cursor, open Settings → MCP and enable (or toggle) the `tether` server.");
        if running.is_none() {
            eprintln!("tether: the daemon is not running; start it with `tether serve`.");
        }
    }
    Ok(())
}

/// Asks the running daemon for a one-time login code and opens (or prints) the GUI's login link.
fn open_gui(paths: &Paths, print: bool) -> anyhow::Result<()> {
    let link = tether_server::login_link(paths)?;
    if print {
        println!("{link}");
        return Ok(());
    }
    let opener = if cfg!(target_os = "macos") { "open" } else { "xdg-open" };
    match std::process::Command::new(opener).arg(&link).status() {
        Ok(s) if s.success() => eprintln!("tether: opened the GUI in your browser"),
        _ => println!("Open this link in your browser within a minute (it works once):\n{link}"),
    }
    Ok(())
}

/// Resolves on SIGINT or SIGTERM. Handlers are installed when this is called, not when polled.
pub(crate) fn shutdown_signal() -> std::io::Result<impl std::future::Future<Output = ()>> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut term = signal(SignalKind::terminate())?;
        let mut int = signal(SignalKind::interrupt())?;
        Ok(async move {
            tokio::select! {
                _ = term.recv() => {}
                _ = int.recv() => {}
            }
        })
    }
    #[cfg(not(unix))]
    {
        Ok(async {
            let _ = tokio::signal::ctrl_c().await;
        })
    }
}
