//! View models shared by several pages: measurement rows, the analysis' findings with their
//! SVG charts, pages of a list, and the RQL the portal's lists are built from (the same
//! whitelist and visibility path as the JSON API).

use super::context::Visitor;
use super::error::WebError;
use crate::analysis::{Indicator, Label, ResultKey, rate_label};
use crate::domain::id::Id;
use crate::domain::rql::Query;
use crate::i18n::Translator;
use crate::reports::chart::{IntervalWindow, Strip, Tachogram};
use crate::reports::common::{conclusion_colour, reviewed_by, translated_or_raw};
use crate::reports::findings::{Findings, Headline, RESULT_KEYS, result_key};
use crate::store::entities::measurement;
use crate::store::query::ListSpec;
use crate::store::query::Resource;
use crate::store::{LIST_COUNTED, Viewer};

/// Rows per page of every portal list.
pub const PAGE_SIZE: u64 = 20;

/// Result keys the portal offers as a filter (the measurement's `result`), most severe first.
pub const RESULTS: [ResultKey; 5] = RESULT_KEYS;

/// The result key of a filter's value, if it is one.
pub fn result_filter(value: Option<&str>) -> Option<ResultKey> {
    value.map(str::trim).and_then(result_key)
}

/// What a list's search field holds: trimmed, and a search longer than any name or address
/// is cut to 100 characters, not refused.
pub fn search_text(typed: Option<&str>) -> String {
    typed.unwrap_or("").trim().chars().take(100).collect()
}

/// A query string of `pairs` (for a pager's links), each value encoded.
pub fn query_string(pairs: &[(&str, &str)]) -> String {
    serde_urlencoded::to_string(pairs).unwrap_or_default()
}

/// A list query built as an RQL [`Query`] value and translated for `resource`, exactly as the
/// API translates the query it parses. Only filter values the visitor typed can fail here.
pub fn list_spec(resource: &Resource, query: &Query) -> Result<ListSpec, WebError> {
    resource
        .translate(query)
        .map_err(|_| WebError::BadRequest("error-bad-filter"))
}

/// Paging links of a list.
pub struct Pager {
    pub page: u64,
    pub pages: u64,
    pub total: u64,
    /// The list counted no further than [`LIST_COUNTED`] and holds more: `total` and `pages`
    /// are then lower bounds.
    pub more: bool,
    /// Query string of the previous and next page (filters kept), if any.
    pub previous: Option<String>,
    pub next: Option<String>,
}

impl Pager {
    /// The pager of `page` (0-based) of `total` items; `base` is the query string without
    /// the page parameter.
    pub fn new(page: u64, total: u64, base: &str) -> Self {
        Self::build(page, total, false, base)
    }

    /// [`Pager::new`] for a list the store counted no further than [`LIST_COUNTED`]: a
    /// `total` past it reads "more than", and every page then has a next one until a page
    /// comes back short (see [`Pager::ended_at`]).
    pub fn counted_up_to(page: u64, total: u64, base: &str) -> Self {
        Self::build(page, total.min(LIST_COUNTED), total > LIST_COUNTED, base)
    }

    fn build(page: u64, total: u64, more: bool, base: &str) -> Self {
        let pages = total.div_ceil(PAGE_SIZE).max(1);
        let link = |p: u64| {
            if base.is_empty() {
                format!("?page={p}")
            } else {
                format!("?{base}&page={p}")
            }
        };
        Pager {
            page: page + 1,
            pages,
            total,
            more,
            previous: (page > 0).then(|| link(page - 1)),
            next: (page + 1 < pages || more).then(|| link(page + 1)),
        }
    }

    /// Ends a "more than" pager at a page of `rows` that came back short: the last one.
    pub fn ended_at(mut self, rows: usize) -> Self {
        if self.more && (rows as u64) < PAGE_SIZE {
            self.next = None;
        }
        self
    }
}

/// A measurement in a list.
pub struct MeasurementRow {
    pub id: Id,
    /// When it was taken, in the reader's zone.
    pub when: String,
    /// When it was taken on the patient's clock, with the zone, if that clock differs from the
    /// reader's: `Patient: 26-11-2026 11:07 (Asia/Dubai)`.
    pub patient_time: Option<String>,
    /// The server's heart rate with its unit, or a dash.
    pub heart_rate: String,
    /// The result key (for tests and styles) and its colour name (`green`, …).
    pub result_key: String,
    pub result_colour: String,
    pub result: String,
    pub status: String,
    /// The physician's conclusion, which the row leads with when there is one (the result
    /// above is then the automatic screening beneath it).
    pub conclusion: Option<ConclusionTag>,
}

/// A physician's conclusion as a list or page shows it: in its words and colour, with who
/// gave it and when.
pub struct ConclusionTag {
    /// The rhythm label's wire name (for tests and styles), or `other` for free text.
    pub key: String,
    pub label: String,
    /// The colour of the label's indicator; grey for free text, whose words carry it.
    pub colour: &'static str,
    reviewer: Option<Id>,
    at: Option<i64>,
    /// "Reviewed by … on …", once [`name_reviewers`] has named the reviewer.
    pub by: String,
}

/// The conclusion `label` given by `reviewer` at `at`, if any.
pub fn conclusion_tag(
    visitor: &Visitor,
    label: Option<&str>,
    reviewer: Option<Id>,
    at: Option<i64>,
) -> Option<ConclusionTag> {
    let label = label.filter(|label| !label.is_empty())?;
    let known = Label::from_wire(label);
    Some(ConclusionTag {
        key: known.map_or("other", Label::as_str).to_owned(),
        label: translated_or_raw(&visitor.tr, "label", label),
        colour: conclusion_colour(label).as_str(),
        reviewer,
        at,
        by: String::new(),
    })
}

/// Writes who concluded each of `tags` and when, with the reviewers' names read in one query.
pub async fn name_reviewers<'a>(
    visitor: &Visitor,
    viewer: &Viewer,
    tags: impl IntoIterator<Item = &'a mut ConclusionTag>,
) -> Result<(), WebError> {
    let mut tags: Vec<&mut ConclusionTag> = tags.into_iter().collect();
    let mut reviewers: Vec<Id> = tags.iter().filter_map(|tag| tag.reviewer).collect();
    reviewers.sort();
    reviewers.dedup();
    // Asked even for no reviewer, so that a page costs the same statements whatever it lists.
    let names = visitor.state.store.user_names(viewer, &reviewers).await?;
    for tag in &mut tags {
        let date = tag.at.map(|at| visitor.date(at)).unwrap_or_default();
        let name = tag.reviewer.and_then(|id| names.get(&id));
        tag.by = reviewed_by(&visitor.tr, name.map(String::as_str), date);
    }
    Ok(())
}

/// The translated status of a measurement.
pub fn status_of(visitor: &Visitor, m: &measurement::Header) -> String {
    visitor
        .tr
        .try_text(&format!("status-{}", m.status))
        .unwrap_or_else(|| m.status.to_string())
}

/// A heart rate as shown: whole beats per minute, or a dash.
pub fn heart_rate_text(visitor: &Visitor, bpm: Option<f64>) -> String {
    bpm.filter(|hr| hr.is_finite())
        .map(|hr| format!("{} {}", hr.round() as i64, visitor.tr.text("bpm")))
        .unwrap_or_else(|| "–".into())
}

/// A list row for `m`: the server's heart rate and result.
/// A measurement as lists show it; `patient_zone` is the patient's time zone when the reader is
/// someone else, so that a clock that differs from the reader's is shown too.
pub fn measurement_row(
    visitor: &Visitor,
    m: &measurement::Header,
    patient_zone: Option<&str>,
) -> MeasurementRow {
    let mut result = Headline::stored(&visitor.tr, m.result.as_deref(), m.indicator.as_deref());
    // A regular rhythm in orange is so for its rate: the words say which, not the colour alone.
    if result.key == ResultKey::Regular.as_str()
        && m.indicator.as_deref() == Some(Indicator::Warning.as_str())
        && let Some(rate) = m.heart_rate.and_then(rate_label)
    {
        let rate = visitor.tr.text(&format!("label-{}", rate.as_str()));
        result.label = format!("{} · {rate}", result.label);
    }
    let taken = m.measurement_timestamp.unwrap_or(m.creation_timestamp);
    MeasurementRow {
        id: m.id,
        when: visitor.datetime(taken),
        patient_time: patient_zone
            .and_then(|zone| visitor.patient_time(taken, zone))
            .map(|(time, zone)| {
                visitor.tr.text_with(
                    "zone-patient-time",
                    &[("time", time), ("zone", zone.name().to_owned())],
                )
            }),
        heart_rate: heart_rate_text(visitor, m.heart_rate),
        result_key: result.key.to_owned(),
        result_colour: result.colour.to_owned(),
        result: result.label,
        status: status_of(visitor, m),
        conclusion: conclusion_tag(
            visitor,
            m.review_label.as_deref(),
            m.reviewer_id,
            m.review_timestamp,
        ),
    }
}

/// Whether a measurement has results (so it can be reviewed).
pub fn has_results(m: &measurement::Model) -> bool {
    m.status.has_results()
}

/// Whether a report can be made of a measurement.
pub fn reportable(m: &measurement::Model) -> bool {
    crate::reports::reportable(m.status)
}

/// An axis tick in SVG units.
pub struct SvgTick {
    pub x: String,
    pub y: String,
    pub label: String,
}

/// The tachogram as inline SVG: each series one path, in a [`PLOT_W`] × [`TACHOGRAM_H`] plot.
pub struct TachogramSvg {
    pub desc: String,
    /// Irregular stretches: one path of rectangles.
    pub stretches: String,
    pub grid: String,
    pub line: String,
    /// The intervals' markers: one path of diamonds, empty when they would not stand apart.
    pub points: String,
    pub x_ticks: Vec<SvgTick>,
    pub y_ticks: Vec<SvgTick>,
    pub has_stretches: bool,
    pub has_points: bool,
    /// The intervals per stretch of time: the chart's table, and what a tap on it reads.
    pub windows: Vec<WindowRow>,
}

/// A row of the tachogram's table.
pub struct WindowRow {
    /// `10–20 s`.
    pub span: String,
    pub count: usize,
    /// Mean interval and the rate it makes: `830 ms (72 bpm)`.
    pub mean: String,
    /// Shortest to longest: `790–870 ms`.
    pub range: String,
    /// Where the row's stretch starts and ends on the time axis, as fractions.
    pub from: String,
    pub to: String,
    /// The whole row in one sentence, for a tap on the chart.
    pub label: String,
}

/// The pulse strip as inline SVG: rows of [`STRIP_ROW_H`] stacked in one plot, each series
/// one path across all rows.
pub struct StripSvg {
    pub desc: String,
    /// The height of the SVG's view box: the rows, their ticks and room for the markers.
    pub view_height: String,
    pub grid: String,
    pub frames: String,
    pub line: String,
    pub accepted: String,
    pub rejected: String,
    pub unsure: String,
    pub ticks: Vec<SvgTick>,
    pub has_accepted: bool,
    pub has_rejected: bool,
    pub has_unsure: bool,
}

/// One line of the HRV table.
pub struct HrvLine {
    pub name: &'static str,
    pub meaning: String,
    pub value: String,
}

/// What the measurement page shows of the analysis.
pub struct FindingsView {
    pub heart_rate: String,
    pub result_key: &'static str,
    pub result_colour: &'static str,
    pub result: String,
    pub labels: Vec<String>,
    pub reasons: String,
    pub quality: Option<(String, &'static str, String)>,
    pub accepted_beats: String,
    pub rejected_beats: String,
    pub hrv: Vec<HrvLine>,
    pub tachogram: Option<TachogramSvg>,
    pub strip: Option<StripSvg>,
}

/// The plot's width in SVG units.
pub const PLOT_W: f64 = 600.0;
/// The tachogram's height in SVG units.
pub const TACHOGRAM_H: f64 = 160.0;
/// One strip row's height, and the distance from one row to the next, in SVG units.
pub const STRIP_ROW_H: f64 = 56.0;
const STRIP_PITCH: f64 = 76.0;

/// Appends `M x y L x y …` for `points` mapped by `at`.
fn polyline(d: &mut String, points: &[[f64; 2]], at: impl Fn([f64; 2]) -> (f64, f64)) {
    for (i, p) in points.iter().enumerate() {
        let (x, y) = at(*p);
        d.push_str(&format!("{}{x:.1} {y:.1}", if i == 0 { "M" } else { "L" }));
    }
}

fn window_row(tr: &Translator, w: &IntervalWindow) -> WindowRow {
    let language = tr.language();
    let number = |value: f64| crate::reports::format::decimal(language, value, 0);
    let span = format!("{}–{} s", number(w.start_s), number(w.end_s));
    let mean = tr.text_with(
        "interval-mean",
        &[
            ("ms", number(w.mean_ms)),
            ("bpm", number(60_000.0 / w.mean_ms)),
        ],
    );
    let range = format!("{}–{} ms", number(w.min_ms), number(w.max_ms));
    let label = tr.text_with(
        "interval-window",
        &[
            ("span", span.clone()),
            ("count", w.count.to_string()),
            ("mean", mean.clone()),
            ("range", range.clone()),
        ],
    );
    WindowRow {
        span,
        count: w.count,
        mean,
        range,
        from: format!("{:.4}", w.from),
        to: format!("{:.4}", w.to),
        label,
    }
}

fn tachogram_svg(tr: &Translator, t: &Tachogram) -> TachogramSvg {
    let at = |p: [f64; 2]| (p[0] * PLOT_W, p[1] * TACHOGRAM_H);
    let mut line = String::new();
    let mut points = String::new();
    for run in &t.runs {
        polyline(&mut line, run, at);
        if !t.markers {
            continue;
        }
        for p in run {
            let (x, y) = at(*p);
            points.push_str(&format!(
                "M{x:.1} {:.1}l2.5 2.5l-2.5 2.5l-2.5 -2.5z",
                y - 2.5
            ));
        }
    }
    let mut stretches = String::new();
    for [a, b] in &t.stretches {
        stretches.push_str(&format!(
            "M{:.1} 0H{:.1}V{TACHOGRAM_H}H{:.1}z",
            a * PLOT_W,
            b * PLOT_W,
            a * PLOT_W
        ));
    }
    let mut grid = String::new();
    for k in &t.y_ticks {
        grid.push_str(&format!("M0 {:.1}H{PLOT_W}", k.at * TACHOGRAM_H));
    }
    for k in &t.x_ticks {
        grid.push_str(&format!("M{:.1} 0V{TACHOGRAM_H}", k.at * PLOT_W));
    }
    TachogramSvg {
        desc: tr.text_with(
            "tachogram-desc",
            &[
                ("intervals", t.points.to_string()),
                ("stretches", t.stretches.len().to_string()),
            ],
        ),
        stretches,
        grid,
        line,
        x_ticks: t
            .x_ticks
            .iter()
            .map(|k| SvgTick {
                x: format!("{:.1}", k.at * PLOT_W),
                y: format!("{:.1}", TACHOGRAM_H + 16.0),
                label: k.label.clone(),
            })
            .collect(),
        y_ticks: t
            .y_ticks
            .iter()
            .map(|k| SvgTick {
                x: "-6".into(),
                y: format!("{:.1}", k.at * TACHOGRAM_H + 4.0),
                label: k.label.clone(),
            })
            .collect(),
        has_stretches: !t.stretches.is_empty(),
        has_points: !points.is_empty(),
        windows: t.windows.iter().map(|w| window_row(tr, w)).collect(),
        points,
    }
}

fn strip_svg(tr: &Translator, s: &Strip) -> StripSvg {
    let top = |r: usize| r as f64 * STRIP_PITCH;
    let seconds = s.row_seconds.round().clamp(1.0, 120.0) as usize;
    let mut grid = String::new();
    let mut frames = String::new();
    let mut line = String::new();
    let mut accepted = String::new();
    let mut rejected = String::new();
    let mut unsure = String::new();
    let mut ticks = Vec::new();
    for (r, row) in s.rows.iter().enumerate() {
        let y0 = top(r);
        for i in 0..=seconds {
            grid.push_str(&format!(
                "M{:.1} {y0:.1}v{STRIP_ROW_H}",
                i as f64 / seconds as f64 * PLOT_W
            ));
        }
        frames.push_str(&format!("M0 {y0:.1}H{PLOT_W}V{:.1}H0z", y0 + STRIP_ROW_H));
        for k in &row.x_ticks {
            frames.push_str(&format!("M{:.1} {y0:.1}v{STRIP_ROW_H}", k.at * PLOT_W));
            ticks.push(SvgTick {
                x: format!("{:.1}", k.at * PLOT_W),
                y: format!("{:.1}", y0 + STRIP_ROW_H + 14.0),
                label: k.label.clone(),
            });
        }
        let at = |p: [f64; 2]| (p[0] * PLOT_W, y0 + p[1] * STRIP_ROW_H);
        polyline(&mut line, &row.line, at);
        for (marks, d) in [
            (&row.accepted, &mut accepted),
            (&row.rejected, &mut rejected),
            (&row.unsure, &mut unsure),
        ] {
            for p in marks {
                let (x, y) = at(*p);
                // A triangle pointing down onto the beat.
                d.push_str(&format!("M{:.1} {:.1}h7l-3.5 6z", x - 3.5, y - 9.0));
            }
        }
    }
    StripSvg {
        desc: tr.text_with(
            "ppg-desc",
            &[
                ("accepted", s.accepted_beats.to_string()),
                ("rejected", s.rejected_beats.to_string()),
            ],
        ),
        view_height: format!("{:.0}", top(s.rows.len().max(1) - 1) + STRIP_ROW_H + 34.0),
        has_accepted: !accepted.is_empty(),
        has_rejected: !rejected.is_empty(),
        has_unsure: !unsure.is_empty(),
        grid,
        frames,
        line,
        accepted,
        rejected,
        unsure,
        ticks,
    }
}

/// The measurement page's view of `findings`.
pub fn findings_view(visitor: &Visitor, findings: &Findings) -> FindingsView {
    let tr = &visitor.tr;
    let quality = findings.quality.as_ref();
    FindingsView {
        heart_rate: heart_rate_text(visitor, findings.heart_rate.map(|hr| hr as f64)),
        result_key: findings.result.key,
        result_colour: findings.result.colour,
        result: findings.result.label.clone(),
        labels: findings.labels.clone(),
        reasons: findings.reasons.join(" "),
        quality: quality.map(|q| (q.label.clone(), q.key, q.score.clone())),
        accepted_beats: quality.map_or_else(|| "–".into(), |q| q.accepted_beats.to_string()),
        rejected_beats: quality.map_or_else(|| "–".into(), |q| q.rejected_beats.to_string()),
        hrv: findings
            .hrv
            .iter()
            .map(|r| HrvLine {
                name: r.name,
                meaning: r.meaning.clone(),
                value: format!("{} {}", r.value, r.unit),
            })
            .collect(),
        tachogram: findings.tachogram.as_ref().map(|t| tachogram_svg(tr, t)),
        strip: findings
            .strip
            .as_ref()
            .filter(|s| !s.rows.is_empty())
            .map(|s| strip_svg(tr, s)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::{Context, Recording, Trace, analyse};
    use crate::domain::account::Language;

    /// The findings of an RR-only upload of `n` intervals with a pulse strip of 30 minutes.
    fn findings(n: usize) -> Findings {
        let rr: Vec<f64> = (0..n)
            .map(|i| 800.0 + ((i * 7919) % 41) as f64 - 20.0)
            .collect();
        let analysis = analyse(&Recording::RrIntervals(rr), Context::default());
        // A strip as long as the strip can get (60 rows), at a rate no camera reaches.
        let trace = Trace {
            start_ms: 0.0,
            step_ms: 2.0,
            values: (0..900_000).map(|i| (i as f64 / 20.0).sin()).collect(),
        };
        Findings::from_analysis(&Translator::new(Language::En), &analysis, Some(&trace))
    }

    #[test]
    fn the_charts_paths_stay_bounded_whatever_the_series() {
        let tr = Translator::new(Language::En);
        let small = findings(71);
        let t = tachogram_svg(&tr, small.tachogram.as_ref().unwrap());
        assert!(t.has_points, "71 intervals each get their marker");
        assert_eq!(t.points.matches('M').count(), 71);

        let large = findings(200_000);
        let t = tachogram_svg(&tr, large.tachogram.as_ref().unwrap());
        assert!(
            !t.has_points && t.points.is_empty(),
            "too dense for markers"
        );
        // At most four points per column of the 661 of the tachogram, ~12 bytes each.
        let segments = t.line.matches(['M', 'L']).count();
        assert!(segments <= 661 * 4, "{segments} segments");
        assert!(t.line.len() < 40_000, "{} bytes", t.line.len());
        assert!(
            t.desc.contains("200000"),
            "the description counts every interval"
        );

        let s = strip_svg(&tr, large.strip.as_ref().unwrap());
        let rows = large.strip.as_ref().unwrap().rows.len();
        assert_eq!(rows, 60);
        let segments = s.line.matches(['M', 'L']).count();
        assert!(segments <= rows * 841 * 4, "{segments} segments");
    }
}
