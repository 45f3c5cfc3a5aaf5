//! [`Dir`] on Unix (Linux and macOS): directory handles and `openat`, `O_NOFOLLOW`, `fstat`
//! through rustix, as the parent module describes.

use std::ffi::OsStr;
use std::io::{Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use rustix::fs::{AtFlags, FileType, Mode, OFlags, RawMode};
use rustix::io::Errno;

use super::{Entry, MAX_FILE, Result, TEMP_TRIES, Unsafe, temp_name};

/// Permission bits as the OS's own type (`u32` on Linux, `u16` on macOS).
fn raw_mode(mode: u32) -> Mode {
    Mode::from_raw_mode((mode & 0o7777) as RawMode)
}

/// The permission bits of a `stat`, whatever width the OS gives them.
#[allow(clippy::useless_conversion)] // u16 on macOS, u32 on Linux
fn mode_bits(st: &rustix::fs::Stat) -> u32 {
    u32::from(st.st_mode) & 0o7777
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
        rustix::fs::mkdirat(&self.fd, name, raw_mode(0o755))
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
        self.read_capped(name, MAX_FILE)
    }

    /// [`Dir::read`] of a file of at most `max` bytes. Opened non-blocking and checked again by
    /// its handle: a FIFO or device swapped in after the look is refused, never waited on.
    pub fn read_capped(&self, name: &OsStr, max: u64) -> Result<Entry> {
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
                if st.st_size as u64 > max {
                    return Err(Unsafe::TooBig { path, max });
                }
                let mut bytes = Vec::with_capacity(st.st_size as usize);
                std::fs::File::from(fd)
                    .take(max + 1)
                    .read_to_end(&mut bytes)
                    .map_err(|e| Unsafe::io(format!("reading {}", path.display()), e))?;
                if bytes.len() as u64 > max {
                    return Err(Unsafe::TooBig { path, max });
                }
                Ok(Entry::File { bytes, mode: mode_bits(&st) })
            }
            Some(_) => Err(Unsafe::Special { path }),
        }
    }

    /// Appends `bytes` to the regular file `name`, made (with `mode`) when missing. Never through
    /// a link, never to a FIFO or device (opened non-blocking, so one does not hold the caller),
    /// never to a file with another name elsewhere (a hard link: appending would write there).
    pub fn append(&self, name: &OsStr, bytes: &[u8], mode: u32) -> Result<()> {
        let path = self.path.join(name);
        match self.kind(name)? {
            None | Some(FileType::RegularFile) => {}
            Some(FileType::Symlink) => return Err(Unsafe::Link { target: self.link_target(name).ok(), path }),
            Some(_) => return Err(Unsafe::Special { path }),
        }
        let flags =
            OFlags::WRONLY | OFlags::APPEND | OFlags::CREATE | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
        let fd = rustix::fs::openat(&self.fd, name, flags, raw_mode(mode & 0o777)).map_err(|e| match e {
            Errno::LOOP => Unsafe::Link { path: path.clone(), target: self.link_target(name).ok() },
            // A FIFO nobody reads, swapped in after the look.
            Errno::NXIO => Unsafe::Special { path: path.clone() },
            e => Unsafe::io(format!("writing {}", path.display()), e),
        })?;
        let st = rustix::fs::fstat(&fd).map_err(|e| Unsafe::io(format!("writing {}", path.display()), e))?;
        if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
            return Err(Unsafe::Special { path });
        }
        if st.st_nlink != 1 {
            return Err(Unsafe::Linked { path, links: st.st_nlink as u64 });
        }
        let mut f = std::fs::File::from(fd);
        f.write_all(bytes).map_err(|e| Unsafe::io(format!("writing {}", path.display()), e))
    }

    /// The sub-folder `name`, made (0755 before the umask) when missing; a link there is refused.
    pub fn sub_or_create(&self, name: &OsStr) -> Result<Dir> {
        match self.sub(name)? {
            Some(d) => Ok(d),
            None => self.create_sub(name),
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
                raw_mode(mode & 0o777),
            )
        })?;
        let mut f = std::fs::File::from(fd);
        let done = f
            .write_all(bytes)
            .and_then(|()| rustix::fs::fchmod(f.as_fd(), raw_mode(mode)).map_err(Into::into))
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

    /// Makes something under a fresh temporary name ([`temp_name`]), created exclusively.
    fn fresh<T>(&self, name: &OsStr, mut make: impl FnMut(&OsStr) -> rustix::io::Result<T>) -> Result<(PathBuf, T)> {
        static N: AtomicU64 = AtomicU64::new(0);
        for _ in 0..TEMP_TRIES {
            let tmp = temp_name(name, N.fetch_add(1, Ordering::Relaxed));
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
    use super::super::{Kind, kind, read_file_within};
    use super::*;
    use std::os::unix::fs::symlink;

    /// A FIFO at `path` (`mkfifo`, on Linux and macOS alike).
    fn fifo(path: &Path) {
        assert!(std::process::Command::new("mkfifo").arg(path).status().unwrap().success());
    }

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
        fifo(&ws.join("fifo"));
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

    #[test]
    fn appends_go_only_to_a_regular_file_with_one_link() {
        let tmp = tempfile::tempdir().unwrap();
        let (ws, victim) = (tmp.path().join("ws"), tmp.path().join("victim"));
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::write(&victim, b"keep\n").unwrap();
        let d = Dir::open_canonical(&canon(&ws)).unwrap();
        let name = OsStr::new("traces.jsonl");
        d.append(name, b"a\n", 0o644).unwrap();
        d.append(name, b"b\n", 0o644).unwrap();
        assert_eq!(std::fs::read(ws.join("traces.jsonl")).unwrap(), b"a\nb\n");
        // A hard link to a file elsewhere, a link, a FIFO (nobody reading: it would hold a
        // blocking open forever; a reader waiting: it would take the bytes).
        std::fs::remove_file(ws.join("traces.jsonl")).unwrap();
        std::fs::hard_link(&victim, ws.join("traces.jsonl")).unwrap();
        assert!(matches!(d.append(name, b"x\n", 0o644).unwrap_err(), Unsafe::Linked { links: 2, .. }));
        std::fs::remove_file(ws.join("traces.jsonl")).unwrap();
        symlink(&victim, ws.join("traces.jsonl")).unwrap();
        assert!(matches!(d.append(name, b"x\n", 0o644).unwrap_err(), Unsafe::Link { .. }));
        std::fs::remove_file(ws.join("traces.jsonl")).unwrap();
        fifo(&ws.join("traces.jsonl"));
        assert!(matches!(d.append(name, b"x\n", 0o644).unwrap_err(), Unsafe::Special { .. }));
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep\n");
    }

    #[test]
    fn a_file_is_read_only_inside_the_roots_and_never_through_a_link_or_a_fifo() {
        let tmp = tempfile::tempdir().unwrap();
        let (ws, outside) = (canon(tmp.path()).join("ws"), canon(tmp.path()).join("outside"));
        std::fs::create_dir_all(ws.join("src")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(ws.join("src/a.rs"), b"fn a() {}\n").unwrap();
        std::fs::write(outside.join("secret"), b"s\n").unwrap();
        symlink(outside.join("secret"), ws.join("src/link")).unwrap();
        symlink(&outside, ws.join("out")).unwrap();
        fifo(&ws.join("src/fifo"));
        let roots = [ws.clone()];
        assert_eq!(read_file_within(&ws.join("src/a.rs"), &roots, 1 << 20).unwrap(), b"fn a() {}\n");
        // Through a linked folder, named directly, as a link, a FIFO, over the cap.
        for (p, what) in [
            (ws.join("out/secret"), "outside"),
            (outside.join("secret"), "outside"),
            (ws.join("src/link"), "link"),
            (ws.join("src/fifo"), "special"),
        ] {
            let e = read_file_within(&p, &roots, 1 << 20).unwrap_err();
            let ok = match what {
                "outside" => matches!(e, Unsafe::Outside { .. }),
                "link" => matches!(e, Unsafe::Link { .. }),
                _ => matches!(e, Unsafe::Special { .. }),
            };
            assert!(ok, "{}: {e}", p.display());
        }
        assert!(matches!(read_file_within(&ws.join("src/a.rs"), &roots, 4).unwrap_err(), Unsafe::TooBig { .. }));
        assert!(matches!(read_file_within(&ws.join("src/a.rs"), &[], 1 << 20).unwrap_err(), Unsafe::Outside { .. }));
        assert_eq!(kind(&ws.join("src/fifo")), Kind::Special);
        assert_eq!(kind(&ws.join("out")), Kind::Link);
    }
}
