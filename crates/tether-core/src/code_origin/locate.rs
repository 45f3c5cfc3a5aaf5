//! Which repository a file is in, found on disk without running git: on the hook's path, and
//! over folders an agent writes, so nothing here may follow a link or open a FIFO. Used by
//! recording (the edit's repository) and by blame (the file's).
//!
//! Depends on `crate::nofollow` only; never runs git.

use std::path::{Path, PathBuf};

use crate::nofollow::{self, Kind};

/// Where a file is as far as git goes: its repository (its main checkout's root, so that a run's
/// worktree and the person's checkout are one repository) and the file's path in it; outside any,
/// the absolute path alone.
pub(crate) struct Located {
    pub root: Option<PathBuf>,
    pub path: String,
}

/// A `.git` file (`gitdir: …`) or `commondir` is a line; anything longer is not git's.
const GIT_POINTER_MAX: u64 = 4 << 10;

/// Finds the repository a file is in on disk, without running git: this is on the hook's path,
/// and an agent writes the folders it walks. Each `.git` is looked at without following it: only
/// a folder, or a regular file (`gitdir: …`) naming one, whose files git opens blocking as it
/// finds a repository are regular files (see [`vouch`]), counts. Anything else makes the file
/// one outside any repository, never opened and with no git run for it, so nothing there can
/// hold a thread.
pub(crate) fn locate(file: &Path) -> Located {
    let outside = || Located { root: None, path: file.to_string_lossy().into_owned() };
    let mut dir = file.parent();
    while let Some(d) = dir {
        let dot_git = d.join(".git");
        let gitdir = match nofollow::kind(&dot_git) {
            Kind::Missing => {
                dir = d.parent();
                continue;
            }
            Kind::Dir => Some(dot_git.clone()),
            Kind::File => linked_gitdir(&dot_git),
            Kind::Link | Kind::Special => None,
        };
        let Some(main) = gitdir.as_deref().and_then(vouch) else { return outside() };
        let path = file.strip_prefix(d).map(|p| p.to_string_lossy().replace('\\', "/")).unwrap_or_default();
        return Located { root: Some(main.unwrap_or_else(|| d.to_path_buf())), path };
    }
    outside()
}

/// The git folder a `.git` file names (`gitdir: <path>`, relative to the file's folder). Read as
/// a regular file of a few bytes, never through a link: its contents are whoever wrote them.
fn linked_gitdir(dot_git: &Path) -> Option<PathBuf> {
    let text = String::from_utf8(nofollow::read_file(dot_git, GIT_POINTER_MAX).ok()?).ok()?;
    let gitdir = PathBuf::from(text.trim().strip_prefix("gitdir:")?.trim());
    Some(if gitdir.is_absolute() { gitdir } else { dot_git.parent()?.join(gitdir) })
}

/// Files git opens with a blocking `open` while it finds a repository (`HEAD` to tell a git
/// folder, `commondir` for a linked worktree, `config` for its settings): each must be a regular
/// file or absent, or git may wait on a FIFO forever.
const GIT_OPENS: [&str; 4] = ["HEAD", "commondir", "config", "packed-refs"];

/// Whether git may be run on the git folder `gitdir` without waiting on a FIFO: `None` when not;
/// else, for a linked worktree's (`<main>/.git/worktrees/<name>`, its `commondir` naming the main
/// `.git`), the main checkout's root, so that a run's worktree and the person's checkout are one
/// repository.
fn vouch(gitdir: &Path) -> Option<Option<PathBuf>> {
    let plain = |dir: &Path| {
        nofollow::kind(dir) == Kind::Dir
            && GIT_OPENS.iter().all(|n| matches!(nofollow::kind(&dir.join(n)), Kind::Missing | Kind::File))
    };
    if !plain(gitdir) || nofollow::kind(&gitdir.join("HEAD")) != Kind::File {
        return None;
    }
    let commondir = gitdir.join("commondir");
    if nofollow::kind(&commondir) == Kind::Missing {
        return Some(None);
    }
    let common = String::from_utf8(nofollow::read_file(&commondir, GIT_POINTER_MAX).ok()?).ok()?;
    let common = gitdir.join(common.trim()).canonicalize().ok()?;
    if !plain(&common) {
        return None;
    }
    Some(
        (common.file_name() == Some(std::ffi::OsStr::new(".git")))
            .then(|| common.parent().map(Path::to_path_buf))
            .flatten(),
    )
}
