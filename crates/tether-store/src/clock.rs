//! Wall-clock time as Tether stores it (epoch milliseconds) and shows it (RFC 3339, UTC).
//!
//! Depends on nothing else in the crate, so every domain can use it.

/// Now, in epoch milliseconds.
pub fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

/// Epoch ms → RFC 3339 (UTC, ms precision).
pub fn iso(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|d| d.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
        .unwrap_or_default()
}

/// RFC 3339 → epoch ms (the inverse of [`iso`]).
pub fn parse_iso(s: &str) -> Option<i64> {
    chrono::DateTime::parse_from_rfc3339(s.trim()).ok().map(|d| d.timestamp_millis())
}
