//! The reader's notifications: the bell with its unread count, the inbox (new entries appear
//! without a reload: the list polls while it is on screen), marking read, and the settings
//! of what reaches the reader where. The same actions as `/notifications/v1`.

use std::collections::HashMap;

use actix_web::HttpResponse;
use actix_web::web::Path;
use askama::Template;

use super::chrome::{Chrome, html, see_other};
use super::context::{CsrfForm, Member};
use super::error::WebError;
use super::view::{MeasurementRow, measurement_row, name_reviewers};
use crate::domain::id::Id;
use crate::domain::notification::{Channel, EventKind, Preferences};
use crate::domain::rql::Query as ListQuery;
use crate::store::entities::notification;
use crate::store::resources::NOTIFICATIONS;

/// How many entries the inbox shows.
const INBOX_SIZE: u64 = 50;

/// One row of the inbox: an entry, with the others of the page about the same measurement
/// (its result, then its review, …), which are shown, and read, together.
pub struct EntryRow {
    /// The newest entry's id: marking it read marks the row's others read too.
    pub id: Id,
    /// What happened, newest first.
    pub title: String,
    pub earlier: Vec<String>,
    /// Whose measurement, unless it is the reader's own.
    pub patient: String,
    /// When the newest entry was written, in the reader's zone.
    pub when: String,
    pub link: String,
    pub unread: bool,
    pub urgent: bool,
    /// The measurement the row is about, as lists show it: when it was taken, in the reader's
    /// zone, and its result (the physician's conclusion first).
    pub measurement: Option<MeasurementRow>,
}

/// `entries` (newest first) grouped by the measurement they are about, each group where its
/// newest entry stands; an entry about no measurement is a group of its own.
fn by_measurement(entries: &[notification::Model]) -> Vec<Vec<&notification::Model>> {
    let mut groups: Vec<Vec<&notification::Model>> = Vec::new();
    let mut index: HashMap<Id, usize> = HashMap::new();
    for entry in entries {
        match entry.measurement_id {
            Some(measurement) => match index.get(&measurement) {
                Some(&at) => groups[at].push(entry),
                None => {
                    index.insert(measurement, groups.len());
                    groups.push(vec![entry]);
                }
            },
            None => groups.push(vec![entry]),
        }
    }
    groups
}

/// An unread count as the portal shows it: past [`UNREAD_SHOWN`], `99+` (the store counts no
/// further, so that the bell costs the same for a reader of a hundred thousand entries).
#[derive(Debug, Clone, Copy)]
struct Unread(u64);

impl Unread {
    fn any(&self) -> bool {
        self.0 > 0
    }
}

impl std::fmt::Display for Unread {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.0 > UNREAD_SHOWN {
            write!(f, "{UNREAD_SHOWN}+")
        } else {
            write!(f, "{}", self.0)
        }
    }
}

/// The largest unread count shown as a number.
const UNREAD_SHOWN: u64 = crate::store::UNREAD_COUNTED;

#[derive(Template)]
#[template(path = "web/notifications.html")]
struct InboxPage {
    c: Chrome,
    rows: Vec<EntryRow>,
    unread: Unread,
}

#[derive(Template)]
#[template(path = "web/notification_list.html")]
struct InboxList {
    c: Chrome,
    rows: Vec<EntryRow>,
    unread: Unread,
}

#[derive(Template)]
#[template(path = "web/bell.html")]
struct Bell {
    c: Chrome,
    unread: Unread,
}

/// Where the portal shows what an entry is about.
fn link_of(n: &notification::Model) -> String {
    crate::notify::portal_path(n.kind, n.measurement_id, n.report_id)
}

async fn rows(member: &Member) -> Result<(Vec<EntryRow>, Unread), WebError> {
    let query = ListQuery::default()
        .sort_by("creation_timestamp", true)
        .page(INBOX_SIZE, 0)
        // The inbox shows its unread count, never its total.
        .without_count();
    let spec = super::view::list_spec(&NOTIFICATIONS, &query)?;
    let viewer = member.viewer();
    let (entries, _) = member.state.actions.inbox(&viewer, &spec).await?;
    let unread = Unread(member.state.actions.unread_count(&viewer).await?);
    let patients: Vec<Id> = entries.iter().map(|n| n.patient_id).collect();
    let names = member.state.store.user_names(&viewer, &patients).await?;
    // Every page asks for its measurements and their reviewers, even none, so that the inbox
    // costs the same statements whatever it holds.
    let measurements: Vec<Id> = entries.iter().filter_map(|n| n.measurement_id).collect();
    let headers = member
        .state
        .store
        .measurement_headers(&viewer, &measurements)
        .await?;
    let own = |n: &notification::Model| n.patient_id == *member.id();
    let mut rows: Vec<EntryRow> = by_measurement(&entries)
        .into_iter()
        .map(|group| {
            let newest = group[0];
            EntryRow {
                id: newest.id,
                title: member.tr.text(&newest.kind.message_key_for(own(newest))),
                earlier: group[1..]
                    .iter()
                    .map(|n| member.tr.text(&n.kind.message_key_for(own(n))))
                    .collect(),
                patient: if newest.patient_id == *member.id()
                    || newest.kind == EventKind::WebhookDisabled
                {
                    String::new()
                } else {
                    names.get(&newest.patient_id).cloned().unwrap_or_default()
                },
                when: member.datetime(newest.creation_timestamp),
                link: link_of(newest),
                unread: group.iter().any(|n| !n.read),
                urgent: group.iter().any(|n| n.kind == EventKind::ResultUrgent),
                measurement: newest
                    .measurement_id
                    .and_then(|id| headers.get(&id))
                    .map(|m| measurement_row(member, m, None)),
            }
        })
        .collect();
    let tags = rows
        .iter_mut()
        .filter_map(|row| row.measurement.as_mut())
        .filter_map(|m| m.conclusion.as_mut());
    name_reviewers(member, &viewer, tags).await?;
    Ok((rows, unread))
}

/// The inbox; for htmx (its own polling), just the list.
pub async fn inbox(member: Member) -> Result<HttpResponse, WebError> {
    let (rows, unread) = rows(&member).await?;
    let c = Chrome::new(&member, "notifications", "notifications-title");
    if member.htmx {
        return html(&InboxList { c, rows, unread });
    }
    html(&InboxPage { c, rows, unread })
}

/// The bell: a link to the inbox with the unread count, refreshed by htmx.
pub async fn bell(member: Member) -> Result<HttpResponse, WebError> {
    let unread = Unread(member.state.actions.unread_count(&member.viewer()).await?);
    html(&Bell {
        c: Chrome::new(&member, "notifications", "notifications-title"),
        unread,
    })
}

/// Marks one entry read, with the others of its row (those about the same measurement); htmx
/// gets the inbox back, a plain form is sent to it.
pub async fn mark_read(
    member: Member,
    id: Path<String>,
    CsrfForm(_): CsrfForm<Vec<(String, String)>>,
) -> Result<HttpResponse, WebError> {
    let id = Id::parse(&id)?;
    member
        .state
        .actions
        .mark_entry_read_with_its_measurement(&member.viewer(), &id)
        .await?;
    if !member.htmx {
        return Ok(see_other("/portal/notifications"));
    }
    let (rows, unread) = rows(&member).await?;
    let mut response = html(&InboxList {
        c: Chrome::new(&member, "notifications", "notifications-title"),
        rows,
        unread,
    })?;
    // The bell counts fewer.
    response.headers_mut().insert(
        actix_web::http::header::HeaderName::from_static("hx-trigger"),
        actix_web::http::header::HeaderValue::from_static("notifications-changed"),
    );
    Ok(response)
}

/// Marks every entry read.
pub async fn mark_all_read(
    member: Member,
    CsrfForm(_): CsrfForm<Vec<(String, String)>>,
) -> Result<HttpResponse, WebError> {
    member
        .state
        .actions
        .mark_all_notifications_read(&member.viewer())
        .await?;
    Ok(see_other("/portal/notifications"))
}

/// One event kind's row of the settings.
pub struct PreferenceRow {
    pub kind: &'static str,
    pub label: String,
    pub inbox: bool,
    pub email: bool,
}

#[derive(Template)]
#[template(path = "web/notification_settings.html")]
struct SettingsPage {
    c: Chrome,
    rows: Vec<PreferenceRow>,
    daily_digest: bool,
    attach_pdf: bool,
    email_on: bool,
    notice: Option<String>,
}

/// The kinds a reader may receive: staff see urgent results, administrators disabled
/// webhooks.
fn kinds_for(member: &Member) -> Vec<EventKind> {
    let staff = !member.record.staff_enlistments.is_empty();
    let admin = member.user().is_admin();
    EventKind::ALL
        .into_iter()
        .filter(|k| match k {
            EventKind::ResultUrgent => staff || admin,
            EventKind::WebhookDisabled => admin,
            _ => true,
        })
        .collect()
}

async fn settings_page(member: Member, notice: Option<&str>) -> Result<HttpResponse, WebError> {
    let preferences = member.state.store.preferences(member.id()).await?;
    let rows = kinds_for(&member)
        .into_iter()
        .map(|kind| PreferenceRow {
            kind: kind.as_str(),
            label: member.tr.text(&kind.message_key_for(member.is_patient())),
            inbox: preferences.wants(kind, Channel::Inbox),
            email: preferences.wants(kind, Channel::Email),
        })
        .collect();
    html(&SettingsPage {
        c: Chrome::new(&member, "notifications", "notifications-settings"),
        rows,
        daily_digest: preferences.daily_digest,
        attach_pdf: preferences.attach_pdf,
        email_on: member.state.settings.smtp_url.is_some(),
        notice: notice.map(|k| member.tr.text(k)),
    })
}

/// What the reader receives, and where.
pub async fn settings(member: Member) -> Result<HttpResponse, WebError> {
    settings_page(member, None).await
}

/// Saves the settings: each checked box is a `kind:channel` pair that stays on.
pub async fn save_settings(
    member: Member,
    CsrfForm(form): CsrfForm<Vec<(String, String)>>,
) -> Result<HttpResponse, WebError> {
    let on: Vec<&str> = form
        .iter()
        .filter(|(name, _)| name == "on")
        .map(|(_, value)| value.as_str())
        .collect();
    let flag = |name: &str| form.iter().any(|(n, v)| n == name && v == "1");
    let mut preferences = Preferences::default();
    preferences.daily_digest = flag("daily_digest");
    preferences.attach_pdf = flag("attach_pdf");
    for kind in kinds_for(&member) {
        for channel in Channel::ALL {
            let pair = format!("{}:{}", kind.as_str(), channel.as_str());
            preferences.set(kind, channel, on.contains(&pair.as_str()));
        }
    }
    member
        .state
        .actions
        .set_notification_preferences(&member.viewer(), &preferences)
        .await?;
    settings_page(member, Some("notifications-saved")).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(kind: EventKind, measurement: Option<Id>) -> notification::Model {
        notification::Model {
            id: Id::generate(),
            user_id: Id::generate(),
            event_id: Id::generate(),
            kind,
            patient_id: Id::generate(),
            measurement_id: measurement,
            report_id: None,
            detail: String::new(),
            in_inbox: true,
            digest: false,
            read: false,
            read_at: None,
            creation_timestamp: 0,
        }
    }

    #[test]
    fn entries_about_one_measurement_share_a_row_where_the_newest_stands() {
        let (first, second) = (Id::generate(), Id::generate());
        let entries = [
            entry(EventKind::MeasurementReviewed, Some(first)),
            entry(EventKind::WebhookDisabled, None),
            entry(EventKind::ResultUrgent, Some(second)),
            entry(EventKind::MeasurementReportReady, Some(first)),
            entry(EventKind::ResultUrgent, Some(first)),
        ];
        let groups = by_measurement(&entries);
        let kinds: Vec<Vec<EventKind>> = groups
            .iter()
            .map(|group| group.iter().map(|n| n.kind).collect())
            .collect();
        assert_eq!(
            kinds,
            [
                vec![
                    EventKind::MeasurementReviewed,
                    EventKind::MeasurementReportReady,
                    EventKind::ResultUrgent
                ],
                vec![EventKind::WebhookDisabled],
                vec![EventKind::ResultUrgent],
            ]
        );
    }
}
