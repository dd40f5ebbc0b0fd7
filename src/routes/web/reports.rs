//! Periodic reports: a patient's list (newest first, paged) with PDF links, the PDF itself in
//! the reader's language and the patient's zone, and "make a periodic report now" for
//! administrators and the physicians of the patient's groups.

use actix_web::web::{Path, Query};
use actix_web::{HttpRequest, HttpResponse};
use askama::Template;
use serde::Deserialize;

use super::chrome::{Chrome, html, see_other};
use super::context::{CsrfForm, Member, Visitor};
use super::error::WebError;
use super::measurements::Choice;
use super::patients::PageQuery;
use super::view::{self, PAGE_SIZE, Pager};
use crate::domain::account::Language;
use crate::domain::id::Id;
use crate::domain::periods::{ChosenPeriod, check_manual_period};
use crate::domain::rql::{Expr, Query as ListQuery};
use crate::domain::time::{end_of_day, parse_day, start_of_day};
use crate::reports::common::translated_or_raw;
use crate::store::Viewer;
use crate::store::entities::report;
use crate::store::resources::REPORTS;

/// A periodic report in a list.
pub struct ReportRow {
    pub id: Id,
    pub trigger: String,
    pub period: String,
    /// How many measurements it lists, or that it cannot be read.
    pub measurements: String,
    pub created: String,
}

pub(super) fn report_row(visitor: &Visitor, report: &report::Model) -> ReportRow {
    // A stored report that cannot be read says so, rather than counting no measurements.
    let count = match crate::reports::periodic::items(report) {
        Ok(items) => items.len().to_string(),
        Err(err) => {
            tracing::error!(error = %err, "a stored periodic report cannot be read");
            visitor.tr.text("report-unreadable")
        }
    };
    ReportRow {
        id: report.id,
        trigger: translated_or_raw(&visitor.tr, "trigger", &report.trigger.to_string()),
        period: visitor.tr.text_with(
            "period-range",
            &[
                ("start", visitor.date(report.period_start_timestamp)),
                // The end is exclusive: the last day shown is the one before it.
                ("end", visitor.last_day(report.period_end_timestamp)),
            ],
        ),
        measurements: count,
        created: visitor.datetime(report.creation_timestamp),
    }
}

/// A page of `patient_id`'s periodic reports as `viewer` may see them, newest first.
pub async fn report_list(
    visitor: &Visitor,
    viewer: &Viewer,
    patient_id: &Id,
    page: u64,
    base: &str,
) -> Result<(Vec<ReportRow>, Pager), WebError> {
    let query = ListQuery::default()
        .and(Expr::eq("user_id", &patient_id.to_string()))
        .sort_by("creation_timestamp", true)
        .page(PAGE_SIZE, page * PAGE_SIZE);
    let spec = view::list_spec(&REPORTS, &query)?;
    let (reports, total) = visitor.state.actions.list_reports(viewer, &spec).await?;
    Ok((
        reports.iter().map(|r| report_row(visitor, r)).collect(),
        Pager::new(page, total.unwrap_or(0), base),
    ))
}

#[derive(Template)]
#[template(path = "web/reports.html")]
struct ReportsPage {
    c: Chrome,
    rows: Vec<ReportRow>,
    pager: Pager,
}

/// The member's own periodic reports.
pub async fn list(member: Member, query: Query<PageQuery>) -> Result<HttpResponse, WebError> {
    let page = query.page.unwrap_or(0).min(10_000);
    let (rows, pager) = report_list(&member, &member.viewer(), member.id(), page, "").await?;
    html(&ReportsPage {
        c: Chrome::new(&member, "reports", "reports-title"),
        rows,
        pager,
    })
}

/// The PDF of a periodic report: in the reader's language, in the patient's time zone (the
/// days of the report are the patient's days).
pub async fn pdf(
    member: Member,
    req: HttpRequest,
    id: Path<String>,
) -> Result<HttpResponse, WebError> {
    let id = Id::parse(&id)?;
    let state = &member.state;
    let language = Language::or_english(Some(&member.user().language));
    let pdf = state
        .actions
        .periodic_pdf(&member.viewer(), &id, Some(language), None)
        .await?;
    crate::routes::api::files::serve(state, &req, &pdf.file, crate::routes::api::files::NO_STORE)
        .await
        .map_err(|e| WebError::Internal(anyhow::anyhow!("serving a report PDF: {e}")))
}

/// The period of a report made on request: `week` (the default), `month` or `prescription`;
/// and the group it is for, where the reader sees the patient through several.
#[derive(Debug, Default, Deserialize)]
pub struct ReportForm {
    #[serde(default)]
    pub period: String,
    #[serde(default)]
    pub group: String,
    /// A period of the reader's choosing: its first and last day (`YYYY-MM-DD`, in the
    /// reader's zone), which win over `period` when given.
    #[serde(default)]
    pub from: String,
    #[serde(default)]
    pub to: String,
}

/// `[start, end)` from the first to the last day, `from` and `to`, in `zone`: at most a year
/// ([`crate::domain::periods::MAX_MANUAL_DAYS`]), and not past `now` (a report covers what was
/// measured); refused, the key of the message saying why.
fn days_between(
    from: &str,
    to: &str,
    zone: chrono_tz::Tz,
    now: i64,
) -> Result<(i64, i64), &'static str> {
    let start = parse_day(from).and_then(|day| start_of_day(day, zone));
    let end = parse_day(to).and_then(|day| end_of_day(day, zone));
    let (Some(start), Some(end)) = (start, end) else {
        return Err("error-period-days");
    };
    let end = end.min(now);
    if end <= start {
        return Err("error-period-days");
    }
    check_manual_period(start, end).map_err(|_| "error-period-too-long")?;
    Ok((start, end))
}

/// The groups through which the reader sees `patient` (one of which a report it makes is
/// for), named, with `chosen` (else the first) selected; empty for the patient itself.
pub async fn group_choices(
    member: &Member,
    viewer: &Viewer,
    patient: &Id,
    chosen: Option<Id>,
) -> Result<Vec<Choice>, WebError> {
    if viewer.may_report_on(patient).is_err() {
        return Ok(Vec::new());
    }
    let store = &member.state.store;
    let groups = store.report_groups(viewer, patient).await?;
    let names = store.group_names(&groups).await?;
    let chosen = chosen
        .filter(|g| groups.contains(g))
        .or(groups.first().copied());
    let mut choices: Vec<Choice> = groups
        .iter()
        .map(|g| Choice {
            value: g.to_string(),
            label: names.get(g).cloned().unwrap_or_else(|| g.to_string()),
            selected: Some(*g) == chosen,
        })
        .collect();
    choices.sort_by(|a, b| a.label.cmp(&b.label));
    Ok(choices)
}

/// The group a form or address names (`group`), if any.
pub fn named_group(group: &str) -> Result<Option<Id>, WebError> {
    match group.trim() {
        "" => Ok(None),
        group => Ok(Some(Id::parse(group)?)),
    }
}

/// Makes a manual periodic report of a chosen period (by default the last 7 days) for a
/// patient (administrators, and the physicians of the patient's groups: whoever sees the
/// patient, except the patient).
pub async fn create(
    member: Member,
    id: Path<String>,
    CsrfForm(form): CsrfForm<ReportForm>,
) -> Result<HttpResponse, WebError> {
    let id = Id::parse(&id)?;
    let viewer = member.viewer();
    let store = &member.state.store;
    let patient = store.visible_user(&viewer, &id).await?;
    let chosen = match form.period.as_str() {
        "" => ChosenPeriod::Week,
        other => ChosenPeriod::parse(other).ok_or(WebError::BadRequest("error-period-invalid"))?,
    };
    let now = store.clock().now_millis();
    let (start, end) = if form.from.trim().is_empty() && form.to.trim().is_empty() {
        let prescription = super::trends::prescription_period(store, &patient, now).await?;
        chosen
            .bounds(now, prescription)
            .ok_or(WebError::BadRequest("error-period-invalid"))?
    } else {
        match days_between(&form.from, &form.to, member.zone, now) {
            Ok(days) => days,
            Err(key) => {
                // The patient's page again, the days as typed and the reason beside them.
                let draft = super::patients::ReportDraft {
                    from: form.from.clone(),
                    to: form.to.clone(),
                    error: Some(member.tr.text(key)),
                };
                let filters = super::measurements::Filters::default();
                return super::patients::patient_page(&member, &id, &filters, draft).await;
            }
        }
    };
    member
        .state
        .actions
        .create_manual_report(
            &viewer,
            &id,
            named_group(&form.group)?,
            Some(start),
            Some(end),
        )
        .await?;
    Ok(see_other(&format!("/portal/patients/{id}#reports")))
}
