//! What differs between operating systems for the history readers, in one place: a file's
//! identity. Depends on std only.

use std::fs::Metadata;

/// An identity that changes when a file is replaced by another (renamed over, deleted and
/// created again) and stays while the same file is written in place: device and inode on Unix;
/// elsewhere the creation time, which std reports on Windows and macOS alike. `None` when the
/// system cannot tell.
#[cfg(unix)]
pub(crate) fn file_id(m: &Metadata) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    Some((m.dev(), m.ino()))
}

#[cfg(not(unix))]
pub(crate) fn file_id(m: &Metadata) -> Option<(u64, u64)> {
    let born = m.created().ok()?.duration_since(std::time::UNIX_EPOCH).ok()?;
    Some((born.as_secs(), u64::from(born.subsec_nanos())))
}
