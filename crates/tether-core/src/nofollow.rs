//! Files reached without ever following a symbolic link, and never blocking on one that is not
//! a regular file.
//!
//! A workspace is often a repository cloned from anywhere, and an agent writes in it: its
//! `.cursor/` is the repository's to shape (`.cursor`, `.cursor/rules` or `cli.json` may be links
//! to anywhere on the machine, and a leftover temporary name may be planted as one), a `.git` or
//! an `.agent-trace/traces.jsonl` may be a link, a hard link to a file elsewhere, or a FIFO that
//! would hold whoever opens it forever. Path strings cannot be trusted there, so everything here
//! goes through directory handles: a folder is opened from `/` one component at a time with
//! `O_NOFOLLOW` (its canonical path has no link in it, so any link found means it changed since
//! it was checked), sub-folders are opened relative to their parent without following, files are
//! opened `O_NOFOLLOW|O_NONBLOCK` and checked with `fstat` (a regular file, under a size cap; one
//! appended to has exactly one link), created exclusively under a fresh name and renamed within
//! the one directory handle, and a link met where a file goes is read as a link (its target,
//! never its bytes) and can be put back as the same link.
//!
//! Used by the runner (a run's files), the hook forwarder (the file an edit changed), code origin
//! (the `.git` beside a file) and trace publishing (`traces.jsonl`). Unix only, behind this one
//! module; knows nothing of runs, traces or the store.

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
    #[error("{path} is larger than {}; Tether leaves it alone", size(*max))]
    TooBig { path: PathBuf, max: u64 },
    #[error("{path} has {links} hard links; Tether writes only a file that is nowhere else")]
    Linked { path: PathBuf, links: u64 },
    #[error("{path} is outside the workspace ({}); Tether does not read it", roots.join(", "))]
    Outside { path: PathBuf, roots: Vec<String> },
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

fn size(bytes: u64) -> String {
    if bytes >= 1 << 20 { format!("{} MiB", bytes >> 20) } else { format!("{} KiB", bytes >> 10) }
}

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
                Ok(Entry::File { bytes, mode: st.st_mode & 0o7777 })
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
        let fd = rustix::fs::openat(&self.fd, name, flags, Mode::from_raw_mode(mode & 0o777)).map_err(|e| match e {
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

/// What is at `path`, looked at without following it (a link is a link, whatever it points at).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Missing,
    Dir,
    File,
    Link,
    /// A FIFO, a socket, a device: nothing Tether opens.
    Special,
}

/// The [`Kind`] of `path` (`lstat`: never opens it, so a FIFO cannot hold the caller).
pub fn kind(path: &Path) -> Kind {
    match std::fs::symlink_metadata(path) {
        Err(_) => Kind::Missing,
        Ok(m) if m.file_type().is_symlink() => Kind::Link,
        Ok(m) if m.is_dir() => Kind::Dir,
        Ok(m) if m.is_file() => Kind::File,
        Ok(_) => Kind::Special,
    }
}

/// The bytes of the regular file `path` (at most `max`), opened through its folder's canonical
/// path: the folder may be named through links (it is resolved first), the file itself may not.
pub fn read_file(path: &Path, max: u64) -> Result<Vec<u8>> {
    let (dir, name) = parent_and_name(path)?;
    match Dir::open_canonical(&dir)?.read_capped(name, max)? {
        Entry::File { bytes, .. } => Ok(bytes),
        Entry::Link(target) => Err(Unsafe::Link { path: path.to_owned(), target: Some(target) }),
        Entry::Missing => {
            Err(Unsafe::io(format!("reading {}", path.display()), std::io::Error::from(std::io::ErrorKind::NotFound)))
        }
    }
}

/// [`read_file`] of a file whose folder, resolved, is inside one of `roots` (themselves resolved):
/// a path through a linked folder that leads out of every root is refused, as is the file itself
/// being a link.
pub fn read_file_within(path: &Path, roots: &[PathBuf], max: u64) -> Result<Vec<u8>> {
    let (dir, _) = parent_and_name(path)?;
    let inside = roots.iter().filter_map(|r| r.canonicalize().ok()).any(|r| dir.starts_with(r));
    if !inside {
        return Err(Unsafe::Outside {
            path: path.to_owned(),
            roots: roots.iter().map(|r| r.display().to_string()).collect(),
        });
    }
    read_file(path, max)
}

/// An absolute path's folder, resolved (links in it followed), and its last name.
fn parent_and_name(path: &Path) -> Result<(PathBuf, &OsStr)> {
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(Unsafe::NotCanonical { path: path.to_owned() });
    };
    if !path.is_absolute() {
        return Err(Unsafe::NotCanonical { path: path.to_owned() });
    }
    let dir = parent.canonicalize().map_err(|e| Unsafe::io(format!("opening {}", parent.display()), e))?;
    Ok((dir, name))
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
        rustix::fs::mknodat(&d.fd, name, FileType::Fifo, Mode::from_raw_mode(0o600), 0).unwrap();
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
        rustix::fs::mknodat(rustix::fs::CWD, ws.join("src/fifo"), FileType::Fifo, Mode::from_raw_mode(0o600), 0)
            .unwrap();
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
