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
pub fn parse_remote(url: &str) -> Result<RepoRef> {
    let u = url.trim();
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
        _ => Err(Error::NotGitHub(url.to_owned())),
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
}
