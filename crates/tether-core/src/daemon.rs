//! One daemon per data dir: an exclusive lock file plus `daemon.json` describing the holder.
//!
//! The OS releases the lock when the process dies, even on kill -9, so a stale `daemon.json`
//! never blocks a new start.

use std::fs::File;
use std::io::Write;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::paths::Paths;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
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
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .read(true)
            .open(paths.lock_file())
            .map_err(|e| Error::io("opening the daemon lock file", e))?;
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
        let mut f = File::create(&tmp).map_err(|e| Error::io("writing daemon.json", e))?;
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

/// The running daemon's info, if one holds the lock right now.
pub fn running(paths: &Paths) -> Option<DaemonInfo> {
    let file = File::open(paths.lock_file()).ok()?;
    match file.try_lock_shared() {
        Ok(()) => None,
        Err(_) => read_info(paths),
    }
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
        a.write_info(&DaemonInfo { pid: 42, version: "t".into(), started_at: "now".into(), url: None, port: None })
            .unwrap();
        match DaemonLock::acquire(&paths) {
            Err(Error::AlreadyRunning { pid, .. }) => assert_eq!(pid, 42),
            other => panic!("expected AlreadyRunning, got {other:?}"),
        }
        assert_eq!(running(&paths).map(|i| i.pid), Some(42));
        drop(a);
        assert!(running(&paths).is_none());
        DaemonLock::acquire(&paths).expect("lock is free after the holder drops it");
    }
}
