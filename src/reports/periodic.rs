//! The data of a periodic report: everything its PDF shows, translated and formatted in the
//! chosen language and time zone. As for measurement reports, the template only lays it out,
//! so the hash of this data (with the template revision) identifies the PDF exactly.

use chrono::{DateTime, Days, NaiveDate, TimeZone, Timelike, Weekday};
use chrono_tz::Tz;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::common::{
    Page, PatientHeader, ReportData, RiskFactors, as_of, generated_on, patient_block, risk_block,
    translated_or_raw,
};
use super::findings::{
    COLOURS_BY_SEVERITY, Headline, RESULT_KEYS, hex, key_colour, result_key, stored_colour,
};
use super::format;
use super::series::{self, Columns};
use crate::analysis::{Colour, QualityClass, ResultKey};
use crate::domain::account::Language;
use crate::domain::id::Id;
use crate::domain::time::{local_time, start_of_day};
use crate::i18n::Translator;
use crate::store::entities::{profile, report, user};

/// Messages only the periodic template prints as they are.
const LABELS: [&str; 32] = [
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
    "column-count",
    "column-results",
    "column-reviewed",
];

/// Up to this many measurements, the report lists each one. Above it the table is a digest,
/// one line per day (or per week, see [`DAILY_AT_MOST`]), and only the flagged measurements
/// stay listed one by one: 100 lines fill about a page and a half at the table's 7 pt, and a
/// physician reads a month of a patient measuring three times a day (90) line by line, but
/// not 3,000.
pub const LISTED_AT_MOST: usize = 100;
/// A digest of a period up to this many local days has a line per day; a longer one (a
/// prescription of several months) a line per week, so that a year stays about a page.
const DAILY_AT_MOST: i64 = 62;
/// Under a digest, the flagged measurements (urgent, possible atrial fibrillation) listed one
/// by one, the most recent first: about a page.
const FLAGGED_AT_MOST: usize = 60;

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

    /// Whether the measurement stays listed one by one under a digest: a possible atrial
    /// fibrillation, or any result the server marked urgent.
    fn flagged(&self) -> bool {
        self.key() == ResultKey::PossibleAtrialFibrillation
            || self.indicator.as_deref() == Some("urgent")
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
    measurements: Vec<Item>,
}

/// A stored report whose measurements cannot be read: a fault of the data, never shown as a
/// report of no measurements.
#[derive(Debug, thiserror::Error)]
#[error("periodic report {report} cannot be read: {reason}")]
pub struct UnreadableReport {
    pub report: Id,
    pub reason: String,
}

/// The measurements a report covers, as stored with it.
pub fn items(report: &report::Model) -> Result<Vec<Item>, UnreadableReport> {
    serde_json::from_str::<Stored>(&report.data)
        .map(|s| s.measurements)
        .map_err(|e| UnreadableReport {
            report: report.id,
            reason: e.to_string(),
        })
}

/// Everything a periodic report is made from.
pub struct PeriodicReportInput<'a> {
    pub report: &'a report::Model,
    pub patient: &'a user::Model,
    pub profile: Option<&'a profile::Model>,
    pub language: Language,
    pub time_zone: Tz,
}

/// What `templates/pdf/periodic.typ` reads as `/data.json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PeriodicReportData {
    /// The report's version: whatever changes it makes a new PDF.
    pub version: i64,
    pub report_id: Id,
    /// The language, its direction and the labels.
    #[serde(flatten)]
    pub page: Page,
    /// The footer's "generated on" sentence.
    pub generated_on: String,
    pub period: Period,
    pub patient: PatientHeader,
    pub risk: RiskFactors,
    pub summary: Summary,
    pub chart: Chart,
    /// The measurements per part of the local day, night first.
    pub time_of_day: Vec<DayPartCount>,
    pub symptoms: Vec<SymptomRow>,
    /// The measurements listed one by one: every one, or under a digest the flagged ones.
    pub rows: Vec<TableRow>,
    /// The measurements summed up per day or week, when there are more than
    /// [`LISTED_AT_MOST`]; `null` when every one is listed.
    pub digest: Option<Digest>,
}

impl crate::pdf::TemplateData for PeriodicReportData {
    fn page(&self) -> &impl Serialize {
        &self.page
    }
}

/// The table of a period with too many measurements to list: one line per day or week.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Digest {
    /// The section's title: measurements per day, or per week.
    pub title: String,
    /// The first column's title: the day or the week.
    pub column: String,
    /// Says why the measurements are summed up, and where each one is listed.
    pub note: String,
    pub lines: Vec<DigestLine>,
    /// The title of the flagged measurements' list.
    pub flagged_title: String,
    /// How many flagged measurements there are and how many are listed, as a sentence.
    pub flagged_note: String,
}

/// A day's or a week's measurements at a glance.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DigestLine {
    /// The local date, or the week's first and last dates; `null` for measurements stored
    /// without a time.
    pub when: Option<String>,
    pub count: usize,
    /// The result classes that occurred, in [`COUNTED`]'s order.
    pub classes: Vec<ClassCount>,
    /// The lowest and highest heart rate, rounded bpm; `null` when none was measured.
    pub heart_rate: Option<[i64; 2]>,
    /// How many of them a physician reviewed.
    pub reviewed: usize,
}

/// The period a report covers, in its time zone.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Period {
    /// From and to, local date and time, as a sentence.
    pub range: String,
    /// The time zone with its offset at the start.
    pub zone: String,
}

/// How many measurements had a result class.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClassCount {
    /// The result key.
    pub key: &'static str,
    pub label: String,
    /// The class's printed colour, `#rrggbb`.
    pub color: &'static str,
    pub count: usize,
}

/// The period at a glance; each part is `null` when no measurement gives it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    /// How many measurements the period holds.
    pub count: usize,
    /// The counts per result class: every rhythm result, then failed and missing results
    /// when there are some.
    pub classes: Vec<ClassCount>,
    pub burden: Option<Burden>,
    pub heart_rate: Option<HeartRateStats>,
    /// The counts per signal-quality class, good first.
    pub quality: Vec<QualityCount>,
    /// The share of measurements of good quality, as a percentage.
    pub good_share: Option<String>,
}

/// The share of irregular results among the measurements with a result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Burden {
    /// A whole percentage.
    pub share: String,
    /// How many of how many, as a sentence.
    pub detail: String,
    /// Orange when any result was irregular, else green.
    pub color: &'static str,
}

/// The server's heart rates over the period, bpm.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HeartRateStats {
    pub min: i64,
    pub mean: i64,
    pub max: i64,
    /// The sample standard deviation, in the language's figures; `null` with one rate.
    pub sd: Option<String>,
}

/// How many measurements had a signal-quality class.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct QualityCount {
    /// `good`, `fair` or `poor`.
    pub key: &'static str,
    pub label: String,
    pub count: usize,
}

/// The heart-rate chart: x is the place in the period (0..1), y the rate in bpm.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Chart {
    /// Every dot shown, in time order.
    pub points: Vec<ChartPoint>,
    /// The same dots grouped by colour, least severe first, so that each colour is one path
    /// and the severe ones are drawn on top.
    pub marks: Vec<ChartMark>,
    /// Local midnights.
    pub ticks: Vec<ChartTick>,
    pub y_min: f64,
    pub y_max: f64,
}

/// A dot on the chart: `[x, rate, colour, result key, taken at (epoch ms)]`, an array as the
/// template indexes it; the portal's trend view reads the last two to say what a dot is.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChartPoint(
    pub f64,
    pub f64,
    pub &'static str,
    pub &'static str,
    pub i64,
);

/// The dots of one colour.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChartMark {
    /// `#rrggbb`.
    pub color: &'static str,
    /// `[x, rate]` of each dot.
    pub at: Vec<[f64; 2]>,
}

/// A tick on the time axis: `[x, day and month]`, an array as the template indexes it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChartTick(pub f64, pub String);

/// How many measurements fall in a part of the local day.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DayPartCount {
    pub label: String,
    pub count: usize,
}

/// A symptom, or the measurements without any, with the result classes it came with.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SymptomRow {
    pub label: String,
    /// How many measurements it came with.
    pub count: usize,
    /// The classes it came with, each at least once.
    pub by_class: Vec<ClassCount>,
    /// Set (and only then present) on the row of measurements without symptoms, which the
    /// template greys out.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub muted: bool,
}

/// One line of the table of measurements; each missing fact is `null`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TableRow {
    /// The local date.
    pub date: Option<String>,
    /// The local time of day.
    pub time: Option<String>,
    /// The server's heart rate, rounded bpm.
    pub heart_rate: Option<i64>,
    pub result: RowResult,
    /// The review status, translated.
    pub review: String,
    /// The reviewer's conclusion, in the reader's words when it is a rhythm label.
    pub label: Option<String>,
    /// The symptoms, translated, in one line.
    pub symptoms: String,
}

/// A table row's result: the class with any rate out of range beside it, in its colour.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RowResult {
    pub label: String,
    /// `#rrggbb`.
    pub color: &'static str,
}

fn local(zone: Tz, millis: i64) -> DateTime<Tz> {
    local_time(zone, millis).unwrap_or_else(|| zone.timestamp_millis_opt(0).unwrap())
}

fn date_time(language: Language, at: DateTime<Tz>) -> String {
    format!(
        "{} {}",
        format::short_date(language, at.date_naive()),
        format::time(at)
    )
}

/// Builds the data of a periodic report.
pub fn build(
    input: &PeriodicReportInput,
) -> Result<ReportData<PeriodicReportData>, UnreadableReport> {
    let tr = Translator::new(input.language);
    let language = input.language;
    let zone = input.time_zone;
    let report = input.report;
    let items = items(report)?;
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
    let mut page = Page::new(&tr, language, &LABELS);
    page.labels
        .insert("report-title", tr.text("periodic-report-title"));
    page.labels.insert(
        "report-subtitle",
        translated_or_raw(&tr, "trigger", report.trigger.as_str()),
    );

    let period = Period {
        range: tr.text_with(
            "period-range",
            &[
                ("start", date_time(language, start)),
                ("end", date_time(language, end)),
            ],
        ),
        zone: format::zone(start),
    };

    let data = PeriodicReportData {
        version: report.update_timestamp,
        report_id: report.id,
        page,
        generated_on: generated_on(&tr, as_of, zone),
        period,
        patient: patient_block(&tr, language, input.patient, &profile, end.date_naive()),
        risk: risk_block(&tr, language, &profile),
        summary: summary(&tr, language, &items),
        chart: chart(language, zone, report, &items),
        time_of_day: time_of_day(&tr, zone, &items),
        symptoms: symptoms(&tr, &items),
        rows: Vec::new(),
        digest: None,
    };
    let (rows, digest) = table(&tr, zone, report, &items);
    Ok(ReportData {
        data: PeriodicReportData {
            rows,
            digest,
            ..data
        },
        as_of,
    })
}

/// Every measurement of a report as a line of its table, however many there are: the
/// portal's full list beside a PDF that sums them up.
pub fn every_row(
    language: Language,
    zone: Tz,
    report: &report::Model,
) -> Result<Vec<TableRow>, UnreadableReport> {
    let tr = Translator::new(language);
    Ok(items(report)?
        .iter()
        .map(|item| row(&tr, zone, item))
        .collect())
}

/// The table of measurements: each one, up to [`LISTED_AT_MOST`]; above, a [`Digest`] and
/// the most recent [`FLAGGED_AT_MOST`] flagged measurements one by one.
fn table(
    tr: &Translator,
    zone: Tz,
    report: &report::Model,
    items: &[Item],
) -> (Vec<TableRow>, Option<Digest>) {
    if items.len() <= LISTED_AT_MOST {
        return (items.iter().map(|item| row(tr, zone, item)).collect(), None);
    }
    let flagged: Vec<&Item> = items.iter().filter(|i| i.flagged()).collect();
    let listed = &flagged[flagged.len().saturating_sub(FLAGGED_AT_MOST)..];
    let rows = listed.iter().map(|item| row(tr, zone, item)).collect();
    let count = |n: usize| ("count", n.to_string());
    let flagged_note = match flagged.len() {
        0 => tr.text("flagged-none"),
        n if n == listed.len() => tr.text_with("flagged-all", &[count(n)]),
        n => tr.text_with(
            "flagged-some",
            &[count(n), ("shown", listed.len().to_string())],
        ),
    };
    let weekly =
        (report.period_end_timestamp - report.period_start_timestamp) > DAILY_AT_MOST * 86_400_000;
    let per = if weekly { "week" } else { "day" };
    let digest = Digest {
        title: tr.text(&format!("digest-title-{per}")),
        column: tr.text(&format!("column-{per}")),
        note: tr.text_with("digest-note", &[count(items.len())]),
        lines: digest_lines(tr, zone, items, weekly),
        flagged_title: tr.text("flagged-title"),
        flagged_note,
    };
    (rows, Some(digest))
}

/// One line per local day (or per week from Monday) that holds measurements, in time order;
/// measurements stored without a time on a line of their own first.
fn digest_lines(tr: &Translator, zone: Tz, items: &[Item], weekly: bool) -> Vec<DigestLine> {
    let language = tr.language();
    let first_day = |item: &Item| -> Option<NaiveDate> {
        let day = local(zone, item.measurement_timestamp?).date_naive();
        Some(if weekly {
            day.week(Weekday::Mon).first_day()
        } else {
            day
        })
    };
    let mut keyed: Vec<(Option<NaiveDate>, &Item)> =
        items.iter().map(|item| (first_day(item), item)).collect();
    // Stored oldest first already; sorted again so a day's lines never split.
    keyed.sort_by_key(|(day, _)| *day);
    keyed
        .chunk_by(|a, b| a.0 == b.0)
        .map(|group| {
            let day = group[0].0;
            let members: Vec<&Item> = group.iter().map(|(_, item)| *item).collect();
            let rates: Vec<i64> = members
                .iter()
                .filter_map(|i| i.rate())
                .map(|r| r.round() as i64)
                .collect();
            DigestLine {
                when: day.map(|day| {
                    if weekly {
                        let last = day.checked_add_days(Days::new(6)).unwrap_or(day);
                        format!(
                            "{} – {}",
                            format::short_date(language, day),
                            format::short_date(language, last)
                        )
                    } else {
                        format::short_date(language, day)
                    }
                }),
                count: members.len(),
                classes: counts(tr, &members)
                    .into_iter()
                    .filter(|c| c.count > 0)
                    .collect(),
                heart_rate: rates
                    .iter()
                    .min()
                    .zip(rates.iter().max())
                    .map(|(lo, hi)| [*lo, *hi]),
                reviewed: members.iter().filter(|i| i.status == "reviewed").count(),
            }
        })
        .collect()
}

/// The counts of `keys` among `items`: every rhythm result (a zero says as much as a count),
/// and failed or missing results only when there are some.
fn counts(tr: &Translator, items: &[&Item]) -> Vec<ClassCount> {
    COUNTED
        .iter()
        .filter_map(|key| {
            let count = items.iter().filter(|i| i.key() == *key).count();
            let rhythm = !matches!(key, ResultKey::QualityTooLow | ResultKey::NoResult);
            (count > 0 || rhythm).then(|| {
                let headline = Headline::new(tr, *key, key_colour(*key));
                ClassCount {
                    key: headline.key,
                    label: headline.label,
                    color: headline.color,
                    count,
                }
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
fn summary(tr: &Translator, language: Language, items: &[Item]) -> Summary {
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
    let burden = (with_result > 0).then(|| Burden {
        share: percent(irregular, with_result),
        detail: tr.text_with(
            "burden-detail",
            &[
                ("irregular", irregular.to_string()),
                ("total", with_result.to_string()),
            ],
        ),
        color: hex(if irregular > 0 {
            key_colour(ResultKey::PossiblyIrregular)
        } else {
            key_colour(ResultKey::Regular)
        }),
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
        HeartRateStats {
            min: min.round() as i64,
            mean: mean.round() as i64,
            max: max.round() as i64,
            sd: sd.map(|sd| format::decimal(language, sd, 1)),
        }
    });
    let quality: Vec<QualityCount> = [QualityClass::Good, QualityClass::Fair, QualityClass::Poor]
        .iter()
        .map(|class| {
            let key = class.as_str();
            let count = items
                .iter()
                .filter(|i| i.quality.as_deref().unwrap_or("poor") == key)
                .count();
            QualityCount {
                key,
                label: tr.text(&format!("quality-{key}")),
                count,
            }
        })
        .collect();
    let good = items
        .iter()
        .filter(|i| i.quality.as_deref() == Some("good"))
        .count();
    Summary {
        count: items.len(),
        classes: counts(tr, &all),
        burden,
        heart_rate,
        quality,
        good_share: (!items.is_empty()).then(|| percent(good, items.len())),
    }
}

/// A measurement on the heart-rate chart: its place in the period (0..1), rate and result.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Dot {
    x: f64,
    rate: f64,
    key: ResultKey,
    /// The result's colour with its indicator, as the table shows it.
    colour: Colour,
    /// When the measurement was taken, epoch ms.
    at: i64,
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
        let colour = group
            .iter()
            .map(|d| d.colour)
            .max_by_key(|c| COLOURS_BY_SEVERITY.iter().position(|known| known == c))
            .unwrap_or(Colour::Grey);
        let mut kept = [low.min(high), low.max(high)].to_vec();
        kept.dedup();
        out.extend(kept.into_iter().map(|i| Dot {
            key,
            colour,
            ..group[i]
        }));
        start = end;
    }
    out
}

/// Heart rate over the period: one dot per measurement at its place in the period, coloured
/// by its result, as long as the dots fit the plot's width (see [`dots`]); ticks at local
/// midnights labelled with the local date. `marks` groups the dots by colour, least severe
/// first, so each colour is one path and the severe ones are drawn on top.
fn chart(language: Language, zone: Tz, report: &report::Model, items: &[Item]) -> Chart {
    let start = report.period_start_timestamp;
    let span = (report.period_end_timestamp - start).max(1) as f64;
    let round4 = |x: f64| (x * 10_000.0).round() / 10_000.0;
    let all: Vec<Dot> = items
        .iter()
        .filter_map(|item| {
            let at = item.measurement_timestamp?;
            Some(Dot {
                rate: item.rate()?,
                x: round4((at - start) as f64 / span),
                key: item.key(),
                colour: stored_colour(item.key(), item.indicator.as_deref()),
                at,
            })
        })
        .collect();
    let columns = Columns::new(0.0, 1.0, series::columns_for(CHART_WIDTH_MM, CHART_DOT_PT));
    let shown = dots(all, columns);
    let points: Vec<ChartPoint> = shown
        .iter()
        .map(|d| ChartPoint(d.x, d.rate.round(), hex(d.colour), d.key.as_str(), d.at))
        .collect();
    let marks: Vec<ChartMark> = COLOURS_BY_SEVERITY
        .iter()
        .filter_map(|colour| {
            let at: Vec<[f64; 2]> = shown
                .iter()
                .filter(|d| d.colour == *colour)
                .map(|d| [d.x, d.rate.round()])
                .collect();
            (!at.is_empty()).then(|| ChartMark {
                color: hex(*colour),
                at,
            })
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
    let first_day = first.date_naive();
    let ticks: Vec<ChartTick> = (0..=days)
        .step_by(step as usize)
        .filter_map(|k| {
            let day = first_day.checked_add_days(Days::new(k))?;
            let at = start_of_day(day, zone)?;
            let x = (at - start) as f64 / span;
            (0.0..=1.0)
                .contains(&x)
                .then(|| ChartTick(round4(x), format::day_month(language, day)))
        })
        .collect();
    Chart {
        points,
        marks,
        ticks,
        y_min: ((low - 10.0) / 10.0).floor() * 10.0,
        y_max: ((high + 10.0) / 10.0).ceil() * 10.0,
    }
}

/// How many measurements fall in each part of the local day.
fn time_of_day(tr: &Translator, zone: Tz, items: &[Item]) -> Vec<DayPartCount> {
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
    DAY_PARTS
        .iter()
        .zip(counts)
        .map(|((key, _), count)| DayPartCount {
            label: tr.text(key),
            count,
        })
        .collect()
}

/// Each symptom reported in the period with how often it came with each result class, then
/// the measurements without symptoms.
fn symptoms(tr: &Translator, items: &[Item]) -> Vec<SymptomRow> {
    let mut names: Vec<&str> = items
        .iter()
        .flat_map(|i| i.symptoms.iter().map(String::as_str))
        .collect();
    names.sort_unstable();
    names.dedup();
    let by_class = |subset: Vec<&Item>| -> Vec<ClassCount> {
        counts(tr, &subset)
            .into_iter()
            .filter(|c| c.count > 0)
            .collect()
    };
    let mut rows: Vec<SymptomRow> = names
        .iter()
        .map(|name| {
            let with: Vec<&Item> = items
                .iter()
                .filter(|i| i.symptoms.iter().any(|s| s == name))
                .collect();
            SymptomRow {
                label: translated_or_raw(tr, "symptom", name),
                count: with.len(),
                by_class: by_class(with),
                muted: false,
            }
        })
        .collect();
    let without: Vec<&Item> = items.iter().filter(|i| i.symptoms.is_empty()).collect();
    if !without.is_empty() && !names.is_empty() {
        rows.push(SymptomRow {
            label: tr.text("without-symptoms"),
            count: without.len(),
            by_class: by_class(without),
            muted: true,
        });
    }
    rows
}

/// One line of the table of measurements.
fn row(tr: &Translator, zone: Tz, item: &Item) -> TableRow {
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
    TableRow {
        date: at.map(|t| format::short_date(language, t.date_naive())),
        time: at.map(format::time),
        heart_rate: item.rate().map(|hr| hr.round() as i64),
        result: RowResult {
            label,
            color: result.color,
        },
        review: translated_or_raw(tr, "status", &item.status),
        label: item
            .label
            .as_deref()
            .map(|label| translated_or_raw(tr, "label", label)),
        symptoms: item
            .symptoms
            .iter()
            .map(|s| translated_or_raw(tr, "symptom", s))
            .collect::<Vec<_>>()
            .join(", "),
    }
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
        let burden = s.burden.unwrap();
        assert_eq!(burden.share, "50 %", "2 of 4 with a result");
        assert_eq!(burden.detail, "2 of 4 measurements with a result");
        let counts: Vec<(&str, usize)> = s.classes.iter().map(|c| (c.key, c.count)).collect();
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
        let rate = s.heart_rate.unwrap();
        assert_eq!((rate.min, rate.mean, rate.max), (60, 80, 110));
        // Sample SD of 60, 70, 80, 110.
        assert_eq!(rate.sd.as_deref(), Some("21.6"));
    }

    fn dot(x: f64, rate: f64, key: ResultKey) -> Dot {
        Dot {
            x,
            rate,
            key,
            colour: key_colour(key),
            at: 0,
        }
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

    /// A month of a patient who measured a hundred times a day: 3,000 measurements, one in
    /// twenty a possible atrial fibrillation, a few urgent for another reason.
    fn busy_month() -> report::Model {
        let start = 1_795_217_400_000_i64;
        let items: Vec<serde_json::Value> = (0..3_000_i64)
            .map(|i| {
                let (result, indicator) = match i % 20 {
                    7 => ("possible_atrial_fibrillation", "urgent"),
                    11 if i % 300 == 11 => ("regular", "urgent"),
                    13 => ("possibly_irregular", "warning"),
                    17 => ("quality_too_low", "quality"),
                    _ => ("regular", "normal"),
                };
                serde_json::json!({
                    "id": format!("m{i}"),
                    "measurement_timestamp": start + i * 864_000,
                    "heart_rate": 58.0 + (i % 61) as f64,
                    "result": result,
                    "indicator": indicator,
                    "labels": [],
                    "status": if i % 9 == 0 { "reviewed" } else { "analyzed" },
                    "label": null,
                    "symptoms": if i % 50 == 0 { serde_json::json!(["DIZZINESS"]) } else { serde_json::json!([]) },
                    "quality": "good",
                })
            })
            .collect();
        report::Model {
            id: Id::parse("6740a0000000000000000009").unwrap(),
            user_id: Id::parse("6740a0000000000000000002").unwrap(),
            creator_id: None,
            group_id: None,
            trigger: crate::domain::periods::Trigger::PeriodDaysPassed30,
            status: report::ReportStatus::Complete,
            dedupe_key: None,
            period_start_timestamp: start,
            period_end_timestamp: start + 30 * 86_400_000,
            data: serde_json::json!({ "measurements": items }).to_string(),
            creation_timestamp: start,
            update_timestamp: start,
        }
    }

    #[test]
    fn a_busy_month_is_summed_up_per_day_with_the_flagged_measurements_listed() {
        let report = busy_month();
        let patient = super::super::render_data_tests::patient();
        let built = build(&PeriodicReportInput {
            report: &report,
            patient: &patient,
            profile: None,
            language: Language::En,
            time_zone: Tz::Europe__Brussels,
        })
        .unwrap()
        .data;
        let digest = built.digest.expect("3,000 measurements are summed up");
        assert_eq!(digest.title, "Measurements per day");
        // The period starts at 09:30 local time: 31 local days hold measurements.
        assert_eq!(digest.lines.len(), 31);
        assert_eq!(digest.lines.iter().map(|l| l.count).sum::<usize>(), 3_000);
        let af: usize = digest
            .lines
            .iter()
            .flat_map(|l| &l.classes)
            .filter(|c| c.key == "possible_atrial_fibrillation")
            .map(|c| c.count)
            .sum();
        assert_eq!(af, 150);
        let reviewed: usize = digest.lines.iter().map(|l| l.reviewed).sum();
        assert_eq!(reviewed, 334);
        let first = &digest.lines[0];
        assert_eq!(first.when.as_deref(), Some("21/11/2026"), "{first:?}");
        assert_eq!(first.heart_rate, Some([58, 118]));
        // 150 possible AF and 10 other urgent results: the 60 most recent are listed.
        assert_eq!(built.rows.len(), FLAGGED_AT_MOST);
        assert_eq!(
            digest.flagged_note,
            "160 in this period; the 60 most recent are listed below. Every one is listed in the portal, under Trends."
        );
        let every = every_row(Language::En, Tz::Europe__Brussels, &report).unwrap();
        assert_eq!(every.len(), 3_000, "the portal lists each one");
    }

    #[test]
    fn a_busy_month_fits_six_pages_in_every_language() {
        use crate::pdf::{Engine, RenderMeta, Template};
        let engine = Engine::new();
        let report = busy_month();
        let patient = super::super::render_data_tests::patient();
        for language in Language::ALL {
            let built = build(&PeriodicReportInput {
                report: &report,
                patient: &patient,
                profile: None,
                language,
                time_zone: Tz::Europe__Brussels,
            })
            .unwrap();
            let meta = RenderMeta {
                title: "Tacho".into(),
                ident: "busy".into(),
                timestamp: built.as_of,
                language: language.code().into(),
            };
            let warned = engine.compile(Template::Periodic, &built.data, &meta);
            let document = warned.output.expect("renders");
            let pages = document.pages().len();
            assert!(pages <= 6, "{}: {pages} pages", language.code());
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
        assert!(s.burden.is_none());
        assert!(
            s.heart_rate.is_none(),
            "the phone's rate is not the server's"
        );
        let rhythm: usize = s
            .classes
            .iter()
            .filter(|c| c.key != "no_result")
            .map(|c| c.count)
            .sum();
        assert_eq!(rhythm, 0);
        let shown = row(&tr, Tz::UTC, &old);
        assert_eq!(shown.result.label, "Kein Ergebnis");
    }
}
