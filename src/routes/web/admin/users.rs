//! The administrators' user list: search and order, creation, activation, unblocking after a
//! lockout, a password reset and the admin role; each change answers with its row for htmx.

use actix_web::HttpResponse;
use actix_web::web::{Path, Query};
use askama::Template;
use serde::Deserialize;

use crate::actions::{ActionError, NewAccount, RoleChange};
use crate::auth::lockout::{self, LockState};
use crate::domain::account::{Email, Language, NewPassword, PersonName, Role, TimeZone};
use crate::domain::id::Id;
use crate::domain::person_name::full_name;
use crate::domain::rql::{Expr as RqlExpr, Query as ListQuery, Value as RqlValue};
use crate::routes::web::account::{LanguageChoice, language_choices};
use crate::routes::web::chrome::{Chrome, html, see_other};
use crate::routes::web::context::{CsrfForm, Member, Visitor};
use crate::routes::web::error::WebError;
use crate::routes::web::measurements::Choice;
use crate::routes::web::view::{self, PAGE_SIZE, Pager};
use crate::routes::web::zones::{ZoneGroup, zone_groups};
use crate::store::StoreError;
use crate::store::entities::user;
use crate::store::resources::USERS;

/// A user in the administrators' list.
pub struct UserRow {
    pub id: Id,
    pub name: String,
    pub email: String,
    pub language: String,
    pub active: bool,
    pub admin: bool,
    /// `open`, `frozen` or `blocked`.
    pub lock: &'static str,
    pub lock_label: String,
    pub failed_count: i32,
    /// The administrator's own row: no deactivating or demoting oneself.
    pub own: bool,
    /// What the action just taken on this row did, said where it was taken.
    pub notice: Option<String>,
    /// A password reset link to hand to the user, shown once, under the notice (servers that
    /// send no e-mail).
    pub handover: Option<String>,
    /// The question asked before a password reset: the link is e-mailed, or handed over.
    pub reset_confirm: &'static str,
    /// Administrator, and the care teams the user works in: `Administrator · Staff of Group A`.
    pub roles: String,
}

/// The rows of `records`, their care teams named (one query for all of them).
async fn user_rows(
    member: &Member,
    records: &[crate::store::UserRecord],
    now: i64,
) -> Result<Vec<UserRow>, WebError> {
    let groups: Vec<Id> = records
        .iter()
        .flat_map(|r| r.staff_enlistments.iter().map(|e| e.group_id))
        .collect();
    let names = member.state.store.group_names(&groups).await?;
    Ok(records
        .iter()
        .map(|record| {
            let mut row = user_row(member, &record.user, now);
            let mut roles: Vec<String> = Vec::new();
            if row.admin {
                roles.push(member.tr.text("role-admin"));
            }
            for enlistment in &record.staff_enlistments {
                let group = names
                    .get(&enlistment.group_id)
                    .cloned()
                    .unwrap_or_else(|| enlistment.group_id.to_string());
                roles.push(member.tr.text_with("role-staff-of", &[("group", group)]));
            }
            row.roles = roles.join(" · ");
            row
        })
        .collect())
}

fn user_row(visitor: &Visitor, u: &user::Model, now: i64) -> UserRow {
    let lock = match lockout::state(u.failed_count, u.last_failed_timestamp, now) {
        LockState::Open => "open",
        LockState::Frozen { .. } => "frozen",
        LockState::Blocked => "blocked",
    };
    UserRow {
        id: u.id,
        // An erased account has no name left: the list says what it is.
        name: if u.erased_timestamp.is_some() {
            visitor.tr.text("erase-tombstone")
        } else {
            full_name(&u.first_name, &u.last_name)
        },
        email: u.email.clone(),
        language: u.language.clone(),
        active: u.activation,
        admin: u.is_admin(),
        lock,
        lock_label: visitor.tr.text(&format!("lock-{lock}")),
        failed_count: u.failed_count,
        own: visitor.user.as_ref().is_some_and(|me| me.user.id == u.id),
        notice: None,
        handover: None,
        reset_confirm: if visitor.state.actions.sends_mail() {
            "admin-confirm-reset-password"
        } else {
            "admin-confirm-reset-password-handover"
        },
        roles: String::new(),
    }
}

#[derive(Template)]
#[template(path = "web/admin_users.html")]
struct UsersPage {
    c: Chrome,
    rows: Vec<UserRow>,
    pager: Pager,
    /// What the list was searched for.
    search: String,
    sorts: Vec<Choice>,
    languages: Vec<LanguageChoice>,
    zones: Vec<ZoneGroup>,
    /// The new-account form: empty, or what was typed when it was refused; its text fields.
    draft: NewUserDraft,
    fields: Vec<DraftField>,
    notice: Option<String>,
    error: Option<String>,
    /// A password reset link to hand over, shown once.
    handover: Option<Handover>,
}

/// The new-account form as the page shows it: what was typed (never the password, which is
/// typed again) and, beside each refused field, why.
#[derive(Debug, Clone, Default)]
pub struct NewUserDraft {
    pub first_name: String,
    pub last_name: String,
    pub email: String,
    pub language: Option<Language>,
    pub time_zone: String,
    pub admin: bool,
    /// Field name and message, in the form's order.
    pub errors: Vec<(&'static str, String)>,
}

/// A text field of the new-account form.
pub struct DraftField {
    /// The form field's name, and the element's id.
    pub name: &'static str,
    pub id: &'static str,
    /// The label's message key.
    pub label: &'static str,
    pub kind: &'static str,
    pub value: String,
    pub autocomplete: &'static str,
    pub error: Option<String>,
}

impl NewUserDraft {
    /// The form's text fields, in order, with their values and errors.
    fn fields(&self) -> Vec<DraftField> {
        let field = |name, id, label, kind, value: &str, autocomplete| DraftField {
            name,
            id,
            label,
            kind,
            value: value.to_owned(),
            autocomplete,
            error: self.error(name).map(str::to_owned),
        };
        vec![
            field(
                "first_name",
                "first_name",
                "field-first-name",
                "text",
                &self.first_name,
                "off",
            ),
            field(
                "last_name",
                "last_name",
                "field-last-name",
                "text",
                &self.last_name,
                "off",
            ),
            field(
                "email",
                "new-email",
                "field-email",
                "email",
                &self.email,
                "off",
            ),
            field(
                "password",
                "new-password",
                "field-password",
                "password",
                "",
                "new-password",
            ),
        ]
    }

    /// The message beside `field`, if it was refused.
    pub fn error(&self, field: &str) -> Option<&str> {
        crate::routes::web::details::message_for(&self.errors, field)
    }
}

#[derive(Template)]
#[template(path = "web/admin_user_row.html")]
struct UserRowFragment {
    c: Chrome,
    row: UserRow,
}

async fn users_page(
    member: &Member,
    page: u64,
    notice: Option<&str>,
    error: Option<&str>,
) -> Result<HttpResponse, WebError> {
    let shown = Shown {
        notice,
        error,
        ..Shown::default()
    };
    users_page_searched(member, page, "", UserSort::Name, shown).await
}

/// What the user list shows besides the list: a notice or an error (message keys), a reset
/// link to hand over, and the new-account form as it was refused.
#[derive(Default)]
struct Shown<'a> {
    notice: Option<&'a str>,
    error: Option<&'a str>,
    handover: Option<Handover>,
    draft: Option<NewUserDraft>,
}

/// The orders of the user list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum UserSort {
    /// By last name, then first name.
    Name,
    Email,
    /// The newest account first.
    Newest,
}

impl UserSort {
    const ALL: [UserSort; 3] = [UserSort::Name, UserSort::Email, UserSort::Newest];

    fn as_str(self) -> &'static str {
        match self {
            UserSort::Name => "name",
            UserSort::Email => "email",
            UserSort::Newest => "newest",
        }
    }

    /// The order named `value`; by name when it names none.
    fn parse(value: Option<&str>) -> Self {
        Self::ALL
            .into_iter()
            .find(|s| Some(s.as_str()) == value)
            .unwrap_or(UserSort::Name)
    }

    /// The list query in this order (the id last, so that pages never overlap).
    fn apply(self, query: ListQuery) -> ListQuery {
        match self {
            UserSort::Name => query
                .sort_by("last_name", false)
                .sort_by("first_name", false),
            UserSort::Email => query.sort_by("email", false),
            UserSort::Newest => query.sort_by("creation_timestamp", true),
        }
        .sort_by("id", false)
    }
}

async fn users_page_searched(
    member: &Member,
    page: u64,
    search: &str,
    sort: UserSort,
    shown: Shown<'_>,
) -> Result<HttpResponse, WebError> {
    let Shown {
        notice,
        error,
        handover,
        draft,
    } = shown;
    let mut query = ListQuery::default();
    // Part of a name or an address, in any case: the API's own `like`, whose `*` is its only
    // wildcard (and so is dropped from what was typed).
    let search = view::search_text(Some(&search.replace('*', "")));
    if !search.is_empty() {
        let like = |field: &str| RqlExpr::Like {
            field: field.to_owned(),
            pattern: RqlValue::String(format!("*{search}*")),
        };
        query = query.and(RqlExpr::Or(vec![
            like("first_name"),
            like("last_name"),
            like("email"),
        ]));
    }
    let query = sort.apply(query).page(PAGE_SIZE, page * PAGE_SIZE);
    let spec = view::list_spec(&USERS, &query)?;
    let store = &member.state.store;
    let (records, total) = store.users_to_administer(&member.viewer(), &spec).await?;
    let now = store.clock().now_millis();
    let mut base = Vec::new();
    if !search.is_empty() {
        base.push(("q", search.as_str()));
    }
    if sort != UserSort::Name {
        base.push(("sort", sort.as_str()));
    }
    let base = view::query_string(&base);
    // A fresh form proposes the administrator's own language and zone.
    let draft = draft.unwrap_or_else(|| NewUserDraft {
        time_zone: member.user().time_zone.clone(),
        ..NewUserDraft::default()
    });
    let mut response = html(&UsersPage {
        sorts: UserSort::ALL
            .into_iter()
            .map(|s| Choice {
                value: s.as_str().to_owned(),
                label: member.tr.text(&format!("admin-users-sort-{}", s.as_str())),
                selected: s == sort,
            })
            .collect(),
        c: Chrome::new(member, "admin", "admin-users-title"),
        rows: user_rows(member, &records, now).await?,
        pager: Pager::new(page, total.unwrap_or(0), &base),
        search,
        languages: language_choices(draft.language.unwrap_or(member.tr.language())),
        zones: zone_groups(&member.tr, store.clock().now(), &draft.time_zone),
        fields: draft.fields(),
        draft,
        notice: notice.map(|k| member.tr.text(k)),
        error: error.map(|k| member.tr.text(k)),
        handover,
    })?;
    if error.is_some() {
        *response.status_mut() = actix_web::http::StatusCode::BAD_REQUEST;
    }
    Ok(response)
}

/// The user list's query: a page, a search and an order (`name`, `email`, `newest`).
#[derive(Debug, Default, Deserialize)]
pub struct UsersQuery {
    pub page: Option<u64>,
    pub q: Option<String>,
    pub sort: Option<String>,
}

/// Every user (or those whose name or address holds the search), paged, with the form to
/// create one.
pub async fn users(member: Member, query: Query<UsersQuery>) -> Result<HttpResponse, WebError> {
    let page = query.page.unwrap_or(0).min(10_000);
    let search = query.q.as_deref().unwrap_or("");
    let sort = UserSort::parse(query.sort.as_deref());
    users_page_searched(&member, page, search, sort, Shown::default()).await
}

/// A new account.
#[derive(Debug, Deserialize)]
pub struct NewUserForm {
    pub first_name: String,
    pub last_name: String,
    pub email: String,
    pub password: String,
    pub language: String,
    pub time_zone: String,
    #[serde(default)]
    pub admin: Option<String>,
}

/// Creates an account (with its empty profile). A refusal shows the form again with what was
/// typed, each refused field saying why.
pub async fn create_user(
    member: Member,
    CsrfForm(form): CsrfForm<NewUserForm>,
) -> Result<HttpResponse, WebError> {
    let first_name = PersonName::parse("first_name", &form.first_name);
    let last_name = PersonName::parse("last_name", &form.last_name);
    let email = Email::parse(&form.email);
    let password = NewPassword::check(&form.password);
    let language = Language::parse_field(&form.language);
    let time_zone = TimeZone::parse_field(&form.time_zone);
    let mut draft = NewUserDraft {
        first_name: form.first_name.trim().to_owned(),
        last_name: form.last_name.trim().to_owned(),
        email: form.email.trim().to_owned(),
        language: language.as_ref().ok().copied(),
        time_zone: form.time_zone.clone(),
        admin: form.admin.is_some(),
        errors: Vec::new(),
    };
    let text = |key: &str| member.tr.text(key);
    let refusals = [
        (
            "first_name",
            first_name.is_err().then(|| text("field-error-name")),
        ),
        (
            "last_name",
            last_name.is_err().then(|| text("field-error-name")),
        ),
        ("email", email.is_err().then(|| text("field-error-email"))),
        ("password", password.as_ref().err().map(|r| text(r.key()))),
        (
            "language",
            language.is_err().then(|| text("field-error-choice")),
        ),
        (
            "time_zone",
            time_zone.is_err().then(|| text("field-error-choice")),
        ),
    ];
    draft.errors = refusals
        .into_iter()
        .filter_map(|(field, message)| Some((field, message?)))
        .collect();
    let (Ok(first_name), Ok(last_name), Ok(email), Ok(password), Ok(language), Ok(time_zone)) =
        (first_name, last_name, email, password, language, time_zone)
    else {
        return refused_draft(&member, draft).await;
    };
    let new = NewAccount {
        email,
        password,
        first_name,
        last_name,
        phone_number: None,
        language,
        time_zone,
        roles: if draft.admin {
            vec![Role::Admin]
        } else {
            Vec::new()
        },
    };
    match member
        .state
        .actions
        .create_account(Some(&member.viewer()), new)
        .await
    {
        Ok(_) => users_page(&member, 0, Some("admin-user-created"), None).await,
        Err(ActionError::Store(StoreError::EmailUsed)) => {
            draft.errors.push(("email", text("error-email-used")));
            refused_draft(&member, draft).await
        }
        Err(err) => Err(err.into()),
    }
}

/// The user list with the new-account form refused as `draft` says.
async fn refused_draft(member: &Member, draft: NewUserDraft) -> Result<HttpResponse, WebError> {
    let error = Some("admin-user-not-created");
    let shown = Shown {
        error,
        draft: Some(draft),
        ..Shown::default()
    };
    users_page_searched(member, 0, "", UserSort::Name, shown).await
}

/// After a change to one user: its row for htmx, saying what was done (message `done`, with
/// the user's `name`), else back to the list.
/// The row of one user, as the list shows it.
async fn user_row_of(member: &Member, user_id: &Id) -> Result<UserRow, WebError> {
    let store = &member.state.store;
    let user = store
        .user_by_id(&member.viewer(), user_id)
        .await?
        .ok_or(WebError::NotFound)?;
    let record = store.user_record(user).await?;
    let mut rows = user_rows(member, &[record], store.clock().now_millis()).await?;
    rows.pop().ok_or(WebError::NotFound)
}

async fn row_or_list(
    member: &Member,
    user_id: &Id,
    done: &'static str,
) -> Result<HttpResponse, WebError> {
    if !member.htmx {
        return Ok(see_other("/portal/admin/users"));
    }
    let mut row = user_row_of(member, user_id).await?;
    row.notice = Some(member.tr.text_with(done, &[("name", row.name.clone())]));
    html(&UserRowFragment {
        c: Chrome::new(member, "admin", "admin-users-title"),
        row,
    })
}

/// `on` or anything else.
#[derive(Debug, Deserialize)]
pub struct Toggle {
    pub value: String,
}

/// Activates or deactivates a user. Deactivation revokes its tokens and ends its sessions.
pub async fn set_activation(
    member: Member,
    id: Path<String>,
    CsrfForm(form): CsrfForm<Toggle>,
) -> Result<HttpResponse, WebError> {
    let id = Id::parse(&id)?;
    let active = form.value == "on";
    member
        .state
        .actions
        .set_activation(&member.viewer(), &id, active)
        .await?;
    let done = if active {
        "admin-done-activated"
    } else {
        "admin-done-deactivated"
    };
    row_or_list(&member, &id, done).await
}

/// Lifts a lockout after failed logins (the failure count starts again at zero).
pub async fn unblock(
    member: Member,
    id: Path<String>,
    CsrfForm(_): CsrfForm<Vec<(String, String)>>,
) -> Result<HttpResponse, WebError> {
    let id = Id::parse(&id)?;
    member.state.actions.unblock(&member.viewer(), &id).await?;
    row_or_list(&member, &id, "admin-done-unblocked").await
}

/// Resets a user's password: every login ends and a link to set a new one is e-mailed or,
/// on a server that sends no e-mail, shown to the administrator once, to hand over.
pub async fn reset_password(
    member: Member,
    id: Path<String>,
    CsrfForm(_): CsrfForm<Vec<(String, String)>>,
) -> Result<HttpResponse, WebError> {
    let id = Id::parse(&id)?;
    let reset = member
        .state
        .actions
        .admin_reset_password(&member.viewer(), &id)
        .await?;
    let Some(link) = reset.handover else {
        return row_or_list(&member, &id, "admin-done-password-reset").await;
    };
    let name = full_name(&reset.user.first_name, &reset.user.last_name);
    let notice = member.tr.text_with(
        "admin-done-password-handover",
        &[
            ("name", name),
            ("hours", crate::actions::RESET_LINK_HOURS.to_string()),
        ],
    );
    if !member.htmx {
        // No redirect: the link exists only in this answer.
        let shown = Shown {
            handover: Some(Handover { notice, link }),
            ..Shown::default()
        };
        return users_page_searched(&member, 0, "", UserSort::Name, shown).await;
    }
    let mut row = user_row_of(&member, &id).await?;
    row.notice = Some(notice);
    row.handover = Some(link);
    html(&UserRowFragment {
        c: Chrome::new(&member, "admin", "admin-users-title"),
        row,
    })
}

/// A password reset link for the administrator to hand over, with what to do with it.
pub struct Handover {
    pub notice: String,
    pub link: String,
}

/// Grants or revokes the administrator role.
pub async fn set_admin(
    member: Member,
    id: Path<String>,
    CsrfForm(form): CsrfForm<Toggle>,
) -> Result<HttpResponse, WebError> {
    let id = Id::parse(&id)?;
    let grant = form.value == "on";
    let change = RoleChange::of(vec![Role::Admin], grant);
    member
        .state
        .actions
        .change_roles(&member.viewer(), &id, change)
        .await?;
    let done = if grant {
        "admin-done-granted"
    } else {
        "admin-done-revoked"
    };
    row_or_list(&member, &id, done).await
}
