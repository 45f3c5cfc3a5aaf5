//! The environment test for cloud runs (`tether cloud doctor`, the Health view): the API URL,
//! the key (present, and valid: `me`), the repository's shape (and access, only when asked:
//! Cursor allows that call once a minute), the model, and the public URL when one is set. Each
//! check says what to do when it fails.

use tether_core::Tether;

use crate::client::{self, Client};

/// The checks and the ask are the executors' (core), so the operations can answer with them.
pub use tether_core::executor::{Check, DoctorAsk as Ask};

pub async fn run(t: &Tether, ask: &Ask) -> Vec<Check> {
    let mut out = Vec::new();
    let settings = t.settings().unwrap_or_default();
    let base = match client::base_url(settings.cloud.api_url.as_deref()) {
        Ok(b) => {
            out.push(Check::ok("api_url", b.clone()));
            Some(b)
        }
        Err(e) => {
            out.push(Check::fail(
                "api_url",
                e.message,
                "fix settings cloud.api_url or TETHER_CURSOR_API_URL (https, or http to 127.0.0.1)",
            ));
            None
        }
    };
    let key = match tether_core::token::cursor_key(&t.paths) {
        Ok(Some((k, src))) => {
            let from = match src {
                tether_core::token::KeySource::Env => "from CURSOR_API_KEY",
                tether_core::token::KeySource::Stored => "stored by tether cloud login",
            };
            out.push(Check::ok("key", format!("set, {from}")));
            Some(k)
        }
        Ok(None) => {
            out.push(Check::fail(
                "key",
                "no Cursor API key",
                "tether cloud login (a key from cursor.com/dashboard → Integrations)",
            ));
            None
        }
        Err(e) => {
            out.push(Check::fail("key", e.to_string(), "tether token doctor"));
            None
        }
    };
    let client = match (base, key) {
        (Some(b), Some(k)) => Client::new(&b, k).ok(),
        _ => None,
    };
    if let Some(c) = &client {
        match c.me().await {
            Ok(me) => out.push(Check::ok(
                "key_valid",
                format!(
                    "Cursor knows it: {}{}",
                    me.api_key_name.unwrap_or_else(|| "a key".into()),
                    me.user_email.map(|e| format!(" of {e}")).unwrap_or_default()
                ),
            )),
            Err(e) => out.push(Check::fail("key_valid", e.to_string(), "tether cloud login with a current key")),
        }
    }
    let repo = ask.repo.clone().or_else(|| {
        std::env::current_dir().ok().filter(|_| ask.cwd_repo).and_then(|d| tether_board::cloud::git_origin(&d))
    });
    match repo.as_deref().map(tether_board::cloud::normalize_repo) {
        None if !ask.cwd_repo => {}
        None => out.push(Check::warn(
            "repository",
            "none given and this folder has no git origin",
            "give --repo https://github.com/org/repo",
        )),
        Some(Err(e)) => out.push(Check::fail("repository", e.to_string(), "give https://github.com/org/repo")),
        Some(Ok(r)) if ask.verify_repo => match &client {
            Some(c) => match c.repositories().await {
                Ok(list) if list.iter().any(|u| u.trim_end_matches(".git").eq_ignore_ascii_case(&r)) => {
                    out.push(Check::ok("repository", format!("{r}: the key reaches it")))
                }
                Ok(_) => out.push(Check::fail(
                    "repository",
                    format!("{r}: not among the repositories the key reaches"),
                    "connect GitHub for it in Cursor (cursor.com/dashboard → Integrations)",
                )),
                Err(e) => out.push(Check::warn("repository", e.to_string(), "try again in a minute")),
            },
            None => out.push(Check::warn(
                "repository",
                format!("{r}: looks right; not verified without a key"),
                "tether cloud login",
            )),
        },
        Some(Ok(r)) => out.push(Check::ok("repository", format!("{r} (access not checked: --verify-repo)"))),
    }
    if let (Some(m), Some(c)) = (&ask.model, &client) {
        match c.models().await {
            Ok(list) if list.iter().any(|x| &x.id == m || x.aliases.contains(m)) => {
                out.push(Check::ok("model", format!("{m} is offered")))
            }
            Ok(list) => out.push(Check::fail(
                "model",
                format!("{m} is not offered"),
                format!("one of: {}", list.iter().map(|x| x.id.as_str()).collect::<Vec<_>>().join(", ")),
            )),
            Err(e) => out.push(Check::warn("model", e.to_string(), "try again")),
        }
    }
    match &settings.cloud.public_url {
        None => out.push(Check::ok("public_url", "not set: Tether follows cloud runs by their stream and by polling")),
        Some(u) => match tether_core::settings::check_remote_url("public URL", u) {
            Ok(u) => {
                out.push(reachable(&u).await);
                match tether_core::token::webhook_secret(&t.paths) {
                    Ok(s) if s.len() >= 32 => {
                        out.push(Check::ok("webhook_secret", format!("{} characters, kept with the token", s.len())))
                    }
                    Ok(_) => out.push(Check::fail(
                        "webhook_secret",
                        "shorter than Cursor's 32 characters",
                        "tether cloud webhook --public-url … again",
                    )),
                    Err(e) => out.push(Check::fail("webhook_secret", e.to_string(), "tether token doctor")),
                }
            }
            Err(e) => out.push(Check::fail("public_url", e.to_string(), "tether cloud webhook --public-url https://…")),
        },
    }
    out
}

/// Whether our own `/health` answers through the public URL (the tunnel is up and leads here).
async fn reachable(public: &str) -> Check {
    crate::tls::install_tls_provider();
    let url = format!("{public}/health");
    let fix = "start your tunnel to this Tether's port (`tether status` shows it)";
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(std::time::Duration::from_secs(8))
        .build();
    let resp = match http {
        Ok(c) => c.get(&url).send().await,
        Err(e) => return Check::fail("public_url", e.to_string(), fix),
    };
    match resp {
        Ok(r) if r.status().is_success() => match r.json::<serde_json::Value>().await {
            Ok(v) if v.get("status").is_some() && v.get("mcp_sessions").is_some() => {
                Check::ok("public_url", format!("{public}: this Tether answers there"))
            }
            _ => Check::fail("public_url", format!("{url} answers, but not as Tether"), fix),
        },
        Ok(r) => Check::fail("public_url", format!("{url} answered {}", r.status()), fix),
        Err(e) => Check::fail("public_url", format!("{url}: {e}"), fix),
    }
}
