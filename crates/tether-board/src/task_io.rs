//! Moving tasks in and out: export as JSON or markdown, import from Taskmaster (`tasks.json`,
//! legacy and tagged layouts) and Backlog.md (a `backlog/` folder of markdown files with YAML
//! frontmatter).
//!
//! An import is one transaction: it lands whole or not at all. Each imported task keeps its origin
//! in `external_ref`, so importing the same file again refreshes title, description, priority and
//! acceptance criteria instead of duplicating; status and holders stay Tether's. Whatever does not
//! map is reported, never silently dropped. Knows nothing about the CLI or MCP.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::str::FromStr;

use serde::Serialize;
use serde_json::{Value, json};
use tether_store::sql::{Sql, SqlExt};
use tether_store::values;

use crate::error::{Error, Result};
use crate::tasks::{self, Actor, Insert, NewTask, Status, TaskDetail, TaskFilter};
use tether_store::sql::Database;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportFormat {
    Json,
    Markdown,
}

/// Every task with its notes and history.
pub(crate) fn export(store: &dyn Database, format: ExportFormat) -> Result<String> {
    let all = tasks::list(store, &TaskFilter { limit: usize::MAX >> 1, ..TaskFilter::default() })?;
    let details: Vec<TaskDetail> = all.iter().map(|t| tasks::get(store, &t.id)).collect::<Result<_>>()?;
    Ok(match format {
        ExportFormat::Json => serde_json::to_string_pretty(&json!({ "tasks": details }))?,
        ExportFormat::Markdown => {
            let mut out = tasks::board_markdown(store)?;
            for d in &details {
                out.push_str(&task_markdown(d));
            }
            out
        }
    })
}

fn task_markdown(d: &TaskDetail) -> String {
    let t = &d.task;
    let mut s = format!("\n---\n\n## {} {}\n\n", t.id, t.title);
    s.push_str(&format!("- status: {}\n- priority: {}\n", t.status, t.priority));
    for (k, v) in [("role", &t.role), ("project", &t.project), ("assignee", &t.assignee)] {
        if let Some(v) = v {
            s.push_str(&format!("- {k}: {v}\n"));
        }
    }
    if !t.labels.is_empty() {
        s.push_str(&format!("- labels: {}\n", t.labels.join(", ")));
    }
    if !t.depends_on.is_empty() {
        s.push_str(&format!("- depends on: {}\n", t.depends_on.join(", ")));
    }
    if !t.description.is_empty() {
        s.push_str(&format!("\n{}\n", t.description));
    }
    if !t.acceptance.is_empty() {
        s.push_str("\n### Acceptance criteria\n\n");
        for a in &t.acceptance {
            s.push_str(&format!("- {a}\n"));
        }
    }
    if let Some(sum) = &t.summary {
        s.push_str(&format!("\n### Summary\n\n{sum}\n"));
    }
    if !d.notes.is_empty() {
        s.push_str("\n### Notes\n\n");
        for n in &d.notes {
            let text = n.detail.get("text").and_then(Value::as_str).unwrap_or_default();
            s.push_str(&format!("- {} {} ({}): {}\n", n.at, n.actor, n.kind, text));
        }
    }
    s
}

/// What an import did, and what it could not carry over.
#[derive(Debug, Clone, Default, Serialize, ts_rs::TS)]
#[ts(export, export_to = "board.ts", rename = "TaskImportReport")]
pub struct ImportReport {
    pub source: String,
    /// New tasks, as `T-n ← origin id`.
    pub created: Vec<String>,
    /// Tasks imported before whose text was refreshed.
    pub updated: Vec<String>,
    /// Tasks imported before and unchanged.
    pub unchanged: Vec<String>,
    /// Fields or values that did not map, with how often.
    pub not_mapped: Vec<String>,
}

/// One task as read from a foreign format, before it gets a number.
#[derive(Debug, Default)]
struct Foreign {
    ext: String,
    title: String,
    description: String,
    status: Status,
    priority: Option<String>,
    labels: Vec<String>,
    acceptance: Vec<String>,
    /// Other `ext` ids this one waits for.
    deps: Vec<String>,
    /// Held by a person in the source tool.
    assignee: Option<String>,
    role: Option<String>,
    project: Option<String>,
}

/// Counts what did not map, for the report.
#[derive(Default, Clone)]
struct Unmapped(BTreeMap<String, usize>);

impl Unmapped {
    fn note(&mut self, what: impl Into<String>) {
        *self.0.entry(what.into()).or_default() += 1;
    }
    fn into_lines(self) -> Vec<String> {
        self.0.into_iter().map(|(k, n)| if n == 1 { k } else { format!("{k} ({n} tasks)") }).collect()
    }
}

/// Imports a Taskmaster `tasks.json` (legacy `{"tasks": […]}` or tagged `{"master": {"tasks": […]}, …}`).
pub(crate) fn import_taskmaster(store: &dyn Database, actor: &Actor, path: &Path) -> Result<ImportReport> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(format!("reading {}", path.display()), e))?;
    let root: Value = serde_json::from_str(&text)
        .map_err(|e| Error::invalid("Taskmaster file", format!("{} is not valid JSON: {e}", path.display())))?;
    let mut un = Unmapped::default();
    let tags: Vec<(String, &Vec<Value>)> = match root.get("tasks").and_then(Value::as_array) {
        Some(t) => vec![("master".to_owned(), t)],
        None => root
            .as_object()
            .map(|o| {
                o.iter().filter_map(|(k, v)| v.get("tasks").and_then(Value::as_array).map(|t| (k.clone(), t))).collect()
            })
            .unwrap_or_default(),
    };
    if tags.is_empty() {
        return Err(Error::invalid(
            "Taskmaster file",
            format!(
                "{} has no `tasks` array (neither {{\"tasks\": […]}} nor {{\"<tag>\": {{\"tasks\": […]}}}})",
                path.display()
            ),
        ));
    }
    let mut out = Vec::new();
    for (tag, list) in tags {
        let prefix = if tag == "master" { "taskmaster:".to_owned() } else { format!("taskmaster:{tag}:") };
        for t in list {
            let Some(id) = t.get("id").and_then(scalar) else {
                un.note("a task without an id was skipped");
                continue;
            };
            let mut f = taskmaster_task(t, &format!("{prefix}{id}"), &mut un);
            if tag != "master" {
                f.labels.push(format!("taskmaster:{tag}"));
            }
            for d in t.get("dependencies").and_then(Value::as_array).into_iter().flatten().filter_map(scalar) {
                f.deps.push(format!("{prefix}{d}"));
            }
            // Subtasks become tasks of their own that the parent waits for.
            for s in t.get("subtasks").and_then(Value::as_array).into_iter().flatten() {
                let Some(sid) = s.get("id").and_then(scalar) else {
                    un.note("a subtask without an id was skipped");
                    continue;
                };
                let ext = format!("{prefix}{id}.{sid}");
                let mut sub = taskmaster_task(s, &ext, &mut un);
                sub.labels.push(format!("subtask of {}", f.title));
                for d in s.get("dependencies").and_then(Value::as_array).into_iter().flatten().filter_map(scalar) {
                    // A bare number names a sibling; "3.1" or 3 in another form names it fully.
                    sub.deps.push(if d.contains('.') { format!("{prefix}{d}") } else { format!("{prefix}{id}.{d}") });
                }
                f.deps.push(ext);
                out.push(sub);
            }
            out.push(f);
        }
    }
    write_all(store, actor, "taskmaster", out, un)
}

fn scalar(v: &Value) -> Option<String> {
    match v {
        Value::Number(n) => Some(n.to_string()),
        Value::String(s) if !s.trim().is_empty() => Some(s.trim().to_owned()),
        _ => None,
    }
}

const TASKMASTER_KNOWN: &[&str] =
    &["id", "title", "description", "details", "testStrategy", "status", "priority", "dependencies", "subtasks"];

fn taskmaster_task(t: &Value, ext: &str, un: &mut Unmapped) -> Foreign {
    let s = |k: &str| t.get(k).and_then(Value::as_str).map(str::trim).unwrap_or_default().to_owned();
    let mut description = s("description");
    for (head, key) in [("Details", "details"), ("Test strategy", "testStrategy")] {
        let v = s(key);
        if !v.is_empty() {
            description.push_str(&format!("\n\n## {head}\n\n{v}"));
        }
    }
    let status = match s("status").to_ascii_lowercase().as_str() {
        "" | "pending" => Status::Todo,
        "in-progress" => Status::InProgress,
        "review" => Status::InReview,
        "done" => Status::Done,
        "blocked" => Status::Blocked,
        "cancelled" => Status::Cancelled,
        "deferred" => {
            un.note("status `deferred` became todo with the label `deferred`");
            Status::Todo
        }
        other => {
            un.note(format!("unknown status `{other}` became todo"));
            Status::Todo
        }
    };
    let mut labels = Vec::new();
    if s("status").eq_ignore_ascii_case("deferred") {
        labels.push("deferred".to_owned());
    }
    if let Some(o) = t.as_object() {
        for k in o.keys().filter(|k| !TASKMASTER_KNOWN.contains(&k.as_str())) {
            un.note(format!("field `{k}` was not imported"));
        }
    }
    Foreign {
        ext: ext.to_owned(),
        title: s("title"),
        description,
        status,
        priority: Some(s("priority")).filter(|p| !p.is_empty()),
        labels,
        ..Foreign::default()
    }
}

/// Copies every task of one board (`from`: this machine's own) onto another (`into`: a team's),
/// with its status, priority, role, project, labels, acceptance criteria and dependencies; each
/// keeps `origin:T-n` as its external reference, so copying again refreshes instead of
/// duplicating. Notes, history and holders' leases stay on the board they were made on (the
/// report says how many).
pub(crate) fn import_board(
    from: &dyn Database,
    into: &dyn Database,
    actor: &Actor,
    origin: &str,
) -> Result<ImportReport> {
    let all = tasks::list(from, &TaskFilter { limit: usize::MAX >> 1, ..TaskFilter::default() })?;
    let mut un = Unmapped::default();
    let mut items = Vec::with_capacity(all.len());
    for t in all {
        let d = tasks::get(from, &t.id)?;
        if !d.notes.is_empty() {
            un.note("notes and history stayed on this machine's board");
        }
        if d.task.summary.is_some() {
            un.note("a completion summary stayed on this machine's board");
        }
        let t = d.task;
        items.push(Foreign {
            ext: format!("{origin}:{}", t.id),
            title: t.title,
            description: t.description,
            status: t.status,
            priority: Some(t.priority.to_owned()),
            labels: t.labels,
            acceptance: t.acceptance,
            deps: t.depends_on.iter().map(|d| format!("{origin}:{d}")).collect(),
            assignee: t.assignee,
            role: t.role,
            project: t.project,
        });
    }
    write_all(into, actor, origin, items, un)
}

/// Imports a Backlog.md folder: `backlog/` or the project that holds it. Reads `tasks/`,
/// `drafts/` (labelled `draft`) and `completed/` (done); `archive/` is left out on purpose.
pub(crate) fn import_backlog(store: &dyn Database, actor: &Actor, dir: &Path) -> Result<ImportReport> {
    let root = if dir.join("tasks").is_dir() { dir.to_path_buf() } else { dir.join("backlog") };
    if !root.join("tasks").is_dir() {
        return Err(Error::invalid(
            "Backlog.md folder",
            format!("no tasks/ folder in {} or {}/backlog", dir.display(), dir.display()),
        ));
    }
    let mut un = Unmapped::default();
    let mut out = Vec::new();
    for (sub, draft) in [("tasks", false), ("drafts", true), ("completed", false)] {
        let Ok(rd) = std::fs::read_dir(root.join(sub)) else { continue };
        let mut files: Vec<_> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
        files.sort();
        for p in files.into_iter().filter(|p| p.extension().is_some_and(|e| e == "md")) {
            let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            let text = std::fs::read_to_string(&p).map_err(|e| Error::io(format!("reading {}", p.display()), e))?;
            match backlog_task(&text, &name, &mut un) {
                Some(mut f) => {
                    if draft {
                        f.labels.push("draft".into());
                    }
                    if sub == "completed" {
                        f.status = Status::Done;
                    }
                    out.push(f);
                }
                None => un.note(format!("{sub}/{name} has no readable frontmatter and was skipped")),
            }
        }
    }
    write_all(store, actor, "backlog", out, un)
}

const BACKLOG_KNOWN: &[&str] = &[
    "id",
    "title",
    "status",
    "assignee",
    "labels",
    "dependencies",
    "priority",
    "parent_task_id",
    "created_date",
    "updated_date",
    "ordinal",
];

fn backlog_task(text: &str, file_name: &str, un: &mut Unmapped) -> Option<Foreign> {
    use yaml_rust2::{Yaml, YamlLoader};
    let rest = text.strip_prefix("---")?.trim_start_matches(['\r', '\n']);
    let end = rest.find("\n---")?;
    let (front, body) = (&rest[..end], rest[end + 4..].trim_start_matches(['\r', '\n']));
    let doc = YamlLoader::load_from_str(front).ok()?.into_iter().next()?;
    let h = doc.as_hash()?;
    let get = |k: &str| h.get(&Yaml::String(k.into()));
    let text_of = |y: &Yaml| match y {
        Yaml::String(s) | Yaml::Real(s) => Some(s.trim().to_owned()),
        Yaml::Integer(i) => Some(i.to_string()),
        _ => None,
    };
    let list_of = |k: &str| -> Vec<String> {
        match get(k) {
            Some(Yaml::Array(a)) => a.iter().filter_map(text_of).filter(|s| !s.is_empty()).collect(),
            Some(y) => text_of(y).filter(|s| !s.is_empty()).into_iter().collect(),
            None => Vec::new(),
        }
    };
    let file_id = file_name.split(" - ").next().map(str::to_owned);
    let id = get("id").and_then(text_of).or(file_id)?.to_ascii_lowercase();
    let title = get("title")
        .and_then(text_of)
        .or_else(|| file_name.split_once(" - ").map(|(_, t)| t.trim_end_matches(".md").replace('-', " ")))?;
    let status_text = get("status").and_then(text_of).unwrap_or_default();
    let status = match status_text.to_ascii_lowercase().as_str() {
        "" | "to do" | "todo" => Status::Todo,
        other => Status::from_str(other).unwrap_or_else(|_| {
            un.note(format!("status `{status_text}` became todo"));
            Status::Todo
        }),
    };
    for k in h.keys().filter_map(Yaml::as_str).filter(|k| !BACKLOG_KNOWN.contains(k)) {
        un.note(format!("field `{k}` was not imported"));
    }
    let (description, acceptance) = backlog_body(body);
    let mut labels = list_of("labels");
    if let Some(parent) = get("parent_task_id").and_then(text_of) {
        labels.push(format!("subtask of {parent}"));
    }
    let assignee = list_of("assignee").into_iter().next().map(|a| a.trim_start_matches('@').to_owned());
    Some(Foreign {
        ext: format!("backlog:{id}"),
        title,
        description,
        status,
        priority: get("priority").and_then(text_of),
        labels,
        acceptance,
        deps: list_of("dependencies").into_iter().map(|d| format!("backlog:{}", d.to_ascii_lowercase())).collect(),
        assignee,
        ..Foreign::default()
    })
}

/// The body without its acceptance-criteria section, and the criteria (checked ones marked).
fn backlog_body(body: &str) -> (String, Vec<String>) {
    let mut desc = Vec::new();
    let mut acceptance = Vec::new();
    let mut in_ac = false;
    for line in body.lines() {
        let l = line.trim();
        if l.starts_with("## ") {
            in_ac = l.to_ascii_lowercase().starts_with("## acceptance criteria");
            if in_ac {
                continue;
            }
        }
        if in_ac {
            let item = l
                .strip_prefix("- [ ]")
                .map(|s| (s, false))
                .or_else(|| l.strip_prefix("- [x]").or_else(|| l.strip_prefix("- [X]")).map(|s| (s, true)));
            if let Some((s, checked)) = item {
                // Backlog.md numbers criteria as "#1 text".
                let s = s.trim();
                let s = s.strip_prefix('#').map_or(s, |r| r.trim_start_matches(|c: char| c.is_ascii_digit()).trim());
                acceptance.push(if checked { format!("{s} (done)") } else { s.to_owned() });
            }
            continue;
        }
        desc.push(line);
    }
    let d = desc.join("\n");
    let d = d.trim().strip_prefix("## Description").map_or(d.trim(), str::trim).to_owned();
    (d, acceptance)
}

fn write_all(
    store: &dyn Database,
    actor: &Actor,
    source: &str,
    items: Vec<Foreign>,
    mut un: Unmapped,
) -> Result<ImportReport> {
    let mut report = ImportReport { source: source.to_owned(), ..ImportReport::default() };
    let items: Vec<Foreign> = items
        .into_iter()
        .filter(|f| {
            let ok = !f.title.trim().is_empty();
            if !ok {
                un.note("a task without a title was skipped");
            }
            ok
        })
        .collect();
    let before = un.clone();
    store.durable(|txn| {
        // An engine may run this again (a team database's retried transaction): start over.
        (report.created, report.updated, report.unchanged, un) = (vec![], vec![], vec![], before.clone());
        let db: &dyn Sql = txn;
        let (_, who) = crate::principal::actor_name(db, &actor.who)?;
        let mut nums: HashMap<&str, i64> = HashMap::new();
        for f in &items {
            let title = tasks::clean_title(&f.title)?;
            let priority = match f.priority.as_deref().map(tasks::parse_priority) {
                Some(Ok(p)) => p,
                Some(Err(_)) => {
                    un.note(format!("priority `{}` became medium", f.priority.as_deref().unwrap_or_default()));
                    2
                }
                None => 2,
            };
            let labels = tasks::clean_list(&f.labels, "label")?;
            let acceptance = tasks::clean_list(&f.acceptance, "acceptance criterion")?;
            let known: Option<(i64, String, String, i64, String)> = db.query_opt(
                "SELECT num, title, description, priority, acceptance FROM tasks WHERE external_ref = ?1",
                values![f.ext],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
            )?;
            let num = match known {
                Some((num, t, d, p, a)) => {
                    let acc = serde_json::to_string(&acceptance)?;
                    let line = format!("{} ← {}", tasks::format_id(num), f.ext);
                    if (t.as_str(), d.as_str(), p, a.as_str()) == (title.as_str(), f.description.trim(), priority, &acc)
                    {
                        report.unchanged.push(line);
                    } else {
                        db.execute(
                            "UPDATE tasks SET title = ?2, description = ?3, priority = ?4, acceptance = ?5,
                                 updated_at = ?6, version = version + 1 WHERE num = ?1",
                            values![num, title, f.description.trim(), priority, acc, crate::clock::now_ms()],
                        )?;
                        tasks::event(db, num, &who, "edited", json!({"reimported_from": f.ext}))?;
                        report.updated.push(line);
                    }
                    num
                }
                None => {
                    let new = NewTask {
                        description: f.description.clone(),
                        role: f.role.clone(),
                        project: f.project.clone(),
                        ..NewTask::default()
                    };
                    let num = tasks::insert_in(
                        db,
                        &who,
                        &Insert {
                            title: &title,
                            new: &new,
                            status: f.status,
                            priority,
                            labels: &labels,
                            acceptance: &acceptance,
                        },
                    )?;
                    db.execute("UPDATE tasks SET external_ref = ?2 WHERE num = ?1", values![num, f.ext])?;
                    if f.status == Status::InProgress || f.assignee.is_some() {
                        // The source tool knew no leases: a person holds it until they release it.
                        let holder = f.assignee.clone().unwrap_or_else(|| who.clone());
                        db.execute("UPDATE tasks SET assignee = ?2 WHERE num = ?1", values![num, holder])?;
                    }
                    report.created.push(format!("{} ← {}", tasks::format_id(num), f.ext));
                    num
                }
            };
            nums.insert(&f.ext, num);
        }
        for f in &items {
            let num = nums[f.ext.as_str()];
            for d in &f.deps {
                let dep = match nums.get(d.as_str()) {
                    Some(n) => Some(*n),
                    None => db.query_opt("SELECT num FROM tasks WHERE external_ref = ?1", values![d], |r| r.get(0))?,
                };
                let Some(dep) = dep else {
                    un.note(format!("dependency on missing {d} was dropped"));
                    continue;
                };
                // A cycle in the foreign file is reported, not fatal: the rest still lands.
                match tasks::add_deps(db, num, &[tasks::format_id(dep)]) {
                    Ok(_) => {}
                    Err(e @ Error::DependencyCycle { .. }) => un.note(format!("{}: {e}", f.ext)),
                    Err(e) => return Err(e),
                }
            }
        }
        Ok(())
    })?;
    report.not_mapped = un.into_lines();
    Ok(report)
}
