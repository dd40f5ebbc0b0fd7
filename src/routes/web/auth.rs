//! Login and logout. The password check is the token endpoint's (`Authenticator::verify_login`:
//! lockout and freezes) behind the same per-address throttle.

use actix_web::{HttpRequest, HttpResponse};
use askama::Template;
use serde::Deserialize;

use super::chrome::{Chrome, html, see_other};
use super::context::{CsrfForm, Member, Visitor};
use super::error::{WebError, page_to_return_to};
use super::session::{CSRF_KEY, LOGIN_AT_KEY, USER_KEY};
use crate::auth::LoginError;

#[derive(Template)]
#[template(path = "web/login.html")]
struct LoginPage {
    c: Chrome,
    email: String,
    error: Option<String>,
    /// The portal page to go to once logged in (see [`page_to_return_to`]), or empty.
    next: String,
}

/// Where the login page was asked to lead back to (`?next=`).
#[derive(Debug, Default, Deserialize)]
pub struct LoginQuery {
    pub next: Option<String>,
}

/// The login form.
pub async fn login_form(
    visitor: Visitor,
    query: actix_web::web::Query<LoginQuery>,
) -> Result<HttpResponse, WebError> {
    let next = query
        .next
        .as_deref()
        .and_then(page_to_return_to)
        .unwrap_or_default()
        .to_owned();
    if visitor.user.is_some() {
        return Ok(see_other(if next.is_empty() { "/portal/" } else { &next }));
    }
    html(&LoginPage {
        c: Chrome::new(&visitor, "login", "login-title"),
        email: String::new(),
        error: None,
        next,
    })
}

/// What the login form posts.
#[derive(Debug, Deserialize)]
pub struct LoginForm {
    pub email: String,
    pub password: String,
    /// The page to come back to; checked again here, since a form can say anything.
    #[serde(default)]
    pub next: String,
}

/// Checks the credentials; on success the session gets a new key (no fixation), the user and
/// a new CSRF token.
pub async fn login(
    req: HttpRequest,
    visitor: Visitor,
    CsrfForm(form): CsrfForm<LoginForm>,
) -> Result<HttpResponse, WebError> {
    let state = visitor.state.clone();
    let refused = |key: &str| -> Result<HttpResponse, WebError> {
        let mut response = html(&LoginPage {
            c: Chrome::new(&visitor, "login", "login-title"),
            email: form.email.clone(),
            error: Some(visitor.tr.text(key)),
            next: page_to_return_to(&form.next).unwrap_or_default().to_owned(),
        })?;
        *response.status_mut() = actix_web::http::StatusCode::UNAUTHORIZED;
        Ok(response)
    };
    let network = crate::routes::client_network(&req);
    let user = match state
        .actions
        .log_in(&form.email, &form.password, network)
        .await
    {
        Ok(user) => user,
        Err(LoginError::InvalidCredentials) => return refused("login-invalid"),
        Err(LoginError::Deactivated) => return refused("login-deactivated"),
        Err(LoginError::Frozen { .. } | LoginError::FreezeStarted { .. }) => {
            return refused("login-frozen");
        }
        Err(LoginError::Blocked) => return refused("login-blocked"),
        Err(LoginError::Throttled { retry_after_secs }) => {
            return Err(WebError::TooManyRequests { retry_after_secs });
        }
        Err(other) => return Err(WebError::Internal(other.into())),
    };
    let session = &visitor.session;
    session.renew();
    session.insert(USER_KEY, user.id)?;
    session.insert(LOGIN_AT_KEY, state.store.clock().now_millis())?;
    let mut bytes = [0u8; 32];
    rand::fill(&mut bytes);
    session.insert(CSRF_KEY, hex::encode(bytes))?;
    Ok(see_other(
        page_to_return_to(&form.next).unwrap_or("/portal/"),
    ))
}

/// Ends the session: its server-side state is deleted, so the old cookie opens nothing.
pub async fn logout(member: Member, CsrfForm(_): CsrfForm<Vec<(String, String)>>) -> HttpResponse {
    member.session.purge();
    see_other("/portal/login")
}

/// The start page: where each role works.
pub async fn home(visitor: Visitor) -> HttpResponse {
    match &visitor.user {
        None => see_other("/portal/login"),
        Some(record) if record.user.is_admin() => see_other("/portal/admin/users"),
        Some(record) if !record.staff_enlistments.is_empty() => see_other("/portal/worklist"),
        Some(_) => see_other("/portal/measurements"),
    }
}
