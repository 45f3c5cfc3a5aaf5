//! Cursor's webhooks (v0 launches only): `statusChange` when an agent reaches `FINISHED` or
//! `ERROR`, signed with HMAC-SHA256 over the raw body (`X-Webhook-Signature: sha256=<hex>`), and
//! the prompt block that lets a cloud agent call back into Tether through the person's public URL.

use hmac::{Hmac, Mac};
use sha2::Sha256;

/// Whether `signature` (`sha256=<hex>`) is `secret`'s HMAC of `body`, compared in constant time.
pub fn verify(secret: &str, signature: &str, body: &[u8]) -> bool {
    let Some(hex) = signature.trim().strip_prefix("sha256=") else { return false };
    let Some(given) = decode_hex(hex) else { return false };
    let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(secret.as_bytes()) else { return false };
    mac.update(body);
    mac.verify_slice(&given).is_ok()
}

fn decode_hex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok()).collect()
}

/// A `statusChange` payload (fields may be missing when Cursor does not know them).
#[derive(Debug, Clone, serde::Deserialize)]
pub struct StatusChange {
    pub event: String,
    pub id: String,
    pub status: String,
    #[serde(default)]
    pub summary: Option<String>,
}

/// Reads a payload, or says what is wrong with it.
pub fn parse(body: &[u8]) -> Result<StatusChange, String> {
    let s: StatusChange = serde_json::from_slice(body).map_err(|e| format!("not a statusChange payload: {e}"))?;
    if s.event != "statusChange" {
        return Err(format!("unknown event {:?}", s.event));
    }
    Ok(s)
}

/// Where Cursor posts webhooks for this Tether.
pub fn url(public: &str) -> String {
    format!("{}/webhooks/cursor", public.trim_end_matches('/'))
}

/// What a cloud agent is told about calling back: a one-time bootstrap token (never a lasting
/// secret), the exchange, and what the bearer it gets may do.
pub fn callback_block(public: &str, bootstrap: &str, has_task: bool) -> String {
    let p = public.trim_end_matches('/');
    let task = if has_task {
        format!(
            "- `GET {p}/api/agent/task` reads your task; `PATCH {p}/api/agent/task` with `{{\"comment\": …}}` or `{{\"summary\": …, \"status\": \"in_review\"}}` updates it.\n"
        )
    } else {
        String::new()
    };
    format!(
        "\n\n---\nTether (the board this work came from) can be reached while you work. Once, within 10 minutes: \
`POST {p}/api/agent-auth/exchange` with `{{\"bootstrap_token\": \"{bootstrap}\"}}` returns `{{\"token\": …}}`; send it as \
`Authorization: Bearer <token>` on these calls (and no others):\n{task}\
- `POST {p}/api/agent/signals` with `{{\"to\": \"human\", \"type\": \"question\", \"body\": …}}` asks the person (or an agent by name).\n\
- `GET {p}/api/skills/index` lists how-tos; `GET {p}/api/skills/{{name}}` reads one when you need it.\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_are_checked_over_the_raw_body() {
        let body = br#"{"event":"statusChange","id":"bc-1","status":"FINISHED"}"#;
        let secret = "s3cret-s3cret-s3cret-s3cret-s3cret";
        let good = tether_testkit::cursor_api::sign(secret, std::str::from_utf8(body).unwrap());
        assert!(verify(secret, &good, body));
        assert!(!verify(secret, &good, br#"{"event":"statusChange","id":"bc-1","status":"ERROR"}"#), "another body");
        assert!(!verify("another-secret-another-secret-xx", &good, body));
        assert!(!verify(secret, "sha256=zz", body) && !verify(secret, "", body) && !verify(secret, "md5=00", body));
        assert_eq!(parse(body).unwrap().status, "FINISHED");
        assert!(parse(br#"{"event":"other","id":"x","status":"y"}"#).is_err());
        assert!(parse(b"{not json").is_err());
    }
}
