//! A faithful local fake of Cursor's Cloud Agents API, built from its documented shapes
//! (`../shared/reference/cursor-agents-2026.md` §1): v1 agents, runs, the run stream (SSE with
//! ids, a sticky first `status` frame, `Last-Event-ID` resume, `410 stream_expired`), cancel
//! (`409 run_not_cancellable`), follow-ups (`409 agent_busy`), `agentId` conflicts, the error
//! body `{error:{code,message}}`, and v0 launch with a signed `statusChange` webhook.
//!
//! A run's script comes from directives in its prompt: `[cloud:hang]` (runs until cancelled),
//! `[cloud:drop=N]` (the first stream connection closes after N frames), `[cloud:gone]` (the
//! stream is expired: `410`; read the run's status instead), `[cloud:status=X]` (ends
//! with status X, e.g. `ERROR`, `EXPIRED`, or one Cursor never documented), `[cloud:malformed]`
//! (one frame's data is not JSON), `[cloud:step=MS]` (time between frames, default 30 ms),
//! `[cloud:minutes=N]` (the duration it reports: minutes of fake time, no real waiting),
//! `[cloud:nobranch]`, `[cloud:tokens=N]` (what the run spends by its end, default 1000, growing
//! with its frames while it runs; `GET /v1/agents/{id}/usage?runId=`), `[cloud:cost=X]` (its
//! cost in dollars at the end; `null` as Cursor may answer; default 0.002 per 1000 tokens). Faults for any path are queued with `POST /_fake/faults` (or
//! [`FakeCursorApi::fault`]): a status, a body, `Retry-After`, for the next N requests.
//! `GET /_fake/requests` lists what was asked (never the key itself, only whether it matched).

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::sse::{Event, Sse};
use axum::response::{IntoResponse, Response};
use hmac::{Hmac, Mac};
use serde_json::{Value, json};
use sha2::Sha256;

type Shared = Arc<Mutex<FakeState>>;

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Fault {
    /// Only this method (any when absent).
    #[serde(default)]
    pub method: Option<String>,
    /// Requests whose path starts with this.
    pub path: String,
    pub status: u16,
    /// The body (default: Cursor's error shape with a code for the status).
    #[serde(default)]
    pub body: Option<String>,
    #[serde(default)]
    pub retry_after: Option<u64>,
    /// How many requests it answers (default 1).
    #[serde(default = "one")]
    pub times: u32,
}

fn one() -> u32 {
    1
}

/// A request as the fake saw it.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Seen {
    pub method: String,
    pub path: String,
    /// `ok`, `missing` or `wrong`.
    pub auth: String,
    pub last_event_id: Option<String>,
    pub idempotency_key: Option<String>,
    pub body: Value,
}

#[derive(Debug, Default)]
pub struct FakeState {
    key: String,
    agents: HashMap<String, Agent>,
    runs: HashMap<String, FakeRun>,
    faults: Vec<Fault>,
    seen: Vec<Seen>,
    repo_calls: Vec<i64>,
    seq: u64,
}

#[derive(Debug, Clone)]
struct Agent {
    id: String,
    name: String,
    repo: String,
    created: i64,
    runs: Vec<String>,
    archived: bool,
    webhook: Option<(String, String)>,
}

#[derive(Debug, Clone)]
struct FakeRun {
    id: String,
    agent: String,
    prompt: String,
    created: i64,
    step: i64,
    hang: bool,
    gone: bool,
    drop_after: Option<usize>,
    malformed: bool,
    end_status: String,
    minutes: i64,
    branch: bool,
    cancelled_at: Option<i64>,
    tokens: i64,
    cost: Option<f64>,
    connections: u32,
    polls: u32,
    hook_sent: bool,
}

fn now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0)
}

fn iso(ms: i64) -> String {
    let secs = ms / 1000;
    let (d, s) = (secs / 86_400, secs % 86_400);
    // Civil date from days since the epoch (Howard Hinnant's algorithm).
    let z = d + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z", s / 3600, s % 3600 / 60, s % 60, ms % 1000)
}

fn directive(prompt: &str, name: &str) -> Option<String> {
    let open = format!("[cloud:{name}");
    let i = prompt.find(&open)?;
    let rest = &prompt[i + open.len()..];
    let end = rest.find(']')?;
    Some(rest[..end].strip_prefix('=').unwrap_or("").to_owned())
}

fn plain(prompt: &str) -> String {
    let mut out = String::new();
    let mut rest = prompt;
    while let Some(i) = rest.find("[cloud:") {
        out.push_str(&rest[..i]);
        rest = rest[i..].find(']').map_or("", |e| &rest[i + e + 1..]);
    }
    out.push_str(rest);
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

impl FakeRun {
    fn new(id: String, agent: String, prompt: String) -> Self {
        let d = |n| directive(&prompt, n);
        Self {
            id,
            agent,
            created: now(),
            step: d("step").and_then(|s| s.parse().ok()).unwrap_or(30),
            hang: d("hang").is_some(),
            gone: d("gone").is_some(),
            drop_after: d("drop").and_then(|s| s.parse().ok()),
            malformed: d("malformed").is_some(),
            end_status: d("status").filter(|s| !s.is_empty()).unwrap_or_else(|| "FINISHED".into()),
            minutes: d("minutes").and_then(|s| s.parse().ok()).unwrap_or(3),
            branch: d("nobranch").is_none(),
            tokens: d("tokens").and_then(|s| s.parse().ok()).unwrap_or(1000),
            cost: match d("cost") {
                Some(c) if c == "null" => None,
                Some(c) => c.parse().ok(),
                None => Some(d("tokens").and_then(|s| s.parse::<f64>().ok()).unwrap_or(1000.0) * 2e-6),
            },
            prompt,
            cancelled_at: None,
            connections: 0,
            polls: 0,
            hook_sent: false,
        }
    }

    /// The frames of the run in order, each with the time it is due.
    fn frames(&self, repo: &str) -> Vec<(Option<String>, &'static str, String, i64)> {
        let reply = format!("Worked on: {}", plain(&self.prompt));
        let third = reply.len() / 3;
        let cut = |n: usize| reply.char_indices().map(|(i, _)| i).find(|i| *i >= n).unwrap_or(reply.len());
        let (a, b) = (cut(third), cut(2 * third));
        let mut v: Vec<(&'static str, String)> = vec![
            ("thinking", json!({"text": "Looking at the repository first."}).to_string()),
            ("tool_call", json!({"callId": "call-1", "name": "read_file", "status": "running", "args": {"path": "README.md"}}).to_string()),
            ("tool_call", json!({"callId": "call-1", "name": "read_file", "status": "completed", "args": {"path": "README.md"}, "result": "# shop"}).to_string()),
        ];
        if self.malformed {
            v.push(("assistant", "{\"text\": \"half".into()));
        }
        v.push(("heartbeat", "{}".into()));
        for part in [&reply[..a], &reply[a..b], &reply[b..]] {
            v.push(("assistant", json!({ "text": part }).to_string()));
        }
        let mut out: Vec<(Option<String>, &'static str, String, i64)> = v
            .into_iter()
            .enumerate()
            .map(|(i, (e, d))| {
                let due = self.created + (i as i64 + 1) * self.step;
                (Some(format!("{}-{i}", self.created + i as i64)), e, d, due)
            })
            .collect();
        if self.hang && self.cancelled_at.is_none() {
            return out;
        }
        let n = out.len() as i64;
        let (status, due) = match self.cancelled_at {
            Some(c) => ("CANCELLED".to_owned(), c),
            None => (self.end_status.clone(), self.created + (n + 1) * self.step),
        };
        let id = Some(format!("{}-{n}", self.created + n));
        out.retain(|f| f.3 <= due || self.cancelled_at.is_none());
        out.push((id.clone(), "result", self.result(repo, &status).to_string(), due));
        out.push((id, "done", "{}".into(), due));
        out
    }

    fn git(&self, repo: &str) -> Value {
        if !self.branch {
            return json!({ "branches": [] });
        }
        let short = repo.trim_start_matches("https://").trim_end_matches(".git");
        json!({ "branches": [{ "repoUrl": short, "branch": format!("cursor/{}", &self.agent[3..11]),
                                "prUrl": format!("https://{short}/pull/7") }] })
    }

    fn result(&self, repo: &str, status: &str) -> Value {
        let text = if status == "FINISHED" { format!("Worked on: {}", plain(&self.prompt)) } else { String::new() };
        json!({ "runId": self.id, "status": status, "text": text, "durationMs": self.minutes * 60_000, "git": self.git(repo) })
    }

    fn status(&self) -> String {
        if self.cancelled_at.is_some() {
            return "CANCELLED".into();
        }
        let end = self.created + (self.frames_len() as i64 + 1) * self.step;
        if !self.hang && now() >= end {
            self.end_status.clone()
        } else if now() - self.created < self.step {
            "CREATING".into()
        } else {
            "RUNNING".into()
        }
    }

    /// What the run has spent by now: its tokens in proportion to the frames due (all once it
    /// ended; up to the cancel when cancelled), split 60/20/15/5 into input, output, cache read
    /// and cache write; its cost only when it ended.
    fn usage(&self) -> Value {
        let n = self.frames_len() as i64 + 1;
        let upto = self.cancelled_at.unwrap_or_else(now);
        let due = if self.hang {
            (upto - self.created) / self.step.max(1)
        } else {
            ((upto - self.created) / self.step.max(1)).min(n)
        };
        let spent = (self.tokens * due.max(0) / n).min(self.tokens);
        let part = |pct: i64| spent * pct / 100;
        let usage = json!({ "inputTokens": part(60), "outputTokens": part(20), "cacheReadTokens": part(15),
                            "cacheWriteTokens": spent - part(60) - part(20) - part(15) });
        let ended = !matches!(self.status().as_str(), "CREATING" | "RUNNING");
        let cost = if ended { json!(self.cost) } else { Value::Null };
        json!({ "id": self.id, "usage": usage, "cost": cost })
    }

    fn frames_len(&self) -> usize {
        7 + usize::from(self.malformed)
    }

    fn json(&self, repo: &str) -> Value {
        let status = self.status();
        let mut v = json!({ "id": self.id, "agentId": self.agent, "status": status, "createdAt": iso(self.created),
                            "updatedAt": iso(now()) });
        if !matches!(status.as_str(), "CREATING" | "RUNNING") {
            v["git"] = self.git(repo);
            v["durationMs"] = json!(self.minutes * 60_000);
            if status == "FINISHED" {
                v["result"] = json!(format!("Worked on: {}", plain(&self.prompt)));
            } else if status == "ERROR" {
                v["error"] = json!({ "message": "the agent hit an error in its VM", "code": "agent_error" });
            }
        }
        v
    }
}

fn err(status: StatusCode, code: &str, message: &str) -> Response {
    (status, axum::Json(json!({ "error": { "code": code, "message": message } }))).into_response()
}

impl Agent {
    fn json(&self, state: &FakeState) -> Value {
        let latest = self.runs.last().and_then(|r| state.runs.get(r));
        let status = if self.archived {
            "ARCHIVED"
        } else if latest.is_some_and(|r| matches!(r.status().as_str(), "CREATING" | "RUNNING")) {
            "ACTIVE"
        } else {
            "IDLE"
        };
        json!({ "id": self.id, "name": self.name, "status": status, "env": { "type": "cloud" },
                "repos": [{ "url": self.repo }], "url": format!("https://cursor.com/agents/{}", self.id),
                "createdAt": iso(self.created), "updatedAt": iso(now()), "latestRunId": self.runs.last() })
    }
}

/// The fake, serving on a loopback port until dropped.
pub struct FakeCursorApi {
    pub url: String,
    state: Shared,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl FakeCursorApi {
    /// Starts on 127.0.0.1, any port, accepting `key`. Call inside a Tokio runtime.
    pub async fn start(key: &str) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("binding the fake Cursor API");
        let url = format!("http://{}", listener.local_addr().expect("its address"));
        let state: Shared = Arc::new(Mutex::new(FakeState { key: key.to_owned(), ..Default::default() }));
        let app = router(Arc::clone(&state));
        Self { url, state, stop: Some(crate::serve_until_stopped(listener, app)) }
    }

    pub fn fault(&self, f: Fault) {
        self.state.lock().unwrap().faults.push(f);
    }

    pub fn requests(&self) -> Vec<Seen> {
        self.state.lock().unwrap().seen.clone()
    }

    /// Cursor's status of a run now.
    pub fn run_status(&self, run: &str) -> Option<String> {
        self.state.lock().unwrap().runs.get(run).map(FakeRun::status)
    }
}

impl Drop for FakeCursorApi {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
    }
}

/// Serves the fake on `listener` (the `tether-fake-cursor-api` binary).
pub async fn serve(listener: tokio::net::TcpListener, key: String) -> std::io::Result<()> {
    let state: Shared = Arc::new(Mutex::new(FakeState { key, ..Default::default() }));
    axum::serve(listener, router(state)).await
}

fn router(state: Shared) -> Router {
    use axum::routing::{get, post};
    Router::new()
        .route("/_fake/faults", post(add_faults))
        .route("/_fake/requests", get(list_seen))
        .route("/v1/me", get(me))
        .route("/v1/models", get(models))
        .route("/v1/repositories", get(repositories))
        .route("/v1/agents", post(create).get(list_agents))
        .route("/v1/agents/{id}", get(get_agent).delete(delete_agent))
        .route("/v1/agents/{id}/archive", post(archive))
        .route("/v1/agents/{id}/runs", post(followup))
        .route("/v1/agents/{id}/runs/{run}", get(get_run))
        .route("/v1/agents/{id}/runs/{run}/stream", get(stream))
        .route("/v1/agents/{id}/runs/{run}/cancel", post(cancel))
        .route("/v1/agents/{id}/usage", get(usage))
        .route("/v0/agents", post(create_v0))
        .layer(axum::middleware::from_fn_with_state(Arc::clone(&state), gate))
        .with_state(state)
}

/// Logs the request, checks the key, and answers a queued fault instead when one matches.
async fn gate(State(state): State<Shared>, req: axum::extract::Request, next: axum::middleware::Next) -> Response {
    let path = req.uri().path().to_owned();
    if path.starts_with("/_fake/") {
        return next.run(req).await;
    }
    let (parts, body) = req.into_parts();
    let bytes = axum::body::to_bytes(body, 16 << 20).await.unwrap_or_default();
    let h = |k: &str| parts.headers.get(k).and_then(|v| v.to_str().ok()).map(str::to_owned);
    let fault = {
        let mut s = state.lock().unwrap();
        let auth = match h("authorization") {
            None => "missing",
            Some(a) if a == format!("Bearer {}", s.key) => "ok",
            Some(_) => "wrong",
        };
        s.seen.push(Seen {
            method: parts.method.to_string(),
            path: path.clone(),
            auth: auth.into(),
            last_event_id: h("last-event-id"),
            idempotency_key: h("idempotency-key"),
            body: serde_json::from_slice(&bytes).unwrap_or(Value::Null),
        });
        if auth != "ok" {
            return err(StatusCode::UNAUTHORIZED, "unauthorized", "Invalid API key");
        }
        let i = s.faults.iter().position(|f| {
            path.starts_with(&f.path)
                && f.method.as_deref().is_none_or(|m| m.eq_ignore_ascii_case(parts.method.as_str()))
        });
        i.map(|i| {
            let f = s.faults[i].clone();
            if f.times <= 1 {
                s.faults.remove(i);
            } else {
                s.faults[i].times -= 1;
            }
            f
        })
    };
    if let Some(f) = fault {
        let status = StatusCode::from_u16(f.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let body = f.body.unwrap_or_else(|| {
            let code = match f.status {
                429 => "rate_limit_exceeded",
                409 => "agent_busy",
                s if s >= 500 => "internal_error",
                _ => "validation_error",
            };
            json!({ "error": { "code": code, "message": format!("fake fault {}", f.status) } }).to_string()
        });
        let mut resp = (status, body).into_response();
        resp.headers_mut().insert("content-type", "application/json".parse().unwrap());
        resp.headers_mut().insert("x-request-id", "req-fake-fault".parse().unwrap());
        if let Some(r) = f.retry_after {
            resp.headers_mut().insert("retry-after", r.to_string().parse().unwrap());
            resp.headers_mut().insert("x-ratelimit-remaining", "0".parse().unwrap());
        }
        return resp;
    }
    next.run(axum::extract::Request::from_parts(parts, axum::body::Body::from(bytes))).await
}

async fn add_faults(State(state): State<Shared>, body: Bytes) -> Response {
    let faults: Vec<Fault> = match serde_json::from_slice::<Value>(&body) {
        Ok(v @ Value::Array(_)) => serde_json::from_value(v).unwrap_or_default(),
        Ok(v) => serde_json::from_value(v).map(|f| vec![f]).unwrap_or_default(),
        Err(_) => Vec::new(),
    };
    state.lock().unwrap().faults.extend(faults);
    StatusCode::NO_CONTENT.into_response()
}

async fn list_seen(State(state): State<Shared>) -> Response {
    axum::Json(state.lock().unwrap().seen.clone()).into_response()
}

async fn me() -> Response {
    axum::Json(json!({ "apiKeyName": "fake key", "createdAt": "2026-04-13T10:00:00.000Z", "userId": "u-1",
                        "userEmail": "dev@example.com" }))
    .into_response()
}

async fn models() -> Response {
    axum::Json(json!({ "items": [
        { "id": "composer-2", "displayName": "Composer 2" },
        { "id": "gpt-5.3-codex", "displayName": "GPT-5.3 Codex", "aliases": ["codex"] }
    ] }))
    .into_response()
}

async fn repositories(State(state): State<Shared>) -> Response {
    let mut s = state.lock().unwrap();
    let t = now();
    if s.repo_calls.last().is_some_and(|l| t - l < 60_000) {
        let mut r = err(StatusCode::TOO_MANY_REQUESTS, "rate_limit_exceeded", "1 request per minute");
        r.headers_mut().insert("retry-after", "60".parse().unwrap());
        return r;
    }
    s.repo_calls.push(t);
    axum::Json(
        json!({ "items": [{ "url": "https://github.com/acme/shop" }, { "url": "https://github.com/acme/api" }] }),
    )
    .into_response()
}

fn new_run(s: &mut FakeState, agent: &str, prompt: &str) -> FakeRun {
    s.seq += 1;
    let run = FakeRun::new(format!("run-00000000-0000-4000-8000-{:012x}", s.seq), agent.to_owned(), prompt.to_owned());
    s.runs.insert(run.id.clone(), run.clone());
    if let Some(a) = s.agents.get_mut(agent) {
        a.runs.push(run.id.clone());
    }
    run
}

async fn create(State(state): State<Shared>, body: Bytes) -> Response {
    let Ok(v) = serde_json::from_slice::<Value>(&body) else {
        return err(StatusCode::BAD_REQUEST, "missing_body", "the body is not JSON");
    };
    let Some(prompt) = v.pointer("/prompt/text").and_then(Value::as_str) else {
        return err(StatusCode::BAD_REQUEST, "validation_error", "prompt.text is required");
    };
    let repo = v.pointer("/repos/0/url").and_then(Value::as_str).unwrap_or_default().to_owned();
    let mut s = state.lock().unwrap();
    s.seq += 1;
    let id = v
        .get("agentId")
        .and_then(Value::as_str)
        .map_or_else(|| format!("bc-00000000-0000-4000-8000-{:012x}", s.seq), str::to_owned);
    if s.agents.contains_key(&id) {
        return err(StatusCode::CONFLICT, "agent_id_conflict", "an agent with this id exists");
    }
    let name = v.get("name").and_then(Value::as_str).unwrap_or("agent").to_owned();
    s.agents.insert(
        id.clone(),
        Agent {
            id: id.clone(),
            name,
            repo: repo.clone(),
            created: now(),
            runs: Vec::new(),
            archived: false,
            webhook: None,
        },
    );
    let run = new_run(&mut s, &id, prompt);
    let agent = s.agents[&id].json(&s);
    (StatusCode::CREATED, axum::Json(json!({ "agent": agent, "run": run.json(&repo) }))).into_response()
}

async fn create_v0(State(state): State<Shared>, body: Bytes) -> Response {
    let Ok(v) = serde_json::from_slice::<Value>(&body) else {
        return err(StatusCode::BAD_REQUEST, "missing_body", "the body is not JSON");
    };
    let Some(prompt) = v.pointer("/prompt/text").and_then(Value::as_str) else {
        return err(StatusCode::BAD_REQUEST, "validation_error", "prompt.text is required");
    };
    let hook = v.get("webhook").and_then(|w| {
        Some((w.get("url")?.as_str()?.to_owned(), w.get("secret").and_then(Value::as_str).unwrap_or("").to_owned()))
    });
    if hook.as_ref().is_some_and(|(_, s)| !s.is_empty() && s.len() < 32) {
        return err(StatusCode::BAD_REQUEST, "validation_error", "webhook.secret must be at least 32 characters");
    }
    let repo = v.pointer("/source/repository").and_then(Value::as_str).unwrap_or_default().to_owned();
    let mut s = state.lock().unwrap();
    s.seq += 1;
    let id = format!("bc-00000000-0000-4000-9000-{:012x}", s.seq);
    s.agents.insert(
        id.clone(),
        Agent {
            id: id.clone(),
            name: "agent".into(),
            repo: repo.clone(),
            created: now(),
            runs: Vec::new(),
            archived: false,
            webhook: hook,
        },
    );
    let run = new_run(&mut s, &id, prompt);
    if !run.hang {
        // Cursor posts statusChange when the agent reaches its end, whoever is watching.
        let (state, run_id) = (Arc::clone(&state), run.id.clone());
        let wait = (run.frames_len() as i64 + 2) * run.step;
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(wait as u64)).await;
            send_hook_if_done(&state, &run_id);
        });
    }
    let a = &s.agents[&id];
    axum::Json(json!({ "id": id, "name": a.name, "status": "CREATING", "source": { "repository": repo },
                        "target": { "url": format!("https://cursor.com/agents?id={id}") }, "createdAt": iso(a.created),
                        "latestRunId": a.runs.last() }))
    .into_response()
}

async fn list_agents(State(state): State<Shared>) -> Response {
    let s = state.lock().unwrap();
    let mut items: Vec<&Agent> = s.agents.values().collect();
    items.sort_by_key(|a| std::cmp::Reverse(a.created));
    let items: Vec<Value> =
        items.into_iter().map(|a| json!({ "id": a.id, "name": a.name, "createdAt": iso(a.created) })).collect();
    axum::Json(json!({ "items": items })).into_response()
}

async fn get_agent(State(state): State<Shared>, Path(id): Path<String>) -> Response {
    let s = state.lock().unwrap();
    match s.agents.get(&id) {
        Some(a) => axum::Json(a.json(&s)).into_response(),
        None => err(StatusCode::NOT_FOUND, "agent_not_found", "no such agent"),
    }
}

async fn delete_agent(State(state): State<Shared>, Path(id): Path<String>) -> Response {
    match state.lock().unwrap().agents.remove(&id) {
        Some(_) => axum::Json(json!({ "id": id })).into_response(),
        None => err(StatusCode::NOT_FOUND, "agent_not_found", "no such agent"),
    }
}

async fn archive(State(state): State<Shared>, Path(id): Path<String>) -> Response {
    match state.lock().unwrap().agents.get_mut(&id) {
        Some(a) => {
            a.archived = true;
            axum::Json(json!({ "id": id })).into_response()
        }
        None => err(StatusCode::NOT_FOUND, "agent_not_found", "no such agent"),
    }
}

async fn followup(State(state): State<Shared>, Path(id): Path<String>, body: Bytes) -> Response {
    let Some(prompt) = serde_json::from_slice::<Value>(&body)
        .ok()
        .and_then(|v| v.pointer("/prompt/text")?.as_str().map(str::to_owned))
    else {
        return err(StatusCode::BAD_REQUEST, "validation_error", "prompt.text is required");
    };
    let mut s = state.lock().unwrap();
    let Some(a) = s.agents.get(&id).cloned() else {
        return err(StatusCode::NOT_FOUND, "agent_not_found", "no such agent");
    };
    if a.archived {
        return err(StatusCode::CONFLICT, "agent_archived", "the agent is archived");
    }
    if a.runs.last().and_then(|r| s.runs.get(r)).is_some_and(|r| matches!(r.status().as_str(), "CREATING" | "RUNNING"))
    {
        return err(StatusCode::CONFLICT, "agent_busy", "Only one run can be active per agent");
    }
    let run = new_run(&mut s, &id, &prompt);
    (StatusCode::CREATED, axum::Json(json!({ "run": run.json(&a.repo) }))).into_response()
}

async fn get_run(State(state): State<Shared>, Path((id, run)): Path<(String, String)>) -> Response {
    let mut s = state.lock().unwrap();
    let repo = s.agents.get(&id).map(|a| a.repo.clone()).unwrap_or_default();
    match s.runs.get_mut(&run).filter(|r| r.agent == id) {
        Some(r) => {
            r.polls += 1;
            let v = r.json(&repo);
            drop(s);
            send_hook_if_done(&state, &run);
            axum::Json(v).into_response()
        }
        None => err(StatusCode::NOT_FOUND, "run_not_found", "no such run"),
    }
}

async fn usage(State(state): State<Shared>, Path(id): Path<String>, uri: Uri) -> Response {
    let want = uri.query().unwrap_or("").split('&').find_map(|kv| kv.strip_prefix("runId=")).map(str::to_owned);
    let s = state.lock().unwrap();
    let runs: Vec<&FakeRun> =
        s.runs.values().filter(|r| r.agent == id && want.as_ref().is_none_or(|w| *w == r.id)).collect();
    if runs.is_empty() {
        return err(StatusCode::NOT_FOUND, "run_not_found", "no such run");
    }
    let items: Vec<Value> = runs.iter().map(|r| r.usage()).collect();
    let total = |k: &str| items.iter().filter_map(|i| i["usage"][k].as_i64()).sum::<i64>();
    let cost: Option<f64> = items.iter().map(|i| i["cost"].as_f64()).sum();
    axum::Json(json!({
        "totalUsage": { "inputTokens": total("inputTokens"), "outputTokens": total("outputTokens"),
                        "cacheReadTokens": total("cacheReadTokens"), "cacheWriteTokens": total("cacheWriteTokens") },
        "cost": cost,
        "runs": items,
    }))
    .into_response()
}

async fn cancel(State(state): State<Shared>, Path((id, run)): Path<(String, String)>) -> Response {
    let mut s = state.lock().unwrap();
    let Some(r) = s.runs.get_mut(&run).filter(|r| r.agent == id) else {
        return err(StatusCode::NOT_FOUND, "run_not_found", "no such run");
    };
    if !matches!(r.status().as_str(), "CREATING" | "RUNNING") {
        return err(StatusCode::CONFLICT, "run_not_cancellable", "the run is not active");
    }
    r.cancelled_at = Some(now());
    axum::Json(json!({ "id": run })).into_response()
}

async fn stream(State(state): State<Shared>, Path((id, run)): Path<(String, String)>, headers: HeaderMap) -> Response {
    let last = headers.get("last-event-id").and_then(|v| v.to_str().ok()).map(str::to_owned);
    let (drop_after, start) = {
        let mut s = state.lock().unwrap();
        let repo = s.agents.get(&id).map(|a| a.repo.clone()).unwrap_or_default();
        let Some(r) = s.runs.get_mut(&run).filter(|r| r.agent == id) else {
            return err(StatusCode::NOT_FOUND, "run_not_found", "no such run");
        };
        if r.gone {
            return err(StatusCode::GONE, "stream_expired", "the stream is past its retention");
        }
        r.connections += 1;
        let frames = r.frames(&repo);
        let start = match &last {
            None => 0,
            Some(l) => match frames.iter().rposition(|f| f.0.as_deref() == Some(l.as_str())) {
                Some(i) => i + 1,
                None => return err(StatusCode::BAD_REQUEST, "invalid_last_event_id", "unknown event id"),
            },
        };
        (if r.connections == 1 { r.drop_after } else { None }, start)
    };
    let (tx, rx) = tokio::sync::mpsc::channel::<Event>(64);
    tokio::spawn(async move {
        let status = state.lock().unwrap().runs.get(&run).map(FakeRun::status).unwrap_or_default();
        let first = Event::default().event("status").data(json!({ "runId": run, "status": status }).to_string());
        if tx.send(first).await.is_err() {
            return;
        }
        let mut i = start;
        let mut sent = 0usize;
        loop {
            let (frame, hang) = {
                let s = state.lock().unwrap();
                let Some(r) = s.runs.get(&run) else { return };
                let repo = s.agents.get(&r.agent).map(|a| a.repo.clone()).unwrap_or_default();
                (r.frames(&repo).get(i).cloned(), r.hang && r.cancelled_at.is_none())
            };
            let Some((fid, event, data, due)) = frame else {
                if !hang {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
                let _ = tx.send(Event::default().event("heartbeat").data("{}")).await;
                continue;
            };
            let wait = due - now();
            if wait > 0 {
                tokio::time::sleep(Duration::from_millis(wait as u64)).await;
            }
            if drop_after.is_some_and(|n| sent >= n) {
                return;
            }
            let mut e = Event::default().event(event).data(data);
            if let Some(fid) = fid {
                e = e.id(fid);
            }
            if tx.send(e).await.is_err() {
                return;
            }
            sent += 1;
            i += 1;
            if event == "done" {
                send_hook_if_done(&state, &run);
                return;
            }
        }
    });
    let body =
        futures_util::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|e| (Ok::<_, Infallible>(e), rx)) });
    let mut resp = Sse::new(body).into_response();
    resp.headers_mut().insert("x-cursor-stream-retention-seconds", "3600".parse().unwrap());
    resp
}

/// Posts the signed `statusChange` webhook of a v0 agent whose run reached a terminal status.
fn send_hook_if_done(state: &Shared, run: &str) {
    let delivery = {
        let mut s = state.lock().unwrap();
        let Some(r) = s.runs.get(run) else { return };
        let status = r.status();
        if r.hook_sent || matches!(status.as_str(), "CREATING" | "RUNNING") {
            return;
        }
        let Some(a) = s.agents.get(&r.agent) else { return };
        let Some((url, secret)) = a.webhook.clone() else { return };
        let body = json!({ "event": "statusChange", "timestamp": iso(now()), "id": a.id, "status": status,
                           "source": { "repository": a.repo },
                           "target": { "url": format!("https://cursor.com/agents?id={}", a.id) },
                           "summary": r.json(&a.repo).get("result").cloned().unwrap_or(Value::Null) })
        .to_string();
        s.seq += 1;
        let id = format!("msg_{:06}", s.seq);
        if let Some(r) = s.runs.get_mut(run) {
            r.hook_sent = true;
        }
        (url, secret, body, id)
    };
    tokio::spawn(async move {
        let (url, secret, body, id) = delivery;
        let _ = post_webhook(&url, &secret, &id, &body).await;
    });
}

/// The `X-Webhook-Signature` Cursor sends: `sha256=` + hex HMAC-SHA256 of the raw body.
pub fn sign(secret: &str, body: &str) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("any key length");
    mac.update(body.as_bytes());
    let hex: String = mac.finalize().into_bytes().iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256={hex}")
}

/// Delivers one webhook as Cursor does (also used by tests to replay, forge or duplicate one).
/// Returns the receiver's status code.
pub async fn post_webhook(url: &str, secret: &str, delivery_id: &str, body: &str) -> std::io::Result<u16> {
    let uri: Uri = url.parse().map_err(std::io::Error::other)?;
    let host = uri.authority().map(|a| a.as_str().to_owned()).unwrap_or_default();
    let mut stream = tokio::net::TcpStream::connect(&host).await?;
    let req = format!(
        "POST {} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nUser-Agent: Cursor-Agent-Webhook/1.0\r\n\
         X-Webhook-Event: statusChange\r\nX-Webhook-ID: {delivery_id}\r\nX-Webhook-Signature: {}\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        uri.path_and_query().map_or("/", |p| p.as_str()),
        sign(secret, body),
        body.len()
    );
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    stream.write_all(req.as_bytes()).await?;
    let mut resp = Vec::new();
    stream.read_to_end(&mut resp).await?;
    let text = String::from_utf8_lossy(&resp);
    Ok(text.split_whitespace().nth(1).and_then(|c| c.parse().ok()).unwrap_or(0))
}
