//! Command-line definitions (clap derive) only; behaviour lives in `commands/`.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// Tether: search, read, tag and export your Cursor chat history.
///
/// Tether indexes Cursor's chats (IDE and CLI, every storage era) read-only into its own
/// database. Its data dir is $TETHER_HOME, else the platform data dir.
#[derive(Debug, Parser)]
#[command(name = "tether", version, propagate_version = true, max_term_width = 100)]
pub struct Cli {
    /// Cursor's `User` directory (holding globalStorage/ and workspaceStorage/), when it is not
    /// in the default place.
    #[arg(long, global = true, env = "TETHER_CURSOR_DIR", value_name = "DIR")]
    pub cursor_dir: Option<PathBuf>,

    /// More log output on stderr (repeat for more).
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,

    #[command(subcommand)]
    pub command: Command,
}

// Parsed once per run: boxing the larger variants would buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Index Cursor's chats once and report each source's status.
    Index(IndexArgs),
    /// Run the headless daemon: index, keep the index fresh and serve MCP on loopback until SIGINT/SIGTERM.
    Serve(ServeArgs),
    /// Serve the MCP tools over stdin/stdout (for clients without HTTP). Logs go to stderr.
    #[command(subcommand)]
    Mcp(McpCmd),
    /// Show, rotate or relocate the MCP bearer token (kept in the OS keyring).
    #[command(subcommand)]
    Token(TokenCmd),
    /// Set Cursor up to use Tether: the MCP server entry, hooks, a rule and slash commands.
    Init(InitArgs),
    /// Remove exactly what `tether init` added for the same project (or --global).
    Uninit(InitArgs),
    /// Called by Cursor's hooks: reports the event to the daemon, never blocks Cursor.
    Hook {
        /// The hook event, e.g. beforeSubmitPrompt, beforeMCPExecution, stop.
        event: String,
    },
    /// Open Tether's GUI in your browser, logged in (the daemon must be running: `tether serve`).
    Open {
        /// Print the one-time login link (valid for a minute) instead of opening a browser.
        #[arg(long)]
        print: bool,
    },
    /// List, search, read, tag and export chats.
    #[command(subcommand)]
    Sessions(SessionsCmd),
    /// Show what Tether found where, and which sources are partial and why.
    Doctor(JsonFlag),
    /// Your activity at a glance: chats and messages over time, top projects, busiest days,
    /// longest chats, models, tags, tasks and runs (the GUI's Insights view).
    Stats(StatsArgs),
    /// Tasks shared by people and agents: add, list, claim, update, hand off, complete, import.
    Task(TaskArgs),
    /// Agent sessions (Cursor chats, other MCP clients, people) and the tasks they hold.
    #[command(subcommand)]
    Agents(AgentsCmd),
    /// Send, show or answer one signal (a short message that may need a reply). You are `human`.
    #[command(subcommand)]
    Signal(SignalCmd),
    /// List signals with their obligations and wake telemetry, or read the ones sent to you.
    #[command(subcommand)]
    Signals(SignalsCmd),
    /// Run the Cursor CLI agent on a prompt or a task (the daemon runs it; without one, it runs
    /// here until it ends).
    Run(RunArgs),
    /// Agent runs: list, show, follow the log, cancel, follow up.
    #[command(subcommand)]
    Runs(RunsCmd),
    /// The Cursor API key that runs of the Cursor CLI use (kept in the OS keyring).
    #[command(subcommand)]
    CursorKey(CursorKeyCmd),
    /// Cursor Cloud agents: launch one on a GitHub repository as a run, log in, check the setup.
    /// Cloud runs are runs: `tether runs list/show/logs/cancel/followup` take them too.
    #[command(subcommand)]
    Cloud(CloudCmd),
    /// Show or change the settings (`settings.json` in the data dir); a running daemon applies a
    /// change at once.
    #[command(subcommand)]
    Settings(SettingsCmd),
}

#[derive(Debug, Subcommand)]
pub enum SettingsCmd {
    /// Print every setting.
    Show(JsonFlag),
    /// Print one setting, e.g. `runs.max_total`.
    Get { key: String },
    /// Change one setting: `port 48000`, `runs.max_total 4`, `signal_sla_minutes.question 15`,
    /// `cursor_home ~/elsewhere/.cursor`, `runs.roots '["/src/a","/src/b"]'`. An empty value
    /// ("") puts a folder, the port or the Cursor CLI back to the default.
    Set {
        key: String,
        #[arg(allow_hyphen_values = true)]
        value: String,
    },
}

#[derive(Debug, Args)]
pub struct StatsArgs {
    /// Only since: a date (2026-01-31) or 30d, 12w, 6m, 1y.
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,
    /// Only this project (a folder; its subfolders count too).
    #[arg(long, value_name = "PATH")]
    pub project: Option<String>,
    #[command(flatten)]
    pub out: JsonFlag,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// What the agent should do (may be left out with --task: the task is the prompt).
    pub prompt: Option<String>,
    /// The project folder to work in (default: the task's project, else the working directory).
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// A Cursor model id (see `agent models`).
    #[arg(long, value_name = "MODEL")]
    pub model: Option<String>,
    /// plan or ask instead of the agent (no writes).
    #[arg(long, value_parser = ["agent", "plan", "ask"])]
    pub mode: Option<String>,
    /// A role whose rule guides the agent (planner, backend, frontend, reviewer, or your own in
    /// the data dir's roles/).
    #[arg(long, value_name = "ROLE")]
    pub role: Option<String>,
    /// A task to work on, e.g. T-3: the run claims it and moves it to in_review on success.
    #[arg(long, value_name = "ID")]
    pub task: Option<String>,
    /// On success, move the task to done instead of in_review.
    #[arg(long, requires = "task")]
    pub complete: bool,
    /// Wall-clock limit, e.g. 90s, 10m, 1h [default: the settings', 10m].
    #[arg(long, value_name = "DURATION")]
    pub timeout: Option<String>,
    /// Allow a Cursor permission token (repeatable), e.g. 'Write(**)', 'Shell(cargo)'. Writes and
    /// commands run only when allowed.
    #[arg(long = "allow", value_name = "TOKEN")]
    pub allow: Vec<String>,
    /// Deny a permission token (repeatable), e.g. 'Shell(rm)'.
    #[arg(long = "deny", value_name = "TOKEN")]
    pub deny: Vec<String>,
    /// Stay and print the run's events as they come, until it ends.
    #[arg(long)]
    pub follow: bool,
    #[command(flatten)]
    pub out: JsonFlag,
}

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
    /// Continue a run's Cursor chat with a new prompt, as a new run.
    Followup {
        id: String,
        prompt: String,
        #[arg(long)]
        follow: bool,
        #[command(flatten)]
        out: JsonFlag,
    },
}

#[derive(Debug, Subcommand)]
pub enum CloudCmd {
    /// Launch a Cursor Cloud agent on a repository (a run R-n; Ctrl-C with --follow stops
    /// following, not the agent, when a daemon runs it).
    Launch(CloudLaunchArgs),
    /// Check a Cursor API key with Cursor and keep it in the OS keyring (runs of the Cursor CLI
    /// use it too). Asks for it, or reads it from stdin with --key-stdin.
    Login {
        #[arg(long)]
        key_stdin: bool,
    },
    /// Forget the stored key.
    Logout,
    /// Let Cursor reach this Tether through a public URL of yours (a tunnel to the daemon's port):
    /// launches then carry a signed webhook, and cloud agents get a one-time token to call back
    /// (their task, signals, skills). --off goes back to stream and polling only.
    Webhook {
        /// Where Cursor's servers reach this Tether, e.g. https://tether.example.ts.net.
        #[arg(long, value_name = "URL", required_unless_present = "off")]
        public_url: Option<String>,
        #[arg(long, conflicts_with = "public_url")]
        off: bool,
    },
    /// Check the setup: API URL, key (valid?), repository, model, public URL; each failure says
    /// what to do.
    Doctor {
        /// The repository to check (default: this folder's git origin).
        #[arg(long, value_name = "URL")]
        repo: Option<String>,
        /// A model id to check.
        #[arg(long, value_name = "MODEL")]
        model: Option<String>,
        /// Also ask Cursor whether the key reaches the repository (Cursor allows this once a minute).
        #[arg(long)]
        verify_repo: bool,
        #[command(flatten)]
        out: JsonFlag,
    },
}

#[derive(Debug, Args)]
pub struct CloudLaunchArgs {
    /// What the agent should do (may be left out with --task: the task is the prompt).
    pub prompt: Option<String>,
    /// The GitHub repository, e.g. https://github.com/org/repo [default: this folder's origin].
    #[arg(long, value_name = "URL")]
    pub repo: Option<String>,
    /// The branch, tag or commit to start from [default: the repository's default branch].
    #[arg(long = "ref", value_name = "REF")]
    pub git_ref: Option<String>,
    /// Work on this existing branch and push to it (instead of a new cursor/… branch).
    #[arg(long, value_name = "BRANCH", conflicts_with = "git_ref")]
    pub branch: Option<String>,
    /// Open a pull request when done.
    #[arg(long)]
    pub auto_pr: bool,
    /// A Cursor model id [default: your Cursor default].
    #[arg(long, value_name = "MODEL")]
    pub model: Option<String>,
    /// plan: the agent plans and changes nothing.
    #[arg(long, value_parser = ["agent", "plan"])]
    pub mode: Option<String>,
    /// A role whose rule goes into the prompt.
    #[arg(long, value_name = "ROLE")]
    pub role: Option<String>,
    /// A task to work on, e.g. T-3: the run claims it and moves it to in_review on success.
    #[arg(long, value_name = "ID")]
    pub task: Option<String>,
    /// On success, move the task to done instead of in_review.
    #[arg(long, requires = "task")]
    pub complete: bool,
    /// Wall-clock limit, e.g. 30m, 2h [default: the settings', 60m]; at the limit Tether cancels
    /// the agent's run at Cursor.
    #[arg(long, value_name = "DURATION")]
    pub timeout: Option<String>,
    /// Stay and print the run's events as they come, until it ends.
    #[arg(long)]
    pub follow: bool,
    #[command(flatten)]
    pub out: JsonFlag,
}

#[derive(Debug, Subcommand)]
pub enum CursorKeyCmd {
    /// Store a Cursor API key (read from stdin, or asked for), for runs of the Cursor CLI.
    Set,
    /// Forget the stored key.
    Clear,
    /// Say whether a key is set and where it comes from (never the key itself).
    Status,
}

#[derive(Debug, Subcommand)]
pub enum SignalCmd {
    /// Send a signal to an agent (by name), every live agent with a role, or `human`.
    Send {
        /// An agent's name, a role (`role:NAME` to be explicit) or `human`.
        #[arg(long, value_name = "NAME|ROLE|human")]
        to: String,
        /// question, task_assigned, review_requested (need a reply), status_update, acknowledgment.
        #[arg(long = "type", default_value = "question", value_name = "TYPE")]
        kind: String,
        /// The message (Markdown, at most 16 KiB).
        body: String,
        /// The signal this answers, e.g. S-3.
        #[arg(long, value_name = "ID")]
        reply_to: Option<String>,
        /// The task it is about, e.g. T-2.
        #[arg(long, value_name = "ID")]
        task: Option<String>,
        /// The recipient must reply (default for question, task_assigned and review_requested).
        #[arg(long)]
        action_required: bool,
        #[command(flatten)]
        out: JsonFlag,
    },
    /// One signal with its deliveries, every wake attempt and its whole thread.
    Show {
        id: String,
        #[command(flatten)]
        out: JsonFlag,
    },
    /// Answer a signal: goes to its sender and closes its obligation.
    Reply {
        id: String,
        body: String,
        /// Default: acknowledgment.
        #[arg(long = "type", value_name = "TYPE")]
        kind: Option<String>,
        #[command(flatten)]
        out: JsonFlag,
    },
}

#[derive(Debug, Subcommand)]
pub enum SignalsCmd {
    /// Signals, newest first.
    List {
        /// Sent to this agent name, `human`, or `role:NAME`.
        #[arg(long, value_name = "NAME")]
        to: Option<String>,
        /// Sent by this agent name, `human` or `tether`.
        #[arg(long, value_name = "NAME")]
        from: Option<String>,
        /// Sent by or to this agent.
        #[arg(long, value_name = "NAME")]
        agent: Option<String>,
        /// One conversation (a trace id).
        #[arg(long, value_name = "ID")]
        trace: Option<String>,
        /// Only signals whose obligation is still open.
        #[arg(long)]
        open: bool,
        #[arg(long, default_value_t = 50, value_name = "N")]
        limit: usize,
        #[command(flatten)]
        out: JsonFlag,
    },
    /// Read the signals sent to `human` that you have not read yet, and mark them read.
    Pending(JsonFlag),
}

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

#[derive(Debug, Subcommand)]
pub enum AgentsCmd {
    /// Every agent session, most recently active first, with live status and held tasks.
    List(JsonFlag),
    /// Let the daemon wake an idle chat it ran (`run R-3`: a run and its follow-ups) by a
    /// follow-up run when signals wait for it (at most `runs.resume_wakes_per_hour` an hour).
    Wake {
        /// The agent's name, e.g. "run R-3".
        name: String,
        #[arg(value_parser = ["on", "off"])]
        state: String,
        #[command(flatten)]
        out: JsonFlag,
    },
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Loopback address to listen on (127.0.0.1 or ::1; anything else is refused).
    #[arg(long, default_value = "127.0.0.1", env = "TETHER_HOST")]
    pub host: String,
    /// Port for the MCP endpoint (0 picks a free one) [default: the settings' port, else 47821].
    #[arg(long, env = "TETHER_PORT")]
    pub port: Option<u16>,
}

#[derive(Debug, Args)]
pub struct InitArgs {
    /// The project to add the rule and commands to (default: the working directory).
    #[arg(value_name = "PROJECT_DIR", conflicts_with = "global")]
    pub project: Option<PathBuf>,
    /// User-level only (~/.cursor): MCP entry, hooks and commands, no project files.
    #[arg(long)]
    pub global: bool,
    /// Show the diff of what would change (token masked) and write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Put the MCP entry in <PROJECT_DIR>/.cursor/mcp.json instead of ~/.cursor/mcp.json (the
    /// token is written there only if git ignores the file).
    #[arg(long, conflicts_with = "global")]
    pub project_mcp: bool,
    /// Write `Bearer ${env:TETHER_TOKEN}` instead of the token itself (Cursor then needs
    /// TETHER_TOKEN in its environment).
    #[arg(long)]
    pub token_env: bool,
    /// The daemon's port, when it is not running now [default: the settings' port, else 47821].
    #[arg(long, env = "TETHER_PORT")]
    pub port: Option<u16>,
}

#[derive(Debug, Subcommand)]
pub enum McpCmd {
    /// Speak MCP on stdin/stdout.
    Stdio,
}

#[derive(Debug, Subcommand)]
pub enum TokenCmd {
    /// Print the token (to paste into a client's Authorization header).
    Show,
    /// Replace the token; clients must be given the new one (`tether init` rewrites Cursor's entry).
    Rotate,
    /// Choose where the token is kept: `keyring` (default) or `file` (0600 in the data dir, for servers).
    Store {
        #[arg(value_parser = ["keyring", "file"])]
        backend: String,
    },
}

#[derive(Debug, Args)]
pub struct JsonFlag {
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct IndexArgs {
    /// Re-read every session, ignoring what is unchanged.
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub out: JsonFlag,
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
        /// Only chats from this source: `ide`, `cli`, or a format such as `transcript`.
        #[arg(long, value_name = "SOURCE")]
        source: Option<String>,
        /// Skip this many results (paging).
        #[arg(long, default_value_t = 0, value_name = "N")]
        offset: usize,
        #[command(flatten)]
        out: JsonFlag,
    },
    /// Full-text search over messages and titles. Plain words must all match; FTS5 syntax
    /// (quotes, `prefix*`, AND/OR/NOT, NEAR) is accepted too.
    Search {
        query: String,
        #[command(flatten)]
        filters: Filters,
        #[command(flatten)]
        out: JsonFlag,
    },
    /// Print a chat in order.
    Show {
        /// Session id, a unique id prefix, or a nickname.
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
