//! Dates, times and numbers as each language writes them, for the portal and the PDFs alike.
//! Fluent has no date formatting, so both get finished strings from here; dates and numbers
//! come from ICU4X with CLDR's patterns and symbols (`i18n::locale`). Times are on the 24-hour
//! clock in every language, as clinical records write them.

use chrono::{DateTime, Offset};
use chrono_tz::Tz;

use crate::domain::account::Language;

/// A calendar date in figures (CLDR's short pattern with the full year), e.g. `14.03.1958`
/// (de) or `1958/3/14` (zh).
pub use crate::i18n::locale::short_date;

/// A day and month in figures for chart ticks, e.g. `14.03.` (de), `3/14` (zh).
pub use crate::i18n::locale::day_month;

/// A date with the month's name, e.g. `20 November 2026`, `20. November 2026` or
/// `2026年11月20日` (CLDR's long pattern).
pub fn long_date(language: Language, instant: DateTime<Tz>) -> String {
    crate::i18n::locale::long_date(language, instant.date_naive())
}

/// A time of day, 24-hour clock.
pub fn time(instant: DateTime<Tz>) -> String {
    instant.format("%H:%M").to_string()
}

/// The zone named unambiguously: its IANA name and its offset at that instant.
pub fn zone(instant: DateTime<Tz>) -> String {
    let seconds = instant.offset().fix().local_minus_utc();
    let sign = if seconds < 0 { '-' } else { '+' };
    let minutes = seconds.abs() / 60;
    format!(
        "{} (UTC{sign}{:02}:{:02})",
        instant.timezone().name(),
        minutes / 60,
        minutes % 60
    )
}

/// A decimal number with the language's separators and at most `decimals` places, through
/// ICU4X and CLDR (`i18n::locale::decimal`).
pub use crate::i18n::locale::decimal;

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{NaiveDate, TimeZone};

    #[test]
    fn dates_times_and_zones_follow_the_language() {
        let date = NaiveDate::from_ymd_opt(1958, 3, 14).unwrap();
        assert_eq!(short_date(Language::De, date), "14.03.1958");
        assert_eq!(short_date(Language::Zh, date), "1958/3/14");
        assert_eq!(short_date(Language::Fr, date), "14/03/1958");
        assert_eq!(day_month(Language::De, date), "14.03.");
        assert_eq!(day_month(Language::Zh, date), "3/14");
        let instant = chrono_tz::Asia::Tokyo
            .timestamp_millis_opt(1_795_217_400_000)
            .unwrap();
        assert_eq!(long_date(Language::De, instant), "21. November 2026");
        assert_eq!(long_date(Language::Fr, instant), "21 novembre 2026");
        assert_eq!(long_date(Language::Zh, instant), "2026年11月21日");
        assert_eq!(time(instant), "08:30");
        assert_eq!(zone(instant), "Asia/Tokyo (UTC+09:00)");
        let new_york = chrono_tz::America::New_York
            .timestamp_millis_opt(1_795_217_400_000)
            .unwrap();
        assert_eq!(zone(new_york), "America/New_York (UTC-05:00)");
    }

    #[test]
    fn decimals_use_the_local_separator() {
        assert_eq!(decimal(Language::De, 68.5, 1), "68,5");
        assert_eq!(decimal(Language::En, 68.0, 1), "68");
        assert_eq!(decimal(Language::Zh, 1.25, 2), "1.25");
    }
}
