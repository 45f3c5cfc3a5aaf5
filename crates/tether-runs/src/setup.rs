//! A run's worktree made and made ready before the agent starts, the way Cursor's own parallel
//! agents ready theirs: the files the person listed (`runs.copy_files`, e.g. `.env`) copied from
//! the checkout — bytes, never a link, and never read through one — then the setup commands of
//! the repository's `.cursor/worktrees.json` (`setup-worktree-unix` on Unix, with `/bin/sh`;
//! `setup-worktree-windows` on Windows, with PowerShell; else `setup-worktree`: a list of shell
//! commands, or a script path relative to `.cursor/`), run in the worktree with
//! `ROOT_WORKTREE_PATH` naming the checkout, within `runs.setup_timeout_secs`, their output
//! streamed into the run's log as notices under the log's one size limit (as the agent's output
//! is: past it counted, not kept) — only for a run allowed to run commands (a `Shell(…)` token): they are
//! the repository's commands, and a read-only run must not run any. A failing command fails the
//! run before the agent starts.

use std::ffi::OsStr;
use std::path::{Component, Path};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tether_board::runs::event::RunEvent;
use tether_board::runs::{Run, RunWorktree, WorktreeState};
use tether_core::Tether;
use tether_core::events::RunLog;

use tokio::sync::mpsc;

use crate::log::{self, Log, Watch};
use crate::nofollow::{Dir, Entry};
use crate::{blocking, process};

/// The run with its worktree made (and readied when new); an error says why the run cannot start.
/// What the setup's output took of the run's log is counted in `used`.
pub(crate) async fn worktree(t: &Arc<Tether>, run: &Run, used: &mut Watch) -> Result<Run, String> {
    let Some(w) = run.worktree.clone() else { return Ok(run.clone()) };
    let fresh = w.state != WorktreeState::Ready;
    let made = {
        let (t, r) = (Arc::clone(t), run.clone());
        blocking(move || {
            let w = tether_work::worktree::make_worktree(&*t, &r)?;
            Ok((w, t.board().runs().get_run(r.num())?))
        })
        .await
    };
    let (w, run) = made.map_err(|e| format!("could not make the run's worktree: {e}"))?;
    let base = w.base_commit.as_deref().map_or("", |c| &c[..c.len().min(10)]);
    let from = w.base_branch.as_ref().map(|b| format!("{b} at {base}")).unwrap_or_else(|| base.to_owned());
    let what = if fresh { "works in its own worktree" } else { "continues in the worktree" };
    note(t, &run, vec![format!("{} {what} {} on branch {} (from {from})", run.id, w.path, w.branch)]).await;
    if fresh {
        copy_files(t, &run, &w).await?;
        commands(t, &run, &w, used).await?;
        let (t2, w2) = (Arc::clone(t), w.clone());
        let left = blocking(move || {
            let wt =
                tether_git::Worktree { path: w2.path.clone().into(), branch: w2.branch.clone(), base: String::new() };
            let paths = tether_git::Repo::open(std::path::Path::new(&w2.repo))
                .and_then(|repo| repo.worktree_dirty_paths(&wt))
                .map_err(|e| tether_core::Error::Git(e.to_string()))?;
            t2.board().runs().worktrees().setup_paths(w2.id, &paths)?;
            Ok(paths)
        })
        .await
        .map_err(|e| format!("could not read what the worktree's setup left: {e}"))?;
        if !left.is_empty() {
            note(t, &run, vec![format!("setup left {} (not committed as the run's work)", left.join(", "))]).await;
        }
        return t.board().runs().get_run(run.num()).map_err(|e| e.to_string());
    }
    Ok(run)
}

async fn note(t: &Arc<Tether>, run: &Run, lines: Vec<String>) {
    if lines.is_empty() {
        return;
    }
    let (t2, num) = (Arc::clone(t), run.num());
    let events: Vec<RunEvent> = lines.into_iter().map(|text| RunEvent::Notice { text }).collect();
    match blocking(move || t2.board().runs().append_events(num, &events)).await {
        Ok(stored) => t.bus.run_log(RunLog::Events { run: run.id.clone(), events: stored.into() }),
        Err(e) => tracing::warn!(run = num, error = %e, "recording the worktree's setup"),
    }
}

/// Copies the listed files from the checkout into the worktree, through directory handles: a
/// link on either side is not followed (the file is left out, and the run says so).
async fn copy_files(t: &Arc<Tether>, run: &Run, w: &RunWorktree) -> Result<(), String> {
    let list = t.settings().map(|s| s.runs.copy_files).unwrap_or_default();
    if list.is_empty() {
        return Ok(());
    }
    let (repo, path) = (w.repo.clone(), w.path.clone());
    let said =
        blocking(move || Ok(list.iter().filter_map(|f| copy_one(Path::new(&repo), Path::new(&path), f)).collect()))
            .await
            .unwrap_or_default();
    note(t, run, said).await;
    Ok(())
}

/// What to say about copying `rel`, if anything went other than plainly.
fn copy_one(repo: &Path, worktree: &Path, rel: &str) -> Option<String> {
    let names: Vec<&OsStr> =
        Path::new(rel).components().filter_map(|c| if let Component::Normal(n) = c { Some(n) } else { None }).collect();
    let (last, parents) = names.split_last()?;
    let walk = |root: &Path, create: bool| -> Result<Dir, String> {
        let mut d = Dir::open_canonical(root).map_err(|e| e.to_string())?;
        for n in parents {
            d = match d.sub(n).map_err(|e| e.to_string())? {
                Some(s) => s,
                None if create => d.create_sub(n).map_err(|e| e.to_string())?,
                None => return Err("not there".into()),
            };
        }
        Ok(d)
    };
    let from = match walk(repo, false) {
        Ok(d) => d,
        Err(e) => return Some(format!("{rel} was not copied: {e}")),
    };
    let (bytes, mode) = match from.read(last) {
        Ok(Entry::File { bytes, mode }) => (bytes, mode),
        Ok(Entry::Missing) => return Some(format!("{rel} was not copied: the checkout has none")),
        Ok(Entry::Link(_)) => return Some(format!("{rel} was not copied: it is a link in the checkout")),
        Err(e) => return Some(format!("{rel} was not copied: {e}")),
    };
    match walk(worktree, true).and_then(|d| d.write(last, &bytes, mode).map_err(|e| e.to_string())) {
        Ok(()) => Some(format!("copied {rel} from the checkout")),
        Err(e) => Some(format!("{rel} was not copied: {e}")),
    }
}

/// The setup commands `.cursor/worktrees.json` lists, as committed in the run's base.
fn setup_commands(worktree: &Path) -> Result<Vec<String>, String> {
    let Ok(root) = Dir::open_canonical(worktree) else { return Ok(Vec::new()) };
    let Ok(Some(cursor)) = root.sub(OsStr::new(".cursor")) else { return Ok(Vec::new()) };
    let bytes = match cursor.read(OsStr::new("worktrees.json")) {
        Ok(Entry::File { bytes, .. }) => bytes,
        Ok(Entry::Missing) => return Ok(Vec::new()),
        Ok(Entry::Link(_)) => return Err(".cursor/worktrees.json is a link; Tether does not follow it".into()),
        Err(e) => return Err(e.to_string()),
    };
    let v: Value = serde_json::from_slice(&bytes).map_err(|e| format!(".cursor/worktrees.json is not JSON: {e}"))?;
    commands_for(&v, &process::SHELL)
}

/// The commands `worktrees.json` gives for this OS's shell: its own key (`setup-worktree-unix`,
/// `setup-worktree-windows`), else the common `setup-worktree`.
fn commands_for(v: &Value, shell: &process::Shell) -> Result<Vec<String>, String> {
    let entry = v.get(shell.setup_key).or_else(|| v.get("setup-worktree"));
    match entry {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(a)) => a
            .iter()
            .map(|c| c.as_str().map(str::to_owned).ok_or_else(|| format!("a setup command is not text: {c}")))
            .collect(),
        // A script, relative to `.cursor/`.
        Some(Value::String(s)) => Ok(vec![(shell.script)(s)]),
        Some(other) => Err(format!("setup-worktree should be a list of commands or a script path, not {other}")),
    }
}

/// Runs the setup commands in order within the time limit; the first failure stops the run.
/// Their output goes to the run's log line by line as it comes, under the log's one cap
/// (`runs.max_log_mb`, counted in `used`, which the agent's output then shares): past it lines
/// are counted, not kept, and the log says so once, as for the agent's own output. Nothing of it
/// is held whole.
async fn commands(t: &Arc<Tether>, run: &Run, w: &RunWorktree, used: &mut Watch) -> Result<(), String> {
    let path = std::path::PathBuf::from(&w.path);
    let list = {
        let p = path.clone();
        blocking(move || Ok(setup_commands(&p))).await.map_err(|e| e.to_string())??
    };
    if list.is_empty() {
        return Ok(());
    }
    // The repository's commands are commands all the same: a run that may not run any (no
    // `Shell(…)` allowed, e.g. a read-only review) does not run them either.
    if !run.permissions.allow.iter().any(|t| t.starts_with("Shell(")) {
        note(t, run, vec![format!(
            "setup commands of .cursor/worktrees.json not run: the run may not run commands (allow Shell(…) to have them run): {}",
            list.join("; ")
        )])
        .await;
        return Ok(());
    }
    let limit = Duration::from_secs(u64::from(t.settings().map(|s| s.runs.setup_timeout_secs).unwrap_or(300)));
    let deadline = tokio::time::Instant::now() + limit;
    let mut env = tether_core::paths::run_environment();
    env.push(("ROOT_WORKTREE_PATH".into(), w.repo.clone()));
    used.seq = {
        let (t, num) = (Arc::clone(t), run.num());
        blocking(move || t.board().runs().last_seq(num)).await.map_err(|e| e.to_string())?
    };
    let log = Log::start(Arc::clone(t), run.num());
    let mut done = Ok(());
    for cmd in list {
        log::note(&t.bus, run, RunEvent::Notice { text: format!("setup: {cmd}") }, used, &log);
        done = command(t, run, &cmd, &env, &path, (deadline, limit), used, &log).await;
        if done.is_err() {
            break;
        }
    }
    log.flush().await;
    done
}

/// Pieces of a setup command's output longer than this are cut (a line without an end is not
/// gathered whole either).
const SETUP_LINE: usize = 64 << 10;

/// One setup command: its output streamed into the log, its end waited for until the deadline.
#[allow(clippy::too_many_arguments)]
async fn command(
    t: &Arc<Tether>,
    run: &Run,
    cmd: &str,
    env: &[(String, String)],
    path: &Path,
    (deadline, limit): (tokio::time::Instant, Duration),
    used: &mut Watch,
    log: &Log,
) -> Result<(), String> {
    let shell = &process::SHELL;
    let args: Vec<String> = shell.flags.iter().map(|f| (*f).to_owned()).chain([cmd.to_owned()]).collect();
    let mut child = process::spawn(Path::new(shell.program), &args, env, path)
        .map_err(|e| format!("could not start the worktree setup `{cmd}`: {e}"))?;
    drop(child.stdin.take());
    let pid = child.id();
    let (tx, mut rx) = mpsc::channel::<RunEvent>(256);
    let readers: Vec<_> = [
        child.stdout.take().map(|o| Box::new(o) as Box<dyn tokio::io::AsyncRead + Send + Unpin>),
        child.stderr.take().map(|e| Box::new(e) as Box<dyn tokio::io::AsyncRead + Send + Unpin>),
    ]
    .into_iter()
    .flatten()
    .map(|out| {
        let tx = tx.clone();
        tokio::spawn(async move {
            let mut r = tokio::io::BufReader::new(out);
            let mut buf = Vec::new();
            while let Ok(Some(())) = process::next_line_within(&mut r, &mut buf, SETUP_LINE).await {
                let text = String::from_utf8_lossy(&buf);
                if text.trim().is_empty() {
                    continue;
                }
                let text = format!("setup: {}", text.trim_end());
                if tx.send(RunEvent::Notice { text }).await.is_err() {
                    break;
                }
            }
        })
    })
    .collect();
    drop(tx);
    let mut open = true;
    let mut exit = None;
    let ended = loop {
        tokio::select! {
            ev = rx.recv(), if open => match ev {
                Some(first) => log::take_events(&t.bus, run, first, &mut rx, used, log, None),
                None => open = false,
            },
            st = child.wait(), if exit.is_none() => exit = Some(st),
            _ = tokio::time::sleep_until(deadline) => break false,
        }
        if exit.is_some() {
            break true;
        }
    };
    if !ended {
        if let Some(pid) = pid {
            process::signal_group(pid, process::Sig::Kill);
        }
        for r in readers {
            r.abort();
        }
        return Err(format!(
            "the worktree setup ran past its time limit of {} s (runs.setup_timeout_secs) at `{cmd}`",
            limit.as_secs()
        ));
    }
    // What is still in the pipes: read until both end, unless nothing comes for 2 s (something
    // the command left running holds them open).
    while let Ok(Some(first)) = tokio::time::timeout(Duration::from_secs(2), rx.recv()).await {
        log::take_events(&t.bus, run, first, &mut rx, used, log, None);
    }
    for r in readers {
        r.abort();
    }
    match exit {
        Some(Ok(status)) if status.success() => Ok(()),
        Some(Ok(status)) => Err(format!(
            "the worktree setup `{cmd}` failed ({}); see .cursor/worktrees.json",
            status.code().map_or("killed by a signal".into(), |c| format!("exit code {c}"))
        )),
        Some(Err(e)) => Err(format!("the worktree setup `{cmd}`: {e}")),
        None => Err(format!("the worktree setup `{cmd}` did not end")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::process::{POWERSHELL, SH};

    #[test]
    fn each_shell_takes_its_own_setup_commands_then_the_common_ones() {
        let both = serde_json::json!({
            "setup-worktree-unix": ["npm ci"],
            "setup-worktree-windows": ["npm.cmd ci"],
            "setup-worktree": ["make"],
        });
        assert_eq!(commands_for(&both, &SH).unwrap(), ["npm ci"]);
        assert_eq!(commands_for(&both, &POWERSHELL).unwrap(), ["npm.cmd ci"]);
        let common = serde_json::json!({"setup-worktree": ["make"]});
        assert_eq!(commands_for(&common, &SH).unwrap(), ["make"]);
        assert_eq!(commands_for(&common, &POWERSHELL).unwrap(), ["make"]);
        // A script path, relative to `.cursor/`, quoted for each shell.
        let script = serde_json::json!({"setup-worktree": "scripts/it's.sh"});
        assert_eq!(commands_for(&script, &SH).unwrap(), [r"sh .cursor/'scripts/it'\''s.sh'"]);
        assert_eq!(commands_for(&script, &POWERSHELL).unwrap(), [r"& '.cursor\scripts\it''s.sh'"]);
        assert!(commands_for(&serde_json::json!({"setup-worktree": 3}), &SH).is_err());
        assert!(commands_for(&serde_json::json!({}), &POWERSHELL).unwrap().is_empty());
    }
}
