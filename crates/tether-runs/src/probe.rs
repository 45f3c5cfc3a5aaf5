//! Which Cursor CLI this machine would run, and whether it answers: the local executor's probe.

use std::io::Read;
use std::process::Stdio;
use std::time::Duration;

use tether_core::Tether;
use tether_core::executor::ExecutorInfo;
use wait_timeout::ChildExt;

pub const INSTALL_HINT: &str = "install the Cursor CLI (`curl https://cursor.com/install -fsS | bash`), or point Tether at \
     it: settings runs.cursor_agent, or TETHER_CURSOR_AGENT";

/// Finds the Cursor CLI and asks its version (5 s at most). Blocking.
pub fn probe(t: &Tether) -> ExecutorInfo {
    let saved = t.settings().ok().and_then(|s| s.runs.cursor_agent);
    let Some((path, from)) = tether_core::paths::cursor_agent(saved.as_deref()) else {
        return ExecutorInfo { found: false, path: None, from: None, version: None, hint: Some(INSTALL_HINT.into()) };
    };
    let child = std::process::Command::new(&path)
        .arg("--version")
        .env_clear()
        .envs(tether_core::paths::run_environment())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let read = |r: Option<&mut dyn Read>| {
        let mut s = String::new();
        if let Some(r) = r {
            let _ = r.read_to_string(&mut s);
        }
        s.trim().to_owned()
    };
    let (version, hint) = match child {
        Err(e) => (None, Some(format!("cannot run {}: {e}", path.display()))),
        Ok(mut c) => match c.wait_timeout(Duration::from_secs(5)) {
            Ok(Some(st)) if st.success() => (Some(read(c.stdout.as_mut().map(|r| r as &mut dyn Read))), None),
            Ok(Some(_)) => {
                let err = read(c.stderr.as_mut().map(|r| r as &mut dyn Read));
                (None, Some(format!("`{} --version` failed: {err}", path.display())))
            }
            Ok(None) => {
                let _ = c.kill();
                let _ = c.wait();
                (None, Some(format!("`{} --version` did not answer within 5 s", path.display())))
            }
            Err(e) => {
                let _ = c.kill();
                (None, Some(format!("cannot run {}: {e}", path.display())))
            }
        },
    };
    ExecutorInfo { found: true, path: Some(path), from: Some(from), version, hint }
}
