//! `tether task …`: one thin call into `tether_core::board::tasks` per subcommand. People act at the
//! CLI: their claims hold without a lease, and `--force` lets them override an agent's hold.

use tether_core::Tether;
use tether_core::board::task_io;
use tether_core::board::tasks::{self, Actor, NewTask, TaskChange, TaskQuery};

use crate::cli::{TaskArgs, TaskCmd, UpdateArgs};
use crate::output;

pub fn run(t: &Tether, a: TaskArgs) -> anyhow::Result<()> {
    let user = a
        .as_user
        .or_else(|| std::env::var("USER").ok())
        .filter(|u| !u.trim().is_empty())
        .unwrap_or_else(|| "me".into());
    let me = Actor::person(user.trim());
    let b = t.board();
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
            show_task(&b.create_task(&me, &new)?, out.json)
        }
        TaskCmd::List { statuses, assignee, role, project, label, ready, limit, out } => {
            let q = TaskQuery { id: None, statuses, assignee, role, project, label, ready, limit };
            match b.query_tasks(&me, &q)? {
                tasks::QueryResult::Many { tasks } if !out.json => {
                    output::tasks(&tasks);
                    Ok(())
                }
                r => output::json(&r),
            }
        }
        TaskCmd::Show { id, out } => {
            let d = b.task(&id)?;
            if out.json {
                output::json(&d)
            } else {
                output::task_detail(&d);
                Ok(())
            }
        }
        TaskCmd::Claim { id, role, project, out } => show_task(&b.claim(&me, id, role, project)?, out.json),
        TaskCmd::Update(u) => update(t, &me, u),
        TaskCmd::Done { id, summary, force, out } => {
            let ch = TaskChange {
                status: Some(tasks::Status::Done),
                summary: summary.filter(|s| !s.trim().is_empty()),
                force,
                ..Default::default()
            };
            show_task(&b.update_task(&me, &id, &ch)?, out.json)
        }
        TaskCmd::Comment { id, text, handoff, out } => {
            let ch = TaskChange { comment: Some(text), handoff, ..Default::default() };
            show_task(&b.update_task(&me, &id, &ch)?, out.json)
        }
        TaskCmd::Release { id, note, force, out } => {
            let handoff = note.is_some();
            let ch = TaskChange { release: true, comment: note, handoff, force, ..Default::default() };
            show_task(&b.update_task(&me, &id, &ch)?, out.json)
        }
        TaskCmd::Board(o) => {
            let all = b.tasks(&tasks::TaskFilter { limit: 100_000, ..Default::default() })?;
            if o.json {
                output::json(&all)
            } else {
                output::board(&all);
                Ok(())
            }
        }
        TaskCmd::Export { format, out } => {
            let f = if format == "md" { task_io::ExportFormat::Markdown } else { task_io::ExportFormat::Json };
            output::to_file_or_stdout(out.as_deref(), &b.export_tasks(f)?)
        }
        TaskCmd::Import { path, out } => {
            let r = b.import_tasks(&me, &path)?;
            if out.json {
                output::json(&r)
            } else {
                output::import_report(&r);
                Ok(())
            }
        }
    }
}

fn update(t: &Tether, me: &Actor, u: UpdateArgs) -> anyhow::Result<()> {
    let cleared = |o: Option<String>| o.map(|v| Some(v).filter(|v| !v.trim().is_empty()));
    let ch = TaskChange {
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
    show_task(&t.board().update_task(me, &u.id, &ch)?, u.out.json)
}

fn show_task(task: &tasks::Task, json: bool) -> anyhow::Result<()> {
    if json {
        output::json(task)
    } else {
        output::tasks(std::slice::from_ref(task));
        Ok(())
    }
}
