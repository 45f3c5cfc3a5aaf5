//! [`Dir`] on Windows. There is no `openat`, so a folder is pinned instead of held by handle
//! alone: every folder from the drive's root down is opened as itself
//! (`FILE_FLAG_OPEN_REPARSE_POINT`, with `FILE_FLAG_BACKUP_SEMANTICS` to open a folder at all),
//! checked by its handle (a symbolic link or junction is refused), and kept open without
//! `FILE_SHARE_DELETE`. While a [`Dir`] lives, Windows refuses to rename or remove any of those
//! folders, so `path` keeps naming the very folder that was checked, and names in it can be used
//! as paths. A file there is opened as itself too and checked again by its handle: a link swapped
//! in after the look is seen as a link, never written through; a device name (`NUL`, `CON`) is
//! not a disk file and is refused; a hard link is caught by its link count. Windows has no FIFOs
//! in the file system (named pipes live under `\\.\pipe\`), so nothing here can block an open.
//!
//! Windows has no permission bits: [`Entry::File`]'s mode is 0o444 for a read-only file, else
//! 0o644, and a mode without any write bit makes the file read-only. What keeps Tether's own
//! files private there is the per-user profile they live in (see `tether_store::private`).

use std::ffi::OsStr;
use std::fs::{File, OpenOptions};
use std::io::{ErrorKind, Read, Write};
use std::os::windows::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use super::{Entry, MAX_FILE, Result, TEMP_TRIES, Unsafe, temp_name};

// From the Windows SDK (winbase.h / winnt.h).
const FILE_FLAG_BACKUP_SEMANTICS: u32 = 0x0200_0000;
const FILE_FLAG_OPEN_REPARSE_POINT: u32 = 0x0020_0000;
const FILE_SHARE_READ: u32 = 0x1;
const FILE_SHARE_WRITE: u32 = 0x2;
const FILE_SHARE_DELETE: u32 = 0x4;

/// An open directory: its path, and the handles that pin it and every folder above it.
#[derive(Debug)]
pub struct Dir {
    path: PathBuf,
    pins: Arc<Vec<File>>,
}

/// Opens the folder `path` as itself (never through a link), holding it against rename and removal.
fn pin(path: &Path) -> std::io::Result<File> {
    OpenOptions::new()
        .read(true)
        .share_mode(FILE_SHARE_READ | FILE_SHARE_WRITE)
        .custom_flags(FILE_FLAG_BACKUP_SEMANTICS | FILE_FLAG_OPEN_REPARSE_POINT)
        .open(path)
}

/// Opens the file `path` as itself (a link is opened as the link, not its target).
fn open_as_itself(o: &mut OpenOptions, path: &Path) -> std::io::Result<File> {
    o.share_mode(FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE)
        .custom_flags(FILE_FLAG_OPEN_REPARSE_POINT)
        .open(path)
}

/// What a handle opened as itself turned out to be.
enum Opened {
    File { len: u64, readonly: bool, links: u64 },
    Link,
    Special,
}

fn look(f: &File) -> std::io::Result<Opened> {
    let m = f.metadata()?;
    if m.file_type().is_symlink() {
        return Ok(Opened::Link);
    }
    // A device (`NUL`, `CON`, `COM1`) answers to any folder's name; it is not a disk file.
    if !m.is_file() || !winapi_util::file::typ(f)?.is_disk() {
        return Ok(Opened::Special);
    }
    let links = winapi_util::file::information(f)?.number_of_links();
    Ok(Opened::File { len: m.len(), readonly: m.permissions().readonly(), links })
}

impl Dir {
    /// Opens an absolute, canonical folder from its drive's (or share's) root, one component at a
    /// time, refusing any link or junction on the way.
    pub fn open_canonical(path: &Path) -> Result<Dir> {
        if !path.is_absolute() {
            return Err(Unsafe::NotCanonical { path: path.to_owned() });
        }
        let mut root = PathBuf::new();
        let mut names = Vec::new();
        for c in path.components() {
            match c {
                Component::Prefix(p) if names.is_empty() => root.push(p.as_os_str()),
                Component::RootDir if names.is_empty() => root.push(std::path::MAIN_SEPARATOR_STR),
                Component::Normal(name) => names.push(name),
                _ => return Err(Unsafe::NotCanonical { path: path.to_owned() }),
            }
        }
        let handle = pin(&root).map_err(|e| Unsafe::io(format!("opening {}", root.display()), e))?;
        let mut dir = Dir { path: root, pins: Arc::new(vec![handle]) };
        for name in names {
            dir = dir.sub(name)?.ok_or_else(|| {
                Unsafe::io(format!("opening {}", path.display()), std::io::Error::from(ErrorKind::NotFound))
            })?;
        }
        Ok(dir)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A path naming this very folder for a child process started now: its path, which cannot
    /// move while this handle lives.
    pub fn path_for_child(&self) -> PathBuf {
        self.path.clone()
    }

    /// `name` as a path in this folder. Only one plain name: no separators, no `..`, and no `:`
    /// (which would name an alternate data stream of a file, or a drive).
    fn child(&self, name: &OsStr) -> Result<PathBuf> {
        let mut c = Path::new(name).components();
        let plain =
            matches!((c.next(), c.next()), (Some(Component::Normal(_)), None)) && !name.to_string_lossy().contains(':');
        if !plain {
            return Err(Unsafe::NotCanonical { path: self.path.join(name) });
        }
        Ok(self.path.join(name))
    }

    fn link_target(path: &Path) -> Result<PathBuf> {
        std::fs::read_link(path).map_err(|e| Unsafe::io(format!("reading the link {}", path.display()), e))
    }

    fn meta(path: &Path) -> Result<Option<std::fs::Metadata>> {
        match std::fs::symlink_metadata(path) {
            Ok(m) => Ok(Some(m)),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
            Err(e) => Err(Unsafe::io(format!("looking at {}", path.display()), e)),
        }
    }

    /// The sub-folder `name`, or `None` when there is none. A link or junction there is refused.
    pub fn sub(&self, name: &OsStr) -> Result<Option<Dir>> {
        let path = self.child(name)?;
        match Self::meta(&path)? {
            None => Ok(None),
            Some(m) if m.file_type().is_symlink() => Err(Unsafe::Link { target: Self::link_target(&path).ok(), path }),
            Some(m) if m.is_dir() => {
                let handle = pin(&path).map_err(|e| Unsafe::io(format!("opening {}", path.display()), e))?;
                // Checked again by the handle: the name may have changed since the look.
                let m = handle.metadata().map_err(|e| Unsafe::io(format!("opening {}", path.display()), e))?;
                if m.file_type().is_symlink() {
                    return Err(Unsafe::Link { target: Self::link_target(&path).ok(), path });
                }
                if !m.is_dir() {
                    return Err(Unsafe::Special { path });
                }
                let mut pins: Vec<File> = Vec::with_capacity(self.pins.len() + 1);
                for p in self.pins.iter() {
                    pins.push(p.try_clone().map_err(|e| Unsafe::io(format!("opening {}", path.display()), e))?);
                }
                pins.push(handle);
                Ok(Some(Dir { path, pins: Arc::new(pins) }))
            }
            Some(_) => Err(Unsafe::Special { path }),
        }
    }

    /// Creates the sub-folder `name`; fails if anything is there.
    pub fn create_sub(&self, name: &OsStr) -> Result<Dir> {
        let path = self.child(name)?;
        std::fs::create_dir(&path).map_err(|e| Unsafe::io(format!("creating {}", path.display()), e))?;
        self.sub(name)?
            .ok_or_else(|| Unsafe::io(format!("opening {}", path.display()), std::io::Error::from(ErrorKind::NotFound)))
    }

    /// What `name` holds: nothing, a regular file's bytes, or a link's target.
    pub fn read(&self, name: &OsStr) -> Result<Entry> {
        self.read_capped(name, MAX_FILE)
    }

    /// [`Dir::read`] of a file of at most `max` bytes, checked again by its handle.
    pub fn read_capped(&self, name: &OsStr, max: u64) -> Result<Entry> {
        let path = self.child(name)?;
        match Self::meta(&path)? {
            None => Ok(Entry::Missing),
            Some(m) if m.file_type().is_symlink() => Ok(Entry::Link(Self::link_target(&path)?)),
            Some(m) if m.is_file() => {
                let err = |e| Unsafe::io(format!("reading {}", path.display()), e);
                let f = match open_as_itself(OpenOptions::new().read(true), &path) {
                    Ok(f) => f,
                    Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Entry::Missing),
                    Err(e) => return Err(err(e)),
                };
                let readonly = match look(&f).map_err(err)? {
                    Opened::Link => return Ok(Entry::Link(Self::link_target(&path)?)),
                    Opened::Special => return Err(Unsafe::Special { path }),
                    Opened::File { len, .. } if len > max => return Err(Unsafe::TooBig { path, max }),
                    Opened::File { readonly, .. } => readonly,
                };
                let mut bytes = Vec::new();
                f.take(max + 1).read_to_end(&mut bytes).map_err(err)?;
                if bytes.len() as u64 > max {
                    return Err(Unsafe::TooBig { path, max });
                }
                Ok(Entry::File { bytes, mode: if readonly { 0o444 } else { 0o644 } })
            }
            Some(_) => Err(Unsafe::Special { path }),
        }
    }

    /// Appends `bytes` to the regular file `name`, made when missing. Never through a link, never
    /// to a device, never to a file with another name elsewhere (a hard link).
    pub fn append(&self, name: &OsStr, bytes: &[u8], _mode: u32) -> Result<()> {
        let path = self.child(name)?;
        match Self::meta(&path)? {
            None => {}
            Some(m) if m.file_type().is_symlink() => {
                return Err(Unsafe::Link { target: Self::link_target(&path).ok(), path });
            }
            Some(m) if m.is_file() => {}
            Some(_) => return Err(Unsafe::Special { path }),
        }
        let err = |e| Unsafe::io(format!("writing {}", path.display()), e);
        let mut f = open_as_itself(OpenOptions::new().append(true).create(true), &path).map_err(err)?;
        match look(&f).map_err(err)? {
            Opened::Link => return Err(Unsafe::Link { target: Self::link_target(&path).ok(), path }),
            Opened::Special => return Err(Unsafe::Special { path }),
            Opened::File { links, .. } if links != 1 => return Err(Unsafe::Linked { path, links }),
            Opened::File { .. } => {}
        }
        f.write_all(bytes).map_err(err)
    }

    /// The sub-folder `name`, made when missing; a link there is refused.
    pub fn sub_or_create(&self, name: &OsStr) -> Result<Dir> {
        match self.sub(name)? {
            Some(d) => Ok(d),
            None => self.create_sub(name),
        }
    }

    /// Replaces whatever `name` is (a file or a link; never what a link points at) with a file of
    /// `bytes`: written under a fresh name created exclusively, synced, renamed over `name` (a
    /// rename replaces a link itself).
    pub fn write(&self, name: &OsStr, bytes: &[u8], mode: u32) -> Result<()> {
        let path = self.child(name)?;
        let (tmp, mut f) =
            self.fresh(name, |tmp| open_as_itself(OpenOptions::new().write(true).create_new(true), tmp))?;
        let done = f.write_all(bytes).and_then(|()| f.sync_all());
        drop(f);
        if let Err(e) = done {
            let _ = std::fs::remove_file(&tmp);
            return Err(Unsafe::io(format!("writing {}", path.display()), e));
        }
        self.rename_in(&tmp, &path)?;
        if mode & 0o222 == 0 {
            // Read-only once in place: a read-only file cannot be renamed over.
            let mut p = std::fs::symlink_metadata(&path)
                .map_err(|e| Unsafe::io(format!("writing {}", path.display()), e))?
                .permissions();
            p.set_readonly(true);
            std::fs::set_permissions(&path, p).map_err(|e| Unsafe::io(format!("writing {}", path.display()), e))?;
        }
        Ok(())
    }

    /// Replaces whatever `name` is with a symbolic link to `target` (the link put back as it
    /// was). Windows tells file links from folder links; a target that is a folder now gets a
    /// folder link. Making links needs Developer Mode or the privilege to create them.
    pub fn symlink(&self, name: &OsStr, target: &Path) -> Result<()> {
        let path = self.child(name)?;
        let full_target = if target.is_absolute() { target.to_owned() } else { self.path.join(target) };
        let to_dir = std::fs::metadata(&full_target).is_ok_and(|m| m.is_dir());
        let (tmp, ()) = self.fresh(name, |tmp| {
            if to_dir {
                std::os::windows::fs::symlink_dir(target, tmp)
            } else {
                std::os::windows::fs::symlink_file(target, tmp)
            }
        })?;
        self.rename_in(&tmp, &path)
    }

    /// Removes the file or link `name` (not a folder); nothing there is fine.
    pub fn remove(&self, name: &OsStr) -> Result<()> {
        let path = self.child(name)?;
        let removed = match Self::meta(&path)? {
            None => return Ok(()),
            // A folder link is removed as a folder (the link, never what it points at).
            Some(m) if m.file_type().is_symlink_dir() => std::fs::remove_dir(&path),
            Some(_) => std::fs::remove_file(&path),
        };
        match removed {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
            Err(e) => Err(Unsafe::io(format!("removing {}", path.display()), e)),
        }
    }

    /// Removes the folder `name` if it is an empty folder (a link or a folder with anything in
    /// it stays).
    pub fn remove_empty_dir(&self, name: &OsStr) -> bool {
        let Ok(path) = self.child(name) else { return false };
        match std::fs::symlink_metadata(&path) {
            Ok(m) if m.is_dir() && !m.file_type().is_symlink() => std::fs::remove_dir(&path).is_ok(),
            _ => false,
        }
    }

    /// Makes something under a fresh temporary name ([`temp_name`]), created exclusively.
    fn fresh<T>(&self, name: &OsStr, mut make: impl FnMut(&Path) -> std::io::Result<T>) -> Result<(PathBuf, T)> {
        static N: AtomicU64 = AtomicU64::new(0);
        for _ in 0..TEMP_TRIES {
            let tmp = self.path.join(temp_name(name, N.fetch_add(1, Ordering::Relaxed)));
            match make(&tmp) {
                Ok(v) => return Ok((tmp, v)),
                Err(e) if e.kind() == ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(Unsafe::io(format!("writing in {}", self.path.display()), e)),
            }
        }
        Err(Unsafe::io(format!("writing in {}", self.path.display()), std::io::Error::from(ErrorKind::AlreadyExists)))
    }

    fn rename_in(&self, tmp: &Path, path: &Path) -> Result<()> {
        if let Err(e) = std::fs::rename(tmp, path) {
            let _ = std::fs::remove_file(tmp);
            return Err(Unsafe::io(format!("writing {}", path.display()), e));
        }
        Ok(())
    }
}

// These run on Windows (the release workflow's runner); here they are compiled by
// scripts/check-platforms. Making links needs Developer Mode, so link cases are skipped when the
// runner cannot make one.
#[cfg(test)]
mod tests {
    use super::*;

    fn canon(p: &Path) -> PathBuf {
        p.canonicalize().unwrap()
    }

    #[test]
    fn files_are_written_read_and_appended_as_themselves() {
        let tmp = tempfile::tempdir().unwrap();
        let d = Dir::open_canonical(&canon(tmp.path())).unwrap();
        let name = OsStr::new("cli.json");
        assert_eq!(d.read(name).unwrap(), Entry::Missing);
        d.write(name, b"ours", 0o644).unwrap();
        assert!(matches!(d.read(name).unwrap(), Entry::File { ref bytes, mode: 0o644 } if bytes == b"ours"));
        d.append(OsStr::new("t.jsonl"), b"a\n", 0o644).unwrap();
        d.append(OsStr::new("t.jsonl"), b"b\n", 0o644).unwrap();
        assert_eq!(std::fs::read(tmp.path().join("t.jsonl")).unwrap(), b"a\nb\n");
        std::fs::hard_link(tmp.path().join("t.jsonl"), tmp.path().join("other")).unwrap();
        assert!(matches!(d.append(OsStr::new("t.jsonl"), b"x", 0o644).unwrap_err(), Unsafe::Linked { .. }));
        for bad in ["a\\b", "..", "f:stream", "C:"] {
            assert!(matches!(d.read(OsStr::new(bad)).unwrap_err(), Unsafe::NotCanonical { .. }), "{bad}");
        }
        d.remove(name).unwrap();
        assert_eq!(d.read(name).unwrap(), Entry::Missing);
    }

    #[test]
    fn a_pinned_folder_cannot_be_renamed_away() {
        let tmp = tempfile::tempdir().unwrap();
        let ws = canon(tmp.path()).join("ws");
        std::fs::create_dir_all(ws.join("inner")).unwrap();
        let d = Dir::open_canonical(&ws.join("inner")).unwrap();
        assert!(std::fs::rename(&ws, tmp.path().join("moved")).is_err(), "a folder above is pinned");
        drop(d);
        std::fs::rename(&ws, tmp.path().join("moved")).unwrap();
    }

    #[test]
    fn links_are_refused_or_replaced_never_followed() {
        let tmp = tempfile::tempdir().unwrap();
        let (ws, outside) = (canon(tmp.path()).join("ws"), canon(tmp.path()).join("outside"));
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::write(&outside, b"secret").unwrap();
        if std::os::windows::fs::symlink_file(&outside, ws.join("cli.json")).is_err() {
            eprintln!("skipped: this account cannot make symbolic links");
            return;
        }
        std::os::windows::fs::symlink_dir(tmp.path(), ws.join("dirlink")).unwrap();
        let d = Dir::open_canonical(&ws).unwrap();
        assert!(matches!(d.sub(OsStr::new("dirlink")).unwrap_err(), Unsafe::Link { .. }));
        assert!(matches!(Dir::open_canonical(&ws.join("dirlink")).unwrap_err(), Unsafe::Link { .. }));
        let name = OsStr::new("cli.json");
        assert_eq!(d.read(name).unwrap(), Entry::Link(outside.clone()));
        assert!(matches!(d.append(name, b"x", 0o644).unwrap_err(), Unsafe::Link { .. }));
        d.write(name, b"ours", 0o644).unwrap();
        assert_eq!(std::fs::read(&outside).unwrap(), b"secret", "the target is untouched");
        d.symlink(name, &outside).unwrap();
        assert_eq!(std::fs::read_link(ws.join("cli.json")).unwrap(), outside);
        assert!(!d.remove_empty_dir(OsStr::new("dirlink")));
        d.remove(OsStr::new("dirlink")).unwrap();
        assert!(tmp.path().exists());
    }
}
