//! `/users/v1`: registration, the caller's record, user updates, enlistments, roles, activation.

use actix_web::web::{Data, Path};
use actix_web::{HttpResponse, delete, get, post, put};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::error::{ApiError, ErrorBody};
use super::extract::{ApiJson, Caller, Rql, parse_id};
use super::page::Page;
use crate::actions::{AccountChanges, NewAccount, RoleChange};
use crate::domain::account::{
    Email, Language, NewPassword, PersonName, PhoneNumber, Role, StaffRole, TimeZone,
};
use crate::domain::id::Id;
use crate::routes::AppState;
use crate::store::entities::consent::ConsentDoor;
use crate::store::entities::{patient_enlistment, staff_enlistment, user};
use crate::store::resources::USERS;
use crate::store::{StoreError, UserRecord, Viewer};

/// A prescription: the patient's enlistment in a group.
#[derive(Debug, Serialize, ToSchema)]
pub struct PatientEnlistmentBody {
    #[schema(value_type = String)]
    pub group_id: Id,
    /// Epoch ms at which the prescription ends.
    pub expiry_timestamp: i64,
    /// Whether it has ended.
    pub expired: bool,
    pub creation_timestamp: i64,
}

/// Membership of a group's staff.
#[derive(Debug, Serialize, ToSchema)]
pub struct StaffEnlistmentBody {
    #[schema(value_type = String)]
    pub group_id: Id,
    /// Role names within the group, e.g. `physician`.
    pub roles: Vec<String>,
    pub creation_timestamp: i64,
    pub update_timestamp: i64,
}

/// The user record (interface.md 2.4); timestamps in epoch ms. Every field of 2.4 is always
/// there, `null` when it has no value, so clients read one shape whatever the account holds.
#[derive(Debug, Serialize, ToSchema)]
pub struct UserBody {
    #[schema(value_type = String)]
    pub id: Id,
    pub first_name: String,
    pub last_name: String,
    /// Upper-case language code, e.g. `EN`.
    pub language: String,
    /// IANA time zone, e.g. `Europe/Brussels`.
    pub time_zone: String,
    pub email: String,
    /// `null` when none is set.
    #[schema(required = true)]
    pub phone_number: Option<String>,
    pub activation: bool,
    /// Global roles; `admin` marks an administrator.
    pub roles: Vec<String>,
    pub patient_enlistments: Vec<PatientEnlistmentBody>,
    pub staff_enlistments: Vec<StaffEnlistmentBody>,
    /// The last failed login, `null` when there was none.
    #[schema(required = true)]
    pub last_failed_timestamp: Option<i64>,
    pub failed_count: i32,
    pub creation_timestamp: i64,
    pub update_timestamp: i64,
    /// `null` when none is set.
    #[schema(required = true)]
    pub profile_image: Option<String>,
}

impl UserBody {
    /// The wire form of a record, with `expired` judged at `now`. Role lists that are not
    /// lists of names are a fault of the database, answered as one.
    pub fn new(record: UserRecord, now: i64) -> Result<Self, StoreError> {
        let roles = record.user.role_names()?;
        let user = record.user;
        Ok(UserBody {
            id: user.id,
            first_name: user.first_name,
            last_name: user.last_name,
            language: user.language,
            time_zone: user.time_zone,
            email: user.email,
            phone_number: user.phone_number,
            activation: user.activation,
            roles,
            patient_enlistments: record
                .patient_enlistments
                .into_iter()
                .map(|e| patient_body(e, now))
                .collect(),
            staff_enlistments: record
                .staff_enlistments
                .into_iter()
                .map(staff_body)
                .collect::<Result<_, _>>()?,
            last_failed_timestamp: user.last_failed_timestamp,
            failed_count: user.failed_count,
            creation_timestamp: user.creation_timestamp,
            update_timestamp: user.update_timestamp,
            profile_image: user.profile_image,
        })
    }
}

fn patient_body(e: patient_enlistment::Model, now: i64) -> PatientEnlistmentBody {
    PatientEnlistmentBody {
        group_id: e.group_id,
        expiry_timestamp: e.expiry_timestamp,
        expired: e.expiry_timestamp <= now,
        creation_timestamp: e.creation_timestamp,
    }
}

fn staff_body(e: staff_enlistment::Model) -> Result<StaffEnlistmentBody, StoreError> {
    Ok(StaffEnlistmentBody {
        roles: user::role_names(&e.roles)?,
        group_id: e.group_id,
        creation_timestamp: e.creation_timestamp,
        update_timestamp: e.update_timestamp,
    })
}

/// The record of a user the caller sees, after a change to it.
async fn visible_record(
    state: &AppState,
    viewer: &Viewer,
    id: &Id,
) -> Result<HttpResponse, ApiError> {
    let user = state.store.visible_user(viewer, id).await?;
    record_response(state, user).await
}

async fn record_response(
    state: &AppState,
    user: crate::store::entities::user::Model,
) -> Result<HttpResponse, ApiError> {
    let record = state.store.user_record(user).await?;
    Ok(HttpResponse::Ok().json(UserBody::new(record, state.store.clock().now_millis())?))
}

/// Registration form.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RegisterBody {
    pub first_name: String,
    pub last_name: String,
    pub email: String,
    /// 8 to 256 characters.
    pub password: String,
    pub phone_number: Option<String>,
    /// Any case; one of de, en, es, fr, it, nl, ar, zh.
    pub language: String,
    /// IANA name.
    pub time_zone: String,
}

/// Creates a user and its empty profile.
#[utoipa::path(tag = "users", request_body = RegisterBody,
    responses((status = 200, body = UserBody), (status = 400, description = "validation (14, 15), e-mail used (203)", body = ErrorBody),
        (status = 429, description = "too many registrations from the client's network (429)", body = ErrorBody)))]
#[post("/users/v1/register")]
pub async fn register(
    state: Data<AppState>,
    req: actix_web::HttpRequest,
    ApiJson(body): ApiJson<RegisterBody>,
) -> Result<HttpResponse, ApiError> {
    // Each registration costs an Argon2 hash: a network gets a few an hour, refused before
    // any hashing, so that a flood cannot take the CPU logins need.
    let network = crate::routes::client_network(&req);
    if let Err(wait) = state.registration_throttle.check(network) {
        return Err(ApiError::TooManyRequests {
            retry_after_secs: wait.as_secs().max(1),
        });
    }
    let new = NewAccount {
        email: Email::parse(&body.email)?,
        password: NewPassword::parse(&body.password)?,
        first_name: PersonName::parse("first_name", &body.first_name)?,
        last_name: PersonName::parse("last_name", &body.last_name)?,
        phone_number: body
            .phone_number
            .as_deref()
            .map(PhoneNumber::parse)
            .transpose()?,
        language: Language::parse_field(&body.language)?,
        time_zone: TimeZone::parse_field(&body.time_zone)?,
        roles: Vec::new(),
    };
    let user = state.actions.create_account(None, new).await?;
    record_response(&state, user).await
}

/// The authenticated user's record.
#[utoipa::path(tag = "users", security(("bearer" = [])),
    responses((status = 200, body = UserBody), (status = 401, description = "104, 117, 118", body = ErrorBody)))]
#[get("/users/v1/me")]
pub async fn me(state: Data<AppState>, caller: Caller) -> Result<HttpResponse, ApiError> {
    record_response(&state, caller.user).await
}

/// One user's record, if visible to the caller.
#[utoipa::path(tag = "users", security(("bearer" = [])),
    params(("id" = String, Path, description = "user id")),
    responses((status = 200, body = UserBody), (status = 404, body = ErrorBody)))]
#[get("/users/v1/{id}")]
pub async fn get_user(
    state: Data<AppState>,
    caller: Caller,
    id: Path<Id>,
) -> Result<HttpResponse, ApiError> {
    let user = state.actions.view_user(&caller.viewer(), &id).await?;
    record_response(&state, user).await
}

/// Users visible to the caller, filtered and paged by RQL.
#[utoipa::path(tag = "users", security(("bearer" = [])),
    params(("rql" = Option<String>, Query, description = "RQL over id, email, first_name, last_name, language, activation, creation_timestamp, update_timestamp")),
    responses((status = 200, body = Page), (status = 400, description = "bad RQL (19)", body = ErrorBody)))]
#[get("/users/v1")]
pub async fn list_users(
    state: Data<AppState>,
    caller: Caller,
    Rql(query): Rql,
) -> Result<HttpResponse, ApiError> {
    let spec = USERS.translate(&query)?;
    let (records, total) = state.actions.list_users(&caller.viewer(), &spec).await?;
    let now = state.store.clock().now_millis();
    let items = records
        .into_iter()
        .map(|r| UserBody::new(r, now))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(HttpResponse::Ok().json(Page::new(items, total, &spec)))
}

/// Changes to a user's own fields; absent fields stay as they are.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateUserBody {
    #[serde(default, with = "::serde_with::rust::double_option")]
    #[schema(value_type = Option<String>)]
    pub first_name: Option<Option<String>>,
    #[serde(default, with = "::serde_with::rust::double_option")]
    #[schema(value_type = Option<String>)]
    pub last_name: Option<Option<String>>,
    /// `null` clears the number.
    #[serde(default, with = "::serde_with::rust::double_option")]
    #[schema(value_type = Option<String>)]
    pub phone_number: Option<Option<String>>,
    #[serde(default, with = "::serde_with::rust::double_option")]
    #[schema(value_type = Option<String>)]
    pub language: Option<Option<String>>,
    #[serde(default, with = "::serde_with::rust::double_option")]
    #[schema(value_type = Option<String>)]
    pub time_zone: Option<Option<String>>,
}

/// A field that may be left out but not cleared: `null` is refused.
fn not_null<'a>(
    field: &str,
    value: &'a Option<Option<String>>,
) -> Result<Option<&'a str>, ApiError> {
    match value {
        None => Ok(None),
        Some(Some(v)) => Ok(Some(v)),
        Some(None) => Err(ApiError::FieldFormat(format!("`{field}` cannot be null"))),
    }
}

/// Updates a user (the user itself or an administrator).
#[utoipa::path(tag = "users", security(("bearer" = [])), request_body = UpdateUserBody,
    params(("id" = String, Path, description = "user id")),
    responses((status = 200, body = UserBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
#[put("/users/v1/{id}")]
pub async fn update_user(
    state: Data<AppState>,
    caller: Caller,
    id: Path<Id>,
    ApiJson(body): ApiJson<UpdateUserBody>,
) -> Result<HttpResponse, ApiError> {
    let id = id.into_inner();
    let changes = AccountChanges {
        first_name: not_null("first_name", &body.first_name)?
            .map(|v| PersonName::parse("first_name", v))
            .transpose()?,
        last_name: not_null("last_name", &body.last_name)?
            .map(|v| PersonName::parse("last_name", v))
            .transpose()?,
        phone_number: match body.phone_number {
            Some(Some(v)) => Some(Some(PhoneNumber::parse(&v)?)),
            Some(None) => Some(None),
            None => None,
        },
        language: not_null("language", &body.language)?
            .map(Language::parse_field)
            .transpose()?,
        time_zone: not_null("time_zone", &body.time_zone)?
            .map(TimeZone::parse_field)
            .transpose()?,
    };
    let user = state
        .actions
        .change_account(&caller.viewer(), &id, changes)
        .await?;
    record_response(&state, user).await
}

/// A prescription to start (or extend).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PatientEnlistmentRequest {
    pub group_id: String,
    /// Epoch ms at which the prescription ends; must be in the future, and at most the end
    /// of 9999.
    pub expiry_timestamp: i64,
}

/// Enlists a patient in a group (administrators, or staff of that group). A prescription that
/// starts records the patient's consent to sharing with the group, through the API, by the
/// caller (see `GET /users/v1/{id}/consents`).
#[utoipa::path(tag = "users", security(("bearer" = [])),
    request_body = PatientEnlistmentRequest, params(("id" = String, Path, description = "user id")),
    responses((status = 200, body = UserBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
#[post("/users/v1/{id}/patient_enlistments")]
pub async fn add_patient_enlistment(
    state: Data<AppState>,
    caller: Caller,
    id: Path<Id>,
    ApiJson(body): ApiJson<PatientEnlistmentRequest>,
) -> Result<HttpResponse, ApiError> {
    let (id, group_id) = (id.into_inner(), parse_id(&body.group_id)?);
    let viewer = caller.viewer();
    state
        .actions
        .enlist_patient(
            &viewer,
            &id,
            &group_id,
            body.expiry_timestamp,
            ConsentDoor::Api,
        )
        .await?;
    visible_record(&state, &viewer, &id).await
}

/// Ends a patient's prescription in a group now.
#[utoipa::path(tag = "users", security(("bearer" = [])),
    params(("id" = String, Path, description = "user id"), ("group_id" = String, Path, description = "group id")),
    responses((status = 200, body = UserBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
#[delete("/users/v1/{id}/patient_enlistments/{group_id}")]
pub async fn end_patient_enlistment(
    state: Data<AppState>,
    caller: Caller,
    path: Path<(Id, Id)>,
) -> Result<HttpResponse, ApiError> {
    let (id, group_id) = path.into_inner();
    let account = state
        .actions
        .end_patient_enlistment(&caller.viewer(), &id, &group_id)
        .await?;
    record_response(&state, account).await
}

/// A staff membership to add.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct StaffEnlistmentRequest {
    pub group_id: String,
    /// Role names within the group; default `["physician"]`.
    pub roles: Option<Vec<String>>,
}

/// Adds a user to a group's staff (administrators).
#[utoipa::path(tag = "users", security(("bearer" = [])),
    request_body = StaffEnlistmentRequest, params(("id" = String, Path, description = "user id")),
    responses((status = 200, body = UserBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
#[post("/users/v1/{id}/staff_enlistments")]
pub async fn add_staff_enlistment(
    state: Data<AppState>,
    caller: Caller,
    id: Path<Id>,
    ApiJson(body): ApiJson<StaffEnlistmentRequest>,
) -> Result<HttpResponse, ApiError> {
    let (id, group_id) = (id.into_inner(), parse_id(&body.group_id)?);
    let roles = match body.roles {
        Some(roles) => roles
            .iter()
            .map(|r| StaffRole::parse(r))
            .collect::<Result<Vec<_>, _>>()?,
        None => vec![StaffRole::physician()],
    };
    let viewer = caller.viewer();
    state
        .actions
        .enlist_staff(&viewer, &id, &group_id, roles)
        .await?;
    visible_record(&state, &viewer, &id).await
}

/// Removes a user from a group's staff (administrators).
#[utoipa::path(tag = "users", security(("bearer" = [])),
    params(("id" = String, Path, description = "user id"), ("group_id" = String, Path, description = "group id")),
    responses((status = 200, body = UserBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
#[delete("/users/v1/{id}/staff_enlistments/{group_id}")]
pub async fn remove_staff_enlistment(
    state: Data<AppState>,
    caller: Caller,
    path: Path<(Id, Id)>,
) -> Result<HttpResponse, ApiError> {
    let (id, group_id) = path.into_inner();
    let viewer = caller.viewer();
    state.actions.remove_staff(&viewer, &id, &group_id).await?;
    visible_record(&state, &viewer, &id).await
}

/// Global roles to add or remove.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RolesRequest {
    /// Role names; known: `admin`.
    pub roles: Vec<String>,
}

async fn change_roles(
    state: &AppState,
    caller: &Caller,
    id: &Id,
    body: RolesRequest,
    grant: bool,
) -> Result<HttpResponse, ApiError> {
    let roles = body
        .roles
        .iter()
        .map(|r| Role::parse(r))
        .collect::<Result<Vec<_>, _>>()?;
    let change = RoleChange::of(roles, grant);
    let user = state
        .actions
        .change_roles(&caller.viewer(), id, change)
        .await?;
    record_response(state, user).await
}

/// Grants global roles (administrators).
#[utoipa::path(tag = "users", security(("bearer" = [])), request_body = RolesRequest,
    params(("id" = String, Path, description = "user id")),
    responses((status = 200, body = UserBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
#[post("/users/v1/{id}/roles")]
pub async fn add_roles(
    state: Data<AppState>,
    caller: Caller,
    id: Path<Id>,
    ApiJson(body): ApiJson<RolesRequest>,
) -> Result<HttpResponse, ApiError> {
    change_roles(&state, &caller, &id, body, true).await
}

/// Revokes global roles (administrators).
#[utoipa::path(tag = "users", security(("bearer" = [])), request_body = RolesRequest,
    params(("id" = String, Path, description = "user id")),
    responses((status = 200, body = UserBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
#[delete("/users/v1/{id}/roles")]
pub async fn remove_roles(
    state: Data<AppState>,
    caller: Caller,
    id: Path<Id>,
    ApiJson(body): ApiJson<RolesRequest>,
) -> Result<HttpResponse, ApiError> {
    change_roles(&state, &caller, &id, body, false).await
}

/// Activation switch.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ActivationRequest {
    /// `false` deactivates (tokens stop working); `true` activates and lifts a login lockout.
    pub activation: bool,
}

/// Activates or deactivates a user (administrators).
#[utoipa::path(tag = "users", security(("bearer" = [])), request_body = ActivationRequest,
    params(("id" = String, Path, description = "user id")),
    responses((status = 200, body = UserBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
#[put("/users/v1/{id}/activation")]
pub async fn set_activation(
    state: Data<AppState>,
    caller: Caller,
    id: Path<Id>,
    ApiJson(body): ApiJson<ActivationRequest>,
) -> Result<HttpResponse, ApiError> {
    let id = id.into_inner();
    let user = state
        .actions
        .set_activation(&caller.viewer(), &id, body.activation)
        .await?;
    record_response(&state, user).await
}
