//! Trends: a patient's heart rate and results over a chosen period (the last 7 or 30 days, or
//! the prescription). The page is built by the periodic report's own code
//! (`reports::periodic::build`) over the items a report of that period would list, of the
//! measurements the reader may see (`Store::trend`), so the page and the PDF cannot disagree.
//! The chart's dots say what they are when tapped; the same measurements are in a table.

use actix_web::HttpResponse;
use actix_web::web::{Path, Query};
use askama::Template;
use chrono_tz::Tz;
use serde::Deserialize;

use super::chrome::{Chrome, html};
use super::context::Member;
use super::error::WebError;
use super::measurements::Choice;
use super::view::{PLOT_W, SvgTick};
use crate::domain::id::Id;
use crate::domain::periods::ChosenPeriod;
use crate::domain::person_name::full_name;
use crate::domain::time::local_time;
use crate::reports::format;
use crate::reports::periodic::{self, Chart, PeriodicReportInput, Summary, TableRow};
use crate::store::Reader;
use crate::store::entities::{patient_enlistment, user};

/// The chart's height in SVG units.
const CHART_H: f64 = 160.0;

/// The period asked for (`week`, `month`, `prescription`); the last 7 days by default. Staff
/// who see the patient through several groups pick the group (whose report the page shows).
#[derive(Debug, Default, Deserialize)]
pub struct TrendQuery {
    pub period: Option<String>,
    pub group: Option<String>,
}

/// A dot of the chart, in SVG units, with what it says when tapped.
pub struct TrendDot {
    pub x: String,
    pub y: String,
    pub fill: &'static str,
    pub label: String,
}

/// The heart-rate chart as inline SVG in a [`PLOT_W`] × [`CHART_H`] plot.
pub struct TrendChart {
    pub desc: String,
    pub grid: String,
    pub line: String,
    pub dots: Vec<TrendDot>,
    pub x_ticks: Vec<SvgTick>,
    pub y_ticks: Vec<SvgTick>,
}

#[derive(Template)]
#[template(path = "web/trends.html")]
struct TrendPage {
    c: Chrome,
    /// The patient, when the reader is someone else.
    patient: Option<(Id, String)>,
    action: String,
    periods: Vec<Choice>,
    period: &'static str,
    range: String,
    summary: Summary,
    chart: Option<TrendChart>,
    /// What each colour of the chart's dots means: the colour's name and its words.
    legend: Vec<(&'static str, String)>,
    rows: Vec<TableRow>,
    can_make_report: bool,
    /// The groups the reader sees the patient through, where there are several.
    groups: Vec<Choice>,
    /// The group shown, as the report form sends it.
    group: String,
}

/// The member's own trends.
pub async fn own(member: Member, query: Query<TrendQuery>) -> Result<HttpResponse, WebError> {
    let id = *member.id();
    page(&member, &id, &query).await
}

/// A patient's trends, for whoever sees the patient.
pub async fn of_patient(
    member: Member,
    id: Path<String>,
    query: Query<TrendQuery>,
) -> Result<HttpResponse, WebError> {
    let id = Id::parse(&id)?;
    page(&member, &id, &query).await
}

async fn page(member: &Member, id: &Id, query: &TrendQuery) -> Result<HttpResponse, WebError> {
    let viewer = member.viewer();
    let store = &member.state.store;
    // The read is recorded, and refused (404) for a patient the reader does not see.
    let patient = member.state.actions.view_user(&viewer, id).await?;
    let now = store.clock().now_millis();
    let prescription = prescription_period(store, &patient, now).await?;
    let offered: Vec<ChosenPeriod> = ChosenPeriod::ALL
        .into_iter()
        .filter(|p| p.bounds(now, prescription).is_some())
        .collect();
    let chosen = query
        .period
        .as_deref()
        .and_then(ChosenPeriod::parse)
        .filter(|p| offered.contains(p))
        .unwrap_or(ChosenPeriod::Week);
    let (start, end) = chosen
        .bounds(now, prescription)
        .ok_or(WebError::BadRequest("error-period-invalid"))?;
    let named = super::reports::named_group(query.group.as_deref().unwrap_or_default())?;
    let groups = super::reports::group_choices(member, &viewer, id, named).await?;
    let group = groups
        .iter()
        .find(|g| g.selected)
        .map(|g| Id::parse(&g.value))
        .transpose()?;
    let report = store.trend(&viewer, id, group, start, end).await?;
    let built = periodic::build(&PeriodicReportInput {
        report: &report,
        patient: &patient,
        profile: None,
        language: member.tr.language(),
        time_zone: member.zone,
    })
    .map_err(|e| WebError::Internal(e.into()))?
    .data;
    // The PDF sums a long period up per day; the page lists every measurement.
    let rows = periodic::every_row(member.tr.language(), member.zone, &report)
        .map_err(|e| WebError::Internal(e.into()))?;
    let own = patient.id == *member.id();
    let name = full_name(&patient.first_name, &patient.last_name);
    let chart = (!built.chart.points.is_empty())
        .then(|| chart_svg(member, &built.chart, &built.summary, start, end));
    let c = Chrome::new(
        member,
        if own { "trends" } else { "patients" },
        "trends-title",
    );
    let c = if own { c } else { c.about(name.clone()) };
    html(&TrendPage {
        patient: (!own).then_some((patient.id, name)),
        action: if own {
            "/portal/trends".to_owned()
        } else {
            format!("/portal/patients/{id}/trends")
        },
        periods: period_choices(&member.tr, &offered, chosen),
        period: chosen.as_str(),
        range: built.period.range,
        summary: built.summary,
        chart,
        legend: ["green", "orange", "red", "grey"]
            .into_iter()
            .map(|colour| (colour, member.tr.text(&format!("legend-{colour}"))))
            .collect(),
        rows,
        can_make_report: viewer.may_report_on(id).is_ok(),
        group: group.map(|g| g.to_string()).unwrap_or_default(),
        groups,
        c,
    })
}

/// The period of `patient`'s prescription at `now`, for [`ChosenPeriod::bounds`]: the
/// running ones' earliest start to their latest end, or else the last one that ended.
pub async fn prescription_period(
    store: &Reader,
    patient: &user::Model,
    now: i64,
) -> Result<Option<(i64, i64)>, WebError> {
    let record = store.user_record(patient.clone()).await?;
    Ok(prescription_of(&record.patient_enlistments, now))
}

fn prescription_of(enlistments: &[patient_enlistment::Model], now: i64) -> Option<(i64, i64)> {
    let running: Vec<_> = enlistments
        .iter()
        .filter(|e| e.expiry_timestamp > now)
        .collect();
    if running.is_empty() {
        return enlistments
            .iter()
            .max_by_key(|e| e.expiry_timestamp)
            .map(|e| (e.creation_timestamp, e.expiry_timestamp));
    }
    let start = running.iter().map(|e| e.creation_timestamp).min()?;
    let end = running.iter().map(|e| e.expiry_timestamp).max()?;
    Some((start, end))
}

fn chart_svg(
    member: &Member,
    chart: &Chart,
    summary: &Summary,
    start: i64,
    end: i64,
) -> TrendChart {
    let tr = &member.tr;
    let language = tr.language();
    let (low, high) = (chart.y_min, chart.y_max.max(chart.y_min + 1.0));
    let y_of = |rate: f64| CHART_H * (1.0 - ((rate - low) / (high - low)).clamp(0.0, 1.0));
    let step = if high - low > 80.0 { 20.0 } else { 10.0 };
    let mut grid = String::new();
    let mut y_ticks = Vec::new();
    let mut rate = (low / step).ceil() * step;
    while rate <= high {
        let y = y_of(rate);
        grid.push_str(&format!("M0 {y:.1}H{PLOT_W}"));
        y_ticks.push(SvgTick {
            x: "-8".into(),
            y: format!("{:.1}", y + 4.0),
            label: format::decimal(language, rate, 0),
        });
        rate += step;
    }
    let x_ticks = chart
        .ticks
        .iter()
        .map(|tick| {
            let x = tick.0 * PLOT_W;
            grid.push_str(&format!("M{x:.1} 0V{CHART_H}"));
            SvgTick {
                x: format!("{x:.1}"),
                y: format!("{:.1}", CHART_H + 16.0),
                label: tick.1.clone(),
            }
        })
        .collect();
    let mut line = String::new();
    for (i, p) in chart.points.iter().enumerate() {
        let command = if i == 0 { 'M' } else { 'L' };
        line.push_str(&format!("{command}{:.1} {:.1}", p.0 * PLOT_W, y_of(p.1)));
    }
    let dots = chart
        .points
        .iter()
        .map(|p| TrendDot {
            x: format!("{:.1}", p.0 * PLOT_W),
            y: format!("{:.1}", y_of(p.1)),
            fill: p.2,
            label: tr.text_with(
                "trends-dot",
                &[
                    ("when", when(member.zone, language, p.4)),
                    ("rate", format::decimal(language, p.1, 0)),
                    ("result", tr.text(&format!("result-{}", p.3))),
                ],
            ),
        })
        .collect();
    let (min, max) = summary
        .heart_rate
        .as_ref()
        .map_or((0, 0), |hr| (hr.min, hr.max));
    TrendChart {
        desc: tr.text_with(
            "trends-chart-desc",
            &[
                ("count", summary.count.to_string()),
                ("start", when(member.zone, language, start)),
                ("end", when(member.zone, language, end)),
                ("min", min.to_string()),
                ("max", max.to_string()),
            ],
        ),
        grid,
        line,
        dots,
        x_ticks,
        y_ticks,
    }
}

/// A date and time in `zone`, as lists write it.
fn when(zone: Tz, language: crate::domain::account::Language, millis: i64) -> String {
    local_time(zone, millis)
        .map(|at| {
            format!(
                "{} {}",
                format::short_date(language, at.date_naive()),
                format::time(at)
            )
        })
        .unwrap_or_default()
}

/// The periods `offered`, named in the reader's language, with `chosen` selected: the trends'
/// choice and the report form's.
pub fn period_choices(
    tr: &crate::i18n::Translator,
    offered: &[ChosenPeriod],
    chosen: ChosenPeriod,
) -> Vec<Choice> {
    offered
        .iter()
        .map(|p| Choice {
            value: p.as_str().to_owned(),
            label: tr.text(&format!("period-{}", p.as_str())),
            selected: *p == chosen,
        })
        .collect()
}
