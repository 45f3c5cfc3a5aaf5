//! What a run will be before it is queued: the checks that need no file system, a task's
//! prompt, and a follow-up's shape.

use super::model::*;
use super::query::get_run;
use crate::error::{Error, Result};
use crate::tasks;
use tether_store::sql::Database;

/// The prompt a task-bound run starts from when none is given: the task with its criteria and
/// the notes earlier agents left.
pub(crate) fn task_prompt(store: &dyn Database, task: &str) -> Result<String> {
    let d = tasks::get(store, task)?;
    let t = &d.task;
    let mut p = format!("Work on task {}: {}\n", t.id, t.title);
    if !t.description.trim().is_empty() {
        p.push_str(&format!("\n{}\n", t.description.trim()));
    }
    if !t.acceptance.is_empty() {
        p.push_str("\nIt is done when:\n");
        for a in &t.acceptance {
            p.push_str(&format!("- {a}\n"));
        }
    }
    let notes: Vec<String> = d
        .notes
        .iter()
        .filter_map(|n| {
            n.detail.get("text").and_then(|v| v.as_str()).map(|txt| format!("- {} ({}): {txt}", n.actor, n.kind))
        })
        .collect();
    if !notes.is_empty() {
        p.push_str("\nNotes from earlier work:\n");
        p.push_str(&notes.join("\n"));
        p.push('\n');
    }
    p.push_str("\nWhen you finish, end with a short summary of what you did and what is left.\n");
    Ok(p)
}

/// Checks what can be checked without the file system (the facade checks the workspace).
pub fn check(new: &NewRun) -> Result<()> {
    new.permissions.validate()?;
    if let Some(r) = &new.role
        && (r.trim().is_empty() || !r.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'))
    {
        return Err(Error::invalid("role", format!("{r:?}: use letters, digits, - and _")));
    }
    if let Some(m) = &new.model
        && (m.trim().is_empty() || m.starts_with('-') || m.chars().any(char::is_whitespace))
    {
        return Err(Error::invalid("model", format!("{m:?} is not a model id")));
    }
    if new.timeout_secs.is_some_and(|t| !(1..=24 * 3600).contains(&t)) {
        return Err(Error::invalid("timeout", "give 1 second to 24 hours"));
    }
    if new.prompt.as_deref().is_none_or(|p| p.trim().is_empty()) && new.task.is_none() {
        return Err(Error::invalid("run", "give a prompt, a task, or both"));
    }
    Ok(())
}

/// A follow-up: the parent's chat continued (`--resume`) with a new prompt, as a child run with
/// the parent's workspace, model, mode, role and permissions.
pub(crate) fn followup_of(store: &dyn Database, parent: &str, prompt: &str) -> Result<ValidRun> {
    followup_from(&get_run(store, parse_id(parent)?)?, prompt)
}

/// A follow-up of `p` (see [`followup_of`]).
pub(crate) fn followup_from(p: &Run, prompt: &str) -> Result<ValidRun> {
    let chat = p.chat_id.clone().ok_or_else(|| {
        Error::invalid("follow-up", format!("{} has no Cursor chat to continue (it never started)", p.id))
    })?;
    if prompt.trim().is_empty() {
        return Err(Error::invalid("follow-up", "say what the agent should do next"));
    }
    let isolation = match (&p.worktree, &p.cloud) {
        (Some(w), _) if w.state == WorktreeState::Removed => {
            return Err(Error::Conflict(format!(
                "{}'s worktree was removed ({}); start a new run",
                p.id,
                w.removed_why.as_deref().unwrap_or("removed")
            )));
        }
        (Some(w), _) => Isolation::Continue(w.id),
        (None, Some(_)) => Isolation::Cloud,
        (None, None) => Isolation::InPlace(p.in_place.clone().unwrap_or_else(|| "it continues a run that did".into())),
    };
    Ok(ValidRun {
        isolation,
        cloud: p.cloud.as_ref().map(CloudSpec::followup),
        prompt: prompt.to_owned(),
        task: None,
        workspace: p.workspace.clone().unwrap_or_default(),
        model: p.model.clone(),
        mode: p.mode,
        role: p.role.clone(),
        timeout_ms: p.timeout_secs * 1000,
        permissions: p.permissions.clone(),
        complete: false,
        parent: Some(p.num()),
        resume_chat: Some(chat),
        budget: p.budget,
        // Its chat (and its worktree) are on the machine that ran the parent.
        target: RunTarget { machine: p.machine.clone(), labels: Vec::new(), repo: p.repo.clone() },
    })
}
