//! `tether runs …`: list and read runs, follow a run's log, cancel, approve a held run, follow
//! one up in its chat (`ops::runs`); a run's diff, comments on it, merge and discard
//! (`ops::changes`). Cloud runs are runs too.

use std::sync::Arc;

use clap::Subcommand;
use tether_core::Tether;
use tether_core::model::runs::Strategy;
use tether_core::model::runs::{Run, RunDetail, RunFilter, RunStatus};
use tether_core::ops;
use tether_core::ops::changes::{CommentRequest, DiffRequest, MergeRequest, PrRequest, SendComments};

use super::run::follow::{self, EventPrinter};
use super::run::review;
use crate::render::{JsonFlag, bold, cut, dim, home_short, local_time};
use crate::rt;

#[derive(Debug, Subcommand)]
pub enum RunsCmd {
    /// Runs, newest first.
    List {
        /// Only these statuses (repeatable): queued, running, succeeded, failed, timed_out, cancelled, lost.
        #[arg(short, long = "status", value_name = "STATUS")]
        statuses: Vec<String>,
        /// Only runs of this task.
        #[arg(long, value_name = "ID")]
        task: Option<String>,
        #[arg(long, default_value_t = 50, value_name = "N")]
        limit: usize,
        #[command(flatten)]
        out: JsonFlag,
    },
    /// One run: its status, result, error and chat.
    Show {
        id: String,
        /// Include every event.
        #[arg(long)]
        events: bool,
        #[command(flatten)]
        out: JsonFlag,
    },
    /// The run's events, readable (with --follow, until it ends).
    Logs {
        id: String,
        #[arg(long)]
        follow: bool,
    },
    /// Stop a run (SIGTERM to its process group, then SIGKILL after a grace period).
    Cancel {
        id: String,
        #[command(flatten)]
        out: JsonFlag,
    },
    /// Let a run held for your approval start (a wake that signals from outside this machine
    /// caused, with write or shell permissions). `cancel` refuses it.
    Approve {
        id: String,
        #[command(flatten)]
        out: JsonFlag,
    },
    /// Continue a run's Cursor chat with a new prompt, as a new run (in its worktree).
    Followup {
        id: String,
        /// What to do next (optional with --comments).
        #[arg(required_unless_present = "comments")]
        prompt: Option<String>,
        /// Send the open comments on the run's diff (file, lines, quoted lines, comment) as the prompt.
        #[arg(long)]
        comments: bool,
        #[arg(long)]
        follow: bool,
        #[command(flatten)]
        out: JsonFlag,
    },
    /// What the run's branch changed against its base: files with line counts and the unified diff.
    Diff {
        id: String,
        /// Files and counts only.
        #[arg(long)]
        stat: bool,
        #[command(flatten)]
        out: JsonFlag,
    },
    /// Comment on lines of the run's diff, e.g. `src/lib.rs:3-5 "use a match here"`.
    Comment {
        id: String,
        /// FILE:LINE or FILE:FIRST-LAST, in the file as the run left it.
        at: String,
        text: String,
        #[command(flatten)]
        out: JsonFlag,
    },
    /// Merge the run's branch into its base branch (or --into), also when it is checked out.
    Merge {
        id: String,
        /// One commit with the run's changes (default).
        #[arg(long, group = "how")]
        squash: bool,
        /// Replay the run's commits on the branch.
        #[arg(long, group = "how")]
        rebase: bool,
        /// A merge commit.
        #[arg(long, group = "how")]
        merge: bool,
        /// The branch to merge into [default: the branch the run started from].
        #[arg(long, value_name = "BRANCH")]
        into: Option<String>,
        #[command(flatten)]
        out: JsonFlag,
    },
    /// Push the run's branch to origin and open a pull request on GitHub (or answer the open one).
    Pr {
        id: String,
        /// The branch it goes into [default: the branch the run started from].
        #[arg(long, value_name = "BRANCH")]
        base: Option<String>,
        #[arg(long)]
        title: Option<String>,
        #[arg(long)]
        draft: bool,
        #[command(flatten)]
        out: JsonFlag,
    },
    /// Throw the run's work away: its worktree and its branch are removed.
    Discard {
        id: String,
        #[command(flatten)]
        out: JsonFlag,
    },
    /// The worktrees Tether keeps for runs, and the disk they use.
    Worktrees {
        #[command(flatten)]
        out: JsonFlag,
    },
}

pub fn run(t: Tether, cmd: RunsCmd) -> anyhow::Result<()> {
    let me = super::me(None);
    match cmd {
        RunsCmd::List { statuses, task, limit, out } => {
            let statuses = statuses.iter().map(|s| s.parse()).collect::<Result<Vec<RunStatus>, _>>()?;
            let list = ops::runs::list(&t, &RunFilter { statuses, task, chat: None, limit })?;
            out.print(list.as_slice(), print_list)
        }
        RunsCmd::Show { id, events, out } => {
            out.print(&ops::runs::get(&t, &id, None, if events { None } else { Some(0) })?, print_detail)
        }
        RunsCmd::Logs { id, follow } => {
            ops::runs::get(&t, &id, None, Some(0))?;
            if follow {
                rt::current_thread()?.block_on(follow::follow_events(&Arc::new(t), &id, true, false))?;
                return Ok(());
            }
            // A page at a time: a big run's log is never held whole.
            let mut p = EventPrinter::default();
            let mut after = 0;
            loop {
                let page = ops::runs::events_after(&t, &id, after, 1000)?;
                for e in &page {
                    p.print(e);
                }
                match page.last() {
                    Some(e) if page.len() == 1000 => after = e.seq,
                    _ => break,
                }
            }
            p.finish();
            Ok(())
        }
        RunsCmd::Cancel { id, out } => out.print(&ops::runs::cancel(&t, &me, &id)?, |r| match r.status {
            RunStatus::Cancelled => println!("{} cancelled before it started.", r.id),
            _ => println!("{}: asked to stop; its runner ends it within a second.", r.id),
        }),
        RunsCmd::Approve { id, out } => out.print(&ops::runs::approve(&t, &me, &id)?, |r| {
            println!("{} approved; it starts when a runner is free.", r.id);
        }),
        RunsCmd::Followup { id, prompt, comments, follow, out } => {
            let r = if comments {
                ops::changes::send_comments(&t, &me, &SendComments { run: id, text: prompt })?
            } else {
                ops::runs::followup(&t, &me, &ops::runs::Followup { run: id, prompt: prompt.unwrap_or_default() })?
            };
            follow::start_or_follow(t, &me, r, follow, out.json)
        }
        RunsCmd::Diff { id, stat, out } => {
            out.print(&ops::changes::diff(&t, &me, &DiffRequest { run: id, stat })?, review::print_diff)
        }
        RunsCmd::Comment { id, at, text, out } => {
            let comment = review::parse_at(&at, text)?;
            out.print(&ops::changes::comment(&t, &me, &CommentRequest { run: id, comment })?, review::print_comment)
        }
        RunsCmd::Merge { id, squash: _, rebase, merge, into, out } => {
            let strategy = if rebase {
                Strategy::Rebase
            } else if merge {
                Strategy::Merge
            } else {
                Strategy::Squash
            };
            out.print(&ops::changes::merge(&t, &me, &MergeRequest { run: id, strategy, into })?, review::print_merge)
        }
        RunsCmd::Pr { id, base, title, draft, out } => {
            let req = PrRequest { run: id, base, title, draft };
            out.print(&ops::changes::pr(&t, &me, &req)?, |p| {
                let what = if p.created { "opened" } else { "already open; pushed the new commits" };
                println!("{} pull request #{} {what}: {}", p.run.id, p.number, p.url);
            })
        }
        RunsCmd::Discard { id, out } => out.print(&ops::changes::discard(&t, &me, &id)?, |r| {
            println!("{}'s worktree and branch are removed.", r.id);
        }),
        RunsCmd::Worktrees { out } => out.print(&ops::worktrees::worktrees(&t)?, review::print_worktrees),
    }
}

fn print_list(list: &[Run]) {
    if list.is_empty() {
        println!("No runs yet. Start one: tether run \"…\" --workspace DIR");
        return;
    }
    println!(
        "{}",
        dim(&format!(
            "{:<6}  {:<10}  {:<6}  {:<16}  {:<5}  {:<24}  PROMPT",
            "ID", "STATUS", "MODE", "STARTED", "TASK", "WORKSPACE"
        ))
    );
    for r in list {
        println!(
            "{:<6}  {:<10}  {:<6}  {:<16}  {:<5}  {:<24}  {}",
            r.id,
            r.status.as_str(),
            r.mode.as_str(),
            local_time(r.started_at.as_deref().or(Some(&r.created_at))),
            r.task.as_deref().unwrap_or("—"),
            cut(&place(r), 24),
            cut(r.prompt.lines().next().unwrap_or(""), 50)
        );
    }
}

/// Where a run works: its folder, or a cloud run's repository.
fn place(r: &Run) -> String {
    match &r.cloud {
        Some(c) => format!("☁ {}", tether_core::model::sessions::repo_project(&c.repo)),
        None => home_short(r.workspace.as_deref().unwrap_or("")),
    }
}

fn print_detail(d: &RunDetail) {
    let r = &d.run;
    follow::print_summary(r);
    println!(
        "{}",
        dim(&format!(
            "  {} · mode {} · model {} · role {} · timeout {} s · by {} · created {}",
            place(r),
            r.mode.as_str(),
            r.model.as_deref().unwrap_or("default"),
            r.role.as_deref().unwrap_or("—"),
            r.timeout_secs,
            r.requested_by,
            local_time(Some(&r.created_at))
        ))
    );
    if let Some(t) = &r.task {
        println!("  task {t}{}", if r.complete_task { " (done on success)" } else { "" });
    }
    if !r.permissions.is_empty() {
        println!("  allow {:?} · deny {:?}", r.permissions.allow, r.permissions.deny);
    }
    if let Some(p) = &r.parent {
        println!("  follows up {p}");
    }
    if !d.children.is_empty() {
        println!("  follow-ups: {}", d.children.join(", "));
    }
    println!("\n{}", bold("Prompt"));
    for l in r.prompt.lines() {
        println!("  {l}");
    }
    if let Some(res) = &r.result {
        println!("\n{}", bold("Result"));
        for l in res.lines() {
            println!("  {l}");
        }
    }
    if !d.events.is_empty() {
        println!("\n{}", bold("Events"));
        let mut p = EventPrinter::default();
        for e in &d.events {
            p.print(e);
        }
        p.finish();
    }
}
