//! A client of Cursor's Cloud Agents API: v1 (durable agents, per-prompt runs, a stream per run),
//! and v0 only to launch an agent with a webhook (v1 has none).
//!
//! Bearer auth; redirects are not followed (the key goes to the base URL and nowhere else); 429
//! honours `Retry-After` (else `X-RateLimit-Reset`); 5xx and connection failures retry with
//! backoff and jitter, a bounded number of times; `repositories` is cached and held to Cursor's
//! 1 per minute and 30 per hour. Waiting goes through [`Pace`], so tests take minutes of fake
//! time without sleeping.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::{Stream, StreamExt};
use reqwest::Method;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::error::{CloudError, Kind};

type Result<T> = std::result::Result<T, CloudError>;

/// How long to wait: `tokio::time::sleep` in real use, a recorder in tests.
pub type Sleep = Arc<dyn Fn(Duration) -> Pin<Box<dyn Future<Output = ()> + Send>> + Send + Sync>;

/// The retry policy.
#[derive(Clone)]
pub struct Pace {
    /// Retries after the first try (429, 5xx, no connection).
    pub retries: u32,
    /// The first backoff; doubled each retry, with ±25 % jitter.
    pub backoff: Duration,
    /// A 429 without `Retry-After` waits this long.
    pub rate_wait: Duration,
    /// No single wait is longer than this.
    pub max_wait: Duration,
    pub sleep: Sleep,
}

impl Default for Pace {
    fn default() -> Self {
        Self {
            retries: 4,
            backoff: Duration::from_millis(500),
            rate_wait: Duration::from_secs(30),
            max_wait: Duration::from_secs(120),
            sleep: Arc::new(|d| Box::pin(tokio::time::sleep(d))),
        }
    }
}

impl std::fmt::Debug for Pace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pace").field("retries", &self.retries).finish_non_exhaustive()
    }
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Me {
    #[serde(default)]
    pub api_key_name: Option<String>,
    #[serde(default)]
    pub user_email: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Model {
    pub id: String,
    pub name: Option<String>,
    pub aliases: Vec<String>,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentInfo {
    pub id: String,
    #[serde(default)]
    pub name: Option<String>,
    /// `ACTIVE`, `IDLE`, `ARCHIVED` (or anything new, kept as given).
    #[serde(default)]
    pub status: Option<String>,
    #[serde(default)]
    pub url: Option<String>,
    #[serde(default)]
    pub latest_run_id: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunInfo {
    pub id: String,
    /// `CREATING`, `RUNNING`, `FINISHED`, `ERROR`, `CANCELLED`, `EXPIRED` (or anything new).
    pub status: String,
    #[serde(default)]
    pub result: Option<String>,
    #[serde(default)]
    pub error: Option<RunErrorInfo>,
    #[serde(default)]
    pub duration_ms: Option<i64>,
    #[serde(default)]
    pub git: Option<Git>,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
pub struct RunErrorInfo {
    #[serde(default)]
    pub message: Option<String>,
    #[serde(default)]
    pub code: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
pub struct Git {
    #[serde(default)]
    pub branches: Vec<Branch>,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Branch {
    #[serde(default)]
    pub repo_url: Option<String>,
    #[serde(default)]
    pub branch: Option<String>,
    #[serde(default)]
    pub pr_url: Option<String>,
}

/// What to launch.
#[derive(Debug, Clone, Default)]
pub struct Launch {
    /// Our `bc-<uuid>`: the launch is idempotent.
    pub agent_id: String,
    pub prompt: String,
    pub repo: String,
    pub git_ref: Option<String>,
    /// Work on this existing branch (starts from it, pushes to it).
    pub branch: Option<String>,
    pub auto_pr: bool,
    pub model: Option<String>,
    /// `agent` or `plan`.
    pub mode: Option<String>,
    pub name: Option<String>,
}

/// A launch through v0 with a webhook.
#[derive(Clone)]
pub struct Webhook {
    pub url: String,
    pub secret: String,
}

impl std::fmt::Debug for Webhook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Webhook").field("url", &self.url).finish_non_exhaustive()
    }
}

/// One frame of a run's stream.
#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    pub id: Option<String>,
    pub event: String,
    pub data: String,
}

pub type Frames = Pin<Box<dyn Stream<Item = Result<Frame>> + Send>>;

/// Cursor allows `/v1/repositories` once a minute and 30 times an hour per user.
#[derive(Debug, Default)]
struct RepoGate {
    calls: VecDeque<Instant>,
    cached: Option<Vec<String>>,
}

pub struct Client {
    http: reqwest::Client,
    base: String,
    key: String,
    pace: Pace,
    repos: tokio::sync::Mutex<RepoGate>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client").field("base", &self.base).finish_non_exhaustive()
    }
}

/// Cursor's API base: `TETHER_CURSOR_API_URL`, else the setting, else api.cursor.com; checked
/// (https, or http to this machine only).
pub fn base_url(setting: Option<&str>) -> Result<String> {
    let env = std::env::var("TETHER_CURSOR_API_URL").ok().filter(|v| !v.trim().is_empty());
    let raw = env.as_deref().or(setting).unwrap_or(tether_core::settings::CURSOR_API_URL);
    tether_core::settings::check_remote_url("Cursor API URL", raw).map_err(|e| CloudError::config(e.to_string()))
}

impl Client {
    pub fn new(base: &str, key: impl Into<String>) -> Result<Self> {
        let key = key.into();
        if key.trim().is_empty() {
            return Err(CloudError::config("no Cursor API key: run `tether cloud login`, or set CURSOR_API_KEY"));
        }
        let base = tether_core::settings::check_remote_url("Cursor API URL", base)
            .map_err(|e| CloudError::config(e.to_string()))?;
        crate::tls::install_tls_provider();
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(Duration::from_secs(10))
            // A stream sends heartbeats; silence this long means it is gone.
            .read_timeout(Duration::from_secs(90))
            .user_agent(concat!("tether/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| CloudError::config(format!("building the HTTP client: {e}")))?;
        Ok(Self { http, base, key, pace: Pace::default(), repos: Default::default() })
    }

    pub fn with_pace(mut self, pace: Pace) -> Self {
        self.pace = pace;
        self
    }

    pub fn base(&self) -> &str {
        &self.base
    }

    pub async fn me(&self) -> Result<Me> {
        self.call(Method::GET, "/v1/me", None, None).await
    }

    /// The models Cursor offers (v1 gives objects; an older shape gave plain ids).
    pub async fn models(&self) -> Result<Vec<Model>> {
        let v: Value = self.call(Method::GET, "/v1/models", None, None).await?;
        let items = v.get("items").or_else(|| v.get("models")).and_then(Value::as_array).cloned().unwrap_or_default();
        Ok(items
            .into_iter()
            .filter_map(|m| match m {
                Value::String(id) => Some(Model { id, name: None, aliases: Vec::new() }),
                Value::Object(o) => Some(Model {
                    id: o.get("id")?.as_str()?.to_owned(),
                    name: o.get("displayName").and_then(Value::as_str).map(str::to_owned),
                    aliases: o
                        .get("aliases")
                        .and_then(Value::as_array)
                        .map(|a| a.iter().filter_map(|x| x.as_str().map(str::to_owned)).collect())
                        .unwrap_or_default(),
                }),
                _ => None,
            })
            .collect())
    }

    /// The repositories the key can reach, from a cache when Cursor's limit (1 a minute, 30 an
    /// hour) would be passed.
    pub async fn repositories(&self) -> Result<Vec<String>> {
        let mut gate = self.repos.lock().await;
        let now = Instant::now();
        while gate.calls.front().is_some_and(|t| now.duration_since(*t) > Duration::from_secs(3600)) {
            gate.calls.pop_front();
        }
        let last = gate.calls.back().copied();
        let wait = match last {
            Some(t) if now.duration_since(t) < Duration::from_secs(60) => {
                Some(Duration::from_secs(60) - now.duration_since(t))
            }
            _ if gate.calls.len() >= 30 => {
                Some(Duration::from_secs(3600).saturating_sub(now.duration_since(gate.calls[0])))
            }
            _ => None,
        };
        if let Some(w) = wait {
            return match &gate.cached {
                Some(c) => Ok(c.clone()),
                None => Err(CloudError::config(format!(
                    "Cursor allows listing repositories once a minute and 30 times an hour; try again in {} s",
                    w.as_secs().max(1)
                ))),
            };
        }
        gate.calls.push_back(now);
        let v: Value = self.call(Method::GET, "/v1/repositories", None, None).await?;
        let items =
            v.get("items").or_else(|| v.get("repositories")).and_then(Value::as_array).cloned().unwrap_or_default();
        let urls: Vec<String> = items
            .iter()
            .filter_map(|r| r.get("url").or_else(|| r.get("repository")).and_then(Value::as_str).map(str::to_owned))
            .collect();
        gate.cached = Some(urls.clone());
        Ok(urls)
    }

    /// Launches an agent and its first run. An agent with our id already there (an earlier try
    /// got through) is that launch: its latest run is returned.
    pub async fn launch(&self, l: &Launch) -> Result<(AgentInfo, RunInfo)> {
        let mut repo = json!({ "url": l.repo });
        if let Some(r) = l.branch.as_ref().or(l.git_ref.as_ref()) {
            repo["startingRef"] = json!(r);
        }
        let mut body = json!({
            "agentId": l.agent_id,
            "prompt": { "text": l.prompt },
            "repos": [repo],
            "autoCreatePR": l.auto_pr,
            "workOnCurrentBranch": l.branch.is_some(),
        });
        if let Some(m) = &l.model {
            body["model"] = json!({ "id": m });
        }
        if let Some(m) = &l.mode {
            body["mode"] = json!(m);
        }
        if let Some(n) = &l.name {
            body["name"] = json!(n.chars().take(100).collect::<String>());
        }
        match self.call::<Value>(Method::POST, "/v1/agents", Some(&body), Some(&l.agent_id)).await {
            Ok(v) => {
                let agent = field(&v, "agent", "POST /v1/agents")?;
                let run = field(&v, "run", "POST /v1/agents")?;
                Ok((agent, run))
            }
            Err(e) if e.kind == Kind::AgentExists => {
                let agent = self.agent(&l.agent_id).await?;
                let run_id = agent.latest_run_id.clone().ok_or_else(|| CloudError {
                    kind: Kind::Malformed,
                    message: "the agent exists but Cursor names no run of it".into(),
                    ..e.clone()
                })?;
                let run = self.run(&l.agent_id, &run_id).await?;
                Ok((agent, run))
            }
            Err(e) => Err(e),
        }
    }

    /// Launches through v0, the only API that takes a webhook. Returns the agent's id.
    pub async fn launch_v0(&self, l: &Launch, hook: &Webhook) -> Result<AgentInfo> {
        let mut source = json!({ "repository": l.repo });
        // Working on a branch starts from it too (as v1's workOnCurrentBranch does).
        if let Some(r) = l.branch.as_ref().or(l.git_ref.as_ref()) {
            source["ref"] = json!(r);
        }
        let mut target = json!({ "autoCreatePr": l.auto_pr });
        if let Some(b) = &l.branch {
            target["branchName"] = json!(b);
        }
        let mut body = json!({
            "prompt": { "text": l.prompt },
            "source": source,
            "target": target,
            "webhook": { "url": hook.url, "secret": hook.secret },
        });
        if let Some(m) = &l.model {
            body["model"] = json!(m);
        }
        // v0 has no idempotent create: a retry after the request may have arrived could start a
        // second agent, so it is tried once.
        self.call_with(Method::POST, "/v0/agents", Some(&body), None, false).await
    }

    /// A follow-up run on an agent (409 `agent_busy` while it runs one).
    pub async fn followup(
        &self,
        agent: &str,
        prompt: &str,
        model: Option<&str>,
        mode: Option<&str>,
        idempotency_key: &str,
    ) -> Result<RunInfo> {
        let mut body = json!({ "prompt": { "text": prompt } });
        if let Some(m) = model {
            body["model"] = json!({ "id": m });
        }
        if let Some(m) = mode {
            body["mode"] = json!(m);
        }
        let path = format!("/v1/agents/{}/runs", seg(agent)?);
        let v: Value = self.call(Method::POST, &path, Some(&body), Some(idempotency_key)).await?;
        field(&v, "run", &path).or_else(|_| serde_json::from_value(v).map_err(|e| malformed(&path, &e)))
    }

    pub async fn agent(&self, agent: &str) -> Result<AgentInfo> {
        self.call(Method::GET, &format!("/v1/agents/{}", seg(agent)?), None, None).await
    }

    pub async fn run(&self, agent: &str, run: &str) -> Result<RunInfo> {
        self.call(Method::GET, &format!("/v1/agents/{}/runs/{}", seg(agent)?, seg(run)?), None, None).await
    }

    /// What a run spent (`GET /v1/agents/{id}/usage?runId=`): its entry in `runs`, else the
    /// agent's `totalUsage`; `cost` only when Cursor gives one (it may be null).
    pub async fn usage(&self, agent: &str, run: &str) -> Result<RunUsage> {
        let path = format!("/v1/agents/{}/usage?runId={}", seg(agent)?, seg(run)?);
        let v: Value = self.call(Method::GET, &path, None, None).await?;
        let entry = v
            .get("runs")
            .and_then(Value::as_array)
            .and_then(|rs| rs.iter().find(|r| r.get("id").and_then(Value::as_str) == Some(run)));
        let (usage, cost) = match entry {
            Some(e) => (e.get("usage"), e.get("cost")),
            None => (v.get("totalUsage"), v.get("cost")),
        };
        let n = |u: &Value, camel: &str, snake: &str| {
            u.get(camel).or_else(|| u.get(snake)).and_then(Value::as_i64).unwrap_or(0)
        };
        let u = usage.filter(|u| u.is_object()).ok_or_else(|| CloudError {
            kind: Kind::Malformed,
            status: None,
            code: None,
            message: "Cursor's usage answer has no usage for the run".into(),
            request: format!("GET {path}"),
            request_id: None,
            retry_after: None,
        })?;
        Ok(RunUsage {
            usage: tether_board::runs::event::Usage {
                input_tokens: n(u, "inputTokens", "input_tokens"),
                output_tokens: n(u, "outputTokens", "output_tokens"),
                cache_read_tokens: n(u, "cacheReadTokens", "cache_read_tokens"),
                cache_write_tokens: n(u, "cacheWriteTokens", "cache_write_tokens"),
            },
            cost_usd: cost.and_then(|c| c.as_f64().or_else(|| c.get("usd").and_then(Value::as_f64))),
        })
    }

    /// Cancels a run: `true` when Cursor cancelled it, `false` when it had already ended.
    pub async fn cancel(&self, agent: &str, run: &str) -> Result<bool> {
        let path = format!("/v1/agents/{}/runs/{}/cancel", seg(agent)?, seg(run)?);
        match self.call::<Value>(Method::POST, &path, None, None).await {
            Ok(_) => Ok(true),
            Err(e) if e.kind == Kind::NotCancellable => Ok(false),
            Err(e) => Err(e),
        }
    }

    pub async fn agents(&self, limit: usize) -> Result<Vec<AgentInfo>> {
        let v: Value = self.call(Method::GET, &format!("/v1/agents?limit={}", limit.clamp(1, 100)), None, None).await?;
        let items = v.get("items").cloned().unwrap_or(Value::Array(Vec::new()));
        serde_json::from_value(items).map_err(|e| malformed("GET /v1/agents", &e))
    }

    pub async fn archive(&self, agent: &str) -> Result<()> {
        self.call::<Value>(Method::POST, &format!("/v1/agents/{}/archive", seg(agent)?), None, None).await.map(|_| ())
    }

    pub async fn delete(&self, agent: &str) -> Result<()> {
        self.call::<Value>(Method::DELETE, &format!("/v1/agents/{}", seg(agent)?), None, None).await.map(|_| ())
    }

    /// Opens a run's event stream, after `last_event_id` when given. Not retried here: the
    /// driver decides between reconnecting and polling (410 means polling).
    pub async fn stream(&self, agent: &str, run: &str, last_event_id: Option<&str>) -> Result<Frames> {
        let path = format!("/v1/agents/{}/runs/{}/stream", seg(agent)?, seg(run)?);
        let request = format!("GET {path}");
        let mut req = self
            .http
            .get(format!("{}{path}", self.base))
            .bearer_auth(&self.key)
            .header("Accept", "text/event-stream")
            .header("x-cursor-streaming", "true");
        if let Some(id) = last_event_id {
            req = req.header("Last-Event-ID", id);
        }
        let resp = req.send().await.map_err(|e| CloudError::network(&request, &e))?;
        let status = resp.status().as_u16();
        if !resp.status().is_success() {
            return Err(error_from(&request, resp).await);
        }
        let _ = status;
        let frames = sse_stream::SseStream::from_bytes_stream(resp.bytes_stream()).map(move |item| match item {
            Ok(sse) => Ok(Frame {
                id: sse.id,
                event: sse.event.unwrap_or_else(|| "message".into()),
                data: sse.data.unwrap_or_default(),
            }),
            Err(e) => Err(CloudError { kind: Kind::Network, message: e.to_string(), ..CloudError::config("") }
                .with_request(&request)),
        });
        Ok(Box::pin(frames))
    }

    async fn call<T: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
        idempotency_key: Option<&str>,
    ) -> Result<T> {
        self.call_with(method, path, body, idempotency_key, true).await
    }

    async fn call_with<T: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
        idempotency_key: Option<&str>,
        retry: bool,
    ) -> Result<T> {
        let request = format!("{method} {}", path.split('?').next().unwrap_or(path));
        let mut attempt = 0;
        loop {
            let mut req = self
                .http
                .request(method.clone(), format!("{}{path}", self.base))
                .bearer_auth(&self.key)
                .timeout(Duration::from_secs(120));
            if let Some(b) = body {
                req = req.json(b);
            }
            if let Some(k) = idempotency_key {
                req = req.header("Idempotency-Key", k);
            }
            let err = match req.send().await {
                Ok(resp) if resp.status().is_success() => {
                    let text = resp.text().await.map_err(|e| CloudError::network(&request, &e))?;
                    let text = if text.trim().is_empty() { "{}" } else { text.as_str() };
                    return serde_json::from_str(text).map_err(|e| malformed(&request, &e));
                }
                Ok(resp) => error_from(&request, resp).await,
                Err(e) => CloudError::network(&request, &e),
            };
            if !retry || !err.is_retryable() || attempt >= self.pace.retries {
                return Err(err);
            }
            let wait = if err.kind == Kind::RateLimited {
                err.retry_after.unwrap_or(self.pace.rate_wait)
            } else {
                let base = self.pace.backoff.saturating_mul(1 << attempt.min(16));
                base.mul_f64(0.75 + fastrand::f64() * 0.5)
            }
            .min(self.pace.max_wait);
            tracing::info!(request = %request, error = %err, wait_ms = wait.as_millis() as u64, "retrying Cursor's API");
            (self.pace.sleep)(wait).await;
            attempt += 1;
        }
    }
}

impl CloudError {
    fn with_request(mut self, request: &str) -> Self {
        self.request = request.to_owned();
        self
    }
}

async fn error_from(request: &str, resp: reqwest::Response) -> CloudError {
    let status = resp.status().as_u16();
    let h = resp.headers();
    let header = |k: &str| h.get(k).and_then(|v| v.to_str().ok()).map(str::to_owned);
    let request_id = header("x-request-id");
    let retry_after = header("retry-after")
        .and_then(|v| v.trim().parse::<u64>().ok())
        .or_else(|| {
            // Seconds to wait, or an epoch second to wait until.
            let reset = header("x-ratelimit-reset")?.trim().parse::<u64>().ok()?;
            let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).ok()?.as_secs();
            Some(if reset > 1_000_000_000 { reset.saturating_sub(now) } else { reset })
        })
        .map(Duration::from_secs);
    let body = resp.text().await.unwrap_or_default();
    CloudError::from_response(request, status, &body, request_id, retry_after)
}

/// A run's figures from Cursor's usage endpoint.
#[derive(Debug, Clone, PartialEq)]
pub struct RunUsage {
    pub usage: tether_board::runs::event::Usage,
    /// US dollars, when Cursor said (it may not).
    pub cost_usd: Option<f64>,
}

fn malformed(request: &str, e: &serde_json::Error) -> CloudError {
    CloudError {
        kind: Kind::Malformed,
        message: format!("Cursor's answer could not be read: {e}"),
        request: request.to_owned(),
        ..CloudError::config("")
    }
}

fn field<T: DeserializeOwned>(v: &Value, k: &str, request: &str) -> Result<T> {
    let x = v.get(k).cloned().ok_or_else(|| CloudError {
        kind: Kind::Malformed,
        message: format!("Cursor's answer has no {k}"),
        request: request.to_owned(),
        ..CloudError::config("")
    })?;
    serde_json::from_value(x).map_err(|e| malformed(request, &e))
}

/// An id as one path segment: Cursor's ids are `bc-…` / `run-…`; anything else is refused
/// rather than spliced into a path.
fn seg(id: &str) -> Result<&str> {
    if !id.is_empty() && id.len() <= 128 && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
        Ok(id)
    } else {
        Err(CloudError::config(format!("{id:?} is not a Cursor id")))
    }
}

/// A client for this data dir's settings and key.
pub fn client_for(t: &tether_core::Tether) -> Result<Client> {
    let settings = t.settings().map_err(|e| CloudError::config(e.to_string()))?;
    client_from(t, &settings)
}

/// A client for these settings and this data dir's key.
pub fn client_from(t: &tether_core::Tether, settings: &tether_core::settings::Settings) -> Result<Client> {
    let key = tether_core::token::cursor_key(&t.paths)
        .map_err(|e| CloudError::config(e.to_string()))?
        .map(|(k, _)| k)
        .ok_or_else(|| CloudError::config("no Cursor API key: run `tether cloud login`, or set CURSOR_API_KEY"))?;
    Client::new(&base_url(settings.cloud.api_url.as_deref())?, key)
}
