//! "Process groups" on Windows: each run's child is put in its own Job Object as it starts, set to
//! kill every process in it when the job's last handle closes. Stopping the group closes the job,
//! so whatever the run started dies with it, and if the runner itself dies its jobs close with it
//! (so a crashed runner leaves no orphans: there is no `start_time` to match orphans by, and no
//! need). A process the child starts in the moment between its start and its assignment to the
//! job escapes it; the CLI agent starts nothing that early.
//!
//! Windows has no SIGTERM for a console program that another process can send: `Term` asks with
//! `taskkill /T` (which only windows heed), and the grace period that follows ends in `Kill`.
//! A pid that is not one of this process's jobs (a runner's orphan after a crash) is stopped with
//! `taskkill /T /F`, which reaches its descendants that are still alive.

use std::collections::HashMap;
use std::process::Stdio;
use std::sync::{Mutex, PoisonError};

use tokio::process::{Child, Command};
use win32job::{ExtendedLimitInfo, Job};

use super::{POWERSHELL, Shell, Sig};

pub const SHELL: Shell = POWERSHELL;

/// `CREATE_NEW_PROCESS_GROUP` (winbase.h): the child does not get the console's Ctrl-C meant for us.
const CREATE_NEW_PROCESS_GROUP: u32 = 0x0000_0200;

/// The jobs of the runs this process started, by the child's pid.
static JOBS: Mutex<Option<HashMap<u32, Job>>> = Mutex::new(None);

pub fn own_group(cmd: &mut Command) {
    cmd.creation_flags(CREATE_NEW_PROCESS_GROUP);
}

pub fn adopt(child: &Child) -> std::io::Result<()> {
    let (Some(pid), Some(handle)) = (child.id(), child.raw_handle()) else { return Ok(()) };
    let job = Job::create_with_limit_info(ExtendedLimitInfo::new().limit_kill_on_job_close())
        .map_err(std::io::Error::other)?;
    job.assign_process(handle as isize).map_err(std::io::Error::other)?;
    let mut jobs = JOBS.lock().unwrap_or_else(PoisonError::into_inner);
    let jobs = jobs.get_or_insert_with(HashMap::new);
    // Jobs whose processes have all ended (a run that ended without a stop) are let go.
    jobs.retain(|_, j| j.query_process_id_list().is_ok_and(|l| !l.is_empty()));
    jobs.insert(pid, job);
    Ok(())
}

pub fn signal_group(pgid: u32, sig: Sig) {
    match sig {
        Sig::Term => taskkill(pgid, false),
        Sig::Kill => {
            let job = JOBS.lock().unwrap_or_else(PoisonError::into_inner).as_mut().and_then(|j| j.remove(&pgid));
            match job {
                // Closing the last handle kills every process in the job.
                Some(job) => drop(job),
                None => taskkill(pgid, true),
            }
        }
    }
}

fn taskkill(pid: u32, force: bool) {
    let mut cmd = std::process::Command::new("taskkill");
    cmd.args(["/T", "/PID", &pid.to_string()]);
    if force {
        cmd.arg("/F");
    }
    let _ = cmd.stdout(Stdio::null()).stderr(Stdio::null()).status();
}

/// The `tasklist` row of `pid` (image name first), if it is running.
fn task(pid: u32) -> Option<String> {
    let out = std::process::Command::new("tasklist")
        .args(["/NH", "/FO", "CSV", "/FI", &format!("PID eq {pid}")])
        .stderr(Stdio::null())
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.contains(&format!("\"{pid}\"")).then_some(text)
}

pub fn alive(pid: u32) -> bool {
    task(pid).is_some()
}

pub fn start_time(_: u32) -> Option<i64> {
    None
}

/// The image name (`tether.exe`): Windows tells no command line without reading another
/// process's memory.
pub fn command_line(pid: u32) -> Option<String> {
    task(pid)
}
