//! Timestamps as they travel: epoch milliseconds in storage and in the snake_case dialect,
//! RFC 3339 with milliseconds in the camelCase dialect.

use chrono::{DateTime, NaiveDate, SecondsFormat, Utc};

/// Formats epoch milliseconds as `2026-11-22T10:00:00.000Z`.
pub fn rfc3339_millis(millis: i64) -> String {
    DateTime::<Utc>::from_timestamp_millis(millis)
        .unwrap_or_default()
        .to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// Parses a timestamp given as epoch milliseconds or ISO 8601 (RFC 3339, or a bare date at
/// midnight UTC).
pub fn parse_millis(text: &str) -> Option<i64> {
    let text = text.trim();
    if let Ok(millis) = text.parse::<i64>() {
        return Some(millis);
    }
    if let Ok(instant) = DateTime::parse_from_rfc3339(text) {
        return Some(instant.timestamp_millis());
    }
    NaiveDate::parse_from_str(text, "%Y-%m-%d")
        .ok()
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .map(|d| d.and_utc().timestamp_millis())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_between_dialects() {
        let millis = 1_795_341_600_123;
        let text = rfc3339_millis(millis);
        assert_eq!(text, "2026-11-22T10:00:00.123Z");
        assert_eq!(parse_millis(&text), Some(millis));
        assert_eq!(parse_millis("1795341600123"), Some(millis));
        assert_eq!(parse_millis("2026-11-22"), Some(1_795_305_600_000));
        assert_eq!(parse_millis("2026-11-22T11:00:00.123+01:00"), Some(millis));
        assert_eq!(parse_millis("yesterday"), None);
    }
}
