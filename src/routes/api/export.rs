//! `GET /users/v1/{id}/export`: a patient's whole record as one ZIP (GDPR art. 15 and 20),
//! made while it is sent. The portal's download answers through [`zip_response`] too.

use actix_web::http::header;
use actix_web::web::{Data, Path};
use actix_web::{HttpResponse, get};

use super::error::{ApiError, ErrorBody};
use super::extract::Caller;
use crate::actions::Export;
use crate::domain::id::Id;
use crate::routes::AppState;

/// The base of the FHIR door (`…/fhir/R4`), under which the export's Bundle names its
/// resources, as the FHIR door itself names them.
pub fn fhir_base(state: &AppState) -> String {
    format!("{}/fhir/R4", state.settings.base_url.trim_end_matches('/'))
}

/// An export as a download: `application/zip` under its file name, streamed as it is made,
/// never kept by a cache.
pub fn zip_response(archive: Export) -> HttpResponse {
    HttpResponse::Ok()
        .content_type("application/zip")
        .insert_header((
            header::CONTENT_DISPOSITION,
            format!("attachment; filename=\"{}\"", archive.file_name),
        ))
        .insert_header((header::CACHE_CONTROL, super::files::NO_STORE))
        .streaming(archive.body)
}

/// The user's whole record as a ZIP: `README.txt`, `record.json` (FHIR R4 Bundle),
/// `measurements.csv` and `reports/*.pdf` (docs/api.md, "The patient's data export"). For
/// the patient and administrators; audited; a few an hour per account.
#[utoipa::path(tag = "users", security(("bearer" = [])),
    params(("id" = String, Path, description = "the patient's user id")),
    responses((status = 200, description = "the ZIP, streamed as it is made", content_type = "application/zip",
            headers(("Content-Disposition" = String, description = "attachment; filename=\"tacho-export-<id>.zip\""))),
        (status = 401, description = "104, 117, 118", body = ErrorBody),
        (status = 403, description = "the caller sees the user but is neither the user nor an administrator (10)", body = ErrorBody),
        (status = 404, body = ErrorBody),
        (status = 429, description = "too many exports by this account in the last hour; `Retry-After` says when to ask again", body = ErrorBody)))]
#[get("/users/v1/{id}/export")]
pub async fn export_record(
    state: Data<AppState>,
    caller: Caller,
    id: Path<Id>,
) -> Result<HttpResponse, ApiError> {
    let started = state
        .actions
        .export_record(&caller.viewer(), &id, &fhir_base(&state))
        .await?;
    Ok(zip_response(started))
}
