//! `/profiles/v1`: profiles read and merged by RQL.

use actix_web::web::{Data, Path};
use actix_web::{HttpResponse, get, put};
use serde::Serialize;
use serde_json::{Map, Value};
use utoipa::ToSchema;

use super::error::{ApiError, ErrorBody};
use super::extract::{ApiJson, Caller, Rql};
use super::page::Page;
use crate::domain::id::Id;
use crate::domain::profile::{ProfilePatch, latest_birthday};
use crate::routes::AppState;
use crate::store::entities::profile;
use crate::store::resources::PROFILES;

/// A profile as the wire shows it: `id`, the document's fields, and timestamps.
pub fn profile_body(model: profile::Model) -> Value {
    let mut body = Map::new();
    body.insert("id".into(), Value::String(model.id.to_string()));
    if let Value::Object(fields) = model.data {
        body.extend(fields);
    }
    body.insert("creation_timestamp".into(), model.creation_timestamp.into());
    body.insert("update_timestamp".into(), model.update_timestamp.into());
    Value::Object(body)
}

/// Profiles visible to the caller.
#[utoipa::path(tag = "profiles", security(("bearer" = [])),
    params(("rql" = Option<String>, Query, description = "RQL over id, country, city, physician, gender, creation_timestamp, update_timestamp")),
    responses((status = 200, body = Page), (status = 400, body = ErrorBody)))]
#[get("/profiles/v1")]
pub async fn list_profiles(
    state: Data<AppState>,
    caller: Caller,
    Rql(query): Rql,
) -> Result<HttpResponse, ApiError> {
    let spec = PROFILES.translate(&query)?;
    let (profiles, total) = state.actions.list_profiles(&caller.viewer(), &spec).await?;
    let items: Vec<Value> = profiles.into_iter().map(profile_body).collect();
    Ok(HttpResponse::Ok().json(Page::new(items, total, &spec)))
}

/// One profile (its id is the user's id).
#[utoipa::path(tag = "profiles", security(("bearer" = [])),
    params(("id" = String, Path, description = "user id")),
    responses((status = 200, body = Object), (status = 404, body = ErrorBody)))]
#[get("/profiles/v1/{id}")]
pub async fn get_profile(
    state: Data<AppState>,
    caller: Caller,
    id: Path<Id>,
) -> Result<HttpResponse, ApiError> {
    let id = id.into_inner();
    let profile = state
        .actions
        .view_profile(&caller.viewer(), &id)
        .await?
        .ok_or(ApiError::NotFound)?;
    Ok(HttpResponse::Ok().json(profile_body(profile)))
}

/// Result of a profile update.
#[derive(Debug, Serialize, ToSchema)]
pub struct RecordsAffected {
    /// How many profiles were updated.
    pub records_affected: u64,
}

/// Merges a partial profile into the profiles the RQL selects (`?id=<uid>` or `?eq(id,<uid>)`).
#[utoipa::path(tag = "profiles", security(("bearer" = [])),
    params(("rql" = String, Query, description = "which profiles, e.g. id=<user id>")),
    request_body(content = Object, description = "a partial profile (interface.md 2.3)"),
    responses((status = 200, body = RecordsAffected), (status = 400, description = "no RQL (20), bad RQL (19), invalid field (15)", body = ErrorBody)))]
#[put("/profiles/v1")]
pub async fn update_profiles(
    state: Data<AppState>,
    caller: Caller,
    Rql(query): Rql,
    ApiJson(body): ApiJson<Value>,
) -> Result<HttpResponse, ApiError> {
    if query.filter.is_none() {
        return Err(ApiError::EmptyRql);
    }
    let spec = PROFILES.translate(&query)?;
    let patch = ProfilePatch::parse(body, latest_birthday(state.store.clock().now()))?;
    let records_affected = state
        .actions
        .update_profiles(&caller.viewer(), spec.condition, &patch)
        .await?;
    Ok(HttpResponse::Ok().json(RecordsAffected { records_affected }))
}
