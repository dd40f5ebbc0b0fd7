//! Administration of notifications: the events each care team lets reach its physicians, and
//! webhook endpoints with their delivery logs. The same actions as `/webhooks/v1`; no
//! handler checks a role itself (`AdminTask::ManageNotifications`).

use actix_web::HttpResponse;
use actix_web::web::Path;
use askama::Template;
use serde::Deserialize;

use super::chrome::{Chrome, html, see_other};
use super::context::{CsrfForm, Member};
use super::error::WebError;
use super::view::{self, PAGE_SIZE, Pager};
use crate::actions::{ActionError, WebhookRequest};
use crate::domain::id::Id;
use crate::domain::notification::{EventKind, KindSet};
use crate::domain::rql::Query as ListQuery;
use crate::store::resources::GROUPS;

/// A choice of one event kind.
pub struct KindChoice {
    pub kind: &'static str,
    pub label: String,
    pub checked: bool,
}

fn choices(member: &Member, set: &KindSet) -> Vec<KindChoice> {
    EventKind::PUBLIC
        .into_iter()
        .map(|k| KindChoice {
            kind: k.as_str(),
            label: member.tr.text(&k.message_key_for(false)),
            checked: set.contains(k),
        })
        .collect()
}

/// A care team and the events its physicians receive.
pub struct GroupRow {
    pub id: Id,
    pub name: String,
    pub kinds: Vec<KindChoice>,
}

/// A webhook endpoint in the list.
pub struct WebhookRow {
    pub id: Id,
    pub url: String,
    pub group: String,
    pub events: String,
    pub enabled: bool,
    pub reason: String,
}

#[derive(Template)]
#[template(path = "web/admin_notifications.html")]
struct NotificationsPage {
    c: Chrome,
    groups: Vec<GroupRow>,
    pager: Pager,
    /// Every group, for the webhook form's choice.
    choices: Vec<(Id, String)>,
    webhooks: Vec<WebhookRow>,
    new_kinds: Vec<KindChoice>,
    /// The secret of the endpoint just registered, shown once.
    secret: Option<String>,
    notice: Option<String>,
    error: Option<String>,
}

async fn page(
    member: &Member,
    page: u64,
    secret: Option<String>,
    notice: Option<String>,
    error: Option<String>,
) -> Result<HttpResponse, WebError> {
    let viewer = member.viewer();
    let actions = &member.state.actions;
    // Administrators only: the action's rule, asked first.
    let endpoints = actions.webhooks(&viewer).await?;
    let store = &member.state.store;
    let query = ListQuery::default()
        .sort_by("name", false)
        .page(PAGE_SIZE, page * PAGE_SIZE);
    let spec = view::list_spec(&GROUPS, &query)?;
    let (groups, total) = store.list_groups(&viewer, &spec).await?;
    let ids: Vec<Id> = groups.iter().map(|g| g.id).collect();
    let mut kinds = store.group_staff_events(&ids).await?;
    let group_rows = groups
        .iter()
        .map(|g| GroupRow {
            id: g.id,
            name: g.name.clone(),
            kinds: choices(
                member,
                &kinds.remove(&g.id).unwrap_or_else(KindSet::all_public),
            ),
        })
        .collect();
    let all_groups = store.group_choices(&viewer).await?;
    let name_of = |id: &Id| {
        all_groups
            .iter()
            .find(|(g, _)| g == id)
            .map(|(_, name)| name.clone())
            .unwrap_or_else(|| id.to_string())
    };
    let webhooks = endpoints
        .iter()
        .map(|e| WebhookRow {
            id: e.id,
            url: e.url.clone(),
            group: name_of(&e.group_id),
            events: KindSet::from_stored(&e.events)
                .iter()
                .map(|k| member.tr.text(&k.message_key_for(false)))
                .collect::<Vec<_>>()
                .join(", "),
            enabled: e.enabled,
            reason: e.disabled_reason.clone().unwrap_or_default(),
        })
        .collect();
    let failed = error.is_some();
    let mut response = html(&NotificationsPage {
        c: Chrome::new(member, "admin", "admin-notifications-title"),
        groups: group_rows,
        pager: Pager::new(page, total.unwrap_or(0), ""),
        choices: all_groups.clone(),
        webhooks,
        new_kinds: choices(member, &KindSet::all_public()),
        secret,
        notice,
        error,
    })?;
    if failed {
        *response.status_mut() = actix_web::http::StatusCode::BAD_REQUEST;
    }
    Ok(response)
}

/// Care teams' choices, a page of teams at a time, and webhook endpoints.
pub async fn show(
    member: Member,
    query: actix_web::web::Query<super::patients::PageQuery>,
) -> Result<HttpResponse, WebError> {
    let at = query.page.unwrap_or(0).min(10_000);
    page(&member, at, None, None, None).await
}

/// The kinds of a posted form: every `event` field.
fn posted_kinds(form: &[(String, String)]) -> Result<KindSet, String> {
    KindSet::parse(
        form.iter()
            .filter(|(name, _)| name == "event")
            .map(|(_, value)| value.as_str()),
    )
}

/// Sets the events a care team's physicians receive.
pub async fn save_group(
    member: Member,
    id: Path<String>,
    CsrfForm(form): CsrfForm<Vec<(String, String)>>,
) -> Result<HttpResponse, WebError> {
    let id = Id::parse(&id)?;
    let kinds = posted_kinds(&form).map_err(|_| WebError::BadRequest("error-bad-form"))?;
    member
        .state
        .actions
        .set_group_staff_events(&member.viewer(), &id, &kinds)
        .await?;
    let notice = member.tr.text("admin-group-events-saved");
    page(&member, 0, None, Some(notice), None).await
}

/// Registers an endpoint; the page shows its secret this once.
pub async fn create_webhook(
    member: Member,
    CsrfForm(form): CsrfForm<Vec<(String, String)>>,
) -> Result<HttpResponse, WebError> {
    let field = |name: &str| {
        form.iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.trim().to_owned())
            .unwrap_or_default()
    };
    let group_id =
        Id::parse(&field("group_id")).map_err(|_| WebError::BadRequest("error-bad-form"))?;
    let events = posted_kinds(&form).map_err(|_| WebError::BadRequest("error-bad-form"))?;
    let registered = member
        .state
        .actions
        .register_webhook(
            &member.viewer(),
            WebhookRequest {
                group_id,
                url: field("url"),
                events,
            },
        )
        .await;
    match registered {
        Ok((_, secret)) => {
            let notice = member.tr.text("admin-webhook-created");
            page(&member, 0, Some(secret), Some(notice), None).await
        }
        Err(ActionError::Invalid { key, .. }) => {
            let error = member.tr.text(key);
            page(&member, 0, None, None, Some(error)).await
        }
        Err(err) => Err(err.into()),
    }
}

/// One delivery in the log.
pub struct DeliveryRow {
    pub when: String,
    pub event: Id,
    pub attempt: i32,
    pub delivered: bool,
    pub status: String,
    pub latency: i64,
    pub error: String,
}

#[derive(Template)]
#[template(path = "web/admin_webhook.html")]
struct WebhookPage {
    c: Chrome,
    endpoint: WebhookRow,
    deliveries: Vec<DeliveryRow>,
}

/// One endpoint and its delivery log.
pub async fn webhook(member: Member, id: Path<String>) -> Result<HttpResponse, WebError> {
    let id = Id::parse(&id)?;
    let (endpoint, log) = member.state.actions.webhook(&member.viewer(), &id).await?;
    let names = member.state.store.group_names(&[endpoint.group_id]).await?;
    html(&WebhookPage {
        c: Chrome::new(&member, "admin", "admin-webhook-log"),
        endpoint: WebhookRow {
            id: endpoint.id,
            url: endpoint.url.clone(),
            group: names.get(&endpoint.group_id).cloned().unwrap_or_default(),
            events: KindSet::from_stored(&endpoint.events)
                .iter()
                .map(|k| member.tr.text(&k.message_key_for(false)))
                .collect::<Vec<_>>()
                .join(", "),
            enabled: endpoint.enabled,
            reason: endpoint.disabled_reason.clone().unwrap_or_default(),
        },
        deliveries: log
            .iter()
            .map(|d| DeliveryRow {
                when: member.datetime(d.creation_timestamp),
                event: d.event_id,
                attempt: d.attempt,
                delivered: d.outcome == "delivered",
                status: d.status_code.map(|s| s.to_string()).unwrap_or_default(),
                latency: d.latency_ms,
                error: d.error.clone().unwrap_or_default(),
            })
            .collect(),
    })
}

/// `enabled=1` or `enabled=0`.
#[derive(Debug, Deserialize)]
pub struct EnabledForm {
    pub enabled: u8,
}

/// Turns an endpoint on or off.
pub async fn set_enabled(
    member: Member,
    id: Path<String>,
    CsrfForm(form): CsrfForm<EnabledForm>,
) -> Result<HttpResponse, WebError> {
    let id = Id::parse(&id)?;
    member
        .state
        .actions
        .set_webhook_enabled(&member.viewer(), &id, form.enabled == 1)
        .await?;
    Ok(see_other(&format!("/portal/admin/webhooks/{id}")))
}

/// Deletes an endpoint and its log.
pub async fn delete(
    member: Member,
    id: Path<String>,
    CsrfForm(_): CsrfForm<Vec<(String, String)>>,
) -> Result<HttpResponse, WebError> {
    let id = Id::parse(&id)?;
    member
        .state
        .actions
        .delete_webhook(&member.viewer(), &id)
        .await?;
    let notice = member.tr.text("admin-webhook-deleted");
    page(&member, 0, None, Some(notice), None).await
}
