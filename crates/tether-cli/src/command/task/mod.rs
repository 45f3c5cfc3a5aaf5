//! `tether task …`: the task board from the terminal (`ops::tasks`). People act at the CLI: their
//! claims hold without a lease, and `--force` lets them override an agent's hold. The text views
//! are in `view`.

mod view;

use std::path::PathBuf;

use clap::{Args, Subcommand};
use tether_core::Tether;
use tether_core::model::tasks::ExportFormat;
use tether_core::model::tasks::{NewTask, QueryResult, Status, Task, TaskChange, TaskFilter, TaskQuery};
use tether_core::ops::{self, Principal};

use crate::render::{self, JsonFlag};

#[derive(Debug, Args)]
pub struct TaskArgs {
    /// Who you are on the board (default: $TETHER_USER, else $USER).
    #[arg(long = "as", global = true, value_name = "NAME", env = "TETHER_USER")]
    pub as_user: Option<String>,
    #[command(subcommand)]
    pub cmd: TaskCmd,
}

#[derive(Debug, Subcommand)]
pub enum TaskCmd {
    /// Create a task.
    Add {
        title: String,
        /// Markdown description.
        #[arg(short, long, default_value = "")]
        description: String,
        /// critical, high, medium (default) or low.
        #[arg(short, long)]
        priority: Option<String>,
        /// The role that should do it (claim-next matches it).
        #[arg(long)]
        role: Option<String>,
        #[arg(long)]
        project: Option<String>,
        /// A label (repeatable).
        #[arg(short, long = "label", value_name = "LABEL")]
        labels: Vec<String>,
        /// A task that must be done first (repeatable), e.g. T-3.
        #[arg(long = "depends-on", value_name = "ID")]
        depends_on: Vec<String>,
        /// An acceptance criterion (repeatable).
        #[arg(long = "accept", value_name = "TEXT")]
        acceptance: Vec<String>,
        /// Start as blocked instead of todo.
        #[arg(long)]
        blocked: bool,
        #[command(flatten)]
        out: JsonFlag,
    },
    /// List tasks (default: every open one), best first.
    List {
        /// Only these statuses (repeatable): todo, in_progress, blocked, in_review, done, cancelled.
        #[arg(short, long = "status", value_name = "STATUS")]
        statuses: Vec<String>,
        /// `me`, an agent or person name, or `none`.
        #[arg(long)]
        assignee: Option<String>,
        #[arg(long)]
        role: Option<String>,
        #[arg(long)]
        project: Option<String>,
        #[arg(long)]
        label: Option<String>,
        /// Only tasks that can be claimed now.
        #[arg(long)]
        ready: bool,
        /// List at most N (up to 500; `tether task export` writes them all).
        #[arg(long, default_value_t = 200, value_name = "N")]
        limit: usize,
        #[command(flatten)]
        out: JsonFlag,
    },
    /// Show a task with its notes and history.
    Show {
        id: String,
        #[command(flatten)]
        out: JsonFlag,
    },
    /// Claim a task (atomically), or the best ready one when no id is given.
    Claim {
        id: Option<String>,
        /// With no id: prefer tasks for this role.
        #[arg(long)]
        role: Option<String>,
        /// With no id: only tasks of this project (or of none).
        #[arg(long)]
        project: Option<String>,
        #[command(flatten)]
        out: JsonFlag,
    },
    /// Change a task's status or fields.
    Update(UpdateArgs),
    /// Complete a task, optionally with a summary of what was done.
    Done {
        id: String,
        #[arg(short, long)]
        summary: Option<String>,
        /// Complete it even though another agent holds it.
        #[arg(long)]
        force: bool,
        #[command(flatten)]
        out: JsonFlag,
    },
    /// Add a comment, or a handoff note for whoever picks the task up next.
    Comment {
        id: String,
        text: String,
        #[arg(long)]
        handoff: bool,
        #[command(flatten)]
        out: JsonFlag,
    },
    /// Give a task back (unassigned, todo), optionally with a handoff note.
    Release {
        id: String,
        /// A handoff note: what is done and what is left.
        #[arg(short, long)]
        note: Option<String>,
        /// Release it even though another agent holds it.
        #[arg(long)]
        force: bool,
        #[command(flatten)]
        out: JsonFlag,
    },
    /// The board as columns in the terminal.
    Board(JsonFlag),
    /// Export every task with its notes and history.
    Export {
        #[arg(long, default_value = "json", value_parser = ["json", "md"])]
        format: String,
        /// Write to this file instead of stdout.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// Import from Taskmaster (a tasks.json) or Backlog.md (a backlog/ folder); again to refresh.
    Import {
        /// A Taskmaster tasks.json, or a Backlog.md folder (backlog/ or the project holding it).
        path: PathBuf,
        #[command(flatten)]
        out: JsonFlag,
    },
}

#[derive(Debug, Args)]
pub struct UpdateArgs {
    pub id: String,
    /// todo, in_progress, blocked, in_review, done or cancelled.
    #[arg(short, long)]
    pub status: Option<String>,
    #[arg(long)]
    pub title: Option<String>,
    #[arg(short, long)]
    pub description: Option<String>,
    #[arg(short, long)]
    pub priority: Option<String>,
    /// New role; empty clears it.
    #[arg(long)]
    pub role: Option<String>,
    /// New project; empty clears it.
    #[arg(long)]
    pub project: Option<String>,
    #[arg(long = "add-label", value_name = "LABEL")]
    pub add_labels: Vec<String>,
    #[arg(long = "remove-label", value_name = "LABEL")]
    pub remove_labels: Vec<String>,
    #[arg(long = "add-dep", value_name = "ID")]
    pub add_deps: Vec<String>,
    #[arg(long = "remove-dep", value_name = "ID")]
    pub remove_deps: Vec<String>,
    /// Assign to an agent (by name) or a person; empty unassigns.
    #[arg(long, value_name = "NAME")]
    pub assign: Option<String>,
    /// Add a comment with the change.
    #[arg(short, long)]
    pub comment: Option<String>,
    /// Change it even though another agent holds it.
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub out: JsonFlag,
}

pub fn run(t: &Tether, a: TaskArgs) -> anyhow::Result<()> {
    let me = super::me(a.as_user.as_deref());
    match a.cmd {
        TaskCmd::Add { title, description, priority, role, project, labels, depends_on, acceptance, blocked, out } => {
            let new = NewTask {
                title,
                description,
                priority,
                role,
                project,
                labels,
                depends_on,
                acceptance,
                status: blocked.then(|| "blocked".into()),
            };
            out.print(&ops::tasks::create(t, &me, &new)?, show_task)
        }
        TaskCmd::List { statuses, assignee, role, project, label, ready, limit, out } => {
            let q = TaskQuery { id: None, statuses, assignee, role, project, label, ready, limit };
            match ops::tasks::query(t, &me, &q)? {
                QueryResult::Many { tasks } if !out.json => {
                    view::list(&tasks);
                    Ok(())
                }
                r => render::json(&r),
            }
        }
        TaskCmd::Show { id, out } => out.print(&ops::tasks::get(t, &id)?, view::detail),
        TaskCmd::Claim { id, role, project, out } => {
            let c = ops::tasks::Claim { id, role, project, lease_minutes: None };
            out.print(&ops::tasks::claim(t, &me, c)?, show_task)
        }
        TaskCmd::Update(u) => {
            let cleared = |o: Option<String>| o.map(|v| Some(v).filter(|v| !v.trim().is_empty()));
            let change = TaskChange {
                status: u.status.as_deref().map(str::parse).transpose()?,
                title: u.title,
                description: u.description,
                priority: u.priority,
                role: cleared(u.role),
                project: cleared(u.project),
                add_labels: u.add_labels,
                remove_labels: u.remove_labels,
                add_deps: u.add_deps,
                remove_deps: u.remove_deps,
                assignee: cleared(u.assign),
                comment: u.comment,
                force: u.force,
                ..Default::default()
            };
            update(t, &me, u.id, change, &u.out)
        }
        TaskCmd::Done { id, summary, force, out } => {
            let change = TaskChange {
                status: Some(Status::Done),
                summary: summary.filter(|s| !s.trim().is_empty()),
                force,
                ..Default::default()
            };
            update(t, &me, id, change, &out)
        }
        TaskCmd::Comment { id, text, handoff, out } => {
            update(t, &me, id, TaskChange { comment: Some(text), handoff, ..Default::default() }, &out)
        }
        TaskCmd::Release { id, note, force, out } => {
            let handoff = note.is_some();
            update(t, &me, id, TaskChange { release: true, comment: note, handoff, force, ..Default::default() }, &out)
        }
        // The whole board, closed tasks included: more than a query lists.
        TaskCmd::Board(out) => out.print(
            t.board().tasks().list(&TaskFilter { limit: 100_000, ..Default::default() })?.as_slice(),
            view::board,
        ),
        TaskCmd::Export { format, out } => {
            let f = if format == "md" { ExportFormat::Markdown } else { ExportFormat::Json };
            render::to_file_or_stdout(out.as_deref(), &ops::tasks::export(t, f)?)
        }
        TaskCmd::Import { path, out } => out.print(&ops::tasks::import(t, &me, &path)?, view::import_report),
    }
}

fn update(t: &Tether, me: &Principal, id: String, change: TaskChange, out: &JsonFlag) -> anyhow::Result<()> {
    out.print(&ops::tasks::update(t, me, &ops::tasks::Update { id, change })?, show_task)
}

fn show_task(task: &Task) {
    view::list(std::slice::from_ref(task));
}
