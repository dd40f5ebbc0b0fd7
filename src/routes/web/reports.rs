//! Periodic reports: a patient's list (newest first, paged) with PDF links, the PDF itself in
//! the reader's language and the patient's zone, and "make a periodic report now" for
//! administrators and the physicians of the patient's groups.

use actix_web::web::{Path, Query};
use actix_web::{HttpRequest, HttpResponse};
use askama::Template;
use chrono_tz::Tz;
use serde_json::Value;

use super::chrome::{Chrome, html, see_other};
use super::context::{CsrfForm, Member, Visitor};
use super::error::WebError;
use super::patients::PageQuery;
use super::view::{self, PAGE_SIZE, Pager};
use crate::domain::account::{Language, TimeZone};
use crate::domain::id::Id;
use crate::domain::periods::{Trigger, manual_period};
use crate::routes::api::resources::REPORTS;
use crate::store::entities::report;
use crate::store::{AuditEntry, NewReport, Viewer};

/// A periodic report in a list.
pub struct ReportRow {
    pub id: String,
    pub trigger: String,
    pub period: String,
    pub measurements: usize,
    pub created: String,
}

fn report_row(visitor: &Visitor, report: &report::Model) -> ReportRow {
    let count = serde_json::from_str::<Value>(&report.data)
        .ok()
        .and_then(|d| {
            d.get("measurements")
                .and_then(Value::as_array)
                .map(Vec::len)
        })
        .unwrap_or(0);
    ReportRow {
        id: report.id.clone(),
        trigger: visitor
            .tr
            .try_text(&format!("trigger-{}", report.trigger))
            .unwrap_or_else(|| report.trigger.clone()),
        period: visitor.tr.text_with(
            "period-range",
            &[
                ("start", visitor.date(report.period_start_timestamp)),
                // The end is exclusive: the last day shown is the one before it.
                ("end", visitor.date(report.period_end_timestamp - 1)),
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
    patient_id: &str,
    page: u64,
    base: &str,
) -> Result<(Vec<ReportRow>, Pager), WebError> {
    let spec = view::list_spec(
        &REPORTS,
        &format!(
            "eq(user_id,{patient_id})&sort(-creation_timestamp)&limit({PAGE_SIZE},{})",
            page * PAGE_SIZE
        ),
    )?;
    let (reports, total) = visitor.state.store.list_reports(viewer, &spec).await?;
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
    let id = Id::parse(&id)?.to_string();
    let state = member.state.clone();
    let report = state.store.visible_report(&member.viewer(), &id).await?;
    let patient = state
        .store
        .user_by_id(&report.user_id)
        .await?
        .ok_or(WebError::NotFound)?;
    let language = Language::or_english(Some(&member.user().language));
    let zone: Tz = TimeZone::parse(&patient.time_zone)
        .map(|z| z.0)
        .unwrap_or(Tz::UTC);
    let file = state
        .reports
        .periodic_report_pdf(member.id(), &report, &patient, language, zone)
        .await?;
    state
        .store
        .audit(AuditEntry {
            actor_id: member.id().to_owned(),
            action: "report.download",
            patient_id: Some(report.user_id.clone()),
            object_kind: "periodic-report",
            object_id: Some(report.id.clone()),
            detail: format!("portal, {}", language.code()),
        })
        .await?;
    crate::routes::api::files::serve(&state, &req, &file, "private, no-cache")
        .await
        .map_err(|e| WebError::Internal(anyhow::anyhow!("serving a report PDF: {e}")))
}

/// Makes a manual periodic report of the last 7 days for a patient (administrators, and the
/// physicians of the patient's groups: whoever sees the patient, except the patient).
pub async fn create(
    member: Member,
    id: Path<String>,
    CsrfForm(_): CsrfForm<Vec<(String, String)>>,
) -> Result<HttpResponse, WebError> {
    let id = Id::parse(&id)?.to_string();
    let store = member.state.store.clone();
    let patient = store.patient_to_report_on(&member.viewer(), &id).await?;
    let (start, end) = manual_period(None, None, store.clock().now_millis());
    let report = store
        .create_report(NewReport {
            user_id: patient.id.clone(),
            creator_id: Some(member.id().to_owned()),
            trigger: Trigger::Manual,
            dedupe_key: None,
            start,
            end,
        })
        .await?
        .ok_or_else(|| WebError::Internal(anyhow::anyhow!("a manual report was not stored")))?;
    store
        .audit(AuditEntry {
            actor_id: member.id().to_owned(),
            action: "report.create",
            patient_id: Some(patient.id.clone()),
            object_kind: "periodic-report",
            object_id: Some(report.id.clone()),
            detail: "manual, last 7 days".into(),
        })
        .await?;
    Ok(see_other(&format!(
        "/portal/patients/{}#reports",
        patient.id
    )))
}
