//! File-system setups the hardening tests make (links, modes, FIFOs), one spelling for every OS,
//! so the tests that use them compile wherever the workspace is checked (scripts/check-platforms).
//! They run where their OS has the thing: links need Developer Mode on Windows, and FIFOs and
//! permission bits are Unix's.

use std::path::Path;
use std::process::Command;

/// A symbolic link at `link` to `target` (on Windows a folder link when `target` is a folder).
pub fn symlink(target: impl AsRef<Path>, link: impl AsRef<Path>) -> std::io::Result<()> {
    let (target, link) = (target.as_ref(), link.as_ref());
    #[cfg(unix)]
    return std::os::unix::fs::symlink(target, link);
    #[cfg(windows)]
    return if target.is_dir() {
        std::os::windows::fs::symlink_dir(target, link)
    } else {
        std::os::windows::fs::symlink_file(target, link)
    };
}

/// Sets `path`'s permission bits (Windows: only "read-only or not").
pub fn set_mode(path: impl AsRef<Path>, mode: u32) -> std::io::Result<()> {
    tether_store::private::set_mode(path.as_ref(), mode)
}

/// A FIFO at `path` (`mkfifo`; Unix only: Windows has none in the file system).
pub fn mkfifo(path: impl AsRef<Path>) {
    let ok = Command::new("mkfifo").arg(path.as_ref()).status().is_ok_and(|s| s.success());
    assert!(ok, "mkfifo {}", path.as_ref().display());
}
