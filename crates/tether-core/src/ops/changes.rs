//! A run's work after the run, for the person to review and finish: the diff its branch holds
//! against its base, comments on its lines and a follow-up that carries them, merging into the
//! base (or another branch), discarding. Git itself is `tether-git`'s.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use tether_git::{Repo, Strategy};

use super::worktrees::{git_err, no_worktree, remove, summarize};
use crate::Tether;
use crate::board::principal::Principal;
use crate::board::runs::{self, ChangeSummary, Comment, NewComment, Run, RunWorktree, WorktreeState};
use crate::board::tasks::{Status, TaskChange};
use crate::error::{Error, Result};

/// Which run's diff, and whether the unified diff is wanted.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct DiffRequest {
    /// The run, e.g. "R-3".
    pub run: String,
    /// Files and counts only, without the unified diff.
    #[serde(default)]
    #[ts(optional, as = "Option<bool>")]
    pub stat: bool,
}

/// What a run's branch changed against its base.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct RunDiff {
    pub run: String,
    pub branch: String,
    pub base_branch: Option<String>,
    pub base: String,
    pub head: String,
    pub summary: ChangeSummary,
    pub files: Vec<tether_git::FileChange>,
    /// The unified diff (left out when only the stat was asked for).
    pub patch: Option<String>,
    /// The comments made on this worktree's diffs; `current` when the lines they quote are still
    /// there.
    pub comments: Vec<DiffComment>,
    /// The worktree's folder while it exists.
    pub worktree: Option<String>,
    /// Said when the diff is not the run's final word (it is still going).
    pub note: Option<String>,
}

#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct DiffComment {
    #[serde(flatten)]
    pub comment: Comment,
    pub current: bool,
}

/// A run's diff against its base: up to where it ended, or the branch so far while it runs.
pub fn diff(t: &Tether, _who: &Principal, req: &DiffRequest) -> Result<RunDiff> {
    let run = t.board().run(&req.run, Some(0))?.run;
    diff_of(t, &run, req.stat).map(|(d, _)| d)
}

/// [`diff`] of a run already read, with the repository it was read from.
fn diff_of(t: &Tether, run: &Run, stat: bool) -> Result<(RunDiff, Repo)> {
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
    let comments = runs::comments(&*t.board_db(), w.id)?
        .into_iter()
        .map(|c| {
            let current = repo
                .file_at(&head, &c.path)
                .ok()
                .flatten()
                .is_some_and(|text| quote_of(&text, c.start_line, c.end_line).as_deref() == Some(c.quote.as_str()));
            DiffComment { comment: c, current }
        })
        .collect();
    let diff = RunDiff {
        run: run.id.clone(),
        branch: w.branch.clone(),
        base_branch: w.base_branch.clone(),
        base: d.base.clone(),
        head: d.head.clone(),
        summary: summarize(&d),
        files: d.files,
        patch: d.patch,
        comments,
        worktree: (w.state != WorktreeState::Removed).then(|| w.path.clone()),
        note,
    };
    Ok((diff, repo))
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

/// A comment on lines of a run's diff.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct CommentRequest {
    /// The run whose diff is commented, e.g. "R-3".
    #[serde(default)]
    pub run: String,
    #[serde(flatten)]
    pub comment: NewComment,
}

/// Comments on lines the run's branch has: the lines are quoted as they are now, so the agent
/// (and a later diff) sees what was meant.
pub fn comment(t: &Tether, who: &Principal, req: &CommentRequest) -> Result<Comment> {
    if who.is_remote() {
        return Err(Error::NotAllowed("commenting on a run's diff is for this machine".into()));
    }
    let c = &req.comment;
    if c.body.trim().is_empty() {
        return Err(Error::invalid("comment", "say what should change"));
    }
    let run = t.board().run(&req.run, Some(0))?.run;
    let (d, repo) = diff_of(t, &run, true)?;
    if !d.files.iter().any(|f| f.path == c.path) {
        return Err(Error::invalid("file", format!("{} did not change {:?}", d.run, c.path)));
    }
    let text = repo
        .file_at(&d.head, &c.path)
        .map_err(git_err)?
        .ok_or_else(|| Error::invalid("file", format!("{} is not a text file at the end of {}", c.path, d.run)))?;
    let quote = quote_of(&text, c.start_line, c.end_line).ok_or_else(|| {
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
    })?;
    let author = super::runs::requester(t, who)?;
    runs::add_comment(&*t.board_db(), run.num(), &author, c, &quote)
}

/// A follow-up carrying the open comments on a run's diff.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct SendComments {
    /// The run to follow up, e.g. "R-3".
    #[serde(default)]
    pub run: String,
    /// Words to add after the comments.
    #[serde(default)]
    pub text: Option<String>,
}

/// Starts a follow-up of the run whose prompt is every open comment on its worktree's diffs
/// (file, lines, the quoted lines, the comment) and the person's words; the comments are marked
/// sent in it, and addressed when it succeeds.
pub fn send_comments(t: &Tether, who: &Principal, req: &SendComments) -> Result<Run> {
    let run = t.board().run(&req.run, Some(0))?.run;
    let w = run.worktree.clone().ok_or_else(|| no_worktree(&run))?;
    let open: Vec<Comment> = runs::comments(&*t.board_db(), w.id)?
        .into_iter()
        .filter(|c| c.sent_in.is_none() && c.addressed_at.is_none())
        .collect();
    let extra = req.text.as_deref().map(str::trim).filter(|s| !s.is_empty());
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
    let next = super::runs::followup(t, who, &super::runs::Followup { run: run.id.clone(), prompt })?;
    runs::comments_sent(&*t.board_db(), &open.iter().map(|c| c.id).collect::<Vec<_>>(), next.num())?;
    Ok(next)
}

/// Merging a run's branch into a branch of the person's repository.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct MergeRequest {
    /// The run, e.g. "R-3" (its worktree's branch is merged: the chain's work so far).
    #[serde(default)]
    pub run: String,
    /// squash (default), merge or rebase.
    #[serde(default)]
    #[ts(optional, as = "Option<Strategy>")]
    pub strategy: Strategy,
    /// The branch to merge into (default: the run's base branch).
    #[serde(default)]
    pub into: Option<String>,
}

#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct MergeResult {
    pub run: Run,
    pub into: String,
    pub strategy: Strategy,
    /// The branch's commit before the merge and after.
    pub from: String,
    pub commit: String,
    /// The person's checkout that had the branch out and was moved along.
    pub checkout: Option<String>,
}

/// Merges a run's branch into its base (or `into`), also when that branch is checked out in the
/// person's repository: refuses, changing nothing, while a run of the worktree goes, on staged
/// changes there, on uncommitted changes in files the run touched, on a conflict. Squash commits
/// carry the run's prompt and trailers naming the runs and chats. Afterwards the worktree goes
/// (the branch stays unless the settings say otherwise) and the runs' tasks are done.
pub fn merge(t: &Tether, who: &Principal, req: &MergeRequest) -> Result<MergeResult> {
    if !who.is_person() {
        return Err(Error::NotAllowed("merging a run's work is the person's decision".into()));
    }
    let run = t.board().run(&req.run, Some(0))?.run;
    let w = run.worktree.clone().ok_or_else(|| no_worktree(&run))?;
    let chain = idle_chain(t, &w, "wait for it or cancel it")?;
    if w.base_commit.is_none() {
        return Err(no_worktree(&run));
    }
    let into = req.into.clone().or_else(|| w.base_branch.clone()).ok_or_else(|| {
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
    commit_edits(&run, &w, "merging")?;
    let merged =
        repo.merge(&w.branch, &into, req.strategy, &merge_message(&run, &chain, &w, req.strategy)).map_err(git_err)?;
    runs::worktree_merged(&*t.board_db(), w.id, &into, &merged.commit)?;
    let keep = t.settings()?.runs.keep_branch_after_merge;
    remove(t, &repo, &w, !keep, "merged")?;
    let by = super::runs::requester(t, who)?;
    let said = format!("{}'s work merged into {into} as {} by {by}", run.id, short(&merged.commit));
    tasks_done(t, who, &chain, said);
    Ok(MergeResult {
        run: t.board().run(&run.id, Some(0))?.run,
        into,
        strategy: req.strategy,
        from: merged.from,
        commit: merged.commit,
        checkout: merged.checkout.map(|p| p.to_string_lossy().into_owned()),
    })
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
fn change_tasks(t: &Tether, who: &Principal, chain: &[Run], change: &TaskChange) {
    let mut tasks: Vec<&str> = chain.iter().filter_map(|r| r.task.as_deref()).collect();
    tasks.dedup();
    for task in tasks {
        if let Err(e) = t.board().update_task(&who.actor(), task, change) {
            tracing::warn!(task, error = %e, "moving a run's task after its work landed");
        }
    }
}

fn tasks_done(t: &Tether, who: &Principal, chain: &[Run], said: String) {
    let change = TaskChange { status: Some(Status::Done), comment: Some(said), force: true, ..Default::default() };
    change_tasks(t, who, chain, &change);
}

/// Throws a run's work away: its worktree and its branch go. Refused while a run of the worktree
/// goes (cancel it first).
pub fn discard(t: &Tether, who: &Principal, id: &str) -> Result<Run> {
    if !who.is_person() {
        return Err(Error::NotAllowed("discarding a run's work is the person's decision".into()));
    }
    let run = t.board().run(id, Some(0))?.run;
    let w = run.worktree.clone().ok_or_else(|| no_worktree(&run))?;
    idle_chain(t, &w, "cancel it first")?;
    if w.state == WorktreeState::Removed && w.merged_at.is_none() && w.removed_why.as_deref() == Some("discarded") {
        return Err(Error::Conflict(format!("{}'s work was discarded already", run.id)));
    }
    let repo = Repo::open(Path::new(&w.repo)).map_err(git_err)?;
    remove(t, &repo, &w, w.merged_at.is_none(), "discarded")?;
    t.board().run(id, Some(0)).map(|d| d.run)
}

/// The worktree's runs, oldest first, refused while one of them is queued or going (`then`
/// says what the person can do about it).
fn idle_chain(t: &Tether, w: &RunWorktree, then: &str) -> Result<Vec<Run>> {
    let chain = runs::worktree_runs(&*t.board_db(), w.id)?;
    if let Some(r) = chain.iter().find(|r| !r.status.is_terminal()) {
        return Err(Error::Conflict(format!("{} is still {} in this worktree; {then}", r.id, r.status)));
    }
    Ok(chain)
}

/// Edits made in the worktree after its runs (by the person) belong to its work: committed
/// before it is merged or pushed.
fn commit_edits(run: &Run, w: &RunWorktree, before: &str) -> Result<()> {
    if w.state == WorktreeState::Ready && Path::new(&w.path).is_dir() {
        let wt = tether_git::Worktree { path: PathBuf::from(&w.path), branch: w.branch.clone(), base: String::new() };
        let repo = Repo::open(Path::new(&w.repo)).map_err(git_err)?;
        repo.commit_worktree(&wt, &format!("Edits in {}'s worktree before {before}", run.id), &w.setup_paths)
            .map_err(git_err)?;
    }
    Ok(())
}

/// A run's branch as a pull request on GitHub.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct PrRequest {
    /// The run, e.g. "R-3" (its worktree's branch is pushed).
    #[serde(default)]
    pub run: String,
    /// The branch the pull request goes into (default: the run's base branch).
    #[serde(default)]
    pub base: Option<String>,
    /// Its title (default: the run's prompt's first line).
    #[serde(default)]
    pub title: Option<String>,
    /// Open it as a draft.
    #[serde(default)]
    #[ts(optional, as = "Option<bool>")]
    pub draft: bool,
}

#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct PrResult {
    pub run: Run,
    pub url: String,
    pub number: i64,
    /// A new pull request (false: the open one for the branch, now with the new commits).
    pub created: bool,
}

fn github_err(e: tether_github::Error) -> Error {
    use tether_github::Error as G;
    match e {
        G::Unauthorized | G::Forbidden(_) => Error::NotAllowed(e.to_string()),
        G::NoRepo(_) => Error::NotFound(e.to_string()),
        G::Invalid(_) | G::NotGitHub(_) | G::Credentials(_) => Error::invalid("pull request", e.to_string()),
        e => Error::Git(e.to_string()),
    }
}

/// Pushes the run's branch to the repository's `origin` and opens a pull request on GitHub
/// (owner and name from `origin`'s URL; the token from `tether github login` or `GITHUB_TOKEN`),
/// or, when one is open for the branch already, answers with it (the push brought it the new
/// commits). The URL is kept on the worktree and noted on the runs' tasks. A cloud run's pull
/// request is Cursor's: it is answered as it is.
pub fn pr(t: &Tether, who: &Principal, req: &PrRequest) -> Result<PrResult> {
    if !who.is_person() {
        return Err(Error::NotAllowed("opening a pull request is the person's decision".into()));
    }
    let run = t.board().run(&req.run, Some(0))?.run;
    if let Some(url) = run.cloud.as_ref().and_then(|c| c.pr_url.clone()) {
        let number = url.rsplit('/').next().and_then(|n| n.parse().ok()).unwrap_or(0);
        return Ok(PrResult { run, url, number, created: false });
    }
    let w = run.worktree.clone().ok_or_else(|| no_worktree(&run))?;
    let chain = idle_chain(t, &w, "wait for it or cancel it")?;
    let repo = Repo::open(Path::new(&w.repo)).map_err(git_err)?;
    if !repo.branch_exists(&w.branch).map_err(git_err)? {
        return Err(Error::Conflict(format!("{}'s branch {} is gone", run.id, w.branch)));
    }
    let base = req.base.clone().or_else(|| w.base_branch.clone()).ok_or_else(|| {
        Error::invalid(
            "base",
            format!("{} started from a detached checkout; say which branch the pull request goes into", run.id),
        )
    })?;
    let remote = tether_github::parse_remote(&repo.remote_url("origin").map_err(git_err)?).map_err(github_err)?;
    let (token, _) = crate::token::github_token(&t.paths)?.ok_or_else(|| {
        Error::invalid("GitHub token", "none kept: run `tether github login --token-stdin`, or set GITHUB_TOKEN")
    })?;
    let client = tether_github::Client::new(&t.settings()?.github_api()?, &token).map_err(github_err)?;
    commit_edits(&run, &w, "the pull request")?;
    repo.push("origin", &w.branch).map_err(git_err)?;
    let (pull, created) = match client.open_pull(&remote, &w.branch).map_err(github_err)? {
        Some(p) => (p, false),
        None => {
            let title = req.title.clone().filter(|s| !s.trim().is_empty()).unwrap_or_else(|| merge_title(&chain, &run));
            let body = pr_body(&repo, &w, &chain)?;
            let new = tether_github::NewPullRequest {
                title: &title,
                body: &body,
                head: &w.branch,
                base: &base,
                draft: req.draft,
            };
            (client.create_pull(&remote, &new).map_err(github_err)?, true)
        }
    };
    runs::worktree_pr(&*t.board_db(), w.id, &pull.html_url, pull.number)?;
    if created {
        let change =
            TaskChange { comment: Some(format!("{}'s pull request: {}", run.id, pull.html_url)), ..Default::default() };
        change_tasks(t, who, &chain, &change);
    }
    Ok(PrResult { run: t.board().run(&run.id, Some(0))?.run, url: pull.html_url, number: pull.number, created })
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
pub fn sync_pulls(t: &Tether) -> Result<Vec<String>> {
    let waiting: Vec<RunWorktree> = runs::live_worktrees(&*t.board_db())?
        .into_iter()
        .filter(|u| !u.active && u.worktree.pr_number.is_some() && u.worktree.merged_at.is_none())
        .map(|u| u.worktree)
        .collect();
    if waiting.is_empty() {
        return Ok(Vec::new());
    }
    let Some((token, _)) = crate::token::github_token(&t.paths)? else { return Ok(Vec::new()) };
    let settings = t.settings()?;
    let client = tether_github::Client::new(&settings.github_api()?, &token).map_err(github_err)?;
    let mut merged = Vec::new();
    for w in waiting {
        let repo = Repo::open(Path::new(&w.repo)).map_err(git_err)?;
        let remote = tether_github::parse_remote(&repo.remote_url("origin").map_err(git_err)?).map_err(github_err)?;
        let pull = client.pull(&remote, w.pr_number.unwrap_or_default()).map_err(github_err)?;
        if pull.merged_at.is_none() {
            continue;
        }
        let into = w.base_branch.clone().unwrap_or_else(|| "GitHub".into());
        runs::worktree_merged(&*t.board_db(), w.id, &into, &pull.html_url)?;
        remove(t, &repo, &w, !settings.runs.keep_branch_after_merge, "merged")?;
        let chain = runs::worktree_runs(&*t.board_db(), w.id)?;
        tasks_done(t, &Principal::Tether, &chain, format!("pull request {} merged on GitHub", pull.html_url));
        merged.extend(chain.first().map(|r| r.id.clone()));
    }
    Ok(merged)
}
