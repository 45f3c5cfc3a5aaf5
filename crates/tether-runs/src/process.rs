//! The agent's process: started in its own process group (so everything it spawns can be
//! stopped together), read line by line with a cap on line length, and stopped with SIGTERM to
//! the group, a grace period, then SIGKILL. Also tells whether a pid is still the process a run
//! recorded (pids are reused), for stopping orphans after a crash.

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
    #[cfg(unix)]
    cmd.process_group(0);
    cmd.spawn()
}

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
    #[cfg(unix)]
    {
        use nix::sys::signal::{Signal, killpg};
        use nix::unistd::Pid;
        let s = match sig {
            Sig::Term => Signal::SIGTERM,
            Sig::Kill => Signal::SIGKILL,
        };
        let _ = killpg(Pid::from_raw(pgid as i32), s);
    }
    #[cfg(not(unix))]
    let _ = (pgid, sig);
}

/// Whether a process with this pid exists.
pub fn alive(pid: u32) -> bool {
    #[cfg(unix)]
    {
        use nix::sys::signal::kill;
        use nix::unistd::Pid;
        // Signal 0 checks existence (EPERM also means it exists, owned by someone else).
        !matches!(kill(Pid::from_raw(pid as i32), None), Err(nix::errno::Errno::ESRCH))
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        false
    }
}

/// When the process started (clock ticks after boot, from `/proc/<pid>/stat`), so a recorded
/// pid can be told from a new process that reused it. `None` where there is no `/proc`.
pub fn start_time(pid: u32) -> Option<i64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces and parentheses; fields count from the last ')'.
    let rest = &stat[stat.rfind(')')? + 2..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// Whether `pid` is still the process that started at `started` (both known, and equal).
pub fn same_process(pid: u32, started: Option<i64>) -> bool {
    alive(pid) && started.is_some() && start_time(pid) == started
}

/// Whether a live pid belongs to a Tether process (a runner that may still own runs).
pub fn is_tether(pid: u32) -> bool {
    if !alive(pid) {
        return false;
    }
    match std::fs::read(format!("/proc/{pid}/cmdline")) {
        Ok(cmd) => String::from_utf8_lossy(&cmd).contains("tether"),
        // No /proc (macOS): trust that a live pid is still ours.
        Err(_) => true,
    }
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
