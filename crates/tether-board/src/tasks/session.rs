//! What an agent asks of the board as it works: starting its session (its name, role and what it
//! holds), a query that lists or shows, and claiming for its role.

use std::str::FromStr;

use super::claim::claim;
use super::model::*;
use super::query::{get, list};
use crate::agents;
use crate::error::{Error, Result};
use crate::principal::{Actor, Identity};
use tether_store::sql::Database;

const AGENT_INSTRUCTIONS: &str = "Claim before you work: task_claim (no id = the best ready task for your role). \
Keep the task updated with task_update: comment as you go, set in_review or complete it with a summary. \
If you stop before it is done, release it with a handoff comment saying what is left. Never work on a \
task someone else holds; comment on it instead.";

/// Registers the agent with a role and name, and tells it what it holds.
pub(crate) fn start_session(
    store: &dyn Database,
    who: &Identity,
    role: Option<&str>,
    name: Option<&str>,
) -> Result<SessionStart> {
    let agent = agents::start(store, who, role, name)?;
    let holding = list(
        store,
        &TaskFilter {
            statuses: vec![Status::InProgress, Status::InReview],
            assignee: Some(agent.name.clone()),
            ..Default::default()
        },
    )?;
    let ready = list(
        store,
        &TaskFilter {
            ready: true,
            role: agent.role.clone(),
            project: agent.project.clone(),
            limit: 10_000,
            ..Default::default()
        },
    )?
    .len();
    Ok(SessionStart { agent, holding, ready, instructions: AGENT_INSTRUCTIONS })
}

pub(crate) fn query(store: &dyn Database, actor: &Actor, q: &TaskQuery) -> Result<QueryResult> {
    if let Some(id) = &q.id {
        return Ok(QueryResult::One(Box::new(get(store, id)?)));
    }
    let mut statuses = q
        .statuses
        .iter()
        .flat_map(|s| s.split(','))
        .filter(|s| !s.is_empty())
        .map(Status::from_str)
        .collect::<Result<Vec<_>>>()?;
    if statuses.is_empty() && !q.ready {
        statuses = Status::ALL.into_iter().filter(|s| !s.is_closed()).collect();
    }
    let assignee = match q.assignee.as_deref().map(str::trim) {
        Some("me") => Some(agents::get(store, &actor.who.id).map(|a| a.name).unwrap_or_else(|_| actor.who.id.clone())),
        other => other.map(str::to_owned),
    };
    let f = TaskFilter {
        statuses,
        assignee,
        role: q.role.clone(),
        project: q.project.clone(),
        label: q.label.clone(),
        ready: q.ready,
        limit: match q.limit {
            0 => TaskQuery::PAGE,
            n if n > MAX_LIST => {
                return Err(Error::invalid(
                    "limit",
                    format!(
                        "{n} is more than {MAX_LIST}; narrow the filter, or export every task (`tether task export`)"
                    ),
                ));
            }
            n => n,
        },
    };
    Ok(QueryResult::Many { tasks: list(store, &f)? })
}

/// Claims `id`, or the best ready task for the role and project given or else the agent's own.
pub(crate) fn claim_for(
    store: &dyn Database,
    actor: &Actor,
    id: Option<String>,
    role: Option<String>,
    project: Option<String>,
) -> Result<Task> {
    let target = match id.filter(|i| !i.trim().is_empty()) {
        Some(id) => ClaimTarget::Id(id),
        None => {
            let known = agents::get(store, &actor.who.id).ok();
            ClaimTarget::Next {
                role: role.or_else(|| known.as_ref().and_then(|a| a.role.clone())),
                project: project.or_else(|| actor.who.project.clone()),
            }
        }
    };
    claim(store, actor, &target)
}
