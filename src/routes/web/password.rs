//! A forgotten password: the address is asked for and a single-use link is e-mailed
//! (`Actions::request_password_reset`), whose page sets a new password. The answer is the
//! same whether or not the address has an account.

use actix_web::{HttpRequest, HttpResponse};
use askama::Template;
use serde::Deserialize;

use super::chrome::{Chrome, html};
use super::context::{CsrfForm, Visitor};
use super::error::WebError;
use crate::actions::{ActionError, RESET_LINK_HOURS};
use crate::domain::account::NewPassword;

#[derive(Template)]
#[template(path = "web/password_forgot.html")]
struct ForgotPage {
    c: Chrome,
    /// Whether the server can send e-mail at all.
    mail: bool,
    /// After a request: the notice that a link is on its way (if the address has an account).
    sent: bool,
}

/// The forgotten-password page: the form, or after a request the notice.
fn forgot_page(visitor: &Visitor, sent: bool) -> Result<HttpResponse, WebError> {
    html(&ForgotPage {
        c: Chrome::new(visitor, "login", "forgot-title"),
        mail: visitor.state.actions.sends_mail(),
        sent,
    })
}

/// The form that asks for the address.
pub async fn forgot_form(visitor: Visitor) -> Result<HttpResponse, WebError> {
    forgot_page(&visitor, false)
}

/// What the forgotten-password form posts.
#[derive(Debug, Deserialize)]
pub struct ForgotForm {
    pub email: String,
}

/// Sends a reset link if the address has an active account; says the same either way, after
/// the same work. The login throttle bounds how often one network may ask.
pub async fn forgot(
    req: HttpRequest,
    visitor: Visitor,
    CsrfForm(form): CsrfForm<ForgotForm>,
) -> Result<HttpResponse, WebError> {
    let network = crate::routes::client_network(&req);
    visitor
        .state
        .actions
        .request_password_reset(&form.email, network)?;
    forgot_page(&visitor, true)
}

#[derive(Template)]
#[template(path = "web/password_reset.html")]
struct ResetPage {
    c: Chrome,
    secret: String,
    /// Whether the link still works; a used or expired one offers a new request instead.
    open: bool,
    error: Option<String>,
    done: bool,
    /// Why a link no longer works, with how long links last.
    closed: String,
}

impl ResetPage {
    fn new(visitor: &Visitor, secret: String, open: bool) -> Self {
        ResetPage {
            c: Chrome::new(visitor, "login", "reset-title"),
            secret,
            open,
            error: None,
            done: false,
            closed: visitor
                .tr
                .text_with_count("reset-closed", "hours", RESET_LINK_HOURS),
        }
    }
}

/// The page of a reset link: the new-password form, or why the link no longer works.
pub async fn reset_form(
    visitor: Visitor,
    secret: actix_web::web::Path<String>,
) -> Result<HttpResponse, WebError> {
    let secret = secret.into_inner();
    let open = visitor
        .state
        .actions
        .password_reset_is_open(&secret)
        .await?;
    let page = ResetPage::new(&visitor, secret, open);
    let mut response = html(&page)?;
    if !open {
        *response.status_mut() = actix_web::http::StatusCode::GONE;
    }
    Ok(response)
}

/// What the reset form posts.
#[derive(Debug, Deserialize)]
pub struct ResetForm {
    pub new: String,
    pub confirm: String,
}

/// Sets the new password; the link is spent and every login of the account ends.
pub async fn reset(
    visitor: Visitor,
    secret: actix_web::web::Path<String>,
    CsrfForm(form): CsrfForm<ResetForm>,
) -> Result<HttpResponse, WebError> {
    let secret = secret.into_inner();
    let refused = |key: &str, open: bool| -> Result<HttpResponse, WebError> {
        let mut page = ResetPage::new(&visitor, secret.clone(), open);
        page.error = Some(visitor.tr.text(key));
        let mut response = html(&page)?;
        *response.status_mut() = if open {
            actix_web::http::StatusCode::BAD_REQUEST
        } else {
            actix_web::http::StatusCode::GONE
        };
        Ok(response)
    };
    if form.new != form.confirm {
        return refused("password-mismatch", true);
    }
    let password = match NewPassword::check(&form.new) {
        Ok(password) => password,
        Err(refusal) => return refused(refusal.key(), true),
    };
    match visitor
        .state
        .actions
        .reset_password(&secret, password)
        .await
    {
        Ok(_) => {
            // Any session this browser had belonged to the old password.
            visitor.session.purge();
            let mut page = ResetPage::new(&visitor, String::new(), false);
            page.done = true;
            html(&page)
        }
        Err(ActionError::State { key, .. }) => refused(key, false),
        Err(err) => Err(err.into()),
    }
}
