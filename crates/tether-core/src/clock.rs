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
