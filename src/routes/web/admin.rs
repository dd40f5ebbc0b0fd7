//! Administration: users (create, activate or deactivate, unblock after lockout, the admin
//! role), groups and prescriptions (enlistments with their end date), the scheduler's job
//! queue and the audit trail. No handler checks a role: the store's reads and the actions they
//! call do (`AdminTask`), the same the JSON API asks.

use actix_web::HttpResponse;
use actix_web::web::{Path, Query};
use askama::Template;
use serde::Deserialize;

use super::account::{LanguageChoice, language_choices};
use super::chrome::{Chrome, html, see_other};
use super::context::{CsrfForm, Member, Visitor};
use super::error::WebError;
use super::measurements::Choice;
use super::view::{self, PAGE_SIZE, Pager};
use crate::actions::{ActionError, NewAccount, RoleChange};
use crate::auth::lockout::{self, LockState};
use crate::domain::account::{Email, Language, NewPassword, PersonName, Role, TimeZone};
use crate::domain::group::{GroupName, parse_description};
use crate::domain::id::Id;
use crate::domain::rql::{Expr as RqlExpr, Query as ListQuery, Value as RqlValue};
use crate::domain::time::{end_of_day, parse_day, start_of_day};
use crate::store::entities::job::JobStatus;
use crate::store::entities::{audit_event, group, user};
use crate::store::resources::{GROUPS, USERS};
use crate::store::{AuditFilter, StoreError};

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
        name: format!("{} {}", u.first_name, u.last_name),
        email: u.email.clone(),
        language: u.language.clone(),
        active: u.activation,
        admin: u.is_admin(),
        lock,
        lock_label: visitor.tr.text(&format!("lock-{lock}")),
        failed_count: u.failed_count,
        own: visitor.user.as_ref().is_some_and(|me| me.user.id == u.id),
        notice: None,
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
    notice: Option<String>,
    error: Option<String>,
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
    users_page_searched(member, page, "", UserSort::Name, notice, error).await
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
    notice: Option<&str>,
    error: Option<&str>,
) -> Result<HttpResponse, WebError> {
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
        languages: language_choices(Language::En),
        notice: notice.map(|k| member.tr.text(k)),
        error: error.map(|k| member.tr.text(k)),
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
    users_page_searched(&member, page, search, sort, None, None).await
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

/// Creates an account (with its empty profile).
pub async fn create_user(
    member: Member,
    CsrfForm(form): CsrfForm<NewUserForm>,
) -> Result<HttpResponse, WebError> {
    if let Err(crate::domain::account::PasswordRefusal::Guessable) =
        NewPassword::check(&form.password)
    {
        return users_page(&member, 0, None, Some("password-too-weak")).await;
    }
    let parsed = (
        PersonName::parse("first_name", &form.first_name),
        PersonName::parse("last_name", &form.last_name),
        Email::parse(&form.email),
        NewPassword::parse(&form.password),
        Language::parse_field(&form.language),
        TimeZone::parse_field(&form.time_zone),
    );
    let (Ok(first_name), Ok(last_name), Ok(email), Ok(password), Ok(language), Ok(time_zone)) =
        parsed
    else {
        return users_page(&member, 0, None, Some("admin-user-invalid")).await;
    };
    let new = NewAccount {
        email,
        password,
        first_name,
        last_name,
        phone_number: None,
        language,
        time_zone,
        roles: if form.admin.is_some() {
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
            users_page(&member, 0, None, Some("error-email-used")).await
        }
        Err(err) => Err(err.into()),
    }
}

/// After a change to one user: its row for htmx, saying what was done (message `done`, with
/// the user's `name`), else back to the list.
async fn row_or_list(
    member: &Member,
    user_id: &Id,
    done: &'static str,
) -> Result<HttpResponse, WebError> {
    if !member.htmx {
        return Ok(see_other("/portal/admin/users"));
    }
    let store = &member.state.store;
    let user = store
        .user_by_id(&member.viewer(), user_id)
        .await?
        .ok_or(WebError::NotFound)?;
    let record = store.user_record(user).await?;
    let mut rows = user_rows(member, &[record], store.clock().now_millis()).await?;
    let mut row = rows.pop().ok_or(WebError::NotFound)?;
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

/// Resets a user's password: every login ends and a link to set a new one is e-mailed.
pub async fn reset_password(
    member: Member,
    id: Path<String>,
    CsrfForm(_): CsrfForm<Vec<(String, String)>>,
) -> Result<HttpResponse, WebError> {
    let id = Id::parse(&id)?;
    member
        .state
        .actions
        .admin_reset_password(&member.viewer(), &id)
        .await?;
    row_or_list(&member, &id, "admin-done-password-reset").await
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

/// A care team in the administrators' list, with its staff.
pub struct GroupRow {
    pub group: group::Model,
    /// (user id, name) of each member of its staff.
    pub staff: Vec<(Id, String)>,
}

/// A prescription in the administrators' list.
pub struct EnlistmentRow {
    pub patient_id: Id,
    pub patient: String,
    pub group_id: Id,
    pub group: String,
    pub since: String,
    pub until: String,
    pub expired: bool,
}

#[derive(Template)]
#[template(path = "web/admin_groups.html")]
struct GroupsPage {
    c: Chrome,
    groups: Vec<GroupRow>,
    pager: Pager,
    /// Every group, for the enlistment form's choice.
    choices: Vec<(Id, String)>,
    enlistments: Vec<EnlistmentRow>,
    /// "The 50 most recent of 1,234", when there are more prescriptions than listed.
    enlistments_shown: Option<String>,
    notice: Option<String>,
    error: Option<String>,
}

/// How many prescriptions the groups page lists, newest first.
const RECENT_PRESCRIPTIONS: u64 = 50;

async fn groups_page(
    member: &Member,
    page: u64,
    notice: Option<&str>,
    error: Option<&str>,
) -> Result<HttpResponse, WebError> {
    let store = &member.state.store;
    let viewer = member.viewer();
    // Administrators only: the store's rule for the prescriptions, asked first.
    let recent = store
        .recent_enlistments(&viewer, RECENT_PRESCRIPTIONS)
        .await?;
    let prescriptions = store.count_enlistments(&viewer).await?;
    let query = ListQuery::default()
        .sort_by("name", false)
        .page(PAGE_SIZE, page * PAGE_SIZE);
    let spec = view::list_spec(&GROUPS, &query)?;
    let (groups, total) = store.list_groups(&viewer, &spec).await?;
    let choices = store.group_choices(&viewer).await?;
    let ids: Vec<Id> = groups.iter().map(|g| g.id).collect();
    let mut staff = store.group_staff(&member.viewer(), &ids).await?;
    let groups = groups
        .into_iter()
        .map(|group| GroupRow {
            staff: staff
                .remove(&group.id)
                .unwrap_or_default()
                .into_iter()
                .map(|u| (u.id, format!("{} {}", u.first_name, u.last_name)))
                .collect(),
            group,
        })
        .collect();
    let now = store.clock().now_millis();
    let enlistments = recent
        .into_iter()
        .map(|e| EnlistmentRow {
            patient_id: e.enlistment.user_id,
            patient: e
                .patient
                .map(|p| format!("{} {} ({})", p.first_name, p.last_name, p.email))
                .unwrap_or_default(),
            group_id: e.enlistment.group_id,
            group: e.group_name,
            since: member.date(e.enlistment.creation_timestamp),
            until: member.date(e.enlistment.expiry_timestamp),
            expired: e.enlistment.expiry_timestamp <= now,
        })
        .collect();
    let enlistments_shown = (prescriptions > RECENT_PRESCRIPTIONS).then(|| {
        member.tr.text_with(
            "admin-prescriptions-shown",
            &[
                ("shown", RECENT_PRESCRIPTIONS.to_string()),
                ("total", prescriptions.to_string()),
            ],
        )
    });
    let mut response = html(&GroupsPage {
        c: Chrome::new(member, "admin", "admin-groups-title"),
        groups,
        pager: Pager::new(page, total.unwrap_or(0), ""),
        choices,
        enlistments,
        enlistments_shown,
        notice: notice.map(|k| member.tr.text(k)),
        error: error.map(|k| member.tr.text(k)),
    })?;
    if error.is_some() {
        *response.status_mut() = actix_web::http::StatusCode::BAD_REQUEST;
    }
    Ok(response)
}

/// Groups, a page at a time, and prescriptions.
pub async fn groups(
    member: Member,
    query: Query<super::patients::PageQuery>,
) -> Result<HttpResponse, WebError> {
    let page = query.page.unwrap_or(0).min(10_000);
    groups_page(&member, page, None, None).await
}

/// A new group.
#[derive(Debug, Deserialize)]
pub struct NewGroupForm {
    pub name: String,
    #[serde(default)]
    pub description: String,
}

/// Creates a group.
pub async fn create_group(
    member: Member,
    CsrfForm(form): CsrfForm<NewGroupForm>,
) -> Result<HttpResponse, WebError> {
    let (Ok(name), Ok(description)) = (
        GroupName::parse(&form.name),
        parse_description(Some(&form.description)),
    ) else {
        return groups_page(&member, 0, None, Some("admin-group-invalid")).await;
    };
    member
        .state
        .actions
        .create_group(&member.viewer(), name, description)
        .await?;
    groups_page(&member, 0, Some("admin-group-created"), None).await
}

/// An enlistment: a patient's prescription until a date, or a physician joining a group.
#[derive(Debug, Deserialize)]
pub struct EnlistForm {
    pub email: String,
    pub group_id: String,
    /// `patient` or `staff`.
    pub kind: String,
    /// Last day of the prescription (`YYYY-MM-DD`, in the administrator's zone).
    #[serde(default)]
    pub until: String,
}

/// Enlists a user in a group.
pub async fn enlist(
    member: Member,
    CsrfForm(form): CsrfForm<EnlistForm>,
) -> Result<HttpResponse, WebError> {
    let viewer = member.viewer();
    let store = member.state.store.clone();
    // The form belongs to the administration page, which its answer shows again.
    let user = match Email::parse(&form.email) {
        Ok(email) => {
            store
                .user_to_administer_by_email(&viewer, email.as_str())
                .await?
        }
        Err(_) => None,
    };
    let Some(user) = user else {
        return groups_page(&member, 0, None, Some("admin-enlist-no-user")).await;
    };
    let (Ok(group_id), user_id) = (Id::parse(&form.group_id), user.id) else {
        return groups_page(&member, 0, None, Some("admin-enlist-invalid")).await;
    };
    let actions = &member.state.actions;
    if form.kind == "staff" {
        let roles = vec!["physician".to_owned()];
        actions
            .enlist_staff(&viewer, &user_id, &group_id, roles)
            .await?;
    } else {
        // The prescription runs to the end of its last day in the administrator's zone.
        let end = parse_day(&form.until).and_then(|day| end_of_day(day, member.zone));
        let Some(end) = end else {
            return groups_page(&member, 0, None, Some("admin-enlist-invalid")).await;
        };
        match actions
            .enlist_patient(&viewer, &user_id, &group_id, end)
            .await
        {
            Ok(()) => {}
            Err(ActionError::Invalid { key, .. }) => {
                return groups_page(&member, 0, None, Some(key)).await;
            }
            Err(err) => return Err(err.into()),
        }
    }
    groups_page(&member, 0, Some("admin-enlisted"), None).await
}

/// A prescription to end: the patient and the group.
#[derive(Debug, Deserialize)]
pub struct EndForm {
    pub patient_id: String,
    pub group_id: String,
}

/// Ends a running prescription now (after the page's confirmation), then says so.
pub async fn end_enlistment(
    member: Member,
    CsrfForm(form): CsrfForm<EndForm>,
) -> Result<HttpResponse, WebError> {
    let (Ok(patient), Ok(group)) = (Id::parse(&form.patient_id), Id::parse(&form.group_id)) else {
        return groups_page(&member, 0, None, Some("admin-enlist-invalid")).await;
    };
    member
        .state
        .actions
        .end_patient_enlistment(&member.viewer(), &patient, &group)
        .await?;
    groups_page(&member, 0, Some("admin-prescription-ended"), None).await
}

/// A member of a care team's staff to remove: the user and the group.
#[derive(Debug, Deserialize)]
pub struct StaffForm {
    pub user_id: String,
    pub group_id: String,
}

/// Removes a physician from a care team (after the page's confirmation), then says so.
pub async fn remove_staff(
    member: Member,
    CsrfForm(form): CsrfForm<StaffForm>,
) -> Result<HttpResponse, WebError> {
    let (Ok(user), Ok(group)) = (Id::parse(&form.user_id), Id::parse(&form.group_id)) else {
        return groups_page(&member, 0, None, Some("admin-enlist-invalid")).await;
    };
    member
        .state
        .actions
        .remove_staff(&member.viewer(), &user, &group)
        .await?;
    groups_page(&member, 0, Some("admin-staff-removed"), None).await
}

/// A job as administrators see it.
pub struct JobRow {
    pub kind: String,
    pub status: String,
    pub attempts: String,
    pub run_after: String,
    pub updated: String,
    pub error: String,
}

#[derive(Template)]
#[template(path = "web/admin_jobs.html")]
struct JobsPage {
    c: Chrome,
    counts: Vec<(String, i64)>,
    rows: Vec<JobRow>,
    pager: Pager,
    status: String,
}

/// Which jobs to list.
#[derive(Debug, Default, Deserialize)]
pub struct JobQuery {
    pub status: Option<String>,
    pub page: Option<u64>,
}

/// The scheduler's queue: counts by status, and the jobs (failed ones with their error).
pub async fn jobs(member: Member, query: Query<JobQuery>) -> Result<HttpResponse, WebError> {
    let viewer = member.viewer();
    let status = query.status.as_deref().and_then(JobStatus::parse);
    let page = query.page.unwrap_or(0).min(10_000);
    let store = &member.state.store;
    let (jobs, total) = store
        .jobs_page(&viewer, status, page * PAGE_SIZE, PAGE_SIZE)
        .await?;
    let rows = jobs
        .iter()
        .map(|j| JobRow {
            kind: j.kind.clone(),
            status: j.status.as_str().to_owned(),
            attempts: format!("{}/{}", j.attempts, j.max_attempts),
            run_after: member.datetime(j.run_after),
            updated: member.datetime(j.update_timestamp),
            error: j.last_error.clone().unwrap_or_default(),
        })
        .collect();
    html(&JobsPage {
        c: Chrome::new(&member, "admin", "admin-jobs-title"),
        counts: store
            .job_counts(&viewer)
            .await?
            .into_iter()
            .map(|(status, n)| (status.as_str().to_owned(), n))
            .collect(),
        rows,
        pager: Pager::new(
            page,
            total,
            &status
                .map(|s| format!("status={}", s.as_str()))
                .unwrap_or_default(),
        ),
        status: status.map(JobStatus::as_str).unwrap_or("").to_owned(),
    })
}

/// An entry of the audit trail as shown.
pub struct AuditRow {
    pub when: String,
    pub actor: String,
    pub action: String,
    pub patient: String,
    pub object: String,
    pub detail: String,
}

#[derive(Template)]
#[template(path = "web/admin_audit.html")]
struct AuditPage {
    c: Chrome,
    rows: Vec<AuditRow>,
    pager: Pager,
    query: AuditQuery,
    /// The query string of the filter (for the pager and the export link).
    filter: String,
    error: Option<String>,
}

/// The audit trail's filter as the form sends it: whose data (`user`) and who acted
/// (`actor`), each an e-mail address or an id, and a range of days (`YYYY-MM-DD`, in the
/// administrator's zone, both included).
#[derive(Debug, Default, Clone, Deserialize, serde::Serialize)]
pub struct AuditQuery {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page: Option<u64>,
    #[serde(default)]
    pub user: String,
    #[serde(default)]
    pub actor: String,
    #[serde(default)]
    pub from: String,
    #[serde(default)]
    pub to: String,
    /// Text in the action, the object's kind or the detail.
    #[serde(default)]
    pub q: String,
}

impl AuditQuery {
    /// The filter, or the translation key of what is wrong with it.
    async fn filter(&self, member: &Member) -> Result<AuditFilter, &'static str> {
        let store = &member.state.store;
        let viewer = member.viewer();
        let person = async |text: &str| -> Result<Option<Id>, &'static str> {
            let text = text.trim();
            if text.is_empty() {
                return Ok(None);
            }
            if let Ok(id) = Id::parse(text) {
                return Ok(Some(id));
            }
            let email = Email::parse(text).map_err(|_| "admin-audit-unknown-user")?;
            match store
                .user_to_administer_by_email(&viewer, email.as_str())
                .await
            {
                Ok(Some(user)) => Ok(Some(user.id)),
                _ => Err("admin-audit-unknown-user"),
            }
        };
        let day = |text: &str, next: bool| -> Result<Option<i64>, &'static str> {
            let text = text.trim();
            if text.is_empty() {
                return Ok(None);
            }
            parse_day(text)
                .and_then(|day| {
                    if next {
                        end_of_day(day, member.zone)
                    } else {
                        start_of_day(day, member.zone)
                    }
                })
                .map(Some)
                .ok_or("admin-audit-bad-date")
        };
        Ok(AuditFilter {
            patient: person(&self.user).await?,
            actor: person(&self.actor).await?,
            from: day(&self.from, false)?,
            until: day(&self.to, true)?,
            text: Some(view::search_text(Some(&self.q))).filter(|t| !t.is_empty()),
        })
    }

    /// The query string of the filter, without the page.
    fn base(&self) -> String {
        let without_page = AuditQuery {
            page: None,
            ..self.clone()
        };
        serde_urlencoded::to_string(&without_page).unwrap_or_default()
    }
}

/// The names of the actors and patients of these entries, by id.
async fn audit_names(
    member: &Member,
    events: &[audit_event::Model],
) -> Result<std::collections::HashMap<Id, String>, WebError> {
    let mut ids: Vec<Id> = events.iter().map(|e| e.actor_id).collect();
    ids.extend(events.iter().filter_map(|e| e.patient_id));
    ids.sort();
    ids.dedup();
    Ok(member
        .state
        .store
        .user_names(&member.viewer(), &ids)
        .await?)
}

/// The audit trail, newest first, filtered by whose data, who acted and when.
pub async fn audit_trail(
    member: Member,
    query: Query<AuditQuery>,
) -> Result<HttpResponse, WebError> {
    let query = query.into_inner();
    let page = query.page.unwrap_or(0).min(10_000);
    let (events, total, error) = match query.filter(&member).await {
        Ok(filter) => {
            let (events, total) = member
                .state
                .actions
                .audit_trail(&member.viewer(), &filter, page * PAGE_SIZE, PAGE_SIZE)
                .await?;
            (events, total, None)
        }
        Err(key) => {
            // The page is the administrators' whatever the filter says.
            member
                .state
                .store
                .audit_page(&member.viewer(), &AuditFilter::default(), 0, 0)
                .await?;
            (Vec::new(), 0, Some(member.tr.text(key)))
        }
    };
    let names = audit_names(&member, &events).await?;
    let name = |id: &Id| names.get(id).cloned().unwrap_or_else(|| id.to_string());
    let rows = events
        .iter()
        .map(|e| AuditRow {
            when: member.datetime(e.creation_timestamp),
            actor: name(&e.actor_id),
            action: e.action.clone(),
            patient: e.patient_id.as_ref().map(name).unwrap_or_default(),
            object: format!(
                "{} {}",
                e.object_kind,
                e.object_id.map(|id| id.to_string()).unwrap_or_default()
            ),
            detail: e.detail.clone(),
        })
        .collect();
    let filter = query.base();
    let mut response = html(&AuditPage {
        c: Chrome::new(&member, "admin", "admin-audit-title"),
        rows,
        pager: Pager::new(page, total, &filter),
        filter,
        query,
        error: error.clone(),
    })?;
    if error.is_some() {
        *response.status_mut() = actix_web::http::StatusCode::BAD_REQUEST;
    }
    Ok(response)
}

/// The entries matching the audit trail's filter as CSV (UTF-8, RFC 4180), newest first, for
/// a patient's access report; the export is itself recorded.
pub async fn audit_export(
    member: Member,
    query: Query<AuditQuery>,
) -> Result<HttpResponse, WebError> {
    let filter = query.filter(&member).await.map_err(WebError::BadRequest)?;
    let events = member
        .state
        .actions
        .export_audit(&member.viewer(), &filter)
        .await?;
    let names = audit_names(&member, &events).await?;
    let name = |id: &Id| names.get(id).cloned().unwrap_or_default();
    let mut csv = csv::Writer::from_writer(Vec::new());
    let write = |csv: &mut csv::Writer<Vec<u8>>, record: &[String]| {
        csv.write_record(record.iter().map(|cell| inert(cell)))
            .map_err(|e| WebError::Internal(e.into()))
    };
    write(
        &mut csv,
        &[
            "time",
            "actor_id",
            "actor",
            "action",
            "patient_id",
            "patient",
            "object_kind",
            "object_id",
            "detail",
        ]
        .map(str::to_owned),
    )?;
    for e in &events {
        write(
            &mut csv,
            &[
                crate::domain::time::rfc3339_millis(e.creation_timestamp),
                e.actor_id.to_string(),
                name(&e.actor_id),
                e.action.clone(),
                e.patient_id.map(|id| id.to_string()).unwrap_or_default(),
                e.patient_id.as_ref().map(name).unwrap_or_default(),
                e.object_kind.clone(),
                e.object_id.map(|id| id.to_string()).unwrap_or_default(),
                e.detail.clone(),
            ],
        )?;
    }
    let body = csv
        .into_inner()
        .map_err(|e| WebError::Internal(anyhow::anyhow!("csv: {e}")))?;
    Ok(HttpResponse::Ok()
        .content_type("text/csv; charset=utf-8")
        .insert_header((
            actix_web::http::header::CONTENT_DISPOSITION,
            "attachment; filename=\"tacho-audit.csv\"",
        ))
        .body(body))
}

/// A cell a spreadsheet will not run: text that would start a formula gets a leading `'`
/// (OWASP, CSV injection).
fn inert(cell: &str) -> String {
    if cell.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("'{cell}")
    } else {
        cell.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::inert;

    #[test]
    fn exported_cells_never_start_a_formula() {
        for cell in ["=HYPERLINK(\"x\")", "+1", "-2", "@SUM(A1)", "\tx"] {
            assert!(inert(cell).starts_with('\''), "{cell}");
        }
        assert_eq!(inert("user.view"), "user.view");
        assert_eq!(inert(""), "");
    }
}
