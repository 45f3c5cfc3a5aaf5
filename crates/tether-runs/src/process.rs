//! The agent's process: started in its own process group (so everything it spawns can be
//! stopped together), read line by line with a cap on line length, and stopped with SIGTERM to
//! the group, a grace period, then SIGKILL. Also tells whether a pid is still the process a run
//! recorded (pids are reused), for stopping orphans after a crash.
//!
//! What a "group" is differs by OS, and only `process/unix.rs` and `process/windows.rs` know:
//! on Unix a process group (`killpg`); on Windows a Job Object that the child is put in as it
//! starts, closed to stop it, so everything the run started dies with it (and with the runner, if
//! the runner itself dies: the job is set to kill its processes when its last handle closes).

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufRead, AsyncBufReadExt};
use tokio::process::{Child, Command};

/// A line longer than this is cut into pieces, so one runaway line cannot take the memory. The
/// CLI's `result` line repeats all the text of the turn, which can be megabytes; this is far above.
pub const MAX_LINE: usize = 64 << 20;

/// Starts `bin` with exactly `env`, in `dir`, as the leader of a new process group.
pub fn spawn(bin: &Path, args: &[String], env: &[(String, String)], dir: &Path) -> std::io::Result<Child> {
    let mut cmd = Command::new(bin);
    cmd.args(args)
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k, v)))
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    sys::own_group(&mut cmd);
    let child = cmd.spawn()?;
    sys::adopt(&child)?;
    Ok(child)
}

/// The shell that runs a repository's setup commands, and how `.cursor/worktrees.json` names
/// them for it (Cursor's own convention: `setup-worktree-unix` / `setup-worktree-windows`).
pub struct Shell {
    pub program: &'static str,
    /// Put before the command line.
    pub flags: &'static [&'static str],
    pub setup_key: &'static str,
    /// The command that runs a setup script at `.cursor/<path>`.
    pub script: fn(&str) -> String,
}

pub use sys::SHELL;

/// POSIX `sh`: `/bin/sh -c`.
pub const SH: Shell = Shell {
    program: "/bin/sh",
    flags: &["-c"],
    setup_key: "setup-worktree-unix",
    script: |s| format!("sh .cursor/'{}'", s.replace('\'', r"'\''")),
};

/// Windows PowerShell (every Windows 10/11 has it): `powershell -NoProfile -Command`.
pub const POWERSHELL: Shell = Shell {
    program: "powershell",
    flags: &["-NoProfile", "-NonInteractive", "-ExecutionPolicy", "Bypass", "-Command"],
    setup_key: "setup-worktree-windows",
    script: |s| format!("& '.cursor\\{}'", s.replace('\'', "''").replace('/', "\\")),
};

#[cfg_attr(unix, path = "process/unix.rs")]
#[cfg_attr(windows, path = "process/windows.rs")]
mod sys;

/// The next line without its newline (at most [`MAX_LINE`] bytes; a longer one comes in
/// pieces), or `None` at the end of the stream.
pub async fn next_line<R: AsyncBufRead + Unpin>(r: &mut R, buf: &mut Vec<u8>) -> std::io::Result<Option<()>> {
    next_line_within(r, buf, MAX_LINE).await
}

/// [`next_line`] with pieces of at most `max` bytes.
pub async fn next_line_within<R: AsyncBufRead + Unpin>(
    r: &mut R,
    buf: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<Option<()>> {
    buf.clear();
    loop {
        let available = r.fill_buf().await?;
        if available.is_empty() {
            return Ok((!buf.is_empty()).then_some(()));
        }
        let room = max - buf.len();
        match available.iter().take(room).position(|&b| b == b'\n') {
            Some(i) => {
                buf.extend_from_slice(&available[..i]);
                r.consume(i + 1);
                return Ok(Some(()));
            }
            None => {
                let n = available.len().min(room);
                buf.extend_from_slice(&available[..n]);
                r.consume(n);
                if buf.len() >= max {
                    return Ok(Some(()));
                }
            }
        }
    }
}

/// Stops the process group led by `child`: SIGTERM, up to `grace` to exit, then SIGKILL.
/// Returns whether SIGKILL was needed.
pub async fn stop_group(child: &mut Child, grace: Duration) -> bool {
    let Some(pid) = child.id() else { return false };
    signal_group(pid, Sig::Term);
    if tokio::time::timeout(grace, child.wait()).await.is_ok() {
        // The leader is gone; anything it left in the group goes too.
        signal_group(pid, Sig::Kill);
        return false;
    }
    signal_group(pid, Sig::Kill);
    let _ = tokio::time::timeout(Duration::from_secs(5), child.wait()).await;
    true
}

#[derive(Debug, Clone, Copy)]
pub enum Sig {
    Term,
    Kill,
}

/// Sends a signal to a whole process group (no error when it is already gone).
pub fn signal_group(pgid: u32, sig: Sig) {
    sys::signal_group(pgid, sig)
}

/// Whether a process with this pid exists.
pub fn alive(pid: u32) -> bool {
    sys::alive(pid)
}

/// When the process started, so a recorded pid can be told from a new process that reused it.
/// `None` where the OS does not say (only Linux's `/proc` is read).
pub fn start_time(pid: u32) -> Option<i64> {
    sys::start_time(pid)
}

/// Whether `pid` is still the process that started at `started` (both known, and equal).
pub fn same_process(pid: u32, started: Option<i64>) -> bool {
    alive(pid) && started.is_some() && start_time(pid) == started
}

/// Whether a live pid belongs to a Tether process (a runner that may still own runs).
pub fn is_tether(pid: u32) -> bool {
    alive(pid) && sys::command_line(pid).is_none_or(|cmd| cmd.contains("tether"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn long_lines_come_in_pieces_and_the_last_line_needs_no_newline() {
        let mut data = vec![b'a'; MAX_LINE + 10];
        data[0] = b'b';
        data.extend_from_slice(b"\nshort\ntail");
        let mut r = tokio::io::BufReader::new(&data[..]);
        let mut buf = Vec::new();
        let mut lines = Vec::new();
        while next_line(&mut r, &mut buf).await.unwrap().is_some() {
            lines.push(buf.len());
        }
        assert_eq!(lines, vec![MAX_LINE, 10, 5, 4]);
    }

    #[test]
    fn this_process_is_itself() {
        let me = std::process::id();
        assert!(alive(me));
        if std::path::Path::new("/proc/self/stat").exists() {
            assert!(same_process(me, start_time(me)));
            assert!(!same_process(me, Some(1)));
        }
    }
}
