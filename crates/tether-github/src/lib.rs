//! GitHub's REST API, as much as a run's pull request needs: the open pull request for a branch,
//! and opening one. Blocking (it is called from an operation, off the async threads), with the
//! person's token as a bearer; the API base is github.com's, or an Enterprise server's
//! `https://host/api/v3`, or a test's fake. Also reads a repository's owner and name from its
//! remote URL (https, ssh, scp-like).
//!
//! Never logs or returns the token. Depends on nothing of Tether's.

use std::time::Duration;

use serde::{Deserialize, Serialize};

pub const DEFAULT_API: &str = "https://api.github.com";

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(
        "GitHub refused the token (401): log in again with `tether github login --token-stdin`, or set GITHUB_TOKEN"
    )]
    Unauthorized,
    #[error(
        "GitHub says the token may not do this ({0}); it needs the repository's pull requests (and contents) permission"
    )]
    Forbidden(String),
    #[error("GitHub has no repository {0} (or the token cannot see it)")]
    NoRepo(String),
    #[error("GitHub refused the pull request: {0}")]
    Invalid(String),
    #[error("GitHub answered {status}: {message}")]
    Api { status: u16, message: String },
    #[error("could not reach GitHub at {url}: {message}")]
    Unreachable { url: String, message: String },
    #[error(
        "{0} is not a GitHub remote URL (https://host/owner/name, git@host:owner/name or ssh://git@host/owner/name)"
    )]
    NotGitHub(String),
    /// The remote URL carries a user and password or token (`https://user:pass@host/…`): the
    /// URL is given back with them replaced, never as it is.
    #[error(
        "the remote URL {0} carries credentials: Tether does not push through a URL holding a password or token (it would travel in logs and messages); remove them (git remote set-url origin https://host/owner/name) and let git's credential helper or ssh keep them"
    )]
    Credentials(String),
}

/// `url` with any user and password replaced by `***` (`https://***@host/o/n`), for anything
/// printed, logged or kept: an https remote may hold a token there. A URL without them, and an
/// scp-like `git@host:o/n` (its user is not a secret), are given back as they are.
pub fn redact_userinfo(url: &str) -> std::borrow::Cow<'_, str> {
    let Some(i) = url.find("://") else { return url.into() };
    let rest = &url[i + 3..];
    let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
    match authority.rfind('@') {
        Some(at) => format!("{}://***@{}", &url[..i], &rest[at + 1..]).into(),
        None => url.into(),
    }
}

/// Whether `url` carries a secret in its user part: any user or password of an http(s) URL
/// (a token is often the user), or a password of any other (`ssh://user:pass@host`).
fn has_credentials(url: &str) -> bool {
    let Some(i) = url.find("://") else { return false };
    let rest = &url[i + 3..];
    let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
    let Some(at) = authority.rfind('@') else { return false };
    let scheme = url[..i].to_ascii_lowercase();
    scheme == "http" || scheme == "https" || authority[..at].contains(':')
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A repository's owner and name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepoRef {
    pub owner: String,
    pub name: String,
}

impl std::fmt::Display for RepoRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.owner, self.name)
    }
}

/// Owner and name from `https://github.com/o/n(.git)`, `git@github.com:o/n.git` or
/// `ssh://git@host(:port)/o/n.git`.
///
/// A URL carrying credentials is refused ([`Error::Credentials`]), and no error repeats them.
pub fn parse_remote(url: &str) -> Result<RepoRef> {
    let u = url.trim();
    if has_credentials(u) {
        return Err(Error::Credentials(redact_userinfo(u).into_owned()));
    }
    let path = if let Some(rest) = u.strip_prefix("https://").or_else(|| u.strip_prefix("http://")) {
        rest.split_once('/').map(|(_, p)| p)
    } else if let Some(rest) = u.strip_prefix("ssh://") {
        rest.split_once('/').map(|(_, p)| p)
    } else if let Some((host, p)) = u.split_once(':') {
        // scp-like: user@host:owner/name
        (host.contains('@') && !host.contains('/')).then_some(p)
    } else {
        None
    };
    let path = path.map(|p| p.trim_end_matches('/').trim_end_matches(".git"));
    match path.and_then(|p| p.split_once('/')) {
        Some((o, n)) if !o.is_empty() && !n.is_empty() && !n.contains('/') => {
            Ok(RepoRef { owner: o.to_owned(), name: n.to_owned() })
        }
        _ => Err(Error::NotGitHub(redact_userinfo(url).into_owned())),
    }
}

/// A pull request as Tether keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PullRequest {
    pub number: i64,
    pub html_url: String,
    #[serde(default)]
    pub state: String,
    #[serde(default)]
    pub merged_at: Option<String>,
}

/// What a new pull request says.
#[derive(Debug, Clone, Serialize)]
pub struct NewPullRequest<'a> {
    pub title: &'a str,
    pub body: &'a str,
    pub head: &'a str,
    pub base: &'a str,
    pub draft: bool,
}

pub struct Client {
    api: String,
    token: String,
    http: reqwest::blocking::Client,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client").field("api", &self.api).finish_non_exhaustive()
    }
}

impl Client {
    pub fn new(api: &str, token: &str) -> Result<Self> {
        // reqwest is built without a TLS provider: ring, as for Tether's other clients.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::blocking::Client::builder()
            .timeout(Duration::from_secs(30))
            .user_agent(concat!("tether/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| Error::Unreachable { url: api.to_owned(), message: e.to_string() })?;
        Ok(Self { api: api.trim_end_matches('/').to_owned(), token: token.to_owned(), http })
    }

    fn send(&self, req: reqwest::blocking::RequestBuilder, repo: &RepoRef) -> Result<serde_json::Value> {
        let res = req
            .bearer_auth(&self.token)
            .header("Accept", "application/vnd.github+json")
            .header("X-GitHub-Api-Version", "2022-11-28")
            .send()
            .map_err(|e| Error::Unreachable { url: self.api.clone(), message: e.without_url().to_string() })?;
        let status = res.status().as_u16();
        let body: serde_json::Value = res.json().unwrap_or(serde_json::Value::Null);
        let message = || {
            let mut m = body["message"].as_str().unwrap_or("").to_owned();
            let details: Vec<&str> = body["errors"]
                .as_array()
                .map(|a| a.iter().filter_map(|e| e["message"].as_str().or(e["code"].as_str())).collect())
                .unwrap_or_default();
            if !details.is_empty() {
                m = format!("{m}: {}", details.join("; "));
            }
            m
        };
        match status {
            200..=299 => Ok(body),
            401 => Err(Error::Unauthorized),
            403 => Err(Error::Forbidden(message())),
            404 => Err(Error::NoRepo(repo.to_string())),
            422 => Err(Error::Invalid(message())),
            _ => Err(Error::Api { status, message: message() }),
        }
    }

    /// The open pull request from `branch` (in `repo` itself), if there is one.
    pub fn open_pull(&self, repo: &RepoRef, branch: &str) -> Result<Option<PullRequest>> {
        let url = format!("{}/repos/{}/{}/pulls", self.api, repo.owner, repo.name);
        let head = format!("{}:{branch}", repo.owner);
        let url = reqwest::Url::parse_with_params(&url, &[("head", head.as_str()), ("state", "open")])
            .map_err(|e| Error::Unreachable { url: self.api.clone(), message: e.to_string() })?;
        let v = self.send(self.http.get(url), repo)?;
        let list: Vec<PullRequest> = serde_json::from_value(v).unwrap_or_default();
        Ok(list.into_iter().next())
    }

    pub fn create_pull(&self, repo: &RepoRef, new: &NewPullRequest<'_>) -> Result<PullRequest> {
        let url = format!("{}/repos/{}/{}/pulls", self.api, repo.owner, repo.name);
        let v = self.send(self.http.post(url).json(new), repo)?;
        serde_json::from_value(v)
            .map_err(|e| Error::Api { status: 201, message: format!("an answer Tether cannot read: {e}") })
    }

    /// A pull request by number (its state, whether merged).
    pub fn pull(&self, repo: &RepoRef, number: i64) -> Result<PullRequest> {
        let url = format!("{}/repos/{}/{}/pulls/{number}", self.api, repo.owner, repo.name);
        let v = self.send(self.http.get(url), repo)?;
        serde_json::from_value(v)
            .map_err(|e| Error::Api { status: 200, message: format!("an answer Tether cannot read: {e}") })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owner_and_name_come_from_every_remote_shape() {
        let want = RepoRef { owner: "acme".into(), name: "shop".into() };
        for u in [
            "https://github.com/acme/shop",
            "https://github.com/acme/shop.git",
            "https://ghe.example.com/acme/shop.git/",
            "git@github.com:acme/shop.git",
            "ssh://git@github.com:22/acme/shop.git",
        ] {
            assert_eq!(parse_remote(u).unwrap(), want, "{u}");
        }
        for bad in ["/srv/git/shop.git", "https://github.com/acme", "file:///x/y", "shop"] {
            assert!(parse_remote(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_remote_with_credentials_is_refused_without_repeating_them() {
        for (u, shown) in [
            ("https://user:hunter2pass@github.com/acme/shop.git", "https://***@github.com/acme/shop.git"),
            ("https://ghp_tok3nSecret@github.com/acme/shop", "https://***@github.com/acme/shop"),
            ("http://x-access-token:tok3nSecret@ghe.local/acme/shop", "http://***@ghe.local/acme/shop"),
            ("ssh://git:hunter2pass@github.com/acme/shop.git", "ssh://***@github.com/acme/shop.git"),
            ("https://user:hunter2pass@github.com/acme", "https://***@github.com/acme"),
        ] {
            let e = parse_remote(u).unwrap_err();
            let text = e.to_string();
            assert!(matches!(e, Error::Credentials(_)), "{u}: {e:?}");
            assert!(text.contains(shown), "{text}");
            for secret in ["hunter2pass", "tok3nSecret"] {
                assert!(!text.contains(secret) && !format!("{e:?}").contains(secret), "{text}");
            }
        }
        // An ssh user is a name, not a secret.
        assert!(parse_remote("ssh://git@github.com/acme/shop.git").is_ok());
        assert_eq!(redact_userinfo("git@github.com:acme/shop.git"), "git@github.com:acme/shop.git");
        assert_eq!(redact_userinfo("https://github.com/a@b/c"), "https://github.com/a@b/c");
        let e = parse_remote("ftp://u:p4ssw0rdX@host/nothing").unwrap_err().to_string();
        assert!(!e.contains("p4ssw0rdX"), "{e}");
    }
}
