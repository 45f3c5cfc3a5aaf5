//! A fake of GitHub's REST API for pull requests, built from its documented shapes (REST
//! 2022-11-28): `GET /repos/{owner}/{repo}/pulls?head=owner:branch&state=open` lists the open
//! ones; `POST /repos/{owner}/{repo}/pulls` opens one — 201 with `number` and `html_url`, 422
//! "Validation Failed" when one is open for the head already or head equals base, 401 "Bad
//! credentials" for a token other than the fake's, 404 for a repository it was not told of;
//! `GET …/pulls/{n}` reads one. Loopback, any port, until dropped; it records the requests.

use std::sync::{Arc, Mutex};

use axum::Json;
use axum::Router;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::{Value, json};

#[derive(Debug, Clone, Default)]
struct Pull {
    number: i64,
    head: String,
    base: String,
    title: String,
    body: String,
    merged: bool,
}

#[derive(Default)]
struct FakeState {
    token: String,
    repos: Vec<String>,
    pulls: Vec<(String, Pull)>,
}

type Shared = Arc<Mutex<FakeState>>;

pub struct FakeGitHub {
    /// The API base to give Tether (`http://127.0.0.1:PORT`).
    pub url: String,
    state: Shared,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl FakeGitHub {
    /// Serves `repos` (`owner/name`) to `token`. Call inside a Tokio runtime.
    pub async fn start(token: &str, repos: &[&str]) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("binding the fake GitHub");
        let url = format!("http://{}", listener.local_addr().expect("its address"));
        let state: Shared = Arc::new(Mutex::new(FakeState {
            token: token.to_owned(),
            repos: repos.iter().map(|r| (*r).to_owned()).collect(),
            ..Default::default()
        }));
        let app = Router::new()
            .route("/repos/{owner}/{repo}/pulls", get(list).post(create))
            .route("/repos/{owner}/{repo}/pulls/{number}", get(one))
            .with_state(Arc::clone(&state));
        Self { url, state, stop: Some(crate::serve_until_stopped(listener, app)) }
    }

    /// The pull requests opened: (repository, head, base, title, body).
    pub fn pulls(&self) -> Vec<(String, String, String, String, String)> {
        let s = self.state.lock().unwrap();
        s.pulls
            .iter()
            .map(|(r, p)| (r.clone(), p.head.clone(), p.base.clone(), p.title.clone(), p.body.clone()))
            .collect()
    }

    /// Marks a pull request merged (as if the person merged it on GitHub).
    pub fn merge(&self, number: i64) {
        let mut s = self.state.lock().unwrap();
        if let Some((_, p)) = s.pulls.iter_mut().find(|(_, p)| p.number == number) {
            p.merged = true;
        }
    }
}

impl Drop for FakeGitHub {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
    }
}

fn error(status: StatusCode, message: &str, errors: Value) -> Response {
    let doc = "https://docs.github.com/rest/pulls/pulls";
    (status, Json(json!({"message": message, "errors": errors, "documentation_url": doc}))).into_response()
}

/// Checks the bearer and the repository; the repository's key.
fn guard(s: &FakeState, headers: &HeaderMap, owner: &str, repo: &str) -> Result<String, Box<Response>> {
    let auth = headers.get("authorization").and_then(|v| v.to_str().ok()).unwrap_or("");
    let token = auth.strip_prefix("Bearer ").or_else(|| auth.strip_prefix("token ")).unwrap_or("");
    if token.is_empty() || token != s.token {
        return Err(Box::new(error(StatusCode::UNAUTHORIZED, "Bad credentials", Value::Null)));
    }
    let key = format!("{owner}/{repo}");
    if !s.repos.contains(&key) {
        return Err(Box::new(error(StatusCode::NOT_FOUND, "Not Found", Value::Null)));
    }
    Ok(key)
}

fn pull_json(key: &str, p: &Pull) -> Value {
    json!({"number": p.number, "html_url": format!("https://github.com/{key}/pull/{}", p.number),
           "state": if p.merged { "closed" } else { "open" }, "merged_at": p.merged.then_some("2026-11-25T10:00:00Z"),
           "title": p.title, "head": {"ref": p.head}, "base": {"ref": p.base}})
}

async fn list(
    State(s): State<Shared>,
    headers: HeaderMap,
    Path((owner, repo)): Path<(String, String)>,
    uri: Uri,
) -> Response {
    let s = s.lock().unwrap();
    let key = match guard(&s, &headers, &owner, &repo) {
        Ok(k) => k,
        Err(r) => return *r,
    };
    let head = uri.query().unwrap_or("").split('&').find_map(|kv| kv.strip_prefix("head=")).map(|h| {
        let h = h.replace("%3A", ":").replace("%3a", ":").replace("%2F", "/").replace("%2f", "/");
        h.split_once(':').map_or(h.as_str(), |(_, b)| b).to_owned()
    });
    let open: Vec<Value> = s
        .pulls
        .iter()
        .filter(|(r, p)| r == &key && !p.merged && head.as_ref().is_none_or(|h| &p.head == h))
        .map(|(_, p)| pull_json(&key, p))
        .collect();
    Json(Value::Array(open)).into_response()
}

async fn create(
    State(s): State<Shared>,
    headers: HeaderMap,
    Path((owner, repo)): Path<(String, String)>,
    Json(body): Json<Value>,
) -> Response {
    let mut s = s.lock().unwrap();
    let key = match guard(&s, &headers, &owner, &repo) {
        Ok(k) => k,
        Err(r) => return *r,
    };
    let field = |k: &str| body[k].as_str().unwrap_or("").to_owned();
    let (head, base, title) = (field("head"), field("base"), field("title"));
    let missing: Vec<Value> = [("title", &title), ("head", &head), ("base", &base)]
        .iter()
        .filter(|(_, v)| v.is_empty())
        .map(|(k, _)| json!({"resource": "PullRequest", "field": k, "code": "missing_field"}))
        .collect();
    if !missing.is_empty() {
        return error(StatusCode::UNPROCESSABLE_ENTITY, "Validation Failed", Value::Array(missing));
    }
    if head == base {
        let e = json!([{"resource": "PullRequest", "code": "custom", "message": format!("No commits between {base} and {head}")}]);
        return error(StatusCode::UNPROCESSABLE_ENTITY, "Validation Failed", e);
    }
    if s.pulls.iter().any(|(r, p)| r == &key && p.head == head && !p.merged) {
        let msg = format!("A pull request already exists for {owner}:{head}.");
        return error(
            StatusCode::UNPROCESSABLE_ENTITY,
            "Validation Failed",
            json!([{"resource": "PullRequest", "code": "custom", "message": msg}]),
        );
    }
    let number = s.pulls.len() as i64 + 1;
    let p = Pull { number, head, base, title, body: field("body"), merged: false };
    let out = pull_json(&key, &p);
    s.pulls.push((key, p));
    (StatusCode::CREATED, Json(out)).into_response()
}

async fn one(
    State(s): State<Shared>,
    headers: HeaderMap,
    Path((owner, repo, number)): Path<(String, String, i64)>,
) -> Response {
    let s = s.lock().unwrap();
    let key = match guard(&s, &headers, &owner, &repo) {
        Ok(k) => k,
        Err(r) => return *r,
    };
    match s.pulls.iter().find(|(r, p)| r == &key && p.number == number) {
        Some((_, p)) => Json(pull_json(&key, p)).into_response(),
        None => error(StatusCode::NOT_FOUND, "Not Found", Value::Null),
    }
}
