//! The Cursor Cloud side of the run model: what a run of kind `cloud` records besides what every
//! run does (the repository, Cursor's agent and run ids, the raw status, the branch and PR it
//! pushed, where its stream was), and the queries only cloud runs need (adopting the live ones a
//! stopped runner left, the agent a task's earlier cloud run used).
//!
//! Talking to Cursor is not done here: the `tether-cloud` crate does that and reports back
//! through these functions and the generic ones in `runs`. Knows nothing about HTTP.

use std::path::Path;

use tether_store::sql::{Sql, SqlExt};
use tether_store::values;

use crate::error::{Error, Result};
use crate::runs::{self, Run};
pub use crate::runs::{CloudSpec, mint_agent_id};
use tether_store::sql::Database;

/// A repository as Cursor wants it: `https://host/owner/name`. Takes the shapes people paste
/// (`github.com/o/r`, `git@github.com:o/r.git`, `ssh://git@github.com/o/r`, a trailing `/`).
pub fn normalize_repo(input: &str) -> Result<String> {
    let t = input.trim().trim_end_matches('/');
    // A URL with a user and password (or token) in it is refused without repeating it.
    let credentials = t
        .split_once("://")
        .is_some_and(|(_, rest)| rest.split(['/', '?', '#']).next().is_some_and(|a| a.contains('@')))
        && !t.starts_with("ssh://git@");
    let shown = if credentials { "a URL with credentials in it (not shown)".to_owned() } else { format!("{input:?}") };
    let bad = || {
        Error::invalid(
            "repository",
            format!("{shown} is not a repository URL (give e.g. https://github.com/your-org/your-repo)"),
        )
    };
    let rest = if let Some(r) = t.strip_prefix("https://") {
        r.to_owned()
    } else if let Some(r) = t.strip_prefix("ssh://git@") {
        r.to_owned()
    } else if let Some(r) = t.strip_prefix("git@") {
        r.replacen(':', "/", 1)
    } else if t.starts_with("http://") || t.contains("://") {
        return Err(bad());
    } else {
        t.to_owned()
    };
    let rest = rest.strip_suffix(".git").unwrap_or(&rest);
    let parts: Vec<&str> = rest.split('/').collect();
    let ok_part = |p: &str| {
        !p.is_empty() && p != "." && p != ".." && p.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
    };
    let host_ok = parts.first().is_some_and(|h| h.contains('.') && !h.contains('@') && ok_part(h));
    if parts.len() != 3 || !host_ok || !parts[1..].iter().all(|p| ok_part(p)) {
        return Err(bad());
    }
    Ok(format!("https://{}/{}/{}", parts[0].to_ascii_lowercase(), parts[1], parts[2]))
}

/// The `origin` remote of the git checkout at `dir` (or above it), normalised, if it has one.
pub fn git_origin(dir: &Path) -> Option<String> {
    let root = dir.ancestors().find(|d| d.join(".git").exists())?;
    let git = root.join(".git");
    // A worktree or submodule has a `.git` file pointing at the real folder.
    let git = if git.is_file() {
        let text = std::fs::read_to_string(&git).ok()?;
        let target = text.trim().strip_prefix("gitdir:")?.trim().to_owned();
        let p = root.join(target);
        match std::fs::read_to_string(p.join("commondir")) {
            Ok(common) => p.join(common.trim()),
            Err(_) => p,
        }
    } else {
        git
    };
    let config = std::fs::read_to_string(git.join("config")).ok()?;
    let mut in_origin = false;
    for line in config.lines().map(str::trim) {
        if line.starts_with('[') {
            in_origin = line.replace(' ', "") == "[remote\"origin\"]";
        } else if in_origin
            && let Some((k, v)) = line.split_once('=')
            && k.trim() == "url"
        {
            return normalize_repo(v.trim()).ok();
        }
    }
    None
}

/// Saves what the cloud runner learnt about a run.
pub(crate) fn set(store: &dyn Database, num: i64, spec: &CloudSpec) -> Result<()> {
    store.append(|db| {
        db.execute(
            "UPDATE runs SET cloud = ?2 WHERE num = ?1 AND kind = 'cloud'",
            values![num, serde_json::to_string(spec)?],
        )
    })?;
    Ok(())
}

/// Cloud runs still going whose runner is gone (or is this process, started again, and not
/// driving them: not in `mine`): they run on at Cursor, so `me` takes them over (each exactly
/// once, even with two runners starting) and re-attaches to their streams.
pub(crate) fn adopt(store: &dyn Database, me: u32, mine: &[i64], is_alive: impl Fn(u32) -> bool) -> Result<Vec<Run>> {
    // On a team's board, only this machine's: another machine's runner is not this one's to judge.
    let machine = store.machine();
    let live: Vec<(i64, Option<u32>)> = store.read(|c| {
        SqlExt::query_map(
            c,
            "SELECT num, runner_pid FROM runs WHERE status = 'running' AND kind = 'cloud'
               AND machine IS NOT DISTINCT FROM CAST(?1 AS TEXT)",
            values![machine],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
    })?;
    let mut out = Vec::new();
    for (num, runner) in live {
        if mine.contains(&num) || runner.is_some_and(|p| p != me && is_alive(p)) {
            continue;
        }
        let taken = store.durable(|txn| {
            Ok(Sql::execute(
                txn,
                "UPDATE runs SET runner_pid = ?2 WHERE num = ?1 AND status = 'running'
                     AND runner_pid IS NOT DISTINCT FROM ?3",
                values![num, me, runner],
            )? == 1)
        })?;
        if taken {
            out.push(runs::get_run(store, num)?);
        }
    }
    Ok(out)
}

/// The latest cloud run bound to `task` on `repo` that launched an agent: a new cloud run for
/// the task continues that agent (the seed's session rule: same repository, same agent).
pub(crate) fn earlier_for_task(store: &dyn Database, task: i64, repo: &str) -> Result<Option<Run>> {
    let num: Option<i64> = store.read(|c| {
        SqlExt::query_opt(
            c,
            "SELECT num FROM runs WHERE kind = 'cloud' AND task = ?1 AND chat_id IS NOT NULL
               AND (cloud ->> 'repo') = ?2
             ORDER BY num DESC LIMIT 1",
            values![task, repo],
            |r| r.get(0),
        )
    })?;
    num.map(|n| runs::get_run(store, n)).transpose()
}

/// How long a bootstrap token in a cloud run's prompt can be exchanged.
pub const BOOTSTRAP_TTL_MS: i64 = 10 * 60_000;
/// How long the run-scoped bearer it is exchanged for lasts at most; it dies with the run.
pub const BEARER_TTL_MS: i64 = 24 * 3_600_000;

fn hash(token: &str) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(token.trim().as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

/// A one-time bootstrap token bound to a run (valid [`BOOTSTRAP_TTL_MS`]); only its hash is kept.
pub(crate) fn grant_bootstrap(store: &dyn Database, run: i64) -> Result<String> {
    let token = tether_store::random_token();
    store.durable(|txn| {
        Sql::execute(
            txn,
            "INSERT INTO cloud_grants(hash, kind, run, expires_at) VALUES (?1, 'bootstrap', ?2, ?3)",
            values![hash(&token), run, crate::clock::now_ms() + BOOTSTRAP_TTL_MS],
        )?;
        Ok(())
    })?;
    Ok(token)
}

/// Spends a bootstrap token (once, unexpired) for a run-scoped bearer: `(bearer, run, expires
/// at ms)`. `None` for a token that is unknown, expired or already spent.
pub(crate) fn exchange(store: &dyn Database, bootstrap: &str) -> Result<Option<(String, Run, i64)>> {
    let now = crate::clock::now_ms();
    let bearer = tether_store::random_token();
    let expires = now + BEARER_TTL_MS;
    let run: Option<i64> = store.durable(|txn| {
        let db: &dyn Sql = txn;
        let run: Option<i64> = db.query_opt(
            "UPDATE cloud_grants SET used_at = ?2
             WHERE hash = ?1 AND kind = 'bootstrap' AND used_at IS NULL AND expires_at > ?2
               AND run IN (SELECT num FROM runs WHERE status IN ('queued', 'running'))
             RETURNING run",
            values![hash(bootstrap), now],
            |r| r.get(0),
        )?;
        if let Some(run) = run {
            db.execute(
                "INSERT INTO cloud_grants(hash, kind, run, expires_at) VALUES (?1, 'bearer', ?2, ?3)",
                values![hash(&bearer), run, expires],
            )?;
        }
        Ok(run)
    })?;
    run.map(|n| Ok((bearer, runs::get_run(store, n)?, expires))).transpose()
}

/// The run a scoped bearer speaks for, while it is valid.
pub(crate) fn bearer_run(store: &dyn Database, bearer: &str) -> Result<Option<Run>> {
    let num: Option<i64> = store.read(|c| {
        SqlExt::query_opt(
            c,
            "SELECT g.run FROM cloud_grants g JOIN runs r ON r.num = g.run
             WHERE g.hash = ?1 AND g.kind = 'bearer' AND g.expires_at > ?2 AND r.status IN ('queued', 'running')",
            values![hash(bearer), crate::clock::now_ms()],
            |r| r.get(0),
        )
    })?;
    num.map(|n| runs::get_run(store, n)).transpose()
}

/// Keeps a webhook delivery by its id; `false` when it was seen before (nothing to apply).
pub(crate) fn record_webhook(
    store: &dyn Database,
    id: &str,
    agent: Option<&str>,
    status: Option<&str>,
    body: &str,
) -> Result<bool> {
    store.durable(|txn| {
        Ok(Sql::execute(
            txn,
            "INSERT INTO cloud_webhooks(id, agent_id, status, received_at, body) VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT DO NOTHING",
            values![id, agent, status, crate::clock::now_ms(), body],
        )? == 1)
    })
}

/// The cloud run now going on a Cursor agent, if any.
pub(crate) fn live_run_for_agent(store: &dyn Database, agent: &str) -> Result<Option<Run>> {
    let num: Option<i64> = store.read(|c| {
        SqlExt::query_opt(
            c,
            "SELECT num FROM runs WHERE kind = 'cloud' AND status = 'running'
               AND (cloud ->> 'agent_id') = ?1 ORDER BY num DESC LIMIT 1",
            values![agent],
            |r| r.get(0),
        )
    })?;
    num.map(|n| runs::get_run(store, n)).transpose()
}

/// What a run-scoped bearer may change on its run's task.
#[cfg(test)]
mod tests {
    use super::*;
    use tether_store::sql::{Database, SqlExt};
    use tether_testkit::pg::board_engines;

    #[test]
    fn repositories_are_normalised_and_nonsense_refused() {
        for (given, want) in [
            ("https://github.com/acme/shop", "https://github.com/acme/shop"),
            ("https://GitHub.com/acme/shop.git/", "https://github.com/acme/shop"),
            ("github.com/acme/shop", "https://github.com/acme/shop"),
            ("git@github.com:acme/shop.git", "https://github.com/acme/shop"),
            ("ssh://git@github.com/acme/shop", "https://github.com/acme/shop"),
        ] {
            assert_eq!(normalize_repo(given).unwrap(), want, "{given}");
        }
        for bad in
            ["", "shop", "http://github.com/a/b", "https://github.com/a", "https://github.com/a/b/c", "ftp://x.y/a/b"]
        {
            assert!(normalize_repo(bad).is_err(), "{bad}");
        }
        for creds in ["https://user:hunter2pass@github.com/acme/shop", "https://hunter2pass@github.com/acme/shop"] {
            let e = normalize_repo(creds).unwrap_err().to_string();
            assert!(e.contains("credentials") && !e.contains("hunter2pass"), "{e}");
        }
    }

    #[test]
    fn agent_ids_have_cursors_shape() {
        let id = mint_agent_id();
        let re = |s: &str| {
            s.len() == 39
                && s.starts_with("bc-")
                && s[3..].split('-').map(str::len).collect::<Vec<_>>() == [8, 4, 4, 4, 12]
                && s[3..].chars().all(|c| c == '-' || c.is_ascii_hexdigit())
        };
        assert!(re(&id), "{id}");
        assert_ne!(id, mint_agent_id());
    }

    #[test]
    fn a_bootstrap_token_is_spent_once_for_a_bearer_scoped_to_its_run() {
        for e in &board_engines() {
            eprintln!("on {}", e.name);
            let s: &dyn Database = &**e;
            let v = runs::ValidRun {
                prompt: "p".into(),
                task: None,
                workspace: String::new(),
                model: None,
                mode: runs::RunMode::Agent,
                role: None,
                timeout_ms: 60_000,
                permissions: Default::default(),
                complete: false,
                parent: None,
                resume_chat: None,
                cloud: Some(CloudSpec::new("https://github.com/a/b".into(), None, None, false)),
                isolation: Default::default(),
                budget: None,
                target: Default::default(),
            };
            let run = runs::create(&s, "me", &v).unwrap();
            let boot = grant_bootstrap(&s, run.num()).unwrap();
            let (bearer, r, _) = exchange(&s, &boot).unwrap().expect("first exchange");
            assert_eq!(r.id, run.id);
            assert!(exchange(&s, &boot).unwrap().is_none(), "spent");
            assert!(exchange(&s, "nonsense").unwrap().is_none());
            assert_eq!(bearer_run(&s, &bearer).unwrap().map(|r| r.id), Some(run.id.clone()));
            assert!(bearer_run(&s, &boot).unwrap().is_none(), "the bootstrap token is no bearer");
            let stored: String =
                s.read(|c| c.query_row("SELECT string_agg(hash, ',') FROM cloud_grants", &[], |r| r.get(0))).unwrap();
            assert!(!stored.contains(&boot) && !stored.contains(&bearer), "only hashes are kept");
            crate::Board::new(&s)
                .runs()
                .finish(run.num(), &runs::Outcome { status: runs::RunStatus::Succeeded, ..Default::default() })
                .unwrap();
            assert!(bearer_run(&s, &bearer).unwrap().is_none(), "it dies with the run");
            s.append(|db| db.execute("UPDATE cloud_grants SET expires_at = 0", &[])).unwrap();
            assert!(bearer_run(&s, &bearer).unwrap().is_none(), "expired");
            assert!(record_webhook(&s, "msg_1", Some("bc-1"), Some("FINISHED"), "{}").unwrap());
            assert!(!record_webhook(&s, "msg_1", Some("bc-1"), Some("FINISHED"), "{}").unwrap(), "a duplicate");
        }
    }

    #[test]
    fn the_origin_remote_of_a_checkout() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join(".git")).unwrap();
        std::fs::create_dir_all(d.path().join("src/deep")).unwrap();
        std::fs::write(
            d.path().join(".git/config"),
            "[core]\n\tbare = false\n[remote \"upstream\"]\n\turl = https://github.com/other/x\n[remote \"origin\"]\n\turl = git@github.com:acme/shop.git\n",
        )
        .unwrap();
        assert_eq!(git_origin(&d.path().join("src/deep")).as_deref(), Some("https://github.com/acme/shop"));
        assert_eq!(git_origin(tempfile::tempdir().unwrap().path()), None);
    }
}
