//! The client side of this server's own API, for the processes beside it (the CLI's `tether
//! open`, the desktop app's window): a one-time GUI login link from the daemon running for a
//! data dir.

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
