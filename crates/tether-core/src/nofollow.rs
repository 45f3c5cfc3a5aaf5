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
//! (the `.git` beside a file) and trace publishing (`traces.jsonl`); knows nothing of runs, traces
//! or the store.
//!
//! The operating system's side is in one place, [`Dir`]'s module: `unix.rs` (Linux and macOS:
//! `openat` and friends through rustix, as described above) and `windows.rs`. Windows has no
//! `openat`, and no FIFOs in the file system; there each folder on the way is opened as itself
//! (`FILE_FLAG_OPEN_REPARSE_POINT`: a symbolic link or junction is refused, never followed) and
//! held without `FILE_SHARE_DELETE`, so while a [`Dir`] lives neither it nor a folder above it can
//! be renamed, removed or swapped for a link, and its path keeps naming the folder that was
//! checked. Files in it are opened as themselves and checked again by their handle.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

#[cfg_attr(unix, path = "nofollow/unix.rs")]
#[cfg_attr(windows, path = "nofollow/windows.rs")]
mod sys;

pub use sys::Dir;

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
        /// Unix permission bits; on Windows 0o444 for a read-only file, else 0o644.
        mode: u32,
    },
    /// A symbolic link, by its target (never read through).
    Link(PathBuf),
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

/// The `n`th name for a temporary beside `name`: `.<name>.<pid>.<n><nanos>.tether-tmp`, one
/// nobody else can have chosen (it is created exclusively all the same: a planted file or link
/// of that name makes the caller take the next one).
fn temp_name(name: &OsStr, n: u64) -> OsString {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let mut tmp = OsString::from(".");
    tmp.push(name);
    tmp.push(format!(".{}.{n}{:x}.tether-tmp", std::process::id(), nanos & 0xffff_ffff));
    tmp
}

/// How many fresh names are tried before giving up.
const TEMP_TRIES: usize = 64;
