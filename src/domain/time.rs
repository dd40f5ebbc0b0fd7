//! Timestamps as they travel: epoch milliseconds in storage and in the snake_case dialect,
//! RFC 3339 with milliseconds in the camelCase dialect.

use chrono::{DateTime, NaiveDate, NaiveDateTime, NaiveTime, Offset, SecondsFormat, TimeZone, Utc};
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

/// The first instant of local calendar day `date` in `zone`, in epoch ms: its midnight, or,
/// where the clocks jump over midnight (America/Santiago, America/Havana, Asia/Beirut and
/// Africa/Cairo start summer time at 00:00), the first local time that exists after it; where
/// midnight happens twice (a fall-back at 01:00), the first. `None` only outside chrono's range.
pub fn start_of_day(date: NaiveDate, zone: Tz) -> Option<i64> {
    at_local_time(date, NaiveTime::MIN, zone)
}

/// The first instant after local calendar day `date` in `zone`: the start of the next day.
/// A day `[start_of_day(date), end_of_day(date))` is what "until this day, included" means.
pub fn end_of_day(date: NaiveDate, zone: Tz) -> Option<i64> {
    start_of_day(date.succ_opt()?, zone)
}

/// The instant local `time` on `date` in `zone` names, in epoch ms: the earlier of two when the
/// clocks go back over it, the first existing local time after it when they jump over it.
pub fn at_local_time(date: NaiveDate, time: NaiveTime, zone: Tz) -> Option<i64> {
    let local = NaiveDateTime::new(date, time);
    if let Some(at) = zone.from_local_datetime(&local).earliest() {
        return Some(at.timestamp_millis());
    }
    // Skipped by a jump forward: the first minute after it that exists. A jump lasts at most
    // a few hours (Lord Howe's is 30 minutes, the largest in the tz database two hours).
    (1..=24 * 60).find_map(|minutes| {
        let later = local.checked_add_signed(chrono::Duration::minutes(minutes))?;
        zone.from_local_datetime(&later)
            .earliest()
            .map(|at| at.timestamp_millis())
    })
}

/// The calendar day `text` (`YYYY-MM-DD`) names, if it is one.
pub fn parse_day(text: &str) -> Option<NaiveDate> {
    NaiveDate::parse_from_str(text.trim(), "%Y-%m-%d").ok()
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

    fn utc(text: &str) -> i64 {
        DateTime::parse_from_rfc3339(text)
            .unwrap()
            .timestamp_millis()
    }

    #[test]
    fn a_day_starts_at_its_first_instant_where_midnight_is_skipped_or_repeated() {
        let day = |y, m, d| NaiveDate::from_ymd_opt(y, m, d).unwrap();
        let zone = |name: &str| name.parse::<Tz>().unwrap();
        // Summer time starts at midnight: the day starts at 01:00 local, the jump's end.
        for (name, date, first) in [
            // Chile: first Sunday of September 2026, 00:00 -04 becomes 01:00 -03.
            ("America/Santiago", day(2026, 9, 6), "2026-09-06T04:00:00Z"),
            // Cuba: second Sunday of March 2026, 00:00 -05 becomes 01:00 -04.
            ("America/Havana", day(2026, 3, 8), "2026-03-08T05:00:00Z"),
            // Lebanon: last Sunday of March 2026, 00:00 +02 becomes 01:00 +03.
            ("Asia/Beirut", day(2026, 3, 29), "2026-03-28T22:00:00Z"),
            // Egypt: last Friday of April 2026, 00:00 +02 becomes 01:00 +03.
            ("Africa/Cairo", day(2026, 4, 24), "2026-04-23T22:00:00Z"),
        ] {
            assert_eq!(
                start_of_day(date, zone(name)),
                Some(utc(first)),
                "{name} {date}"
            );
            // The day before it ends where that day starts: no gap, no overlap.
            let before = date.pred_opt().unwrap();
            assert_eq!(end_of_day(before, zone(name)), Some(utc(first)), "{name}");
            assert!(start_of_day(before, zone(name)).unwrap() < utc(first));
        }
        // Cuba ends summer time at 01:00 on the first Sunday of November 2026: 00:00-01:00
        // happens twice, and the day starts at the first midnight.
        assert_eq!(
            start_of_day(day(2026, 11, 1), zone("America/Havana")),
            Some(utc("2026-11-01T04:00:00Z"))
        );
        // An ordinary day.
        assert_eq!(
            start_of_day(day(2026, 11, 26), zone("Europe/Brussels")),
            Some(utc("2026-11-25T23:00:00Z"))
        );
        assert_eq!(
            at_local_time(
                day(2026, 3, 29),
                NaiveTime::from_hms_opt(2, 30, 0).unwrap(),
                zone("Europe/Brussels")
            ),
            Some(utc("2026-03-29T01:00:00Z")),
            "02:30 does not exist that night: 03:00 CEST, the jump's end"
        );
        assert_eq!(parse_day(" 2026-02-28 "), Some(day(2026, 2, 28)));
        assert_eq!(parse_day("2026-02-30"), None);
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
