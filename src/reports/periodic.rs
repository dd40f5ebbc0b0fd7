//! The data of a periodic report: everything its PDF shows, translated and formatted in the
//! chosen language and time zone. As for measurement reports, the template only lays it out,
//! so the hash of this data (with the template revision) identifies the PDF exactly.

use chrono::{DateTime, Days, TimeZone, Timelike, Utc};
use chrono_tz::Tz;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::common::{as_of, labels, patient_block, risk_block, translated_or_raw};
use super::findings::{Headline, RESULT_KEYS, hex, key_colour, result_key};
use super::format;
use super::series::{self, Columns};
use crate::analysis::{QualityClass, ResultKey};
use crate::domain::account::Language;
use crate::i18n::Translator;
use crate::store::entities::{profile, report, user};

/// Messages only the periodic template prints as they are.
const LABELS: [&str; 29] = [
    "period",
    "burden",
    "heart-rate-sd",
    "quality-good",
    "quality-fair",
    "quality-poor",
    "measurement-count",
    "no-measurements",
    "results-by-class",
    "heart-rate-min",
    "heart-rate-mean",
    "heart-rate-max",
    "heart-rate-over-time",
    "time-of-day",
    "time-of-day-night",
    "time-of-day-morning",
    "time-of-day-afternoon",
    "time-of-day-evening",
    "symptoms-and-results",
    "with-symptoms",
    "without-symptoms",
    "signal-quality-share",
    "all-measurements",
    "column-date",
    "column-time",
    "column-heart-rate",
    "column-result",
    "column-review",
    "column-symptoms",
];

/// Time-of-day buckets: label key and first local hour.
const DAY_PARTS: [(&str, u32); 4] = [
    ("time-of-day-night", 0),
    ("time-of-day-morning", 6),
    ("time-of-day-afternoon", 12),
    ("time-of-day-evening", 18),
];

/// One measurement as a report stores it. Reports made before the server analysed
/// measurements hold no `heart_rate` or `result`: their measurements show no result.
#[derive(Debug, Clone, Deserialize)]
pub struct Item {
    pub id: String,
    pub measurement_timestamp: Option<i64>,
    /// The server's heart rate, bpm.
    #[serde(default)]
    pub heart_rate: Option<f64>,
    /// The server's result key.
    #[serde(default)]
    pub result: Option<String>,
    /// The server's indicator, which colours the result.
    #[serde(default)]
    pub indicator: Option<String>,
    /// The rhythm labels of the analysis, least severe first.
    #[serde(default)]
    pub labels: Vec<String>,
    pub status: String,
    pub label: Option<String>,
    #[serde(default)]
    pub symptoms: Vec<String>,
    #[serde(default)]
    pub quality: Option<String>,
}

impl Item {
    /// The result key; none stored (or one this release does not know) is no result.
    fn key(&self) -> ResultKey {
        self.result
            .as_deref()
            .and_then(result_key)
            .unwrap_or(ResultKey::NoResult)
    }

    /// The heart rate when it is a number a chart can place.
    fn rate(&self) -> Option<f64> {
        self.heart_rate.filter(|hr| hr.is_finite())
    }
}

/// The heart-rate chart's plot as `periodic.typ` draws it: 166 mm wide, each measurement a
/// dot 4 pt across.
const CHART_WIDTH_MM: f64 = 166.0;
const CHART_DOT_PT: f64 = 4.0;

/// Result keys in the order a report counts them: the rhythm results, then no result.
const COUNTED: [ResultKey; 5] = [
    ResultKey::Regular,
    ResultKey::PossiblyIrregular,
    ResultKey::PossibleAtrialFibrillation,
    ResultKey::QualityTooLow,
    ResultKey::NoResult,
];

#[derive(Debug, Deserialize)]
struct Stored {
    #[serde(default)]
    measurements: Vec<Item>,
}

/// The measurements a report covers, as stored with it.
pub fn items(report: &report::Model) -> Vec<Item> {
    serde_json::from_str::<Stored>(&report.data)
        .map(|s| s.measurements)
        .unwrap_or_default()
}

/// Everything a periodic report is made from.
pub struct PeriodicReportInput<'a> {
    pub report: &'a report::Model,
    pub patient: &'a user::Model,
    pub profile: Option<&'a profile::Model>,
    pub language: Language,
    pub time_zone: Tz,
}

/// The render data and the instant it reflects.
pub struct PeriodicData {
    pub data: Value,
    pub as_of: DateTime<Utc>,
}

fn local(zone: Tz, millis: i64) -> DateTime<Tz> {
    zone.timestamp_millis_opt(millis)
        .single()
        .unwrap_or_else(|| zone.timestamp_millis_opt(0).unwrap())
}

fn date_time(language: Language, at: DateTime<Tz>) -> String {
    format!(
        "{} {}",
        format::short_date(language, at.date_naive()),
        format::time(at)
    )
}

/// Builds the data of a periodic report.
pub fn build(input: &PeriodicReportInput) -> PeriodicData {
    let tr = Translator::new(input.language);
    let language = input.language;
    let zone = input.time_zone;
    let report = input.report;
    let items = items(report);
    let profile: Map<String, Value> = input
        .profile
        .and_then(|p| p.data.as_object().cloned())
        .unwrap_or_default();

    let as_of = as_of(&[
        report.update_timestamp,
        input.patient.update_timestamp,
        input.profile.map_or(0, |p| p.update_timestamp),
    ]);
    let start = local(zone, report.period_start_timestamp);
    let end = local(zone, report.period_end_timestamp);
    let mut labels = labels(&tr, &LABELS, as_of, zone);
    labels.insert(
        "report-title".into(),
        tr.text("periodic-report-title").into(),
    );
    labels.insert(
        "report-subtitle".into(),
        translated_or_raw(&tr, "trigger", &report.trigger).into(),
    );

    let period = json!({
        "range": tr.text_with("period-range", &[
            ("start", date_time(language, start)),
            ("end", date_time(language, end)),
        ]),
        "zone": format::zone(start),
    });

    let rows: Vec<Value> = items.iter().map(|item| row(&tr, zone, item)).collect();
    let data = json!({
        // The report's version: whatever changes it makes a new PDF.
        "version": report.update_timestamp,
        "report_id": report.id,
        "lang": language.code(),
        "dir": if language == Language::Ar { "rtl" } else { "ltr" },
        "labels": labels,
        "period": period,
        "patient": patient_block(&tr, language, input.patient, &profile, end.date_naive()),
        "risk": risk_block(&tr, language, &profile),
        "summary": summary(&tr, language, &items),
        "chart": chart(language, zone, report, &items),
        "time_of_day": time_of_day(&tr, zone, &items),
        "symptoms": symptoms(&tr, &items),
        "rows": rows,
    });
    PeriodicData { data, as_of }
}

/// The counts of `keys` among `items`: every rhythm result (a zero says as much as a count),
/// and failed or missing results only when there are some.
fn counts(tr: &Translator, items: &[&Item]) -> Vec<Value> {
    COUNTED
        .iter()
        .filter_map(|key| {
            let count = items.iter().filter(|i| i.key() == *key).count();
            let rhythm = !matches!(key, ResultKey::QualityTooLow | ResultKey::NoResult);
            (count > 0 || rhythm).then(|| {
                let headline = Headline::new(tr, *key, key_colour(*key));
                json!({"key": headline.key, "label": headline.label, "color": headline.color, "count": count})
            })
        })
        .collect()
}

/// A share as a whole percentage, rounded half up.
fn percent(part: usize, whole: usize) -> String {
    format!("{} %", (part * 200 + whole) / (2 * whole))
}

/// Counts per result class, the burden (the share of irregular results among measurements
/// with a result), heart-rate statistics and signal-quality shares.
fn summary(tr: &Translator, language: Language, items: &[Item]) -> Value {
    let all: Vec<&Item> = items.iter().collect();
    let with_result = items
        .iter()
        .filter(|i| {
            matches!(
                i.key(),
                ResultKey::Regular
                    | ResultKey::PossiblyIrregular
                    | ResultKey::PossibleAtrialFibrillation
            )
        })
        .count();
    let irregular = items
        .iter()
        .filter(|i| {
            matches!(
                i.key(),
                ResultKey::PossiblyIrregular | ResultKey::PossibleAtrialFibrillation
            )
        })
        .count();
    let burden = (with_result > 0).then(|| {
        json!({
            "share": percent(irregular, with_result),
            "detail": tr.text_with("burden-detail", &[
                ("irregular", irregular.to_string()),
                ("total", with_result.to_string()),
            ]),
            "color": hex(if irregular > 0 { key_colour(ResultKey::PossiblyIrregular) } else { key_colour(ResultKey::Regular) }),
        })
    });
    let rates: Vec<f64> = items.iter().filter_map(Item::rate).collect();
    let heart_rate = (!rates.is_empty()).then(|| {
        let min = rates.iter().cloned().fold(f64::INFINITY, f64::min);
        let max = rates.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let mean = rates.iter().sum::<f64>() / rates.len() as f64;
        // The sample standard deviation: the spread of the patient's rate between measurements.
        let sd = (rates.len() > 1).then(|| {
            (rates.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / (rates.len() - 1) as f64)
                .sqrt()
        });
        json!({
            "min": min.round() as i64,
            "mean": mean.round() as i64,
            "max": max.round() as i64,
            "sd": sd.map(|sd| format::decimal(language, sd, 1)),
        })
    });
    let quality: Vec<Value> = [QualityClass::Good, QualityClass::Fair, QualityClass::Poor]
        .iter()
        .map(|class| {
            let key = class.as_str();
            let count = items
                .iter()
                .filter(|i| i.quality.as_deref().unwrap_or("poor") == key)
                .count();
            json!({"key": key, "label": tr.text(&format!("quality-{key}")), "count": count})
        })
        .collect();
    let good = items
        .iter()
        .filter(|i| i.quality.as_deref() == Some("good"))
        .count();
    json!({
        "count": items.len(),
        "classes": counts(tr, &all),
        "burden": burden,
        "heart_rate": heart_rate,
        "quality": quality,
        "good_share": (!items.is_empty()).then(|| percent(good, items.len())),
    })
}

/// A measurement on the heart-rate chart: its place in the period (0..1), rate and result.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Dot {
    x: f64,
    rate: f64,
    key: ResultKey,
}

/// How severe a result is: 0 for the most severe.
fn severity(key: ResultKey) -> usize {
    RESULT_KEYS
        .iter()
        .position(|k| *k == key)
        .unwrap_or(RESULT_KEYS.len())
}

/// The dots of the chart, at most two per column of `columns`: when there are more
/// measurements than that, each column keeps its lowest and its highest rate (in time order),
/// both in the colour of the most severe result among the column's measurements, so that
/// neither an extreme rate nor an irregular result disappears among the regular ones.
fn dots(mut all: Vec<Dot>, columns: Columns) -> Vec<Dot> {
    all.retain(|d| d.x.is_finite() && d.rate.is_finite());
    all.sort_by(|a, b| a.x.total_cmp(&b.x));
    if all.len() <= columns.count() * 2 {
        return all;
    }
    let mut out = Vec::with_capacity(columns.count() * 2);
    let mut start = 0;
    while start < all.len() {
        let column = columns.of(all[start].x);
        let end = all[start..]
            .iter()
            .position(|d| columns.of(d.x) != column)
            .map_or(all.len(), |n| start + n);
        let group = &all[start..end];
        let pick = |better: fn(f64, f64) -> bool| {
            (0..group.len())
                .reduce(|a, b| {
                    if better(group[b].rate, group[a].rate) {
                        b
                    } else {
                        a
                    }
                })
                .unwrap_or(0)
        };
        let (low, high) = (pick(|a, b| a < b), pick(|a, b| a > b));
        let key = group
            .iter()
            .map(|d| d.key)
            .min_by_key(|k| severity(*k))
            .unwrap_or(ResultKey::NoResult);
        let mut kept = [low.min(high), low.max(high)].to_vec();
        kept.dedup();
        out.extend(kept.into_iter().map(|i| Dot { key, ..group[i] }));
        start = end;
    }
    out
}

/// Heart rate over the period: one dot per measurement at its place in the period, coloured
/// by its result, as long as the dots fit the plot's width (see [`dots`]); ticks at local
/// midnights labelled with the local date. `marks` groups the dots by colour, least severe
/// first, so each colour is one path and the severe ones are drawn on top.
fn chart(language: Language, zone: Tz, report: &report::Model, items: &[Item]) -> Value {
    let start = report.period_start_timestamp;
    let span = (report.period_end_timestamp - start).max(1) as f64;
    let round4 = |x: f64| (x * 10_000.0).round() / 10_000.0;
    let all: Vec<Dot> = items
        .iter()
        .filter_map(|item| {
            Some(Dot {
                rate: item.rate()?,
                x: round4((item.measurement_timestamp? - start) as f64 / span),
                key: item.key(),
            })
        })
        .collect();
    let columns = Columns::new(0.0, 1.0, series::columns_for(CHART_WIDTH_MM, CHART_DOT_PT));
    let shown = dots(all, columns);
    let points: Vec<Value> = shown
        .iter()
        .map(|d| json!([d.x, d.rate.round(), hex(key_colour(d.key))]))
        .collect();
    let marks: Vec<Value> = RESULT_KEYS
        .iter()
        .rev()
        .filter_map(|key| {
            let at: Vec<Value> = shown
                .iter()
                .filter(|d| d.key == *key)
                .map(|d| json!([d.x, d.rate.round()]))
                .collect();
            (!at.is_empty()).then(|| json!({"color": hex(key_colour(*key)), "at": at}))
        })
        .collect();
    let rates: Vec<f64> = items.iter().filter_map(Item::rate).collect();
    let low = rates.iter().cloned().fold(60.0, f64::min);
    let high = rates.iter().cloned().fold(100.0, f64::max);
    let first = local(zone, start);
    let days = (span / 86_400_000.0).ceil() as u64;
    let step = match days {
        0..=10 => 1,
        11..=20 => 2,
        21..=45 => 5,
        46..=120 => 14,
        _ => 30,
    };
    let midnight = first
        .date_naive()
        .and_hms_opt(0, 0, 0)
        .and_then(|t| zone.from_local_datetime(&t).earliest());
    let ticks: Vec<Value> = (0..=days)
        .step_by(step as usize)
        .filter_map(|k| {
            let day = midnight?.date_naive().checked_add_days(Days::new(k))?;
            let at = zone
                .from_local_datetime(&day.and_hms_opt(0, 0, 0)?)
                .earliest()?;
            let x = (at.timestamp_millis() - start) as f64 / span;
            (0.0..=1.0).contains(&x).then(|| {
                json!([
                    (x * 10_000.0).round() / 10_000.0,
                    format::day_month(language, day)
                ])
            })
        })
        .collect();
    json!({
        "points": points,
        "marks": marks,
        "ticks": ticks,
        "y_min": ((low - 10.0) / 10.0).floor() * 10.0,
        "y_max": ((high + 10.0) / 10.0).ceil() * 10.0,
    })
}

/// How many measurements fall in each part of the local day.
fn time_of_day(tr: &Translator, zone: Tz, items: &[Item]) -> Value {
    let mut counts = [0usize; DAY_PARTS.len()];
    for item in items {
        let Some(at) = item.measurement_timestamp else {
            continue;
        };
        let hour = local(zone, at).hour();
        let part = DAY_PARTS
            .iter()
            .rposition(|(_, first)| hour >= *first)
            .unwrap_or(0);
        counts[part] += 1;
    }
    Value::Array(
        DAY_PARTS
            .iter()
            .zip(counts)
            .map(|((key, _), count)| json!({"label": tr.text(key), "count": count}))
            .collect(),
    )
}

/// Each symptom reported in the period with how often it came with each result class, then
/// the measurements without symptoms.
fn symptoms(tr: &Translator, items: &[Item]) -> Value {
    let mut names: Vec<&str> = items
        .iter()
        .flat_map(|i| i.symptoms.iter().map(String::as_str))
        .collect();
    names.sort_unstable();
    names.dedup();
    let by_class = |subset: Vec<&Item>| -> Vec<Value> {
        counts(tr, &subset)
            .into_iter()
            .filter(|c| c["count"].as_u64() > Some(0))
            .collect()
    };
    let mut rows: Vec<Value> = names
        .iter()
        .map(|name| {
            let with: Vec<&Item> = items
                .iter()
                .filter(|i| i.symptoms.iter().any(|s| s == name))
                .collect();
            json!({"label": translated_or_raw(tr, "symptom", name), "count": with.len(), "by_class": by_class(with)})
        })
        .collect();
    let without: Vec<&Item> = items.iter().filter(|i| i.symptoms.is_empty()).collect();
    if !without.is_empty() && !names.is_empty() {
        rows.push(json!({"label": tr.text("without-symptoms"), "count": without.len(), "by_class": by_class(without), "muted": true}));
    }
    Value::Array(rows)
}

/// One line of the table of measurements.
fn row(tr: &Translator, zone: Tz, item: &Item) -> Value {
    let at = item.measurement_timestamp.map(|t| local(zone, t));
    let result = Headline::stored(tr, item.result.as_deref(), item.indicator.as_deref());
    // A rate out of range is no rhythm result of its own ("regular" at 125 bpm), so the
    // table names it beside the result, in its short form to keep to one line.
    let rates: Vec<String> = item
        .labels
        .iter()
        .filter(|l| matches!(l.as_str(), "bradycardia" | "tachycardia"))
        .map(|l| translated_or_raw(tr, "short", l))
        .collect();
    let label = std::iter::once(result.label)
        .chain(rates)
        .collect::<Vec<_>>()
        .join(" · ");
    let language = tr.language();
    json!({
        "date": at.map(|t| format::short_date(language, t.date_naive())),
        "time": at.map(format::time),
        "heart_rate": item.rate().map(|hr| hr.round() as i64),
        "result": {"label": label, "color": result.color},
        "review": translated_or_raw(tr, "status", &item.status),
        "label": item.label,
        "symptoms": item.symptoms.iter().map(|s| translated_or_raw(tr, "symptom", s)).collect::<Vec<_>>().join(", "),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(result: Option<&str>, heart_rate: Option<f64>) -> Item {
        Item {
            id: "m".into(),
            measurement_timestamp: Some(0),
            heart_rate,
            result: result.map(str::to_owned),
            indicator: None,
            labels: Vec::new(),
            status: "analyzed".into(),
            label: None,
            symptoms: Vec::new(),
            quality: Some("good".into()),
        }
    }

    #[test]
    fn the_burden_is_the_share_of_irregular_results_among_measurements_with_one() {
        let tr = Translator::new(Language::En);
        let items = [
            item(Some("regular"), Some(60.0)),
            item(Some("regular"), Some(70.0)),
            item(Some("possibly_irregular"), Some(80.0)),
            item(Some("possible_atrial_fibrillation"), Some(110.0)),
            item(Some("quality_too_low"), None),
            item(None, None),
        ];
        let s = summary(&tr, Language::En, &items);
        assert_eq!(s["burden"]["share"], "50 %", "2 of 4 with a result");
        assert_eq!(s["burden"]["detail"], "2 of 4 measurements with a result");
        let counts: Vec<(&str, u64)> = s["classes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| (c["key"].as_str().unwrap(), c["count"].as_u64().unwrap()))
            .collect();
        assert_eq!(
            counts,
            [
                ("regular", 2),
                ("possibly_irregular", 1),
                ("possible_atrial_fibrillation", 1),
                ("quality_too_low", 1),
                ("no_result", 1)
            ]
        );
        assert_eq!(s["heart_rate"]["min"], 60);
        assert_eq!(s["heart_rate"]["max"], 110);
        assert_eq!(s["heart_rate"]["mean"], 80);
        // Sample SD of 60, 70, 80, 110.
        assert_eq!(s["heart_rate"]["sd"], "21.6");
    }

    fn dot(x: f64, rate: f64, key: ResultKey) -> Dot {
        Dot { x, rate, key }
    }

    #[test]
    fn a_few_measurements_are_each_a_dot() {
        let columns = Columns::new(0.0, 1.0, 117);
        let few = vec![
            dot(0.5, 70.0, ResultKey::Regular),
            dot(0.1, f64::NAN, ResultKey::Regular),
            dot(0.2, 90.0, ResultKey::PossiblyIrregular),
        ];
        assert_eq!(
            dots(few, columns),
            [
                dot(0.2, 90.0, ResultKey::PossiblyIrregular),
                dot(0.5, 70.0, ResultKey::Regular)
            ],
            "in time order, unreadable rates left out"
        );
    }

    #[test]
    fn thousands_of_measurements_keep_each_columns_extremes_and_worst_result() {
        let columns = Columns::new(0.0, 1.0, series::columns_for(CHART_WIDTH_MM, CHART_DOT_PT));
        assert_eq!(columns.count(), 118);
        // 5,000 regular measurements around 70 bpm, one in atrial fibrillation at 131 bpm
        // and one at 41 bpm, in no particular order.
        let mut all: Vec<Dot> = (0..5_000)
            .map(|i| {
                let x = ((i * 7_919) % 5_000) as f64 / 5_000.0;
                dot(x, 66.0 + (i % 9) as f64, ResultKey::Regular)
            })
            .collect();
        all[1_234] = dot(0.3001, 131.0, ResultKey::PossibleAtrialFibrillation);
        all[4_321] = dot(0.8002, 41.0, ResultKey::Regular);
        let shown = dots(all, columns);
        assert!(shown.len() <= 2 * columns.count(), "{} dots", shown.len());
        assert!(shown.windows(2).all(|w| w[0].x <= w[1].x));
        assert!(shown.contains(&dot(0.3001, 131.0, ResultKey::PossibleAtrialFibrillation)));
        assert!(shown.contains(&dot(0.8002, 41.0, ResultKey::Regular)));
        let af_column = columns.of(0.3001);
        for d in &shown {
            let expected = if columns.of(d.x) == af_column {
                ResultKey::PossibleAtrialFibrillation
            } else {
                ResultKey::Regular
            };
            assert_eq!(
                d.key, expected,
                "the column's most severe result, at {}",
                d.x
            );
        }
    }

    #[test]
    fn reports_made_before_results_existed_show_no_result_and_no_burden() {
        let tr = Translator::new(Language::De);
        let old: Item = serde_json::from_value(serde_json::json!({
            "id": "m", "measurement_timestamp": 1, "heartrate": 72.0, "status": "analyzed",
            "indicator": "normal", "label": null
        }))
        .unwrap();
        let s = summary(&tr, Language::De, std::slice::from_ref(&old));
        assert!(s["burden"].is_null());
        assert!(
            s["heart_rate"].is_null(),
            "the phone's rate is not the server's"
        );
        let rhythm: u64 = s["classes"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["key"] != "no_result")
            .map(|c| c["count"].as_u64().unwrap())
            .sum();
        assert_eq!(rhythm, 0);
        let shown = row(&tr, Tz::UTC, &old);
        assert_eq!(shown["result"]["label"], "Kein Ergebnis");
    }
}
