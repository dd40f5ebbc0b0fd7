//! Reducing a plotted series to what the page can show, so that a chart costs the same to
//! draw whatever the length of the recording behind it.
//!
//! A chart's width is cut into columns about as wide as its line is thick (on paper, a
//! feature narrower than the stroke is invisible: it is covered by the line itself). Within
//! each column the series keeps four points, in their order in time: the first, the lowest,
//! the highest and the last (the "M4" reduction of Jugel et al., *M4: A Visualization-Oriented
//! Time Series Data Aggregation*, VLDB 2014). The lowest and highest keep the column's
//! envelope exactly, so a single short interval still reaches its depth and an irregular
//! stretch keeps its spread; the first and last join each column to its neighbours as the
//! full line would. A series with no more points than the reduction could keep passes
//! unchanged.

/// Points kept per column: first, lowest, highest, last.
pub const PER_COLUMN: usize = 4;

/// Millimetres in a typographic point.
const MM_PER_PT: f64 = 25.4 / 72.0;

/// The columns of a plot `width_mm` wide whose line is `stroke_pt` thick: one per line
/// width, since two points closer than that are drawn as one blot.
pub fn columns_for(width_mm: f64, stroke_pt: f64) -> usize {
    let stroke_mm = stroke_pt * MM_PER_PT;
    if !(width_mm.is_finite() && stroke_mm.is_finite() && width_mm > 0.0 && stroke_mm > 0.0) {
        return 1;
    }
    ((width_mm / stroke_mm).ceil() as usize).max(1)
}

/// Whether `count` markers `marker_mm` wide each stand apart on a plot `width_mm` wide when
/// spread evenly; beyond that they merge into a band that says no more than the line does.
pub fn markers_fit(count: usize, width_mm: f64, marker_mm: f64) -> bool {
    count as f64 * marker_mm <= width_mm
}

/// Equal columns over the x range `from..to` of a plot.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Columns {
    from: f64,
    to: f64,
    count: usize,
}

impl Columns {
    /// `count` columns (at least one) over `from..to`; an empty or unreadable range is one
    /// column.
    pub fn new(from: f64, to: f64, count: usize) -> Self {
        let readable = from.is_finite() && to.is_finite() && to > from;
        Columns {
            from: if readable { from } else { 0.0 },
            to: if readable { to } else { 0.0 },
            count: if readable { count.max(1) } else { 1 },
        }
    }

    /// How many columns there are.
    pub fn count(&self) -> usize {
        self.count
    }

    /// The width of one column, in x units.
    pub fn width(&self) -> f64 {
        (self.to - self.from) / self.count as f64
    }

    /// The column holding `x`; values outside the range belong to the first or last column.
    pub fn of(&self, x: f64) -> usize {
        if self.to <= self.from {
            return 0;
        }
        let at = (x - self.from) / (self.to - self.from) * self.count as f64;
        if at.is_nan() || at < 0.0 {
            0
        } else {
            (at as usize).min(self.count - 1)
        }
    }

    /// The most points [`envelope`] returns over these columns.
    pub fn bound(&self) -> usize {
        self.count * PER_COLUMN
    }
}

/// SVG path data through each of `runs` (points as plot fractions, x from the left, y from
/// the top) in a plot `width` × `height` units, to two decimals: the PDF draws long lines as
/// one SVG path, parsed natively, rather than as one typst element per point.
pub fn svg_path<'a>(
    runs: impl IntoIterator<Item = &'a [[f64; 2]]>,
    width: f64,
    height: f64,
) -> String {
    let mut d = String::new();
    for run in runs {
        for (i, [x, y]) in run.iter().enumerate() {
            if x.is_finite() && y.is_finite() {
                d.push(if i == 0 { 'M' } else { 'L' });
                push_hundredths(&mut d, x * width);
                d.push(' ');
                push_hundredths(&mut d, y * height);
            }
        }
    }
    d
}

/// Appends `value` with two decimals, rounded half away from zero. A chart's path holds
/// thousands of numbers, and `format!("{:.2}")` (exact decimal rounding) took a third of
/// building a long measurement's report data; the hundredths of a millimetre it could
/// round differently are far below what a PDF viewer draws.
fn push_hundredths(out: &mut String, value: f64) {
    use std::fmt::Write;
    let hundredths = (value * 100.0).round();
    if !hundredths.is_finite() || hundredths.abs() >= 1e15 {
        // Writing to a String cannot fail.
        let _ = write!(out, "{value:.2}");
        return;
    }
    let hundredths = hundredths as i64;
    if hundredths < 0 {
        out.push('-');
    }
    let hundredths = hundredths.unsigned_abs();
    let _ = write!(out, "{}.{:02}", hundredths / 100, hundredths % 100);
}

/// Spans `[from, to]` in order, those less than `min_gap` apart (or overlapping) joined into
/// one; spans that are not finite or run backwards are left out.
pub fn merge_spans(mut spans: Vec<[f64; 2]>, min_gap: f64) -> Vec<[f64; 2]> {
    spans.retain(|[a, b]| a.is_finite() && b.is_finite() && b >= a);
    spans.sort_by(|x, y| x[0].total_cmp(&y[0]));
    let mut merged: Vec<[f64; 2]> = Vec::with_capacity(spans.len());
    for [a, b] in spans {
        match merged.last_mut() {
            Some(last) if a - last[1] < min_gap => last[1] = last[1].max(b),
            _ => merged.push([a, b]),
        }
    }
    merged
}

/// SVG path data of full-height rectangles over `spans` (fractions of the x axis) in a plot
/// `width` × `height` units.
pub fn svg_spans(spans: &[[f64; 2]], width: f64, height: f64) -> String {
    use std::fmt::Write;
    let mut d = String::new();
    for [a, b] in spans {
        let (a, b) = (a * width, b * width);
        // Writing to a String cannot fail.
        let _ = write!(d, "M{a:.2} 0H{b:.2}V{height:.2}H{a:.2}Z");
    }
    d
}

/// The extremes and ends of one column, as indices into the series.
struct Bucket {
    column: usize,
    first: usize,
    low: usize,
    high: usize,
    last: usize,
}

impl Bucket {
    fn new(column: usize, i: usize) -> Self {
        Bucket {
            column,
            first: i,
            low: i,
            high: i,
            last: i,
        }
    }

    /// The bucket's points, in time order, each once.
    fn emit(&self, points: &[[f64; 2]], out: &mut Vec<[f64; 2]>) {
        let mut kept = [self.first, self.low, self.high, self.last];
        kept.sort_unstable();
        let mut previous = None;
        for i in kept {
            if previous != Some(i) {
                out.push(points[i]);
                previous = Some(i);
            }
        }
    }
}

/// `points` (x, y) reduced to at most [`Columns::bound`] points keeping the visible envelope:
/// per column the first, lowest, highest and last point, in x order. Points with a NaN or
/// infinite coordinate are skipped; the rest are put in x order first if they are not. When
/// no more points remain than the bound, they are returned as they are.
pub fn envelope(points: &[[f64; 2]], columns: Columns) -> Vec<[f64; 2]> {
    let mut finite: Vec<[f64; 2]> = points
        .iter()
        .copied()
        .filter(|[x, y]| x.is_finite() && y.is_finite())
        .collect();
    if !finite.is_sorted_by(|a, b| a[0] <= b[0]) {
        // Stable, so points at the same x keep their order.
        finite.sort_by(|a, b| a[0].total_cmp(&b[0]));
    }
    if finite.len() <= columns.bound() {
        return finite;
    }
    let mut out = Vec::with_capacity(columns.bound());
    let mut bucket: Option<Bucket> = None;
    for (i, [x, y]) in finite.iter().copied().enumerate() {
        let column = columns.of(x);
        match &mut bucket {
            Some(b) if b.column == column => {
                if y < finite[b.low][1] {
                    b.low = i;
                }
                if y > finite[b.high][1] {
                    b.high = i;
                }
                b.last = i;
            }
            _ => {
                if let Some(done) = bucket.replace(Bucket::new(column, i)) {
                    done.emit(&finite, &mut out);
                }
            }
        }
    }
    if let Some(done) = bucket {
        done.emit(&finite, &mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};

    const COLUMNS: usize = 660;

    /// A tachogram: interval `i` ends at the sum of the intervals so far, x in seconds.
    fn tachogram(intervals: &[f64]) -> Vec<[f64; 2]> {
        let mut at = 0.0;
        intervals
            .iter()
            .map(|rr| {
                at += rr / 1000.0;
                [at, *rr]
            })
            .collect()
    }

    fn columns_over(points: &[[f64; 2]]) -> Columns {
        Columns::new(0.0, points.last().map_or(1.0, |p| p[0]), COLUMNS)
    }

    /// Regular intervals around 800 ms with a little jitter.
    fn regular(rng: &mut StdRng, n: usize) -> Vec<f64> {
        (0..n)
            .map(|_| 800.0 + rng.random_range(-6.0..6.0))
            .collect()
    }

    fn assert_x_ordered(points: &[[f64; 2]]) {
        assert!(points.windows(2).all(|w| w[0][0] <= w[1][0]), "x in order");
    }

    #[test]
    fn the_output_is_bounded_whatever_the_input() {
        let columns = Columns::new(0.0, 1.0, COLUMNS);
        assert!(envelope(&[], columns).is_empty());
        assert_eq!(envelope(&[[0.5, 1.0]], columns), [[0.5, 1.0]]);
        assert_eq!(
            envelope(&[[0.0, 1.0], [1.0, 2.0]], columns),
            [[0.0, 1.0], [1.0, 2.0]]
        );
        let mut rng = StdRng::seed_from_u64(7);
        let million: Vec<[f64; 2]> = (0..1_000_000)
            .map(|i| [i as f64 / 1e6, rng.random_range(300.0..2000.0)])
            .collect();
        let reduced = envelope(&million, columns);
        assert!(reduced.len() <= COLUMNS * PER_COLUMN);
        assert!(
            reduced.len() > COLUMNS * 3,
            "each column keeps its extremes"
        );
        assert_x_ordered(&reduced);
        assert_eq!(reduced.first(), million.first(), "the start is kept");
        assert_eq!(reduced.last(), million.last(), "the end is kept");
        let low = million.iter().map(|p| p[1]).fold(f64::INFINITY, f64::min);
        let high = million.iter().map(|p| p[1]).fold(0.0, f64::max);
        assert!(reduced.iter().any(|p| p[1] == low) && reduced.iter().any(|p| p[1] == high));
    }

    #[test]
    fn unreadable_points_are_skipped_and_a_degenerate_axis_is_one_column() {
        let points = [
            [0.0, 1.0],
            [f64::NAN, 2.0],
            [0.5, f64::INFINITY],
            [f64::NEG_INFINITY, 3.0],
            [1.0, 4.0],
        ];
        let columns = Columns::new(0.0, 1.0, 10);
        assert_eq!(envelope(&points, columns), [[0.0, 1.0], [1.0, 4.0]]);
        let many: Vec<[f64; 2]> = (0..1000).map(|i| [0.0, (i % 17) as f64]).collect();
        let flat = Columns::new(0.0, 0.0, 500);
        assert_eq!(flat.count(), 1);
        let reduced = envelope(&many, Columns::new(f64::NAN, 1.0, 500));
        assert!(reduced.len() <= PER_COLUMN);
        assert_eq!(reduced.first(), many.first());
        assert_eq!(reduced.last(), many.last());
        assert!(reduced.iter().any(|p| p[1] == 0.0) && reduced.iter().any(|p| p[1] == 16.0));
    }

    #[test]
    fn out_of_order_points_come_back_in_x_order() {
        let mut rng = StdRng::seed_from_u64(3);
        let mut points: Vec<[f64; 2]> = (0..20_000)
            .map(|_| [rng.random_range(0.0..1.0), rng.random_range(0.0..1.0)])
            .collect();
        points.push([-5.0, 0.5]);
        let reduced = envelope(&points, Columns::new(0.0, 1.0, 100));
        assert!(reduced.len() <= 100 * PER_COLUMN);
        assert_x_ordered(&reduced);
        assert_eq!(
            reduced[0],
            [-5.0, 0.5],
            "outside the range: the first column"
        );
    }

    #[test]
    fn a_series_within_the_bound_passes_unchanged() {
        let mut rng = StdRng::seed_from_u64(1);
        let points = tachogram(&regular(&mut rng, COLUMNS * PER_COLUMN));
        assert_eq!(envelope(&points, columns_over(&points)), points);
        let one_more = tachogram(&regular(&mut rng, COLUMNS * PER_COLUMN + 1));
        assert!(envelope(&one_more, columns_over(&one_more)).len() < one_more.len());
    }

    #[test]
    fn a_single_ectopic_beat_keeps_its_spike() {
        let mut rng = StdRng::seed_from_u64(11);
        let mut rr = regular(&mut rng, 100_000);
        // A premature beat and its compensatory pause: together two normal intervals.
        rr[61_234] = 480.0;
        rr[61_235] = 1_120.0;
        let points = tachogram(&rr);
        let reduced = envelope(&points, columns_over(&points));
        assert!(reduced.len() <= COLUMNS * PER_COLUMN);
        assert!(reduced.contains(&points[61_234]), "the short interval");
        assert!(reduced.contains(&points[61_235]), "the compensatory pause");
        // And it stands out from its column's neighbours as it does in the full series.
        let others = reduced
            .iter()
            .filter(|p| **p != points[61_234] && **p != points[61_235]);
        assert!(others.clone().all(|p| (790.0..=810.0).contains(&p[1])));
    }

    /// The root mean square of successive differences of `y`.
    fn rms_successive(points: &[[f64; 2]]) -> f64 {
        let squares: Vec<f64> = points
            .windows(2)
            .map(|w| (w[1][1] - w[0][1]).powi(2))
            .collect();
        (squares.iter().sum::<f64>() / squares.len().max(1) as f64).sqrt()
    }

    #[test]
    fn an_irregular_stretch_still_looks_irregular() {
        let mut rng = StdRng::seed_from_u64(5);
        let mut rr = regular(&mut rng, 100_000);
        // Ten thousand intervals of an irregularly irregular rhythm in the middle.
        for interval in &mut rr[40_000..50_000] {
            *interval = rng.random_range(400.0..1_200.0);
        }
        let points = tachogram(&rr);
        let columns = columns_over(&points);
        let reduced = envelope(&points, columns);
        assert!(reduced.len() <= columns.bound());

        let (start, end) = (points[40_000][0], points[49_999][0]);
        let inside = |p: &&[f64; 2]| p[0] >= start && p[0] <= end;
        let first_column = columns.of(start) + 1;
        let last_column = columns.of(end) - 1;
        // Every column of the stretch keeps its spread exactly.
        for column in first_column..=last_column {
            let spread = |series: &[[f64; 2]]| {
                let ys: Vec<f64> = series
                    .iter()
                    .filter(|p| columns.of(p[0]) == column)
                    .map(|p| p[1])
                    .collect();
                let low = ys.iter().copied().fold(f64::INFINITY, f64::min);
                let high = ys.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                high - low
            };
            assert_eq!(spread(&reduced), spread(&points), "column {column}");
        }
        // The line jumps as much from point to point as the full series does, where the
        // regular part stays calm.
        let original: Vec<[f64; 2]> = points.iter().filter(inside).copied().collect();
        let kept: Vec<[f64; 2]> = reduced.iter().filter(inside).copied().collect();
        let (full, shown) = (rms_successive(&original), rms_successive(&kept));
        assert!(
            shown >= 0.8 * full && shown <= 2.0 * full,
            "irregular stretch: {shown:.0} ms drawn, {full:.0} ms in the series"
        );
        let calm: Vec<[f64; 2]> = reduced.iter().filter(|p| p[0] < start).copied().collect();
        assert!(
            rms_successive(&calm) < full / 10.0,
            "the regular part: {:.1} ms",
            rms_successive(&calm)
        );
    }

    #[test]
    fn spans_closer_than_a_column_are_one() {
        let spans = vec![
            [0.5, 0.6],
            [0.1, 0.2],
            [0.205, 0.3],
            [0.35, 0.4],
            [f64::NAN, 1.0],
            [0.9, 0.8],
        ];
        assert_eq!(
            merge_spans(spans, 0.01),
            [[0.1, 0.3], [0.35, 0.4], [0.5, 0.6]]
        );
        // A thousand stretches a thousandth apart over a 661-column axis are one band.
        let many: Vec<[f64; 2]> = (0..1000)
            .map(|i| [i as f64 / 1000.0, (i as f64 + 0.5) / 1000.0])
            .collect();
        assert_eq!(merge_spans(many, 1.0 / 661.0), [[0.0, 0.9995]]);
        assert_eq!(
            svg_spans(&[[0.5, 1.0]], 10.0, 2.0),
            "M5.00 0H10.00V2.00H5.00Z"
        );
    }

    #[test]
    fn paths_are_scaled_to_the_plot() {
        let runs = [vec![[0.0, 0.0], [0.5, 1.0]], vec![[0.75, 0.25]]];
        assert_eq!(
            svg_path(runs.iter().map(Vec::as_slice), 163.0, 21.0),
            "M0.00 0.00L81.50 21.00M122.25 5.25"
        );
        assert_eq!(svg_path([[].as_slice()], 1.0, 1.0), "");
    }

    #[test]
    fn hundredths_match_the_standard_formatting_but_at_exact_halves() {
        let mut out = String::new();
        for value in [0.0, 1.0, 12.345_678, 81.5, -3.21, -0.004, 163.0, 1e16] {
            out.clear();
            push_hundredths(&mut out, value);
            assert_eq!(
                out,
                format!("{value:.2}").replace("-0.00", "0.00"),
                "{value}"
            );
        }
        out.clear();
        push_hundredths(&mut out, 0.125);
        assert_eq!(out, "0.13");
    }

    #[test]
    fn columns_follow_the_line_width_and_markers_must_stand_apart() {
        // The tachogram: 163 mm at 0.7 pt; the strip: 178 mm at 0.6 pt.
        assert_eq!(columns_for(163.0, 0.7), 661);
        assert_eq!(columns_for(178.0, 0.6), 841);
        assert_eq!(columns_for(0.0, 0.7), 1);
        assert_eq!(columns_for(100.0, f64::NAN), 1);
        assert!(markers_fit(100, 163.0, 0.88));
        assert!(!markers_fit(2_200, 163.0, 0.88));
        let c = Columns::new(0.0, 10.0, 5);
        assert_eq!((c.of(-1.0), c.of(0.0), c.of(1.99), c.of(2.0)), (0, 0, 0, 1));
        assert_eq!((c.of(10.0), c.of(1e9), c.of(f64::NAN)), (4, 4, 0));
        assert_eq!(c.width(), 2.0);
    }
}
