//! ICU4X with CLDR data compiled in (Unicode CLDR, <https://cldr.unicode.org>): country names
//! in the reader's language, sorted as that language sorts, numbers with its separators, and
//! dates in its own order and words. The formatters are built once per language on first use.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::str::FromStr;
use std::sync::LazyLock;

use chrono::{Datelike, NaiveDate};
use fixed_decimal::{Decimal, FloatPrecision, SignedRoundingMode, UnsignedRoundingMode};
use icu_calendar::Gregorian;
use icu_collator::{Collator, CollatorBorrowed, options::CollatorOptions};
use icu_datetime::FixedCalendarDateTimeFormatter;
use icu_datetime::fieldsets::{MD, YMD};
use icu_datetime::input::Date;
use icu_datetime::options::YearStyle;
use icu_decimal::DecimalFormatter;
use icu_experimental::displaynames::DisplayNamesOptions;
use icu_experimental::displaynames::multi::RegionDisplayNames;
use icu_locale_core::Locale;
use icu_locale_core::subtags::Region;

use crate::domain::account::Language;
use crate::domain::country::ISO_3166_ALPHA2;

/// The ICU locale of `language`. Arabic keeps Latin digits (`-u-nu-latn`), as the apps, the
/// charts and the PDF's tables write their figures; English is British English, as the
/// clinics using it write dates (21/11/2026, not 11/21/2026).
fn locale(language: Language) -> Locale {
    let tag = match language {
        Language::Ar => "ar-u-nu-latn",
        Language::En => "en-GB",
        other => other.code(),
    };
    Locale::from_str(tag).expect("the supported languages are valid locales")
}

struct LocaleData {
    /// Every assigned country code with its name, sorted by name.
    countries: Vec<(&'static str, String)>,
    numbers: DecimalFormatter,
    /// A date in figures with the full year (a birthday's 58 could be 1958 or 2058).
    short_date: FixedCalendarDateTimeFormatter<Gregorian, YMD>,
    /// A date with the month's name.
    long_date: FixedCalendarDateTimeFormatter<Gregorian, YMD>,
    /// Day and month in figures, for chart ticks.
    day_month: FixedCalendarDateTimeFormatter<Gregorian, MD>,
}

static DATA: LazyLock<HashMap<Language, LocaleData>> = LazyLock::new(|| {
    Language::ALL
        .into_iter()
        .map(|language| (language, LocaleData::new(language)))
        .collect()
});

impl LocaleData {
    fn new(language: Language) -> Self {
        let locale = locale(language);
        let names = RegionDisplayNames::try_new((&locale).into(), DisplayNamesOptions::default())
            .expect("compiled CLDR data has region names for every supported language");
        let collator: CollatorBorrowed<'static> =
            Collator::try_new((&locale).into(), CollatorOptions::default())
                .expect("compiled CLDR data has collation for every supported language");
        let mut countries: Vec<(&'static str, String)> = ISO_3166_ALPHA2
            .iter()
            .map(|code| {
                let name = Region::try_from_str(code)
                    .ok()
                    .and_then(|region| names.of(region))
                    .map_or_else(|| (*code).to_owned(), str::to_owned);
                (*code, name)
            })
            .collect();
        countries.sort_by(|a, b| match collator.compare(&a.1, &b.1) {
            Ordering::Equal => a.0.cmp(b.0),
            other => other,
        });
        let dates = "compiled CLDR data has date patterns for every supported language";
        LocaleData {
            countries,
            numbers: DecimalFormatter::try_new((&locale).into(), Default::default())
                .expect("compiled CLDR data has number symbols for every supported language"),
            short_date: FixedCalendarDateTimeFormatter::try_new(
                (&locale).into(),
                YMD::short().with_year_style(YearStyle::Full),
            )
            .expect(dates),
            long_date: FixedCalendarDateTimeFormatter::try_new((&locale).into(), YMD::long())
                .expect(dates),
            day_month: FixedCalendarDateTimeFormatter::try_new((&locale).into(), MD::short())
                .expect(dates),
        }
    }
}

fn data(language: Language) -> &'static LocaleData {
    &DATA[&language]
}

/// Every assigned ISO 3166-1 country code with its name in `language`, in that language's
/// alphabetical order.
pub fn countries(language: Language) -> &'static [(&'static str, String)] {
    &data(language).countries
}

/// The name of the country with ISO 3166-1 code `code` (any case) in `language`.
pub fn country_name(language: Language, code: &str) -> Option<&'static str> {
    let code = code.trim().to_ascii_uppercase();
    data(language)
        .countries
        .iter()
        .find(|(c, _)| *c == code)
        .map(|(_, name)| name.as_str())
}

/// The calendar date (proleptic Gregorian, as chrono counts) for ICU.
fn gregorian(date: NaiveDate) -> Option<Date<Gregorian>> {
    let month = u8::try_from(date.month()).ok()?;
    let day = u8::try_from(date.day()).ok()?;
    Date::try_new_gregorian(date.year(), month, day).ok()
}

/// Without the bidirectional marks CLDR puts in some patterns (Arabic's `21‏/11‏/2026`): the
/// portal isolates every value already, and in a PDF's text layer they would be stray
/// characters.
fn without_marks(text: String) -> String {
    text.chars()
        .filter(|c| !matches!(c, '\u{200e}' | '\u{200f}' | '\u{061c}'))
        .collect()
}

/// `date` written by `format`, or nothing for a date ICU's calendar cannot hold.
fn written(date: NaiveDate, format: impl Fn(&Date<Gregorian>) -> String) -> String {
    gregorian(date).map_or_else(String::new, |d| without_marks(format(&d)))
}

/// `date` in figures as `language` writes it: `21/11/2026` (en), `21.11.2026` (de),
/// `21-11-2026` (nl), `2026/11/21` (zh).
pub fn short_date(language: Language, date: NaiveDate) -> String {
    written(date, |d| data(language).short_date.format(d).to_string())
}

/// `date` with the month's name: `21 November 2026` (en), `21. November 2026` (de),
/// `2026年11月21日` (zh).
pub fn long_date(language: Language, date: NaiveDate) -> String {
    written(date, |d| data(language).long_date.format(d).to_string())
}

/// Day and month in figures, for chart ticks: `21/11` (en), `21.11.` (de), `11/21` (zh).
pub fn day_month(language: Language, date: NaiveDate) -> String {
    written(date, |d| data(language).day_month.format(d).to_string())
}

/// `value` with at most `decimals` places (trailing zeros dropped), with the language's
/// decimal and grouping separators: `1.234,5` (de), `1,234.5` (en).
pub fn decimal(language: Language, value: f64, decimals: usize) -> String {
    if !value.is_finite() {
        return String::new();
    }
    let Ok(mut number) = Decimal::try_from_f64(value, FloatPrecision::RoundTrip) else {
        return String::new();
    };
    // Half away from zero, as people round by hand (72.25 → 72.3).
    let places = i16::try_from(decimals).unwrap_or(i16::MAX);
    number.round_with_mode(
        -places,
        SignedRoundingMode::Unsigned(UnsignedRoundingMode::HalfExpand),
    );
    number.absolute.trim_end();
    if number.absolute.is_zero() {
        // −0.04 rounded to one place is 0, not "-0".
        number = Decimal::from(0);
    }
    data(language).numbers.format(&number).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn countries_are_named_and_sorted_in_the_readers_language() {
        assert_eq!(country_name(Language::Nl, "be"), Some("België"));
        assert_eq!(country_name(Language::De, "BE"), Some("Belgien"));
        assert_eq!(country_name(Language::Fr, "DE"), Some("Allemagne"));
        assert_eq!(country_name(Language::Zh, "BE"), Some("比利时"));
        assert_eq!(country_name(Language::Ar, "BE"), Some("بلجيكا"));
        assert_eq!(country_name(Language::En, "XX"), None);
        for language in Language::ALL {
            let all = countries(language);
            assert_eq!(all.len(), ISO_3166_ALPHA2.len());
            // CLDR names every assigned code: none is left as its bare code.
            assert!(all.iter().all(|(code, name)| name != code), "{language:?}");
        }
        // Collation, not byte order: Österreich sorts with the O's in German.
        let german: Vec<&str> = countries(Language::De)
            .iter()
            .map(|(_, n)| n.as_str())
            .collect();
        let at = |name: &str| german.iter().position(|n| *n == name).unwrap();
        assert!(at("Oman") < at("Österreich") && at("Österreich") < at("Pakistan"));
    }

    #[test]
    fn dates_follow_the_languages_cldr_patterns() {
        let date = NaiveDate::from_ymd_opt(1958, 3, 14).unwrap();
        let short: Vec<String> = Language::ALL
            .into_iter()
            .map(|l| short_date(l, date))
            .collect();
        // de en es fr it nl ar zh
        assert_eq!(
            short,
            [
                "14.03.1958",
                "14/03/1958",
                "14/3/1958",
                "14/03/1958",
                "14/03/1958",
                "14-03-1958",
                "14/3/1958",
                "1958/3/14"
            ]
        );
        let day = NaiveDate::from_ymd_opt(2026, 11, 21).unwrap();
        assert_eq!(long_date(Language::De, day), "21. November 2026");
        assert_eq!(long_date(Language::En, day), "21 November 2026");
        assert_eq!(long_date(Language::Es, day), "21 de noviembre de 2026");
        assert_eq!(long_date(Language::Zh, day), "2026年11月21日");
        assert_eq!(day_month(Language::De, day), "21.11.");
        assert_eq!(day_month(Language::Nl, day), "21-11");
        assert_eq!(day_month(Language::Zh, day), "11/21");
    }

    #[test]
    fn numbers_use_the_languages_separators() {
        assert_eq!(decimal(Language::De, 67.5, 1), "67,5");
        assert_eq!(decimal(Language::En, 67.5, 1), "67.5");
        assert_eq!(decimal(Language::Nl, 165.0, 1), "165");
        assert_eq!(decimal(Language::De, 1234.56, 1), "1.234,6");
        assert_eq!(decimal(Language::Fr, 1234.5, 1), "1\u{202f}234,5");
        assert_eq!(decimal(Language::Ar, 72.25, 1), "72.3");
        assert_eq!(decimal(Language::Zh, -3.0, 2), "-3");
        assert_eq!(decimal(Language::En, f64::NAN, 1), "");
        assert_eq!(decimal(Language::En, -0.04, 1), "0");
        assert_eq!(decimal(Language::En, 0.5, 0), "1");
    }
}
