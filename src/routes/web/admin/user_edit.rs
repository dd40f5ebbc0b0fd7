//! An administrator's edit of one account's details: names, phone number, language and time
//! zone, through the same form and rules as the user's own account page.

use actix_web::HttpResponse;
use actix_web::http::StatusCode;
use actix_web::web::Path;
use askama::Template;

use crate::domain::id::Id;
use crate::routes::web::account::{LanguageChoice, language_choices};
use crate::routes::web::chrome::{Chrome, html, see_other};
use crate::routes::web::context::{CsrfForm, Member};
use crate::routes::web::details::{self, Details, DetailsForm, FieldRefusal};
use crate::routes::web::error::WebError;
use crate::routes::web::zones::{ZoneGroup, zone_groups};
use crate::store::AdminTask;
use crate::store::entities::user;

#[derive(Template)]
#[template(path = "web/admin_user_edit.html")]
struct EditPage {
    c: Chrome,
    id: Id,
    name: String,
    email: String,
    details: Details,
    languages: Vec<LanguageChoice>,
    zones: Vec<ZoneGroup>,
    notice: Option<String>,
    errors: Vec<(&'static str, String)>,
}

impl EditPage {
    /// The message beside field `id`, if it was refused.
    fn error_for(&self, id: &str) -> Option<&str> {
        details::message_for(&self.errors, id)
    }
}

/// User `id` for its edit page: administrators only, and only an account they see.
async fn user_to_edit(member: &Member, id: &Id) -> Result<user::Model, WebError> {
    Ok(member
        .state
        .store
        .user_to_administer(&member.viewer(), id, AdminTask::Administer)
        .await?)
}

async fn page(
    member: &Member,
    user: &user::Model,
    draft: Option<(Details, Vec<FieldRefusal>)>,
    notice: Option<&str>,
) -> Result<HttpResponse, WebError> {
    let (details, errors) = draft.unwrap_or_else(|| (Details::of(user), Vec::new()));
    let refused = !errors.is_empty();
    let mut response = html(&EditPage {
        c: Chrome::new(member, "admin", "admin-user-edit").about(user.full_name()),
        id: user.id,
        name: user.full_name(),
        email: user.email.clone(),
        languages: language_choices(details.language.unwrap_or(member.tr.language())),
        zones: zone_groups(
            &member.tr,
            member.state.store.clock().now(),
            &details.time_zone,
        ),
        details,
        notice: notice.map(|key| member.tr.text(key)),
        errors: errors
            .into_iter()
            .map(|(field, key)| (field, member.tr.text(key)))
            .collect(),
    })?;
    if refused {
        *response.status_mut() = StatusCode::BAD_REQUEST;
    }
    Ok(response)
}

/// The edit form of user `id` (`?saved=1` after a change).
pub async fn edit_user_form(
    member: Member,
    id: Path<String>,
    req: actix_web::HttpRequest,
) -> Result<HttpResponse, WebError> {
    let id = Id::parse(&id)?;
    let saved = req.query_string().split('&').any(|p| p == "saved=1");
    let user = user_to_edit(&member, &id).await?;
    page(&member, &user, None, saved.then_some("account-saved")).await
}

/// Saves user `id`'s details; a refusal shows the form as typed, each refused field saying why.
pub async fn edit_user(
    member: Member,
    id: Path<String>,
    CsrfForm(form): CsrfForm<DetailsForm>,
) -> Result<HttpResponse, WebError> {
    let id = Id::parse(&id)?;
    let user = user_to_edit(&member, &id).await?;
    let changes = match details::parse(&form) {
        Ok(changes) => changes,
        Err(refused) => {
            let typed = Details::typed(&form, &user);
            return page(&member, &user, Some((typed, refused)), None).await;
        }
    };
    member
        .state
        .actions
        .change_account(&member.viewer(), &id, changes)
        .await?;
    Ok(see_other(&format!("/portal/admin/users/{id}?saved=1")))
}
