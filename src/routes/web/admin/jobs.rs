//! The administrators' view of the scheduler: the periodic reports to come, a way to have the
//! due ones made now, and the job queue (counts by status, and the jobs, failed ones with
//! their error), a page at a time.

use actix_web::HttpResponse;
use actix_web::web::Query;
use askama::Template;
use chrono_tz::Tz;
use serde::Deserialize;

use crate::domain::account::TimeZone;
use crate::domain::id::Id;
use crate::domain::periods::next_period;
use crate::domain::person_name::full_name;
use crate::reports::common::translated_or_raw;
use crate::routes::web::chrome::{Chrome, html};
use crate::routes::web::context::{CsrfForm, Member};
use crate::routes::web::error::WebError;
use crate::routes::web::patients::PageQuery;
use crate::routes::web::view::{PAGE_SIZE, Pager};
use crate::store::EnlistmentSummary;
use crate::store::entities::job::JobStatus;

/// Prescriptions with reports to come shown on the scheduler page itself; the rest are a link
/// away.
const UPCOMING_ON_QUEUE_PAGE: u64 = 5;

/// A job as administrators see it.
pub struct JobRow {
    pub kind: String,
    pub status: String,
    pub attempts: String,
    pub run_after: String,
    pub updated: String,
    pub error: String,
}

/// A prescription's next periodic report, as administrators see it.
pub struct UpcomingRow {
    pub patient_id: Id,
    pub patient: String,
    pub group: String,
    /// The prescription's days, first to last.
    pub prescription: String,
    /// "Weekly report", "Monthly report" or "End of prescription".
    pub report: String,
    /// When its period ends and the report is made.
    pub due: String,
    /// Its period has ended: the next tick, or "make the due reports now", makes it.
    pub due_now: bool,
}

#[derive(Template)]
#[template(path = "web/admin_jobs.html")]
struct JobsPage {
    c: Chrome,
    notice: Option<String>,
    upcoming: Vec<UpcomingRow>,
    upcoming_total: u64,
    counts: Vec<(String, i64)>,
    rows: Vec<JobRow>,
    pager: Pager,
    status: String,
}

#[derive(Template)]
#[template(path = "web/admin_upcoming.html")]
struct UpcomingPage {
    c: Chrome,
    upcoming: Vec<UpcomingRow>,
    pager: Pager,
}

/// Which jobs to list.
#[derive(Debug, Default, Deserialize)]
pub struct JobQuery {
    pub status: Option<String>,
    pub page: Option<u64>,
}

/// The scheduler: the reports to come first, then the queue (failed jobs with their error).
pub async fn jobs(member: Member, query: Query<JobQuery>) -> Result<HttpResponse, WebError> {
    let status = query.status.as_deref().and_then(JobStatus::parse);
    jobs_page(&member, status, query.page.unwrap_or(0), None).await
}

async fn jobs_page(
    member: &Member,
    status: Option<JobStatus>,
    page: u64,
    notice: Option<String>,
) -> Result<HttpResponse, WebError> {
    let viewer = member.viewer();
    let page = page.min(10_000);
    let store = &member.state.store;
    let (upcoming, upcoming_total) = store
        .upcoming_reports(&viewer, 0, UPCOMING_ON_QUEUE_PAGE)
        .await?;
    let (jobs, total) = store
        .jobs_page(&viewer, status, page * PAGE_SIZE, PAGE_SIZE)
        .await?;
    let rows = jobs
        .iter()
        .map(|j| JobRow {
            kind: j.kind.as_str().to_owned(),
            status: j.status.as_str().to_owned(),
            attempts: format!("{}/{}", j.attempts, j.max_attempts),
            run_after: member.datetime(j.run_after),
            updated: member.datetime(j.update_timestamp),
            error: j.last_error.clone().unwrap_or_default(),
        })
        .collect();
    html(&JobsPage {
        c: Chrome::new(member, "admin", "admin-jobs-title"),
        notice,
        upcoming: upcoming_rows(member, upcoming),
        upcoming_total,
        counts: store
            .job_counts(&viewer)
            .await?
            .into_iter()
            .map(|(status, n)| (status.as_str().to_owned(), n))
            .collect(),
        rows,
        pager: Pager::new(
            page,
            total,
            &status
                .map(|s| format!("status={}", s.as_str()))
                .unwrap_or_default(),
        ),
        status: status.map(JobStatus::as_str).unwrap_or("").to_owned(),
    })
}

/// Every prescription with reports to come, a page at a time, those scheduled least far
/// first.
pub async fn upcoming(member: Member, query: Query<PageQuery>) -> Result<HttpResponse, WebError> {
    let page = query.page.unwrap_or(0).min(10_000);
    let (rows, total) = member
        .state
        .store
        .upcoming_reports(&member.viewer(), page * PAGE_SIZE, PAGE_SIZE)
        .await?;
    html(&UpcomingPage {
        c: Chrome::new(&member, "admin", "admin-upcoming-title"),
        upcoming: upcoming_rows(&member, rows),
        pager: Pager::new(page, total, ""),
    })
}

/// Has every due periodic report enqueued now, then shows the scheduler saying how many.
pub async fn make_due(
    member: Member,
    CsrfForm(_): CsrfForm<Vec<(String, String)>>,
) -> Result<HttpResponse, WebError> {
    let made = member
        .state
        .actions
        .make_due_reports(&member.viewer())
        .await?;
    let notice = if made == 0 {
        member.tr.text("admin-due-none")
    } else {
        member
            .tr
            .text_with_count("admin-due-queued", "count", made as i64)
    };
    jobs_page(&member, None, 0, Some(notice)).await
}

fn upcoming_rows(member: &Member, prescriptions: Vec<EnlistmentSummary>) -> Vec<UpcomingRow> {
    let now = member.state.store.clock().now_millis();
    prescriptions
        .into_iter()
        .filter_map(|p| {
            let e = &p.enlistment;
            let patient = p.patient.as_ref()?;
            // The zone as the scheduler reads it, so the day shown is the day it makes the report.
            let zone: Tz = TimeZone::parse(&patient.time_zone)
                .map(|z| z.0)
                .unwrap_or(Tz::UTC);
            let next = next_period(
                e.creation_timestamp,
                e.expiry_timestamp,
                e.scheduled_until,
                zone,
            )?;
            Some(UpcomingRow {
                patient_id: patient.id,
                patient: full_name(&patient.first_name, &patient.last_name),
                group: p.group_name.clone(),
                prescription: member.tr.text_with(
                    "period-range",
                    &[
                        ("start", member.date(e.creation_timestamp)),
                        ("end", member.last_day(e.expiry_timestamp)),
                    ],
                ),
                report: translated_or_raw(&member.tr, "trigger", next.trigger.as_str()),
                due: member.datetime(next.end),
                due_now: next.end <= now,
            })
        })
        .collect()
}
