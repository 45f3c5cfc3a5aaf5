//! Landing a run's branch on the person's branch: squashed, merged or rebased, computed entirely
//! in git's object store first (`merge-tree --write-tree`, `commit-tree`), so a conflict is found
//! and refused with nothing changed; then the branch moves, and a checkout that has it out is
//! fast-forwarded by git itself (`merge --ff-only`), which keeps the person's unrelated
//! uncommitted changes and refuses to overwrite any. Refuses staged changes in that checkout, and
//! uncommitted changes in any file the run touched, before anything moves.

use std::path::PathBuf;

use serde::Serialize;

use crate::error::{Error, Result};
use crate::repo::Repo;

#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema, ts_rs::TS,
)]
#[ts(export, export_to = "git.ts")]
#[serde(rename_all = "snake_case")]
pub enum Strategy {
    /// One commit on the target with the branch's changes.
    #[default]
    Squash,
    /// A merge commit joining the branch.
    Merge,
    /// The branch's commits replayed on the target, one by one.
    Rebase,
}

/// What a merge did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Merged {
    pub into: String,
    /// The target's commit before and after.
    pub from: String,
    pub commit: String,
    /// The checkout that had the target out and was moved along, if one did.
    pub checkout: Option<PathBuf>,
}

impl Repo {
    /// The folder of the worktree (the main checkout included) that has `branch` out.
    pub fn checked_out(&self, branch: &str) -> Result<Option<PathBuf>> {
        let out = self.ok(["worktree", "list", "--porcelain", "-z"])?;
        let want = format!("branch refs/heads/{branch}");
        let mut path = None;
        for field in out.split('\0') {
            if let Some(p) = field.strip_prefix("worktree ") {
                path = Some(PathBuf::from(p));
            } else if field == want {
                return Ok(path);
            }
        }
        Ok(None)
    }

    pub fn merge_base(&self, a: &str, b: &str) -> Result<String> {
        self.ok(["merge-base", "--end-of-options", a, b])
    }

    /// Files changed between two commits, both sides of a rename.
    pub fn touched(&self, base: &str, head: &str) -> Result<Vec<String>> {
        let out = self.ok(["diff", "--no-renames", "--name-only", "-z", "--no-ext-diff", base, head, "--"])?;
        Ok(out.split('\0').filter(|p| !p.is_empty()).map(str::to_owned).collect())
    }

    /// Files a merge of `head` (from `base`) writes into a checkout: added, changed, renamed to.
    fn written(&self, base: &str, head: &str) -> Result<Vec<String>> {
        let out = self.ok([
            "diff",
            "--no-renames",
            "--name-only",
            "-z",
            "--no-ext-diff",
            "--diff-filter=d",
            base,
            head,
            "--",
        ])?;
        Ok(out.split('\0').filter(|p| !p.is_empty()).map(str::to_owned).collect())
    }

    /// The tree of merging `theirs` into `ours` (from `base`, default their merge base), or the
    /// files that conflict.
    fn merge_tree(
        &self,
        ours: &str,
        theirs: &str,
        base: Option<&str>,
    ) -> Result<std::result::Result<String, Vec<String>>> {
        let mut args = vec!["merge-tree", "--write-tree", "--name-only", "--no-messages", "-z"];
        if let Some(b) = base {
            args.extend(["--merge-base", b]);
        }
        args.extend([ours, theirs]);
        let out = self.run(&args)?;
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let mut fields = text.split('\0');
        let tree = fields.next().unwrap_or_default().trim().to_owned();
        match out.status.code() {
            Some(0) => Ok(Ok(tree)),
            Some(1) => {
                let mut files: Vec<String> = fields.take_while(|f| !f.is_empty()).map(str::to_owned).collect();
                files.dedup();
                Ok(Err(files))
            }
            _ => Err(Error::Git {
                command: args.join(" "),
                message: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
            }),
        }
    }

    fn commit_tree(&self, tree: &str, parents: &[&str], message: &str, author: Option<&Author>) -> Result<String> {
        let mut c = self.git();
        c.args(self.identity_args());
        c.args(["commit-tree", "--no-gpg-sign", tree]);
        for p in parents {
            c.args(["-p", p]);
        }
        c.args(["-m", message]);
        if let Some(a) = author {
            c.env("GIT_AUTHOR_NAME", &a.name).env("GIT_AUTHOR_EMAIL", &a.email).env("GIT_AUTHOR_DATE", &a.date);
        }
        let out = crate::cmd::output_within(c, std::time::Duration::from_secs(120))?;
        if !out.status.success() {
            return Err(Error::Git {
                command: "commit-tree".into(),
                message: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
            });
        }
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
    }

    /// Lands `branch` on `into` by `strategy`. `message` is the squash or merge commit's (a
    /// rebase keeps each commit's own). Refuses, changing nothing: nothing to merge, a conflict
    /// (naming the files), staged changes in the checkout that has `into` out, or uncommitted
    /// changes there in files the branch touched.
    pub fn merge(&self, branch: &str, into: &str, strategy: Strategy, message: &str) -> Result<Merged> {
        let ours = self.resolve(into)?;
        let theirs = self.resolve(branch)?;
        let base = self.merge_base(&ours, &theirs)?;
        if base == theirs {
            return Err(Error::NothingToMerge { branch: branch.into(), into: into.into() });
        }
        if !self.branch_exists(into)? {
            return Err(Error::NotABranch(into.into()));
        }
        let checkout = self.checked_out(into)?;
        // The checkout that has `into` out is acted in pinned, as a run's worktree is: it may be
        // one (a run's branch merged into another run's), whose `.git` is not to be trusted.
        let pinned = checkout.as_deref().map(|dir| self.worktree_repo(dir)).transpose()?;
        if let (Some(dir), Some(co)) = (&checkout, &pinned) {
            if !co.run(["diff", "--cached", "--quiet", "--no-ext-diff", "--ignore-submodules=all"])?.status.success() {
                return Err(Error::StagedChanges(dir.clone()));
            }
            // Ignored files too: `merge --ff-only` refuses to overwrite untracked files but
            // overwrites ignored ones, and the person's ignored `local.cfg` is theirs all the same.
            let status = co.ok([
                "status",
                "--porcelain=v1",
                "-z",
                "--untracked-files=normal",
                "--ignored=traditional",
                "--no-renames",
                "--ignore-submodules=all",
            ])?;
            let (mut dirty, mut ignored) = (Vec::new(), Vec::new());
            for l in status.split('\0').filter(|l| l.len() > 3) {
                if l.starts_with("!!") { ignored.push(&l[3..]) } else { dirty.push(&l[3..]) }
            }
            // A folder (`dir/`) stands for every path below it.
            let hit = |set: &[&str], f: &str| set.iter().any(|d| *d == f || (d.ends_with('/') && f.starts_with(d)));
            let touched = self.touched(&base, &theirs)?;
            let mut clash: Vec<String> = touched.iter().filter(|f| hit(&dirty, f)).cloned().collect();
            clash.sort();
            if !clash.is_empty() {
                return Err(Error::DirtyFiles { checkout: dir.clone(), files: clash });
            }
            let written = self.written(&base, &theirs)?;
            let mut lost: Vec<String> = written.into_iter().filter(|f| hit(&ignored, f)).collect();
            lost.sort();
            if !lost.is_empty() {
                return Err(Error::IgnoredFiles { checkout: dir.clone(), files: lost });
            }
        }
        let commit = match strategy {
            Strategy::Squash | Strategy::Merge => {
                let tree = self.merge_tree(&ours, &theirs, None)?.map_err(Error::Conflicts)?;
                let parents: Vec<&str> = if strategy == Strategy::Squash { vec![&ours] } else { vec![&ours, &theirs] };
                self.commit_tree(&tree, &parents, message, None)?
            }
            Strategy::Rebase => self.replay(&base, &theirs, &ours)?,
        };
        // Already there (a squash merged before, the same change made by hand): no empty commit.
        let tree = |c: &str| self.ok(["rev-parse", &format!("{c}^{{tree}}")]);
        if tree(&commit)? == tree(&ours)? {
            return Err(Error::NothingToMerge { branch: branch.into(), into: into.into() });
        }
        match &checkout {
            // Git moves the branch and the files together, keeping the person's other changes.
            Some(dir) => {
                let co = pinned.as_ref().unwrap_or(self);
                co.ok(["merge", "--ff-only", "--quiet", "--no-edit", &commit]).map_err(|e| match e {
                    Error::Git { message, .. } => Error::Refused { checkout: dir.clone(), message },
                    e => e,
                })?;
            }
            None => {
                self.ok(["update-ref", "-m", "tether: merge", &format!("refs/heads/{into}"), &commit, &ours])?;
            }
        }
        Ok(Merged { into: into.into(), from: ours, commit, checkout })
    }

    /// The commits `base..head` replayed on `onto`, each keeping its author and message.
    fn replay(&self, base: &str, head: &str, onto: &str) -> Result<String> {
        let range = format!("{base}..{head}");
        if !self.ok(["rev-list", "--merges", &range])?.is_empty() {
            return Err(Error::Unsupported("the branch has merge commits; merge it with --merge or --squash".into()));
        }
        let commits = self.ok(["rev-list", "--reverse", &range])?;
        let mut parent = onto.to_owned();
        for c in commits.lines() {
            let tree = self.merge_tree(&parent, c, Some(&format!("{c}^")))?.map_err(Error::Conflicts)?;
            let info = self.ok(["log", "-1", "--format=%an%x00%ae%x00%aI%x00%B", c])?;
            let mut f = info.splitn(4, '\0');
            let author = Author {
                name: f.next().unwrap_or_default().into(),
                email: f.next().unwrap_or_default().into(),
                date: f.next().unwrap_or_default().into(),
            };
            let msg = f.next().unwrap_or_default().trim_end().to_owned();
            parent = self.commit_tree(&tree, &[&parent], &msg, Some(&author))?;
        }
        Ok(parent)
    }
}

struct Author {
    name: String,
    email: String,
    date: String,
}
