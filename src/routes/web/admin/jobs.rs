//! The administrators' view of the scheduler's job queue: counts by status, and the jobs
//! (failed ones with their error), a page at a time.

use actix_web::HttpResponse;
use actix_web::web::Query;
use askama::Template;
use serde::Deserialize;

use crate::routes::web::chrome::{Chrome, html};
use crate::routes::web::context::Member;
use crate::routes::web::error::WebError;
use crate::routes::web::view::{PAGE_SIZE, Pager};
use crate::store::entities::job::JobStatus;

/// A job as administrators see it.
pub struct JobRow {
    pub kind: String,
    pub status: String,
    pub attempts: String,
    pub run_after: String,
    pub updated: String,
    pub error: String,
}

#[derive(Template)]
#[template(path = "web/admin_jobs.html")]
struct JobsPage {
    c: Chrome,
    counts: Vec<(String, i64)>,
    rows: Vec<JobRow>,
    pager: Pager,
    status: String,
}

/// Which jobs to list.
#[derive(Debug, Default, Deserialize)]
pub struct JobQuery {
    pub status: Option<String>,
    pub page: Option<u64>,
}

/// The scheduler's queue: counts by status, and the jobs (failed ones with their error).
pub async fn jobs(member: Member, query: Query<JobQuery>) -> Result<HttpResponse, WebError> {
    let viewer = member.viewer();
    let status = query.status.as_deref().and_then(JobStatus::parse);
    let page = query.page.unwrap_or(0).min(10_000);
    let store = &member.state.store;
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
        c: Chrome::new(&member, "admin", "admin-jobs-title"),
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
