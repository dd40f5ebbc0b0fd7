//! `/groups/v1`: care teams.

use actix_web::web::{Data, Path};
use actix_web::{HttpResponse, get, post};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::error::{ApiError, ErrorBody};
use super::extract::{ApiJson, Caller, Rql};
use super::page::Page;
use crate::domain::group::{GroupName, parse_description};
use crate::domain::id::Id;
use crate::routes::AppState;
use crate::store::entities::group;
use crate::store::resources::GROUPS;

/// A group.
#[derive(Debug, Serialize, ToSchema)]
pub struct GroupBody {
    #[schema(value_type = String)]
    pub id: Id,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub creation_timestamp: i64,
    pub update_timestamp: i64,
}

impl From<group::Model> for GroupBody {
    fn from(g: group::Model) -> Self {
        GroupBody {
            id: g.id,
            name: g.name,
            description: g.description,
            creation_timestamp: g.creation_timestamp,
            update_timestamp: g.update_timestamp,
        }
    }
}

/// A group to create.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateGroupBody {
    /// 1 to 200 characters.
    pub name: String,
    /// At most 2,000 characters.
    pub description: Option<String>,
}

/// Creates a group (administrators).
#[utoipa::path(tag = "groups", security(("bearer" = [])), request_body = CreateGroupBody,
    responses((status = 200, body = GroupBody),
        (status = 400, body = ErrorBody,
            description = "code 15: a name that is not valid, or another group's name (in any case)"),
        (status = 403, body = ErrorBody)))]
#[post("/groups/v1")]
pub async fn create_group(
    state: Data<AppState>,
    caller: Caller,
    ApiJson(body): ApiJson<CreateGroupBody>,
) -> Result<HttpResponse, ApiError> {
    let name = GroupName::parse(&body.name)?;
    let description = parse_description(body.description.as_deref())?;
    let group = state
        .actions
        .create_group(&caller.viewer(), name, description)
        .await?;
    Ok(HttpResponse::Ok().json(GroupBody::from(group)))
}

/// Groups visible to the caller (staff and patient groups; all for administrators).
#[utoipa::path(tag = "groups", security(("bearer" = [])),
    params(("rql" = Option<String>, Query, description = "RQL over id, name, creation_timestamp")),
    responses((status = 200, body = Page), (status = 400, body = ErrorBody)))]
#[get("/groups/v1")]
pub async fn list_groups(
    state: Data<AppState>,
    caller: Caller,
    Rql(query): Rql,
) -> Result<HttpResponse, ApiError> {
    let spec = GROUPS.translate(&query)?;
    let (groups, total) = state.store.list_groups(&caller.viewer(), &spec).await?;
    let items: Vec<GroupBody> = groups.into_iter().map(GroupBody::from).collect();
    Ok(HttpResponse::Ok().json(Page::new(items, total, &spec)))
}

/// One group, if visible.
#[utoipa::path(tag = "groups", security(("bearer" = [])),
    params(("id" = String, Path, description = "group id")),
    responses((status = 200, body = GroupBody), (status = 404, body = ErrorBody)))]
#[get("/groups/v1/{id}")]
pub async fn get_group(
    state: Data<AppState>,
    caller: Caller,
    id: Path<Id>,
) -> Result<HttpResponse, ApiError> {
    let id = id.into_inner();
    let group = state.store.visible_group(&caller.viewer(), &id).await?;
    Ok(HttpResponse::Ok().json(GroupBody::from(group)))
}
