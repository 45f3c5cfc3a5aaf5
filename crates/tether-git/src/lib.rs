//! Git for Tether's runs: a run's own worktree and branch beside the person's checkout
//! ([`Repo::add_worktree`]), what it left uncommitted committed to that branch
//! ([`Repo::commit_worktree`]), its diff against its base ([`Repo::diff`]) and its removal
//! ([`Repo::remove_worktree`]).
//!
//! Through the `git` CLI rather than a library: the person's own git, config and object formats
//! (worktrees, partial clones, new hash formats) work as they do in their terminal, and a
//! worktree made here is one `git worktree list` shows and `git worktree prune` understands.
//! Every command is built in one place, `cmd`: pinned to the repository Tether made when it acts
//! in a run's worktree, with the config keys and hooks that would execute something neutralised
//! and our own `GIT_*` variables removed (see that module for why and what is left).
//!
//! What it must never do on its own: change the person's checkout — its files, index, HEAD,
//! stash, or any branch but the run's own. Every command here names the worktree it acts in, and
//! the only refs it writes are the run's branch (created with `-b`, refused if it exists), except
//! [`Repo::merge`], which is the person's explicit action: it moves the branch they merge into
//! (and a checkout that has it out, as `git merge --ff-only` does), refusing — with nothing
//! changed — whatever would lose or sweep up their own work.
//!
//! For code origin it also reads: a file's blame ([`Repo::blame`]) and commits' files, and writes
//! git notes (`refs/notes/agent-trace`) when the person turned that on for the repository.
//!
//! Depends on nothing of Tether's.

mod blame;
mod cmd;
mod diff;
mod error;
mod merge;
mod repo;

pub use blame::{BlameLine, UNCOMMITTED};
pub use diff::{ChangeKind, Diff, FileChange};
pub use error::{Error, Result};
pub use merge::{Merged, Strategy};
pub use repo::{Committed, Head, Repo, Worktree, is_ignored, remote_key};

/// `text` with the user part of every URL in it replaced by `***` (`https://user:secret@host`
/// and `https://token@host` both read `https://***@host`, as `tether_github::redact_userinfo`
/// shows one URL): git's own words may quote a remote's URL, and those words reach errors, logs
/// and the person's screen.
pub fn redact_userinfo(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("://") {
        let (head, tail) = rest.split_at(i + 3);
        out.push_str(head);
        let end = tail.find(|c: char| c.is_whitespace() || c == '/' || c == '\'' || c == '"').unwrap_or(tail.len());
        let authority = &tail[..end];
        match authority.rfind('@') {
            Some(at) => {
                out.push_str("***");
                out.push_str(&authority[at..]);
            }
            None => out.push_str(authority),
        }
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

/// `url` as it may be shared: an http(s) URL without its user part (a token is often the user),
/// any other without a password (`ssh://git@host` keeps `git`). What a teammate's machine clones
/// from; its own credential helper or ssh agent supplies what was cut.
pub fn without_credentials(url: &str) -> String {
    let Some(i) = url.find("://") else { return url.to_owned() };
    let rest = &url[i + 3..];
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let Some(at) = rest[..end].rfind('@') else { return url.to_owned() };
    let scheme = url[..i].to_ascii_lowercase();
    let user = match rest[..at].split_once(':') {
        _ if scheme == "http" || scheme == "https" => String::new(),
        Some((name, _)) => format!("{name}@"),
        None => format!("{}@", &rest[..at]),
    };
    format!("{}://{user}{}", &url[..i], &rest[at + 1..])
}

#[cfg(test)]
mod redact_tests {
    #[test]
    fn a_shared_url_carries_no_credentials() {
        let w = super::without_credentials;
        assert_eq!(w("https://x-access-token:ghp_s3cret@github.com/a/b.git"), "https://github.com/a/b.git");
        assert_eq!(w("https://ghp_s3cret@github.com/a/b"), "https://github.com/a/b");
        assert_eq!(w("ssh://git:pw@host/a/b"), "ssh://git@host/a/b");
        assert_eq!(w("ssh://git@host/a/b"), "ssh://git@host/a/b");
        assert_eq!(w("git@github.com:a/b.git"), "git@github.com:a/b.git");
        assert_eq!(w("/srv/git/app.git"), "/srv/git/app.git");
    }

    #[test]
    fn passwords_and_tokens_in_urls_never_come_out() {
        let r = super::redact_userinfo;
        assert_eq!(
            r("fatal: could not read from 'https://me:hunter2@example.com/a.git' now"),
            "fatal: could not read from 'https://***@example.com/a.git' now"
        );
        assert_eq!(r("https://ghp_abc@github.com/o/r"), "https://***@github.com/o/r");
        assert_eq!(r("ssh://git@host/x and http://plain/y"), "ssh://***@host/x and http://plain/y");
        assert_eq!(r("no url here"), "no url here");
    }
}
