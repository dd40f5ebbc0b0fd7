//! View models shared by several pages: measurement rows and details, the SVG chart, pages of
//! a list, and the RQL the portal's lists are built from (the same whitelist and visibility
//! path as the JSON API).

use serde_json::{Map, Value};

use super::context::Visitor;
use super::error::WebError;
use crate::domain::measurement::Status;
use crate::domain::rql;
use crate::store::entities::measurement;
use crate::store::query::ListSpec;
use crate::store::query::Resource;

/// Rows per page of every portal list.
pub const PAGE_SIZE: u64 = 20;

/// Result classes the portal offers as a filter (the measurement's `indicator`).
pub const RESULTS: [&str; 6] = [
    "normal",
    "irregular",
    "tachycardia",
    "bradycardia",
    "poor_signal",
    "unknown",
];

/// A list query written as RQL and translated for `resource`, exactly as the API would.
pub fn list_spec(resource: &Resource, rql_text: &str) -> Result<ListSpec, WebError> {
    let query = rql::parse(rql_text).map_err(|_| WebError::BadRequest("error-bad-filter"))?;
    resource
        .translate(&query)
        .map_err(|_| WebError::BadRequest("error-bad-filter"))
}

/// Paging links of a list.
pub struct Pager {
    pub page: u64,
    pub pages: u64,
    pub total: u64,
    /// Query string of the previous and next page (filters kept), if any.
    pub previous: Option<String>,
    pub next: Option<String>,
}

impl Pager {
    /// The pager of `page` (0-based) of `total` items; `base` is the query string without
    /// the page parameter.
    pub fn new(page: u64, total: u64, base: &str) -> Self {
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
            previous: (page > 0).then(|| link(page - 1)),
            next: (page + 1 < pages).then(|| link(page + 1)),
        }
    }
}

/// A measurement in a list.
pub struct MeasurementRow {
    pub id: String,
    pub when: String,
    pub heart_rate: String,
    pub result_key: String,
    pub result: String,
    pub status: String,
}

/// The translated result class of a measurement.
pub fn result_of(visitor: &Visitor, m: &measurement::Header) -> (String, String) {
    let key = m
        .indicator
        .as_deref()
        .filter(|i| RESULTS.contains(i))
        .unwrap_or("unknown");
    let label = match m.indicator.as_deref() {
        Some(raw) if key == "unknown" => raw.to_owned(),
        _ => visitor.tr.text(&format!("indicator-{key}")),
    };
    (key.to_owned(), label)
}

/// The translated status of a measurement.
pub fn status_of(visitor: &Visitor, m: &measurement::Header) -> String {
    visitor
        .tr
        .try_text(&format!("status-{}", m.status))
        .unwrap_or_else(|| m.status.clone())
}

/// A list row for `m`.
pub fn measurement_row(visitor: &Visitor, m: &measurement::Header) -> MeasurementRow {
    let (result_key, result) = result_of(visitor, m);
    MeasurementRow {
        id: m.id.clone(),
        when: visitor.datetime(m.measurement_timestamp.unwrap_or(m.creation_timestamp)),
        heart_rate: m
            .heartrate
            .map(|hr| format!("{} {}", hr.round() as i64, visitor.tr.text("bpm")))
            .unwrap_or_else(|| "–".into()),
        result_key,
        result,
        status: status_of(visitor, m),
    }
}

/// Whether a measurement has results (so a report can be made).
pub fn has_results(m: &measurement::Model) -> bool {
    Status::parse(&m.status).is_some_and(Status::has_results)
}

/// An SVG line chart: the polyline's points in a 600 × 200 box, with axis labels.
pub struct Chart {
    pub title: String,
    pub caption: String,
    pub points: String,
    pub x_label: String,
    pub y_label: String,
    pub y_min: String,
    pub y_max: String,
    pub x_max: String,
}

const WIDTH: f64 = 600.0;
const HEIGHT: f64 = 200.0;
/// More points than pixels only slow the browser down.
const MAX_POINTS: usize = 600;

fn polyline(points: &[(f64, f64)], x_max: f64, y_min: f64, y_max: f64) -> String {
    let step = points.len().div_ceil(MAX_POINTS).max(1);
    let span = (y_max - y_min).max(f64::EPSILON);
    points
        .iter()
        .step_by(step)
        .map(|(x, y)| {
            format!(
                "{:.1},{:.1}",
                x / x_max * WIDTH,
                HEIGHT - (y - y_min) / span * HEIGHT
            )
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn numbers(value: Option<&Value>) -> Vec<f64> {
    value
        .and_then(Value::as_array)
        .map(|items| items.iter().filter_map(Value::as_f64).collect())
        .unwrap_or_default()
}

/// The tachogram (RR intervals over time) when the payload has them, else the camera's
/// pulse signal (mean of the four central cells, inverted so beats point up), else nothing.
pub fn chart(visitor: &Visitor, data: &Map<String, Value>) -> Option<Chart> {
    let tr = &visitor.tr;
    let rr = numbers(data.get("rr_intervals"));
    if rr.len() >= 2 {
        let mut elapsed = 0.0;
        let points: Vec<(f64, f64)> = rr
            .iter()
            .map(|interval| {
                elapsed += interval / 1000.0;
                (elapsed, *interval)
            })
            .collect();
        let low = rr.iter().cloned().fold(f64::INFINITY, f64::min);
        let high = rr.iter().cloned().fold(0.0, f64::max);
        let (y_min, y_max) = (
            ((low - 100.0) / 100.0).floor().max(0.0) * 100.0,
            ((high + 100.0) / 100.0).ceil() * 100.0,
        );
        let x_max = elapsed.max(60.0).ceil();
        return Some(Chart {
            title: tr.text("tachogram"),
            caption: tr.text("tachogram-caption"),
            points: polyline(&points, x_max, y_min, y_max),
            x_label: tr.text("axis-time-s"),
            y_label: tr.text("axis-rr-ms"),
            y_min: format!("{y_min:.0}"),
            y_max: format!("{y_max:.0}"),
            x_max: format!("{x_max:.0}"),
        });
    }
    let times = numbers(data.get("time"));
    let rows = data.get("quadrants")?.as_array()?;
    let mut traces = Vec::new();
    for (r, c) in [(1, 1), (1, 2), (2, 1), (2, 2)] {
        traces.push(numbers(rows.get(r)?.as_array()?.get(c)?.get("y")));
    }
    let n = traces.iter().map(Vec::len).min()?.min(times.len());
    if n < 2 {
        return None;
    }
    let points: Vec<(f64, f64)> = (0..n)
        .map(|i| {
            (
                times[i] / 1000.0,
                255.0 - traces.iter().map(|t| t[i]).sum::<f64>() / 4.0,
            )
        })
        .collect();
    let low = points.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
    let high = points.iter().map(|p| p.1).fold(f64::NEG_INFINITY, f64::max);
    let margin = ((high - low) * 0.1).max(0.5);
    let x_max = (times[n - 1] / 1000.0).max(60.0).ceil();
    Some(Chart {
        title: tr.text("ppg-signal"),
        caption: tr.text("ppg-caption"),
        points: polyline(&points, x_max, low - margin, high + margin),
        x_label: tr.text("axis-time-s"),
        y_label: String::new(),
        y_min: String::new(),
        y_max: String::new(),
        x_max: format!("{x_max:.0}"),
    })
}
