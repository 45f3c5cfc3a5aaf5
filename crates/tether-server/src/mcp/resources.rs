//! The MCP resources: the task board, the caller's signal inbox, past chats and agent runs, each
//! as Markdown. Subscribers hear of changes (see [`super::notify`] and [`super::doorbell`]).

use std::sync::Arc;

use rmcp::ErrorData;
use rmcp::model::{
    ListResourceTemplatesResult, ListResourcesResult, ReadResourceResponse, ReadResourceResult, Resource,
    ResourceContents, ResourceTemplate,
};
use tether_core::model::principal::Principal;
use tether_core::model::runs::RunDetail;
use tether_core::model::sessions::ListQuery;
use tether_core::model::signals::Signal;
use tether_core::ops;

use super::doorbell::INBOX_URI;
use super::error::blocking;
use crate::Server;

pub const SESSION_URI_PREFIX: &str = "tether://session/";
/// One agent run: status and recent events; subscribers hear as it goes.
pub const RUN_URI_PREFIX: &str = "tether://run/";
/// The task board, as markdown; subscribers hear of every task change.
pub const TASKS_URI: &str = "tether://tasks";
/// What runs spent today and in the last 30 days, against the budgets.
pub const USAGE_URI: &str = "tether://usage";

pub(crate) async fn list(server: &Arc<Server>) -> Result<ListResourcesResult, ErrorData> {
    let rows =
        blocking(&server.tether, |t| ops::sessions::list(t, &ListQuery { limit: 50, ..Default::default() })).await?;
    let board = Resource::new(TASKS_URI, "Task board")
        .with_description("Tether's shared task board (markdown); subscribe to hear of every change")
        .with_mime_type("text/markdown");
    let inbox = Resource::new(INBOX_URI, "Your signal inbox")
        .with_description(
            "Signals waiting for you (read without marking them read); subscribe to hear when one arrives, \
             then call signals_pending",
        )
        .with_mime_type("text/markdown");
    let usage = Resource::new(USAGE_URI, "Usage and budgets")
        .with_description(
            "Tokens and estimated cost of runs today and in the last 30 days, by model, against the budgets",
        )
        .with_mime_type("text/markdown");
    let items = [board, inbox, usage]
        .into_iter()
        .chain(rows.into_iter().map(|s| {
            Resource::new(
                format!("{SESSION_URI_PREFIX}{}", s.id),
                s.title.clone().unwrap_or_else(|| "(untitled chat)".into()),
            )
            .with_description(format!(
                "Cursor chat, {} messages, updated {}",
                s.messages,
                s.updated_at.unwrap_or_default()
            ))
            .with_mime_type("text/markdown")
        }))
        .collect();
    Ok(ListResourcesResult::with_all_items(items))
}

pub(crate) fn templates() -> ListResourceTemplatesResult {
    ListResourceTemplatesResult::with_all_items(vec![
        ResourceTemplate::new(format!("{SESSION_URI_PREFIX}{{id}}"), "Cursor chat")
            .with_description("A past Cursor chat as markdown")
            .with_mime_type("text/markdown"),
        ResourceTemplate::new(format!("{RUN_URI_PREFIX}{{id}}"), "Agent run")
            .with_description(
                "A run of the Cursor CLI (agent_run): status, result and recent events; subscribe to follow it",
            )
            .with_mime_type("text/markdown"),
    ])
}

pub(crate) async fn read(server: &Arc<Server>, uri: &str, who: &Principal) -> Result<ReadResourceResponse, ErrorData> {
    let t = &server.tether;
    let md = if uri == TASKS_URI {
        blocking(t, ops::tasks::markdown).await?
    } else if let Some(id) = uri.strip_prefix(RUN_URI_PREFIX).map(str::to_owned) {
        blocking(t, move |t| ops::runs::get(t, &id, None, Some(40))).await.map(|d| run_markdown(&d))?
    } else if uri == USAGE_URI {
        let who = who.clone();
        blocking(t, move |t| usage_markdown(t, &who)).await?
    } else if uri == INBOX_URI {
        let who = who.clone();
        blocking(t, move |t| ops::signals::pending(t, &who)).await.map(|s| inbox_markdown(&s))?
    } else if let Some(id) = uri.strip_prefix(SESSION_URI_PREFIX).map(str::to_owned) {
        blocking(t, move |t| ops::sessions::export(t, &id, tether_core::model::sessions::Format::Markdown)).await?
    } else {
        return Err(ErrorData::resource_not_found(format!("unknown resource {uri}"), None));
    };
    let mut c = ResourceContents::text(md, uri.to_owned());
    if let ResourceContents::TextResourceContents { mime_type, .. } = &mut c {
        *mime_type = Some("text/markdown".into());
    }
    Ok(ReadResourceResult::new(vec![c]).into())
}

/// The usage resource: today's runs against the daily budget, the last 30 days by model.
fn usage_markdown(t: &tether_core::Tether, who: &Principal) -> tether_core::Result<String> {
    use tether_core::usage::report::{Dim, UsageQuery};
    let s = ops::usage::summary(t, who)?;
    let mut out = format!("# Usage\n\n{}\n", s.line);
    if let Some(h) = &s.held {
        out.push_str(&format!("\n**New runs wait:** {h}\n"));
    }
    let r = ops::usage::report(t, who, &UsageQuery { by: vec![Dim::Model], ..Default::default() })?;
    out.push_str(&format!(
        "\n## Last 30 days by model ({} to {})\n\n| source | model | tokens | cost |\n|---|---|---|---|\n",
        r.from, r.to
    ));
    for row in &r.rows {
        // A group without figures spent an unknown amount: `—`, never `0`.
        let cost = match row.cost_usd {
            Some(c) => format!("${c:.2}{}", if row.cost_estimated { " (estimate)" } else { "" }),
            None if row.tokens.is_none() => "—".into(),
            None => "no price".into(),
        };
        out.push_str(&format!(
            "| {} | {} | {} | {cost} |\n",
            row.source,
            row.keys.first().map_or("", String::as_str),
            row.tokens.map_or_else(|| "— (not recorded)".to_owned(), tether_core::usage::thousands)
        ));
    }
    out.push('\n');
    for n in &r.coverage.notes {
        out.push_str(&format!("- {n}\n"));
    }
    Ok(out)
}

/// The inbox resource: what waits, in the order it came, and how to take it.
fn inbox_markdown(signals: &[Signal]) -> String {
    if signals.is_empty() {
        return "No signals are waiting for you.\n".into();
    }
    let mut out =
        format!("# {} signal(s) waiting\n\nCall `signals_pending` to read and mark them read.\n\n", signals.len());
    for s in signals {
        out.push_str(&format!("- {} {} from {} ({})\n", s.id, s.kind, s.from, s.created_at));
    }
    out
}

/// A run as the agent that started it reads it: status, result or error, the last events.
fn run_markdown(d: &RunDetail) -> String {
    use tether_core::model::runs::RunEvent as E;
    let r = &d.run;
    let mut out = format!("# {} — {}\n\n", r.id, r.status);
    out.push_str(&format!("- workspace: {}\n", r.workspace.as_deref().unwrap_or("—")));
    if let Some(c) = &r.chat_id {
        out.push_str(&format!("- Cursor chat: {c}\n"));
    }
    if let Some(t) = &r.task {
        out.push_str(&format!("- task: {t}\n"));
    }
    match (&r.worktree, &r.in_place) {
        (Some(w), _) => {
            out.push_str(&format!(
                "- branch: {} (from {})\n",
                w.branch,
                w.base_branch.as_deref().unwrap_or("a detached checkout")
            ));
            if let Some(c) = r.changes {
                out.push_str(&format!(
                    "- changes: {} files, +{} −{} (read them with run_diff)\n",
                    c.files, c.added, c.deleted
                ));
            }
            if let Some(into) = &w.merged_into {
                out.push_str(&format!("- merged into {into}\n"));
            }
            if let Some(u) = &w.pr_url {
                out.push_str(&format!("- pull request: {u}\n"));
            }
        }
        (None, Some(why)) => out.push_str(&format!("- worked in place: {why}\n")),
        _ => {}
    }
    if r.usage.is_some() || r.budget.is_some() {
        let tokens = r.usage.as_ref().map(|u| tether_core::usage::thousands(u.total(true)));
        out.push_str(&format!(
            "- tokens: {}{}{}\n",
            tokens.as_deref().unwrap_or("not reported yet"),
            r.cost_usd.map(|c| format!(" (${c:.2}, Cursor's figure)")).unwrap_or_default(),
            r.budget.map(|b| format!("; budget {b}")).unwrap_or_default()
        ));
    }
    if let Some(e) = &r.error {
        out.push_str(&format!("- error: {e}\n"));
    }
    if let Some(w) = &r.warning {
        out.push_str(&format!("- note: {w}\n"));
    }
    if let Some(res) = &r.result {
        out.push_str(&format!("\n## Result\n\n{res}\n"));
    }
    out.push_str("\n## Last events\n\n");
    for e in &d.events {
        let line = match &e.event {
            E::Assistant { text, .. } => format!("assistant: {}", text.trim()),
            E::ToolCall { tool, phase, command, path, outcome, .. } => format!(
                "tool {tool} {phase} {} {}",
                command.as_deref().or(path.as_deref()).unwrap_or(""),
                outcome.as_deref().unwrap_or("")
            ),
            E::Status { status, message } => format!("[{status}] {}", message.as_deref().unwrap_or("")),
            E::Stderr { text } => format!("stderr: {text}"),
            other => other.kind().to_owned(),
        };
        out.push_str(&format!("- {}\n", line.trim()));
    }
    out
}
