//! Files in a run's workspace, reached without ever following a symbolic link.
//!
//! A workspace is often a repository cloned from anywhere, and its `.cursor/` is the
//! repository's to shape: `.cursor`, `.cursor/rules` or `cli.json` may be links to anywhere on
//! the machine, and a leftover temporary name may be planted as one. Path strings cannot be
//! trusted there, so everything here goes through directory handles: the workspace is opened
//! from `/` one component at a time with `O_NOFOLLOW` (its canonical path has no link in it, so
//! any link found means it changed since it was checked), sub-folders are opened relative to
//! their parent without following, files are created exclusively under a fresh name and renamed
//! within the one directory handle, and a link met where a file goes is read as a link (its
//! target, never its bytes) and can be put back as the same link.
//!
//! Unix only (the runner is); knows nothing of runs or the store.

use std::ffi::OsStr;
use std::io::{Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;

/// Files larger than this are not read back into memory (Tether only places small config files).
pub const MAX_FILE: u64 = 16 << 20;

/// Why a folder or file cannot be used safely.
#[derive(Debug, thiserror::Error)]
pub enum Unsafe {
    #[error("{path} is a symbolic link{}; Tether does not place or restore a run's files through links", target.as_ref().map(|t| format!(" (to {})", t.display())).unwrap_or_default())]
    Link { path: PathBuf, target: Option<PathBuf> },
    #[error("{path} is not a regular file or folder; Tether leaves it alone")]
    Special { path: PathBuf },
    #[error("{path} is larger than {} MiB; Tether leaves it alone", MAX_FILE >> 20)]
    TooBig { path: PathBuf },
    #[error("{path} is not an absolute canonical path")]
    NotCanonical { path: PathBuf },
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
}

impl Unsafe {
    fn io(context: impl Into<String>, e: impl Into<std::io::Error>) -> Self {
        Unsafe::Io { context: context.into(), source: e.into() }
    }
}

pub type Result<T> = std::result::Result<T, Unsafe>;

/// What a directory entry holds, read without following it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    Missing,
    File {
        bytes: Vec<u8>,
        mode: u32,
    },
    /// A symbolic link, by its target (never read through).
    Link(PathBuf),
}

/// An open directory, held by its handle: what is done in it happens in the folder that was
/// opened, whatever its name points at later.
#[derive(Debug)]
pub struct Dir {
    fd: OwnedFd,
    path: PathBuf,
}

const DIR_FLAGS: OFlags = OFlags::RDONLY.union(OFlags::DIRECTORY).union(OFlags::NOFOLLOW).union(OFlags::CLOEXEC);

impl Dir {
    /// Opens an absolute, canonical folder from `/`, one component at a time, refusing any
    /// symbolic link on the way.
    pub fn open_canonical(path: &Path) -> Result<Dir> {
        if !path.is_absolute() {
            return Err(Unsafe::NotCanonical { path: path.to_owned() });
        }
        let root = rustix::fs::open("/", DIR_FLAGS, Mode::empty()).map_err(|e| Unsafe::io("opening /", e))?;
        let mut dir = Dir { fd: root, path: PathBuf::from("/") };
        for c in path.components() {
            match c {
                Component::RootDir => {}
                Component::Normal(name) => {
                    dir = dir.sub(name)?.ok_or_else(|| {
                        Unsafe::io(
                            format!("opening {}", path.display()),
                            std::io::Error::from(std::io::ErrorKind::NotFound),
                        )
                    })?;
                }
                _ => return Err(Unsafe::NotCanonical { path: path.to_owned() }),
            }
        }
        Ok(dir)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A path naming this very folder for a child process started now (Linux: through the
    /// handle, so a name swapped after the check cannot redirect it), else its path.
    pub fn path_for_child(&self) -> PathBuf {
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::AsRawFd;
            PathBuf::from(format!("/proc/self/fd/{}", self.fd.as_raw_fd()))
        }
        #[cfg(not(target_os = "linux"))]
        {
            self.path.clone()
        }
    }

    /// The sub-folder `name`, or `None` when there is none. A link there is refused.
    pub fn sub(&self, name: &OsStr) -> Result<Option<Dir>> {
        let path = self.path.join(name);
        match self.kind(name)? {
            None => Ok(None),
            Some(FileType::Directory) => {
                let fd = rustix::fs::openat(&self.fd, name, DIR_FLAGS, Mode::empty()).map_err(|e| match e {
                    Errno::LOOP | Errno::NOTDIR => Unsafe::Link { path: path.clone(), target: None },
                    e => Unsafe::io(format!("opening {}", path.display()), e),
                })?;
                Ok(Some(Dir { fd, path }))
            }
            Some(FileType::Symlink) => Err(Unsafe::Link { target: self.link_target(name).ok(), path }),
            Some(_) => Err(Unsafe::Special { path }),
        }
    }

    /// Creates the sub-folder `name` (0755 before the umask); fails if anything is there.
    pub fn create_sub(&self, name: &OsStr) -> Result<Dir> {
        let path = self.path.join(name);
        rustix::fs::mkdirat(&self.fd, name, Mode::from_raw_mode(0o755))
            .map_err(|e| Unsafe::io(format!("creating {}", path.display()), e))?;
        self.sub(name)?.ok_or_else(|| {
            Unsafe::io(format!("opening {}", path.display()), std::io::Error::from(std::io::ErrorKind::NotFound))
        })
    }

    fn kind(&self, name: &OsStr) -> Result<Option<FileType>> {
        match rustix::fs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => Ok(Some(FileType::from_raw_mode(st.st_mode))),
            Err(Errno::NOENT) => Ok(None),
            Err(e) => Err(Unsafe::io(format!("looking at {}", self.path.join(name).display()), e)),
        }
    }

    fn link_target(&self, name: &OsStr) -> Result<PathBuf> {
        let t = rustix::fs::readlinkat(&self.fd, name, Vec::new())
            .map_err(|e| Unsafe::io(format!("reading the link {}", self.path.join(name).display()), e))?;
        Ok(PathBuf::from(OsStr::from_bytes(t.as_bytes())))
    }

    /// What `name` holds: nothing, a regular file's bytes, or a link's target. Anything else
    /// (a folder, a FIFO, a device) is refused.
    pub fn read(&self, name: &OsStr) -> Result<Entry> {
        let path = self.path.join(name);
        match self.kind(name)? {
            None => Ok(Entry::Missing),
            Some(FileType::Symlink) => Ok(Entry::Link(self.link_target(name)?)),
            Some(FileType::RegularFile) => {
                let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
                let fd = match rustix::fs::openat(&self.fd, name, flags, Mode::empty()) {
                    Ok(fd) => fd,
                    Err(Errno::NOENT) => return Ok(Entry::Missing),
                    // Swapped for a link between the look and the open.
                    Err(Errno::LOOP) => return Ok(Entry::Link(self.link_target(name)?)),
                    Err(e) => return Err(Unsafe::io(format!("reading {}", path.display()), e)),
                };
                let st = rustix::fs::fstat(&fd).map_err(|e| Unsafe::io(format!("reading {}", path.display()), e))?;
                if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
                    return Err(Unsafe::Special { path });
                }
                if st.st_size as u64 > MAX_FILE {
                    return Err(Unsafe::TooBig { path });
                }
                let mut bytes = Vec::with_capacity(st.st_size as usize);
                std::fs::File::from(fd)
                    .take(MAX_FILE + 1)
                    .read_to_end(&mut bytes)
                    .map_err(|e| Unsafe::io(format!("reading {}", path.display()), e))?;
                if bytes.len() as u64 > MAX_FILE {
                    return Err(Unsafe::TooBig { path });
                }
                Ok(Entry::File { bytes, mode: st.st_mode & 0o7777 })
            }
            Some(_) => Err(Unsafe::Special { path }),
        }
    }

    /// Replaces whatever `name` is (a file or a link; never what a link points at) with a file of
    /// `bytes`: written under a fresh name created exclusively, synced, renamed over `name`.
    pub fn write(&self, name: &OsStr, bytes: &[u8], mode: u32) -> Result<()> {
        let path = self.path.join(name);
        let (tmp, fd) = self.fresh(name, |tmp| {
            rustix::fs::openat(
                &self.fd,
                tmp,
                OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::from_raw_mode(mode & 0o777),
            )
        })?;
        let mut f = std::fs::File::from(fd);
        let done = f
            .write_all(bytes)
            .and_then(|()| rustix::fs::fchmod(f.as_fd(), Mode::from_raw_mode(mode & 0o7777)).map_err(Into::into))
            .and_then(|()| f.sync_all());
        drop(f);
        if let Err(e) = done {
            let _ = rustix::fs::unlinkat(&self.fd, &tmp, AtFlags::empty());
            return Err(Unsafe::io(format!("writing {}", path.display()), e));
        }
        self.rename_in(&tmp, name)
    }

    /// Replaces whatever `name` is with a symbolic link to `target` (the link put back as it was).
    pub fn symlink(&self, name: &OsStr, target: &Path) -> Result<()> {
        let (tmp, ()) = self.fresh(name, |tmp| rustix::fs::symlinkat(target, &self.fd, tmp))?;
        self.rename_in(&tmp, name)
    }

    /// Removes the file or link `name` (not a folder); nothing there is fine.
    pub fn remove(&self, name: &OsStr) -> Result<()> {
        match rustix::fs::unlinkat(&self.fd, name, AtFlags::empty()) {
            Ok(()) | Err(Errno::NOENT) => Ok(()),
            Err(e) => Err(Unsafe::io(format!("removing {}", self.path.join(name).display()), e)),
        }
    }

    /// Removes the folder `name` if it is an empty folder (a link or a folder with anything in
    /// it stays).
    pub fn remove_empty_dir(&self, name: &OsStr) -> bool {
        rustix::fs::unlinkat(&self.fd, name, AtFlags::REMOVEDIR).is_ok()
    }

    /// Makes something under a name nobody else can have chosen: `.<name>.<pid>.<n>.tether-tmp`,
    /// created exclusively (a planted file or link of that name makes it pick the next one).
    fn fresh<T>(&self, name: &OsStr, mut make: impl FnMut(&OsStr) -> rustix::io::Result<T>) -> Result<(PathBuf, T)> {
        static N: AtomicU64 = AtomicU64::new(0);
        for _ in 0..64 {
            let n = N.fetch_add(1, Ordering::Relaxed);
            let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
            let mut tmp = std::ffi::OsString::from(".");
            tmp.push(name);
            tmp.push(format!(".{}.{n}{:x}.tether-tmp", std::process::id(), nanos & 0xffff_ffff));
            match make(&tmp) {
                Ok(v) => return Ok((PathBuf::from(tmp), v)),
                Err(Errno::EXIST) => continue,
                Err(e) => return Err(Unsafe::io(format!("writing in {}", self.path.display()), e)),
            }
        }
        Err(Unsafe::io(
            format!("writing in {}", self.path.display()),
            std::io::Error::from(std::io::ErrorKind::AlreadyExists),
        ))
    }

    fn rename_in(&self, tmp: &Path, name: &OsStr) -> Result<()> {
        if let Err(e) = rustix::fs::renameat(&self.fd, tmp, &self.fd, name) {
            let _ = rustix::fs::unlinkat(&self.fd, tmp, AtFlags::empty());
            return Err(Unsafe::io(format!("writing {}", self.path.join(name).display()), e));
        }
        // The rename is durable once the folder is.
        let _ = rustix::fs::fsync(&self.fd);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn canon(p: &Path) -> PathBuf {
        p.canonicalize().unwrap()
    }

    #[test]
    fn a_link_anywhere_on_the_way_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let real = tmp.path().join("real");
        std::fs::create_dir_all(real.join("inner")).unwrap();
        symlink(&real, tmp.path().join("link")).unwrap();
        assert!(Dir::open_canonical(&canon(&real).join("inner")).is_ok());
        let e = Dir::open_canonical(&canon(tmp.path()).join("link").join("inner")).unwrap_err();
        assert!(matches!(e, Unsafe::Link { .. }), "{e}");
        let e = Dir::open_canonical(Path::new("relative")).unwrap_err();
        assert!(matches!(e, Unsafe::NotCanonical { .. }));
    }

    #[test]
    fn files_and_links_are_replaced_never_followed() {
        let tmp = tempfile::tempdir().unwrap();
        let (ws, outside) = (tmp.path().join("ws"), tmp.path().join("outside"));
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::write(&outside, b"secret").unwrap();
        symlink(&outside, ws.join("cli.json")).unwrap();
        let d = Dir::open_canonical(&canon(&ws)).unwrap();
        let name = OsStr::new("cli.json");
        assert_eq!(d.read(name).unwrap(), Entry::Link(outside.clone()));
        d.write(name, b"ours", 0o644).unwrap();
        assert_eq!(std::fs::read(&outside).unwrap(), b"secret", "the target is untouched");
        assert!(matches!(d.read(name).unwrap(), Entry::File { ref bytes, .. } if bytes == b"ours"));
        d.symlink(name, &outside).unwrap();
        assert_eq!(std::fs::read_link(ws.join("cli.json")).unwrap(), outside, "put back as the same link");
        d.remove(name).unwrap();
        assert_eq!(d.read(name).unwrap(), Entry::Missing);
        assert!(outside.exists());
        // No temporary names are left behind.
        assert_eq!(std::fs::read_dir(&ws).unwrap().count(), 0);
    }

    #[test]
    fn a_planted_temporary_name_is_never_written_through() {
        let tmp = tempfile::tempdir().unwrap();
        let (ws, victim) = (tmp.path().join("ws"), tmp.path().join("victim"));
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::write(&victim, b"keep").unwrap();
        // Every name the old code would have used, and a few of ours.
        symlink(&victim, ws.join("cli.tether-tmp")).unwrap();
        for n in 0..4 {
            symlink(&victim, ws.join(format!(".cli.json.{}.{n}.tether-tmp", std::process::id()))).unwrap();
        }
        let d = Dir::open_canonical(&canon(&ws)).unwrap();
        d.write(OsStr::new("cli.json"), b"ours", 0o600).unwrap();
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep");
        assert_eq!(std::fs::read(ws.join("cli.json")).unwrap(), b"ours");
    }

    #[test]
    fn sub_folders_that_are_links_and_special_files_are_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let (ws, elsewhere) = (tmp.path().join("ws"), tmp.path().join("elsewhere"));
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::create_dir_all(&elsewhere).unwrap();
        symlink(&elsewhere, ws.join(".cursor")).unwrap();
        let d = Dir::open_canonical(&canon(&ws)).unwrap();
        let e = d.sub(OsStr::new(".cursor")).unwrap_err();
        assert!(e.to_string().contains("is a symbolic link (to "), "{e}");
        assert!(d.create_sub(OsStr::new(".cursor")).is_err(), "mkdir never goes through a link");
        assert!(!d.remove_empty_dir(OsStr::new(".cursor")), "a link is not removed as a folder");
        assert!(elsewhere.exists());
        rustix::fs::mknodat(&d.fd, "fifo", FileType::Fifo, Mode::from_raw_mode(0o600), 0).unwrap();
        assert!(matches!(d.read(OsStr::new("fifo")).unwrap_err(), Unsafe::Special { .. }));
    }

    #[test]
    fn the_handle_keeps_the_folder_when_its_name_moves() {
        let tmp = tempfile::tempdir().unwrap();
        let (ws, moved, decoy) = (tmp.path().join("ws"), tmp.path().join("moved"), tmp.path().join("decoy"));
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::create_dir_all(&decoy).unwrap();
        let d = Dir::open_canonical(&canon(&ws)).unwrap();
        std::fs::rename(&ws, &moved).unwrap();
        symlink(&decoy, &ws).unwrap();
        d.write(OsStr::new("f"), b"x", 0o644).unwrap();
        assert!(moved.join("f").exists() && !decoy.join("f").exists());
        #[cfg(target_os = "linux")]
        assert_eq!(std::fs::canonicalize(d.path_for_child()).unwrap(), canon(&moved));
    }
}
