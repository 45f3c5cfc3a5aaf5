//! One daemon per data dir: an exclusive lock file plus `daemon.json` describing the holder.
//!
//! The OS releases the lock when the process dies, even on kill -9, so a stale `daemon.json`
//! never blocks a new start.

use std::fs::File;
use std::io::Write;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::paths::Paths;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct DaemonInfo {
    pub pid: u32,
    pub version: String,
    pub started_at: String,
    /// Filled in by hosts that serve something (the MCP endpoint).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<u16>,
}

/// Held for the daemon's lifetime; dropping it releases the data dir.
#[derive(Debug)]
pub struct DaemonLock {
    file: File,
    paths: Paths,
}

impl DaemonLock {
    pub fn acquire(paths: &Paths) -> Result<Self> {
        paths.ensure()?;
        let mut o = std::fs::OpenOptions::new();
        tether_store::private::create_private(o.create(true).truncate(false).write(true).read(true));
        let file = o.open(paths.lock_file()).map_err(|e| Error::io("opening the daemon lock file", e))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                let pid = read_info(paths).map(|i| i.pid).unwrap_or(0);
                return Err(Error::AlreadyRunning { pid, dir: paths.data_dir.clone() });
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(Error::io("locking the data dir", e)),
        }
        Ok(Self { file, paths: paths.clone() })
    }

    pub fn write_info(&self, info: &DaemonInfo) -> Result<()> {
        let tmp = self.paths.daemon_json().with_extension("json.tmp");
        let mut o = std::fs::OpenOptions::new();
        tether_store::private::create_private(o.create(true).truncate(true).write(true));
        let mut f = o.open(&tmp).map_err(|e| Error::io("writing daemon.json", e))?;
        f.write_all(serde_json::to_string_pretty(info)?.as_bytes()).map_err(|e| Error::io("writing daemon.json", e))?;
        f.sync_all().map_err(|e| Error::io("writing daemon.json", e))?;
        std::fs::rename(&tmp, self.paths.daemon_json()).map_err(|e| Error::io("writing daemon.json", e))?;
        Ok(())
    }
}

impl Drop for DaemonLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(self.paths.daemon_json());
        let _ = self.file.unlock();
    }
}

/// The running daemon's info, if one holds the lock right now — and only if it is ours: the lock
/// and `daemon.json` belong to this user and the process named there is alive, so a client
/// never sends its token to a server someone else started on the recorded port.
pub fn running(paths: &Paths) -> Option<DaemonInfo> {
    let file = File::open(paths.lock_file()).ok()?;
    if file.try_lock_shared().is_ok() {
        return None;
    }
    let info = read_info(paths)?;
    (owned_by_us(&paths.lock_file()) && owned_by_us(&paths.daemon_json()) && pid_alive(info.pid)).then_some(info)
}

fn owned_by_us(p: &std::path::Path) -> bool {
    tether_store::private::owned_by_me(p)
}

fn pid_alive(pid: u32) -> bool {
    let proc_dir = std::path::Path::new("/proc");
    if proc_dir.exists() { proc_dir.join(pid.to_string()).exists() } else { pid != 0 }
}

fn read_info(paths: &Paths) -> Option<DaemonInfo> {
    serde_json::from_str(&std::fs::read_to_string(paths.daemon_json()).ok()?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_lock_on_the_same_dir_is_refused_until_the_first_drops() {
        let dir = tempfile::tempdir().unwrap();
        let paths = Paths::at(dir.path());
        let a = DaemonLock::acquire(&paths).unwrap();
        let me = std::process::id();
        a.write_info(&DaemonInfo { pid: me, version: "t".into(), started_at: "now".into(), url: None, port: None })
            .unwrap();
        match DaemonLock::acquire(&paths) {
            Err(Error::AlreadyRunning { pid, .. }) => assert_eq!(pid, me),
            other => panic!("expected AlreadyRunning, got {other:?}"),
        }
        assert_eq!(running(&paths).map(|i| i.pid), Some(me));
        drop(a);
        assert!(running(&paths).is_none());
        DaemonLock::acquire(&paths).expect("lock is free after the holder drops it");
    }
}

/// What the daemon in this process is doing now, for status, settings and the tray: kept by
/// its components, read by operations. A process that runs no daemon keeps the defaults.
#[derive(Debug)]
pub struct State {
    started: std::time::Instant,
    indexing: std::sync::atomic::AtomicBool,
    paused: std::sync::atomic::AtomicBool,
    /// The port served on and what chose it (`--port/TETHER_PORT`, `settings`, `default`).
    listening: std::sync::Mutex<Option<crate::settings::RunningPort>>,
    /// The port this daemon last moved away from, and when (ms): clients set up with it are lost.
    moved_from: std::sync::Mutex<Option<(u16, i64)>>,
    /// Team mode: whether this daemon takes other machines' runs (`serve --runner`), and its labels.
    runner: std::sync::RwLock<RunnerRole>,
}

/// What a daemon offers a team's run queue.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunnerRole {
    /// Takes runs other machines queued for any runner (else only its own and those naming it).
    pub takes_others: bool,
    pub labels: Vec<String>,
}

impl Default for State {
    fn default() -> Self {
        Self {
            started: std::time::Instant::now(),
            indexing: Default::default(),
            paused: Default::default(),
            listening: Default::default(),
            moved_from: Default::default(),
            runner: Default::default(),
        }
    }
}

impl State {
    pub fn uptime(&self) -> std::time::Duration {
        self.started.elapsed()
    }

    pub fn indexing(&self) -> bool {
        self.indexing.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Marks an index pass as running; false when one already was.
    pub fn start_indexing(&self) -> bool {
        !self.indexing.swap(true, std::sync::atomic::Ordering::SeqCst)
    }

    pub fn stop_indexing(&self) {
        self.indexing.store(false, std::sync::atomic::Ordering::SeqCst);
    }

    pub fn runner_role(&self) -> RunnerRole {
        self.runner.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    pub fn set_runner_role(&self, role: RunnerRole) {
        *self.runner.write().unwrap_or_else(|p| p.into_inner()) = role;
    }

    pub fn paused(&self) -> bool {
        self.paused.load(std::sync::atomic::Ordering::Relaxed)
    }

    pub fn set_paused(&self, on: bool) {
        self.paused.store(on, std::sync::atomic::Ordering::Relaxed);
    }

    pub fn listening(&self) -> Option<crate::settings::RunningPort> {
        *self.listening.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn set_listening(&self, port: crate::settings::RunningPort) {
        let old = self.listening.lock().unwrap_or_else(|p| p.into_inner()).replace(port);
        if let Some(old) = old.filter(|o| o.port != port.port) {
            *self.moved_from.lock().unwrap_or_else(|p| p.into_inner()) = Some((old.port, crate::clock::now_ms()));
        }
    }

    /// The port this daemon moved away from, and when (ms since the epoch).
    pub fn moved_from(&self) -> Option<(u16, i64)> {
        *self.moved_from.lock().unwrap_or_else(|p| p.into_inner())
    }
}
