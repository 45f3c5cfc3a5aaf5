//! Every directory Tether reads or writes is resolved here, and only here.
//!
//! Our own data lives under `TETHER_HOME` when set, else the platform data dir. Cursor's data is
//! discovered from the home directory per OS (macOS, Windows, Linux, WSL), with overrides
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
        let io = |e| Error::io(format!("creating {}", self.data_dir.display()), e);
        #[cfg(unix)]
        {
            use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
            if !self.data_dir.exists() {
                if let Some(parent) = self.data_dir.parent() {
                    std::fs::create_dir_all(parent).map_err(io)?;
                }
                match std::fs::DirBuilder::new().mode(0o700).create(&self.data_dir) {
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                    Err(e) => return Err(io(e)),
                }
            }
            let meta = std::fs::metadata(&self.data_dir).map_err(io)?;
            if meta.permissions().mode() & 0o077 != 0 {
                std::fs::set_permissions(&self.data_dir, std::fs::Permissions::from_mode(0o700)).map_err(io)?;
            }
            Ok(())
        }
        #[cfg(not(unix))]
        std::fs::create_dir_all(&self.data_dir).map_err(io)
    }
}

/// Cursor folders the person saved (in `settings.json`), which win over detection but not over
/// flags and variables.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SavedCursorDirs {
    pub user_dir: Option<PathBuf>,
    pub home: Option<PathBuf>,
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
        let mut loc = Self { user_dir_from: "detected", home_from: "detected", ..Self::default() };
        match user_override {
            Some((u, from)) => {
                loc.user_dir_from = from;
                loc.notes.push(format!("Cursor User dir from {from}: {}", u.display()));
                loc.user_dirs.push(u);
            }
            None => {
                if let Some(home) = &home {
                    for (u, why) in default_user_dirs(home, Os::current(), wsl_windows_homes()) {
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
                    loc.notes.push(format!("Cursor home: {}", home.join(".cursor").display()));
                    loc.cursor_homes.push(home.join(".cursor"));
                }
            }
        }
        loc
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

/// Windows user homes visible from WSL (`/mnt/c/Users/*` that have a Cursor install).
fn wsl_windows_homes() -> Vec<PathBuf> {
    if !is_wsl() {
        return Vec::new();
    }
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir("/mnt/c/Users") {
        for e in entries.flatten() {
            let p = e.path();
            if p.join("AppData/Roaming/Cursor/User").is_dir() {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The default Cursor `User` directories for an OS, given the home directory.
pub fn default_user_dirs(home: &Path, os: Os, wsl_homes: Vec<PathBuf>) -> Vec<(PathBuf, &'static str)> {
    match os {
        Os::MacOs => vec![(home.join("Library/Application Support/Cursor/User"), "macOS default")],
        Os::Windows => {
            let appdata =
                std::env::var_os("APPDATA").map(PathBuf::from).unwrap_or_else(|| home.join("AppData").join("Roaming"));
            vec![(appdata.join("Cursor").join("User"), "Windows default (%APPDATA%)")]
        }
        Os::Linux => vec![(home.join(".config/Cursor/User"), "Linux default")],
        Os::Wsl => {
            let mut v = vec![(home.join(".config/Cursor/User"), "WSL Linux-side install")];
            for h in wsl_homes {
                v.push((h.join("AppData/Roaming/Cursor/User"), "WSL: Cursor on Windows"));
            }
            v
        }
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
    ["cursor-agent", "agent"].into_iter().find_map(|name| {
        std::env::split_paths(&path).map(|d| d.join(name)).find(|p| is_executable(p)).map(|p| (p, "PATH"))
    })
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
/// the source tree it was built from (`target/…`), that tree's `ui/dist`. An installed binary
/// never looks in the folders of the machine that built it. `None` when none holds an `index.html`.
pub fn ui_dir() -> Option<PathBuf> {
    let has_index = |p: &Path| p.join("index.html").is_file();
    if let Some(d) = std::env::var_os("TETHER_UI_DIR").map(PathBuf::from) {
        return has_index(&d).then_some(d);
    }
    let exe_dir = std::env::current_exe().ok().and_then(|e| e.parent().map(Path::to_path_buf));
    let checkout = Path::new(env!("CARGO_MANIFEST_DIR")).ancestors().nth(2).map(Path::to_path_buf);
    let from_checkout =
        checkout.filter(|c| exe_dir.as_ref().is_some_and(|d| d.starts_with(c))).map(|c| c.join("ui/dist"));
    let candidates = exe_dir.iter().flat_map(|d| [d.join("../share/tether/ui"), d.join("ui")]).chain(from_checkout);
    candidates.into_iter().find(|p| has_index(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_dirs_follow_each_platform_convention() {
        let home = Path::new("/h");
        let mac = default_user_dirs(home, Os::MacOs, vec![]);
        assert_eq!(mac[0].0, Path::new("/h/Library/Application Support/Cursor/User"));
        let linux = default_user_dirs(home, Os::Linux, vec![]);
        assert_eq!(linux[0].0, Path::new("/h/.config/Cursor/User"));
        let wsl = default_user_dirs(home, Os::Wsl, vec![PathBuf::from("/mnt/c/Users/u")]);
        assert_eq!(wsl.len(), 2, "WSL checks both the Linux and the Windows install");
        assert_eq!(wsl[1].0, Path::new("/mnt/c/Users/u/AppData/Roaming/Cursor/User"));
    }
}
