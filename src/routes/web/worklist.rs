//! A physician's work list: the measurements of their patients that no physician has reviewed
//! yet, urgent and most severe first, filtered by why they need a look and searched by the
//! patient's name or address. What appears is decided by the store's visibility rules, as on
//! every other page.

use actix_web::HttpResponse;
use actix_web::web::Query;
use askama::Template;
use serde::Deserialize;

use super::chrome::{Chrome, html};
use super::context::Member;
use super::error::WebError;
use super::measurements::Choice;
use super::view::{self, MeasurementRow, PAGE_SIZE, Pager};
use crate::domain::id::Id;
use crate::domain::person_name::full_name;
use crate::store::{PatientListing, WorkListing, WorkReason};

/// An entry of the list.
pub struct WorkRow {
    pub patient_id: Id,
    pub patient: String,
    pub measurement: MeasurementRow,
    /// Whether the server called the result urgent.
    pub urgent: bool,
}

#[derive(Template)]
#[template(path = "web/worklist.html")]
struct WorkListPage {
    c: Chrome,
    rows: Vec<WorkRow>,
    pager: Pager,
    reasons: Vec<Choice>,
    search: String,
    /// Whether a filter or a search left entries out.
    filtered: bool,
    /// Whether the physician cares for no patient at all (an empty list then says so, not
    /// that everything is reviewed).
    no_patients: bool,
}

/// The work list's query: a page, a reason (`urgent`, `requested`, `quality`) and a search.
#[derive(Debug, Default, Deserialize)]
pub struct WorkListQuery {
    pub page: Option<u64>,
    pub reason: Option<String>,
    pub q: Option<String>,
}

/// The work list of the member's patients; values that mean nothing are ignored.
pub async fn show(member: Member, query: Query<WorkListQuery>) -> Result<HttpResponse, WebError> {
    member
        .state
        .store
        .may_list_patients(&member.viewer())
        .await?;
    let page = query.page.unwrap_or(0).min(10_000);
    let reason = query.reason.as_deref().and_then(WorkReason::parse);
    let search = view::search_text(query.q.as_deref());
    let listing = WorkListing {
        reason,
        search: (!search.is_empty()).then(|| search.clone()),
    };
    let (items, total) = member
        .state
        .actions
        .work_list(&member.viewer(), &listing, page * PAGE_SIZE, PAGE_SIZE)
        .await?;
    let mut base = Vec::new();
    if let Some(reason) = reason {
        base.push(("reason", reason.as_str()));
    }
    if !search.is_empty() {
        base.push(("q", search.as_str()));
    }
    let base = view::query_string(&base);
    let mut rows: Vec<WorkRow> = items
        .iter()
        .map(|item| WorkRow {
            patient_id: item.patient.id,
            patient: full_name(&item.patient.first_name, &item.patient.last_name),
            measurement: view::measurement_row(
                &member,
                &item.measurement,
                Some(&item.patient.time_zone),
            ),
            urgent: item.measurement.indicator.as_deref() == Some("urgent"),
        })
        .collect();
    view::name_reviewers(
        &member,
        &member.viewer(),
        rows.iter_mut()
            .filter_map(|row| row.measurement.conclusion.as_mut()),
    )
    .await?;
    let reasons = WorkReason::ALL
        .into_iter()
        .map(|r| Choice {
            value: r.as_str().to_owned(),
            label: member.tr.text(&format!("worklist-reason-{}", r.as_str())),
            selected: reason == Some(r),
        })
        .collect();
    // Asked only of an empty list: whether there is anyone to review for at all.
    let no_patients = rows.is_empty()
        && member
            .state
            .store
            .patients_page(&member.viewer(), PatientListing::default(), 0, 1)
            .await?
            .1
            == 0;
    html(&WorkListPage {
        c: Chrome::new(&member, "worklist", "worklist-title"),
        pager: Pager::counted_up_to(page, total, &base).ended_at(rows.len()),
        rows,
        reasons,
        search,
        filtered: listing != WorkListing::default(),
        no_patients,
    })
}
