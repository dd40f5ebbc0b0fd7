//! The tachogram and the pulse strip as plot geometry, for the measurement PDF and the portal's
//! measurement page alike.
//!
//! Coordinates are fractions of the plot area (x from the left, y from the top, both 0..1,
//! rounded to 4 places), so the typst template and the portal's SVG only scale them. Every
//! line is reduced to what its printed width can show ([`super::series`]), and markers are
//! only given when they stand apart, so the charts of a day-long series are no larger than
//! those of a minute.

use serde::Serialize;

use super::format;
use super::series::{self, Columns};
use crate::analysis::{Analysis, Trace};

/// Seconds of pulse signal per strip row: two rows hold a one-minute recording on a page
/// with room to spare, and a beat at 150 bpm is still 2.4 mm wide on paper.
pub const STRIP_ROW_SECONDS: f64 = 30.0;

/// How far the strip's value range reaches beyond the bulk of the signal: a little below, more
/// above, where the beat markers sit.
const STRIP_MARGIN_BELOW: f64 = 0.12;
const STRIP_MARGIN_ABOVE: f64 = 0.35;

/// The tachogram's plot as `charts.typ` draws it: 163 mm wide, a 0.7 pt line, diamonds
/// 2.5 pt across.
const TACHOGRAM_WIDTH_MM: f64 = 163.0;
const TACHOGRAM_HEIGHT_MM: f64 = 21.0;
const TACHOGRAM_STROKE_PT: f64 = 0.7;
const TACHOGRAM_MARKER_MM: f64 = 2.5 * 25.4 / 72.0;

/// The strip's rows as `charts.typ` draws them: 178 mm wide, a 0.6 pt line, beat
/// markers 4.2 pt across.
const STRIP_WIDTH_MM: f64 = 178.0;
const STRIP_ROW_MM: f64 = 10.5;
const STRIP_STROKE_PT: f64 = 0.6;
const STRIP_MARKER_MM: f64 = 4.2 * 25.4 / 72.0;

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
    /// Weak beats kept by the second pass and counted, but unsure; likewise.
    pub unsure: Vec<[f64; 2]>,
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
    pub unsure_beats: usize,
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

/// The tachogram of the accepted intervals; none with fewer than two.
pub(super) fn tachogram(
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
pub(super) fn strip(trace: &Trace, beats: StripBeats) -> Option<Strip> {
    let StripBeats {
        accepted,
        rejected,
        unsure,
    } = beats;
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
                unsure: Vec::new(),
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
    for (beats, kind) in [(accepted, 0), (rejected, 1), (unsure, 2)] {
        for &ms in beats {
            // An unsure beat is drawn once, as unsure.
            if kind == 0 && unsure.contains(&ms) {
                continue;
            }
            let (Some((row, x)), Some(value)) = (place(ms), trace_at(trace, ms)) else {
                continue;
            };
            let mark = [x, y(value)];
            let row = &mut rows[row];
            match kind {
                0 => row.accepted.push(mark),
                1 => row.rejected.push(mark),
                _ => row.unsure.push(mark),
            }
        }
    }
    // A row of 30 s holds up to 120 markers apart (240 bpm); more cannot be told apart and
    // would only make the row a solid band.
    for row in &mut rows {
        for marks in [&mut row.accepted, &mut row.rejected, &mut row.unsure] {
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
        unsure_beats: unsure.len(),
    })
}

/// The beats a strip marks, ms from the start: accepted (unsure ones among them), rejected.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct StripBeats<'a> {
    pub accepted: &'a [f64],
    pub rejected: &'a [f64],
    pub unsure: &'a [f64],
}

impl<'a> StripBeats<'a> {
    /// The beats of `analysis`.
    pub fn of(analysis: &'a crate::analysis::Analysis) -> StripBeats<'a> {
        StripBeats {
            accepted: &analysis.beats,
            rejected: &analysis.rejected_beats,
            unsure: &analysis.unsure_beats,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::Label;
    use crate::domain::account::Language;
    use crate::reports::findings::tests::{analysis, trace};

    #[test]
    fn a_gap_of_rejected_beats_splits_the_tachogram() {
        let mut a = analysis(vec![Label::SinusRhythm]);
        for t in a.rr_times.iter_mut().skip(20) {
            *t += 3_000.0;
        }
        assert_eq!(tachogram(Language::En, &a, None).unwrap().runs.len(), 2);
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
        let t = tachogram(Language::En, &rr_analysis(&long_series()), None).unwrap();
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
        let rr: Vec<f64> = (0..71).map(|i| 820.0 + (i % 5) as f64 * 10.0).collect();
        let t = tachogram(Language::En, &rr_analysis(&rr), None).unwrap();
        assert!(t.markers);
        assert_eq!(t.runs.concat().len(), 71);
        // Thirty minutes: too dense for markers, not yet for the line.
        let rr: Vec<f64> = (0..2_200).map(|i| 820.0 + (i % 5) as f64 * 10.0).collect();
        let t = tachogram(Language::En, &rr_analysis(&rr), None).unwrap();
        assert!(!t.markers);
        assert_eq!(t.runs.concat().len(), 2_200);
    }

    #[test]
    fn many_gaps_too_narrow_to_see_do_not_multiply_the_runs() {
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
        let t = tachogram(Language::En, &a, None).unwrap();
        let columns = series::columns_for(TACHOGRAM_WIDTH_MM, TACHOGRAM_STROKE_PT);
        assert!(t.runs.len() <= columns);
        assert!(t.runs.concat().len() <= columns * series::PER_COLUMN);
    }

    #[test]
    fn a_strip_keeps_a_minute_of_camera_signal_whole_and_bounds_a_dense_one() {
        let a = analysis(vec![Label::SinusRhythm]);
        let s = strip(&trace(), StripBeats::of(&a)).unwrap();
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
        let s = strip(&dense, StripBeats::of(&a)).unwrap();
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
