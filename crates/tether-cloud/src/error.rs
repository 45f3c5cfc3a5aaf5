//! Errors from Cursor's API: the HTTP status, Cursor's `{error:{code,message}}` (or the flat and
//! string shapes older endpoints use), the request as method + path (never the key), and
//! Cursor's `x-request-id` for support.

use std::time::Duration;

/// What kind of failure, for the callers that act on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// 401: the key is missing, wrong or revoked.
    Auth,
    /// 403: the key may not do this (plan, role, feature).
    Forbidden,
    /// 429, after the retries.
    RateLimited,
    /// 409 `agent_busy`: the agent is still running a run.
    Busy,
    /// 409 `run_not_cancellable`: the run already ended.
    NotCancellable,
    /// 409 `agent_id_conflict`: an agent with our id exists (an earlier launch got through).
    AgentExists,
    /// 410 `stream_expired`: the stream is past its retention; read the run instead.
    StreamGone,
    /// 400 `invalid_last_event_id`.
    BadCursor,
    NotFound,
    /// Other 4xx: what we sent is wrong.
    Request,
    /// 5xx, after the retries.
    Server,
    /// No answer (connection, TLS, timeout), after the retries.
    Network,
    /// An answer we cannot read.
    Malformed,
    /// Refused before sending (no key, a base URL that is not allowed).
    Config,
    /// Not Cursor's: Tether stops the run, which went over a budget.
    OverBudget,
}

#[derive(Debug, Clone, thiserror::Error)]
#[error("{}", self.describe())]
pub struct CloudError {
    pub kind: Kind,
    pub status: Option<u16>,
    /// Cursor's error code (`agent_busy`, `validation_error` …).
    pub code: Option<String>,
    pub message: String,
    /// `METHOD /path`, without the host or any credential.
    pub request: String,
    pub request_id: Option<String>,
    /// How long Cursor asked us to wait (429).
    pub retry_after: Option<Duration>,
}

impl CloudError {
    pub fn config(message: impl Into<String>) -> Self {
        Self {
            kind: Kind::Config,
            status: None,
            code: None,
            message: message.into(),
            request: String::new(),
            request_id: None,
            retry_after: None,
        }
    }

    pub(crate) fn over_budget(why: String) -> Self {
        Self { kind: Kind::OverBudget, ..Self::config(why) }
    }

    pub(crate) fn network(request: &str, e: &reqwest::Error) -> Self {
        // reqwest's text names the URL; ours has no credentials in it, and the path is said anyway.
        let why = if e.is_timeout() {
            "timed out".to_owned()
        } else if e.is_connect() {
            "could not connect".to_owned()
        } else {
            let mut s = e.to_string();
            let mut src = std::error::Error::source(e);
            while let Some(c) = src {
                s = format!("{s}: {c}");
                src = c.source();
            }
            s
        };
        Self { kind: Kind::Network, message: why, request: request.to_owned(), ..Self::config("") }
    }

    /// Reads an error answer in any of the three shapes Cursor uses.
    pub(crate) fn from_response(
        request: &str,
        status: u16,
        body: &str,
        request_id: Option<String>,
        retry_after: Option<Duration>,
    ) -> Self {
        let v: serde_json::Value = serde_json::from_str(body).unwrap_or(serde_json::Value::Null);
        let s = |v: &serde_json::Value, k: &str| v.get(k).and_then(|x| x.as_str()).map(str::to_owned);
        let (code, message) = match v.get("error") {
            Some(e @ serde_json::Value::Object(_)) => (s(e, "code"), s(e, "message")),
            Some(serde_json::Value::String(e)) => (None, s(&v, "message").or_else(|| Some(e.clone()))),
            _ => (s(&v, "code"), s(&v, "message")),
        };
        let message = message.unwrap_or_else(|| {
            let t: String = body.trim().chars().take(200).collect();
            if t.is_empty() { reason(status).to_owned() } else { t }
        });
        let kind = match (status, code.as_deref()) {
            (_, Some("agent_busy")) => Kind::Busy,
            (_, Some("run_not_cancellable")) => Kind::NotCancellable,
            (_, Some("agent_id_conflict")) => Kind::AgentExists,
            (_, Some("stream_expired")) | (410, _) => Kind::StreamGone,
            (_, Some("invalid_last_event_id")) => Kind::BadCursor,
            (401, _) => Kind::Auth,
            (403, _) => Kind::Forbidden,
            (404, _) => Kind::NotFound,
            (429, _) => Kind::RateLimited,
            (500..=599, _) => Kind::Server,
            _ => Kind::Request,
        };
        Self { kind, status: Some(status), code, message, request: request.to_owned(), request_id, retry_after }
    }

    pub fn is_retryable(&self) -> bool {
        matches!(self.kind, Kind::RateLimited | Kind::Server | Kind::Network)
    }

    fn describe(&self) -> String {
        let plain = match self.kind {
            Kind::Auth => Some("Cursor refused the API key (tether cloud login, or CURSOR_API_KEY)"),
            Kind::Busy => {
                Some("the cloud agent is still running a run (one at a time): wait for it to end, or cancel it")
            }
            Kind::RateLimited => Some("Cursor's rate limit: try again later"),
            _ => None,
        };
        let mut out = String::new();
        if !self.request.is_empty() {
            out.push_str(&self.request);
            out.push_str(": ");
        }
        if let Some(p) = plain {
            out.push_str(p);
            out.push_str(" — ");
        }
        match (self.status, &self.code) {
            (Some(s), Some(c)) => out.push_str(&format!("{s} {c}: {}", self.message)),
            (Some(s), None) => out.push_str(&format!("{s}: {}", self.message)),
            (None, _) => out.push_str(&self.message),
        }
        if let Some(id) = &self.request_id {
            out.push_str(&format!(" (request id {id})"));
        }
        out
    }
}

fn reason(status: u16) -> &'static str {
    reqwest::StatusCode::from_u16(status).ok().and_then(|s| s.canonical_reason()).unwrap_or("error")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_three_error_shapes_are_read() {
        let e = CloudError::from_response(
            "POST /v1/agents/bc-1/runs",
            409,
            r#"{"error":{"code":"agent_busy","message":"Only one run can be active per agent"}}"#,
            Some("req-9".into()),
            None,
        );
        assert_eq!(e.kind, Kind::Busy);
        assert!(e.to_string().contains("still running"), "{e}");
        assert!(e.to_string().contains("req-9"), "{e}");
        let e = CloudError::from_response(
            "GET /v1/me",
            429,
            r#"{"error":"Too Many Requests","message":"Rate limit exceeded. Please try again later."}"#,
            None,
            None,
        );
        assert_eq!((e.kind, e.message.as_str()), (Kind::RateLimited, "Rate limit exceeded. Please try again later."));
        let e =
            CloudError::from_response("GET /v1/me", 400, r#"{"code":"validation_error","message":"bad"}"#, None, None);
        assert_eq!((e.kind, e.code.as_deref()), (Kind::Request, Some("validation_error")));
        let e = CloudError::from_response("GET /v1/me", 502, "<html>bad gateway</html>", None, None);
        assert_eq!(e.kind, Kind::Server);
        assert!(e.is_retryable());
    }
}
