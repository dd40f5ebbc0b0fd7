//! The portal's door to a patient's export of the whole record: the patient's own from the
//! account page, and any patient's from an administrator's user page. Both are plain links to
//! the ZIP (`templates/web/export.html`); `static/export.js` fetches it as a stream and shows
//! its progress when scripts run. The action, its rule and its audit record are the API's
//! (`Actions::export_record`).

use actix_web::http::header;
use actix_web::web::Path;
use actix_web::{HttpRequest, HttpResponse};

use super::context::Member;
use super::error::{ErrorPage, WebError};
use crate::actions::ActionError;
use crate::domain::id::Id;
use crate::routes::api::export::{fhir_base, zip_response};

/// `GET /portal/account/export`: the member's own record.
pub async fn own(member: Member, req: HttpRequest) -> Result<HttpResponse, WebError> {
    let id = *member.id();
    download(&member, &req, &id).await
}

/// `GET /portal/admin/users/{id}/export`: user `id`'s record, for an administrator (or the
/// user itself); the same rule as the API's.
pub async fn of_user(
    member: Member,
    req: HttpRequest,
    id: Path<String>,
) -> Result<HttpResponse, WebError> {
    let id = Id::parse(&id)?;
    download(&member, &req, &id).await
}

async fn download(member: &Member, req: &HttpRequest, id: &Id) -> Result<HttpResponse, WebError> {
    // The session cookie is `SameSite=Lax`, so another site's link would start an export in
    // the member's name (using up its allowance, writing an audit record): the browser says
    // where the request comes from, and the link is only ever followed from the portal.
    let fetched_from = req.headers().get("sec-fetch-site");
    if fetched_from.is_some_and(|site| site.as_bytes() == b"cross-site") {
        return Err(WebError::Csrf);
    }
    let started = member
        .state
        .actions
        .export_record(&member.viewer(), id, &fhir_base(&member.state))
        .await;
    match started {
        Ok(export) => Ok(zip_response(export)),
        // The portal's own words: the login throttle's say "from your address".
        Err(ActionError::Throttled { retry_after_secs }) => Ok(too_many(retry_after_secs)),
        Err(other) => Err(other.into()),
    }
}

/// 429 with `Retry-After`, rendered by the portal's middleware as a page (or a toast) in the
/// member's language.
fn too_many(retry_after_secs: u64) -> HttpResponse {
    const KEY: &str = "export-too-many";
    let mut response = HttpResponse::TooManyRequests()
        .content_type("text/html; charset=utf-8")
        .insert_header((header::RETRY_AFTER, retry_after_secs.max(1)))
        .body(KEY);
    response
        .extensions_mut()
        .insert(ErrorPage { message_key: KEY });
    response
}
