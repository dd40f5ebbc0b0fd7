//! An administrator's data-protection page for one account: the legal hold, and the erasure
//! of the patient's data with its progress (polled by htmx while the job runs).

use actix_web::HttpResponse;
use actix_web::http::StatusCode;
use actix_web::web::Path;
use askama::Template;
use serde::Deserialize;

use crate::actions::{ActionError, ErasureProgress};
use crate::domain::id::Id;
use crate::routes::web::chrome::{Chrome, html, see_other};
use crate::routes::web::context::{CsrfForm, Member};
use crate::routes::web::error::WebError;
use crate::store::AdminTask;
use crate::store::entities::user;

/// The erasure's progress, the part htmx refreshes.
#[derive(Template)]
#[template(path = "web/admin_erasure_progress.html")]
struct ProgressPart {
    c: Chrome,
    id: Id,
    progress: ErasureProgress,
    erased_at: String,
}

#[derive(Template)]
#[template(path = "web/admin_erasure.html")]
struct ErasurePage {
    c: Chrome,
    id: Id,
    name: String,
    email: String,
    part: ProgressPart,
    /// The refusal of the last request, as a message.
    refusal: Option<String>,
    /// What the administrator typed, shown again after a refusal.
    typed: String,
}

impl ProgressPart {
    /// Whether the job is still working, so the page keeps asking.
    fn working(&self) -> bool {
        matches!(self.progress.status(), "queued" | "running")
    }
}

async fn progress_part(member: &Member, id: &Id) -> Result<ProgressPart, WebError> {
    let progress = member
        .state
        .actions
        .erasure_progress(&member.viewer(), id)
        .await?;
    Ok(ProgressPart {
        c: Chrome::new(member, "admin", "erase-title"),
        id: *id,
        erased_at: progress
            .erased_at
            .map(|at| member.datetime(at))
            .unwrap_or_default(),
        progress,
    })
}

async fn account(member: &Member, id: &Id) -> Result<user::Model, WebError> {
    Ok(member
        .state
        .store
        .user_to_administer(&member.viewer(), id, AdminTask::EraseUsers)
        .await?)
}

async fn page(
    member: &Member,
    id: &Id,
    refusal: Option<&'static str>,
    typed: String,
) -> Result<HttpResponse, WebError> {
    let user = account(member, id).await?;
    let part = progress_part(member, id).await?;
    // A tombstone has no name left to show.
    let name = if user.erased_timestamp.is_some() {
        member.tr.text("erase-tombstone")
    } else {
        user.full_name()
    };
    let mut response = html(&ErasurePage {
        c: Chrome::new(member, "admin", "erase-title").about(name.clone()),
        id: *id,
        email: if user.erased_timestamp.is_some() {
            String::new()
        } else {
            user.email
        },
        name,
        part,
        refusal: refusal.map(|key| member.tr.text(key)),
        typed,
    })?;
    if refusal.is_some() {
        *response.status_mut() = StatusCode::BAD_REQUEST;
    }
    Ok(response)
}

/// The page of user `id`; for htmx, the progress alone.
pub async fn erasure_page(member: Member, id: Path<String>) -> Result<HttpResponse, WebError> {
    let id = Id::parse(&id)?;
    if member.htmx {
        return html(&progress_part(&member, &id).await?);
    }
    page(&member, &id, None, String::new()).await
}

/// The hold to set (`on`) or lift.
#[derive(Debug, Deserialize)]
pub struct HoldForm {
    #[serde(default)]
    pub hold: Option<String>,
}

/// Sets or lifts the legal hold.
pub async fn set_legal_hold(
    member: Member,
    id: Path<String>,
    CsrfForm(form): CsrfForm<HoldForm>,
) -> Result<HttpResponse, WebError> {
    let id = Id::parse(&id)?;
    let hold = form.hold.as_deref() == Some("on");
    member
        .state
        .actions
        .set_legal_hold(&member.viewer(), &id, hold)
        .await?;
    Ok(see_other(&format!("/portal/admin/users/{id}/erasure")))
}

/// The confirmation typed before an erasure.
#[derive(Debug, Deserialize)]
pub struct EraseForm {
    #[serde(default)]
    pub confirmation: String,
}

/// Asks for the erasure; a refusal (a hold, a confirmation that does not name the patient)
/// shows the page again saying why.
pub async fn request_erasure(
    member: Member,
    id: Path<String>,
    CsrfForm(form): CsrfForm<EraseForm>,
) -> Result<HttpResponse, WebError> {
    let id = Id::parse(&id)?;
    match member
        .state
        .actions
        .request_erasure(&member.viewer(), &id, &form.confirmation)
        .await
    {
        Ok(_) => Ok(see_other(&format!("/portal/admin/users/{id}/erasure"))),
        Err(ActionError::Invalid { key, .. } | ActionError::State { key, .. }) => {
            page(&member, &id, Some(key), form.confirmation).await
        }
        Err(err) => Err(err.into()),
    }
}
