//! Consent (snake_case as the rest of `/users/v1`, timestamps in epoch ms): the versions of
//! the texts in force, a patient's history of consents, and the withdrawal of sharing with a
//! group.

use actix_web::web::{Data, Path};
use actix_web::{HttpResponse, get, post};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::error::{ApiError, ErrorBody};
use super::extract::{ApiJson, Caller, parse_id};
use crate::domain::consent::{CURRENT, in_force};
use crate::domain::id::Id;
use crate::routes::AppState;
use crate::store::entities::consent::{self, ConsentDoor, ConsentKind};

/// The versions of the consent texts in force.
#[derive(Debug, Serialize, ToSchema)]
pub struct CurrentConsentBody {
    /// The text of consent to the processing of health data: registering through the API is
    /// consent to this version.
    pub health_data: &'static str,
    /// The text of consent to sharing with a group, recorded when a prescription starts.
    pub group_sharing: &'static str,
}

/// A consent given or withdrawn.
#[derive(Debug, Serialize, ToSchema)]
pub struct ConsentBody {
    #[schema(value_type = String)]
    pub id: Id,
    /// The patient.
    #[schema(value_type = String)]
    pub user_id: Id,
    /// `health_data` or `group_sharing`.
    pub kind: &'static str,
    /// The group shared with; `null` for `health_data`.
    #[schema(value_type = Option<String>, required = true)]
    pub group_id: Option<Id>,
    /// The version of the text (see `GET /consent/v1/current`).
    pub text_version: String,
    /// Through which door it came: `api`, `portal` or `operator`.
    pub door: &'static str,
    /// Given (`true`) or withdrawn (`false`).
    pub given: bool,
    /// Who recorded it: the patient, or the staff member or administrator who did for them.
    #[schema(value_type = String)]
    pub actor_id: Id,
    pub creation_timestamp: i64,
    /// Whether this is the latest of its kind (and group), the one in force.
    pub in_force: bool,
}

/// A patient's consents, oldest first.
#[derive(Debug, Serialize, ToSchema)]
pub struct ConsentHistoryBody {
    pub data: Vec<ConsentBody>,
}

/// The sharing to withdraw.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct WithdrawBody {
    /// The group the patient stops sharing with.
    pub group_id: String,
}

fn kind_name(kind: ConsentKind) -> &'static str {
    match kind {
        ConsentKind::HealthData => "health_data",
        ConsentKind::GroupSharing => "group_sharing",
    }
}

fn door_name(door: ConsentDoor) -> &'static str {
    match door {
        ConsentDoor::Api => "api",
        ConsentDoor::Portal => "portal",
        ConsentDoor::Operator => "operator",
    }
}

fn consent_body(row: consent::Model, in_force: bool) -> ConsentBody {
    ConsentBody {
        id: row.id,
        user_id: row.user_id,
        kind: kind_name(row.kind),
        group_id: row.group_id,
        text_version: row.text_version,
        door: door_name(row.door),
        given: row.given,
        actor_id: row.actor_id,
        creation_timestamp: row.creation_timestamp,
        in_force,
    }
}

/// The versions of the consent texts in force. Registering through `POST /users/v1/register`
/// is consent to the processing of health data at the `health_data` version.
#[utoipa::path(tag = "consents", responses((status = 200, body = CurrentConsentBody)))]
#[get("/consent/v1/current")]
pub async fn current() -> HttpResponse {
    HttpResponse::Ok().json(CurrentConsentBody {
        health_data: CURRENT.health_data,
        group_sharing: CURRENT.group_sharing,
    })
}

/// A patient's consents, oldest first: the patient, administrators, and the staff of a group
/// in which the patient's prescription runs.
#[utoipa::path(tag = "consents", security(("bearer" = [])),
    params(("id" = String, Path, description = "user id")),
    responses((status = 200, body = ConsentHistoryBody), (status = 404, body = ErrorBody)))]
#[get("/users/v1/{id}/consents")]
pub async fn history(
    state: Data<AppState>,
    caller: Caller,
    id: Path<Id>,
) -> Result<HttpResponse, ApiError> {
    let rows = state.actions.consent_history(&caller.viewer(), &id).await?;
    let in_force_now = in_force(&rows, |c| (c.kind, c.group_id));
    let data = rows
        .into_iter()
        .enumerate()
        .map(|(index, row)| consent_body(row, in_force_now.contains(&index)))
        .collect();
    Ok(HttpResponse::Ok().json(ConsentHistoryBody { data }))
}

/// Withdraws a patient's consent to sharing with a group: the patient, or an administrator on
/// their behalf. The group's access ends as when its prescription ends (the prescription
/// ends, the links its staff made to the patient's data are revoked and the report files'
/// tokens change). Answers the recorded withdrawal.
#[utoipa::path(tag = "consents", security(("bearer" = [])), request_body = WithdrawBody,
    params(("id" = String, Path, description = "user id")),
    responses((status = 200, body = ConsentBody), (status = 400, description = "malformed id (12)", body = ErrorBody),
        (status = 403, description = "staff, who see the patient but do not decide for them", body = ErrorBody),
        (status = 404, description = "the patient is not visible, or no prescription of theirs runs in the group", body = ErrorBody)))]
#[post("/users/v1/{id}/consents/withdraw")]
pub async fn withdraw(
    state: Data<AppState>,
    caller: Caller,
    id: Path<Id>,
    ApiJson(body): ApiJson<WithdrawBody>,
) -> Result<HttpResponse, ApiError> {
    let group = parse_id(&body.group_id)?;
    let row = state
        .actions
        .withdraw_group_sharing(&caller.viewer(), &id, &group, ConsentDoor::Api)
        .await?;
    Ok(HttpResponse::Ok().json(consent_body(row, true)))
}
