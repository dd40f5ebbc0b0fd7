//! `/data/v1/measurement-reports/documents`: PDF reports of single measurements.

use actix_web::web::{Data, Path};
use actix_web::{HttpResponse, get, post};
use serde::Deserialize;
use serde_json::{Value, json};
use utoipa::ToSchema;

use super::error::{ApiError, ErrorBody};
use super::extract::{ApiJson, Caller, Rql, parse_id};
use super::page::Page;
use crate::auth::file_token::FileTokens;
use crate::domain::account::Language;
use crate::domain::id::Id;
use crate::domain::time::rfc3339_millis;
use crate::reports::ReportError;
use crate::routes::AppState;
use crate::store::ReportRecord;
use crate::store::resources::MEASUREMENT_REPORTS;

impl From<ReportError> for ApiError {
    fn from(err: ReportError) -> Self {
        match err {
            ReportError::NotReady(message) => ApiError::IllegalState(message),
            ReportError::Store(err) => err.into(),
            ReportError::Deadline(_) => ApiError::RenderDeadline(err.to_string()),
            ReportError::Internal(err) => err.into(),
        }
    }
}

/// A report document as the wire shows it, its file's token made by `tokens`.
pub fn report_body(
    tokens: &FileTokens,
    ReportRecord {
        report,
        file,
        group_ids,
    }: ReportRecord,
) -> Value {
    json!({
        "id": report.id,
        "creatorId": report.creator_id,
        "userIds": [report.patient_id],
        "groupIds": group_ids,
        "status": report.status.as_str(),
        // interface.md 2.1 names `data.status`; the contract's envelope `status` stays too.
        "data": {
            "measurementId": report.measurement_id,
            "status": report.status.as_str(),
            "language": report.language,
            "timeZone": report.time_zone,
            "readFileToken": file.as_ref().map(|file| tokens.token(file)),
            "forMeasurementUpdatedTimestamp": report.for_measurement_updated_timestamp,
        },
        "creationTimestamp": rfc3339_millis(report.creation_timestamp),
        "updateTimestamp": rfc3339_millis(report.update_timestamp),
        "statusChangedTimestamp": rfc3339_millis(report.status_changed_timestamp),
    })
}

/// A report to make.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CreateReportBody {
    pub measurement_id: String,
    /// de, en, es, fr, it, nl, ar or zh in any case; anything else gives English.
    pub language: Option<String>,
}

/// Renders a report of a measurement (or reuses the PDF with the same content) and answers
/// the new document with status `rendered`.
#[utoipa::path(tag = "measurement-reports", security(("bearer" = [])),
    request_body = CreateReportBody,
    responses((status = 200, description = "the report document", body = Object),
        (status = 400, description = "no results yet (27), malformed id (12)", body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 503, description = "code 503 RENDER_TIMEOUT_EXCEPTION: the render ran past `TACHO_RENDER_DEADLINE` and was abandoned; no document or file was stored", body = ErrorBody)))]
#[post("/data/v1/measurement-reports/documents")]
pub async fn create(
    state: Data<AppState>,
    caller: Caller,
    ApiJson(body): ApiJson<CreateReportBody>,
) -> Result<HttpResponse, ApiError> {
    let measurement_id = parse_id(&body.measurement_id)?;
    let language = Language::or_english(body.language.as_deref());
    let made = state
        .actions
        .measurement_pdf(&caller.viewer(), &measurement_id, language, false)
        .await?;
    Ok(HttpResponse::Ok().json(report_body(&state.file_tokens, made.report)))
}

/// Report documents visible to the caller, e.g. `?limit(1)&sort(-id)&eq(data.measurementId,<id>)`.
#[utoipa::path(tag = "measurement-reports", security(("bearer" = [])),
    params(("rql" = Option<String>, Query, description = "RQL over id, creatorId, status, data.measurementId, data.language, creationTimestamp, updateTimestamp")),
    responses((status = 200, body = Page), (status = 400, body = ErrorBody)))]
#[get("/data/v1/measurement-reports/documents")]
pub async fn list(
    state: Data<AppState>,
    caller: Caller,
    Rql(query): Rql,
) -> Result<HttpResponse, ApiError> {
    let spec = MEASUREMENT_REPORTS.translate(&query)?;
    let (reports, total) = state
        .actions
        .list_measurement_reports(&caller.viewer(), &spec)
        .await?;
    let items: Vec<Value> = reports
        .into_iter()
        .map(|r| report_body(&state.file_tokens, r))
        .collect();
    Ok(HttpResponse::Ok().json(Page::new(items, total, &spec)))
}

/// One report document.
#[utoipa::path(tag = "measurement-reports", security(("bearer" = [])),
    params(("id" = String, Path, description = "report document id")),
    responses((status = 200, body = Object), (status = 404, body = ErrorBody)))]
#[get("/data/v1/measurement-reports/documents/{id}")]
pub async fn get(
    state: Data<AppState>,
    caller: Caller,
    id: Path<Id>,
) -> Result<HttpResponse, ApiError> {
    let item = state
        .actions
        .view_measurement_report(&caller.viewer(), &id)
        .await?;
    Ok(HttpResponse::Ok().json(report_body(&state.file_tokens, item)))
}
