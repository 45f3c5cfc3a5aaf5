//! `tether sessions …`: list, search, read, tag and export Cursor's chats (`ops::sessions`), and
//! share one with the team, redacted, or read what teammates shared (`ops::share`).

use std::path::PathBuf;

use anyhow::Context;
use clap::{Args, Subcommand};
use tether_core::model::sessions::Format;
use tether_core::model::sessions::{Depth, no_progress};
use tether_core::model::sessions::{
    ListQuery, ProjectFilter, SearchHit, SearchQuery, SessionDetail, SessionSummary, ShowOptions,
};
use tether_core::{Tether, ops};

use crate::render::{self, JsonFlag, bold, cut, dim, home_short, local_time};

#[derive(Debug, Subcommand)]
pub enum SessionsCmd {
    /// List chats, most recently updated first.
    List {
        #[command(flatten)]
        filters: Filters,
        /// Only chats with this tag.
        #[arg(long, value_name = "TAG")]
        tag: Option<String>,
        /// Only bookmarked chats.
        #[arg(long)]
        bookmarked: bool,
        /// Only chats from this source: `ide`, `cli`, `claude-code`, `codex`, `gemini`, or a format such as `transcript`.
        #[arg(long, value_name = "SOURCE")]
        source: Option<String>,
        /// Only chats of this agent: `cursor` (IDE, CLI and Cloud), `cursor-ide`, `cursor-cli`,
        /// `cursor-cloud`, `claude-code`, `codex` or `gemini`.
        #[arg(long, value_name = "AGENT")]
        agent: Option<String>,
        /// Skip this many results (paging).
        #[arg(long, default_value_t = 0, value_name = "N")]
        offset: usize,
        /// The chats teammates shared with the team instead (needs a team database).
        #[arg(long)]
        team: bool,
        #[command(flatten)]
        out: JsonFlag,
    },
    /// Full-text search over messages and titles. Plain words must all match; FTS5 syntax
    /// (quotes, `prefix*`, AND/OR/NOT, NEAR) is accepted too.
    Search {
        query: String,
        #[command(flatten)]
        filters: Filters,
        /// Search the chats teammates shared with the team instead (every word, in the title or
        /// the text).
        #[arg(long)]
        team: bool,
        #[command(flatten)]
        out: JsonFlag,
    },
    /// Print a chat in order (a team-shared one by its `SH-` id).
    Show {
        /// Session id, a unique id prefix, a nickname, or a shared chat's `SH-` id.
        id: String,
        /// Show at most N messages.
        #[arg(long, default_value_t = 0, value_name = "N")]
        limit: usize,
        /// Skip the first N messages.
        #[arg(long, default_value_t = 0, value_name = "N")]
        offset: usize,
        /// Include tool calls and thinking steps.
        #[arg(long)]
        tools: bool,
        #[command(flatten)]
        out: JsonFlag,
    },
    /// Set a nickname, tags, a bookmark, or exclude a chat from the index.
    Tag(TagArgs),
    /// Export a chat as Markdown, JSON or a self-contained HTML page.
    Export {
        id: String,
        #[arg(long, default_value = "md", value_name = "md|json|html")]
        format: String,
        /// Write to this file instead of stdout.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// Share a chat with the team: its transcript with secrets replaced (API keys, tokens,
    /// private keys, passwords in URLs, `.env` values) is shown, and copied into the team
    /// database once you confirm. Sharing it again replaces the team's copy.
    Share {
        /// Session id, a unique id prefix, or a nickname.
        id: String,
        /// Share without asking (after checking the text with --preview).
        #[arg(long, conflicts_with = "preview")]
        yes: bool,
        /// Only print what would be shared.
        #[arg(long)]
        preview: bool,
        #[command(flatten)]
        out: JsonFlag,
    },
    /// Take a chat shared with the team back.
    Unshare {
        /// The shared chat's `SH-` id.
        id: String,
    },
}

#[derive(Debug, Args)]
pub struct Filters {
    /// `all`, `current` (the project containing the working directory) or a path.
    #[arg(long, default_value = "all", value_name = "current|all|PATH")]
    pub project: String,
    /// Maximum number of results.
    #[arg(long, default_value_t = 50, value_name = "N")]
    pub limit: usize,
}

#[derive(Debug, Args)]
pub struct TagArgs {
    /// Session id, a unique id prefix, or a nickname.
    pub id: String,
    /// A unique, memorable name to refer to the chat by.
    #[arg(long, value_name = "NAME", conflicts_with = "clear_nickname")]
    pub nickname: Option<String>,
    /// Remove the nickname.
    #[arg(long)]
    pub clear_nickname: bool,
    /// Add a tag (repeatable).
    #[arg(long = "add", value_name = "TAG")]
    pub add: Vec<String>,
    /// Remove a tag (repeatable).
    #[arg(long = "remove", value_name = "TAG")]
    pub remove: Vec<String>,
    /// Bookmark the chat.
    #[arg(long, conflicts_with = "unbookmark")]
    pub bookmark: bool,
    /// Remove the bookmark.
    #[arg(long)]
    pub unbookmark: bool,
    /// Drop the chat's messages from the index and never serve them.
    #[arg(long = "no-index", conflicts_with = "index")]
    pub no_index: bool,
    /// Index the chat again after --no-index.
    #[arg(long)]
    pub index: bool,
    #[command(flatten)]
    pub out: JsonFlag,
}

pub fn run(t: &Tether, cmd: SessionsCmd) -> anyhow::Result<()> {
    match cmd {
        SessionsCmd::List { filters, team: true, out, .. } => {
            out.print(ops::share::list(t, None, filters.limit)?.as_slice(), print_shared)
        }
        SessionsCmd::Search { query, filters, team: true, out } => {
            out.print(ops::share::list(t, Some(&query), filters.limit)?.as_slice(), print_shared)
        }
        SessionsCmd::Show { id, out, .. } if tether_core::model::shared::is_shared_id(&id) => {
            out.print(&ops::share::get(t, &id)?, print_shared_chat)
        }
        SessionsCmd::Share { id, yes, preview, out } => share(t, &id, yes, preview, out),
        SessionsCmd::Unshare { id } => {
            ops::share::unshare(t, &crate::command::me(None), &id)?;
            println!("{id} is no longer shared with the team.");
            Ok(())
        }
        SessionsCmd::List { filters, tag, bookmarked, source, agent, offset, out, .. } => {
            let q = ListQuery {
                project: project_filter(&filters.project)?,
                tag,
                bookmarked,
                source,
                agent,
                limit: filters.limit,
                offset,
                ..Default::default()
            };
            out.print(ops::sessions::list(t, &q)?.as_slice(), print_list)
        }
        SessionsCmd::Search { query, filters, out, .. } => {
            let mut q = SearchQuery::new(query);
            q.project = project_filter(&filters.project)?;
            q.limit = filters.limit;
            if !out.json && render::color() {
                q.highlight = ("\x1b[1;33m".into(), "\x1b[0m".into());
            }
            let found = ops::sessions::search(t, &q)?;
            if let Some(n) = found.coverage.notice() {
                eprintln!("tether: {n}");
            }
            out.print(found.hits.as_slice(), print_hits)
        }
        SessionsCmd::Show { id, limit, offset, tools, out } => {
            out.print(&ops::sessions::show(t, &id, &ShowOptions { offset, limit, include_tools: tools })?, print_detail)
        }
        SessionsCmd::Tag(a) => tag(t, a),
        SessionsCmd::Export { id, format, out } => {
            let format: Format = format.parse()?;
            render::to_file_or_stdout(out.as_deref(), &ops::sessions::export(t, &id, format)?)
        }
    }
}

/// `all`, `current` (the working directory) or a path, as this machine spells it.
fn project_filter(p: &str) -> anyhow::Result<ProjectFilter> {
    Ok(match p {
        "all" => ProjectFilter::All,
        "current" => {
            let cwd = std::env::current_dir().context("reading the working directory")?;
            ProjectFilter::Path(cwd.canonicalize().unwrap_or(cwd).to_string_lossy().into_owned())
        }
        path => {
            let pb = PathBuf::from(path);
            ProjectFilter::Path(pb.canonicalize().unwrap_or(pb).to_string_lossy().into_owned())
        }
    })
}

fn tag(t: &Tether, a: TagArgs) -> anyhow::Result<()> {
    let either = |yes: bool, no: bool| {
        if yes {
            Some(true)
        } else if no {
            Some(false)
        } else {
            None
        }
    };
    let u = ops::sessions::Tag {
        nickname: if a.clear_nickname { Some(None) } else { a.nickname.map(Some) },
        add_tags: a.add,
        remove_tags: a.remove,
        bookmarked: either(a.bookmark, a.unbookmark),
        no_index: either(a.no_index, a.index),
    };
    let mut s = ops::sessions::tag(t, &a.id, u)?;
    if a.index {
        // Bring the messages back now rather than at the next pass.
        t.index(Depth::Deep, &no_progress)?;
        s = ops::sessions::summary(t, &s.id).unwrap_or(s);
    }
    a.out.print(&s, |s| print_list(std::slice::from_ref(s)))
}

/// Shows what would be shared, asks (unless `yes`), then shares exactly that.
fn share(t: &Tether, id: &str, yes: bool, preview_only: bool, out: JsonFlag) -> anyhow::Result<()> {
    use std::io::{BufRead, IsTerminal, Write};
    let p = ops::share::preview(t, id)?;
    if preview_only {
        return out.print(&p, print_preview);
    }
    if !yes {
        if !std::io::stdin().is_terminal() {
            anyhow::bail!(
                "sharing asks you to confirm the redacted text: run it in a terminal, or check it with `tether sessions share {id} --preview` and pass --yes"
            );
        }
        print_preview(&p);
        eprint!("Share this with the team, as {}? [y/N] ", tether_core::Tether::person());
        std::io::stderr().flush()?;
        let mut answer = String::new();
        std::io::stdin().lock().read_line(&mut answer)?;
        if !matches!(answer.trim(), "y" | "Y" | "yes") {
            eprintln!("Not shared.");
            return Ok(());
        }
    }
    let share = ops::share::Share { session: p.session.clone(), digest: Some(p.digest.clone()) };
    let shared = ops::share::share(t, &crate::command::me(None), share)?;
    out.print(&shared, |s| {
        println!(
            "Shared as {} ({} secret{} replaced). Teammates find it with `tether sessions list --team`.",
            s.summary.id,
            s.summary.redacted,
            if s.summary.redacted == 1 { "" } else { "s" }
        )
    })
}

fn print_preview(p: &ops::share::SharePreview) {
    println!("{}", p.text);
    let kinds: Vec<String> = p.redactions.iter().map(|r| format!("{} ×{}", r.kind, r.count)).collect();
    let what = if kinds.is_empty() { "no secrets found".to_owned() } else { format!("replaced: {}", kinds.join(", ")) };
    eprintln!("{}", bold(&format!("{} · {} messages · {what}", p.title, p.messages)));
}

fn print_shared(list: &[tether_core::model::shared::SharedSummary]) {
    if list.is_empty() {
        println!("No chats shared with the team (share one: tether sessions share ID).");
        return;
    }
    println!("{}", dim(&format!("{:<16}  {:<6}  {:<18}  TITLE / PROJECT", "SHARED", "ID", "BY")));
    for s in list {
        let by = match &s.machine {
            Some(m) => format!("{} on {m}", s.shared_by),
            None => s.shared_by.clone(),
        };
        let at = chrono::DateTime::from_timestamp_millis(s.shared_at).map(|d| d.to_rfc3339());
        println!(
            "{:<16}  {:<6}  {:<18}  {}  {}",
            local_time(at.as_deref()),
            s.id,
            cut(&by, 18),
            cut(&s.title, 60),
            dim(&s.project.as_deref().map(home_short).unwrap_or_default())
        );
    }
}

fn print_shared_chat(c: &tether_core::model::shared::SharedChat) {
    let s = &c.summary;
    let by = s.machine.as_ref().map_or_else(|| s.shared_by.clone(), |m| format!("{} on {m}", s.shared_by));
    println!("{}", bold(&s.title));
    println!("{}", dim(&format!("{} · shared by {by} · {} secrets replaced", s.id, s.redacted)));
    println!("{}", c.body);
}

fn print_list(list: &[SessionSummary]) {
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

fn print_hits(hits: &[SearchHit]) {
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

fn print_detail(d: &SessionDetail) {
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
