//! The client side of this server's own API, for the processes beside it (the CLI, the desktop
//! app's window): a one-time GUI login link from the daemon running for a data dir, and calls to
//! that daemon's API for the changes it must hold the moment they are made ([`Daemon`]).

#[derive(Debug, thiserror::Error)]
pub enum LinkError {
    #[error("the daemon is not running; start it with `tether serve` (or the desktop app)")]
    NotRunning,
    #[error("getting the token to ask the daemon: {0}")]
    Token(tether_core::Error),
    #[error("asking the daemon at {url} for a login code: {reason}")]
    Http { url: String, reason: String },
}

/// A one-time GUI login link from the daemon running for this data dir (valid 60 s, usable once).
pub fn login_link(paths: &tether_core::Paths) -> Result<String, LinkError> {
    let info = tether_core::daemon::running(paths).ok_or(LinkError::NotRunning)?;
    let base = info.url.as_deref().and_then(|u| u.strip_suffix("/mcp")).ok_or(LinkError::NotRunning)?.to_owned();
    let (token, _) =
        tether_core::token::mcp_token(paths, tether_core::token::NoKeyring::saved(paths)).map_err(LinkError::Token)?;
    let http = |reason: String| LinkError::Http { url: base.clone(), reason };
    let mut res = ureq::post(&format!("{base}/api/login-code"))
        .header("Authorization", &format!("Bearer {token}"))
        .header("X-Tether", "1")
        .send_empty()
        .map_err(|e| http(e.to_string()))?;
    let body = res.body_mut().read_to_string().map_err(|e| http(e.to_string()))?;
    let v: serde_json::Value = serde_json::from_str(&body).map_err(|e| http(e.to_string()))?;
    let code = v["code"].as_str().ok_or_else(|| http("no code in the answer".into()))?;
    Ok(format!("{base}/login?code={code}"))
}

/// Why a call to the running daemon's API did not give an answer.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    /// The daemon refused, as its API says (`{code, message}`): the operation's own error.
    #[error("{message}")]
    Refused { status: u16, code: String, message: String },
    #[error("getting the token to ask the daemon: {0}")]
    Token(tether_core::Error),
    #[error("asking the daemon at {url}: {reason}")]
    Http { url: String, reason: String },
}

/// The daemon that holds this data dir, reached through its API as a script would (the MCP
/// token as bearer). What the CLI changes that a daemon holds in memory (settings, the team's
/// board, the token) goes through it while one runs, so the change holds in the daemon the
/// moment the command says it does, and the GUI hears of it the same way.
#[derive(Debug)]
pub struct Daemon {
    base: String,
    token: String,
    agent: ureq::Agent,
}

impl Daemon {
    /// The daemon running for this data dir (see [`tether_core::daemon::running`]), if any.
    pub fn running(paths: &tether_core::Paths) -> Result<Option<Self>, CallError> {
        let Some(info) = tether_core::daemon::running(paths) else { return Ok(None) };
        // A host that serves nothing (none today) has no API to ask.
        let Some(base) = info.url.as_deref().and_then(|u| u.strip_suffix("/mcp")) else { return Ok(None) };
        let (token, _) = tether_core::token::mcp_token(paths, tether_core::token::NoKeyring::saved(paths))
            .map_err(CallError::Token)?;
        let config = ureq::Agent::config_builder()
            // Our own loopback server: never through a proxy the environment names (it would
            // see the token), and its refusals are answers to read, not transport errors.
            .proxy(None)
            .http_status_as_error(false)
            // Joining a team may wait for its database (5 s to connect, then its migrations).
            .timeout_global(Some(std::time::Duration::from_secs(120)))
            .build();
        Ok(Some(Self { base: base.to_owned(), token, agent: config.new_agent() }))
    }

    /// `method` `/api/…` with `body` (JSON) as the person; the answer's JSON, or the daemon's
    /// refusal with its code.
    pub fn call(
        &self,
        method: &str,
        path: &str,
        body: Option<&serde_json::Value>,
    ) -> Result<serde_json::Value, CallError> {
        let url = format!("{}{path}", self.base);
        let http = |reason: String| CallError::Http { url: url.clone(), reason };
        let auth = format!("Bearer {}", self.token);
        let body = body.map(serde_json::Value::to_string).unwrap_or_else(|| "{}".into());
        let sent = match method {
            "GET" => self.agent.get(&url).header("Authorization", &auth).call(),
            "POST" | "PATCH" | "PUT" => {
                let rb = match method {
                    "POST" => self.agent.post(&url),
                    "PATCH" => self.agent.patch(&url),
                    _ => self.agent.put(&url),
                };
                rb.header("Authorization", &auth)
                    .header("X-Tether", "1")
                    .header("Content-Type", "application/json")
                    .send(body.as_str())
            }
            other => return Err(http(format!("{other} is not a method this client sends"))),
        };
        let mut res = sent.map_err(|e| http(e.to_string()))?;
        let status = res.status().as_u16();
        let text = res.body_mut().read_to_string().map_err(|e| http(e.to_string()))?;
        let v: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| http(format!("{status}, not JSON ({e}): {text:.200}")))?;
        if (200..300).contains(&status) {
            return Ok(v);
        }
        Err(CallError::Refused {
            status,
            code: v["code"].as_str().unwrap_or("internal").to_owned(),
            message: v["message"].as_str().unwrap_or(&text).to_owned(),
        })
    }
}
