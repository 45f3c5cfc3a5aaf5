//! A daemon in the test process, for the servers' Rust tests: a [`Host`] (the one `tether serve`
//! runs, with all its components) on 127.0.0.1 port 0, over a temp `TETHER_HOME` and an empty
//! (or generated) Cursor folder, its token in a 0600 file instead of the keyring. It hands out
//! the base URL, the token, a JSON client for the GUI's API and an rmcp client for `/mcp`.
//!
//! Only with the `daemon` feature; never touches the real home or the real Cursor data.

use std::path::PathBuf;
use std::sync::Arc;

use reqwest::StatusCode;
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::Value;
use tether_core::token::{self, Backend};
use tether_core::{CursorLocations, Paths, Tether};
use tether_daemon::{Host, HostOptions};

pub struct TestDaemon {
    pub host: Arc<Host>,
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    /// The MCP bearer (also accepted on `/api`, as scripts use it).
    pub token: String,
    /// The data dir (`home/`) and Cursor's user folder (`cursor/User`).
    pub dir: tempfile::TempDir,
    http: reqwest::Client,
}

impl TestDaemon {
    /// A daemon over an empty Cursor folder.
    pub async fn start() -> Self {
        Self::start_with(|_| {}).await
    }

    /// A daemon whose Cursor folder `prepare` fills first (it gets `cursor/User`).
    pub async fn start_with(prepare: impl FnOnce(&std::path::Path)) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let user = dir.path().join("cursor/User");
        std::fs::create_dir_all(user.join("globalStorage")).expect("cursor dir");
        prepare(&user);
        let home = dir.path().join("cursor/home");
        std::fs::create_dir_all(&home).expect("cursor home");
        Self::start_in(dir, user, home)
    }

    /// A daemon that is machine `machine` of the team database at `url` (see
    /// [`crate::pg::Cluster::database`]), a runner for the team's queue when `runner` says so.
    pub async fn start_in_team(url: &str, machine: &str, runner: tether_core::daemon::RunnerRole) -> Self {
        Self::start_in_team_on(url, machine, runner, |_| {}).await
    }

    /// [`TestDaemon::start_in_team`] over a fake Cursor home that `fill` writes (its own chat
    /// history, which stays on this machine).
    pub async fn start_in_team_on(
        url: &str,
        machine: &str,
        runner: tether_core::daemon::RunnerRole,
        fill: impl FnOnce(&crate::CursorFixture),
    ) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let fx = crate::CursorFixture::at(&dir.path().join("cursor-home"));
        fill(&fx);
        let d = Self::start_as(dir, fx.user_dir.clone(), fx.cursor_home.clone(), runner);
        d.join_team(url, machine);
        d
    }

    fn join_team(&self, url: &str, machine: &str) {
        let join = tether_core::ops::team::Join {
            url: url.into(),
            machine: Some(machine.into()),
            password: Some(crate::pg::PASSWORD.into()),
            ..Default::default()
        };
        tether_core::ops::team::join(&self.host.tether, &tether_core::ops::Principal::person("pat"), join)
            .expect("joins the team database");
    }

    /// A daemon over a fake Cursor home (`cursor-home/` in the temp dir) that `fill` writes,
    /// e.g. with the [`crate::eras`] fixtures.
    pub async fn start_on(fill: impl FnOnce(&crate::CursorFixture)) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let fx = crate::CursorFixture::at(&dir.path().join("cursor-home"));
        fill(&fx);
        Self::start_in(dir, fx.user_dir.clone(), fx.cursor_home.clone())
    }

    fn start_in(dir: tempfile::TempDir, user: PathBuf, home: PathBuf) -> Self {
        let d = Self::start_as(dir, user, home, Default::default());
        // `TETHER_TEST_BOARD=postgres`: the same tests with the board on a team's database (a
        // fresh one in this binary's throwaway cluster), to find what does not go through it.
        if std::env::var("TETHER_TEST_BOARD").as_deref() == Ok("postgres") {
            d.join_team(&crate::pg::team_board_url(), "test-machine");
        }
        d
    }

    fn start_as(dir: tempfile::TempDir, user: PathBuf, home: PathBuf, runner: tether_core::daemon::RunnerRole) -> Self {
        let paths = Paths::at(dir.path().join("home"));
        paths.ensure().expect("data dir");
        token::set_backend(&paths, Backend::File).expect("file token store");
        let opts = HostOptions { host: "127.0.0.1".into(), port: 0, port_from: "test", runner };
        let cursor = CursorLocations::explicit(Some(user), Some(home));
        let host = Host::start(paths, cursor, &opts, None).expect("daemon starts");
        let base = format!("http://127.0.0.1:{}", host.port());
        let token = token::mcp_token(&host.tether.paths, token::NoKeyring::Refuse).expect("token").0;
        let http = reqwest::Client::builder().no_proxy().build().expect("http client");
        Self { host, base, token, dir, http }
    }

    pub fn tether(&self) -> &Arc<Tether> {
        &self.host.tether
    }

    /// A folder inside the temp dir (made), e.g. a project for runs.
    pub fn folder(&self, name: &str) -> PathBuf {
        let p = self.dir.path().join(name);
        std::fs::create_dir_all(&p).expect("folder");
        p
    }

    /// A request to the GUI's API with the bearer and the mutating-request header, as a script
    /// sends it.
    pub fn request(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        self.http.request(method, format!("{}{path}", self.base)).bearer_auth(&self.token).header("X-Tether", "1")
    }

    /// A request with nothing added (to test the doors themselves).
    pub fn bare(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        self.http.request(method, format!("{}{path}", self.base))
    }

    /// Sends and reads the answer as JSON (Null when the body is empty).
    pub async fn send(rb: reqwest::RequestBuilder) -> (StatusCode, Value) {
        let res = rb.send().await.expect("request");
        let status = res.status();
        let body = res.bytes().await.expect("body");
        let v = if body.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&body).unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&body).into_owned()))
        };
        (status, v)
    }

    pub async fn get(&self, path: &str) -> (StatusCode, Value) {
        Self::send(self.request(reqwest::Method::GET, path)).await
    }

    pub async fn post(&self, path: &str, body: Value) -> (StatusCode, Value) {
        Self::send(self.request(reqwest::Method::POST, path).json(&body)).await
    }

    pub async fn patch(&self, path: &str, body: Value) -> (StatusCode, Value) {
        Self::send(self.request(reqwest::Method::PATCH, path).json(&body)).await
    }

    pub async fn put(&self, path: &str, body: Value) -> (StatusCode, Value) {
        Self::send(self.request(reqwest::Method::PUT, path).json(&body)).await
    }

    pub async fn delete(&self, path: &str) -> (StatusCode, Value) {
        Self::send(self.request(reqwest::Method::DELETE, path)).await
    }

    /// An MCP client (the official SDK's) on `/mcp`, with the token.
    pub async fn mcp(&self) -> RunningService<RoleClient, ()> {
        self.mcp_with(()).await
    }

    /// An MCP client with its own handler (to see notifications).
    pub async fn mcp_with<H: ClientHandler>(&self, handler: H) -> RunningService<RoleClient, H> {
        let cfg = StreamableHttpClientTransportConfig::with_uri(format!("{}/mcp", self.base)).auth_header(&self.token);
        handler.serve(StreamableHttpClientTransport::from_config(cfg)).await.expect("MCP client connects")
    }

    /// `GET path` with the bearer, read as Server-Sent Events once its headers arrived.
    pub async fn events(&self, path: &str) -> Sse {
        let res = self.request(reqwest::Method::GET, path).send().await.expect("event stream");
        assert_eq!(res.status(), StatusCode::OK, "GET {path}");
        Sse { res, buf: Vec::new(), ended: false }
    }

    /// Stops the server and the components, and releases the data dir.
    pub async fn stop(self) {
        self.host.shutdown().await.expect("daemon stops");
    }
}

/// An event stream being read, one event at a time.
pub struct Sse {
    res: reqwest::Response,
    buf: Vec<u8>,
    /// The server ended the stream.
    pub ended: bool,
}

/// One Server-Sent Event: its name (`message` when it has none), its data as JSON (a string
/// when it is not JSON) and its id.
#[derive(Debug, Clone)]
pub struct SseEvent {
    pub name: String,
    pub data: Value,
    pub id: Option<String>,
}

impl Sse {
    /// The next event within `within`; `None` when none came in time or the stream ended.
    pub async fn next(&mut self, within: std::time::Duration) -> Option<SseEvent> {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            while let Some(end) = self.buf.windows(2).position(|w| w == b"\n\n") {
                let block: Vec<u8> = self.buf.drain(..end + 2).collect();
                if let Some(ev) = parse_event(&String::from_utf8_lossy(&block)) {
                    return Some(ev);
                }
            }
            if self.ended {
                return None;
            }
            match tokio::time::timeout_at(deadline, self.res.chunk()).await {
                Ok(Ok(Some(b))) => self.buf.extend_from_slice(&b),
                Ok(_) => self.ended = true,
                Err(_) => return None,
            }
        }
    }

    /// The next event named `name` within `within`, passing over others.
    pub async fn next_named(&mut self, name: &str, within: std::time::Duration) -> Option<SseEvent> {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            let ev = self.next(left).await?;
            if ev.name == name {
                return Some(ev);
            }
        }
    }
}

/// One block of an event stream (comments and keep-alives give `None`).
fn parse_event(block: &str) -> Option<SseEvent> {
    let (mut name, mut data, mut id) = (None, Vec::new(), None);
    for line in block.lines() {
        let (field, value) = line.split_once(':').unwrap_or((line, ""));
        let value = value.strip_prefix(' ').unwrap_or(value);
        match field {
            "event" => name = Some(value.to_owned()),
            "data" => data.push(value),
            "id" => id = Some(value.to_owned()),
            _ => {}
        }
    }
    if name.is_none() && data.is_empty() {
        return None;
    }
    let text = data.join("\n");
    let data = serde_json::from_str(&text).unwrap_or(Value::String(text));
    Some(SseEvent { name: name.unwrap_or_else(|| "message".into()), data, id })
}

/// A binary of the test kit (`tether-fake-agent`, `tether-fake-cursor-api`) next to the
/// running test's own target folder, built when missing.
pub fn testkit_bin(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    // target/<profile>/deps/<test> → target/<profile>
    let dir = exe.parent().and_then(|d| d.parent()).expect("a target folder");
    let bin = dir.join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    if !bin.exists() {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let ok = std::process::Command::new(cargo)
            .args(["build", "-p", "tether-testkit", "--bin", name])
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok && bin.exists(), "building {name}");
    }
    bin
}
