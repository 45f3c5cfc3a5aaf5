//! Landing a run's branch on the person's branch, on real repositories: squash, merge and
//! rebase; into a branch checked out with the person's other work kept, or one that is not; and
//! every refusal (staged changes, uncommitted changes in the run's files, a conflict, nothing
//! to merge) leaving refs, index and files exactly as they were.

use std::path::{Path, PathBuf};
use std::process::Command;

use tether_git::{Error, Repo, Strategy};

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
    String::from_utf8_lossy(&out.stdout).trim_end().to_owned()
}

/// The person's repository (`main` checked out, `a.txt` and `b.txt`) and a run's worktree whose
/// branch changed `a.txt` in two commits and added `new.txt`.
fn setup(tmp: &Path) -> (Repo, PathBuf, String) {
    let root = tmp.join("project");
    std::fs::create_dir_all(&root).unwrap();
    git(&root, &["init", "-q", "-b", "main"]);
    git(&root, &["config", "user.name", "Person"]);
    git(&root, &["config", "user.email", "person@example.com"]);
    std::fs::write(root.join("a.txt"), "one\ntwo\nthree\n").unwrap();
    std::fs::write(root.join("b.txt"), "bee\n").unwrap();
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-q", "-m", "first"]);
    let repo = Repo::open(&root).unwrap();
    let base = repo.head().unwrap().commit;
    let wt = repo.add_worktree(&tmp.join("wt/R-1"), "tether/R-1-fix", &base).unwrap();
    std::fs::write(wt.path.join("a.txt"), "one\nTWO\nthree\n").unwrap();
    wt.commit_all("first pass").unwrap();
    std::fs::write(wt.path.join("a.txt"), "one\nTWO\nthree\nfour\n").unwrap();
    std::fs::write(wt.path.join("new.txt"), "new\n").unwrap();
    wt.commit_all("second pass").unwrap();
    (repo, root, base)
}

/// Refs, index and the files of the checkout: what a refused merge must leave alone.
fn state(root: &Path) -> String {
    let files: String = ["a.txt", "b.txt", "new.txt", "c.txt"]
        .iter()
        .map(|f| std::fs::read_to_string(root.join(f)).unwrap_or_default())
        .collect();
    [files, git(root, &["for-each-ref"]), git(root, &["ls-files", "--stage"]), git(root, &["status", "--porcelain"])]
        .join("\n--\n")
}

#[test]
fn a_squash_lands_one_commit_on_the_checked_out_branch_and_keeps_the_persons_other_changes() {
    let tmp = tempfile::tempdir().unwrap();
    let (repo, root, base) = setup(tmp.path());
    std::fs::write(root.join("b.txt"), "bee, edited by the person\n").unwrap();
    std::fs::write(root.join("c.txt"), "untracked\n").unwrap();

    let m = repo.merge("tether/R-1-fix", "main", Strategy::Squash, "Fix two\n\nTether-Run: R-1\n").unwrap();
    assert_eq!((m.from.as_str(), m.checkout.as_deref()), (base.as_str(), Some(root.as_path())));
    assert_eq!(git(&root, &["rev-parse", "main"]), m.commit);
    assert_eq!(git(&root, &["rev-list", "--parents", "-1", "main"]), format!("{} {base}", m.commit), "one parent");
    assert_eq!(git(&root, &["log", "-1", "--format=%B", "main"]), "Fix two\n\nTether-Run: R-1");
    assert_eq!(std::fs::read_to_string(root.join("a.txt")).unwrap(), "one\nTWO\nthree\nfour\n");
    assert_eq!(std::fs::read_to_string(root.join("new.txt")).unwrap(), "new\n");
    // The person's own work is where it was: unstaged, untracked, not in the commit.
    assert_eq!(git(&root, &["status", "--porcelain"]), " M b.txt\n?? c.txt");
    assert_eq!(git(&root, &["show", "--name-only", "--format=", "main"]), "a.txt\nnew.txt");
}

#[test]
fn merge_and_rebase_keep_the_runs_commits_and_a_branch_not_checked_out_just_moves() {
    let tmp = tempfile::tempdir().unwrap();
    let (repo, root, base) = setup(tmp.path());
    git(&root, &["branch", "release", &base]);
    git(&root, &["branch", "other", &base]);
    let before = state(&root);

    let m = repo.merge("tether/R-1-fix", "release", Strategy::Merge, "Merge R-1").unwrap();
    assert_eq!(m.checkout, None);
    let parents = git(&root, &["rev-list", "--parents", "-1", "release"]);
    assert_eq!(parents.split(' ').count(), 3, "a merge commit: {parents}");
    assert_eq!(state(&root).split("\n--\n").next(), before.split("\n--\n").next(), "the checkout's files");

    let r = repo.merge("tether/R-1-fix", "other", Strategy::Rebase, "").unwrap();
    let log = git(&root, &["log", "--format=%s|%an|%P", &format!("{base}..{}", r.commit)]);
    let lines: Vec<&str> = log.lines().collect();
    assert_eq!(lines.len(), 2, "{log}");
    assert!(lines[0].starts_with("second pass|") && lines[1].starts_with("first pass|"), "{log}");
    assert!(lines[1].ends_with(&base), "replayed on the base, one parent each: {log}");
    assert_eq!(git(&root, &["diff", "tether/R-1-fix", "other"]), "", "the same content");
}

#[test]
fn refused_merges_change_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let (repo, root, _) = setup(tmp.path());
    let merge = || repo.merge("tether/R-1-fix", "main", Strategy::Squash, "x");

    std::fs::write(root.join("b.txt"), "staged\n").unwrap();
    git(&root, &["add", "b.txt"]);
    let before = state(&root);
    assert!(matches!(merge(), Err(Error::StagedChanges(_))), "staged changes");
    assert_eq!(state(&root), before);
    git(&root, &["reset", "-q"]);

    std::fs::write(root.join("a.txt"), "mine\n").unwrap();
    std::fs::write(root.join("new.txt"), "mine too\n").unwrap();
    let before = state(&root);
    match merge() {
        Err(Error::DirtyFiles { files, .. }) => assert_eq!(files, ["a.txt", "new.txt"]),
        other => panic!("{other:?}"),
    }
    assert_eq!(state(&root), before);
    git(&root, &["checkout", "-q", "--", "a.txt"]);
    std::fs::remove_file(root.join("new.txt")).unwrap();

    std::fs::write(root.join("a.txt"), "one\ntwo, says the person\nthree\n").unwrap();
    git(&root, &["commit", "-q", "-am", "the person's own change"]);
    let before = state(&root);
    match merge() {
        Err(Error::Conflicts(files)) => assert_eq!(files, ["a.txt"]),
        other => panic!("{other:?}"),
    }
    assert_eq!(state(&root), before);
    assert!(matches!(repo.merge("main", "main", Strategy::Squash, "x"), Err(Error::NothingToMerge { .. })));
}
