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

/// A moment given as an age back from now (`7d`, `2w`, `1y`, `24h`, `30m`), an RFC 3339 time or
/// a date (`2026-11-01`, UTC midnight), as epoch ms. An age is a whole number of units, none or
/// more (`-5d` is not one: it read as five days ahead); one that does not fit in milliseconds is
/// not one either.
pub fn parse_since(s: &str) -> Option<i64> {
    let s = s.trim();
    let unit = |suffix: char, ms: i64| {
        s.strip_suffix(suffix)
            .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|n| n.parse::<i64>().ok())
            .and_then(|n| n.checked_mul(ms))
            .and_then(|back| now_ms().checked_sub(back))
    };
    unit('d', 86_400_000)
        .or_else(|| unit('w', 7 * 86_400_000))
        .or_else(|| unit('y', 365 * 86_400_000))
        .or_else(|| unit('h', 3_600_000))
        .or_else(|| unit('m', 60_000))
        .or_else(|| parse_iso(s))
        .or_else(|| {
            chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d")
                .ok()
                .and_then(|d| d.and_hms_opt(0, 0, 0))
                .map(|d| d.and_utc().timestamp_millis())
        })
}
