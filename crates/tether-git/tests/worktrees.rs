//! Run worktrees on real repositories: made beside the person's checkout without touching it
//! (files, index, HEAD, stash, other branches), committed, diffed exactly, removed.

use std::path::{Path, PathBuf};
use std::process::Command;

use tether_git::{ChangeKind, Error, Repo};

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "Person")
        .env("GIT_AUTHOR_EMAIL", "person@example.com")
        .env("GIT_COMMITTER_NAME", "Person")
        .env("GIT_COMMITTER_EMAIL", "person@example.com")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A person's repository mid-work: two commits on `main`, another branch, a stash, a staged
/// change and an unstaged one.
fn person_repo(tmp: &Path) -> PathBuf {
    let root = tmp.join("project");
    std::fs::create_dir_all(&root).unwrap();
    git(&root, &["init", "-q", "-b", "main"]);
    std::fs::write(root.join("a.txt"), "one\ntwo\nthree\n").unwrap();
    std::fs::write(root.join("old.txt"), "moved\nwith\nits\nlines\n").unwrap();
    std::fs::write(root.join("gone.txt"), "bye\n").unwrap();
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-q", "-m", "first"]);
    git(&root, &["branch", "feature"]);
    std::fs::write(root.join("a.txt"), "one\ntwo\nthree\nfour\n").unwrap();
    git(&root, &["commit", "-q", "-am", "second"]);
    std::fs::write(root.join("a.txt"), "stashed\n").unwrap();
    git(&root, &["stash", "-q"]);
    std::fs::write(root.join("staged.txt"), "staged\n").unwrap();
    git(&root, &["add", "staged.txt"]);
    std::fs::write(root.join("a.txt"), "one\ntwo\nthree\nfour\nmine, unsaved\n").unwrap();
    root
}

/// Everything of the person's checkout an isolated run must leave as it was.
fn snapshot(root: &Path) -> (String, String, String, String, String) {
    let files: String = ["a.txt", "staged.txt", "old.txt", "gone.txt"]
        .iter()
        .map(|f| std::fs::read_to_string(root.join(f)).unwrap_or_default())
        .collect();
    let index = git(root, &["ls-files", "--stage"]) + &git(root, &["diff", "--cached"]);
    let head = git(root, &["symbolic-ref", "HEAD"]) + &git(root, &["rev-parse", "HEAD"]);
    let stash = git(root, &["stash", "list", "--format=%H %s"]);
    let branches = git(root, &["for-each-ref", "--format=%(refname) %(objectname)", "refs/heads"]);
    (files, index, head, stash, branches)
}

#[test]
fn two_runs_get_worktrees_of_their_own_and_the_persons_checkout_is_untouched() {
    let tmp = tempfile::tempdir().unwrap();
    let root = person_repo(tmp.path());
    let before = snapshot(&root);
    let repo = Repo::open(&root.join(".")).unwrap();
    let head = repo.head().unwrap();
    assert_eq!(head.branch.as_deref(), Some("main"));

    let base_dir = tmp.path().join("tether/worktrees");
    let one = repo.add_worktree(&base_dir.join("R-1"), "tether/R-1-tidy", &head.commit).unwrap();
    let two = repo.add_worktree(&base_dir.join("R-2"), "tether/R-2-rename", &head.commit).unwrap();
    // What each run does in its own folder.
    std::fs::write(one.path.join("a.txt"), "one\n2\nthree\nfour\n").unwrap();
    std::fs::write(one.path.join("new.txt"), "fresh\n").unwrap();
    std::fs::remove_file(one.path.join("gone.txt")).unwrap();
    std::fs::rename(two.path.join("old.txt"), two.path.join("renamed.txt")).unwrap();
    std::fs::write(two.path.join("blob.bin"), [0u8, 159, 146, 150, 0, 1]).unwrap();

    let c1 = repo.commit_worktree(&one, "R-1: tidy a.txt", &[]).unwrap().commit.expect("a commit");
    let c2 = repo.commit_worktree(&two, "R-2: rename", &[]).unwrap().commit.expect("a commit");
    assert_eq!(repo.commit_worktree(&one, "nothing left", &[]).unwrap().commit, None, "nothing to commit twice");

    let d1 = repo.diff(&head.commit, &one.branch, true).unwrap();
    assert_eq!(d1.head, c1);
    let got: Vec<_> = d1.files.iter().map(|f| (f.path.as_str(), f.kind, f.added, f.deleted)).collect();
    assert_eq!(
        got,
        vec![
            ("a.txt", ChangeKind::Modified, Some(1), Some(1)),
            ("gone.txt", ChangeKind::Deleted, Some(0), Some(1)),
            ("new.txt", ChangeKind::Added, Some(1), Some(0)),
        ]
    );
    let patch = d1.patch.unwrap();
    assert!(patch.contains("-two\n+2\n") && patch.contains("+fresh"), "{patch}");

    let d2 = repo.diff(&head.commit, &c2, false).unwrap();
    let renamed = d2.files.iter().find(|f| f.kind == ChangeKind::Renamed).expect("the rename is found");
    assert_eq!((renamed.old_path.as_deref(), renamed.path.as_str()), (Some("old.txt"), "renamed.txt"));
    assert!(d2.files.iter().any(|f| f.path == "blob.bin" && f.is_binary()));
    assert_eq!(d2.patch, None);

    // The person's files, index, HEAD and stash are as they were; the only new branches are
    // the runs' own.
    let after = snapshot(&root);
    assert_eq!((&after.0, &after.1, &after.2, &after.3), (&before.0, &before.1, &before.2, &before.3));
    let new_branches: Vec<_> = after.4.lines().filter(|l| !before.4.contains(*l)).collect();
    assert_eq!(new_branches.len(), 2, "{new_branches:?}");
    assert!(new_branches.iter().all(|b| b.starts_with("refs/heads/tether/R-")), "{new_branches:?}");

    // A second run can never take a branch or a folder that is in use.
    assert!(matches!(
        repo.add_worktree(&base_dir.join("R-3"), "tether/R-1-tidy", &head.commit),
        Err(Error::BranchExists(_))
    ));
    assert!(repo.add_worktree(&base_dir.join("R-1"), "tether/R-3-x", &head.commit).is_err());

    // Discarding removes the folder and the branch; one deleted by hand is pruned.
    repo.remove_worktree(&one, true).unwrap();
    assert!(!one.path.exists() && !repo.branch_exists(&one.branch).unwrap());
    std::fs::remove_dir_all(&two.path).unwrap();
    repo.remove_worktree(&two, false).unwrap();
    assert_eq!(repo.worktrees().unwrap().len(), 1, "only the person's checkout is left");
    assert!(repo.branch_exists(&two.branch).unwrap(), "kept when asked to");
    assert_eq!(snapshot(&root).1, before.1);
}

#[test]
fn a_folder_outside_any_repository_has_none() {
    let tmp = tempfile::tempdir().unwrap();
    assert_eq!(Repo::discover(tmp.path()).unwrap(), None);
    assert!(matches!(Repo::open(tmp.path()), Err(Error::NotARepo(_))));
}

#[test]
fn a_subfolder_finds_its_checkouts_root_and_bad_revisions_are_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let root = person_repo(tmp.path());
    std::fs::create_dir_all(root.join("src/deep")).unwrap();
    let repo = Repo::open(&root.join("src/deep")).unwrap();
    assert_eq!(repo.root.canonicalize().unwrap(), root.canonicalize().unwrap());
    let e = repo.resolve("no-such-branch").unwrap_err();
    assert!(matches!(e, Error::Git { .. }), "{e}");
    assert!(matches!(repo.add_worktree(&tmp.path().join("w"), "bad..name", "HEAD"), Err(Error::Git { .. })));
}

#[test]
fn a_runner_clone_fast_forwards_to_what_was_pushed_but_never_over_work_left_in_it() {
    let tmp = tempfile::tempdir().unwrap();
    let origin = tmp.path().join("origin.git");
    git(tmp.path(), &["init", "-q", "--bare", "-b", "main", origin.to_str().unwrap()]);
    let work = tmp.path().join("work");
    git(tmp.path(), &["clone", "-q", origin.to_str().unwrap(), work.to_str().unwrap()]);
    std::fs::write(work.join("a.txt"), "one\n").unwrap();
    git(&work, &["add", "."]);
    git(&work, &["commit", "-q", "-m", "first"]);
    git(&work, &["push", "-q", "origin", "HEAD:main"]);
    let clone = Repo::clone_into(origin.to_str().unwrap(), &tmp.path().join("runner/app")).unwrap();
    assert!(!clone.fast_forward_from("origin").unwrap(), "nothing new");

    std::fs::write(work.join("b.txt"), "two\n").unwrap();
    git(&work, &["add", "."]);
    git(&work, &["commit", "-q", "-m", "second"]);
    git(&work, &["push", "-q", "origin", "HEAD:main"]);
    assert!(clone.fast_forward_from("origin").unwrap());
    assert_eq!(clone.resolve("HEAD").unwrap(), git(&work, &["rev-parse", "HEAD"]).trim());

    // Work a run left uncommitted stays, and the clone stays where it was.
    std::fs::write(work.join("c.txt"), "three\n").unwrap();
    git(&work, &["add", "."]);
    git(&work, &["commit", "-q", "-m", "third"]);
    git(&work, &["push", "-q", "origin", "HEAD:main"]);
    std::fs::write(clone.root.join("left.txt"), "a run's work\n").unwrap();
    let at = clone.resolve("HEAD").unwrap();
    assert!(!clone.fast_forward_from("origin").unwrap());
    assert_eq!(clone.resolve("HEAD").unwrap(), at);
    assert_eq!(std::fs::read_to_string(clone.root.join("left.txt")).unwrap(), "a run's work\n");
}

// Links: Unix (on Windows making one needs Developer Mode).
#[cfg(unix)]
#[test]
fn a_worktree_swapped_for_a_link_or_another_folder_is_refused_not_removed_through() {
    let tmp = tempfile::tempdir().unwrap();
    let root = person_repo(tmp.path());
    let repo = Repo::open(&root).unwrap();
    let head = repo.head().unwrap().commit;
    let wt = repo.add_worktree(&tmp.path().join("wt/R-1"), "tether/R-1", &head).unwrap();
    // Someone moves the worktree away and leaves a link to the person's checkout in its place.
    std::fs::rename(&wt.path, tmp.path().join("moved")).unwrap();
    std::os::unix::fs::symlink(&root, &wt.path).unwrap();
    assert!(matches!(repo.remove_worktree(&wt, true), Err(Error::NotAWorktree(_))));
    assert!(root.join("a.txt").exists() && wt.path.symlink_metadata().unwrap().file_type().is_symlink());
    // A plain folder git does not know as this worktree: refused too.
    std::fs::remove_file(&wt.path).unwrap();
    std::fs::create_dir(&wt.path).unwrap();
    std::fs::write(wt.path.join("keep.txt"), "mine\n").unwrap();
    assert!(matches!(repo.remove_worktree(&wt, true), Err(Error::NotAWorktree(_))));
    assert!(wt.path.join("keep.txt").exists());
}
