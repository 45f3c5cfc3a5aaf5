//! What the person does with a run's work afterwards, as git and GitHub do it: its diff against
//! its base (and whether each comment's quoted lines are still there), the lines a comment
//! quotes, the follow-up prompt carrying the open comments, merging (with the message and its
//! trailers), a pull request, discarding, and pull requests merged on GitHub since. The person's
//! edits in the worktree are committed first ([`crate::worktree::commit_left`]). Who may ask,
//! and the replies' shapes, are `tether_core::ops::changes`'s.

use std::path::Path;

use tether_board::Board;
use tether_board::principal::Principal;
use tether_board::runs::{Comment, NewComment, Run, RunWorktree, WorktreeState};
use tether_board::tasks::{Status, TaskChange};
use tether_git::{Repo, Strategy};
use tether_store::error::{Error, Result};

use crate::worktree::{commit_left, remove};
use crate::{Context, git_err, github_err, no_worktree};

/// A run's diff as read: the worktree, what git said, whether it is the run's final word, and
/// each comment on the worktree with whether its quoted lines are still there.
pub struct Diffed {
    pub worktree: RunWorktree,
    pub diff: tether_git::Diff,
    pub note: Option<String>,
    pub comments: Vec<(Comment, bool)>,
    pub repo: Repo,
}

/// A run's diff against its base: up to where it ended, or the branch so far while it runs.
pub fn diff(cx: &dyn Context, run: &Run, stat: bool) -> Result<Diffed> {
    let w = run.worktree.clone().ok_or_else(|| no_worktree(run))?;
    let base = w
        .base_commit
        .clone()
        .ok_or_else(|| Error::NotFound(format!("{} has no worktree yet (it has not started)", run.id)))?;
    let repo = Repo::open(Path::new(&w.repo)).map_err(git_err)?;
    let (head, note) = match &run.head_commit {
        Some(h) if run.status.is_terminal() => (h.clone(), None),
        _ => (
            repo.resolve(&w.branch).map_err(git_err)?,
            (!run.status.is_terminal())
                .then(|| format!("{} is still {}: what it has not committed shows when it ends", run.id, run.status)),
        ),
    };
    let d = repo.diff(&base, &head, !stat).map_err(git_err)?;
    let comments = Board::on(cx.board())
        .runs()
        .worktrees()
        .comments(w.id)?
        .into_iter()
        .map(|c| {
            let current = repo
                .file_at(&head, &c.path)
                .ok()
                .flatten()
                .is_some_and(|text| quote_of(&text, c.start_line, c.end_line).as_deref() == Some(c.quote.as_str()));
            (c, current)
        })
        .collect();
    Ok(Diffed { worktree: w, diff: d, note, comments, repo })
}

/// Lines `start..=end` (1-based) of `text`, when the file has them.
fn quote_of(text: &str, start: i64, end: i64) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let (s, e) = (usize::try_from(start).ok()?, usize::try_from(end).ok()?);
    if s == 0 || e < s || e > lines.len() {
        return None;
    }
    Some(lines[s - 1..e].join("\n"))
}

/// The lines a comment on `run`'s diff is about, as they are at the end of its branch now: the
/// file must be one the run changed, a text file, and have those lines.
pub fn quote(cx: &dyn Context, run: &Run, c: &NewComment) -> Result<String> {
    let d = diff(cx, run, true)?;
    if !d.diff.files.iter().any(|f| f.path == c.path) {
        return Err(Error::invalid("file", format!("{} did not change {:?}", run.id, c.path)));
    }
    let text = d
        .repo
        .file_at(&d.diff.head, &c.path)
        .map_err(git_err)?
        .ok_or_else(|| Error::invalid("file", format!("{} is not a text file at the end of {}", c.path, run.id)))?;
    quote_of(&text, c.start_line, c.end_line).ok_or_else(|| {
        Error::invalid(
            "lines",
            format!(
                "{}:{}-{} is not in the file (it has {} lines)",
                c.path,
                c.start_line,
                c.end_line,
                text.lines().count()
            ),
        )
    })
}

/// The follow-up prompt for `run`'s open comments (file, lines, the quoted lines, the comment)
/// and the person's words, with the comments it carries.
pub fn followup_prompt(cx: &dyn Context, run: &Run, extra: Option<&str>) -> Result<(String, Vec<i64>)> {
    let w = run.worktree.clone().ok_or_else(|| no_worktree(run))?;
    let open: Vec<Comment> = Board::on(cx.board())
        .runs()
        .worktrees()
        .comments(w.id)?
        .into_iter()
        .filter(|c| c.sent_in.is_none() && c.addressed_at.is_none())
        .collect();
    let extra = extra.map(str::trim).filter(|s| !s.is_empty());
    if open.is_empty() && extra.is_none() {
        return Err(Error::invalid("follow-up", format!("{} has no open comments; comment on its diff first", run.id)));
    }
    let mut prompt = String::new();
    if !open.is_empty() {
        prompt.push_str("Please address these review comments on your changes:\n");
        for (i, c) in open.iter().enumerate() {
            let lines = if c.start_line == c.end_line {
                format!("line {}", c.start_line)
            } else {
                format!("lines {}-{}", c.start_line, c.end_line)
            };
            let quoted: String = c.quote.lines().map(|l| format!("   > {l}\n")).collect();
            prompt.push_str(&format!("\n{}. {} {lines}:\n{quoted}   {}\n", i + 1, c.path, c.body.trim()));
        }
    }
    if let Some(x) = extra {
        prompt.push_str(&format!("\n{x}\n"));
    }
    Ok((prompt, open.iter().map(|c| c.id).collect()))
}

/// Merges `run`'s branch into its base (or `into`), as `who` (named `by` in the tasks' notes).
/// Refused, changing nothing, while a run of the worktree goes, and on what git refuses. The
/// person's edits in the worktree are committed first; afterwards the worktree goes (the branch
/// stays unless the settings say otherwise) and the runs' tasks are done. The branch merged
/// into, and what git did.
pub fn merge(
    cx: &dyn Context,
    who: &Principal,
    by: &str,
    run: &Run,
    strategy: Strategy,
    into: Option<&str>,
) -> Result<(String, tether_git::Merged)> {
    let w = run.worktree.clone().ok_or_else(|| no_worktree(run))?;
    let chain = idle_chain(cx, &w, "wait for it or cancel it")?;
    if w.base_commit.is_none() {
        return Err(no_worktree(run));
    }
    let into = into.map(str::to_owned).or_else(|| w.base_branch.clone()).ok_or_else(|| {
        Error::invalid("into", format!("{} started from a detached checkout; say which branch to merge into", run.id))
    })?;
    let repo = Repo::open(Path::new(&w.repo)).map_err(git_err)?;
    if !repo.branch_exists(&w.branch).map_err(git_err)? {
        return Err(Error::Conflict(format!(
            "{}'s branch {} is gone ({}); there is nothing to merge",
            run.id,
            w.branch,
            w.removed_why.as_deref().unwrap_or("deleted by hand")
        )));
    }
    commit_left(cx, run, &w, &format!("Edits in {}'s worktree before merging", run.id))?;
    let merged = repo.merge(&w.branch, &into, strategy, &merge_message(run, &chain, &w, strategy)).map_err(git_err)?;
    Board::on(cx.board()).runs().worktrees().merged(w.id, &into, &merged.commit)?;
    let keep = cx.settings()?.keep_branch_after_merge;
    remove(cx, &repo, &w, !keep, "merged")?;
    let said = format!("{}'s work merged into {into} as {} by {by}", run.id, short(&merged.commit));
    tasks_done(cx, who, &chain, said);
    Ok((into, merged))
}

fn short(commit: &str) -> &str {
    &commit[..commit.len().min(10)]
}

/// The squash or merge commit's message: the first run's prompt line, the last result, and a
/// trailer for each run and chat of the worktree.
fn merge_message(run: &Run, chain: &[Run], w: &RunWorktree, strategy: Strategy) -> String {
    let first = chain.first().unwrap_or(run);
    let title = merge_title(chain, run);
    let mut m = match strategy {
        Strategy::Merge => format!("Merge {} ({}): {title}\n", w.branch, first.id),
        _ => format!("{title}\n"),
    };
    if let Some(result) = chain.iter().rev().find_map(|r| r.result.as_deref()).map(str::trim).filter(|r| !r.is_empty())
    {
        let body: String = result.chars().take(2000).collect();
        m.push_str(&format!("\n{body}\n"));
    }
    m.push('\n');
    m.push_str(&trailers(chain));
    m
}

/// `Tether-Run:` for each run of the worktree and `Cursor-Chat:` for each chat they worked in.
fn trailers(chain: &[Run]) -> String {
    let mut out: String = chain.iter().map(|r| format!("Tether-Run: {}\n", r.id)).collect();
    let mut chats: Vec<&str> = chain.iter().filter_map(|r| r.chat_id.as_deref()).collect();
    chats.dedup();
    out.extend(chats.into_iter().map(|c| format!("Cursor-Chat: {c}\n")));
    out
}

/// The worktree's runs' tasks, changed once each; a task that cannot take it is logged, not fatal
/// (the merge or pull request has happened).
fn change_tasks(cx: &dyn Context, who: &Principal, chain: &[Run], change: &TaskChange) {
    let mut tasks: Vec<&str> = chain.iter().filter_map(|r| r.task.as_deref()).collect();
    tasks.dedup();
    let board = Board::on(cx.board());
    for task in tasks {
        if let Err(e) = board.tasks().update(&who.actor(), task, change) {
            tracing::warn!(task, error = %e, "moving a run's task after its work landed");
        }
    }
}

fn tasks_done(cx: &dyn Context, who: &Principal, chain: &[Run], said: String) {
    let change = TaskChange { status: Some(Status::Done), comment: Some(said), force: true, ..Default::default() };
    change_tasks(cx, who, chain, &change);
}

/// Throws a run's work away: its worktree and its branch go. Refused while a run of the worktree
/// goes (cancel it first).
pub fn discard(cx: &dyn Context, run: &Run) -> Result<()> {
    let w = run.worktree.clone().ok_or_else(|| no_worktree(run))?;
    idle_chain(cx, &w, "cancel it first")?;
    if w.state == WorktreeState::Removed && w.merged_at.is_none() && w.removed_why.as_deref() == Some("discarded") {
        return Err(Error::Conflict(format!("{}'s work was discarded already", run.id)));
    }
    let repo = Repo::open(Path::new(&w.repo)).map_err(git_err)?;
    remove(cx, &repo, &w, w.merged_at.is_none(), "discarded")
}

/// The worktree's runs, oldest first, refused while one of them is queued or going (`then`
/// says what the person can do about it).
fn idle_chain(cx: &dyn Context, w: &RunWorktree, then: &str) -> Result<Vec<Run>> {
    let chain = Board::on(cx.board()).runs().worktrees().runs(w.id)?;
    if let Some(r) = chain.iter().find(|r| !r.status.is_terminal()) {
        return Err(Error::Conflict(format!("{} is still {} in this worktree; {then}", r.id, r.status)));
    }
    Ok(chain)
}

/// What a pull request should be: into which branch, its title, a draft or not.
#[derive(Debug, Clone, Default)]
pub struct PullAsk<'a> {
    pub base: Option<&'a str>,
    pub title: Option<&'a str>,
    pub draft: bool,
}

/// A run's pull request on GitHub.
#[derive(Debug, Clone)]
pub struct Pull {
    pub url: String,
    pub number: i64,
    /// A new pull request (false: the open one for the branch, now with the new commits).
    pub created: bool,
}

/// Pushes the run's branch to the repository's `origin` and opens a pull request on GitHub
/// (owner and name from `origin`'s URL), or, when one is open for the branch already, answers
/// with it (the push brought it the new commits). The URL is kept on the worktree and noted on
/// the runs' tasks. A cloud run's pull request is Cursor's: it is answered as it is.
pub fn pull_request(cx: &dyn Context, who: &Principal, run: &Run, ask: &PullAsk) -> Result<Pull> {
    if let Some(url) = run.cloud.as_ref().and_then(|c| c.pr_url.clone()) {
        let number = url.rsplit('/').next().and_then(|n| n.parse().ok()).unwrap_or(0);
        return Ok(Pull { url, number, created: false });
    }
    let w = run.worktree.clone().ok_or_else(|| no_worktree(run))?;
    let chain = idle_chain(cx, &w, "wait for it or cancel it")?;
    let repo = Repo::open(Path::new(&w.repo)).map_err(git_err)?;
    if !repo.branch_exists(&w.branch).map_err(git_err)? {
        return Err(Error::Conflict(format!("{}'s branch {} is gone", run.id, w.branch)));
    }
    let base = ask.base.map(str::to_owned).or_else(|| w.base_branch.clone()).ok_or_else(|| {
        Error::invalid(
            "base",
            format!("{} started from a detached checkout; say which branch the pull request goes into", run.id),
        )
    })?;
    let remote = tether_github::parse_remote(&repo.remote_url("origin").map_err(git_err)?).map_err(github_err)?;
    let gh = cx.github()?.ok_or_else(|| {
        Error::invalid("GitHub token", "none kept: run `tether github login --token-stdin`, or set GITHUB_TOKEN")
    })?;
    let client = tether_github::Client::new(&gh.api, &gh.token).map_err(github_err)?;
    commit_left(cx, run, &w, &format!("Edits in {}'s worktree before the pull request", run.id))?;
    repo.push("origin", &w.branch).map_err(git_err)?;
    let (pull, created) = match client.open_pull(&remote, &w.branch).map_err(github_err)? {
        Some(p) => (p, false),
        None => {
            let title = ask
                .title
                .filter(|s| !s.trim().is_empty())
                .map(str::to_owned)
                .unwrap_or_else(|| merge_title(&chain, run));
            let body = pr_body(&repo, &w, &chain)?;
            let new = tether_github::NewPullRequest {
                title: &title,
                body: &body,
                head: &w.branch,
                base: &base,
                draft: ask.draft,
            };
            (client.create_pull(&remote, &new).map_err(github_err)?, true)
        }
    };
    Board::on(cx.board()).runs().worktrees().pr(w.id, &pull.html_url, pull.number)?;
    if created {
        let change =
            TaskChange { comment: Some(format!("{}'s pull request: {}", run.id, pull.html_url)), ..Default::default() };
        change_tasks(cx, who, &chain, &change);
    }
    Ok(Pull { url: pull.html_url, number: pull.number, created })
}

fn merge_title(chain: &[Run], run: &Run) -> String {
    let first = chain.first().unwrap_or(run);
    let line = first.prompt.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("Work by a Cursor agent");
    line.trim_start_matches("Work on task ").chars().take(72).collect()
}

/// The pull request's description: what was asked, what the agent said, the files, and where it
/// came from.
fn pr_body(repo: &Repo, w: &RunWorktree, chain: &[Run]) -> Result<String> {
    let mut b = String::new();
    if let Some(first) = chain.first() {
        b.push_str(&format!("## Asked\n\n{}\n", first.prompt.trim()));
    }
    if let Some(result) = chain.iter().rev().find_map(|r| r.result.as_deref()).map(str::trim).filter(|r| !r.is_empty())
    {
        let cut: String = result.chars().take(4000).collect();
        b.push_str(&format!("\n## The agent's summary\n\n{cut}\n"));
    }
    if let Some(base) = &w.base_commit {
        let d = repo.diff(base, &w.branch, false).map_err(git_err)?;
        b.push_str(&format!("\n## Files ({}, +{} −{})\n\n", d.files.len(), d.added(), d.deleted()));
        for f in d.files.iter().take(100) {
            b.push_str(&format!("- `{}`\n", f.path));
        }
    }
    b.push_str("\n---\nOpened by Tether from a Cursor agent's run.\n\n");
    b.push_str(&trailers(chain));
    Ok(b)
}

/// Pull requests of runs merged on GitHub since: their worktrees go (the branch stays unless the
/// settings say otherwise) and their runs' tasks are done. Asks GitHub only about pull requests
/// Tether opened, and only with a token. The runs whose pull requests were merged.
pub fn sync_pulls(cx: &dyn Context) -> Result<Vec<String>> {
    let waiting: Vec<RunWorktree> = Board::on(cx.board())
        .runs()
        .worktrees()
        .live()?
        .into_iter()
        .filter(|u| !u.active && u.worktree.pr_number.is_some() && u.worktree.merged_at.is_none())
        .map(|u| u.worktree)
        .collect();
    if waiting.is_empty() {
        return Ok(Vec::new());
    }
    let Some(gh) = cx.github()? else { return Ok(Vec::new()) };
    let settings = cx.settings()?;
    let client = tether_github::Client::new(&gh.api, &gh.token).map_err(github_err)?;
    let mut merged = Vec::new();
    for w in waiting {
        let repo = Repo::open(Path::new(&w.repo)).map_err(git_err)?;
        let remote = tether_github::parse_remote(&repo.remote_url("origin").map_err(git_err)?).map_err(github_err)?;
        let pull = client.pull(&remote, w.pr_number.unwrap_or_default()).map_err(github_err)?;
        if pull.merged_at.is_none() {
            continue;
        }
        let into = w.base_branch.clone().unwrap_or_else(|| "GitHub".into());
        Board::on(cx.board()).runs().worktrees().merged(w.id, &into, &pull.html_url)?;
        remove(cx, &repo, &w, !settings.keep_branch_after_merge, "merged")?;
        let chain = Board::on(cx.board()).runs().worktrees().runs(w.id)?;
        tasks_done(cx, &Principal::Tether, &chain, format!("pull request {} merged on GitHub", pull.html_url));
        merged.extend(chain.first().map(|r| r.id.clone()));
    }
    Ok(merged)
}
