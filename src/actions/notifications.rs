//! Notifications: a reader's own inbox and preferences; the administrators' choice of the
//! events that reach a group's staff, and clinics' webhook endpoints.

use super::{ActionError, ActionResult, Actions, EntryExt, done, entry};
use crate::domain::id::Id;
use crate::domain::notification::{AddressRefusal, KindSet, Preferences, WebhookUrl, url_for_logs};
use crate::store::entities::{notification, webhook_delivery, webhook_endpoint};
use crate::store::query::ListSpec;
use crate::store::{AdminTask, AuditAction, NewWebhook, StoreError, Tx, Unaudited, Viewer};

/// How many deliveries an endpoint's log shows.
pub const DELIVERY_LOG_SIZE: u64 = 50;

/// A webhook endpoint to register.
#[derive(Debug, Clone)]
pub struct WebhookRequest {
    pub group_id: Id,
    /// The address as given; parsed here, under the service's loopback setting.
    pub url: String,
    pub events: KindSet,
}

impl Actions {
    /// A page of `viewer`'s own inbox.
    pub async fn inbox(
        &self,
        viewer: &Viewer,
        spec: &ListSpec,
    ) -> ActionResult<(Vec<notification::Model>, Option<u64>)> {
        Ok(self.store.inbox(viewer, spec).await?)
    }

    /// How many entries of `viewer`'s inbox are unread.
    pub async fn unread_count(&self, viewer: &Viewer) -> ActionResult<u64> {
        Ok(self.store.unread_count(viewer).await?)
    }

    /// Marks one of `viewer`'s entries read or unread; another reader's, or one about what the
    /// viewer no longer sees, is not found.
    pub async fn mark_notification(
        &self,
        viewer: &Viewer,
        id: &Id,
        read: bool,
    ) -> ActionResult<notification::Model> {
        let mark = async |tx: &Tx| tx.mark_notification(viewer, id, read).await;
        Ok(self.store.write(Unaudited::Inbox, mark).await?)
    }

    /// Marks one of `viewer`'s entries read, with every other unread entry of its inbox about
    /// the same measurement: the portal shows them as one row, so they are read together.
    pub async fn mark_entry_read_with_its_measurement(
        &self,
        viewer: &Viewer,
        id: &Id,
    ) -> ActionResult<notification::Model> {
        let mark = async |tx: &Tx| {
            let entry = tx.mark_notification(viewer, id, true).await?;
            if let Some(measurement) = entry.measurement_id {
                tx.mark_measurement_notifications_read(viewer, &measurement)
                    .await?;
            }
            Ok(entry)
        };
        Ok(self.store.write(Unaudited::Inbox, mark).await?)
    }

    /// Marks `viewer`'s entries about `measurement` read, when it opens the measurement. Most
    /// page views find none unread: a read decides whether to write.
    pub async fn read_notifications_about(
        &self,
        viewer: &Viewer,
        measurement: &Id,
    ) -> ActionResult<u64> {
        if !self.store.has_unread_about(viewer, measurement).await? {
            return Ok(0);
        }
        let mark = async |tx: &Tx| {
            tx.mark_measurement_notifications_read(viewer, measurement)
                .await
        };
        Ok(self.store.write(Unaudited::Inbox, mark).await?)
    }

    /// Marks every entry of `viewer`'s inbox read.
    pub async fn mark_all_notifications_read(&self, viewer: &Viewer) -> ActionResult<u64> {
        let mark = async |tx: &Tx| tx.mark_all_notifications_read(viewer).await;
        Ok(self.store.write(Unaudited::Inbox, mark).await?)
    }

    /// Stores what `viewer` chose to receive.
    pub async fn set_notification_preferences(
        &self,
        viewer: &Viewer,
        preferences: &Preferences,
    ) -> ActionResult<()> {
        self.act(async |tx| {
            tx.set_preferences(&viewer.user_id, preferences).await?;
            let action = AuditAction::NotificationsPreferences;
            let record = entry(viewer, action, "user", &viewer.user_id)
                .detail(preferences.muted_to_stored());
            done((), record)
        })
        .await
    }

    /// Sets the events that reach the staff of `group` (administrators).
    pub async fn set_group_staff_events(
        &self,
        viewer: &Viewer,
        group: &Id,
        kinds: &KindSet,
    ) -> ActionResult<()> {
        viewer
            .administer(AdminTask::ManageNotifications)
            .map_err(StoreError::Denied)?;
        self.act(async |tx| {
            tx.visible_group(viewer, group).await?;
            tx.set_group_staff_events(group, kinds).await?;
            let record = entry(viewer, AuditAction::GroupNotifications, "group", group)
                .detail(kinds.to_stored());
            done((), record)
        })
        .await
    }

    /// Registers a webhook endpoint for a group (administrators); returns it with its
    /// signing secret, which is not shown again.
    pub async fn register_webhook(
        &self,
        viewer: &Viewer,
        request: WebhookRequest,
    ) -> ActionResult<(webhook_endpoint::Model, String)> {
        viewer
            .administer(AdminTask::ManageNotifications)
            .map_err(StoreError::Denied)?;
        let webhooks = self.notifier.webhooks();
        let refused =
            |reason: AddressRefusal| ActionError::invalid(format!("url {reason}"), reason.key());
        let url = WebhookUrl::parse(&request.url, webhooks.reach()).map_err(refused)?;
        webhooks.check_resolution(&url).await.map_err(refused)?;
        if request.events.is_empty() {
            return Err(ActionError::invalid(
                "events must name at least one event",
                "admin-webhook-no-events",
            ));
        }
        let endpoint = self
            .act(async |tx| {
                tx.visible_group(viewer, &request.group_id).await?;
                let endpoint = tx
                    .insert_webhook(NewWebhook {
                        group_id: request.group_id,
                        url,
                        events: request.events,
                        creator_id: viewer.user_id,
                    })
                    .await?;
                let shown = format!("{} {}", url_for_logs(&endpoint.url), endpoint.events);
                let record = entry(viewer, AuditAction::WebhookCreate, "webhook", &endpoint.id)
                    .detail(shown);
                done(endpoint, record)
            })
            .await?;
        let secret = webhooks.secret(&endpoint.id);
        Ok((endpoint, secret))
    }

    /// Every webhook endpoint (administrators).
    pub async fn webhooks(&self, viewer: &Viewer) -> ActionResult<Vec<webhook_endpoint::Model>> {
        viewer
            .administer(AdminTask::ManageNotifications)
            .map_err(StoreError::Denied)?;
        Ok(self.store.webhooks().await?)
    }

    /// One endpoint and its newest deliveries (administrators).
    pub async fn webhook(
        &self,
        viewer: &Viewer,
        id: &Id,
    ) -> ActionResult<(webhook_endpoint::Model, Vec<webhook_delivery::Model>)> {
        viewer
            .administer(AdminTask::ManageNotifications)
            .map_err(StoreError::Denied)?;
        let endpoint = self.store.webhook(id).await?.ok_or(StoreError::NotFound)?;
        let log = self.store.webhook_deliveries(id, DELIVERY_LOG_SIZE).await?;
        Ok((endpoint, log))
    }

    /// Turns an endpoint on (again) or off (administrators).
    pub async fn set_webhook_enabled(
        &self,
        viewer: &Viewer,
        id: &Id,
        enabled: bool,
    ) -> ActionResult<webhook_endpoint::Model> {
        viewer
            .administer(AdminTask::ManageNotifications)
            .map_err(StoreError::Denied)?;
        self.act(async |tx| {
            let endpoint = tx
                .set_webhook_enabled(id, enabled)
                .await?
                .ok_or(StoreError::NotFound)?;
            let action = if enabled {
                AuditAction::WebhookEnable
            } else {
                AuditAction::WebhookDisable
            };
            done(endpoint, entry(viewer, action, "webhook", id))
        })
        .await
    }

    /// Deletes an endpoint and its log (administrators).
    pub async fn delete_webhook(&self, viewer: &Viewer, id: &Id) -> ActionResult<()> {
        viewer
            .administer(AdminTask::ManageNotifications)
            .map_err(StoreError::Denied)?;
        self.act(async |tx| {
            if !tx.delete_webhook(id).await? {
                return Err(StoreError::NotFound.into());
            }
            done((), entry(viewer, AuditAction::WebhookDelete, "webhook", id))
        })
        .await
    }
}
