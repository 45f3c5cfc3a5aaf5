//! A run's work after the run, for the person to review and finish: the diff its branch holds
//! against its base, comments on its lines and a follow-up that carries them, merging into the
//! base (or another branch), a pull request, discarding: who may, and the replies' shapes. How
//! git and GitHub do it is `tether_work::review`'s.

use serde::{Deserialize, Serialize};
use tether_git::Strategy;
use tether_work::review;

use crate::Tether;
use crate::board::principal::Principal;
use crate::board::runs::{ChangeSummary, Comment, NewComment, Run, WorktreeState};
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
    let run = t.board().runs().get(&req.run, Some(0))?.run;
    let review::Diffed { worktree: w, diff: d, note, comments, .. } = review::diff(t, &run, req.stat)?;
    Ok(RunDiff {
        run: run.id.clone(),
        branch: w.branch.clone(),
        base_branch: w.base_branch.clone(),
        base: d.base.clone(),
        head: d.head.clone(),
        summary: tether_work::summarize(&d),
        files: d.files,
        patch: d.patch,
        comments: comments.into_iter().map(|(comment, current)| DiffComment { comment, current }).collect(),
        worktree: (w.state != WorktreeState::Removed).then(|| w.path.clone()),
        note,
    })
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
    let run = t.board().runs().get(&req.run, Some(0))?.run;
    let quote = review::quote(t, &run, c)?;
    let author = super::runs::requester(t, who)?;
    t.board().runs().worktrees().add_comment(run.num(), &author, c, &quote)
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
    let run = t.board().runs().get(&req.run, Some(0))?.run;
    let (prompt, carried) = review::followup_prompt(t, &run, req.text.as_deref())?;
    let next = super::runs::followup(t, who, &super::runs::Followup { run: run.id.clone(), prompt })?;
    t.board().runs().worktrees().comments_sent(&carried, next.num())?;
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
    let run = t.board().runs().get(&req.run, Some(0))?.run;
    let by = super::runs::requester(t, who)?;
    let (into, merged) = review::merge(t, who, &by, &run, req.strategy, req.into.as_deref())?;
    Ok(MergeResult {
        run: t.board().runs().get(&run.id, Some(0))?.run,
        into,
        strategy: req.strategy,
        from: merged.from,
        commit: merged.commit,
        checkout: merged.checkout.map(|p| p.to_string_lossy().into_owned()),
    })
}

/// Throws a run's work away: its worktree and its branch go. Refused while a run of the worktree
/// goes (cancel it first).
pub fn discard(t: &Tether, who: &Principal, id: &str) -> Result<Run> {
    if !who.is_person() {
        return Err(Error::NotAllowed("discarding a run's work is the person's decision".into()));
    }
    let run = t.board().runs().get(id, Some(0))?.run;
    review::discard(t, &run)?;
    t.board().runs().get(id, Some(0)).map(|d| d.run)
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

/// Pushes the run's branch to the repository's `origin` and opens a pull request on GitHub
/// (owner and name from `origin`'s URL; the token from `tether github login` or `GITHUB_TOKEN`),
/// or, when one is open for the branch already, answers with it (the push brought it the new
/// commits). The URL is kept on the worktree and noted on the runs' tasks. A cloud run's pull
/// request is Cursor's: it is answered as it is.
pub fn pr(t: &Tether, who: &Principal, req: &PrRequest) -> Result<PrResult> {
    if !who.is_person() {
        return Err(Error::NotAllowed("opening a pull request is the person's decision".into()));
    }
    let run = t.board().runs().get(&req.run, Some(0))?.run;
    let ask = review::PullAsk { base: req.base.as_deref(), title: req.title.as_deref(), draft: req.draft };
    let pull = review::pull_request(t, who, &run, &ask)?;
    Ok(PrResult {
        run: t.board().runs().get(&run.id, Some(0))?.run,
        url: pull.url,
        number: pull.number,
        created: pull.created,
    })
}

/// Pull requests of runs merged on GitHub since (the runner asks every few minutes): their
/// worktrees go and their runs' tasks are done. The runs whose pull requests were merged.
pub fn sync_pulls(t: &Tether) -> Result<Vec<String>> {
    review::sync_pulls(t)
}
