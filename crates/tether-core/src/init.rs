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
    /// Write (or remove) Tether as a Cursor 3 local plugin instead of editing Cursor's config
    /// ([`plan_plugin`]); `project`, `project_mcp` and `token_env` do not apply.
    pub plugin: bool,
}

/// Plans `init` (or `uninit`) for this data dir and Cursor: the URL comes from the running
/// daemon when there is one, the token from its store, the hook command from this executable.
pub fn plan_request(paths: &crate::Paths, cursor: &crate::CursorLocations, r: &Request) -> Result<Plan> {
    let cursor_home = cursor.cursor_homes.first().cloned().ok_or(Error::NoHome)?;
    if r.plugin {
        let root = plugin_dir(&cursor_home);
        if r.remove {
            return plan_plugin_removal(&root);
        }
        let url = crate::daemon::running(paths)
            .and_then(|d| d.url)
            .unwrap_or_else(|| format!("http://127.0.0.1:{}/mcp", r.port));
        return plan_plugin(&PluginSpec { cursor_home, url, hook_command: hook_command(paths)? });
    }
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
    /// Every change lies inside this folder (the plugin's) and is written through directory
    /// handles that never follow a link, so nothing outside it can be reached.
    within: Option<PathBuf>,
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
        if let Some(root) = &self.within {
            return self.apply_within(root);
        }
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
            let entry = hook_entry(&spec.hook_command, event);
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

/// Our entry for `event` in a hooks.json (Cursor's own or the plugin's).
fn hook_entry(hook_command: &str, event: &str) -> Value {
    let command = format!("{hook_command} hook {event}");
    // `stop` may answer with a follow-up (signals waiting); Cursor's own cap on automatic
    // follow-ups stays explicit and small, on top of ours (once per drain cycle).
    if event == "stop" {
        json!({ "command": command, "loop_limit": crate::board::signals::HOOK_LOOP_LIMIT })
    } else {
        json!({ "command": command })
    }
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

/// The name Cursor knows the plugin by (its folder and `plugin.json`'s `name`).
pub const PLUGIN_NAME: &str = "tether";

/// Where Cursor 3 loads a local plugin from: `~/.cursor/plugins/local/<name>/`, read on start
/// with no marketplace involved.
pub fn plugin_dir(cursor_home: &Path) -> PathBuf {
    cursor_home.join("plugins").join("local").join(PLUGIN_NAME)
}

/// What `tether init --plugin` writes. There is deliberately no token here: the plugin's
/// `mcp.json` names `${env:TETHER_TOKEN}`, so no file of the plugin can ever hold the secret.
#[derive(Debug, Clone)]
pub struct PluginSpec {
    /// `~/.cursor`; the plugin goes to [`plugin_dir`] under it.
    pub cursor_home: PathBuf,
    pub url: String,
    /// As [`InitSpec::hook_command`].
    pub hook_command: String,
}

/// Every file of the plugin, relative to its folder, with its content. `uninit --plugin` removes
/// exactly these (the names do not depend on the spec).
fn plugin_files(spec: &PluginSpec) -> Result<Vec<(String, String)>> {
    let pretty = |v: &Value| -> Result<String> {
        let mut text = serde_json::to_string_pretty(v)?;
        text.push('\n');
        Ok(text)
    };
    let manifest = json!({
        "name": PLUGIN_NAME,
        "displayName": "Tether",
        "version": env!("CARGO_PKG_VERSION"),
        "description": "Memory of every past Cursor chat, a shared task board and signals between agents and you, served by the local Tether daemon.",
        "author": { "name": "Tether" },
        "keywords": ["history", "search", "tasks", "mcp"],
        "rules": "./rules/",
        "skills": "./skills/",
        "commands": "./commands/",
        "hooks": "./hooks/hooks.json",
        "mcpServers": "./mcp.json",
    });
    let mcp = json!({ "mcpServers": { SERVER_NAME: {
        "url": spec.url,
        "headers": { "Authorization": "Bearer ${env:TETHER_TOKEN}" },
    }}});
    let mut hooks = Map::new();
    for event in HOOK_EVENTS {
        hooks.insert((*event).to_owned(), json!([hook_entry(&spec.hook_command, event)]));
    }
    let hooks = json!({ "version": 1, "hooks": hooks });
    let mut files = vec![
        (".cursor-plugin/plugin.json".to_owned(), pretty(&manifest)?),
        ("mcp.json".to_owned(), pretty(&mcp)?),
        ("hooks/hooks.json".to_owned(), pretty(&hooks)?),
        ("rules/tether.mdc".to_owned(), format!("{RULE_FRONTMATTER}{MARKER}\n{RULE_BODY}")),
        ("skills/tether/SKILL.md".to_owned(), format!("{SKILL_FRONTMATTER}{MARKER}\n{SKILL_BODY}")),
    ];
    for (file, body) in COMMANDS {
        let name = file.trim_end_matches(".md");
        let description = COMMAND_DESCRIPTIONS.iter().find(|(n, _)| *n == name).map_or("", |(_, d)| *d);
        files.push((
            format!("commands/{file}"),
            format!("---\nname: {name}\ndescription: {description}\n---\n{MARKER}\n{body}"),
        ));
    }
    Ok(files)
}

/// The names [`plugin_files`] writes, for removal without a spec.
fn plugin_file_names() -> Vec<String> {
    let spec = PluginSpec { cursor_home: PathBuf::new(), url: String::new(), hook_command: String::new() };
    plugin_files(&spec).map(|f| f.into_iter().map(|(n, _)| n).collect()).unwrap_or_default()
}

/// Plans `tether init --plugin`: the plugin folder under `~/.cursor/plugins/local`, and nothing
/// else of Cursor's. A link anywhere inside the folder (or the folder itself being one) is refused.
pub fn plan_plugin(spec: &PluginSpec) -> Result<Plan> {
    let root = plugin_dir(&spec.cursor_home);
    let mut plan = Plan { within: Some(root.clone()), ..Plan::default() };
    for (rel, content) in plugin_files(spec)? {
        let before = read_within(&root, &rel)?;
        plan.changes.push(FileChange { path: root.join(&rel), before, after: Some(content), private: false });
    }
    // The plugin and an older `tether init` both in place would run every hook twice.
    let legacy_hooks = read_optional(&spec.cursor_home.join("hooks.json"))?
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .is_some_and(|v| {
            HOOK_EVENTS.iter().any(|e| v["hooks"][e].as_array().is_some_and(|a| a.iter().any(|h| is_our_hook(h, e))))
        });
    if legacy_hooks {
        plan.skipped.push(format!(
            "{}: still has Tether's hooks from `tether init`; run `tether uninit --global` so they do not run twice",
            spec.cursor_home.join("hooks.json").display()
        ));
    }
    Ok(plan)
}

/// Plans `tether uninit --plugin`: the files `init --plugin` writes, then the folders they leave
/// empty, the plugin folder last. Anything else found in the folder stays (and so does the folder).
pub fn plan_plugin_removal(root: &Path) -> Result<Plan> {
    let mut plan = Plan { within: Some(root.to_owned()), ..Plan::default() };
    for rel in plugin_file_names() {
        if let Some(before) = read_within(root, &rel)? {
            plan.changes.push(FileChange { path: root.join(&rel), before: Some(before), after: None, private: false });
        }
    }
    Ok(plan)
}

fn unsafe_path(e: crate::nofollow::Unsafe) -> Error {
    Error::UnsafeWorkspace(e.to_string())
}

/// Opens `root`'s parent by handle (its canonical path: links above the plugin folder are the
/// person's own layout) and then `root` itself without following it; `None` when either is missing.
fn open_root(root: &Path, create: bool) -> Result<Option<(crate::nofollow::Dir, crate::nofollow::Dir)>> {
    use crate::nofollow::Dir;
    let (Some(parent), Some(name)) = (root.parent(), root.file_name()) else {
        return Err(Error::invalid("path", format!("{} has no parent", root.display())));
    };
    if create {
        std::fs::create_dir_all(parent).map_err(|e| Error::io(format!("creating {}", parent.display()), e))?;
    }
    let parent = match parent.canonicalize() {
        Ok(p) => p,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io(format!("opening {}", parent.display()), e)),
    };
    let parent = Dir::open_canonical(&parent).map_err(unsafe_path)?;
    let dir = if create { Some(parent.sub_or_create(name)) } else { parent.sub(name).transpose() };
    Ok(dir.transpose().map_err(unsafe_path)?.map(|d| (parent, d)))
}

/// Walks `rel`'s folders from `base` without following links; `None` when one is missing.
fn walk(base: crate::nofollow::Dir, rel: &Path, create: bool) -> Result<Option<crate::nofollow::Dir>> {
    let mut dir = base;
    for c in rel.parent().into_iter().flat_map(Path::components) {
        let std::path::Component::Normal(name) = c else {
            return Err(Error::invalid("path", format!("{} leaves the plugin folder", rel.display())));
        };
        dir = match if create { dir.sub_or_create(name).map(Some) } else { dir.sub(name) }.map_err(unsafe_path)? {
            Some(d) => d,
            None => return Ok(None),
        };
    }
    Ok(Some(dir))
}

/// A file inside the plugin folder, read without following any link; a link is refused.
fn read_within(root: &Path, rel: &str) -> Result<Option<String>> {
    use crate::nofollow::{Entry, Unsafe};
    let Some((_, base)) = open_root(root, false)? else { return Ok(None) };
    let rel = Path::new(rel);
    let Some(dir) = walk(base, rel, false)? else { return Ok(None) };
    let name = rel.file_name().unwrap_or_default();
    match dir.read(name).map_err(unsafe_path)? {
        Entry::Missing => Ok(None),
        Entry::File { bytes, .. } => Ok(Some(String::from_utf8_lossy(&bytes).into_owned())),
        Entry::Link(target) => Err(unsafe_path(Unsafe::Link { path: root.join(rel), target: Some(target) })),
    }
}

impl Plan {
    /// [`Plan::apply`] for a plan confined to `root`: every folder opened by handle without
    /// following links, every file replaced (never written through), emptied folders removed.
    fn apply_within(&self, root: &Path) -> Result<()> {
        let removing = self.changes.iter().any(|c| c.after.is_none());
        let Some((parent, _)) = open_root(root, !removing)? else { return Ok(()) };
        let mut dirs: Vec<PathBuf> = Vec::new();
        for c in self.effective() {
            let rel = c
                .path
                .strip_prefix(root)
                .map_err(|_| Error::invalid("path", format!("{} is outside {}", c.path.display(), root.display())))?;
            let name = rel.file_name().unwrap_or_default();
            let Some((_, base)) = open_root(root, c.after.is_some())? else { continue };
            let Some(dir) = walk(base, rel, c.after.is_some())? else { continue };
            match &c.after {
                Some(text) => dir.write(name, text.as_bytes(), 0o644).map_err(unsafe_path)?,
                None => {
                    dir.remove(name).map_err(unsafe_path)?;
                    dirs.extend(rel.ancestors().skip(1).filter(|a| !a.as_os_str().is_empty()).map(Path::to_owned));
                }
            }
        }
        if removing {
            // Deepest first, so a folder is empty by the time its parent is tried.
            // Deepest first, so a folder is empty by the time its parent is tried.
            dirs.sort_by(|a, b| b.components().count().cmp(&a.components().count()).then(a.cmp(b)));
            dirs.dedup();
            for d in dirs {
                let Some((_, base)) = open_root(root, false)? else { break };
                // `walk` opens the folders above `d`'s last component: the one `d` lives in.
                if let Some(dir) = walk(base, &d, false)? {
                    dir.remove_empty_dir(d.file_name().unwrap_or_default());
                }
            }
            if let Some(name) = root.file_name() {
                parent.remove_empty_dir(name);
            }
        }
        Ok(())
    }
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
        tether_store::private::set_ordinary(tmp.as_file()).map_err(io)?;
    }
    tmp.as_file().sync_all().map_err(io)?;
    tmp.persist(path).map_err(|e| io(e.error))?;
    Ok(())
}

/// Takes group and other access away from a file (other users could read a token in it).
fn make_private(path: &Path) -> Result<()> {
    tether_store::private::tighten(path).map_err(|e| Error::io(format!("making {} private", path.display()), e))?;
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

const SKILL_FRONTMATTER: &str = "---
name: tether
description: Use Tether's MCP tools to find and read past Cursor chats, work from the shared task board (claim, update, hand off) and ask the person or other agents through signals. Use when the user refers to earlier work, asks to work on or split up tasks, or when you need a decision you cannot make yourself.
---
";

const SKILL_BODY: &str = "# Using Tether

Tether is a daemon on this machine that indexes every Cursor chat, keeps a task board shared by
agents and the person, and carries signals (questions, answers, status) between them. Its tools
come from the `tether` MCP server of this plugin.

## Find a past chat

1. `sessions_find` with `query` (full-text) to search; without it, the most recent chats. It
   looks in the current project by default: pass `project: \"all\"` when nothing turns up.
2. `session_read` with the `id` (or nickname) from a row. Pass `around` with a word from the
   match to jump there, and keep `max_tokens` between 2000 and 4000; page on with
   `next_offset`. Tool calls are left out unless you set `include_tools`.
3. Say which chat you took what from. `session_tag` gives a chat (this one by default) a
   nickname, tags or a bookmark so it is found again.

`code_origin` tells which chat wrote given lines of a file.

## Work on a task

1. `session_start` once, with your role (`dev`, `reviewer`, ...): it registers you and says
   what you hold.
2. `task_list` (`ready: true` for what can start now, or `id` for one task with its notes and
   handoffs); `task_create` adds tasks.
3. `task_claim` before you work on one (without `id`: the best ready task for your role). Never
   work on a task someone else holds; comment on it with `task_update` instead.
4. `task_update` as you go: a comment, `status: in_review`, or `summary` to complete it. If you
   stop before the end, `release: true` with a `handoff: true` comment saying what is left.

## Ask the person

- `signal_send` with `to: \"human\"`, `type: \"question\"` and a short `body` (point at the task or
  file rather than pasting it). The answer comes back as a signal.
- When a tool result mentions `pending_signals`, call `signals_pending` and deal with what it
  returns before going on; answer a question, assignment or review request with `signal_send`
  and `reply_to` set to its id.
- `status_update` signals tell others where you are and need no answer.
";

/// `description:` of each plugin command (Cursor shows it in the `/` menu).
const COMMAND_DESCRIPTIONS: &[(&str, &str)] = &[
    ("tether-recall", "Recall what past chats decided about a topic"),
    ("tether-continue", "Continue the work of an earlier chat"),
    ("tether-next-task", "Claim and work on the next task from Tether's board"),
    ("tether-inbox", "Read and answer the signals waiting for this chat"),
    ("tether-tag", "Nickname, tag or bookmark this chat"),
];

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
        if cfg!(unix) {
            let meta = std::fs::metadata(home.join(".cursor/mcp.json")).unwrap();
            assert_eq!(tether_store::private::mode(&meta), Some(0o600), "mcp.json holds the token");
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

    fn plugin_spec(home: &Path) -> PluginSpec {
        PluginSpec {
            cursor_home: home.join(".cursor"),
            url: "http://127.0.0.1:47821/mcp".into(),
            hook_command: "/opt/bin/tether".into(),
        }
    }

    fn files_under(dir: &Path) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() { out.extend(files_under(&p)) } else { out.push(p) }
        }
        out
    }

    #[test]
    fn plugin_validates_against_the_manifest_schema_and_uninit_removes_exactly_it() {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        let cursor = home.join(".cursor");
        // Cursor's own config and another plugin: none of it may change.
        std::fs::create_dir_all(cursor.join("plugins/local/other")).unwrap();
        std::fs::write(cursor.join("plugins/local/other/keep.md"), "theirs").unwrap();
        std::fs::write(cursor.join("mcp.json"), r#"{"mcpServers":{"x":{"url":"http://h"}}}"#).unwrap();
        let spec = plugin_spec(&home);
        let plan = plan_plugin(&spec).unwrap();
        assert!(plan.changes.iter().all(|c| c.path.starts_with(cursor.join("plugins/local/tether"))));
        plan.apply().unwrap();
        let root = plugin_dir(&cursor);

        let schema: Value = serde_json::from_str(include_str!("../tests/fixtures/cursor-plugin.schema.json")).unwrap();
        let validator = jsonschema::draft7::new(&schema).unwrap();
        let manifest = read(&root.join(".cursor-plugin/plugin.json"));
        let errors: Vec<String> = validator.iter_errors(&manifest).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "plugin.json against the manifest schema: {errors:?}");
        // The schema does reject what Cursor rejects (so the check above can fail).
        assert!(!validator.is_valid(&json!({"name": "Tether"})));
        assert!(!validator.is_valid(&json!({"displayName": "x"})));
        assert!(!validator.is_valid(&json!({"name": "tether", "mcp": "./mcp.json"})));
        assert_eq!(manifest["name"], PLUGIN_NAME);

        // Every component path is relative, inside the folder, and names what was written.
        for key in ["rules", "skills", "commands", "hooks", "mcpServers"] {
            let rel = manifest[key].as_str().unwrap();
            assert!(rel.starts_with("./") && !rel.contains(".."), "{key}: {rel}");
            let p = root.join(rel);
            assert!(p.exists(), "{key} names {rel}, which is not there");
            if p.is_dir() {
                assert!(!files_under(&p).is_empty(), "{key}: {rel} is empty");
            }
        }
        let mcp = read(&root.join("mcp.json"));
        assert_eq!(mcp["mcpServers"]["tether"]["url"], "http://127.0.0.1:47821/mcp");
        assert_eq!(mcp["mcpServers"]["tether"]["headers"]["Authorization"], "Bearer ${env:TETHER_TOKEN}");
        let hooks = read(&root.join("hooks/hooks.json"));
        assert_eq!(hooks["version"], 1);
        for e in HOOK_EVENTS {
            assert_eq!(hooks["hooks"][e][0]["command"], format!("/opt/bin/tether hook {e}"));
        }
        let skill = std::fs::read_to_string(root.join("skills/tether/SKILL.md")).unwrap();
        assert!(skill.starts_with("---\nname: tether\ndescription: "), "{skill}");
        for tool in ["sessions_find", "session_read", "task_claim", "signal_send"] {
            assert!(skill.contains(tool), "the skill does not teach {tool}");
        }
        for (file, _) in COMMANDS {
            let text = std::fs::read_to_string(root.join("commands").join(file)).unwrap();
            let name = file.trim_end_matches(".md");
            assert!(text.starts_with(&format!("---\nname: {name}\ndescription: ")), "{text}");
            assert!(!text.contains("description: \n"), "{file} has no description");
        }
        assert!(std::fs::read_to_string(root.join("rules/tether.mdc")).unwrap().starts_with("---\ndescription: "));

        assert_eq!(plan_plugin(&spec).unwrap().effective().count(), 0, "a second run changes nothing");

        // A file of the person's inside the folder keeps it (and itself) through uninit.
        std::fs::write(root.join("skills/notes.md"), "mine").unwrap();
        plan_plugin_removal(&root).unwrap().apply().unwrap();
        assert_eq!(files_under(&root), [root.join("skills/notes.md")]);
        std::fs::remove_file(root.join("skills/notes.md")).unwrap();
        plan_plugin(&spec).unwrap().apply().unwrap();
        let un = plan_plugin_removal(&root).unwrap();
        assert_eq!(un.effective().count(), plan.changes.len());
        un.apply().unwrap();
        assert!(!root.exists(), "uninit left {:?}", std::fs::read_dir(&root).map(|d| d.count()));
        assert_eq!(std::fs::read_to_string(cursor.join("plugins/local/other/keep.md")).unwrap(), "theirs");
        assert_eq!(
            std::fs::read_to_string(cursor.join("mcp.json")).unwrap(),
            r#"{"mcpServers":{"x":{"url":"http://h"}}}"#
        );
        assert!(!cursor.join("hooks.json").exists() && !cursor.join("commands").exists());
        assert_eq!(plan_plugin_removal(&root).unwrap().effective().count(), 0);
    }

    #[cfg(unix)]
    #[test]
    fn plugin_never_writes_or_removes_through_a_link() {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        let outside = tmp.path().join("outside");
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("tether-tag.md"), "not Tether's").unwrap();
        let spec = plugin_spec(&home);
        let root = plugin_dir(&spec.cursor_home);
        std::fs::create_dir_all(&root).unwrap();

        // A folder of the plugin that is a link out.
        std::os::unix::fs::symlink(&outside, root.join("commands")).unwrap();
        let err = plan_plugin(&spec).unwrap_err();
        assert!(matches!(err, Error::UnsafeWorkspace(_)), "{err}");
        let err = plan_plugin_removal(&root).unwrap_err();
        assert!(matches!(err, Error::UnsafeWorkspace(_)), "{err}");
        std::fs::remove_file(root.join("commands")).unwrap();

        // A file of the plugin that is a link out.
        std::fs::create_dir_all(root.join("commands")).unwrap();
        std::os::unix::fs::symlink(outside.join("tether-tag.md"), root.join("commands/tether-tag.md")).unwrap();
        assert!(matches!(plan_plugin(&spec).unwrap_err(), Error::UnsafeWorkspace(_)));
        assert!(matches!(plan_plugin_removal(&root).unwrap_err(), Error::UnsafeWorkspace(_)));
        std::fs::remove_dir_all(&root).unwrap();

        // The plugin folder itself a link.
        std::os::unix::fs::symlink(&outside, &root).unwrap();
        assert!(matches!(plan_plugin(&spec).unwrap_err(), Error::UnsafeWorkspace(_)));
        assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 1, "something was written outside");
        assert_eq!(std::fs::read_to_string(outside.join("tether-tag.md")).unwrap(), "not Tether's");
    }
}
