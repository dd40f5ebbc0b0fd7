//! `/users/v1/{id}/legal_hold` and `/users/v1/{id}/erasure`: an administrator's legal hold
//! on a patient, and the erasure of a patient's data with its progress.

use actix_web::web::{Data, Path};
use actix_web::{HttpResponse, get, post, put};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::error::{ApiError, ErrorBody};
use super::extract::{ApiJson, Caller};
use crate::actions::ErasureProgress;
use crate::domain::id::Id;
use crate::routes::AppState;
use crate::store::Holdings;

/// A legal hold to set or lift.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LegalHoldRequest {
    /// `true` holds the patient's data against erasure and retention; `false` lifts it.
    pub legal_hold: bool,
}

/// A patient's legal hold.
#[derive(Debug, Serialize, ToSchema)]
pub struct LegalHoldBody {
    #[schema(value_type = String)]
    pub id: Id,
    pub legal_hold: bool,
}

/// Sets or lifts the legal hold on a patient (administrators).
#[utoipa::path(tag = "users", security(("bearer" = [])), request_body = LegalHoldRequest,
    params(("id" = String, Path, description = "user id")),
    responses((status = 200, body = LegalHoldBody), (status = 400, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
#[put("/users/v1/{id}/legal_hold")]
pub async fn set_legal_hold(
    state: Data<AppState>,
    caller: Caller,
    id: Path<Id>,
    ApiJson(body): ApiJson<LegalHoldRequest>,
) -> Result<HttpResponse, ApiError> {
    let user = state
        .actions
        .set_legal_hold(&caller.viewer(), &id, body.legal_hold)
        .await?;
    Ok(HttpResponse::Ok().json(LegalHoldBody {
        id: user.id,
        legal_hold: user.legal_hold,
    }))
}

/// An erasure to start: the confirmation an administrator types.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ErasureRequest {
    /// The patient's e-mail address or full name, as typed.
    pub confirmation: String,
}

/// What a patient holds, counted.
#[derive(Debug, Serialize, ToSchema)]
pub struct HoldingsBody {
    pub measurements: u64,
    pub reports: u64,
    pub files: u64,
}

impl From<Holdings> for HoldingsBody {
    fn from(h: Holdings) -> Self {
        HoldingsBody {
            measurements: h.measurements,
            reports: h.reports,
            files: h.files,
        }
    }
}

/// Where a patient's erasure is.
#[derive(Debug, Serialize, ToSchema)]
pub struct ErasureBody {
    #[schema(value_type = String)]
    pub id: Id,
    /// `none` (never asked for), `queued`, `running`, `done`, `stopped` (a legal hold was set
    /// meanwhile) or `failed` (retried no more; `error` says why).
    pub status: &'static str,
    /// Share of the data erased, 0 to 100.
    pub percent: u8,
    /// What the patient had when the erasure was asked for.
    pub at_start: HoldingsBody,
    /// What the patient still has.
    pub left: HoldingsBody,
    /// Epoch ms at which the account became a tombstone; `null` before.
    #[schema(required = true)]
    pub erased_timestamp: Option<i64>,
    pub legal_hold: bool,
    /// The last failure of the job, if any.
    #[schema(required = true)]
    pub error: Option<String>,
}

impl ErasureBody {
    fn new(id: Id, progress: ErasureProgress) -> Self {
        ErasureBody {
            id,
            status: progress.status(),
            percent: progress.percent(),
            at_start: progress.at_start.into(),
            left: progress.left.into(),
            erased_timestamp: progress.erased_at,
            legal_hold: progress.legal_hold,
            error: progress.job.and_then(|job| job.last_error),
        }
    }
}

/// Asks for the erasure of a patient's data (administrators): answered 202 at once, the data
/// goes in a background job (`GET` the same path for its progress). Refused (400, code 27)
/// under a legal hold or for an account already erased, and (400, code 15) when the
/// confirmation is not the patient's e-mail address or full name.
#[utoipa::path(tag = "users", security(("bearer" = [])), request_body = ErasureRequest,
    params(("id" = String, Path, description = "user id")),
    responses((status = 202, body = ErasureBody), (status = 400, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
#[post("/users/v1/{id}/erasure")]
pub async fn request_erasure(
    state: Data<AppState>,
    caller: Caller,
    id: Path<Id>,
    ApiJson(body): ApiJson<ErasureRequest>,
) -> Result<HttpResponse, ApiError> {
    let progress = state
        .actions
        .request_erasure(&caller.viewer(), &id, &body.confirmation)
        .await?;
    Ok(HttpResponse::Accepted().json(ErasureBody::new(*id, progress)))
}

/// Where a patient's erasure is (administrators).
#[utoipa::path(tag = "users", security(("bearer" = [])),
    params(("id" = String, Path, description = "user id")),
    responses((status = 200, body = ErasureBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody)))]
#[get("/users/v1/{id}/erasure")]
pub async fn erasure_progress(
    state: Data<AppState>,
    caller: Caller,
    id: Path<Id>,
) -> Result<HttpResponse, ApiError> {
    let progress = state
        .actions
        .erasure_progress(&caller.viewer(), &id)
        .await?;
    Ok(HttpResponse::Ok().json(ErasureBody::new(*id, progress)))
}
