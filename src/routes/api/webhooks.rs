//! `/webhooks/v1`: clinic systems' endpoints for a group's events (administrators).

use actix_web::web::{Data, Path};
use actix_web::{HttpResponse, delete, get, post, put};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::error::{ApiError, ErrorBody};
use super::extract::{ApiJson, Caller};
use crate::actions::WebhookRequest;
use crate::domain::id::Id;
use crate::domain::notification::KindSet;
use crate::routes::AppState;
use crate::store::entities::{webhook_delivery, webhook_endpoint};

/// An endpoint.
#[derive(Debug, Serialize, ToSchema)]
pub struct WebhookBody {
    #[schema(value_type = String)]
    pub id: Id,
    #[schema(value_type = String)]
    pub group_id: Id,
    pub url: String,
    pub events: Vec<String>,
    pub enabled: bool,
    /// Why it was disabled, when the service disabled it.
    pub disabled_reason: Option<String>,
    /// `whsec_` + base64: the signing key of its deliveries. Only in the answer to the
    /// registration; it is not stored and not shown again.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret: Option<String>,
    pub creation_timestamp: i64,
    pub update_timestamp: i64,
}

impl WebhookBody {
    fn of(e: webhook_endpoint::Model, secret: Option<String>) -> Self {
        WebhookBody {
            id: e.id,
            group_id: e.group_id,
            events: KindSet::from_stored(&e.events)
                .iter()
                .map(|k| k.as_str().to_owned())
                .collect(),
            url: e.url,
            enabled: e.enabled,
            disabled_reason: e.disabled_reason,
            secret,
            creation_timestamp: e.creation_timestamp,
            update_timestamp: e.update_timestamp,
        }
    }
}

/// One delivery attempt.
#[derive(Debug, Serialize, ToSchema)]
pub struct DeliveryBody {
    #[schema(value_type = String)]
    pub event_id: Id,
    pub attempt: i32,
    /// `delivered` or `failed`.
    pub outcome: String,
    pub status_code: Option<i32>,
    pub latency_ms: i64,
    pub error: Option<String>,
    pub creation_timestamp: i64,
}

impl From<webhook_delivery::Model> for DeliveryBody {
    fn from(d: webhook_delivery::Model) -> Self {
        DeliveryBody {
            event_id: d.event_id,
            attempt: d.attempt,
            outcome: d.outcome,
            status_code: d.status_code,
            latency_ms: d.latency_ms,
            error: d.error,
            creation_timestamp: d.creation_timestamp,
        }
    }
}

/// An endpoint with its newest deliveries.
#[derive(Debug, Serialize, ToSchema)]
pub struct WebhookWithLog {
    #[serde(flatten)]
    pub endpoint: WebhookBody,
    pub deliveries: Vec<DeliveryBody>,
}

/// An endpoint to register.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateWebhookBody {
    /// `https://…` (`http://` to loopback only where the service allows it).
    pub url: String,
    /// The events to deliver, e.g. `["measurement.analysed", "result.urgent"]`.
    pub events: Vec<String>,
    #[schema(value_type = String)]
    pub group_id: Id,
}

/// A change to an endpoint.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateWebhookBody {
    pub enabled: bool,
}

/// Registers an endpoint for a group's events; the answer carries its secret, once.
#[utoipa::path(tag = "webhooks", security(("bearer" = [])), request_body = CreateWebhookBody,
    responses((status = 201, body = WebhookBody), (status = 400, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
#[post("/webhooks/v1")]
pub async fn create(
    state: Data<AppState>,
    caller: Caller,
    ApiJson(body): ApiJson<CreateWebhookBody>,
) -> Result<HttpResponse, ApiError> {
    let events = KindSet::parse(body.events.iter().map(String::as_str))
        .map_err(|reason| ApiError::FieldFormat(format!("events: {reason}")))?;
    let (endpoint, secret) = state
        .actions
        .register_webhook(
            &caller.viewer(),
            WebhookRequest {
                group_id: body.group_id,
                url: body.url,
                events,
            },
        )
        .await?;
    Ok(HttpResponse::Created().json(WebhookBody::of(endpoint, Some(secret))))
}

/// Every endpoint (administrators).
#[utoipa::path(tag = "webhooks", security(("bearer" = [])),
    responses((status = 200, body = [WebhookBody]), (status = 403, body = ErrorBody)))]
#[get("/webhooks/v1")]
pub async fn list(state: Data<AppState>, caller: Caller) -> Result<HttpResponse, ApiError> {
    let endpoints = state.actions.webhooks(&caller.viewer()).await?;
    let items: Vec<WebhookBody> = endpoints
        .into_iter()
        .map(|e| WebhookBody::of(e, None))
        .collect();
    Ok(HttpResponse::Ok().json(items))
}

/// One endpoint and its newest deliveries.
#[utoipa::path(tag = "webhooks", security(("bearer" = [])),
    params(("id" = String, Path, description = "endpoint id")),
    responses((status = 200, body = WebhookWithLog), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
#[get("/webhooks/v1/{id}")]
pub async fn get(
    state: Data<AppState>,
    caller: Caller,
    id: Path<Id>,
) -> Result<HttpResponse, ApiError> {
    let (endpoint, log) = state
        .actions
        .webhook(&caller.viewer(), &id.into_inner())
        .await?;
    Ok(HttpResponse::Ok().json(WebhookWithLog {
        endpoint: WebhookBody::of(endpoint, None),
        deliveries: log.into_iter().map(DeliveryBody::from).collect(),
    }))
}

/// Enables (after the service disabled it) or disables an endpoint.
#[utoipa::path(tag = "webhooks", security(("bearer" = [])), request_body = UpdateWebhookBody,
    params(("id" = String, Path, description = "endpoint id")),
    responses((status = 200, body = WebhookBody), (status = 400, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
#[put("/webhooks/v1/{id}")]
pub async fn update(
    state: Data<AppState>,
    caller: Caller,
    id: Path<Id>,
    ApiJson(body): ApiJson<UpdateWebhookBody>,
) -> Result<HttpResponse, ApiError> {
    let endpoint = state
        .actions
        .set_webhook_enabled(&caller.viewer(), &id.into_inner(), body.enabled)
        .await?;
    Ok(HttpResponse::Ok().json(WebhookBody::of(endpoint, None)))
}

/// Deletes an endpoint and its delivery log.
#[utoipa::path(tag = "webhooks", security(("bearer" = [])),
    params(("id" = String, Path, description = "endpoint id")),
    responses((status = 204), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
#[delete("/webhooks/v1/{id}")]
pub async fn remove(
    state: Data<AppState>,
    caller: Caller,
    id: Path<Id>,
) -> Result<HttpResponse, ApiError> {
    state
        .actions
        .delete_webhook(&caller.viewer(), &id.into_inner())
        .await?;
    Ok(HttpResponse::NoContent().finish())
}
