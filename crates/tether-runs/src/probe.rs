//! Which Cursor CLI this machine would run, and whether it answers.

use std::path::PathBuf;
use std::time::Duration;

use tether_core::Tether;

/// The Cursor CLI this machine would run, and whether it answers.
#[derive(Debug, Clone, serde::Serialize, ts_rs::TS)]
#[ts(export, export_to = "runner.ts")]
pub struct CliInfo {
    pub found: bool,
    pub path: Option<PathBuf>,
    /// `settings`, `TETHER_CURSOR_AGENT` or `PATH`.
    pub from: Option<&'static str>,
    pub version: Option<String>,
    /// What to do when it is missing or broken.
    pub hint: Option<String>,
}

pub const INSTALL_HINT: &str = "install the Cursor CLI (`curl https://cursor.com/install -fsS | bash`), or point Tether at \
     it: settings runs.cursor_agent, or TETHER_CURSOR_AGENT";

/// Finds the Cursor CLI and asks its version (5 s at most).
pub async fn probe(t: &Tether) -> CliInfo {
    let saved = t.settings().ok().and_then(|s| s.runs.cursor_agent);
    let Some((path, from)) = tether_core::paths::cursor_agent(saved.as_deref()) else {
        return CliInfo { found: false, path: None, from: None, version: None, hint: Some(INSTALL_HINT.into()) };
    };
    let out = tokio::time::timeout(
        Duration::from_secs(5),
        tokio::process::Command::new(&path)
            .arg("--version")
            .env_clear()
            .envs(tether_core::paths::run_environment())
            .stdin(std::process::Stdio::null())
            .kill_on_drop(true)
            .output(),
    )
    .await;
    let (version, hint) = match out {
        Ok(Ok(o)) if o.status.success() => (Some(String::from_utf8_lossy(&o.stdout).trim().to_owned()), None),
        Ok(Ok(o)) => (
            None,
            Some(format!("`{} --version` failed: {}", path.display(), String::from_utf8_lossy(&o.stderr).trim())),
        ),
        Ok(Err(e)) => (None, Some(format!("cannot run {}: {e}", path.display()))),
        Err(_) => (None, Some(format!("`{} --version` did not answer within 5 s", path.display()))),
    };
    CliInfo { found: true, path: Some(path), from: Some(from), version, hint }
}
