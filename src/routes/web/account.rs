//! The user's own record (interface.md 2.4), language and time zone, and password.

use actix_web::HttpResponse;
use askama::Template;
use serde::Deserialize;

use super::chrome::{Chrome, html, see_other};
use super::context::{CsrfForm, Member};
use super::error::WebError;
use crate::actions::{AccountChanges, ActionError};
use crate::domain::account::{Language, NewPassword, TimeZone};
use crate::domain::id::Id;
use crate::store::StoreError;
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
    created: String,
    updated: String,
    roles: String,
    notice: Option<String>,
    error: Option<String>,
}

async fn page(
    member: Member,
    notice: Option<&str>,
    error: Option<&str>,
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
            until: member.date(e.expiry_timestamp),
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
    let zones = super::zones::zone_groups(&member.tr, store.clock().now(), &record.user.time_zone);
    html(&AccountPage {
        c: Chrome::new(&member, "account", "account-title"),
        languages: language_choices(member.tr.language()),
        zones,
        patient_rows,
        staff_rows,
        created: member.datetime(record.user.creation_timestamp),
        updated: member.datetime(record.user.update_timestamp),
        roles: record
            .user
            .role_names()
            .map_err(StoreError::from)?
            .join(", "),
        notice: notice.map(|k| member.tr.text(k)),
        error: error.map(|k| member.tr.text(k)),
        m: member,
    })
}

/// The account page (`?saved=1` after a settings change).
pub async fn show(member: Member, req: actix_web::HttpRequest) -> Result<HttpResponse, WebError> {
    let saved = req.query_string().split('&').any(|p| p == "saved=1");
    page(member, saved.then_some("account-saved"), None).await
}

/// Language and time zone.
#[derive(Debug, Deserialize)]
pub struct SettingsForm {
    pub language: String,
    pub time_zone: String,
}

/// Changes language and time zone; the next page is in the new language.
pub async fn save_settings(
    member: Member,
    CsrfForm(form): CsrfForm<SettingsForm>,
) -> Result<HttpResponse, WebError> {
    let (Ok(language), Ok(zone)) = (
        Language::parse_field(&form.language),
        TimeZone::parse_field(&form.time_zone),
    ) else {
        return page(member, None, Some("account-settings-invalid")).await;
    };
    let changes = AccountChanges {
        language: Some(language),
        time_zone: Some(zone),
        ..AccountChanges::default()
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
    member: Member,
    CsrfForm(form): CsrfForm<PasswordForm>,
) -> Result<HttpResponse, WebError> {
    if form.new != form.confirm {
        return page(member, None, Some("password-mismatch")).await;
    }
    let Ok(password) = NewPassword::parse(&form.new) else {
        return page(member, None, Some("password-too-short")).await;
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
            page(member, Some("password-changed"), None).await
        }
        Err(ActionError::Invalid { key, .. }) => page(member, None, Some(key)).await,
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
