//! Every directory Tether reads or writes is resolved here, and only here.
//!
//! Our own data lives under `TETHER_HOME` when set, else the platform data dir. Cursor's data is
//! discovered from the home directory per OS (macOS, Windows, Linux, WSL — both sides — and the
//! CLI's `CURSOR_CONFIG_DIR` / `$XDG_CONFIG_HOME/cursor`; the rules are pure functions over the OS,
//! the environment and the home: [`default_user_dirs`], [`default_cursor_homes`]), with overrides
//! `TETHER_CURSOR_DIR` (Cursor's `User` dir) and `TETHER_CURSOR_HOME` (`~/.cursor`), then the folders
//! the person saved ([`SavedCursorDirs`], read from `settings.json` by the settings module). Nothing
//! else in the engine reads the environment, so tests redirect everything with these variables.

// This module is the one place allowed to ask the OS for directories (see clippy.toml).
#![allow(clippy::disallowed_methods)]

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// Where Tether keeps its own files.
#[derive(Debug, Clone)]
pub struct Paths {
    pub data_dir: PathBuf,
}

impl Paths {
    /// `TETHER_HOME` if set, else `<platform data dir>/tether`.
    pub fn from_env() -> Result<Self> {
        if let Some(home) = std::env::var_os("TETHER_HOME").filter(|v| !v.is_empty()) {
            return Ok(Self::at(PathBuf::from(home)));
        }
        let base = dirs::data_dir().ok_or(Error::NoHome)?;
        Ok(Self::at(base.join("tether")))
    }

    pub fn at(data_dir: impl Into<PathBuf>) -> Self {
        Self { data_dir: data_dir.into() }
    }

    pub fn db(&self) -> PathBuf {
        self.data_dir.join("index.db")
    }

    pub fn lock_file(&self) -> PathBuf {
        self.data_dir.join("daemon.lock")
    }

    /// The person's settings (see [`crate::settings`]).
    pub fn settings_json(&self) -> PathBuf {
        self.data_dir.join("settings.json")
    }

    pub fn daemon_json(&self) -> PathBuf {
        self.data_dir.join("daemon.json")
    }

    /// Private scratch space, e.g. snapshot copies of Cursor databases that cannot be opened
    /// read-only in place without creating files next to them.
    pub fn scratch_dir(&self) -> PathBuf {
        self.data_dir.join("scratch")
    }

    /// Transcripts of the Cursor Cloud agents Tether ran (`<agent id>.jsonl`), indexed as chats
    /// of source `cloud`: Cursor's API keeps no conversation, so this is the only copy.
    pub fn cloud_dir(&self) -> PathBuf {
        self.data_dir.join("cloud")
    }

    /// Runs' worktrees (`<repository>/R-<n>-<slug>`), unless the settings name another folder.
    pub fn worktrees_dir(&self) -> PathBuf {
        self.data_dir.join("worktrees")
    }

    /// Team mode: repositories this machine cloned to run other machines' runs
    /// (`<host>/<path>`), when none of its own checkouts has the run's remote.
    pub fn team_repos_dir(&self) -> PathBuf {
        self.data_dir.join("repos")
    }

    /// Role rules for runs (`<role>.mdc`), seeded with Tether's own.
    pub fn roles_dir(&self) -> PathBuf {
        self.data_dir.join("roles")
    }

    /// Creates the data dir, private to this user (0700): it holds chat text, tokens and the
    /// daemon's lock, which other users of the machine must not read or take over.
    pub fn ensure(&self) -> Result<()> {
        crate::private::ensure_private_dir(&self.data_dir)
            .map_err(|e| Error::io(format!("creating {}", self.data_dir.display()), e))
    }
}

/// Cursor folders the person saved (in `settings.json`), which win over detection but not over
/// flags and variables.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SavedCursorDirs {
    pub user_dir: Option<PathBuf>,
    pub home: Option<PathBuf>,
    /// Agents whose chats the person turned off (`claude-code`, `codex`, `gemini`): their
    /// folders are not looked for, so neither indexed nor watched.
    pub agents_off: Vec<String>,
}

/// Where Cursor keeps its data on this machine.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct CursorLocations {
    /// Cursor's `User` directories (holding `globalStorage/` and `workspaceStorage/`). More than
    /// one on WSL, where both the Linux and the Windows install may exist.
    pub user_dirs: Vec<PathBuf>,
    /// `~/.cursor` (the CLI's `chats/` and `projects/*/agent-transcripts/`).
    pub cursor_homes: Vec<PathBuf>,
    /// How each location was found, for `tether doctor`.
    pub notes: Vec<String>,
    /// What chose the User dir: `--cursor-dir`, `TETHER_CURSOR_DIR`, `settings`, or `detected`.
    pub user_dir_from: &'static str,
    /// What chose the Cursor home: `TETHER_CURSOR_HOME`, `settings`, or `detected`.
    pub home_from: &'static str,
    /// Our own transcripts of Cursor Cloud agents (set by `Tether::open`), indexed beside
    /// Cursor's files.
    #[serde(skip)]
    pub cloud_dir: Option<PathBuf>,
    /// Claude Code's config dirs (each holding `projects/`), read beside Cursor's chats. Empty
    /// for [`CursorLocations::explicit`], so tests never read the machine's own agents.
    pub claude_dirs: Vec<PathBuf>,
    /// Codex CLI's homes (each holding `sessions/` and `archived_sessions/`).
    pub codex_homes: Vec<PathBuf>,
    /// Gemini CLI's `.gemini` dirs (each holding `tmp/<project>/chats/` and `projects.json`).
    pub gemini_dirs: Vec<PathBuf>,
    /// Agents not read because the settings turned them off, sorted.
    pub agents_off: Vec<String>,
}

impl CursorLocations {
    /// Explicit locations, used by tests and by `--cursor-dir`.
    pub fn explicit(user_dir: Option<PathBuf>, cursor_home: Option<PathBuf>) -> Self {
        let mut loc = Self { user_dir_from: "given", home_from: "given", ..Self::default() };
        if let Some(u) = user_dir {
            loc.notes.push(format!("Cursor User dir given: {}", u.display()));
            loc.user_dirs.push(u);
        }
        if let Some(h) = cursor_home {
            loc.notes.push(format!("Cursor home given: {}", h.display()));
            loc.cursor_homes.push(h);
        }
        loc
    }

    /// Discover: the overrides first (the `--cursor-dir` flag, then `TETHER_CURSOR_DIR` /
    /// `TETHER_CURSOR_HOME`, then the folders saved in the settings), else the per-OS defaults.
    pub fn discover(cli_user_dir: Option<PathBuf>, saved: &SavedCursorDirs) -> Self {
        let env_path = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty()).map(PathBuf::from);
        let user_override = cli_user_dir
            .map(|d| (d, "--cursor-dir"))
            .or_else(|| env_path("TETHER_CURSOR_DIR").map(|d| (d, "TETHER_CURSOR_DIR")))
            .or_else(|| saved.user_dir.clone().map(|d| (d, "settings")));
        let home_override = env_path("TETHER_CURSOR_HOME")
            .map(|d| (d, "TETHER_CURSOR_HOME"))
            .or_else(|| saved.home.clone().map(|d| (d, "settings")));
        let home = dirs::home_dir();
        let env = CursorEnv::current();
        let mut loc = Self { user_dir_from: "detected", home_from: "detected", ..Self::default() };
        match user_override {
            Some((u, from)) => {
                loc.user_dir_from = from;
                loc.notes.push(format!("Cursor User dir from {from}: {}", u.display()));
                loc.user_dirs.push(u);
            }
            None => {
                if let Some(home) = &home {
                    for (u, why) in present_or_first(default_user_dirs(home, Os::current(), &env)) {
                        loc.notes.push(format!("{why}: {}", u.display()));
                        loc.user_dirs.push(u);
                    }
                }
            }
        }
        match home_override {
            Some((h, from)) => {
                loc.home_from = from;
                loc.notes.push(format!("Cursor home from {from}: {}", h.display()));
                loc.cursor_homes.push(h);
            }
            None => {
                if let Some(home) = &home {
                    for (h, why) in present_or_first(default_cursor_homes(home, Os::current(), &env)) {
                        loc.notes.push(format!("Cursor home ({why}): {}", h.display()));
                        loc.cursor_homes.push(h);
                    }
                }
            }
        }
        if let Some(home) = &home {
            loc.add_agents(home, &AgentEnv::current(), &saved.agents_off);
        }
        loc
    }

    /// The other agents' folders under `home`, but for the agents in `off`.
    pub fn add_agents(&mut self, home: &Path, env: &AgentEnv, off: &[String]) {
        let mut agents_off: Vec<String> = Vec::new();
        let mut on = |agent: &str, name: &str, notes: &mut Vec<String>| {
            let is_off = off.iter().any(|o| o == agent);
            if is_off {
                notes
                    .push(format!("{name}: not read (turned off in the settings: agents.{})", agent.replace('-', "_")));
                agents_off.push(agent.to_owned());
            }
            !is_off
        };
        if on("claude-code", "Claude Code", &mut self.notes) {
            for (d, why) in default_claude_dirs(home, env) {
                self.notes.push(format!("Claude Code ({why}): {}", d.display()));
                self.claude_dirs.push(d);
            }
        }
        if on("codex", "Codex CLI", &mut self.notes) {
            for (d, why) in default_codex_homes(home, env) {
                self.notes.push(format!("Codex CLI ({why}): {}", d.display()));
                self.codex_homes.push(d);
            }
        }
        if on("gemini", "Gemini CLI", &mut self.notes) {
            for (d, why) in default_gemini_dirs(home, env) {
                self.notes.push(format!("Gemini CLI ({why}): {}", d.display()));
                self.gemini_dirs.push(d);
            }
        }
        agents_off.sort();
        self.agents_off = agents_off;
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Os {
    MacOs,
    Windows,
    Linux,
    Wsl,
}

impl Os {
    pub fn current() -> Self {
        if cfg!(target_os = "macos") {
            Os::MacOs
        } else if cfg!(windows) {
            Os::Windows
        } else if is_wsl() {
            Os::Wsl
        } else {
            Os::Linux
        }
    }
}

fn is_wsl() -> bool {
    std::fs::read_to_string("/proc/version").map(|v| v.to_ascii_lowercase().contains("microsoft")).unwrap_or(false)
}

/// What the per-OS rules read from the machine, taken once ([`CursorEnv::current`]) so that the
/// rules ([`default_user_dirs`], [`default_cursor_homes`]) are pure and every layout is tested
/// on any machine.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CursorEnv {
    /// `%APPDATA%` (Windows): the IDE's `Cursor\User` is under it.
    pub appdata: Option<PathBuf>,
    /// `%USERPROFILE%` (Windows): the CLI's `.cursor` is under it.
    pub userprofile: Option<PathBuf>,
    /// `CURSOR_CONFIG_DIR`: where the Cursor CLI keeps what is otherwise `~/.cursor`.
    pub cursor_config_dir: Option<PathBuf>,
    /// `XDG_CONFIG_HOME` (Linux, WSL): the IDE's `Cursor/User` and the CLI's `cursor` are under it.
    pub xdg_config_home: Option<PathBuf>,
    /// WSL: the Windows user homes (`/mnt/<drive>/Users/<u>`) that hold a Cursor install.
    pub wsl_windows_homes: Vec<PathBuf>,
}

impl CursorEnv {
    pub fn current() -> Self {
        let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty()).map(PathBuf::from);
        Self {
            appdata: var("APPDATA"),
            userprofile: var("USERPROFILE"),
            cursor_config_dir: var("CURSOR_CONFIG_DIR"),
            xdg_config_home: var("XDG_CONFIG_HOME"),
            wsl_windows_homes: wsl_windows_homes(),
        }
    }
}

/// Windows user homes visible from WSL (`/mnt/<drive>/Users/*` with Cursor's `AppData` folder or
/// a `.cursor`).
fn wsl_windows_homes() -> Vec<PathBuf> {
    if !is_wsl() {
        return Vec::new();
    }
    let mut out = Vec::new();
    let drives = std::fs::read_dir("/mnt").into_iter().flatten().flatten().map(|e| e.path());
    for users in drives.filter(|d| d.file_name().is_some_and(|n| n.len() == 1)).map(|d| d.join("Users")) {
        for e in std::fs::read_dir(users).into_iter().flatten().flatten() {
            let p = e.path();
            if p.join("AppData/Roaming/Cursor/User").is_dir() || p.join(".cursor").is_dir() {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The first location always (doctor says where it looked), the others where they exist.
fn present_or_first(all: Vec<(PathBuf, &'static str)>) -> Vec<(PathBuf, &'static str)> {
    all.into_iter().enumerate().filter(|(i, (p, _))| *i == 0 || p.is_dir()).map(|(_, x)| x).collect()
}

/// The IDE's `User` directories for an OS, given the home directory and the environment.
pub fn default_user_dirs(home: &Path, os: Os, env: &CursorEnv) -> Vec<(PathBuf, &'static str)> {
    let config = env.xdg_config_home.clone().unwrap_or_else(|| home.join(".config"));
    match os {
        Os::MacOs => vec![(home.join("Library/Application Support/Cursor/User"), "macOS default")],
        Os::Windows => {
            let appdata = env.appdata.clone().unwrap_or_else(|| home.join("AppData").join("Roaming"));
            vec![(appdata.join("Cursor").join("User"), "Windows default (%APPDATA%)")]
        }
        Os::Linux => vec![(config.join("Cursor/User"), "Linux default")],
        Os::Wsl => {
            let mut v = vec![(config.join("Cursor/User"), "WSL Linux-side install")];
            for h in &env.wsl_windows_homes {
                v.push((h.join("AppData/Roaming/Cursor/User"), "WSL: Cursor on Windows"));
            }
            v
        }
    }
}

/// The Cursor homes (what is `~/.cursor` by default: the CLI's `chats/`, `acp-sessions/`,
/// `projects/*/agent-transcripts/`) for an OS: `CURSOR_CONFIG_DIR` first when set, then the
/// platform's `.cursor`, then on Linux and WSL the CLI's `$XDG_CONFIG_HOME/cursor` (some CLI
/// versions keep `chats/` there), and under WSL each Windows home's `.cursor`.
pub fn default_cursor_homes(home: &Path, os: Os, env: &CursorEnv) -> Vec<(PathBuf, &'static str)> {
    let mut v: Vec<(PathBuf, &'static str)> = Vec::new();
    if let Some(d) = &env.cursor_config_dir {
        v.push((d.clone(), "CURSOR_CONFIG_DIR"));
    }
    let config = env.xdg_config_home.clone().unwrap_or_else(|| home.join(".config"));
    match os {
        Os::MacOs => v.push((home.join(".cursor"), "macOS default")),
        Os::Windows => {
            let profile = env.userprofile.clone().unwrap_or_else(|| home.to_path_buf());
            v.push((profile.join(".cursor"), "Windows default (%USERPROFILE%)"));
        }
        Os::Linux => {
            v.push((home.join(".cursor"), "Linux default"));
            v.push((config.join("cursor"), "the CLI's config dir"));
        }
        Os::Wsl => {
            v.push((home.join(".cursor"), "WSL Linux-side install"));
            v.push((config.join("cursor"), "the CLI's config dir"));
            for h in &env.wsl_windows_homes {
                v.push((h.join(".cursor"), "WSL: Cursor on Windows"));
            }
        }
    }
    let mut seen = std::collections::HashSet::new();
    v.retain(|(p, _)| seen.insert(p.clone()));
    v
}

/// The variables other agents read for their folders, taken once so the rules are pure.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AgentEnv {
    /// `CLAUDE_CONFIG_DIR`: one folder or a comma-separated list, replacing `~/.claude`.
    pub claude_config_dir: Option<String>,
    /// `CODEX_HOME`: replaces `~/.codex`.
    pub codex_home: Option<PathBuf>,
    /// `XDG_CONFIG_HOME`: some Claude Code installs keep `claude/` under it.
    pub xdg_config_home: Option<PathBuf>,
    /// `GEMINI_CLI_HOME`: replaces the home Gemini CLI keeps `.gemini` under (its
    /// `utils/paths.ts` `homedir()`), not the `.gemini` folder itself.
    pub gemini_cli_home: Option<PathBuf>,
}

impl AgentEnv {
    pub fn current() -> Self {
        let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
        Self {
            claude_config_dir: var("CLAUDE_CONFIG_DIR").map(|v| v.to_string_lossy().into_owned()),
            codex_home: var("CODEX_HOME").map(PathBuf::from),
            xdg_config_home: var("XDG_CONFIG_HOME").map(PathBuf::from),
            gemini_cli_home: var("GEMINI_CLI_HOME").map(PathBuf::from),
        }
    }
}

/// Claude Code's config dirs: those `CLAUDE_CONFIG_DIR` lists when set (as Claude Code itself
/// does, nothing else then), else `~/.claude` and, where it exists, `~/.config/claude`. The same
/// on every OS (Claude Code keeps them under the home on Windows too).
pub fn default_claude_dirs(home: &Path, env: &AgentEnv) -> Vec<(PathBuf, &'static str)> {
    if let Some(list) = &env.claude_config_dir {
        let v: Vec<_> = list
            .split(',')
            .map(str::trim)
            .filter(|d| !d.is_empty())
            .map(|d| (PathBuf::from(d), "CLAUDE_CONFIG_DIR"))
            .collect();
        if !v.is_empty() {
            return v;
        }
    }
    let config = env.xdg_config_home.clone().unwrap_or_else(|| home.join(".config"));
    present_or_first(vec![(home.join(".claude"), "default"), (config.join("claude"), "the XDG config dir")])
}

/// Codex CLI's home: `CODEX_HOME` when set, else `~/.codex` (every OS).
pub fn default_codex_homes(home: &Path, env: &AgentEnv) -> Vec<(PathBuf, &'static str)> {
    match &env.codex_home {
        Some(d) => vec![(d.clone(), "CODEX_HOME")],
        None => vec![(home.join(".codex"), "default")],
    }
}

/// Gemini CLI's `.gemini` dir: under `GEMINI_CLI_HOME` when set, else under the home (every OS).
pub fn default_gemini_dirs(home: &Path, env: &AgentEnv) -> Vec<(PathBuf, &'static str)> {
    match &env.gemini_cli_home {
        Some(d) => vec![(d.join(".gemini"), "GEMINI_CLI_HOME")],
        None => vec![(home.join(".gemini"), "default")],
    }
}

/// Where the desktop app saves exports: the person's Downloads folder, else their home, else
/// the temp dir.
pub fn downloads_dir() -> PathBuf {
    dirs::download_dir().or_else(dirs::home_dir).unwrap_or_else(std::env::temp_dir)
}

/// The Cursor CLI agent to run: the saved path, else `TETHER_CURSOR_AGENT`, else `cursor-agent`
/// then `agent` on `PATH`; with what chose it. `None` when none of them is an executable file.
pub fn cursor_agent(saved: Option<&Path>) -> Option<(PathBuf, &'static str)> {
    if let Some(p) = saved {
        return p.is_file().then(|| (p.to_owned(), "settings"));
    }
    if let Some(p) = std::env::var_os("TETHER_CURSOR_AGENT").filter(|v| !v.is_empty()).map(PathBuf::from) {
        return p.is_file().then_some((p, "TETHER_CURSOR_AGENT"));
    }
    let path = std::env::var_os("PATH")?;
    // Windows finds `agent` as `agent.exe`, `agent.cmd`, …: the extensions PATHEXT lists.
    let pathext = cfg!(windows).then(|| std::env::var("PATHEXT").unwrap_or_else(|_| ".COM;.EXE;.BAT;.CMD".into()));
    ["cursor-agent", "agent"].into_iter().flat_map(|name| path_names(name, pathext.as_deref())).find_map(|name| {
        std::env::split_paths(&path).map(|d| d.join(&name)).find(|p| is_executable(p)).map(|p| (p, "PATH"))
    })
}

/// The file names a command `name` may have on PATH: itself where there is no PATHEXT (Unix),
/// else itself with each extension PATHEXT lists (Windows, in its order).
pub fn path_names(name: &str, pathext: Option<&str>) -> Vec<String> {
    match pathext {
        None => vec![name.to_owned()],
        Some(exts) => exts
            .split(';')
            .map(str::trim)
            .filter(|e| e.starts_with('.'))
            .map(|e| format!("{name}{}", e.to_ascii_lowercase()))
            .collect(),
    }
}

fn is_executable(p: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        p.metadata().is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        p.is_file()
    }
}

/// The variables a Cursor CLI run inherits from Tether's environment, and nothing else (no
/// token of ours, no secrets the daemon happens to hold): PATH, HOME, USER, LANG, LC_*, TERM and
/// TMPDIR.
pub fn run_environment() -> Vec<(String, String)> {
    std::env::vars()
        .filter(|(k, _)| {
            matches!(k.as_str(), "PATH" | "HOME" | "USER" | "LANG" | "TERM" | "TMPDIR") || k.starts_with("LC_")
        })
        .collect()
}

/// Where the built GUI (`ui/dist`) is: `TETHER_UI_DIR`, else next to the executable
/// (`../share/tether/ui` as installed by the .deb, or `ui/`), else, for a binary that lives inside
/// the source tree it was built from (`target/…`, or wherever that tree's `target` link points, as
/// CI's shared build cache does), that tree's `ui/dist`. An installed binary never looks in the
/// folders of the machine that built it. `None` when none holds an `index.html`.
pub fn ui_dir() -> Option<PathBuf> {
    let has_index = |p: &Path| p.join("index.html").is_file();
    if let Some(d) = std::env::var_os("TETHER_UI_DIR").map(PathBuf::from) {
        return has_index(&d).then_some(d);
    }
    let exe_dir = std::env::current_exe().ok().and_then(|e| e.parent().map(Path::to_path_buf));
    let checkout = Path::new(env!("CARGO_MANIFEST_DIR")).ancestors().nth(2).map(Path::to_path_buf);
    // `current_exe` is the resolved path, so a `target` that is a link is compared resolved too.
    let built_in =
        |c: &Path, d: &Path| d.starts_with(c) || c.join("target").canonicalize().is_ok_and(|t| d.starts_with(t));
    let from_checkout =
        checkout.filter(|c| exe_dir.as_ref().is_some_and(|d| built_in(c, d))).map(|c| c.join("ui/dist"));
    let candidates = exe_dir.iter().flat_map(|d| [d.join("../share/tether/ui"), d.join("ui")]).chain(from_checkout);
    candidates.into_iter().find(|p| has_index(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn other_agents_folders_honour_their_variables() {
        let home = Path::new("/nonexistent-home");
        let paths = |v: Vec<(PathBuf, &'static str)>| v.into_iter().map(|d| d.0).collect::<Vec<_>>();
        let none = AgentEnv::default();
        assert_eq!(paths(default_claude_dirs(home, &none)), [home.join(".claude")], "the first, even if absent");
        assert_eq!(paths(default_codex_homes(home, &none)), [home.join(".codex")]);
        assert_eq!(paths(default_gemini_dirs(home, &none)), [home.join(".gemini")]);
        let set = AgentEnv {
            claude_config_dir: Some("/a/claude, /b/claude".into()),
            codex_home: Some("/c/codex".into()),
            xdg_config_home: None,
            gemini_cli_home: Some("/g/home".into()),
        };
        assert_eq!(paths(default_claude_dirs(home, &set)), [PathBuf::from("/a/claude"), PathBuf::from("/b/claude")]);
        assert_eq!(paths(default_codex_homes(home, &set)), [PathBuf::from("/c/codex")]);
        assert_eq!(
            paths(default_gemini_dirs(home, &set)),
            [PathBuf::from("/g/home/.gemini")],
            "a home, not the folder"
        );
    }

    #[test]
    fn an_agent_turned_off_has_no_folders_and_says_so() {
        let mut loc = CursorLocations::default();
        loc.add_agents(Path::new("/nonexistent-home"), &AgentEnv::default(), &["codex".into(), "gemini".into()]);
        assert_eq!(loc.claude_dirs, [PathBuf::from("/nonexistent-home/.claude")]);
        assert!(loc.codex_homes.is_empty() && loc.gemini_dirs.is_empty());
        assert_eq!(loc.agents_off, ["codex", "gemini"]);
        assert!(loc.notes.iter().any(|n| n.contains("Codex CLI: not read (turned off in the settings: agents.codex)")));
    }

    #[test]
    fn default_dirs_follow_each_platform_convention() {
        let home = Path::new("/h");
        let none = CursorEnv::default();
        let dirs = |os, env: &CursorEnv| -> Vec<PathBuf> {
            default_user_dirs(home, os, env).into_iter().map(|d| d.0).collect()
        };
        let homes = |os, env: &CursorEnv| -> Vec<PathBuf> {
            default_cursor_homes(home, os, env).into_iter().map(|d| d.0).collect()
        };
        let p = |s: &str| PathBuf::from(s);

        // macOS.
        assert_eq!(dirs(Os::MacOs, &none), [p("/h/Library/Application Support/Cursor/User")]);
        assert_eq!(homes(Os::MacOs, &none), [p("/h/.cursor")]);
        // Linux, and with XDG_CONFIG_HOME (the IDE's and the CLI's config move with it).
        assert_eq!(dirs(Os::Linux, &none), [p("/h/.config/Cursor/User")]);
        assert_eq!(homes(Os::Linux, &none), [p("/h/.cursor"), p("/h/.config/cursor")]);
        let xdg = CursorEnv { xdg_config_home: Some(p("/x")), ..Default::default() };
        assert_eq!(dirs(Os::Linux, &xdg), [p("/x/Cursor/User")]);
        assert_eq!(homes(Os::Linux, &xdg), [p("/h/.cursor"), p("/x/cursor")]);
        // CURSOR_CONFIG_DIR comes first, and once.
        let relocated = CursorEnv { cursor_config_dir: Some(p("/data/cursor")), ..Default::default() };
        assert_eq!(homes(Os::Linux, &relocated), [p("/data/cursor"), p("/h/.cursor"), p("/h/.config/cursor")]);
        let same = CursorEnv { cursor_config_dir: Some(p("/h/.cursor")), ..Default::default() };
        assert_eq!(homes(Os::Linux, &same), [p("/h/.cursor"), p("/h/.config/cursor")]);
        // Windows: %APPDATA% and %USERPROFILE%, or their defaults under the home.
        let win = CursorEnv {
            appdata: Some(p("/C/Users/u/AppData/Roaming")),
            userprofile: Some(p("/C/Users/u")),
            ..Default::default()
        };
        assert_eq!(dirs(Os::Windows, &win), [p("/C/Users/u/AppData/Roaming/Cursor/User")]);
        assert_eq!(homes(Os::Windows, &win), [p("/C/Users/u/.cursor")]);
        assert_eq!(dirs(Os::Windows, &none), [p("/h/AppData/Roaming/Cursor/User")]);
        assert_eq!(homes(Os::Windows, &none), [p("/h/.cursor")]);
        // WSL: both sides, the Windows one from inside WSL.
        let wsl = CursorEnv { wsl_windows_homes: vec![p("/mnt/c/Users/u")], ..Default::default() };
        assert_eq!(dirs(Os::Wsl, &wsl), [p("/h/.config/Cursor/User"), p("/mnt/c/Users/u/AppData/Roaming/Cursor/User")]);
        assert_eq!(homes(Os::Wsl, &wsl), [p("/h/.cursor"), p("/h/.config/cursor"), p("/mnt/c/Users/u/.cursor")]);
    }

    #[test]
    fn commands_on_path_are_looked_for_with_windows_extensions_there() {
        assert_eq!(path_names("agent", None), ["agent"]);
        assert_eq!(
            path_names("cursor-agent", Some(".COM;.EXE;.BAT;.CMD;.PS1")),
            ["cursor-agent.com", "cursor-agent.exe", "cursor-agent.bat", "cursor-agent.cmd", "cursor-agent.ps1"]
        );
        assert_eq!(path_names("agent", Some(" .EXE ;;junk;.Cmd")), ["agent.exe", "agent.cmd"]);
    }

    #[test]
    fn only_the_first_location_is_kept_when_the_others_do_not_exist() {
        let root = tempfile::tempdir().unwrap();
        let there = root.path().join("there");
        std::fs::create_dir_all(&there).unwrap();
        let all = vec![(root.path().join("primary"), "a"), (root.path().join("absent"), "b"), (there.clone(), "c")];
        let kept: Vec<PathBuf> = present_or_first(all).into_iter().map(|d| d.0).collect();
        assert_eq!(kept, [root.path().join("primary"), there]);
    }
}
