//! Human-readable rendering for the terminal. JSON output is serde's, straight from core types.

use std::io::IsTerminal;

use tether_core::board::signals::{Signal, SignalDetail};
use tether_core::history::index::IndexReport;
use tether_core::history::model::Tally;
use tether_core::history::sessions::{SearchHit, SessionDetail, SessionSummary};

pub fn json<T: serde::Serialize + ?Sized>(v: &T) -> anyhow::Result<()> {
    println!("{}", serde_json::to_string_pretty(v)?);
    Ok(())
}

/// An export: to the file when one is given (saying so on stderr), else to stdout.
pub fn to_file_or_stdout(path: Option<&std::path::Path>, text: &str) -> anyhow::Result<()> {
    use anyhow::Context;
    match path {
        Some(p) => {
            std::fs::write(p, text).with_context(|| format!("writing {}", p.display()))?;
            eprintln!("Wrote {}", p.display());
        }
        None if text.ends_with('\n') => print!("{text}"),
        None => println!("{text}"),
    }
    Ok(())
}

pub fn color() -> bool {
    std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none()
}

fn bold(s: &str) -> String {
    if color() { format!("\x1b[1m{s}\x1b[0m") } else { s.to_owned() }
}

fn dim(s: &str) -> String {
    if color() { format!("\x1b[2m{s}\x1b[0m") } else { s.to_owned() }
}

/// RFC 3339 → local `YYYY-MM-DD HH:MM`.
pub fn local_time(iso: Option<&str>) -> String {
    iso.and_then(|s| chrono::DateTime::parse_from_rfc3339(s).ok())
        .map(|d| d.with_timezone(&chrono::Local).format("%Y-%m-%d %H:%M").to_string())
        .unwrap_or_else(|| "—".into())
}

fn home_short(p: &str) -> String {
    match std::env::var("HOME") {
        Ok(h) if !h.is_empty() && p.starts_with(&h) => format!("~{}", &p[h.len()..]),
        _ => p.to_owned(),
    }
}

/// A path shortened to `max` characters for a column (home as `~`, the end kept).
pub fn cut_path(p: &str, max: usize) -> String {
    let h = home_short(p);
    let n = h.chars().count();
    if n <= max { h } else { format!("…{}", h.chars().skip(n + 1 - max).collect::<String>()) }
}

fn cut(s: &str, max: usize) -> String {
    tether_core::history::model::truncate_chars(s, max)
}

pub fn sessions(list: &[SessionSummary]) {
    if list.is_empty() {
        println!("No chats found. Run `tether index` first, or check `tether doctor` for where Tether looked.");
        return;
    }
    if list.iter().any(|s| !s.searchable) {
        eprintln!("{}", dim("(… = listed, messages not indexed yet)"));
    }
    println!("{}", dim(&format!("{:<16}  {:>5}  {:<4}  {:<8}  TITLE / PROJECT", "UPDATED", "MSGS", "SRC", "ID")));
    for s in list {
        let mut title = s.title.clone().unwrap_or_else(|| "(untitled)".into());
        if s.bookmarked {
            title = format!("★ {title}");
        }
        if let Some(n) = &s.nickname {
            title = format!("{title} [{n}]");
        }
        if !s.tags.is_empty() {
            title = format!("{title} #{}", s.tags.join(" #"));
        }
        let project = s.project.as_deref().map(home_short).unwrap_or_default();
        // Listed by a first index that has not read its messages yet.
        let messages = if s.searchable { s.messages.to_string() } else { "…".into() };
        println!(
            "{:<16}  {:>5}  {:<4}  {:<8}  {}  {}",
            local_time(s.updated_at.as_deref()),
            messages,
            s.source,
            &s.id[..s.id.len().min(8)],
            cut(&title, 70),
            dim(&project)
        );
    }
}

pub fn hits(hits: &[SearchHit]) {
    if hits.is_empty() {
        println!("No matches.");
        return;
    }
    for h in hits {
        println!(
            "{}  {}  {}",
            bold(&cut(h.title.as_deref().unwrap_or("(untitled)"), 70)),
            dim(&h.session_id),
            dim(&h.project.as_deref().map(home_short).unwrap_or_default())
        );
        println!("    {}", h.snippet.replace('\n', " "));
    }
}

pub fn detail(d: &SessionDetail) {
    let s = &d.session;
    println!("{}", bold(s.title.as_deref().unwrap_or("(untitled)")));
    println!(
        "{}",
        dim(&format!(
            "{} · {} · {} · updated {}",
            s.id,
            s.project.as_deref().map(home_short).unwrap_or_else(|| "no project".into()),
            s.format,
            local_time(s.updated_at.as_deref())
        ))
    );
    for m in &d.messages {
        match m.kind.as_str() {
            "tool" => println!(
                "  {} {}{}: {}",
                dim("⚙"),
                m.tool_name.as_deref().unwrap_or("tool"),
                m.tool_status.as_deref().map(|s| format!(" ({s})")).unwrap_or_default(),
                m.text
            ),
            "thinking" => println!("  {} {}", dim("… thinking:"), dim(&cut(&m.text.replace('\n', " "), 200))),
            _ => {
                println!();
                println!("{}", bold(&format!("── {} {}", m.role, dim(&local_time(m.created_at.as_deref())))));
                println!("{}", m.text);
            }
        }
    }
    let shown = d.offset + d.messages.len();
    if (shown as i64) < d.parts && !d.messages.is_empty() {
        println!("{}", dim(&format!("\n… more: --offset {shown}")));
    }
}

fn tally(t: &Tally) -> String {
    t.0.iter().map(|(k, v)| format!("{k}×{v}")).collect::<Vec<_>>().join(", ")
}

pub fn index_report(r: &IndexReport) {
    for s in &r.sources {
        let mut line = format!(
            "{:<9} {:<10} {:>5} chats {:>7} msgs  {}",
            s.status,
            s.kind.as_str(),
            s.sessions,
            s.messages,
            home_short(&s.path)
        );
        if !s.reasons.is_empty() {
            line.push_str(&format!("  [{}]", tally(&s.reasons)));
        }
        if let Some(e) = &s.error {
            line.push_str(&format!("  error: {e}"));
        }
        println!("{line}");
    }
    println!(
        "{} chats, {} messages indexed; {} updated, {} removed in {:.1}s.",
        r.sessions_total,
        r.messages_total,
        r.sessions_written,
        r.sessions_deleted,
        r.elapsed_ms as f64 / 1000.0
    );
    if r.sources.is_empty() {
        println!("No Cursor data found. See `tether doctor` for the places Tether looked, or pass --cursor-dir.");
    }
}

pub fn doctor(d: &tether_core::doctor::DoctorReport) {
    println!("{}", bold(&format!("Tether {}", d.version)));
    println!("data dir     {}", d.data_dir);
    println!("index        {} ({:.1} MB)", d.index_db, d.index_bytes as f64 / 1e6);
    match &d.daemon {
        Some(i) => println!("daemon       running (pid {}, since {})", i.pid, i.started_at),
        None => println!("daemon       not running"),
    }
    println!();
    for l in &d.cursor_user_dirs {
        println!("Cursor User  {} {}", l.path, if l.exists { "" } else { "(not found)" });
    }
    for l in &d.cursor_homes {
        println!("Cursor home  {} {}", l.path, if l.exists { "" } else { "(not found)" });
    }
    println!("\n{} chats, {} messages in the index.", d.sessions, d.messages);
    let bad: Vec<_> = d.sources.iter().filter(|s| s.status != "complete").collect();
    println!("{} sources, {} not complete.", d.sources.len(), bad.len());
    for s in bad {
        println!("  {:<8} {:<10} {}", s.status, s.kind, s.path);
        if !s.reasons.is_empty() {
            println!("           problems: {}", tally(&s.reasons));
        }
        if let Some(e) = &s.error {
            println!("           error: {e}");
        }
    }
}

fn status_label(s: tether_core::board::tasks::Status) -> String {
    use tether_core::board::tasks::Status;
    let code = match s {
        Status::InProgress => "33",
        Status::InReview => "36",
        Status::Blocked => "31",
        Status::Done => "32",
        Status::Cancelled => "2",
        Status::Todo => "0",
    };
    let text = format!("{:<11}", s.as_str());
    if color() { format!("\x1b[{code}m{text}\x1b[0m") } else { text }
}

fn holder(t: &tether_core::board::tasks::Task) -> String {
    match &t.assignee {
        Some(a) if t.lease_expired => format!("{a} (lease expired)"),
        Some(a) => a.clone(),
        None => "—".into(),
    }
}

pub fn tasks(list: &[tether_core::board::tasks::Task]) {
    if list.is_empty() {
        println!("No tasks. Add one with `tether task add \"…\"`, or import with `tether task import`.");
        return;
    }
    println!("{}", dim(&format!("{:<6}  {:<11}  {:<8}  {:<18}  TITLE", "ID", "STATUS", "PRIORITY", "ASSIGNEE")));
    for t in list {
        let mut title = cut(&t.title, 70);
        if !t.blocked_by.is_empty() {
            title = format!("{title} {}", dim(&format!("(waits for {})", t.blocked_by.join(", "))));
        }
        println!(
            "{:<6}  {}  {:<8}  {:<18}  {title}",
            bold(&t.id),
            status_label(t.status),
            t.priority,
            cut(&holder(t), 18)
        );
    }
}

pub fn task_detail(d: &tether_core::board::tasks::TaskDetail) {
    let t = &d.task;
    println!("{} {}", bold(&t.id), bold(&t.title));
    println!("status {}  priority {}  assignee {}", t.status, t.priority, holder(t));
    for (k, v) in [("role", &t.role), ("project", &t.project), ("lease until", &t.lease_until)] {
        if let Some(v) = v {
            println!("{k}: {v}");
        }
    }
    if !t.labels.is_empty() {
        println!("labels: {}", t.labels.join(", "));
    }
    if !t.depends_on.is_empty() {
        println!("depends on: {}", t.depends_on.join(", "));
    }
    if !t.description.is_empty() {
        println!("\n{}", t.description);
    }
    if !t.acceptance.is_empty() {
        println!("\n{}", bold("Acceptance"));
        for a in &t.acceptance {
            println!("  - {a}");
        }
    }
    if let Some(s) = &t.summary {
        println!("\n{}\n{s}", bold("Summary"));
    }
    println!("\n{}", bold("History"));
    for e in &d.history {
        let text = e.detail.get("text").and_then(|v| v.as_str()).map(|s| format!(": {s}")).unwrap_or_default();
        println!("  {}  {:<10} {}{}", dim(&local_time(Some(&e.at))), e.kind, e.actor, text);
    }
}

/// Columns per open status, as wide as the terminal allows.
pub fn board(all: &[tether_core::board::tasks::Task]) {
    use tether_core::board::tasks::Status;
    let cols = [Status::Todo, Status::InProgress, Status::InReview, Status::Blocked];
    let width = std::env::var("COLUMNS").ok().and_then(|c| c.parse::<usize>().ok()).unwrap_or(100).clamp(60, 240);
    let w = width / cols.len() - 2;
    let cells: Vec<Vec<String>> = cols
        .iter()
        .map(|st| {
            all.iter()
                .filter(|t| t.status == *st)
                .flat_map(|t| {
                    let who = t.assignee.as_deref().map(|a| format!("  @{a}")).unwrap_or_default();
                    [cut(&format!("{} {}", t.id, t.title), w), cut(&format!("  [{}]{who}", t.priority), w)]
                })
                .collect()
        })
        .collect();
    let head: Vec<String> = cols
        .iter()
        .zip(&cells)
        .map(|(st, c)| format!("{:<w$}", format!("{} ({})", st.as_str().to_uppercase(), c.len() / 2)))
        .collect();
    println!("{}", bold(&head.join("  ")));
    println!("{}", dim(&vec!["─".repeat(w); cols.len()].join("  ")));
    let rows = cells.iter().map(Vec::len).max().unwrap_or(0);
    for r in 0..rows {
        let line: Vec<String> =
            cells.iter().map(|c| format!("{:<w$}", c.get(r).map(String::as_str).unwrap_or(""))).collect();
        println!("{}", line.join("  ").trim_end());
    }
    let done = all.iter().filter(|t| t.status == Status::Done).count();
    let cancelled = all.iter().filter(|t| t.status == Status::Cancelled).count();
    println!("{}", dim(&format!("\n{done} done, {cancelled} cancelled")));
}

pub fn agents(list: &[tether_core::board::agents::Agent]) {
    if list.is_empty() {
        println!("No agents yet. A Cursor chat registers with the `session_start` tool (run `tether init`).");
        return;
    }
    println!(
        "{}",
        dim(&format!(
            "{:<20}  {:<6}  {:<8}  {:<10}  {:<8}  {:<4}  {:<16}  TASKS",
            "NAME", "KIND", "STATUS", "ROLE", "SURFACE", "OPEN", "LAST SEEN"
        ))
    );
    for a in list {
        let kind = serde_json::to_value(a.kind).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default();
        println!(
            "{:<20}  {:<6}  {:<8}  {:<10}  {:<8}  {:<4}  {:<16}  {}",
            cut(&a.name, 20),
            kind,
            a.status,
            a.role.as_deref().unwrap_or("—"),
            a.surface.unwrap_or("—"),
            a.open_obligations,
            local_time(Some(&a.last_seen)),
            a.tasks.join(", ")
        );
    }
}

pub fn signal_sent(s: &Signal) {
    let to: Vec<&str> = s.deliveries.iter().map(|d| d.recipient.as_str()).collect();
    let needs = if s.reply_required { "; a reply is expected" } else { "" };
    println!("Sent {} ({}) to {}{needs}.", bold(&s.id), s.kind, to.join(", "));
}

pub fn signals(list: &[Signal]) {
    if list.is_empty() {
        println!("No signals.");
        return;
    }
    println!(
        "{}",
        dim(&format!(
            "{:<6}  {:<16}  {:<14}  {:<16}  {:<9}  {:<16}  BODY",
            "ID", "TYPE", "FROM", "TO", "OBLIGATION", "SENT"
        ))
    );
    for s in list {
        println!(
            "{:<6}  {:<16}  {:<14}  {:<16}  {:<9}  {:<16}  {}",
            s.id,
            s.kind.as_str(),
            cut(&s.from, 14),
            cut(&s.to, 16),
            obligation(s),
            local_time(Some(&s.created_at)),
            cut(s.body.lines().next().unwrap_or(""), 60)
        );
    }
}

/// One word for the signal's obligations across its recipients.
fn obligation(s: &Signal) -> &'static str {
    let open = s.deliveries.iter().filter(|d| d.obligation == "open").count();
    match (s.kind.is_system(), open) {
        (true, _) => "none",
        (false, 0) => "closed",
        (false, n) if n == s.deliveries.len() => "open",
        _ => "partly",
    }
}

pub fn inbox(list: &[Signal]) {
    if list.is_empty() {
        println!("Nothing new for you.");
        return;
    }
    for s in list {
        let reply =
            if s.reply_required { format!("  (reply: tether signal reply {} …)", s.id) } else { String::new() };
        println!("{} {} from {} · {}{}", bold(&s.id), s.kind, s.from, local_time(Some(&s.created_at)), dim(&reply));
        for line in s.body.lines() {
            println!("  {line}");
        }
        println!();
    }
}

pub fn signal_detail(d: &SignalDetail) {
    let s = &d.signal;
    println!("{} {} · {} → {} · {}", bold(&s.id), s.kind, s.from, s.to, local_time(Some(&s.created_at)));
    let mut facts = vec![format!("trace {}", s.trace_id)];
    if let Some(r) = &s.reply_to {
        facts.push(format!("answers {r}"));
    }
    if let Some(t) = &s.task {
        facts.push(format!("task {t}"));
    }
    if let Some(a) = &s.answered_by {
        facts.push(format!("answered by {a} {}", local_time(s.answered_at.as_deref())));
    }
    println!("{}\n", dim(&facts.join(" · ")));
    for line in s.body.lines() {
        println!("  {line}");
    }
    println!("\n{}", bold("Deliveries"));
    for del in &s.deliveries {
        println!(
            "  {:<16}  obligation {:<6}  drained {:<16}  wakes {} (last: {} {} {})",
            cut(&del.recipient, 16),
            del.obligation,
            local_time(del.drained_at.as_deref()),
            del.wake_attempt_count,
            del.last_wake_path.as_deref().unwrap_or("—"),
            del.last_wake_result.as_deref().unwrap_or("—"),
            local_time(del.last_wake_at.as_deref()),
        );
    }
    if !d.wakes.is_empty() {
        println!("\n{}", bold("Wake attempts"));
        for w in &d.wakes {
            println!("  {}  {:<16}  {:<9}  {}", local_time(Some(&w.at)), cut(&w.recipient, 16), w.path, w.result);
        }
    }
    if d.thread.len() > 1 {
        println!("\n{}", bold("Thread"));
        for t in &d.thread {
            println!(
                "  {:<6}  {:<16}  {} → {}: {}",
                t.id,
                t.kind.as_str(),
                t.from,
                t.to,
                cut(t.body.lines().next().unwrap_or(""), 60)
            );
        }
    }
}

pub fn import_report(r: &tether_core::board::task_io::ImportReport) {
    println!(
        "Imported from {}: {} new, {} refreshed, {} unchanged.",
        r.source,
        r.created.len(),
        r.updated.len(),
        r.unchanged.len()
    );
    for c in r.created.iter().chain(&r.updated) {
        println!("  {c}");
    }
    if !r.not_mapped.is_empty() {
        println!("Not carried over:");
        for n in &r.not_mapped {
            println!("  - {n}");
        }
    }
}

pub fn runs(list: &[tether_core::board::runs::Run]) {
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
            cut(&run_place(r), 24),
            cut(r.prompt.lines().next().unwrap_or(""), 50)
        );
    }
}

/// Where a run works: its folder, or a cloud run's repository.
fn run_place(r: &tether_core::board::runs::Run) -> String {
    match &r.cloud {
        Some(c) => format!("☁ {}", tether_core::history::cloud::repo_project(&c.repo)),
        None => home_short(r.workspace.as_deref().unwrap_or("")),
    }
}

pub fn run_summary(r: &tether_core::board::runs::Run) {
    let took = r.duration_ms.map(|ms| format!(" in {:.1} s", ms as f64 / 1000.0)).unwrap_or_default();
    let tokens = r
        .usage
        .as_ref()
        .map(|u| {
            format!(
                ", {} in / {} out tokens",
                u.input_tokens + u.cache_read_tokens + u.cache_write_tokens,
                u.output_tokens
            )
        })
        .unwrap_or_default();
    println!("{} {}{took}{tokens}", bold(&r.id), r.status);
    if let Some(e) = &r.error {
        println!("  error: {e}");
    }
    if let Some(w) = &r.warning {
        println!("  note: {w}");
    }
    if let Some(c) = &r.chat_id {
        let what = if r.is_cloud() { "Cursor Cloud agent" } else { "Cursor chat" };
        println!("  {what} {c} (tether sessions show {c}; follow up: tether runs followup {} \"…\")", r.id);
    }
    if let Some(c) = &r.cloud {
        if let Some(u) = &c.agent_url {
            println!("  at Cursor: {u}");
        }
        if let Some(b) = &c.pushed_branch {
            println!("  branch {b}{}", c.pr_url.as_deref().map(|p| format!(" · PR {p}")).unwrap_or_default());
        }
    }
}

pub fn run_detail(d: &tether_core::board::runs::RunDetail) {
    let r = &d.run;
    run_summary(r);
    println!(
        "{}",
        dim(&format!(
            "  {} · mode {} · model {} · role {} · timeout {} s · by {} · created {}",
            run_place(r),
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

/// Renders run events as a readable log: assistant text as it comes, tool calls on one line
/// each, thinking folded.
#[derive(Default)]
pub struct EventPrinter {
    /// Inside assistant text (no newline printed yet).
    mid_text: bool,
    thinking: bool,
}

impl EventPrinter {
    pub fn print(&mut self, e: &tether_core::board::runs::StoredEvent) {
        use tether_core::board::stream_json::RunEvent as E;
        let line = |p: &mut Self, s: String| {
            if p.mid_text {
                println!();
                p.mid_text = false;
            }
            println!("{s}");
        };
        match &e.event {
            E::Assistant { text, partial } => {
                self.thinking = false;
                if *partial {
                    print!("{text}");
                    self.mid_text = true;
                } else {
                    line(self, text.clone());
                }
            }
            E::Thinking { .. } if self.thinking => {}
            E::Thinking { .. } => {
                self.thinking = true;
                line(self, dim("(thinking…)"));
            }
            E::Init { session_id, model, .. } => line(
                self,
                dim(&format!(
                    "▸ {} {session_id} · {}",
                    // Cursor's cloud agent ids are `bc-<uuid>`; the CLI's chats are bare uuids.
                    if session_id.starts_with("bc-") { "Cursor Cloud agent" } else { "Cursor chat" },
                    model.as_deref().unwrap_or("default model")
                )),
            ),
            E::User { text } => line(self, format!("{} {}", bold("you:"), cut(text.trim(), 200))),
            E::ToolCall { tool, phase, path, command, outcome, .. } => {
                self.thinking = false;
                let what = command.clone().or_else(|| path.clone()).unwrap_or_default();
                match phase.as_str() {
                    "started" => line(self, dim(&format!("  ⚙ {tool} {}", cut(&what, 100)))),
                    _ => {
                        let o = outcome.as_deref().unwrap_or("done");
                        let mark = if o == "success" { "✓" } else { "✗" };
                        line(self, dim(&format!("  {mark} {tool} {} ({o})", cut(&what, 80))));
                    }
                }
            }
            E::Result { is_error, duration_ms, .. } => {
                let took = duration_ms.map(|ms| format!(" in {:.1} s", ms as f64 / 1000.0)).unwrap_or_default();
                line(
                    self,
                    bold(&format!("— {}{took}", if *is_error { "the agent reported an error" } else { "result" })),
                );
            }
            E::Notice { text } => line(self, dim(&format!("  ({text})"))),
            E::Stderr { text } => line(self, dim(&format!("  stderr: {}", cut(text, 300)))),
            E::Raw { text, .. } => line(self, dim(&format!("  ? {}", cut(text, 200)))),
            E::Status { status, message } => {
                let m = message.as_deref().map(|m| format!(": {m}")).unwrap_or_default();
                line(self, dim(&format!("[{status}{m}]")));
            }
        }
    }

    pub fn finish(&mut self) {
        if self.mid_text {
            println!();
            self.mid_text = false;
        }
    }
}

pub fn cursor_cli(c: &tether_runs::CliInfo) {
    match (&c.path, &c.version) {
        (Some(p), Some(v)) => println!("Cursor CLI (for runs): {} {v} (from {})", p.display(), c.from.unwrap_or("?")),
        (Some(p), None) => {
            println!("Cursor CLI (for runs): {} — {}", p.display(), c.hint.as_deref().unwrap_or("not answering"))
        }
        _ => println!("Cursor CLI (for runs): not found — {}", c.hint.as_deref().unwrap_or("")),
    }
}
