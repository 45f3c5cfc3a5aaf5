//! Files and folders only their owner may read: the one place where Tether's file permissions
//! differ by operating system.
//!
//! Unix (Linux, macOS): files are made 0600 and folders 0700, and a file found readable by group
//! or others is tightened (its owner's bits kept). Windows has no permission bits; Tether's data
//! dir (`%APPDATA%\tether`) and Cursor's files live in the person's profile, whose ACL already
//! gives access to that user, SYSTEM and Administrators only, and a new file inherits it. Tether
//! relies on that there and sets no ACL of its own (README, "Install").
//!
//! Callers say what they want ("private"); the modes and the OS are known only here.

use std::fs::{Metadata, OpenOptions};
use std::io;
use std::path::Path;

/// Makes `o` create its file private (0600 on Unix; the profile's ACL on Windows).
pub fn create_private(o: &mut OpenOptions) -> &mut OpenOptions {
    sys::create_private(o)
}

/// Creates the folder `path` private (0700 on Unix) if it is missing, then tightens it if group or
/// others can reach it.
pub fn ensure_private_dir(path: &Path) -> io::Result<()> {
    if !path.exists() {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        match sys::create_private_dir(path) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
    }
    tighten(path).map(|_| ())
}

/// Takes group and other access away from `path` if it has any (its owner's bits kept); true if
/// something was changed. A missing file is left alone. Nothing to do on Windows.
pub fn tighten(path: &Path) -> io::Result<bool> {
    match std::fs::metadata(path) {
        Ok(meta) => sys::tighten(path, &meta),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
    }
}

/// Gives a file that holds nothing secret the ordinary mode a new file gets (0644 on Unix), for
/// files made through a private temporary file. Nothing to do on Windows.
pub fn set_ordinary(f: &std::fs::File) -> io::Result<()> {
    sys::set_ordinary(f)
}

/// Whether users other than the owner may read this file, as libpq judges `.pgpass` (on Windows,
/// where libpq makes no such check either, never).
pub fn readable_by_others(meta: &Metadata) -> bool {
    sys::readable_by_others(meta)
}

/// The permission bits (`0o644`), where the OS has them.
pub fn mode(meta: &Metadata) -> Option<u32> {
    sys::mode(meta)
}

/// Sets the permission bits of `path` (Unix); on Windows only "no write bit" means something:
/// the file is made read-only.
pub fn set_mode(path: &Path, mode: u32) -> io::Result<()> {
    sys::set_mode(path, mode)
}

/// Whether `path` belongs to the user running this process (Unix: its owner uid is ours). On
/// Windows every file Tether looks at this way is in the person's own profile: true when it exists.
pub fn owned_by_me(path: &Path) -> bool {
    sys::owned_by_me(path)
}

#[cfg(unix)]
mod sys {
    use std::fs::{Metadata, OpenOptions, Permissions};
    use std::io;
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
    use std::path::Path;

    pub fn create_private(o: &mut OpenOptions) -> &mut OpenOptions {
        o.mode(0o600)
    }

    pub fn create_private_dir(path: &Path) -> io::Result<()> {
        std::fs::DirBuilder::new().mode(0o700).create(path)
    }

    pub fn tighten(path: &Path, meta: &Metadata) -> io::Result<bool> {
        let mode = meta.permissions().mode();
        if mode & 0o077 == 0 {
            return Ok(false);
        }
        std::fs::set_permissions(path, Permissions::from_mode(mode & 0o700))?;
        Ok(true)
    }

    pub fn set_ordinary(f: &std::fs::File) -> io::Result<()> {
        f.set_permissions(Permissions::from_mode(0o644))
    }

    pub fn readable_by_others(meta: &Metadata) -> bool {
        meta.permissions().mode() & 0o077 != 0
    }

    pub fn mode(meta: &Metadata) -> Option<u32> {
        Some(meta.permissions().mode() & 0o7777)
    }

    pub fn set_mode(path: &Path, mode: u32) -> io::Result<()> {
        std::fs::set_permissions(path, Permissions::from_mode(mode))
    }

    pub fn owned_by_me(path: &Path) -> bool {
        // Our uid is whoever owns the files we create; compare with a file this process owns.
        let me = std::fs::metadata("/proc/self").map(|m| m.uid()).ok();
        match (std::fs::metadata(path).map(|m| m.uid()).ok(), me) {
            (Some(owner), Some(me)) => owner == me,
            // No /proc (macOS): the data dir is 0700, so only we could have written here.
            (Some(_), None) => true,
            _ => false,
        }
    }
}

#[cfg(windows)]
mod sys {
    use std::fs::{Metadata, OpenOptions};
    use std::io;
    use std::path::Path;

    pub fn create_private(o: &mut OpenOptions) -> &mut OpenOptions {
        o
    }

    pub fn create_private_dir(path: &Path) -> io::Result<()> {
        std::fs::create_dir(path)
    }

    pub fn tighten(_: &Path, _: &Metadata) -> io::Result<bool> {
        Ok(false)
    }

    pub fn set_ordinary(_: &std::fs::File) -> io::Result<()> {
        Ok(())
    }

    pub fn readable_by_others(_: &Metadata) -> bool {
        false
    }

    pub fn mode(_: &Metadata) -> Option<u32> {
        None
    }

    pub fn set_mode(path: &Path, mode: u32) -> io::Result<()> {
        let mut p = std::fs::metadata(path)?.permissions();
        p.set_readonly(mode & 0o222 == 0);
        std::fs::set_permissions(path, p)
    }

    pub fn owned_by_me(path: &Path) -> bool {
        path.exists()
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn files_and_folders_are_made_and_kept_private() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("a/data");
        ensure_private_dir(&dir).unwrap();
        assert_eq!(mode(&std::fs::metadata(&dir).unwrap()), Some(0o700));
        set_mode(&dir, 0o755).unwrap();
        ensure_private_dir(&dir).unwrap();
        assert_eq!(mode(&std::fs::metadata(&dir).unwrap()), Some(0o700), "a loosened folder is tightened");

        let f = dir.join("token");
        create_private(OpenOptions::new().write(true).create(true)).open(&f).unwrap();
        assert_eq!(mode(&std::fs::metadata(&f).unwrap()), Some(0o600));
        assert!(!readable_by_others(&std::fs::metadata(&f).unwrap()));
        set_mode(&f, 0o644).unwrap();
        assert!(readable_by_others(&std::fs::metadata(&f).unwrap()));
        assert!(tighten(&f).unwrap());
        assert_eq!(mode(&std::fs::metadata(&f).unwrap()), Some(0o600));
        assert!(!tighten(&f).unwrap(), "nothing left to tighten");
        assert!(!tighten(&dir.join("missing")).unwrap());
        assert!(owned_by_me(&f));
        assert!(!owned_by_me(&dir.join("missing")));
    }
}
