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
        let paths = Paths::at(dir.path().join("home"));
        paths.ensure().expect("data dir");
        token::set_backend(&paths, Backend::File).expect("file token store");
        let opts = HostOptions { host: "127.0.0.1".into(), port: 0, port_from: "test" };
        let home = dir.path().join("cursor/home");
        std::fs::create_dir_all(&home).expect("cursor home");
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

    /// Stops the server and the components, and releases the data dir.
    pub async fn stop(self) {
        self.host.shutdown().await.expect("daemon stops");
    }
}
