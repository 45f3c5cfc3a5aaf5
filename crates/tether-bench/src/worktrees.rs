//! The worktree benchmark: a repository of 10,000 files (1 KB each, 100 folders), and a run's
//! own worktree made from it the way the runner makes one (`tether_git::Repo::add_worktree`),
//! several times, side by side with `git worktree add --no-checkout` on the same repository, so
//! the report says what dominates (git's bookkeeping, or writing the files out), and beside `cp -r`
//! of the same files (the file system's own floor on this machine); then the diff of a
//! branch touching 200 files (stat and patch), as `tether runs diff` computes it.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, bail};
use tether_git::Repo;

use crate::report::{Row, percentile, sorted};

const CREATE_TARGET_MS: f64 = 1000.0;

pub struct WorktreeFigures {
    pub rows: Vec<Row>,
    pub setup: String,
}

fn git(dir: &Path, args: &[&str]) -> anyhow::Result<()> {
    let out = Command::new("git").arg("-C").arg(dir).args(args).output()?;
    if !out.status.success() {
        bail!("git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
    Ok(())
}

fn ms(d: std::time::Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

pub fn run(dir: &Path, rounds: usize, files: usize) -> anyhow::Result<WorktreeFigures> {
    let home = dir.join("worktrees-bench");
    let _ = std::fs::remove_dir_all(&home);
    let repo_dir = home.join("repo");
    std::fs::create_dir_all(&repo_dir)?;
    let line = "x".repeat(63) + "\n";
    for i in 0..files {
        let sub = repo_dir.join(format!("src/m{:02}", i % 100));
        std::fs::create_dir_all(&sub)?;
        std::fs::write(sub.join(format!("f{i:05}.rs")), line.repeat(16))?;
    }
    git(&repo_dir, &["init", "-q", "-b", "main"])?;
    git(&repo_dir, &["add", "-A"])?;
    git(&repo_dir, &["-c", "user.name=B", "-c", "user.email=b@example.com", "commit", "-q", "-m", "10k files"])?;
    let repo = Repo::open(&repo_dir).context("opening the bench repository")?;
    let base = repo.head()?.commit;

    let (mut full, mut bare, mut copy) = (Vec::new(), Vec::new(), Vec::new());
    // Interleaved, so the machine's noise falls on both alike.
    for i in 0..rounds.max(1) {
        let t = Instant::now();
        let wt = repo.add_worktree(&home.join(format!("wt/R-{i}")), &format!("tether/R-{i}-bench"), &base)?;
        full.push(ms(t.elapsed()));
        let path = home.join(format!("bare/R-{i}"));
        let t = Instant::now();
        git(
            &repo_dir,
            &[
                "worktree",
                "add",
                "--quiet",
                "--no-checkout",
                "-b",
                &format!("bare/{i}"),
                path.to_str().unwrap_or(""),
                &base,
            ],
        )?;
        bare.push(ms(t.elapsed()));
        let to = home.join(format!("cp/{i}"));
        std::fs::create_dir_all(&to)?;
        let t = Instant::now();
        let ok = Command::new("cp").arg("-r").arg(repo_dir.join("src")).arg(&to).status()?.success();
        copy.push(ms(t.elapsed()));
        anyhow::ensure!(ok, "cp -r failed");
        let _ = std::fs::remove_dir_all(&to);
        if i > 0 {
            repo.remove_worktree(&wt, true)?;
        }
    }
    let (full, bare, copy) = (sorted(full), sorted(bare), sorted(copy));

    // A run that touched 200 files: its diff, as `runs diff` and the GUI get it.
    let wt = tether_git::Worktree { path: home.join("wt/R-0"), branch: "tether/R-0-bench".into(), base: base.clone() };
    let touched = files.min(200);
    for i in 0..touched {
        let f = wt.path.join(format!("src/m{:02}/f{i:05}.rs", i % 100));
        std::fs::write(&f, line.repeat(15) + "changed by the run\n")?;
    }
    repo.commit_worktree(&wt, "200 files", &[])?;
    let (mut stat, mut patch) = (Vec::new(), Vec::new());
    for _ in 0..rounds.max(1) {
        let t = Instant::now();
        let d = repo.diff(&base, &wt.branch, false)?;
        stat.push(ms(t.elapsed()));
        anyhow::ensure!(d.files.len() == touched, "{} files changed, not {touched}", d.files.len());
        let t = Instant::now();
        repo.diff(&base, &wt.branch, true)?;
        patch.push(ms(t.elapsed()));
    }
    let (stat, patch) = (sorted(stat), sorted(patch));
    let p = |v: &[f64]| format!("p50 {:.0} ms · p95 {:.0} ms", percentile(v, 50.0), percentile(v, 95.0));
    let checkout_share = 1.0 - percentile(&bare, 50.0) / percentile(&full, 50.0).max(0.001);
    let rows = vec![
        Row::new(
            &format!("worktree of a {files}-file repository (add -b + checkout)"),
            p(&full),
            "≤ 1 s",
            Some(CREATE_TARGET_MS / percentile(&full, 95.0).max(0.001)),
        ),
        Row::new("  the same without writing the files (--no-checkout)", p(&bare), "—", None),
        Row::new("  share of writing the files out", format!("{:.0} %", checkout_share * 100.0), "—", None),
        Row::new(
            "  `cp -r` of the same files (the file system's floor)",
            format!("{} · worktree/cp {:.2}×", p(&copy), percentile(&full, 50.0) / percentile(&copy, 50.0).max(0.001)),
            "—",
            None,
        ),
        Row::new(&format!("diff of {touched} files: files and counts"), p(&stat), "—", None),
        Row::new(&format!("diff of {touched} files: with the patch"), p(&patch), "—", None),
    ];
    let setup = format!(
        "{files} files of 1 KB in 100 folders, one commit; {} rounds of each, interleaved; git {}",
        rounds.max(1),
        String::from_utf8_lossy(&Command::new("git").arg("--version").output()?.stdout)
            .trim()
            .trim_start_matches("git version ")
    );
    let _ = std::fs::remove_dir_all(&home);
    Ok(WorktreeFigures { rows, setup })
}
