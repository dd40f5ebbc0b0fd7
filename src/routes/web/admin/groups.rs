//! The administrators' groups page: care teams a page at a time with their staff, group
//! creation, enlistments (a patient's prescription until a date, a physician joining a team),
//! ending a prescription and removing a member of a team's staff.

use actix_web::HttpResponse;
use actix_web::web::Query;
use askama::Template;
use serde::Deserialize;

use crate::actions::ActionError;
use crate::domain::account::Email;
use crate::domain::group::{GroupName, parse_description};
use crate::domain::id::Id;
use crate::domain::person_name::full_name;
use crate::domain::rql::Query as ListQuery;
use crate::domain::time::{end_of_day, parse_day};
use crate::routes::web::chrome::{Chrome, html};
use crate::routes::web::context::{CsrfForm, Member};
use crate::routes::web::error::WebError;
use crate::routes::web::patients::PageQuery;
use crate::routes::web::view::{self, PAGE_SIZE, Pager};
use crate::store::entities::consent::ConsentDoor;
use crate::store::entities::group;
use crate::store::resources::GROUPS;

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
    /// The last day as the date field takes it (`YYYY-MM-DD`, in the administrator's zone).
    pub until_day: String,
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
    /// The enlistment form: empty, or as it was sent when it was refused or needs a
    /// confirmation.
    enlist: EnlistDraft,
}

/// The enlistment form as the page shows it.
#[derive(Debug, Clone, Default)]
pub struct EnlistDraft {
    pub email: String,
    pub group_id: String,
    pub kind: String,
    pub until: String,
    /// The account is staff (or an administrator): enlisting it as a patient asks first.
    pub staff_warning: bool,
}

/// How many prescriptions the groups page lists, newest first.
const RECENT_PRESCRIPTIONS: u64 = 50;

async fn groups_page(
    member: &Member,
    page: u64,
    notice: Option<&str>,
    error: Option<&str>,
) -> Result<HttpResponse, WebError> {
    groups_page_with(member, page, notice, error, EnlistDraft::default()).await
}

/// The groups page with the enlistment form as `enlist` holds it.
async fn groups_page_with(
    member: &Member,
    page: u64,
    notice: Option<&str>,
    error: Option<&str>,
    enlist: EnlistDraft,
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
                .map(|u| (u.id, full_name(&u.first_name, &u.last_name)))
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
                .map(|p| format!("{} ({})", full_name(&p.first_name, &p.last_name), p.email))
                .unwrap_or_default(),
            group_id: e.enlistment.group_id,
            group: e.group_name,
            since: member.date(e.enlistment.creation_timestamp),
            until: member.last_day(e.enlistment.expiry_timestamp),
            until_day: member.last_day_iso(e.enlistment.expiry_timestamp),
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
        enlist,
    })?;
    if error.is_some() {
        *response.status_mut() = actix_web::http::StatusCode::BAD_REQUEST;
    }
    Ok(response)
}

/// Groups, a page at a time, and prescriptions.
pub async fn groups(member: Member, query: Query<PageQuery>) -> Result<HttpResponse, WebError> {
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
    match member
        .state
        .actions
        .create_group(&member.viewer(), name, description)
        .await
    {
        Ok(_) => groups_page(&member, 0, Some("admin-group-created"), None).await,
        Err(ActionError::Invalid { key, .. }) => groups_page(&member, 0, None, Some(key)).await,
        Err(err) => Err(err.into()),
    }
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
    /// The administrator confirmed enlisting a member of staff as a patient.
    #[serde(default)]
    pub confirm_staff: Option<String>,
}

/// Enlists a user in a group.
pub async fn enlist(
    member: Member,
    CsrfForm(form): CsrfForm<EnlistForm>,
) -> Result<HttpResponse, WebError> {
    let viewer = member.viewer();
    let store = &member.state.store;
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
        let roles = vec![crate::domain::account::StaffRole::physician()];
        actions
            .enlist_staff(&viewer, &user_id, &group_id, roles)
            .await?;
    } else {
        // A physician (or an administrator) as a patient is rarely meant: it would share their
        // own measurements with the group, and they would read them as a patient. Asked first.
        let staff = user.is_admin()
            || !store
                .user_record(user.clone())
                .await?
                .staff_enlistments
                .is_empty();
        if staff && form.confirm_staff.is_none() {
            let draft = EnlistDraft {
                email: form.email.clone(),
                group_id: form.group_id.clone(),
                kind: form.kind.clone(),
                until: form.until.clone(),
                staff_warning: true,
            };
            let error = Some("admin-enlist-staff-as-patient");
            return groups_page_with(&member, 0, None, error, draft).await;
        }
        // The prescription runs to the end of its last day in the administrator's zone.
        let end = parse_day(&form.until).and_then(|day| end_of_day(day, member.zone));
        let Some(end) = end else {
            return groups_page(&member, 0, None, Some("admin-enlist-invalid")).await;
        };
        match actions
            .enlist_patient(&viewer, &user_id, &group_id, end, ConsentDoor::Portal)
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

/// The patient's and the group's ids of a prescription's form, if both are ids.
fn prescription_ids(patient_id: &str, group_id: &str) -> Option<(Id, Id)> {
    Some((Id::parse(patient_id).ok()?, Id::parse(group_id).ok()?))
}

/// Ends a running prescription now (after the page's confirmation), then says so.
pub async fn end_enlistment(
    member: Member,
    CsrfForm(form): CsrfForm<EndForm>,
) -> Result<HttpResponse, WebError> {
    let Some((patient, group)) = prescription_ids(&form.patient_id, &form.group_id) else {
        return groups_page(&member, 0, None, Some("admin-enlist-invalid")).await;
    };
    member
        .state
        .actions
        .end_patient_enlistment(&member.viewer(), &patient, &group)
        .await?;
    groups_page(&member, 0, Some("admin-prescription-ended"), None).await
}

/// A prescription's new last day: the patient, the group and the day.
#[derive(Debug, Deserialize)]
pub struct ExtendForm {
    pub patient_id: String,
    pub group_id: String,
    /// `YYYY-MM-DD`, in the administrator's zone.
    pub until: String,
}

/// Moves a prescription's last day (later, to extend it; an ended one runs again), then says
/// so. An earlier day shortens it, ending what the group held on the patient now, as the API
/// does.
pub async fn extend_enlistment(
    member: Member,
    CsrfForm(form): CsrfForm<ExtendForm>,
) -> Result<HttpResponse, WebError> {
    let Some((patient, group)) = prescription_ids(&form.patient_id, &form.group_id) else {
        return groups_page(&member, 0, None, Some("admin-enlist-invalid")).await;
    };
    let end = parse_day(&form.until).and_then(|day| end_of_day(day, member.zone));
    let Some(end) = end else {
        return groups_page(&member, 0, None, Some("admin-enlist-invalid")).await;
    };
    match member
        .state
        .actions
        .enlist_patient(&member.viewer(), &patient, &group, end, ConsentDoor::Portal)
        .await
    {
        Ok(()) => groups_page(&member, 0, Some("admin-prescription-extended"), None).await,
        Err(ActionError::Invalid { key, .. }) => groups_page(&member, 0, None, Some(key)).await,
        Err(err) => Err(err.into()),
    }
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
