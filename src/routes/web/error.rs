//! The portal's error type. Handlers return `Result<_, WebError>` and use `?`; the response
//! carries only a status and an [`ErrorPage`] marker, and the portal middleware
//! (`chrome::portal_middleware`) renders it in the visitor's language: a full page, or a toast
//! fragment when htmx asked (`HX-Request`).

use actix_web::http::StatusCode;
use actix_web::http::header;
use actix_web::{HttpResponse, ResponseError};

use crate::actions::ActionError;
use crate::reports::ReportError;
use crate::store::{Denied, StoreError};

/// Every way a portal request can fail.
#[derive(Debug, thiserror::Error)]
pub enum WebError {
    /// Nothing there, or nothing this user may see.
    #[error("not found")]
    NotFound,
    /// Seen, but not for this user to change; the store's access rules say why.
    #[error("forbidden: {0}")]
    Forbidden(Denied),
    /// The page needs a logged-in user.
    #[error("login required")]
    LoginRequired,
    /// The user must first choose its own password (an administrator chose the one it has):
    /// every page leads to the account page's password form; `htmx` leaves the page whole.
    #[error("password change due")]
    PasswordChangeDue { htmx: bool },
    /// A state-changing request without a valid CSRF token or from another origin.
    #[error("cross-site request refused")]
    Csrf,
    /// Input the page cannot act on; the message key says why.
    #[error("bad request: {0}")]
    BadRequest(&'static str),
    /// The object changed while the change was being made, or is in no state for it; the
    /// message key says which.
    #[error("conflict: {0}")]
    Conflict(&'static str),
    /// Too many attempts (logins from this address, exports by this account); the answer's
    /// `Retry-After` says in how many seconds to try again.
    #[error("too many requests")]
    TooManyRequests { retry_after_secs: u64 },
    /// A report took longer than the render deadline.
    #[error("report render deadline passed")]
    RenderDeadline,
    /// The database cannot be reached now (or stayed busy); nothing was changed.
    #[error("the database is unavailable")]
    Unavailable,
    /// A fault of the service; logged with its cause, shown generically.
    #[error("internal error")]
    Internal(#[source] anyhow::Error),
}

/// Where a user whose password change is due is sent: the account page's password form.
pub const PASSWORD_FORM: &str = "/portal/account#password";

/// The requests a user whose password change is due may still make: the account page, the
/// change itself, and leaving.
pub fn allowed_before_password_change(method: &actix_web::http::Method, path: &str) -> bool {
    use actix_web::http::Method;
    match *method {
        Method::GET => path == "/portal/account",
        Method::POST => matches!(
            path,
            "/portal/account/password" | "/portal/logout" | "/portal/account/sign-out-everywhere"
        ),
        _ => false,
    }
}

/// Marks the redirect to the login page of a request that needed a session.
#[derive(Debug, Clone, Copy)]
pub struct LoginRedirect;

/// `next` when it is a portal page to come back to after logging in: a path under `/portal/`
/// on this server (never `//host` or a backslash, which browsers read as another host), not
/// the login or logout itself.
pub fn page_to_return_to(next: &str) -> Option<&str> {
    let safe = next.starts_with("/portal/")
        && next.len() <= 2_000
        && !next.contains("//")
        && !next.contains('\\')
        && !next.chars().any(char::is_control)
        && !next.starts_with("/portal/login")
        && !next.starts_with("/portal/logout");
    safe.then_some(next)
}

/// Marks an error response for the portal middleware to render: the status's message key.
#[derive(Debug, Clone, Copy)]
pub struct ErrorPage {
    pub message_key: &'static str,
}

impl WebError {
    /// The translation key of the message shown.
    pub fn message_key(&self) -> &'static str {
        match self {
            WebError::NotFound => "error-not-found",
            WebError::Forbidden(Denied::LockOut) => "admin-not-yourself",
            WebError::Forbidden(_) => "error-forbidden",
            WebError::LoginRequired => "error-login-required",
            WebError::PasswordChangeDue { .. } => "password-change-due",
            WebError::Csrf => "error-csrf",
            WebError::BadRequest(key) | WebError::Conflict(key) => key,
            WebError::TooManyRequests { .. } => "error-too-many",
            WebError::RenderDeadline => "error-render-deadline",
            WebError::Unavailable => "error-unavailable",
            WebError::Internal(_) => "error-internal",
        }
    }
}

impl ResponseError for WebError {
    fn status_code(&self) -> StatusCode {
        match self {
            WebError::NotFound => StatusCode::NOT_FOUND,
            WebError::Forbidden(_) | WebError::Csrf => StatusCode::FORBIDDEN,
            WebError::LoginRequired | WebError::PasswordChangeDue { .. } => StatusCode::SEE_OTHER,
            WebError::BadRequest(_) => StatusCode::BAD_REQUEST,
            WebError::Conflict(_) => StatusCode::CONFLICT,
            WebError::TooManyRequests { .. } => StatusCode::TOO_MANY_REQUESTS,
            WebError::RenderDeadline | WebError::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
            WebError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    fn error_response(&self) -> HttpResponse {
        if let WebError::Internal(cause) = self {
            tracing::error!(error = format!("{cause:#}"), "portal request failed");
        }
        if let WebError::LoginRequired = self {
            // The portal middleware adds where to come back to (it has the request).
            let mut response = HttpResponse::SeeOther()
                .insert_header((header::LOCATION, "/portal/login"))
                .insert_header(("HX-Redirect", "/portal/login"))
                .finish();
            response.extensions_mut().insert(LoginRedirect);
            return response;
        }
        if let WebError::PasswordChangeDue { htmx } = *self {
            return if htmx {
                HttpResponse::Ok()
                    .insert_header(("HX-Redirect", PASSWORD_FORM))
                    .finish()
            } else {
                HttpResponse::SeeOther()
                    .insert_header((header::LOCATION, PASSWORD_FORM))
                    .finish()
            };
        }
        let mut builder = HttpResponse::build(self.status_code());
        if let WebError::Unavailable = self {
            builder.insert_header((
                header::RETRY_AFTER,
                crate::routes::api::error::RETRY_AFTER_UNAVAILABLE,
            ));
        }
        if let WebError::TooManyRequests { retry_after_secs } = *self {
            builder.insert_header((header::RETRY_AFTER, retry_after_secs.max(1)));
        }
        let mut response = builder
            .content_type("text/html; charset=utf-8")
            .body(self.message_key());
        response.extensions_mut().insert(ErrorPage {
            message_key: self.message_key(),
        });
        response
    }
}

impl From<StoreError> for WebError {
    fn from(err: StoreError) -> Self {
        match err {
            StoreError::NotFound => WebError::NotFound,
            StoreError::Denied(denied) => denied.into(),
            StoreError::EmailUsed => WebError::BadRequest("error-email-used"),
            StoreError::Changed => WebError::Conflict("error-changed-meanwhile"),
            StoreError::Unavailable(cause) => {
                tracing::warn!(error = %cause, "answered 503: the database is unavailable");
                WebError::Unavailable
            }
            other => WebError::Internal(other.into()),
        }
    }
}

impl From<Denied> for WebError {
    fn from(denied: Denied) -> Self {
        WebError::Forbidden(denied)
    }
}

impl From<ReportError> for WebError {
    fn from(err: ReportError) -> Self {
        match err {
            ReportError::NotReady(_) => WebError::BadRequest("error-no-results"),
            ReportError::Store(err) => err.into(),
            ReportError::Deadline(_) => WebError::RenderDeadline,
            ReportError::Internal(err) => err.into(),
        }
    }
}

impl From<ActionError> for WebError {
    fn from(err: ActionError) -> Self {
        match err {
            ActionError::Store(err) => err.into(),
            ActionError::Invalid { key, .. } => WebError::BadRequest(key),
            ActionError::Forbidden(_) => WebError::Forbidden(Denied::OwnReview),
            ActionError::State { key, .. } => WebError::BadRequest(key),
            ActionError::Report(err) => err.into(),
            ActionError::Throttled { retry_after_secs } => {
                WebError::TooManyRequests { retry_after_secs }
            }
            ActionError::Internal(err) => err.into(),
        }
    }
}

impl From<askama::Error> for WebError {
    fn from(err: askama::Error) -> Self {
        WebError::Internal(anyhow::anyhow!("template: {err}"))
    }
}

impl From<anyhow::Error> for WebError {
    fn from(err: anyhow::Error) -> Self {
        if crate::routes::api::error::unavailable(&err) {
            tracing::warn!(
                error = format!("{err:#}"),
                "answered 503: the database is unavailable"
            );
            return WebError::Unavailable;
        }
        if crate::routes::api::error::storage_fault(&err).is_some() {
            tracing::warn!(
                error = format!("{err:#}"),
                "answered 503: the file storage cannot be used"
            );
            return WebError::Unavailable;
        }
        WebError::Internal(err)
    }
}

impl From<actix_session::SessionInsertError> for WebError {
    fn from(err: actix_session::SessionInsertError) -> Self {
        WebError::Internal(anyhow::anyhow!("session: {err}"))
    }
}

impl From<actix_session::SessionGetError> for WebError {
    fn from(err: actix_session::SessionGetError) -> Self {
        WebError::Internal(anyhow::anyhow!("session: {err}"))
    }
}

impl From<crate::domain::id::IdFormatError> for WebError {
    fn from(_: crate::domain::id::IdFormatError) -> Self {
        // A malformed id names nothing that exists.
        WebError::NotFound
    }
}
