//! Decoding Cursor's stored values: JSON held as TEXT, BLOB or NULL, often double-encoded.
//!
//! Pure functions over bytes and `serde_json::Value`; no SQLite here.

use serde_json::Value;

/// What a raw `value` cell held.
#[derive(Debug, Clone)]
pub enum Decoded {
    Json(Value),
    /// SQL NULL, or JSON `null`.
    Null,
    /// Not parseable as JSON (truncated, binary, …).
    Bad,
}

/// Decode a `value` cell (TEXT or BLOB, both UTF-8 JSON in practice).
pub fn decode(bytes: Option<&[u8]>) -> Decoded {
    let Some(bytes) = bytes else { return Decoded::Null };
    match serde_json::from_slice::<Value>(bytes) {
        Ok(Value::Null) => Decoded::Null,
        Ok(v) => Decoded::Json(v),
        Err(_) => Decoded::Bad,
    }
}

/// A field that may be an object/array or a JSON string holding one.
pub fn maybe_nested(v: &Value) -> Option<Value> {
    match v {
        Value::String(s) => {
            let t = s.trim_start();
            if t.starts_with('{') || t.starts_with('[') { serde_json::from_str(s).ok() } else { None }
        }
        Value::Null => None,
        other => Some(other.clone()),
    }
}

pub fn str_field<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

pub fn non_empty(s: Option<&str>) -> Option<String> {
    s.map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned)
}

/// A timestamp as epoch ms, from a number (seconds or ms) or an ISO-8601 string.
pub fn timestamp_ms(v: Option<&Value>) -> Option<i64> {
    match v? {
        Value::Number(n) => {
            let f = n.as_f64()?;
            if !f.is_finite() || f <= 0.0 {
                return None;
            }
            // Values below 10^10 are seconds (year < 2286); above, milliseconds.
            Some(if f < 1e10 { (f * 1000.0) as i64 } else { f as i64 })
        }
        Value::String(s) => {
            if let Ok(n) = s.trim().parse::<f64>() {
                return timestamp_ms(Some(&Value::from(n)));
            }
            chrono::DateTime::parse_from_rfc3339(s.trim()).ok().map(|d| d.timestamp_millis())
        }
        _ => None,
    }
}

/// Keys whose values are secrets and must never be read into our index or output.
pub fn is_secret_key(key: &str) -> bool {
    // Asked of every key a walk reads: the suffix is compared in place, not on a lowered copy.
    const KEY: &[u8] = b"encryptionkey";
    key.starts_with("cursorAuth/")
        || key.starts_with("secret://")
        || (key.len() >= KEY.len() && key.as_bytes()[key.len() - KEY.len()..].eq_ignore_ascii_case(KEY))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decode_tolerates_null_bad_and_text() {
        assert!(matches!(decode(None), Decoded::Null));
        assert!(matches!(decode(Some(b"null")), Decoded::Null));
        assert!(matches!(decode(Some(b"{\"a\":")), Decoded::Bad));
        assert!(matches!(decode(Some(b"{\"a\":1}")), Decoded::Json(_)));
    }

    #[test]
    fn timestamps_accept_ms_seconds_and_iso() {
        assert_eq!(timestamp_ms(Some(&Value::from(1_761_919_304_953_i64))), Some(1_761_919_304_953));
        assert_eq!(timestamp_ms(Some(&Value::from(1_761_919_304_i64))), Some(1_761_919_304_000));
        assert_eq!(timestamp_ms(Some(&Value::from("2025-10-31T14:39:16.989Z"))), Some(1_761_921_556_989));
        assert_eq!(timestamp_ms(Some(&Value::from("yesterday"))), None);
        assert_eq!(timestamp_ms(Some(&Value::Bool(true))), None);
    }

    #[test]
    fn secret_keys_are_recognised() {
        assert!(is_secret_key("cursorAuth/accessToken"));
        assert!(is_secret_key("secret://x"));
        assert!(is_secret_key("speculativeSummarizationEncryptionKey"));
        assert!(is_secret_key("ENCRYPTIONKEY") && !is_secret_key("ncryptionKey") && !is_secret_key(""));
        assert!(!is_secret_key("composerData:abc"));
    }
}
