//! Dates, times and numbers as each language writes them, for the portal and the PDFs alike.
//! Fluent has no date formatting, so both get finished strings from here; numbers come from
//! ICU4X with CLDR's symbols.

use chrono::{DateTime, Datelike, NaiveDate, Offset};
use chrono_tz::Tz;

use crate::domain::account::Language;

fn locale(language: Language) -> chrono::Locale {
    match language {
        Language::De => chrono::Locale::de_DE,
        Language::En => chrono::Locale::en_GB,
        Language::Es => chrono::Locale::es_ES,
        Language::Fr => chrono::Locale::fr_FR,
        Language::It => chrono::Locale::it_IT,
        Language::Nl => chrono::Locale::nl_NL,
        Language::Ar => chrono::Locale::ar_SA,
        Language::Zh => chrono::Locale::zh_CN,
    }
}

fn short_pattern(language: Language) -> &'static str {
    match language {
        Language::De => "%d.%m.%Y",
        Language::Nl => "%d-%m-%Y",
        Language::Zh => "%Y-%m-%d",
        _ => "%d/%m/%Y",
    }
}

/// A calendar date in figures, e.g. `14.03.1958` (de) or `1958-03-14` (zh).
pub fn short_date(language: Language, date: NaiveDate) -> String {
    date.format_localized(short_pattern(language), locale(language))
        .to_string()
}

/// A date with the month's name, e.g. `20 November 2026` or `2026年11月20日`.
pub fn long_date(language: Language, instant: DateTime<Tz>) -> String {
    match language {
        Language::Zh => format!(
            "{}年{}月{}日",
            instant.year(),
            instant.month(),
            instant.day()
        ),
        _ => instant
            .format_localized("%-d %B %Y", locale(language))
            .to_string(),
    }
}

/// A day and month in figures for chart ticks, e.g. `14.03` (de), `03-14` (zh).
pub fn day_month(language: Language, date: NaiveDate) -> String {
    let pattern = match language {
        Language::De => "%d.%m",
        Language::Nl => "%d-%m",
        Language::Zh => "%m-%d",
        _ => "%d/%m",
    };
    date.format(pattern).to_string()
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
    use chrono::TimeZone;

    #[test]
    fn dates_follow_the_language() {
        let date = NaiveDate::from_ymd_opt(1958, 3, 14).unwrap();
        assert_eq!(short_date(Language::De, date), "14.03.1958");
        assert_eq!(short_date(Language::Zh, date), "1958-03-14");
        assert_eq!(short_date(Language::Fr, date), "14/03/1958");
        assert_eq!(day_month(Language::De, date), "14.03");
        assert_eq!(day_month(Language::Zh, date), "03-14");
        let instant = chrono_tz::Asia::Tokyo
            .timestamp_millis_opt(1_795_217_400_000)
            .unwrap();
        assert_eq!(long_date(Language::De, instant), "21 November 2026");
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
