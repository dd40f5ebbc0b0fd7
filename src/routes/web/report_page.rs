//! A periodic report's page: what it covers, its PDF, and its shared links (made, listed and
//! revoked here), for whoever sees the report: its patient, the staff of its group, an
//! administrator.

use actix_web::HttpResponse;
use actix_web::web::Path;
use askama::Template;

use super::chrome::{Chrome, html, see_other};
use super::context::{CsrfForm, Member};
use super::error::WebError;
use super::links::{self, LinkForm, LinkRow};
use super::reports::{ReportRow, report_row};
use crate::actions::{DEFAULT_LINK_DAYS, MAX_LINK_DAYS};
use crate::domain::account::Language;
use crate::domain::id::Id;
use crate::domain::person_name::full_name;
use crate::store::StoreError;

#[derive(Template)]
#[template(path = "web/report.html")]
struct ReportPage {
    c: Chrome,
    report: ReportRow,
    /// The patient's name, for a reader who is not the patient, with the address of the
    /// patient's page while the reader still sees the patient (the staff of an ended
    /// prescription see its reports, not the patient).
    patient: Option<(String, Option<String>)>,
    links: Vec<LinkRow>,
    /// Where the links' forms post: the report's path.
    links_base: String,
    /// The address of a link just made: shown this once, never stored.
    new_link: Option<String>,
    default_link_days: i64,
    max_link_days: i64,
}

async fn report_page(
    member: &Member,
    id: &Id,
    new_link: Option<String>,
) -> Result<HttpResponse, WebError> {
    let viewer = member.viewer();
    let store = &member.state.store;
    let (report, shared) = member.state.actions.report_links(&viewer, id).await?;
    let own = report.user_id == *member.id();
    let patient = if own {
        None
    } else {
        let u = store.patient_of_report(&viewer, id).await?;
        let page = match store.visible_user(&viewer, &u.id).await {
            Ok(_) => Some(format!("/portal/patients/{}", u.id)),
            Err(StoreError::NotFound) => None,
            Err(other) => return Err(other.into()),
        };
        Some((full_name(&u.first_name, &u.last_name), page))
    };
    let row = report_row(member, &report);
    let subject = match &patient {
        Some((name, _)) => format!("{} · {name}", row.period),
        None => row.period.clone(),
    };
    html(&ReportPage {
        c: Chrome::new(
            member,
            if own { "reports" } else { "patients" },
            "report-page-title",
        )
        .about(subject),
        report: row,
        patient,
        links: links::link_rows(member, shared).await?,
        links_base: format!("/portal/reports/{id}"),
        new_link,
        default_link_days: DEFAULT_LINK_DAYS,
        max_link_days: MAX_LINK_DAYS,
    })
}

/// The report's page.
pub async fn page(member: Member, id: Path<String>) -> Result<HttpResponse, WebError> {
    let id = Id::parse(&id)?;
    report_page(&member, &id, None).await
}

/// Makes a shared link of the report's PDF, in the reader's language, and shows the page with
/// its address, this once.
pub async fn create_link(
    member: Member,
    id: Path<String>,
    CsrfForm(form): CsrfForm<LinkForm>,
) -> Result<HttpResponse, WebError> {
    let id = Id::parse(&id)?;
    let language = Language::or_english(Some(&member.user().language));
    let made = member
        .state
        .actions
        .create_report_link(&member.viewer(), &id, language, form.days())
        .await?;
    report_page(&member, &id, Some(links::address(&member, &made.secret))).await
}

/// Revokes a link of the report; its address answers 404 from now on.
pub async fn revoke_link(
    member: Member,
    path: Path<(String, String)>,
    CsrfForm(_): CsrfForm<Vec<(String, String)>>,
) -> Result<HttpResponse, WebError> {
    let (id, link) = path.into_inner();
    let (id, link) = (Id::parse(&id)?, Id::parse(&link)?);
    member
        .state
        .actions
        .revoke_report_link(&member.viewer(), &id, &link)
        .await?;
    Ok(see_other(&format!("/portal/reports/{id}#links")))
}
