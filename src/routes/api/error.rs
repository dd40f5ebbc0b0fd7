//! The JSON API's error type. Handlers return `Result<_, ApiError>` and use `?`: every failure
//! maps to the error envelope `{"code","name","message"}` with the contract's status and code.

use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpResponse, ResponseError};
use serde::Serialize;
use utoipa::ToSchema;

use crate::actions::ActionError;
use crate::domain::account::FieldError;
use crate::domain::id::IdFormatError;
use crate::domain::profile::ProfileError;
use crate::domain::rql::RqlError;
use crate::store::StoreError;
use crate::store::query::QueryError;

/// Every way a JSON API request can fail.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// A fault of the service; logged with its cause, answered generically.
    #[error("internal error")]
    Internal(#[source] anyhow::Error),
    #[error("{0}")]
    NoPermission(String),
    #[error("{0}")]
    IdFormat(String),
    #[error("a request body is required")]
    EmptyBody,
    #[error("{0}")]
    MissingField(String),
    #[error("{0}")]
    FieldFormat(String),
    #[error("resource not found")]
    NotFound,
    /// A shared link that is unknown, revoked or expired (which, it does not say).
    #[error("this link is unknown, revoked or expired")]
    LinkClosed,
    #[error("{0}")]
    InvalidRql(String),
    #[error("this request needs an RQL query selecting what to act on, e.g. ?id=<user id>")]
    EmptyRql,
    #[error("{0}")]
    BodyFormat(String),
    #[error("{0}")]
    IllegalArgument(String),
    #[error("{0}")]
    IllegalState(String),
    #[error("authentication required: send `Authorization: Bearer <access_token>`")]
    NotAuthenticated,
    #[error("the access token is unknown or revoked")]
    AccessTokenUnknown,
    #[error("the access token has expired")]
    AccessTokenExpired,
    #[error("the e-mail address is already in use")]
    EmailUsed,
    #[error("malformed file token")]
    InvalidFileToken,
    #[error("the body is larger than the limit of {limit} bytes")]
    BodyTooLarge { limit: usize },
    /// A body the framework refused as too large before a handler saw it.
    #[error("the body is too large")]
    BodyTooLargeUnknownLimit,
    #[error("too many requests; retry in {retry_after_secs} s")]
    TooManyRequests { retry_after_secs: u64 },
    /// A PDF render ran past `TACHO_RENDER_DEADLINE` and was abandoned.
    #[error("{0}")]
    RenderDeadline(String),
    /// The database cannot be reached now (or stayed busy); nothing was changed.
    #[error(
        "the service cannot reach its database; nothing was changed; retry in {RETRY_AFTER_UNAVAILABLE} s"
    )]
    Unavailable,
    /// The file storage cannot take or give files now (full, unreachable); nothing was stored.
    #[error(
        "the service cannot store or read files now ({0}); nothing was changed; retry in {RETRY_AFTER_UNAVAILABLE} s"
    )]
    StorageUnavailable(String),
}

/// The `Retry-After` (seconds) of a 503 while the database cannot be reached: the breaker
/// probes it twice a second (see `store::availability`).
pub const RETRY_AFTER_UNAVAILABLE: u64 = 5;

/// The error envelope of every non-2xx JSON answer.
#[derive(Debug, Serialize, ToSchema)]
pub struct ErrorBody {
    /// Numeric error code (see the contract's table).
    pub code: u32,
    /// Upper-snake-case name of the code.
    pub name: &'static str,
    /// What went wrong, for people.
    pub message: String,
}

impl ApiError {
    /// The contract's numeric code and name.
    pub fn code_and_name(&self) -> (u32, &'static str) {
        match self {
            ApiError::Internal(_) => (1, "SERVER_EXCEPTION"),
            ApiError::NoPermission(_) => (10, "NO_PERMISSION_EXCEPTION"),
            ApiError::IdFormat(_) => (12, "ID_FORMAT_EXCEPTION"),
            ApiError::EmptyBody => (13, "EMPTY_BODY_EXCEPTION"),
            ApiError::MissingField(_) => (14, "MISSING_REQUIRED_FIELDS_EXCEPTION"),
            ApiError::FieldFormat(_) => (15, "FIELD_FORMAT_EXCEPTION"),
            ApiError::NotFound | ApiError::LinkClosed => (16, "RESOURCE_UNKNOWN_EXCEPTION"),
            ApiError::InvalidRql(_) => (19, "INVALID_RQL_EXCEPTION"),
            ApiError::EmptyRql => (20, "EMPTY_RQL_EXCEPTION"),
            ApiError::BodyFormat(_) => (22, "BODY_FORMAT_EXCEPTION"),
            ApiError::IllegalArgument(_) => (26, "ILLEGAL_ARGUMENT_EXCEPTION"),
            ApiError::IllegalState(_) => (27, "ILLEGAL_STATE_EXCEPTION"),
            ApiError::NotAuthenticated => (104, "USER_NOT_AUTHENTICATED_EXCEPTION"),
            ApiError::AccessTokenUnknown => (117, "ACCESS_TOKEN_UNKNOWN_EXCEPTION"),
            ApiError::AccessTokenExpired => (118, "ACCESS_TOKEN_EXPIRED_EXCEPTION"),
            ApiError::EmailUsed => (203, "EMAIL_USED_EXCEPTION"),
            ApiError::InvalidFileToken => (2605, "INVALID_TOKEN_EXCEPTION"),
            ApiError::BodyTooLarge { .. } | ApiError::BodyTooLargeUnknownLimit => {
                (413, "BODY_TOO_LARGE_EXCEPTION")
            }
            ApiError::TooManyRequests { .. } => (429, "TOO_MANY_REQUESTS_EXCEPTION"),
            ApiError::RenderDeadline(_) => (503, "RENDER_TIMEOUT_EXCEPTION"),
            ApiError::Unavailable | ApiError::StorageUnavailable(_) => {
                (503, "SERVICE_UNAVAILABLE_EXCEPTION")
            }
        }
    }
}

impl From<crate::store::Denied> for ApiError {
    fn from(denied: crate::store::Denied) -> Self {
        ApiError::NoPermission(denied.to_string())
    }
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        match self {
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
            ApiError::NoPermission(_) => StatusCode::FORBIDDEN,
            ApiError::NotFound | ApiError::LinkClosed => StatusCode::NOT_FOUND,
            ApiError::NotAuthenticated
            | ApiError::AccessTokenUnknown
            | ApiError::AccessTokenExpired => StatusCode::UNAUTHORIZED,
            ApiError::BodyTooLarge { .. } | ApiError::BodyTooLargeUnknownLimit => {
                StatusCode::PAYLOAD_TOO_LARGE
            }
            ApiError::TooManyRequests { .. } => StatusCode::TOO_MANY_REQUESTS,
            ApiError::RenderDeadline(_)
            | ApiError::Unavailable
            | ApiError::StorageUnavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            _ => StatusCode::BAD_REQUEST,
        }
    }

    fn error_response(&self) -> HttpResponse {
        if let ApiError::Internal(cause) = self {
            tracing::error!(error = format!("{cause:#}"), "request failed");
        }
        let (code, name) = self.code_and_name();
        let mut response = HttpResponse::build(self.status_code());
        if let ApiError::TooManyRequests { retry_after_secs } = self {
            response.insert_header((header::RETRY_AFTER, HeaderValue::from(*retry_after_secs)));
        }
        if let ApiError::Unavailable | ApiError::StorageUnavailable(_) = self {
            response.insert_header((
                header::RETRY_AFTER,
                HeaderValue::from(RETRY_AFTER_UNAVAILABLE),
            ));
        }
        if matches!(
            self,
            ApiError::NotAuthenticated
                | ApiError::AccessTokenUnknown
                | ApiError::AccessTokenExpired
        ) {
            response.insert_header((header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer")));
        }
        response.json(ErrorBody {
            code,
            name,
            message: self.to_string(),
        })
    }
}

impl From<StoreError> for ApiError {
    fn from(err: StoreError) -> Self {
        match err {
            StoreError::EmailUsed => ApiError::EmailUsed,
            StoreError::NotFound => ApiError::NotFound,
            StoreError::Denied(denied) => denied.into(),
            StoreError::Changed => ApiError::IllegalState(err.to_string()),
            StoreError::Unavailable(cause) => {
                tracing::warn!(error = %cause, "answered 503: the database is unavailable");
                ApiError::Unavailable
            }
            StoreError::Db(db) => ApiError::Internal(db.into()),
        }
    }
}

impl From<ActionError> for ApiError {
    fn from(err: ActionError) -> Self {
        match err {
            ActionError::Store(err) => err.into(),
            ActionError::Invalid { message, .. } => ApiError::FieldFormat(message),
            ActionError::Forbidden(message) => ApiError::NoPermission(message),
            ActionError::State { message, .. } => ApiError::IllegalState(message),
            ActionError::Report(err) => err.into(),
            ActionError::Throttled { retry_after_secs } => {
                ApiError::TooManyRequests { retry_after_secs }
            }
            ActionError::Internal(err) => err.into(),
        }
    }
}

impl From<RqlError> for ApiError {
    fn from(err: RqlError) -> Self {
        ApiError::InvalidRql(err.to_string())
    }
}

impl From<QueryError> for ApiError {
    fn from(err: QueryError) -> Self {
        ApiError::InvalidRql(err.0)
    }
}

impl From<IdFormatError> for ApiError {
    fn from(err: IdFormatError) -> Self {
        ApiError::IdFormat(err.to_string())
    }
}

impl From<FieldError> for ApiError {
    fn from(err: FieldError) -> Self {
        ApiError::FieldFormat(err.to_string())
    }
}

impl From<ProfileError> for ApiError {
    fn from(err: ProfileError) -> Self {
        ApiError::FieldFormat(err.to_string())
    }
}

impl From<anyhow::Error> for ApiError {
    fn from(err: anyhow::Error) -> Self {
        if unavailable(&err) {
            tracing::warn!(
                error = format!("{err:#}"),
                "answered 503: the database is unavailable"
            );
            return ApiError::Unavailable;
        }
        if let Some(fault) = storage_fault(&err) {
            tracing::warn!(
                error = format!("{err:#}"),
                "answered 503: the file storage cannot be used"
            );
            return ApiError::StorageUnavailable(fault.to_string());
        }
        ApiError::Internal(err)
    }
}

/// The file storage's fault behind an error, if that is what it is.
pub fn storage_fault(err: &anyhow::Error) -> Option<&crate::storage::StorageFault> {
    err.chain()
        .find_map(|cause| cause.downcast_ref::<crate::storage::StorageFault>())
}

/// Whether a fault from deeper down (a job, a render, a session store) is the database being
/// unreachable or busy.
pub fn unavailable(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        matches!(
            cause.downcast_ref::<StoreError>(),
            Some(StoreError::Unavailable(_))
        ) || cause
            .downcast_ref::<sea_orm::DbErr>()
            .is_some_and(crate::store::Store::is_transient)
    })
}
