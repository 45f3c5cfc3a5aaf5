//! Process groups on Unix (Linux, macOS): the child leads a new group, and signals go to the
//! whole group with `killpg`.

use tokio::process::{Child, Command};

use super::{SH, Shell, Sig};

pub const SHELL: Shell = SH;

pub fn own_group(cmd: &mut Command) {
    cmd.process_group(0);
}

pub fn adopt(_: &Child) -> std::io::Result<()> {
    Ok(())
}

pub fn signal_group(pgid: u32, sig: Sig) {
    use nix::sys::signal::{Signal, killpg};
    use nix::unistd::Pid;
    let s = match sig {
        Sig::Term => Signal::SIGTERM,
        Sig::Kill => Signal::SIGKILL,
    };
    let _ = killpg(Pid::from_raw(pgid as i32), s);
}

pub fn alive(pid: u32) -> bool {
    use nix::sys::signal::kill;
    use nix::unistd::Pid;
    // Signal 0 checks existence (EPERM also means it exists, owned by someone else).
    !matches!(kill(Pid::from_raw(pid as i32), None), Err(nix::errno::Errno::ESRCH))
}

/// Clock ticks after boot, from `/proc/<pid>/stat`; `None` where there is no `/proc` (macOS).
pub fn start_time(pid: u32) -> Option<i64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces and parentheses; fields count from the last ')'.
    let rest = &stat[stat.rfind(')')? + 2..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// From `/proc/<pid>/cmdline`; `None` where there is no `/proc` (macOS: a live pid is trusted
/// to still be ours).
pub fn command_line(pid: u32) -> Option<String> {
    std::fs::read(format!("/proc/{pid}/cmdline")).ok().map(|c| String::from_utf8_lossy(&c).into_owned())
}
