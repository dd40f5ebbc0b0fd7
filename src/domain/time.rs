//! Timestamps as they travel: epoch milliseconds in storage and in the snake_case dialect,
//! RFC 3339 with milliseconds in the camelCase dialect.

use chrono::{DateTime, NaiveDate, Offset, SecondsFormat, TimeZone, Utc};
use chrono_tz::Tz;

/// The latest instant a client may give, in epoch ms: 9999-12-31T23:59:59.999Z, the last one
/// RFC 3339 can write (its years have four digits) and so the last one both dialects can answer.
pub const MAX_MILLIS: i64 = 253_402_300_799_999;

/// Checks an instant a client gave in epoch ms: from 1970 ([`UNIX_EPOCH`](std::time::UNIX_EPOCH))
/// to [`MAX_MILLIS`]. Every later step (days added, periods measured, dates formatted in a
/// time zone) then stays far inside `i64` and chrono's range. The error names `field`.
pub fn check_millis(field: &str, millis: i64) -> Result<i64, String> {
    if (0..=MAX_MILLIS).contains(&millis) {
        Ok(millis)
    } else {
        Err(format!(
            "`{field}` must be epoch milliseconds from 0 (1970) to {MAX_MILLIS} (the end of 9999)"
        ))
    }
}

/// The instant `millis` in `zone`, when chrono can read both it and its local time. Near the
/// ends of chrono's range an instant may exist while its local time does not, and reading the
/// local time (a date, a format) would panic: such instants, as any a client stored before
/// [`check_millis`] was asked, are `None` here.
pub fn local_time(zone: Tz, millis: i64) -> Option<DateTime<Tz>> {
    let at = zone.timestamp_millis_opt(millis).single()?;
    at.naive_utc().checked_add_offset(at.offset().fix())?;
    Some(at)
}

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
    use chrono::Datelike;

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

    #[test]
    fn local_times_near_the_end_of_chronos_range_are_none_rather_than_a_panic() {
        let east: Tz = "Pacific/Kiritimati".parse().unwrap();
        let west: Tz = "Pacific/Niue".parse().unwrap();
        let last = DateTime::<Utc>::MAX_UTC.timestamp_millis();
        let first = DateTime::<Utc>::MIN_UTC.timestamp_millis();
        assert!(local_time(east, last).is_none());
        assert!(local_time(west, first).is_none());
        assert!(local_time(west, last).is_some_and(|t| t.date_naive().day() == 31));
        for millis in [i64::MIN, i64::MAX, -1, 0, MAX_MILLIS] {
            if let Some(at) = local_time(east, millis) {
                at.format("%Y-%m-%d %H:%M").to_string();
            }
        }
    }

    #[test]
    fn client_instants_run_from_1970_to_the_end_of_9999() {
        assert_eq!(rfc3339_millis(MAX_MILLIS), "9999-12-31T23:59:59.999Z");
        for fine in [0, 1, 1_795_341_600_123, MAX_MILLIS] {
            assert_eq!(check_millis("t", fine), Ok(fine));
        }
        for out in [-1, i64::MIN, MAX_MILLIS + 1, i64::MAX] {
            let message = check_millis("t", out).unwrap_err();
            assert!(
                message.starts_with("`t` must be epoch milliseconds"),
                "{message}"
            );
        }
    }
}
