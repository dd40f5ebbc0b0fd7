//! `/reports/v1`: periodic reports: listing, manual creation and the PDF in any language and
//! time zone.

use actix_web::web::{Data, Path, Query};
use actix_web::{HttpRequest, HttpResponse, get, post};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use utoipa::{IntoParams, ToSchema};

use super::error::{ApiError, ErrorBody};
use super::extract::{ApiJson, Caller, Rql, parse_id};
use super::page::Page;
use crate::domain::account::{Language, TimeZone};
use crate::domain::id::Id;
use crate::routes::AppState;
use crate::store::MEASUREMENT_ITEM_FIELDS;
use crate::store::entities::report;
use crate::store::resources::REPORTS;

/// A report as the wire shows it (snake_case, epoch ms). A stored report that cannot be read
/// is a fault (500, logged), never a report of no measurements.
pub fn report_body(report: &report::Model) -> Result<Value, ApiError> {
    let stored: Value = serde_json::from_str(&report.data).map_err(|e| {
        ApiError::Internal(anyhow::anyhow!(
            "periodic report {} cannot be read: {e}",
            report.id
        ))
    })?;
    let measurements: Vec<Value> = stored
        .get("measurements")
        .and_then(Value::as_array)
        .ok_or_else(|| {
            ApiError::Internal(anyhow::anyhow!(
                "periodic report {} lists no measurements array",
                report.id
            ))
        })?
        .iter()
        .map(|item| {
            let fields: Map<String, Value> = MEASUREMENT_ITEM_FIELDS
                .iter()
                .map(|f| {
                    (
                        (*f).to_owned(),
                        item.get(*f).cloned().unwrap_or(Value::Null),
                    )
                })
                .collect();
            Value::Object(fields)
        })
        .collect();
    Ok(json!({
        "id": report.id,
        "user_id": report.user_id,
        "group_id": report.group_id,
        "status": report.status.as_str(),
        "trigger": report.trigger.as_str(),
        "creation_timestamp": report.creation_timestamp,
        "update_timestamp": report.update_timestamp,
        "period_start_timestamp": report.period_start_timestamp,
        "period_end_timestamp": report.period_end_timestamp,
        "data": { "measurements": measurements },
    }))
}

/// Periodic reports visible to the caller, e.g. `?sort(-creation_timestamp)&user_id=<id>`.
#[utoipa::path(tag = "reports", security(("bearer" = [])),
    params(("rql" = Option<String>, Query, description = "RQL over id, user_id, group_id, trigger, status, creation_timestamp, period_start_timestamp, period_end_timestamp")),
    responses((status = 200, body = Page), (status = 400, body = ErrorBody)))]
#[get("/reports/v1")]
pub async fn list(
    state: Data<AppState>,
    caller: Caller,
    Rql(query): Rql,
) -> Result<HttpResponse, ApiError> {
    let spec = REPORTS.translate(&query)?;
    let (reports, total) = state.actions.list_reports(&caller.viewer(), &spec).await?;
    let items = reports
        .iter()
        .map(report_body)
        .collect::<Result<Vec<Value>, ApiError>>()?;
    Ok(HttpResponse::Ok().json(Page::new(items, total, &spec)))
}

/// One periodic report.
#[utoipa::path(tag = "reports", security(("bearer" = [])),
    params(("id" = String, Path, description = "report id")),
    responses((status = 200, body = Object), (status = 404, body = ErrorBody)))]
#[get("/reports/v1/{id}")]
pub async fn get(
    state: Data<AppState>,
    caller: Caller,
    id: Path<Id>,
) -> Result<HttpResponse, ApiError> {
    let report = state.actions.view_report(&caller.viewer(), &id).await?;
    Ok(HttpResponse::Ok().json(report_body(&report)?))
}

/// A manual report to make.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateReportBody {
    /// The patient.
    pub user_id: String,
    /// The group the report is made for: one through which the caller sees the patient (a
    /// group of the patient's running prescriptions that the caller is staff of; any of them
    /// for an administrator). Needed only when there are several; the report lists only the
    /// measurements shared with that group, and that group's staff see it.
    pub group_id: Option<String>,
    /// Start of the period, epoch ms from 1970 to the end of 9999; default: 7 days before its end.
    pub period_start_timestamp: Option<i64>,
    /// End of the period (exclusive), epoch ms from 1970 to the end of 9999; default: now.
    pub period_end_timestamp: Option<i64>,
}

/// Makes a `MANUAL` report of a patient's measurements in a period (administrators, and staff
/// of a group the patient is in).
#[utoipa::path(tag = "reports", security(("bearer" = [])),
    request_body = CreateReportBody,
    responses((status = 200, description = "the report", body = Object),
        (status = 400, description = "bad period, no group named where the caller sees the patient through several, or a group that is not one of those (15); malformed id (12)", body = ErrorBody),
        (status = 403, description = "a patient asking for itself (10)", body = ErrorBody),
        (status = 404, body = ErrorBody)))]
#[post("/reports/v1")]
pub async fn create(
    state: Data<AppState>,
    caller: Caller,
    ApiJson(body): ApiJson<CreateReportBody>,
) -> Result<HttpResponse, ApiError> {
    let user_id = parse_id(&body.user_id)?;
    let group_id = body.group_id.as_deref().map(parse_id).transpose()?;
    let report = state
        .actions
        .create_manual_report(
            &caller.viewer(),
            &user_id,
            group_id,
            body.period_start_timestamp,
            body.period_end_timestamp,
        )
        .await?;
    Ok(HttpResponse::Ok().json(report_body(&report)?))
}

/// How to render a report's PDF.
#[derive(Debug, Deserialize, IntoParams)]
pub struct PdfQuery {
    /// de, en, es, fr, it, nl, ar or zh in any case; default the patient's language;
    /// anything else gives English.
    pub language: Option<String>,
    /// An IANA time zone; default the patient's.
    pub time_zone: Option<String>,
}

/// The PDF of a periodic report, rendered once per distinct content and served from the cache
/// after that.
#[utoipa::path(tag = "reports", security(("bearer" = [])),
    params(("id" = String, Path, description = "report id"), PdfQuery),
    responses((status = 200, description = "the PDF", content_type = "application/pdf"),
        (status = 304, description = "unchanged (If-None-Match)"),
        (status = 400, description = "unknown time zone (26), malformed id (12)", body = ErrorBody),
        (status = 404, body = ErrorBody),
        (status = 503, description = "code 503 RENDER_TIMEOUT_EXCEPTION: the render ran past `TACHO_RENDER_DEADLINE` and was abandoned; nothing was stored", body = ErrorBody)))]
#[get("/reports/v1/{id}/pdf")]
pub async fn pdf(
    state: Data<AppState>,
    req: HttpRequest,
    caller: Caller,
    id: Path<Id>,
    query: Result<Query<PdfQuery>, actix_web::Error>,
) -> Result<HttpResponse, ApiError> {
    let query = query
        .map_err(|_| ApiError::IllegalArgument("the query has language and time_zone".into()))?
        .into_inner();
    let id = id.into_inner();
    let language = query
        .language
        .as_deref()
        .filter(|l| !l.is_empty())
        .map(|l| Language::or_english(Some(l)));
    let zone = match query.time_zone.as_deref().filter(|z| !z.is_empty()) {
        Some(name) => Some(TimeZone::parse(name).ok_or_else(|| {
            ApiError::IllegalArgument(format!(
                "unknown time zone `{}` (an IANA name such as Europe/Brussels)",
                name.chars().take(64).collect::<String>()
            ))
        })?),
        None => None,
    };
    let pdf = state
        .actions
        .periodic_pdf(&caller.viewer(), &id, language, zone)
        .await?;
    super::files::serve(&state, &req, &pdf.file, super::files::NO_STORE).await
}
