//! `tether init` / `tether uninit`: what Cursor needs to use Tether, written into Cursor's own
//! config files only when the user asks, merged without touching anything else, and removable.
//!
//! Everything is computed first as a [`Plan`] (per file: text before, text after), so a dry run
//! shows the exact diff (token masked) and a real run writes each file atomically. Existing JSON
//! that does not parse is reported and never overwritten. Markdown files we own carry
//! [`MARKER`]; a file without it belongs to the user and is left alone. The bearer token is never
//! written into a file inside a git work tree unless git ignores that file.
//!
//! Must not depend on any host (CLI, MCP, GUI): the caller passes the URL, token and executable.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use crate::error::{Error, Result};

/// First line (after frontmatter) of every markdown file we write; `uninit` removes only these.
pub const MARKER: &str =
    "<!-- tether:managed — `tether uninit` removes this file; delete this line to keep it as yours -->";

/// The key of our entry under `mcpServers`.
pub const SERVER_NAME: &str = "tether";

/// Hook events we subscribe to: enough to bind an MCP session to its chat, to know when a chat
/// is working or idle, and to record which chat wrote which lines (the edit hooks).
pub const HOOK_EVENTS: &[&str] = &[
    "sessionStart",
    "beforeSubmitPrompt",
    "beforeMCPExecution",
    "afterAgentResponse",
    "afterFileEdit",
    "afterTabFileEdit",
    "afterShellExecution",
    "stop",
    "sessionEnd",
];

/// Where things go.
#[derive(Debug, Clone)]
pub struct Target {
    /// `~/.cursor` (user-level mcp.json, hooks.json, commands/).
    pub cursor_home: PathBuf,
    /// The project to set up (rule file, commands); `None` for `--global`.
    pub project: Option<PathBuf>,
    /// Put the MCP entry in `<project>/.cursor/mcp.json` instead of the user-level file.
    pub mcp_in_project: bool,
}

/// What `init` writes.
#[derive(Debug, Clone)]
pub struct InitSpec {
    pub target: Target,
    /// The MCP endpoint, e.g. `http://127.0.0.1:47821/mcp`.
    pub url: String,
    pub token: String,
    /// Write `${env:TETHER_TOKEN}` instead of the token itself (for mcp.json files under git).
    pub token_from_env: bool,
    /// The command prefix Cursor's hooks run, e.g. `/usr/local/bin/tether`, already shell-quoted
    /// and carrying any `TETHER_HOME=…` the daemon needs.
    pub hook_command: String,
}

/// What a person asked for, at the CLI or in the GUI; [`plan_request`] turns it into a plan.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// `None`: user-level only (`--global`).
    pub project: Option<PathBuf>,
    pub project_mcp: bool,
    pub token_env: bool,
    /// The port to write when no daemon is running to tell us its URL.
    pub port: u16,
    /// Undo instead (`uninit`).
    pub remove: bool,
}

/// Plans `init` (or `uninit`) for this data dir and Cursor: the URL comes from the running
/// daemon when there is one, the token from its store, the hook command from this executable.
pub fn plan_request(paths: &crate::Paths, cursor: &crate::CursorLocations, r: &Request) -> Result<Plan> {
    let cursor_home = cursor.cursor_homes.first().cloned().ok_or(Error::NoHome)?;
    let project = r
        .project
        .as_ref()
        .map(|p| p.canonicalize().map_err(|e| Error::io(format!("project dir {}", p.display()), e)))
        .transpose()?;
    let target = Target { cursor_home, project, mcp_in_project: r.project_mcp };
    if r.remove {
        return plan_uninit(&target);
    }
    let url =
        crate::daemon::running(paths).and_then(|d| d.url).unwrap_or_else(|| format!("http://127.0.0.1:{}/mcp", r.port));
    let (token, _) = crate::token::mcp_token(paths, crate::token::NoKeyring::saved(paths))?;
    plan_init(&InitSpec { target, url, token, token_from_env: r.token_env, hook_command: hook_command(paths)? })
}

/// How Cursor's hooks call us: this executable, with the data dir when it is not the default.
pub fn hook_command(paths: &crate::Paths) -> Result<String> {
    let exe = std::env::current_exe().map_err(|e| Error::io("finding the tether executable", e))?;
    let exe = exe.canonicalize().unwrap_or(exe);
    let mut cmd = shell_quote(&exe.to_string_lossy());
    if std::env::var_os("TETHER_HOME").is_some() {
        cmd = format!("TETHER_HOME={} {cmd}", shell_quote(&paths.data_dir.to_string_lossy()));
    }
    Ok(cmd)
}

fn shell_quote(s: &str) -> String {
    if s.chars().all(|c| c.is_ascii_alphanumeric() || "/._-+:@".contains(c)) {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// One file's change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    pub path: PathBuf,
    /// Current content (`None`: the file does not exist).
    pub before: Option<String>,
    /// New content (`None`: delete the file).
    pub after: Option<String>,
    /// Create the file readable by its owner only (it holds a secret).
    pub private: bool,
}

impl FileChange {
    pub fn is_noop(&self) -> bool {
        self.before == self.after
    }
}

/// Everything `init` or `uninit` would do, plus what it decided not to touch and why.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    pub changes: Vec<FileChange>,
    pub skipped: Vec<String>,
    /// Secrets to mask when the plan is shown.
    secrets: Vec<String>,
}

impl Plan {
    /// Files that would actually change.
    pub fn effective(&self) -> impl Iterator<Item = &FileChange> {
        self.changes.iter().filter(|c| !c.is_noop())
    }

    /// A unified diff of every change with secrets masked.
    pub fn diff(&self) -> String {
        let mut out = String::new();
        for c in self.effective() {
            let mask = |s: &Option<String>| {
                let mut s = mask_bearer(s.as_deref().unwrap_or_default());
                for secret in &self.secrets {
                    s = s.replace(secret.as_str(), "********");
                }
                s
            };
            let (a, b) = (mask(&c.before), mask(&c.after));
            let p = c.path.display();
            let old = if c.before.is_some() { format!("a{p}") } else { "/dev/null".into() };
            let new = if c.after.is_some() { format!("b{p}") } else { "/dev/null".into() };
            out.push_str(&similar::TextDiff::from_lines(&a, &b).unified_diff().header(&old, &new).to_string());
        }
        out
    }

    /// Writes every change (each file atomically) and removes directories it leaves empty.
    pub fn apply(&self) -> Result<()> {
        for c in self.effective() {
            match &c.after {
                Some(text) => write_atomic(&c.path, text, c.private)?,
                None => {
                    std::fs::remove_file(&c.path)
                        .map_err(|e| Error::io(format!("removing {}", c.path.display()), e))?;
                    remove_empty_parents(&c.path);
                }
            }
        }
        // A file holding the token is owner-only, also when this run found it already right.
        for c in self.changes.iter().filter(|c| c.private && c.after.is_some()) {
            make_private(&c.path)?;
        }
        Ok(())
    }
}

/// Masks every `Bearer <token>` value (ours or another server's) except env references.
fn mask_bearer(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("Bearer ") {
        let (head, tail) = rest.split_at(i + "Bearer ".len());
        out.push_str(head);
        let end = tail.find(['"', '\n']).unwrap_or(tail.len());
        if tail.starts_with("${") || end == 0 {
            rest = tail;
        } else {
            out.push_str("********");
            rest = &tail[end..];
        }
    }
    out.push_str(rest);
    out
}

/// Plans `tether init`.
pub fn plan_init(spec: &InitSpec) -> Result<Plan> {
    let t = &spec.target;
    let mut plan = Plan { secrets: vec![spec.token.clone()], ..Plan::default() };

    let mcp_path = mcp_json_path(t)?;
    let auth = if spec.token_from_env {
        "Bearer ${env:TETHER_TOKEN}".to_owned()
    } else {
        guard_token_file(&mcp_path)?;
        format!("Bearer {}", spec.token)
    };
    let entry = json!({ "url": spec.url, "headers": { "Authorization": auth } });
    plan.changes.push(edit_json(&mcp_path, true, |root| {
        object_at(root, "mcpServers")?.insert(SERVER_NAME.to_owned(), entry.clone());
        Ok(())
    })?);

    // Hooks are user-level: they must fire in every project for the daemon to know which chat
    // calls, and they carry no secret.
    plan.changes.push(edit_json(&t.cursor_home.join("hooks.json"), false, |root| {
        let obj = as_object(root, "the file")?;
        obj.entry("version").or_insert(json!(1));
        let hooks = object_at(root, "hooks")?;
        for event in HOOK_EVENTS {
            let list = hooks.entry(*event).or_insert_with(|| json!([]));
            let arr = list.as_array_mut().ok_or_else(|| shape_error(&format!("hooks.{event}"), "an array"))?;
            let command = format!("{} hook {event}", spec.hook_command);
            // `stop` may answer with a follow-up (signals waiting); Cursor's own cap on automatic
            // follow-ups stays explicit and small, on top of ours (once per drain cycle).
            let entry = if *event == "stop" {
                json!({ "command": command, "loop_limit": crate::board::signals::HOOK_LOOP_LIMIT })
            } else {
                json!({ "command": command })
            };
            let ours: Vec<usize> = (0..arr.len()).filter(|&i| is_our_hook(&arr[i], event)).collect();
            match ours.first() {
                Some(&i) => arr[i] = entry,
                None => arr.push(entry),
            }
            for &i in ours.iter().skip(1).rev() {
                arr.remove(i);
            }
        }
        Ok(())
    })?);

    let commands_dir = match &t.project {
        Some(p) => p.join(".cursor").join("commands"),
        None => t.cursor_home.join("commands"),
    };
    for (name, body) in COMMANDS {
        plan.add_managed(&commands_dir.join(name), &format!("{MARKER}\n{body}"))?;
    }
    match &t.project {
        Some(p) => {
            let rule = format!("{RULE_FRONTMATTER}{MARKER}\n{RULE_BODY}");
            plan.add_managed(&p.join(".cursor").join("rules").join("tether.mdc"), &rule)?;
        }
        None => plan.skipped.push(
            "rule file: Cursor reads rule files per project only; run `tether init <project>` to add .cursor/rules/tether.mdc"
                .into(),
        ),
    }
    Ok(plan)
}

/// Plans `tether uninit`: removes exactly what `init` adds for the same target.
pub fn plan_uninit(target: &Target) -> Result<Plan> {
    let mut plan = Plan::default();
    let mcp_path = mcp_json_path(target)?;
    if mcp_path.exists() {
        plan.changes.push(edit_json(&mcp_path, true, |root| {
            if let Some(servers) = root.get_mut("mcpServers").and_then(Value::as_object_mut) {
                servers.remove(SERVER_NAME);
            }
            Ok(())
        })?);
    }
    let hooks_path = target.cursor_home.join("hooks.json");
    if hooks_path.exists() {
        plan.changes.push(edit_json(&hooks_path, false, |root| {
            if let Some(hooks) = root.get_mut("hooks").and_then(Value::as_object_mut) {
                for event in HOOK_EVENTS {
                    if let Some(arr) = hooks.get_mut(*event).and_then(Value::as_array_mut) {
                        arr.retain(|h| !is_our_hook(h, event));
                        if arr.is_empty() {
                            hooks.remove(*event);
                        }
                    }
                }
            }
            Ok(())
        })?);
    }
    let commands_dir = match &target.project {
        Some(p) => p.join(".cursor").join("commands"),
        None => target.cursor_home.join("commands"),
    };
    let mut managed: Vec<PathBuf> = COMMANDS.iter().map(|(n, _)| commands_dir.join(n)).collect();
    if let Some(p) = &target.project {
        managed.push(p.join(".cursor").join("rules").join("tether.mdc"));
    }
    for path in managed {
        match read_optional(&path)? {
            Some(text) if text.contains(MARKER) => {
                plan.changes.push(FileChange { path, before: Some(text), after: None, private: false });
            }
            Some(_) => plan.skipped.push(format!("{}: no tether marker, so it is yours; left alone", path.display())),
            None => {}
        }
    }
    Ok(plan)
}

impl Plan {
    fn add_managed(&mut self, path: &Path, content: &str) -> Result<()> {
        match read_optional(path)? {
            Some(existing) if !existing.contains(MARKER) => {
                self.skipped
                    .push(format!("{}: exists without the tether marker, so it is yours; left alone", path.display()));
            }
            before => self.changes.push(FileChange {
                path: path.to_owned(),
                before,
                after: Some(content.to_owned()),
                private: false,
            }),
        }
        Ok(())
    }
}

fn mcp_json_path(t: &Target) -> Result<PathBuf> {
    if t.mcp_in_project {
        let p =
            t.project.as_ref().ok_or_else(|| Error::invalid("options", "a project mcp.json needs a project dir"))?;
        Ok(p.join(".cursor").join("mcp.json"))
    } else {
        Ok(t.cursor_home.join("mcp.json"))
    }
}

/// Refuses to put a secret into `path` when git would track it.
fn guard_token_file(path: &Path) -> Result<()> {
    let Some(dir) = path.ancestors().skip(1).find(|d| d.is_dir()) else { return Ok(()) };
    let in_work_tree = dir.ancestors().any(|d| d.join(".git").exists());
    if !in_work_tree {
        return Ok(());
    }
    // When git cannot tell, the token is not written: it might be committed.
    match tether_git::is_ignored(dir, path) {
        Some(true) => Ok(()),
        _ => Err(Error::TokenWouldBeCommitted(path.to_owned())),
    }
}

/// Reads `path` as a JSON object (or starts one), applies `edit`, and returns the change. An
/// object left empty by the edit (only skeleton keys) means the file is removed.
fn edit_json(path: &Path, private: bool, edit: impl FnOnce(&mut Value) -> Result<()>) -> Result<FileChange> {
    let before = read_optional(path)?;
    let mut root = match &before {
        None => json!({}),
        Some(text) if text.trim().is_empty() => json!({}),
        Some(text) => serde_json::from_str::<Value>(text)
            .map_err(|e| Error::ConfigInvalid { path: path.to_owned(), reason: e.to_string() })?,
    };
    if !root.is_object() {
        return Err(Error::ConfigInvalid {
            path: path.to_owned(),
            reason: "the top level is not a JSON object".into(),
        });
    }
    edit(&mut root).map_err(|e| match e {
        Error::Invalid { reason, .. } => Error::ConfigInvalid { path: path.to_owned(), reason },
        other => other,
    })?;
    let after = if is_skeleton(&root) {
        None
    } else {
        let mut text = serde_json::to_string_pretty(&root)?;
        text.push('\n');
        // Re-serialising an untouched file must not count as a change.
        match &before {
            Some(b) if serde_json::from_str::<Value>(b).ok().as_ref() == Some(&root) => Some(b.clone()),
            _ => Some(text),
        }
    };
    Ok(FileChange { path: path.to_owned(), before, after, private })
}

/// `{}`, `{"mcpServers":{}}`, `{"version":1,"hooks":{}}`: nothing but what `init` would create.
fn is_skeleton(v: &Value) -> bool {
    let Some(obj) = v.as_object() else { return false };
    obj.iter().all(|(k, v)| match k.as_str() {
        "mcpServers" | "hooks" => v.as_object().is_some_and(Map::is_empty),
        "version" => v == &json!(1),
        _ => false,
    })
}

fn as_object<'a>(v: &'a mut Value, what: &str) -> Result<&'a mut Map<String, Value>> {
    v.as_object_mut().ok_or_else(|| shape_error(what, "an object"))
}

fn object_at<'a>(root: &'a mut Value, key: &str) -> Result<&'a mut Map<String, Value>> {
    let obj = as_object(root, "the file")?;
    let v = obj.entry(key).or_insert_with(|| json!({}));
    v.as_object_mut().ok_or_else(|| shape_error(key, "an object"))
}

fn shape_error(what: &str, expected: &str) -> Error {
    Error::invalid("config", format!("{what} is not {expected}"))
}

/// A hook entry we wrote: its command runs a `tether` executable with `hook <event>`.
fn is_our_hook(h: &Value, event: &str) -> bool {
    let Some(cmd) = h.get("command").and_then(Value::as_str) else { return false };
    let Some(rest) = cmd.strip_suffix(&format!(" hook {event}")) else { return false };
    let exe = rest.rsplit(' ').next().unwrap_or(rest).trim_matches(['\'', '"']);
    let name = Path::new(exe).file_name().and_then(|n| n.to_str()).unwrap_or("");
    name == "tether" || name == "tether.exe"
}

fn read_optional(path: &Path) -> Result<Option<String>> {
    match std::fs::read_to_string(path) {
        Ok(s) => Ok(Some(s)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io(format!("reading {}", path.display()), e)),
    }
}

fn write_atomic(path: &Path, text: &str, private: bool) -> Result<()> {
    let dir = path.parent().ok_or_else(|| Error::invalid("path", format!("{} has no parent", path.display())))?;
    std::fs::create_dir_all(dir).map_err(|e| Error::io(format!("creating {}", dir.display()), e))?;
    let io = |e| Error::io(format!("writing {}", path.display()), e);
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(io)?;
    std::io::Write::write_all(&mut tmp, text.as_bytes()).map_err(io)?;
    // Keep an existing file's permissions; a new file that holds a secret is owner-only
    // (NamedTempFile is created 0600).
    if let Ok(meta) = std::fs::metadata(path) {
        tmp.as_file().set_permissions(meta.permissions()).map_err(io)?;
    } else if !private {
        set_default_perms(tmp.as_file()).map_err(io)?;
    }
    tmp.as_file().sync_all().map_err(io)?;
    tmp.persist(path).map_err(|e| io(e.error))?;
    Ok(())
}

/// Takes group and other access away from a file (other users could read a token in it).
fn make_private(path: &Path) -> Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if let Ok(meta) = std::fs::metadata(path)
            && meta.permissions().mode() & 0o077 != 0
        {
            let mode = meta.permissions().mode() & 0o700;
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
                .map_err(|e| Error::io(format!("making {} private", path.display()), e))?;
        }
    }
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}

#[cfg(unix)]
fn set_default_perms(f: &std::fs::File) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    f.set_permissions(std::fs::Permissions::from_mode(0o644))
}

#[cfg(not(unix))]
fn set_default_perms(_: &std::fs::File) -> std::io::Result<()> {
    Ok(())
}

/// Removes `.cursor/rules`, `.cursor/commands` and `.cursor` when we left them empty.
fn remove_empty_parents(path: &Path) {
    for dir in path.ancestors().skip(1).take(2) {
        let is_ours = matches!(dir.file_name().and_then(|n| n.to_str()), Some("rules" | "commands" | ".cursor"));
        if !is_ours || std::fs::remove_dir(dir).is_err() {
            break;
        }
    }
}

const RULE_FRONTMATTER: &str = "---
description: Tether — search, read and tag PAST Cursor chats (other conversations, earlier work), and the shared task board (claim, hand off, complete) through the tether MCP tools
globs:
alwaysApply: false
---
";

const RULE_BODY: &str = "# Tether: memory of past chats

Use the `tether` MCP tools when the user refers to earlier work that is not in this conversation
(\"what did we decide about…\", \"continue where we left off\", \"like we did last week\"), or when
you need context from another chat in this project. They are for past and other chats, not this one.

- `sessions_find` — search past chats (full text) or list them; defaults to this project.
  Use `project: \"all\"` to look everywhere.
- `session_read` — read one chat by id or nickname. Pass `around` to jump to a match and keep
  `max_tokens` modest (2000–4000); drop tool output unless you need it.
- `session_tag` — give this chat (the default) or another a nickname, tags or a bookmark so it is
  easy to find again.

Quote what you reuse from a past chat and say which chat it came from.

## The shared task board

When the user asks you to work on, plan or split up tasks, use Tether's board (other agents and
people work on it too):

- `session_start` once, with your role (e.g. `dev`, `reviewer`); it tells you what you hold.
- `task_list` to see the board (`ready: true` for what can start now); `task_create` to add tasks.
- `task_claim` before working on a task (no id = the best ready one for your role). Never work
  on a task someone else holds: comment on it with `task_update` instead.
- `task_update` as you go: comments, `status: in_review`, or `summary` to complete it. If you stop
  before it is done, `release: true` with a `handoff: true` comment saying what is left.

## Signals: asking and answering

Agents and the user talk through Tether's signals.

- When a tool result says `pending_signals`, or Tether's message says signals are waiting, call
  `signals_pending` and act on what it returns before you go on. Call it too when you start a
  task and before you finish your turn.
- A `question`, `task_assigned` or `review_requested` needs an answer: `signal_send` with
  `reply_to` set to its id (the reply goes back to whoever asked).
- To ask the user something you cannot decide yourself, `signal_send` with `to: \"human\"` and
  `type: \"question\"`; to ask another agent, use its name (see `session_start`), or a role such
  as `reviewer` to reach every agent with that role. Keep the body short and point to the task
  (`task`) or file instead of pasting it.
- `status_update` tells others where you are; it needs no answer.
";

const COMMANDS: &[(&str, &str)] = &[
    (
        "tether-recall.md",
        "Search my past Cursor chats with the tether `sessions_find` tool for the topic I give after this command \
(across all projects if nothing turns up in this one). Read the most relevant one or two with `session_read` \
(`max_tokens` 4000, around the match), then tell me briefly what was decided, what was done and what was left open, \
naming the chats you used.\n",
    ),
    (
        "tether-continue.md",
        "Continue the work of an earlier chat. The chat is the nickname or id I give after this command (if I give none, \
use `sessions_find` to list this project's recent chats and ask me which). Read it with `session_read` \
(`max_tokens` 6000, latest messages), summarise where it stopped, and propose the next step.\n",
    ),
    (
        "tether-next-task.md",
        "Work on the next task from Tether's board. Call `session_start` with the role I give after this command \
(default `dev`), then `task_claim` with no id. Read the task (`task_list` with its id shows notes and handoffs from \
earlier agents), do the work, comment on progress with `task_update`, and complete it with a `summary` of what was \
done. If you cannot finish, release it with a handoff comment saying what is left.\n",
    ),
    (
        "tether-inbox.md",
        "Read the signals Tether holds for me with the tether `signals_pending` tool and deal with each: answer questions, \
task assignments and review requests with `signal_send` (`reply_to` = the signal's id) once you have done what they \
ask, or ask back if something is unclear. Then tell me briefly what came in and what you answered.\n",
    ),
    (
        "tether-tag.md",
        "Tag this chat with the tether `session_tag` tool (leave the id out: it defaults to this chat). Use what I write \
after this command: a word starting with `@` is the nickname, other words are tags, and `bookmark` bookmarks it. \
Then confirm what was set.\n",
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(home: &Path, project: Option<&Path>) -> InitSpec {
        InitSpec {
            target: Target {
                cursor_home: home.join(".cursor"),
                project: project.map(Path::to_owned),
                mcp_in_project: false,
            },
            url: "http://127.0.0.1:47821/mcp".into(),
            token: "sekret-token-value".into(),
            token_from_env: false,
            hook_command: "/opt/bin/tether".into(),
        }
    }

    fn read(p: &Path) -> Value {
        serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
    }

    fn git(dir: &Path, args: &[&str]) {
        let ok = std::process::Command::new("git").arg("-C").arg(dir).args(args).output().unwrap().status.success();
        assert!(ok, "git {args:?}");
    }

    #[test]
    fn init_merges_is_idempotent_and_uninit_restores() {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        let proj = tmp.path().join("proj");
        std::fs::create_dir_all(home.join(".cursor")).unwrap();
        std::fs::create_dir_all(&proj).unwrap();
        let mcp_before = "{\n  \"mcpServers\": {\n    \"other\": { \"command\": \"npx\", \"args\": [\"x\"] }\n  },\n  \"zeta\": 1\n}\n";
        let hooks_before =
            r#"{"version":1,"hooks":{"stop":[{"command":"./audit.sh"}],"afterFileEdit":[{"command":"fmt"}]}}"#;
        std::fs::write(home.join(".cursor/mcp.json"), mcp_before).unwrap();
        std::fs::write(home.join(".cursor/hooks.json"), hooks_before).unwrap();

        let s = spec(&home, Some(&proj));
        let plan = plan_init(&s).unwrap();
        assert!(!plan.diff().contains("sekret"), "dry-run diff must mask the token");
        assert!(plan.diff().contains("Bearer ********"));
        plan.apply().unwrap();

        let mcp = read(&home.join(".cursor/mcp.json"));
        assert_eq!(mcp["mcpServers"]["other"]["command"], "npx");
        assert_eq!(mcp["zeta"], 1);
        assert_eq!(mcp["mcpServers"]["tether"]["url"], "http://127.0.0.1:47821/mcp");
        assert_eq!(mcp["mcpServers"]["tether"]["headers"]["Authorization"], "Bearer sekret-token-value");
        let keys: Vec<_> = mcp.as_object().unwrap().keys().cloned().collect();
        assert_eq!(keys, ["mcpServers", "zeta"], "key order is kept");
        let hooks = read(&home.join(".cursor/hooks.json"));
        assert_eq!(hooks["hooks"]["stop"][0]["command"], "./audit.sh");
        assert_eq!(hooks["hooks"]["stop"][1]["command"], "/opt/bin/tether hook stop");
        assert_eq!(hooks["hooks"]["afterFileEdit"][0]["command"], "fmt");
        assert_eq!(hooks["hooks"]["afterFileEdit"][1]["command"], "/opt/bin/tether hook afterFileEdit");
        for e in HOOK_EVENTS {
            let theirs = matches!(*e, "stop" | "afterFileEdit");
            assert_eq!(hooks["hooks"][e].as_array().unwrap().len(), if theirs { 2 } else { 1 });
        }
        let rule = std::fs::read_to_string(proj.join(".cursor/rules/tether.mdc")).unwrap();
        assert!(rule.starts_with("---\ndescription: "), "{rule}");
        assert!(rule.contains("alwaysApply: false\n---\n"));
        assert!(proj.join(".cursor/commands/tether-recall.md").exists());

        // Idempotent: a second run changes nothing, even after the executable moved.
        assert_eq!(plan_init(&s).unwrap().effective().count(), 0);
        let moved = InitSpec { hook_command: "'/new place/tether'".into(), ..s.clone() };
        let p2 = plan_init(&moved).unwrap();
        assert_eq!(p2.effective().count(), 1, "only hooks.json changes");
        p2.apply().unwrap();
        let hooks = read(&home.join(".cursor/hooks.json"));
        assert_eq!(hooks["hooks"]["stop"].as_array().unwrap().len(), 2, "replaced, not duplicated");
        assert_eq!(hooks["hooks"]["stop"][1]["command"], "'/new place/tether' hook stop");

        let un = plan_uninit(&s.target).unwrap();
        assert!(!un.diff().contains("sekret") && un.diff().contains("Bearer ********"), "{}", un.diff());
        un.apply().unwrap();
        assert_eq!(read(&home.join(".cursor/mcp.json")), serde_json::from_str::<Value>(mcp_before).unwrap());
        assert_eq!(read(&home.join(".cursor/hooks.json")), serde_json::from_str::<Value>(hooks_before).unwrap());
        assert!(!proj.join(".cursor").exists(), "the project's .cursor we created is gone");
        assert_eq!(plan_uninit(&s.target).unwrap().effective().count(), 0);
    }

    #[test]
    fn fresh_machine_init_then_uninit_leaves_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        let s = spec(&home, None);
        let plan = plan_init(&s).unwrap();
        assert!(plan.skipped.iter().any(|m| m.contains("rule file")));
        plan.apply().unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(home.join(".cursor/mcp.json")).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600, "mcp.json holds the token");
        }
        assert!(home.join(".cursor/commands/tether-tag.md").exists());
        plan_uninit(&s.target).unwrap().apply().unwrap();
        let left: Vec<_> = std::fs::read_dir(home.join(".cursor")).map(|d| d.count()).into_iter().collect();
        assert!(left.is_empty() || left == [0], "left behind: {left:?}");
    }

    #[cfg(unix)]
    #[test]
    fn a_world_readable_mcp_json_is_made_private_when_it_gets_the_token() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        std::fs::create_dir_all(home.join(".cursor")).unwrap();
        let mcp = home.join(".cursor/mcp.json");
        std::fs::write(&mcp, r#"{"mcpServers":{"other":{"command":"x"}}}"#).unwrap();
        std::fs::set_permissions(&mcp, std::fs::Permissions::from_mode(0o644)).unwrap();
        plan_init(&spec(&home, None)).unwrap().apply().unwrap();
        assert_eq!(std::fs::metadata(&mcp).unwrap().permissions().mode() & 0o777, 0o600);
        // Already right but opened up again: a second init (nothing to change) tightens it too.
        std::fs::set_permissions(&mcp, std::fs::Permissions::from_mode(0o644)).unwrap();
        let again = plan_init(&spec(&home, None)).unwrap();
        again.apply().unwrap();
        assert_eq!(std::fs::metadata(&mcp).unwrap().permissions().mode() & 0o777, 0o600);
    }

    #[test]
    fn invalid_json_is_reported_and_never_overwritten() {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        std::fs::create_dir_all(home.join(".cursor")).unwrap();
        std::fs::write(home.join(".cursor/mcp.json"), "{ \"mcpServers\": { ,, }").unwrap();
        let err = plan_init(&spec(&home, None)).unwrap_err();
        assert!(matches!(err, Error::ConfigInvalid { .. }), "{err}");
        assert!(err.to_string().contains("mcp.json"), "{err}");
        assert_eq!(std::fs::read_to_string(home.join(".cursor/mcp.json")).unwrap(), "{ \"mcpServers\": { ,, }");
        std::fs::write(home.join(".cursor/mcp.json"), r#"{"mcpServers": []}"#).unwrap();
        let err = plan_init(&spec(&home, None)).unwrap_err();
        assert!(err.to_string().contains("mcpServers is not an object"), "{err}");
    }

    #[test]
    fn user_files_without_marker_are_left_alone() {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        let proj = tmp.path().join("proj");
        std::fs::create_dir_all(proj.join(".cursor/rules")).unwrap();
        std::fs::write(proj.join(".cursor/rules/tether.mdc"), "my own rule").unwrap();
        let s = spec(&home, Some(&proj));
        let plan = plan_init(&s).unwrap();
        assert!(plan.skipped.iter().any(|m| m.contains("tether.mdc")));
        plan.apply().unwrap();
        plan_uninit(&s.target).unwrap().apply().unwrap();
        assert_eq!(std::fs::read_to_string(proj.join(".cursor/rules/tether.mdc")).unwrap(), "my own rule");
    }

    #[test]
    fn token_goes_into_a_git_work_tree_only_when_ignored() {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        let proj = tmp.path().join("proj");
        std::fs::create_dir_all(&proj).unwrap();
        git(&proj, &["init", "-q"]);
        let mut s = spec(&home, Some(&proj));
        s.target.mcp_in_project = true;
        let err = plan_init(&s).unwrap_err();
        assert!(matches!(err, Error::TokenWouldBeCommitted(_)), "{err}");

        // With the env reference instead of the token, the file is safe to commit.
        let env = InitSpec { token_from_env: true, ..s.clone() };
        let plan = plan_init(&env).unwrap();
        let mcp = plan.changes.iter().find(|c| c.path.ends_with("mcp.json")).unwrap();
        assert!(mcp.after.as_deref().unwrap().contains("${env:TETHER_TOKEN}"));
        assert!(!mcp.after.as_deref().unwrap().contains("sekret"));

        std::fs::write(proj.join(".gitignore"), ".cursor/mcp.json\n").unwrap();
        plan_init(&s).unwrap().apply().unwrap();
        assert_eq!(
            read(&proj.join(".cursor/mcp.json"))["mcpServers"]["tether"]["headers"]["Authorization"],
            "Bearer sekret-token-value"
        );
        // A dotfiles repo around ~/.cursor is guarded the same way.
        git(&home, &["init", "-q"]);
        let err = plan_init(&spec(&home, None)).unwrap_err();
        assert!(matches!(err, Error::TokenWouldBeCommitted(_)), "{err}");
    }
}
