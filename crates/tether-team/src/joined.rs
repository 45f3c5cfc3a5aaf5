//! What this data dir joined, as `team.json` keeps it (the URL without its password, this
//! machine's name, this data dir's instance id), and the instance id itself.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use tether_store::error::{Error, Result};

/// What was joined.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Joined {
    pub url: String,
    pub machine: String,
    /// Random per data dir: tells this instance from another on the same host.
    pub instance: String,
}

fn file(data_dir: &Path) -> PathBuf {
    data_dir.join("team.json")
}

impl Joined {
    /// What `data_dir` joined, if anything.
    pub fn read(data_dir: &Path) -> Result<Option<Joined>> {
        let path = file(data_dir);
        match std::fs::read(&path) {
            Ok(b) => {
                serde_json::from_slice(&b).map(Some).map_err(|e| Error::ConfigInvalid { path, reason: e.to_string() })
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(Error::io("reading team.json", e)),
        }
    }

    /// Keeps this as what `data_dir` joined.
    pub fn save(&self, data_dir: &Path) -> Result<()> {
        write_private(&file(data_dir), &serde_json::to_string_pretty(self)?)
    }

    /// `data_dir` joined nothing (any more).
    pub fn forget(data_dir: &Path) -> Result<()> {
        match std::fs::remove_file(file(data_dir)) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(Error::io("removing team.json", e)),
        }
    }
}

/// This data dir's instance id, made once and kept (joining again after leaving is the same
/// instance, so it gets its machine name back).
pub fn instance_id(data_dir: &Path) -> Result<String> {
    let path = data_dir.join("instance-id");
    match std::fs::read_to_string(&path) {
        Ok(id) if !id.trim().is_empty() => Ok(id.trim().to_owned()),
        Ok(_) => Err(Error::ConfigInvalid { path, reason: "empty".into() }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let id = tether_store::random_token()[..16].to_owned();
            write_private(&path, &id)?;
            Ok(id)
        }
        Err(e) => Err(Error::io("reading instance-id", e)),
    }
}

/// This host's name, the default machine name.
pub fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "this-machine".into())
}

/// Writes `content` whole or not at all, private to this user (through a synced temporary file).
fn write_private(path: &Path, content: &str) -> Result<()> {
    use std::io::Write;
    let tmp = path.with_extension("tmp");
    let io = |p: &Path| {
        let p = p.display().to_string();
        move |e| Error::io(format!("writing {p}"), e)
    };
    let mut o = std::fs::OpenOptions::new();
    tether_store::private::create_private(o.write(true).create(true).truncate(true));
    let mut f = o.open(&tmp).map_err(io(&tmp))?;
    f.write_all(content.as_bytes()).map_err(io(&tmp))?;
    f.sync_all().map_err(io(&tmp))?;
    std::fs::rename(&tmp, path).map_err(io(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_was_joined_and_the_instance_id_are_kept_private_and_the_id_survives_leaving() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(Joined::read(dir.path()).unwrap(), None);
        let id = instance_id(dir.path()).unwrap();
        let j = Joined { url: "postgres://u@h/db".into(), machine: "laptop".into(), instance: id.clone() };
        j.save(dir.path()).unwrap();
        assert_eq!(Joined::read(dir.path()).unwrap(), Some(j));
        if cfg!(unix) {
            let meta = std::fs::metadata(dir.path().join("team.json")).unwrap();
            assert_eq!(tether_store::private::mode(&meta), Some(0o600));
        }
        Joined::forget(dir.path()).unwrap();
        Joined::forget(dir.path()).unwrap();
        assert_eq!(Joined::read(dir.path()).unwrap(), None);
        assert_eq!(instance_id(dir.path()).unwrap(), id, "the same instance after leaving");
    }
}
