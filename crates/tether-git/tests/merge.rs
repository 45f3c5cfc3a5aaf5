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
    repo.commit_worktree(&wt, "first pass", &[]).unwrap();
    std::fs::write(wt.path.join("a.txt"), "one\nTWO\nthree\nfour\n").unwrap();
    std::fs::write(wt.path.join("new.txt"), "new\n").unwrap();
    repo.commit_worktree(&wt, "second pass", &[]).unwrap();
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

/// A config whose every key makes git run `marker <key>` (a script that appends the key to a log),
/// as an agent with only file-write permission could leave in its worktree.
#[cfg(unix)]
fn hostile_config(marker: &Path) -> String {
    let m = marker.display();
    format!(
        "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tfsmonitor = \"{m} fsmonitor\"\n\
         \thooksPath = hooks-of-mine\n\tpager = \"{m} pager\"\n\tsshCommand = \"{m} ssh\"\n\
         [diff]\n\texternal = \"{m} diff.external\"\n\
         [diff \"evil\"]\n\ttextconv = \"{m} textconv\"\n\
         [filter \"evil\"]\n\tclean = \"{m} filter.clean\"\n\tsmudge = \"{m} filter.smudge\"\n\
         [alias]\n\tadd = \"!{m} alias\"\n"
    )
}

/// The marker script, and a hooks folder whose every hook calls it (Unix: hooks are run as
/// executables there; these tests are about Git never running them).
#[cfg(unix)]
fn arm(dir: &Path, marker: &Path, log: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(marker, format!("#!/bin/sh\necho \"$1\" >> {}\ncat >/dev/null 2>&1 || true\n", log.display()))
        .unwrap();
    std::fs::set_permissions(marker, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::create_dir_all(dir).unwrap();
    for hook in [
        "pre-commit",
        "post-commit",
        "commit-msg",
        "reference-transaction",
        "post-checkout",
        "post-merge",
        "pre-push",
        "post-index-change",
        "fsmonitor-watchman",
    ] {
        let h = dir.join(hook);
        std::fs::write(&h, format!("#!/bin/sh\n{} hook:{hook}\n", marker.display())).unwrap();
        std::fs::set_permissions(&h, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

#[cfg(unix)]
#[test]
fn a_git_a_run_writes_in_its_worktree_never_runs_a_command_as_a_file_or_as_a_folder() {
    for shape in ["file", "folder", "link"] {
        let tmp = tempfile::tempdir().unwrap();
        let (repo, root, base) = setup(tmp.path());
        let (marker, log) = (tmp.path().join("marker.sh"), tmp.path().join("ran.log"));
        let wt = tether_git::Worktree {
            path: tmp.path().join("wt/R-1").canonicalize().unwrap(),
            branch: "tether/R-1-fix".into(),
            base: base.clone(),
        };
        // What the run writes, with nothing but file permissions: its own repository config,
        // hooks, attributes naming its filter, and `.git` pointing at them.
        let evil = wt.path.join("evilgit");
        git(&tmp.path().join("wt/R-1"), &["init", "-q", "--separate-git-dir", &evil.display().to_string(), "../spare"]);
        std::fs::write(evil.join("config"), hostile_config(&marker)).unwrap();
        arm(&evil.join("hooks"), &marker, &log);
        arm(&wt.path.join("hooks-of-mine"), &marker, &log);
        std::fs::write(wt.path.join(".gitattributes"), "* filter=evil diff=evil\n").unwrap();
        std::fs::write(wt.path.join("a.txt"), "the run's work\n").unwrap();
        let link = wt.path.join(".git");
        std::fs::remove_file(&link).unwrap();
        match shape {
            "file" => std::fs::write(&link, format!("gitdir: {}\n", evil.display())).unwrap(),
            "folder" => {
                git(tmp.path(), &["clone", "-q", "--no-checkout", &root.display().to_string(), "clone"]);
                std::fs::rename(tmp.path().join("clone/.git"), &link).unwrap();
                std::fs::write(link.join("config"), hostile_config(&marker)).unwrap();
                arm(&link.join("hooks"), &marker, &log);
            }
            _ => std::os::unix::fs::symlink(&evil, &link).unwrap(),
        }

        // The trap is real: plain git there runs the run's commands.
        let _ = Command::new("git").arg("-C").arg(&wt.path).args(["status", "--porcelain"]).output().unwrap();
        let _ = Command::new("git").arg("-C").arg(&wt.path).args(["diff"]).output().unwrap();
        assert!(log.exists(), "{shape}: the hostile .git is not hostile, so this test proves nothing");
        std::fs::remove_file(&log).unwrap();

        // Pinned: reading the worktree before the link is put back runs nothing either.
        let mut dirty = repo.worktree_dirty_paths(&wt).unwrap();
        assert!(!log.exists(), "{shape}: {}", std::fs::read_to_string(&log).unwrap_or_default());
        // …and reads Tether's repository, not the run's: `b.txt` is tracked there, unchanged.
        dirty.sort();
        assert_eq!(dirty, [".gitattributes", "a.txt", "evilgit/", "hooks-of-mine/"], "{shape}");
        let done = repo.commit_worktree(&wt, "the run's work", &[]).unwrap();
        assert!(done.commit.is_some(), "{shape}: the run's work is committed");
        assert!(done.replaced_git_link.is_some(), "{shape}: the replaced .git is said");
        assert_eq!(repo.worktree_dirty_paths(&wt).unwrap(), Vec::<String>::new(), "{shape}");
        let d = repo.diff(&base, &wt.branch, true).unwrap();
        assert!(d.files.iter().all(|f| !f.path.starts_with(".git/") && f.path != ".git"), "{shape}: {:?}", d.files);
        repo.merge(&wt.branch, "main", Strategy::Squash, "land it").unwrap();
        assert!(
            !log.exists(),
            "{shape}: git ran the run's commands: {}",
            std::fs::read_to_string(&log).unwrap_or_default()
        );
        // git's link is back: the person's own `git status` there reads Tether's repository.
        let text = std::fs::read_to_string(&link).unwrap();
        assert!(text.starts_with("gitdir: ") && text.contains("worktrees"), "{shape}: {text}");
    }
}

#[cfg(unix)]
#[test]
fn the_persons_hooks_do_not_run_when_tether_merges_into_their_checkout() {
    let tmp = tempfile::tempdir().unwrap();
    let (repo, root, _) = setup(tmp.path());
    let (marker, log) = (tmp.path().join("marker.sh"), tmp.path().join("ran.log"));
    arm(&root.join(".git/hooks"), &marker, &log);
    repo.merge("tether/R-1-fix", "main", Strategy::Squash, "land it").unwrap();
    assert_eq!(std::fs::read_to_string(root.join("a.txt")).unwrap(), "one\nTWO\nthree\nfour\n");
    assert!(!log.exists(), "hooks ran: {}", std::fs::read_to_string(&log).unwrap_or_default());
}

#[test]
fn a_merge_never_overwrites_the_persons_ignored_files_and_only_lands_on_a_branch() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("project");
    std::fs::create_dir_all(&root).unwrap();
    git(&root, &["init", "-q", "-b", "main"]);
    git(&root, &["config", "user.name", "Person"]);
    git(&root, &["config", "user.email", "person@example.com"]);
    std::fs::write(root.join(".gitignore"), "local.cfg\n").unwrap();
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-q", "-m", "first"]);
    std::fs::write(root.join("local.cfg"), "the person's secret settings\n").unwrap();
    let repo = Repo::open(&root).unwrap();
    let base = repo.head().unwrap().commit;
    let wt = repo.add_worktree(&tmp.path().join("wt/R-1"), "tether/R-1", &base).unwrap();
    std::fs::write(wt.path.join(".gitignore"), "").unwrap();
    std::fs::write(wt.path.join("local.cfg"), "the run's\n").unwrap();
    repo.commit_worktree(&wt, "un-ignore and add", &[]).unwrap();

    let before = state(&root);
    match repo.merge("tether/R-1", "main", Strategy::Squash, "x") {
        Err(Error::IgnoredFiles { files, .. }) => assert_eq!(files, ["local.cfg"]),
        other => panic!("{other:?}"),
    }
    assert_eq!(state(&root), before);
    assert_eq!(std::fs::read_to_string(root.join("local.cfg")).unwrap(), "the person's secret settings\n");

    let tag = repo.resolve("HEAD").unwrap();
    git(&root, &["tag", "v1", &tag]);
    assert!(matches!(repo.merge("tether/R-1", "v1", Strategy::Squash, "x"), Err(Error::NotABranch(_))));
}
