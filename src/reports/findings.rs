//! What a measurement's analysis found, ready to show: the headline result in its colour, the
//! rhythm labels, signal quality, heart-rate variability, and the tachogram and pulse strip as
//! plot geometry. The measurement PDF and the portal's measurement page show the same
//! findings, so both are built here, from `data.analysis` and the payload's signal.
//!
//! Chart coordinates are fractions of the plot area (x from the left, y from the top, both
//! 0..1, rounded to 4 places), so the typst template and the portal's SVG only scale them.
//! Every line is reduced to what its printed width can show ([`super::series`]), and markers
//! are only given when they stand apart, so the findings of a day-long series are no larger
//! than those of a minute.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::format;
use super::series::{self, Columns};
use crate::analysis::{self, Abnormality, Analysis, Colour, Recording, ResultKey, Trace};
use crate::i18n::Translator;

/// Result keys from most to least severe ([`ResultKey::BY_SEVERITY`]).
pub const RESULT_KEYS: [ResultKey; 5] = ResultKey::BY_SEVERITY;

/// Seconds of pulse signal per strip row: two rows hold a one-minute recording on a page
/// with room to spare, and a beat at 150 bpm is still 2.4 mm wide on paper.
pub const STRIP_ROW_SECONDS: f64 = 30.0;

/// How far the strip's value range reaches beyond the bulk of the signal: a little below, more
/// above, where the beat markers sit.
const STRIP_MARGIN_BELOW: f64 = 0.12;
const STRIP_MARGIN_ABOVE: f64 = 0.35;

/// The tachogram's plot as `measurement.typ` draws it: 163 mm wide, a 0.7 pt line, diamonds
/// 2.5 pt across.
const TACHOGRAM_WIDTH_MM: f64 = 163.0;
const TACHOGRAM_HEIGHT_MM: f64 = 21.0;
const TACHOGRAM_STROKE_PT: f64 = 0.7;
const TACHOGRAM_MARKER_MM: f64 = 2.5 * 25.4 / 72.0;

/// The strip's rows as `measurement.typ` draws them: 178 mm wide, a 0.6 pt line, beat
/// markers 4.2 pt across.
const STRIP_WIDTH_MM: f64 = 178.0;
const STRIP_ROW_MM: f64 = 10.5;
const STRIP_STROKE_PT: f64 = 0.6;
const STRIP_MARKER_MM: f64 = 4.2 * 25.4 / 72.0;

/// A result key by its wire name.
pub fn result_key(name: &str) -> Option<ResultKey> {
    RESULT_KEYS.into_iter().find(|k| k.as_str() == name)
}

/// The printed colour of a result colour.
pub fn hex(colour: Colour) -> &'static str {
    match colour {
        Colour::Green => "#2e7d32",
        Colour::Orange => "#ef6c00",
        Colour::Red => "#c62828",
        Colour::Grey => "#757575",
    }
}

/// The colour a result key stands in when nothing more is known (counts and lists by key): a
/// regular rhythm at a too slow or fast rate is orange on its own page, green in a count.
pub fn key_colour(key: ResultKey) -> Colour {
    match key {
        ResultKey::Regular => Colour::Green,
        ResultKey::PossiblyIrregular => Colour::Orange,
        ResultKey::PossibleAtrialFibrillation => Colour::Red,
        ResultKey::QualityTooLow | ResultKey::NoResult => Colour::Grey,
    }
}

/// The headline: a result key, its translation and its colour.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Headline {
    pub key: &'static str,
    pub label: String,
    /// `green`, `orange`, `red` or `grey`.
    pub colour: &'static str,
    /// The colour as printed, `#rrggbb`.
    pub color: &'static str,
}

impl Headline {
    /// The headline of `key` shown in `colour`.
    pub fn new(tr: &Translator, key: ResultKey, colour: Colour) -> Self {
        Headline {
            key: key.as_str(),
            label: tr.text(&format!("result-{}", key.as_str())),
            colour: colour.as_str(),
            color: hex(colour),
        }
    }

    /// The headline of a stored result key and indicator (list rows): an unknown or missing
    /// key is "no result", the indicator's colour when it is a known one.
    pub fn stored(tr: &Translator, result: Option<&str>, indicator: Option<&str>) -> Self {
        let key = result.and_then(result_key).unwrap_or(ResultKey::NoResult);
        let colour = indicator
            .and_then(|i| {
                [
                    analysis::Indicator::Normal,
                    analysis::Indicator::Warning,
                    analysis::Indicator::Urgent,
                    analysis::Indicator::Quality,
                ]
                .into_iter()
                .find(|known| known.as_str() == i)
            })
            .filter(|_| key != ResultKey::NoResult)
            .map_or_else(|| key_colour(key), analysis::Indicator::colour);
        Headline::new(tr, key, colour)
    }
}

/// Signal quality as shown.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct QualityView {
    pub key: &'static str,
    pub label: String,
    pub color: &'static str,
    /// The score 0..1 in the language's figures.
    pub score: String,
    pub accepted_beats: usize,
    pub rejected_beats: usize,
}

/// One line of the heart-rate variability table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HrvRow {
    /// The measure's usual abbreviation (SDNN, RMSSD, …), the same in every language.
    pub name: &'static str,
    /// What it measures, translated.
    pub meaning: String,
    pub value: String,
    pub unit: &'static str,
}

/// An axis tick: its place (fraction of the axis) and its label.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Tick {
    pub at: f64,
    pub label: String,
}

/// The RR intervals over the recording, with the irregular stretches to shade.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Tachogram {
    /// Runs of consecutive accepted intervals; a run ends where rejected beats left a gap
    /// wide enough to see, so no line bridges intervals that were not measured. Each run is
    /// reduced to its visible envelope. The PDF draws `svg` instead.
    #[serde(skip)]
    pub runs: Vec<Vec<[f64; 2]>>,
    /// The runs as SVG path data in millimetres of the printed plot (163 × 21 mm).
    pub svg: String,
    /// The intervals to mark, when `markers`; else none.
    pub marks: Vec<[f64; 2]>,
    /// How many intervals the chart shows.
    pub points: usize,
    /// Whether each interval gets its own marker: only when the markers stand apart (so few
    /// intervals that no run was reduced).
    pub markers: bool,
    /// Irregular stretches: start and end as fractions of the time axis; stretches closer
    /// than a column are one. The PDF draws `stretches_svg` instead.
    #[serde(skip)]
    pub stretches: Vec<[f64; 2]>,
    /// The stretches as SVG path data (rectangles) in millimetres of the printed plot.
    pub stretches_svg: String,
    pub x_ticks: Vec<Tick>,
    pub y_ticks: Vec<Tick>,
    /// The intervals summed up per stretch of time, for the portal's table beside the chart
    /// (and what a tap on the chart reads); the PDF does not print it.
    #[serde(skip)]
    pub windows: Vec<IntervalWindow>,
}

/// The intervals that ended in `[start_s, end_s)` of the recording.
#[derive(Debug, Clone, PartialEq)]
pub struct IntervalWindow {
    pub start_s: f64,
    pub end_s: f64,
    /// Where the window starts and ends on the time axis, as fractions.
    pub from: f64,
    pub to: f64,
    pub count: usize,
    pub mean_ms: f64,
    pub min_ms: f64,
    pub max_ms: f64,
}

/// At most about a dozen windows of whole tens of seconds: a 60 s recording in 10 s steps,
/// an hour-long RR series in 5 min steps.
fn interval_windows(pairs: &[(f64, f64)], x_max: f64) -> Vec<IntervalWindow> {
    let step = ((x_max / 12.0) / 10.0).ceil().max(1.0) * 10.0;
    let mut windows = Vec::new();
    let mut start = 0.0;
    while start < x_max {
        let end = (start + step).min(x_max);
        let values: Vec<f64> = pairs
            .iter()
            .filter(|(t, _)| *t / 1000.0 >= start && *t / 1000.0 < end)
            .map(|(_, v)| *v)
            .collect();
        if !values.is_empty() {
            windows.push(IntervalWindow {
                start_s: start,
                end_s: end,
                from: start / x_max,
                to: end / x_max,
                count: values.len(),
                mean_ms: values.iter().sum::<f64>() / values.len() as f64,
                min_ms: values.iter().cloned().fold(f64::INFINITY, f64::min),
                max_ms: values.iter().cloned().fold(0.0, f64::max),
            });
        }
        start = end;
    }
    windows
}

/// One row of the pulse strip ([`STRIP_ROW_SECONDS`] of signal).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StripRow {
    /// The signal, reduced to its visible envelope; x is the fraction of a full row, so a
    /// short last row ends early. The PDF draws `svg` instead.
    #[serde(skip)]
    pub line: Vec<[f64; 2]>,
    /// The line as SVG path data in millimetres of a printed row (178 × 10.5 mm).
    pub svg: String,
    /// Accepted beats, at the signal's height at the beat; none when there are too many in
    /// the row to stand apart.
    pub accepted: Vec<[f64; 2]>,
    /// Beats found but not trusted; likewise.
    pub rejected: Vec<[f64; 2]>,
    pub x_ticks: Vec<Tick>,
}

/// The band-passed pulse with the beats the analysis found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Strip {
    pub rows: Vec<StripRow>,
    /// The length of a row, seconds.
    pub row_seconds: f64,
    pub accepted_beats: usize,
    pub rejected_beats: usize,
}

/// Everything a measurement page and report show of the analysis.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Findings {
    /// Whether the server analysed the measurement at all (older ones were not).
    pub analysed: bool,
    /// Whether the analysis failed: no rate and no verdict, `reasons` say why.
    pub failed: bool,
    /// The server's heart rate, rounded bpm.
    pub heart_rate: Option<i64>,
    pub result: Headline,
    /// The rhythm labels, translated, most severe first.
    pub labels: Vec<String>,
    /// Why there is no result, translated.
    pub reasons: Vec<String>,
    pub quality: Option<QualityView>,
    /// Empty when there are too few intervals.
    pub hrv: Vec<HrvRow>,
    pub tachogram: Option<Tachogram>,
    pub strip: Option<Strip>,
}

fn round4(value: f64) -> f64 {
    (value * 10_000.0).round() / 10_000.0
}

fn fraction(value: f64, low: f64, high: f64) -> f64 {
    let span = high - low;
    if span <= 0.0 || !value.is_finite() {
        return 0.5;
    }
    round4(((value - low) / span).clamp(0.0, 1.0))
}

/// A step between ticks giving about `target` intervals over `span`: 1, 2, 2.5 or 5 times a
/// power of ten.
pub fn nice_step(span: f64, target: f64) -> f64 {
    if !span.is_finite() || span <= 0.0 {
        return 1.0;
    }
    let raw = span / target.max(1.0);
    let magnitude = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 2.5, 5.0, 10.0]
        .into_iter()
        .map(|f| f * magnitude)
        .find(|step| raw <= *step)
        .unwrap_or(10.0 * magnitude)
}

/// Ticks every `step` over `[low, high]`, labelled by `label`.
fn ticks(low: f64, high: f64, step: f64, label: impl Fn(f64) -> String) -> Vec<Tick> {
    let mut out = Vec::new();
    let mut at = (low / step).ceil() * step;
    while at <= high + step * 1e-9 && out.len() < 50 {
        out.push(Tick {
            at: fraction(at, low, high),
            label: label(at),
        });
        at += step;
    }
    out
}

/// A value of the grid `trace` at `ms` (linear between samples); none outside it.
fn trace_at(trace: &Trace, ms: f64) -> Option<f64> {
    if trace.step_ms <= 0.0 || trace.values.is_empty() {
        return None;
    }
    let position = (ms - trace.start_ms) / trace.step_ms;
    if !position.is_finite() || position < 0.0 {
        return None;
    }
    let i = position.floor() as usize;
    let next = trace.values.get(i + 1).copied();
    let here = *trace.values.get(i)?;
    Some(match next {
        Some(next) => here + (next - here) * (position - i as f64),
        None => here,
    })
}

/// The value at `q` (0..1) of sorted `values`.
fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let at = ((sorted.len() - 1) as f64 * q).round() as usize;
    sorted[at.min(sorted.len() - 1)]
}

impl Findings {
    /// The findings of a measurement's `data` (payload and server fields), in `tr`'s language.
    pub fn of(tr: &Translator, data: &Map<String, Value>) -> Findings {
        // Read in place: a copy of a long series' analysis would cost as much as reading it.
        let analysis = data
            .get("analysis")
            .and_then(|a| Analysis::deserialize(a).ok());
        let trace = Recording::from_payload(data)
            .ok()
            .and_then(|recording| analysis::pulse_trace(&recording));
        match analysis {
            Some(analysis) => Findings::from_analysis(tr, &analysis, trace.as_ref()),
            None => Findings::not_analysed(tr, trace.as_ref()),
        }
    }

    /// Findings of a measurement the server never analysed: no result, and the signal alone.
    fn not_analysed(tr: &Translator, trace: Option<&Trace>) -> Findings {
        Findings {
            analysed: false,
            failed: true,
            heart_rate: None,
            result: Headline::new(tr, ResultKey::NoResult, Colour::Grey),
            labels: Vec::new(),
            reasons: vec![tr.text("reason-not-analysed")],
            quality: None,
            hrv: Vec::new(),
            tachogram: None,
            strip: trace.and_then(|t| strip(t, &[], &[])),
        }
    }

    /// Findings of an analysis; `trace` is the pulse it was made from, when there is one.
    pub fn from_analysis(tr: &Translator, analysis: &Analysis, trace: Option<&Trace>) -> Findings {
        let language = tr.language();
        let verdict = analysis.verdict();
        let failed = analysis.failed();
        let labels = analysis
            .rhythm
            .labels
            .iter()
            .rev()
            .map(|label| tr.text(&format!("label-{}", label.as_str())))
            .collect();
        let reasons = analysis
            .abnormalities
            .iter()
            .map(|a| tr.text(&format!("reason-{}", abnormality_name(*a))))
            .collect();
        let quality = &analysis.quality;
        let class = quality.class.as_str();
        let quality = QualityView {
            key: class,
            label: tr.text(&format!("quality-{class}")),
            color: match quality.class {
                analysis::QualityClass::Good => hex(Colour::Green),
                analysis::QualityClass::Fair => hex(Colour::Orange),
                analysis::QualityClass::Poor => hex(Colour::Red),
            },
            score: format::decimal(language, quality.score.clamp(0.0, 1.0), 2),
            accepted_beats: quality.accepted_beats,
            rejected_beats: quality.rejected_beats,
        };
        let hrv = match (&analysis.hrv, failed) {
            (Some(h), false) => {
                let ms = |v: f64| format::decimal(language, v, 1);
                vec![
                    HrvRow {
                        name: "SDNN",
                        meaning: tr.text("hrv-sdnn"),
                        value: ms(h.sdnn),
                        unit: "ms",
                    },
                    HrvRow {
                        name: "RMSSD",
                        meaning: tr.text("hrv-rmssd"),
                        value: ms(h.rmssd),
                        unit: "ms",
                    },
                    HrvRow {
                        name: "pNN50",
                        meaning: tr.text("hrv-pnn50"),
                        value: format::decimal(language, h.pnn50 * 100.0, 1),
                        unit: "%",
                    },
                    HrvRow {
                        name: "SD1",
                        meaning: tr.text("hrv-sd1"),
                        value: ms(h.sd1),
                        unit: "ms",
                    },
                    HrvRow {
                        name: "SD2",
                        meaning: tr.text("hrv-sd2"),
                        value: ms(h.sd2),
                        unit: "ms",
                    },
                ]
            }
            _ => Vec::new(),
        };
        Findings {
            analysed: true,
            failed,
            heart_rate: analysis
                .heart_rate
                .filter(|hr| !failed && hr.is_finite())
                .map(|hr| hr.round() as i64),
            result: Headline::new(tr, verdict.key, verdict.colour),
            labels,
            reasons,
            quality: Some(quality),
            hrv,
            tachogram: if failed {
                None
            } else {
                tachogram(language, analysis, trace)
            },
            strip: trace.and_then(|t| strip(t, &analysis.beats, &analysis.rejected_beats)),
        }
    }
}

fn abnormality_name(a: Abnormality) -> &'static str {
    match a {
        Abnormality::TooShort => "too_short",
        Abnormality::FingerNotFound => "finger_not_found",
        Abnormality::PulseNotFound => "pulse_not_found",
        Abnormality::Saturated => "saturated",
        Abnormality::BadSignalQuality => "bad_signal_quality",
    }
}

/// The tachogram of the accepted intervals; none with fewer than two.
fn tachogram(
    language: crate::domain::account::Language,
    analysis: &Analysis,
    trace: Option<&Trace>,
) -> Option<Tachogram> {
    let rr = &analysis.rr_intervals;
    let times = &analysis.rr_times;
    let n = rr.len().min(times.len());
    let pairs: Vec<(f64, f64)> = (0..n)
        .map(|i| (times[i], rr[i]))
        .filter(|(t, v)| t.is_finite() && v.is_finite() && *v > 0.0)
        .collect();
    if pairs.len() < 2 {
        return None;
    }
    let trace_end = trace.map_or(0.0, |t| t.start_ms + t.step_ms * t.values.len() as f64);
    let end_ms = pairs
        .iter()
        .map(|p| p.0)
        .chain(analysis.beats.iter().copied())
        .chain([trace_end])
        .fold(0.0, f64::max);
    // A recording of 1,800 frames at 30 fps ends a hair past 60 s in floating point; that is
    // still a 60 s axis.
    let x_max = ((end_ms / 1000.0) / 10.0 - 1e-6).ceil().max(1.0) * 10.0;
    let low = pairs.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
    let high = pairs.iter().map(|p| p.1).fold(0.0, f64::max);
    let y_step = nice_step((high - low).max(200.0), 5.0);
    let y_min = ((low - y_step * 0.5) / y_step).floor().max(0.0) * y_step;
    let y_max = ((high + y_step * 0.5) / y_step).ceil() * y_step;
    let point = |(t, v): (f64, f64)| {
        [
            fraction(t / 1000.0, 0.0, x_max),
            round4(1.0 - fraction(v, y_min, y_max)),
        ]
    };
    let columns = Columns::new(
        0.0,
        1.0,
        series::columns_for(TACHOGRAM_WIDTH_MM, TACHOGRAM_STROKE_PT),
    );
    // A gap narrower than a column would not show; bridging it keeps the number of runs,
    // and so of points, within the columns.
    let visible_gap_ms = x_max * 1000.0 * columns.width();
    let mut runs: Vec<Vec<[f64; 2]>> = Vec::new();
    let mut previous: Option<f64> = None;
    for &(t, v) in &pairs {
        // An interval closing more than its own length (and a half) after the previous one
        // follows a gap of rejected beats.
        let joined = previous.is_some_and(|p| t - p <= (v * 1.5).max(visible_gap_ms));
        if !joined {
            runs.push(Vec::new());
        }
        if let Some(run) = runs.last_mut() {
            run.push(point((t, v)));
        }
        previous = Some(t);
    }
    let runs: Vec<Vec<[f64; 2]>> = runs
        .iter()
        .map(|run| series::envelope(run, columns))
        .collect();
    let markers = series::markers_fit(pairs.len(), TACHOGRAM_WIDTH_MM, TACHOGRAM_MARKER_MM);
    let stretches = analysis
        .rhythm
        .irregular_stretches
        .iter()
        .filter(|[a, b]| a.is_finite() && b.is_finite() && b > a)
        .map(|[a, b]| {
            [
                fraction(a / 1000.0, 0.0, x_max),
                fraction(b / 1000.0, 0.0, x_max),
            ]
        })
        .collect();
    // Stretches less than a column apart print as one shaded band; as one they stay as few
    // as the columns.
    let stretches = series::merge_spans(stretches, columns.width());
    Some(Tachogram {
        windows: interval_windows(&pairs, x_max),
        points: pairs.len(),
        markers,
        svg: series::svg_path(
            runs.iter().map(Vec::as_slice),
            TACHOGRAM_WIDTH_MM,
            TACHOGRAM_HEIGHT_MM,
        ),
        marks: if markers { runs.concat() } else { Vec::new() },
        stretches_svg: series::svg_spans(&stretches, TACHOGRAM_WIDTH_MM, TACHOGRAM_HEIGHT_MM),
        runs,
        stretches,
        x_ticks: ticks(0.0, x_max, nice_step(x_max, 6.0), |s| {
            format::decimal(language, s, 1)
        }),
        y_ticks: ticks(y_min, y_max, y_step, |ms| format::decimal(language, ms, 0))
            .into_iter()
            .map(|t| Tick {
                at: round4(1.0 - t.at),
                label: t.label,
            })
            .collect(),
    })
}

/// The pulse strip in rows of [`STRIP_ROW_SECONDS`], one value range for all rows so that
/// amplitudes compare; the bulk of the signal (1st to 99th percentile) sets the range and
/// artefacts beyond it are clipped rather than squashing the pulse.
fn strip(trace: &Trace, accepted: &[f64], rejected: &[f64]) -> Option<Strip> {
    let finite: Vec<f64> = trace
        .values
        .iter()
        .copied()
        .filter(|v| v.is_finite())
        .collect();
    if finite.len() < 2 || !trace.step_ms.is_finite() || trace.step_ms <= 0.0 {
        return None;
    }
    let mut sorted = finite;
    sorted.sort_by(f64::total_cmp);
    let (p1, p99) = (quantile(&sorted, 0.01), quantile(&sorted, 0.99));
    let span = (p99 - p1).max(f64::EPSILON);
    let (low, high) = (
        p1 - span * STRIP_MARGIN_BELOW,
        p99 + span * STRIP_MARGIN_ABOVE,
    );
    let y = |v: f64| round4(1.0 - fraction(v, low, high));
    let row_ms = STRIP_ROW_SECONDS * 1000.0;
    let end_ms = trace.start_ms + trace.step_ms * trace.values.len() as f64;
    let count = ((end_ms / row_ms).ceil() as usize).clamp(1, 60);
    let mut rows: Vec<StripRow> = (0..count)
        .map(|r| {
            let from = r as f64 * STRIP_ROW_SECONDS;
            StripRow {
                line: Vec::new(),
                svg: String::new(),
                accepted: Vec::new(),
                rejected: Vec::new(),
                x_ticks: ticks(from, from + STRIP_ROW_SECONDS, 5.0, |s| format!("{s:.0}")),
            }
        })
        .collect();
    let place = |ms: f64| -> Option<(usize, f64)> {
        if !ms.is_finite() || ms < 0.0 {
            return None;
        }
        let row = (ms / row_ms).floor() as usize;
        (row < count).then(|| (row, round4((ms - row as f64 * row_ms) / row_ms)))
    };
    for (i, value) in trace.values.iter().enumerate() {
        let ms = trace.start_ms + i as f64 * trace.step_ms;
        if let (Some((row, x)), true) = (place(ms), value.is_finite()) {
            let line = &mut rows[row].line;
            // A row starts where the previous one ended, so each reads as one stroke.
            if line.is_empty() && row > 0 && i > 0 {
                line.push([0.0, y(trace.values[i - 1])]);
            }
            line.push([x, y(*value)]);
        }
    }
    let columns = Columns::new(
        0.0,
        1.0,
        series::columns_for(STRIP_WIDTH_MM, STRIP_STROKE_PT),
    );
    for row in &mut rows {
        row.line = series::envelope(&row.line, columns);
        row.svg = series::svg_path([row.line.as_slice()], STRIP_WIDTH_MM, STRIP_ROW_MM);
    }
    for (beats, accepted_side) in [(accepted, true), (rejected, false)] {
        for &ms in beats {
            let (Some((row, x)), Some(value)) = (place(ms), trace_at(trace, ms)) else {
                continue;
            };
            let mark = [x, y(value)];
            if accepted_side {
                rows[row].accepted.push(mark);
            } else {
                rows[row].rejected.push(mark);
            }
        }
    }
    // A row of 30 s holds up to 120 markers apart (240 bpm); more cannot be told apart and
    // would only make the row a solid band.
    for row in &mut rows {
        for marks in [&mut row.accepted, &mut row.rejected] {
            if !series::markers_fit(marks.len(), STRIP_WIDTH_MM, STRIP_MARKER_MM) {
                marks.clear();
            }
        }
    }
    rows.retain(|r| !r.line.is_empty());
    Some(Strip {
        rows,
        row_seconds: STRIP_ROW_SECONDS,
        accepted_beats: accepted.len(),
        rejected_beats: rejected.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::{
        Features, Hrv, Label, Quality, QualityClass, Rhythm, Source, VERSION, Verdict,
    };
    use crate::domain::account::Language;

    fn analysis(labels: Vec<Label>) -> Analysis {
        let rr: Vec<f64> = (0..40).map(|i| 800.0 + (i % 3) as f64 * 40.0).collect();
        let mut at = 500.0;
        let mut beats = vec![at];
        let mut rr_times = Vec::new();
        for v in &rr {
            at += v;
            beats.push(at);
            rr_times.push(at);
        }
        Analysis {
            version: VERSION.into(),
            source: Source::Camera,
            heart_rate: Some(72.4),
            beats,
            rejected_beats: vec![20_000.0],
            rr_intervals: rr,
            rr_times,
            quality: Quality {
                score: 0.912,
                class: QualityClass::Good,
                accepted_beats: 41,
                rejected_beats: 1,
                channel: None,
            },
            hrv: Some(Hrv {
                sdnn: 32.66,
                rmssd: 40.0,
                pnn50: 0.125,
                sd1: 28.3,
                sd2: 35.1,
            }),
            rhythm: Rhythm {
                irregular: false,
                labels,
                features: Features::default(),
                irregular_stretches: vec![[5_000.0, 12_000.0]],
            },
            abnormalities: Vec::new(),
        }
    }

    fn trace() -> Trace {
        Trace {
            start_ms: 0.0,
            step_ms: 1000.0 / 30.0,
            values: (0..1800).map(|i| (i as f64 / 25.0).sin()).collect(),
        }
    }

    #[test]
    fn a_result_shows_rate_verdict_quality_hrv_and_both_charts() {
        let tr = Translator::new(Language::De);
        let a = analysis(vec![Label::SinusRhythm, Label::Bradycardia]);
        let f = Findings::from_analysis(&tr, &a, Some(&trace()));
        assert_eq!(f.heart_rate, Some(72));
        assert!(!f.failed);
        let Verdict { key, colour, .. } = a.verdict();
        assert_eq!(f.result.key, key.as_str());
        assert_eq!(f.result.colour, colour.as_str());
        assert_eq!(f.labels.len(), 2);
        assert_eq!(
            f.labels[0],
            tr.text("label-bradycardia"),
            "most severe first"
        );
        let hrv: Vec<_> = f.hrv.iter().map(|r| (r.name, r.value.as_str())).collect();
        assert_eq!(
            hrv,
            [
                ("SDNN", "32,7"),
                ("RMSSD", "40"),
                ("pNN50", "12,5"),
                ("SD1", "28,3"),
                ("SD2", "35,1")
            ]
        );
        assert_eq!(f.quality.as_ref().unwrap().score, "0,91");
        let t = f.tachogram.unwrap();
        assert_eq!(t.points, 40);
        assert_eq!(t.runs.len(), 1);
        assert_eq!(
            t.stretches,
            vec![[0.0833, 0.2]],
            "x axis to 60 s, the trace's end"
        );
        assert!(t.x_ticks.iter().all(|t| (0.0..=1.0).contains(&t.at)));
        let s = f.strip.unwrap();
        assert_eq!(s.rows.len(), 2, "60 s in rows of 30 s");
        let accepted: usize = s.rows.iter().map(|r| r.accepted.len()).sum();
        assert_eq!(accepted, 41);
        assert_eq!(s.rows[0].rejected.len(), 1, "the beat at 20 s is in row 1");
        for row in &s.rows {
            for p in row.line.iter().chain(&row.accepted) {
                assert!((0.0..=1.0).contains(&p[0]) && (0.0..=1.0).contains(&p[1]));
            }
        }
    }

    #[test]
    fn a_gap_of_rejected_beats_splits_the_tachogram() {
        let tr = Translator::new(Language::En);
        let mut a = analysis(vec![Label::SinusRhythm]);
        for t in a.rr_times.iter_mut().skip(20) {
            *t += 3_000.0;
        }
        let f = Findings::from_analysis(&tr, &a, None);
        assert_eq!(f.tachogram.unwrap().runs.len(), 2);
        assert!(f.strip.is_none());
    }

    #[test]
    fn a_failed_analysis_has_no_rate_no_verdict_and_says_why() {
        let tr = Translator::new(Language::En);
        let mut a = analysis(Vec::new());
        a.abnormalities = vec![Abnormality::FingerNotFound];
        a.heart_rate = Some(60.0);
        let f = Findings::from_analysis(&tr, &a, Some(&trace()));
        assert!(f.failed);
        assert_eq!(f.heart_rate, None);
        assert_eq!(f.result.key, "quality_too_low");
        assert_eq!(f.result.colour, "grey");
        assert!(f.hrv.is_empty() && f.tachogram.is_none());
        assert_eq!(f.reasons, vec![tr.text("reason-finger_not_found")]);
    }

    #[test]
    fn measurements_without_analysis_or_with_a_broken_one_show_no_result() {
        let tr = Translator::new(Language::En);
        for data in [
            serde_json::json!({"heartrate": 70}),
            serde_json::json!({"analysis": {"version": 3}}),
            serde_json::json!({"analysis": null, "time": "x", "quadrants": []}),
        ] {
            let f = Findings::of(&tr, data.as_object().unwrap());
            assert!(!f.analysed && f.failed);
            assert_eq!(f.result.key, "no_result");
            assert_eq!(f.heart_rate, None);
        }
    }

    #[test]
    fn stored_results_read_back_and_unknown_ones_are_no_result() {
        let tr = Translator::new(Language::En);
        let h = Headline::stored(&tr, Some("regular"), Some("warning"));
        assert_eq!((h.key, h.colour), ("regular", "orange"));
        let h = Headline::stored(&tr, Some("possible_atrial_fibrillation"), None);
        assert_eq!((h.key, h.colour), ("possible_atrial_fibrillation", "red"));
        let h = Headline::stored(&tr, Some("<b>"), Some("urgent"));
        assert_eq!((h.key, h.colour), ("no_result", "grey"));
    }

    /// An RR-only analysis of `rr`, as the upload makes it.
    fn rr_analysis(rr: &[f64]) -> Analysis {
        let mut a = analysis(vec![Label::SinusRhythm]);
        let mut at = 0.0;
        a.beats = vec![0.0];
        a.rr_times.clear();
        for v in rr {
            at += v;
            a.beats.push(at);
            a.rr_times.push(at);
        }
        a.rr_intervals = rr.to_vec();
        a.rejected_beats.clear();
        a.rhythm.irregular_stretches.clear();
        a
    }

    /// 400,000 regular intervals with one premature beat and its compensatory pause.
    fn long_series() -> Vec<f64> {
        let mut rr: Vec<f64> = (0..400_000)
            .map(|i: usize| 800.0 + ((i * 7919) % 13) as f64 - 6.0)
            .collect();
        rr[123_456] = 480.0;
        rr[123_457] = 1_120.0;
        rr
    }

    #[test]
    fn a_long_tachogram_is_reduced_and_keeps_its_spike_but_no_markers() {
        let tr = Translator::new(Language::En);
        let f = Findings::from_analysis(&tr, &rr_analysis(&long_series()), None);
        let t = f.tachogram.unwrap();
        assert_eq!(t.points, 400_000, "the chart stands for every interval");
        assert!(!t.markers, "400,000 diamonds would be a solid band");
        let drawn: Vec<[f64; 2]> = t.runs.concat();
        let columns = series::columns_for(TACHOGRAM_WIDTH_MM, TACHOGRAM_STROKE_PT);
        assert!(
            drawn.len() <= columns * series::PER_COLUMN,
            "{}",
            drawn.len()
        );
        // The spike reaches as low and as high as the intervals do.
        let top = drawn.iter().map(|p| p[1]).fold(1.0, f64::min);
        let bottom = drawn.iter().map(|p| p[1]).fold(0.0, f64::max);
        let y = |ms: f64| {
            let ticks = &t.y_ticks;
            // Back from the ticks: the first and last tick give the axis' scale.
            let (a, b) = (&ticks[0], &ticks[ticks.len() - 1]);
            // Whole milliseconds, perhaps with a grouping separator ("1,200").
            let value = |label: &str| -> f64 {
                let digits: String = label.chars().filter(char::is_ascii_digit).collect();
                digits.parse().unwrap()
            };
            let (va, vb) = (value(&a.label), value(&b.label));
            a.at + (ms - va) / (vb - va) * (b.at - a.at)
        };
        assert!((bottom - y(480.0)).abs() < 2e-4, "{bottom} vs {}", y(480.0));
        assert!((top - y(1_120.0)).abs() < 2e-4, "{top} vs {}", y(1_120.0));
        let data = serde_json::to_vec(&t).unwrap();
        assert!(data.len() < 100_000, "{} bytes of chart data", data.len());
    }

    #[test]
    fn a_short_tachogram_is_drawn_whole_with_a_marker_per_interval() {
        let tr = Translator::new(Language::En);
        let rr: Vec<f64> = (0..71).map(|i| 820.0 + (i % 5) as f64 * 10.0).collect();
        let f = Findings::from_analysis(&tr, &rr_analysis(&rr), None);
        let t = f.tachogram.unwrap();
        assert!(t.markers);
        assert_eq!(t.runs.concat().len(), 71);
        // Thirty minutes: too dense for markers, not yet for the line.
        let rr: Vec<f64> = (0..2_200).map(|i| 820.0 + (i % 5) as f64 * 10.0).collect();
        let t = Findings::from_analysis(&tr, &rr_analysis(&rr), None)
            .tachogram
            .unwrap();
        assert!(!t.markers);
        assert_eq!(t.runs.concat().len(), 2_200);
    }

    #[test]
    fn many_gaps_too_narrow_to_see_do_not_multiply_the_runs() {
        let tr = Translator::new(Language::En);
        let mut a = rr_analysis(&long_series());
        // A rejected beat after every other interval: 200,000 gaps of under a second over
        // 89 hours, each far narrower than the line.
        let mut shift = 0.0;
        for (i, t) in a.rr_times.iter_mut().enumerate() {
            if i % 2 == 0 {
                shift += 900.0;
            }
            *t += shift;
        }
        let t = Findings::from_analysis(&tr, &a, None).tachogram.unwrap();
        let columns = series::columns_for(TACHOGRAM_WIDTH_MM, TACHOGRAM_STROKE_PT);
        assert!(t.runs.len() <= columns);
        assert!(t.runs.concat().len() <= columns * series::PER_COLUMN);
    }

    #[test]
    fn a_strip_keeps_a_minute_of_camera_signal_whole_and_bounds_a_dense_one() {
        let tr = Translator::new(Language::En);
        let a = analysis(vec![Label::SinusRhythm]);
        let s = Findings::from_analysis(&tr, &a, Some(&trace()))
            .strip
            .unwrap();
        let samples: usize = s.rows.iter().map(|r| r.line.len()).sum();
        assert_eq!(
            samples,
            1800 + 1,
            "every sample, and row 2 starts where row 1 ended"
        );

        // Half an hour at 1 kHz with a beat every 200 ms: more than a row can show.
        let dense = Trace {
            start_ms: 0.0,
            step_ms: 1.0,
            values: (0..1_800_000).map(|i| (i as f64 / 31.8).sin()).collect(),
        };
        let beats: Vec<f64> = (0..9_000).map(|i| i as f64 * 200.0).collect();
        let mut a = a.clone();
        a.beats = beats;
        let s = Findings::from_analysis(&tr, &a, Some(&dense))
            .strip
            .unwrap();
        assert_eq!(s.rows.len(), 60);
        let columns = series::columns_for(STRIP_WIDTH_MM, STRIP_STROKE_PT);
        for row in &s.rows {
            assert!(row.line.len() <= columns * series::PER_COLUMN);
            assert!(
                row.accepted.is_empty(),
                "150 beats in 30 s would not stand apart"
            );
        }
        assert_eq!(s.accepted_beats, 9_000, "the count is still told");
        // The envelope of the pulse is kept: each row reaches the top and bottom.
        for row in &s.rows {
            let top = row.line.iter().map(|p| p[1]).fold(1.0, f64::min);
            let bottom = row.line.iter().map(|p| p[1]).fold(0.0, f64::max);
            assert!(bottom - top > 0.5, "row spans {top}..{bottom}");
        }
    }

    #[test]
    fn ticks_are_round_numbers() {
        assert_eq!(nice_step(60.0, 6.0), 10.0);
        assert_eq!(nice_step(600.0, 5.0), 200.0);
        assert_eq!(nice_step(0.0, 5.0), 1.0);
        let t = ticks(400.0, 1200.0, 200.0, |v| format!("{v}"));
        let labels: Vec<_> = t.iter().map(|t| t.label.as_str()).collect();
        assert_eq!(labels, ["400", "600", "800", "1000", "1200"]);
        assert_eq!(t[0].at, 0.0);
        assert_eq!(t[4].at, 1.0);
    }
}
