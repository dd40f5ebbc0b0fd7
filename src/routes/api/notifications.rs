//! `/notifications/v1`: the caller's own inbox, for the apps (snake_case dialect).

use actix_web::web::{Data, Path};
use actix_web::{HttpResponse, get, post, put};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::error::{ApiError, ErrorBody};
use super::extract::{ApiJson, Caller, Rql};
use super::page::Page;
use crate::domain::id::Id;
use crate::domain::rql::SortKey;
use crate::routes::AppState;
use crate::store::entities::notification;
use crate::store::resources::NOTIFICATIONS;

/// One notification: what happened, about whom, and whether it was read.
#[derive(Debug, Serialize, ToSchema)]
pub struct NotificationBody {
    #[schema(value_type = String)]
    pub id: Id,
    /// `measurement.analysed`, `measurement.report_ready`, `periodic_report.created`,
    /// `measurement.reviewed`, `result.urgent` or `webhook.disabled`.
    pub kind: String,
    /// The event's id, the same on every channel it was delivered on.
    #[schema(value_type = String)]
    pub event_id: Id,
    #[schema(value_type = String)]
    pub patient_id: Id,
    #[schema(value_type = Option<String>)]
    pub measurement_id: Option<Id>,
    /// A periodic report, a measurement report document, or a webhook endpoint.
    #[schema(value_type = Option<String>)]
    pub report_id: Option<Id>,
    /// The result class of an analysis, a report's trigger or language.
    pub detail: String,
    pub read: bool,
    pub read_timestamp: Option<i64>,
    pub creation_timestamp: i64,
}

impl From<notification::Model> for NotificationBody {
    fn from(n: notification::Model) -> Self {
        NotificationBody {
            id: n.id,
            kind: n.kind.as_str().to_owned(),
            event_id: n.event_id,
            patient_id: n.patient_id,
            measurement_id: n.measurement_id,
            report_id: n.report_id,
            detail: n.detail,
            read: n.read,
            read_timestamp: n.read_at,
            creation_timestamp: n.creation_timestamp,
        }
    }
}

/// A change to a notification.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NotificationUpdate {
    /// `true` marks it read, `false` unread.
    pub read: bool,
}

/// How many notifications a call marked read.
#[derive(Debug, Serialize, ToSchema)]
pub struct MarkedBody {
    pub affected_records: u64,
}

/// The caller's notifications, newest first unless the query sorts otherwise.
#[utoipa::path(tag = "notifications", security(("bearer" = [])),
    params(("rql" = Option<String>, Query, description = "RQL over id, kind, patient_id, measurement_id, report_id, read, read_timestamp, creation_timestamp")),
    responses((status = 200, body = Page), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody)))]
#[get("/notifications/v1")]
pub async fn list(
    state: Data<AppState>,
    caller: Caller,
    Rql(mut query): Rql,
) -> Result<HttpResponse, ApiError> {
    if query.sort.is_empty() {
        query.sort.push(SortKey {
            field: "creation_timestamp".into(),
            descending: true,
        });
    }
    let spec = NOTIFICATIONS.translate(&query)?;
    let (items, total) = state.actions.inbox(&caller.viewer(), &spec).await?;
    let items: Vec<NotificationBody> = items.into_iter().map(NotificationBody::from).collect();
    Ok(HttpResponse::Ok().json(Page::new(items, total, &spec)))
}

/// Marks one of the caller's notifications read or unread; another user's is 404.
#[utoipa::path(tag = "notifications", security(("bearer" = [])), request_body = NotificationUpdate,
    params(("id" = String, Path, description = "notification id")),
    responses((status = 200, body = NotificationBody), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody)))]
#[put("/notifications/v1/{id}")]
pub async fn update(
    state: Data<AppState>,
    caller: Caller,
    id: Path<Id>,
    ApiJson(body): ApiJson<NotificationUpdate>,
) -> Result<HttpResponse, ApiError> {
    let marked = state
        .actions
        .mark_notification(&caller.viewer(), &id.into_inner(), body.read)
        .await?;
    Ok(HttpResponse::Ok().json(NotificationBody::from(marked)))
}

/// Marks every unread notification of the caller read.
#[utoipa::path(tag = "notifications", security(("bearer" = [])),
    responses((status = 200, body = MarkedBody), (status = 401, body = ErrorBody)))]
#[post("/notifications/v1/mark_all_read")]
pub async fn mark_all_read(
    state: Data<AppState>,
    caller: Caller,
) -> Result<HttpResponse, ApiError> {
    let affected_records = state
        .actions
        .mark_all_notifications_read(&caller.viewer())
        .await?;
    Ok(HttpResponse::Ok().json(MarkedBody { affected_records }))
}
