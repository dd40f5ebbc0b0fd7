//! The user's own record (interface.md 2.4), language and time zone, password, and an
//! e-mail address change confirmed from the new address.

use actix_web::HttpResponse;
use actix_web::http::StatusCode;
use actix_web::web::Path;
use askama::Template;
use serde::Deserialize;

use super::chrome::{Chrome, html, see_other};
use super::context::{CsrfForm, Member, Visitor};
use super::details::{self, Details, DetailsForm};
use super::error::WebError;
use crate::actions::ActionError;
use crate::domain::account::{Email, Language, NewPassword};
use crate::domain::id::Id;
use crate::store::StoreError;
use crate::store::entities::consent::{self, ConsentDoor, ConsentKind};
use crate::store::entities::user;

/// A language as the picker shows it: in its own name.
pub struct LanguageChoice {
    pub code: &'static str,
    pub name: &'static str,
    pub selected: bool,
}

/// The eight languages, each named in itself.
pub fn language_choices(current: Language) -> Vec<LanguageChoice> {
    Language::ALL
        .into_iter()
        .map(|l| LanguageChoice {
            code: l.code(),
            name: match l {
                Language::De => "Deutsch",
                Language::En => "English",
                Language::Es => "Español",
                Language::Fr => "Français",
                Language::It => "Italiano",
                Language::Nl => "Nederlands",
                Language::Ar => "العربية",
                Language::Zh => "中文",
            },
            selected: l == current,
        })
        .collect()
}

/// A group the patient's data is shared with (a running prescription), with the consent
/// recorded when it started: `version` is `None` for a prescription older than consents'
/// records, which is then shared since the prescription started.
pub struct SharingRow {
    pub group_id: String,
    pub group: String,
    pub since: String,
    pub version: Option<String>,
}

/// One row of an enlistment table.
pub struct EnlistmentRow {
    pub group: String,
    pub since: String,
    pub until: String,
    pub expired: bool,
    pub roles: String,
}

#[derive(Template)]
#[template(path = "web/account.html")]
struct AccountPage {
    c: Chrome,
    m: Member,
    languages: Vec<LanguageChoice>,
    zones: Vec<super::zones::ZoneGroup>,
    patient_rows: Vec<EnlistmentRow>,
    staff_rows: Vec<EnlistmentRow>,
    /// The groups the member's data is shared with, each to be stopped on its own.
    sharing: Vec<SharingRow>,
    /// The consent to the processing of health data in force, in words, when one is recorded.
    health_consent: Option<String>,
    created: String,
    updated: String,
    roles: String,
    notice: Option<String>,
    /// The details form: the stored details, or what was typed when it was refused.
    details: Details,
    /// Why a form was refused: each field it is about and the message, shown beside it.
    errors: Vec<(&'static str, String)>,
    /// Whether the server sends e-mail (an address change is confirmed by mail).
    mail: bool,
}

impl AccountPage {
    /// The message about the field `id`, if the refusal is about it.
    fn error_for(&self, id: &str) -> Option<&str> {
        details::message_for(&self.errors, id)
    }
}

/// A refusal: the id of the field it is about, and the message's key.
type Refusal = (&'static str, &'static str);

async fn page(
    member: Member,
    notice: Option<String>,
    error: Option<Refusal>,
) -> Result<HttpResponse, WebError> {
    let details = Details::of(member.user());
    page_with(member, notice, error.into_iter().collect(), details).await
}

/// The account page with the details form as `details` holds it, refused as `errors` say.
async fn page_with(
    member: Member,
    notice: Option<String>,
    errors: Vec<Refusal>,
    details: Details,
) -> Result<HttpResponse, WebError> {
    let store = &member.state.store;
    let record = &member.record;
    let mut group_ids: Vec<Id> = record
        .patient_enlistments
        .iter()
        .map(|e| e.group_id)
        .chain(record.staff_enlistments.iter().map(|e| e.group_id))
        .collect();
    group_ids.dedup();
    let names = store.group_names(&group_ids).await?;
    let now = store.clock().now_millis();
    let name = |id: &Id| names.get(id).cloned().unwrap_or_else(|| id.to_string());
    let patient_rows = record
        .patient_enlistments
        .iter()
        .map(|e| EnlistmentRow {
            group: name(&e.group_id),
            since: member.date(e.creation_timestamp),
            until: member.last_day(e.expiry_timestamp),
            expired: e.expiry_timestamp <= now,
            roles: String::new(),
        })
        .collect();
    let staff_rows = record
        .staff_enlistments
        .iter()
        .map(|e| {
            Ok(EnlistmentRow {
                group: name(&e.group_id),
                since: member.date(e.creation_timestamp),
                until: String::new(),
                expired: false,
                roles: user::role_names(&e.roles)?.join(", "),
            })
        })
        .collect::<Result<Vec<_>, StoreError>>()?;
    let consents = store.consents_of(&member.viewer(), member.id()).await?;
    let sharing = record
        .patient_enlistments
        .iter()
        .filter(|e| e.expiry_timestamp > now)
        .map(|e| {
            let given = latest(&consents, ConsentKind::GroupSharing, Some(e.group_id));
            SharingRow {
                group_id: e.group_id.to_string(),
                group: name(&e.group_id),
                since: member.date(given.map_or(e.creation_timestamp, |c| c.creation_timestamp)),
                version: given.map(|c| c.text_version.clone()),
            }
        })
        .collect();
    let health_consent = latest(&consents, ConsentKind::HealthData, None).map(|c| {
        member.tr.text_with(
            "consent-health-data",
            &[
                ("date", member.date(c.creation_timestamp)),
                ("version", c.text_version.clone()),
            ],
        )
    });
    let zones = super::zones::zone_groups(&member.tr, store.clock().now(), &details.time_zone);
    let mut response = html(&AccountPage {
        c: Chrome::new(&member, "account", "account-title"),
        languages: language_choices(details.language.unwrap_or(member.tr.language())),
        zones,
        patient_rows,
        staff_rows,
        sharing,
        health_consent,
        created: member.datetime(record.user.creation_timestamp),
        updated: member.datetime(record.user.update_timestamp),
        roles: record
            .user
            .role_names()
            .map_err(StoreError::from)?
            .join(", "),
        notice,
        mail: member.state.actions.sends_mail(),
        errors: errors
            .iter()
            .map(|(field, key)| (*field, member.tr.text(key)))
            .collect(),
        details,
        m: member,
    })?;
    if !errors.is_empty() {
        *response.status_mut() = StatusCode::BAD_REQUEST;
    }
    Ok(response)
}

/// The consent of `kind` (for sharing, with `group`) in force, if it is a given one: the
/// latest recorded.
fn latest(
    consents: &[consent::Model],
    kind: ConsentKind,
    group: Option<Id>,
) -> Option<&consent::Model> {
    consents
        .iter()
        .rev()
        .find(|c| c.kind == kind && c.group_id == group)
        .filter(|c| c.given)
}

/// The account page (`?saved=1` after a settings change, `?withdrawn=1` after sharing with a
/// group stopped).
pub async fn show(member: Member, req: actix_web::HttpRequest) -> Result<HttpResponse, WebError> {
    let flag = |name: &str| {
        req.query_string()
            .split('&')
            .any(|p| p.strip_suffix("=1") == Some(name))
    };
    let notice = if flag("saved") {
        Some(member.tr.text("account-saved"))
    } else if flag("withdrawn") {
        Some(member.tr.text("consent-withdrawn"))
    } else {
        None
    };
    page(member, notice, None).await
}

/// The group to stop sharing with.
#[derive(Debug, Deserialize)]
pub struct WithdrawForm {
    pub group_id: String,
}

/// Stops sharing the member's data with a group (after the page's confirmation): the group's
/// access ends as when its prescription ends, and the withdrawal is recorded.
pub async fn withdraw_sharing(
    member: Member,
    CsrfForm(form): CsrfForm<WithdrawForm>,
) -> Result<HttpResponse, WebError> {
    let group = Id::parse(&form.group_id).map_err(|_| WebError::NotFound)?;
    let me = *member.id();
    member
        .state
        .actions
        .withdraw_group_sharing(&member.viewer(), &me, &group, ConsentDoor::Portal)
        .await?;
    Ok(see_other("/portal/account?withdrawn=1#sharing"))
}

/// Changes the account's details (names, phone number, language, time zone); the next page is
/// in the new language. A refusal shows the form as it was typed, each refused field saying
/// why.
pub async fn save_settings(
    member: Member,
    CsrfForm(form): CsrfForm<DetailsForm>,
) -> Result<HttpResponse, WebError> {
    let changes = match details::parse(&form) {
        Ok(changes) => changes,
        Err(refused) => {
            let typed = Details::typed(&form, member.user());
            return page_with(member, None, refused, typed).await;
        }
    };
    let me = *member.id();
    member
        .state
        .actions
        .change_account(&member.viewer(), &me, changes)
        .await?;
    Ok(see_other("/portal/account?saved=1"))
}

/// A password change.
#[derive(Debug, Deserialize)]
pub struct PasswordForm {
    pub current: String,
    pub new: String,
    pub confirm: String,
}

/// Changes the password after checking the current one (under the login lockout rules).
pub async fn change_password(
    req: actix_web::HttpRequest,
    mut member: Member,
    CsrfForm(form): CsrfForm<PasswordForm>,
) -> Result<HttpResponse, WebError> {
    if form.new != form.confirm {
        return page(member, None, Some(("confirm", "password-mismatch"))).await;
    }
    let password = match NewPassword::check(&form.new) {
        Ok(password) => password,
        Err(refusal) => return page(member, None, Some(("new", refusal.key()))).await,
    };
    let changed = member
        .state
        .actions
        .change_password(
            &member.viewer(),
            &member.user().email,
            &form.current,
            password,
            crate::routes::client_network(&req),
        )
        .await;
    match changed {
        Ok(()) => {
            // Every session of the account has ended; this one goes on under a new key.
            member.session.renew();
            // The change cleared what the record read at the start of the request said.
            member.record.user.password_change_due = false;
            if let Some(record) = member.visitor.user.as_mut() {
                record.user.password_change_due = false;
            }
            let notice = member.tr.text("password-changed");
            page(member, Some(notice), None).await
        }
        Err(ActionError::Invalid { key, .. }) => page(member, None, Some(("current", key))).await,
        Err(err) => Err(err.into()),
    }
}

/// Ends every login of the account (API tokens and portal sessions, this one too).
pub async fn sign_out_everywhere(
    member: Member,
    CsrfForm(_): CsrfForm<Vec<(String, String)>>,
) -> Result<HttpResponse, WebError> {
    member
        .state
        .actions
        .sign_out_everywhere(&member.viewer())
        .await?;
    member.session.purge();
    Ok(see_other("/portal/login"))
}

/// An address change: the new address and the current password.
#[derive(Debug, Deserialize)]
pub struct EmailForm {
    pub email: String,
    pub password: String,
}

/// Sends a confirmation link to the new address; the address changes when it is opened.
pub async fn change_email(
    req: actix_web::HttpRequest,
    member: Member,
    CsrfForm(form): CsrfForm<EmailForm>,
) -> Result<HttpResponse, WebError> {
    let Ok(email) = Email::parse(&form.email) else {
        return page(member, None, Some(("new-email", "email-invalid"))).await;
    };
    let requested = member
        .state
        .actions
        .request_email_change(
            &member.viewer(),
            &member.user().email,
            &form.password,
            email.clone(),
            crate::routes::client_network(&req),
        )
        .await;
    match requested {
        Ok(()) => {
            let notice = member
                .tr
                .text_with("email-change-sent", &[("email", email.as_str().to_owned())]);
            page(member, Some(notice), None).await
        }
        Err(ActionError::Invalid { key, .. } | ActionError::State { key, .. }) => {
            page(member, None, Some(("email-password", key))).await
        }
        Err(ActionError::Store(StoreError::EmailUsed)) => {
            page(member, None, Some(("new-email", "error-email-used"))).await
        }
        Err(err) => Err(err.into()),
    }
}

#[derive(Template)]
#[template(path = "web/email_confirm.html")]
struct ConfirmPage {
    c: Chrome,
    secret: String,
    done: Option<String>,
    error: Option<String>,
}

/// The page of a confirmation link: one button, so that a mail scanner fetching the link
/// changes nothing.
pub async fn confirm_email_form(
    visitor: Visitor,
    secret: Path<String>,
) -> Result<HttpResponse, WebError> {
    html(&ConfirmPage {
        c: Chrome::new(&visitor, "account", "email-confirm-title"),
        secret: secret.into_inner(),
        done: None,
        error: None,
    })
}

/// Changes the address through the link, which is spent.
pub async fn confirm_email(
    visitor: Visitor,
    secret: Path<String>,
    CsrfForm(_): CsrfForm<Vec<(String, String)>>,
) -> Result<HttpResponse, WebError> {
    let confirmed = visitor.state.actions.confirm_email_change(&secret).await;
    let (done, error, status) = match confirmed {
        Ok(user) => (
            Some(
                visitor
                    .tr
                    .text_with("email-changed", &[("email", user.email)]),
            ),
            None,
            StatusCode::OK,
        ),
        Err(ActionError::State { key, .. }) => (None, Some(visitor.tr.text(key)), StatusCode::GONE),
        Err(ActionError::Store(StoreError::EmailUsed)) => (
            None,
            Some(visitor.tr.text("error-email-used")),
            StatusCode::CONFLICT,
        ),
        Err(err) => return Err(err.into()),
    };
    let mut response = html(&ConfirmPage {
        c: Chrome::new(&visitor, "account", "email-confirm-title"),
        secret: String::new(),
        done,
        error,
    })?;
    *response.status_mut() = status;
    Ok(response)
}

#[derive(Template)]
#[template(path = "web/email_stop.html")]
struct StopPage {
    c: Chrome,
    secret: String,
    done: bool,
    error: Option<String>,
}

/// The page of a link that stops an address change (sent to the current address): one
/// button, so that a mail scanner fetching the link changes nothing.
pub async fn stop_email_form(
    visitor: Visitor,
    secret: Path<String>,
) -> Result<HttpResponse, WebError> {
    let open = visitor
        .state
        .actions
        .email_change_stop_is_open(&secret)
        .await?;
    let mut response = html(&StopPage {
        c: Chrome::new(&visitor, "account", "email-stop-title"),
        secret: if open {
            secret.into_inner()
        } else {
            String::new()
        },
        done: false,
        error: (!open).then(|| visitor.tr.text("account-link-closed")),
    })?;
    if !open {
        *response.status_mut() = StatusCode::GONE;
    }
    Ok(response)
}

/// Stops the address change through the link, which is spent; every login ends.
pub async fn stop_email(
    visitor: Visitor,
    secret: Path<String>,
    CsrfForm(_): CsrfForm<Vec<(String, String)>>,
) -> Result<HttpResponse, WebError> {
    let (done, error, status) = match visitor.state.actions.stop_email_change(&secret).await {
        Ok(()) => (true, None, StatusCode::OK),
        Err(ActionError::State { key, .. }) => {
            (false, Some(visitor.tr.text(key)), StatusCode::GONE)
        }
        Err(err) => return Err(err.into()),
    };
    let mut response = html(&StopPage {
        c: Chrome::new(&visitor, "account", "email-stop-title"),
        secret: String::new(),
        done,
        error,
    })?;
    *response.status_mut() = status;
    Ok(response)
}
