//! Webhook endpoints of groups, and the log of their deliveries.

use sea_orm::sea_query::Expr;
use sea_orm::{
    ActiveModelTrait, ActiveValue::Set, ColumnTrait, EntityTrait, QueryFilter, QueryOrder,
    QuerySelect,
};

use super::entities::{user, webhook_delivery, webhook_endpoint};
use super::{Reader, StoreResult, Tx};
use crate::domain::id::Id;
use crate::domain::notification::{KindSet, WebhookUrl};

/// An endpoint to register.
#[derive(Debug, Clone)]
pub struct NewWebhook {
    pub group_id: Id,
    pub url: WebhookUrl,
    pub events: KindSet,
    pub creator_id: Id,
}

/// One attempt to deliver an event, as the log keeps it.
#[derive(Debug, Clone)]
pub struct DeliveryRecord {
    pub endpoint_id: Id,
    pub event_id: Id,
    /// 1 for the first attempt.
    pub attempt: i32,
    /// The receiver's status, if it answered.
    pub status: Option<u16>,
    pub latency_ms: i64,
    /// Why it failed; `None` when it was delivered.
    pub error: Option<String>,
}

impl Reader {
    /// The endpoint `id`, if it exists.
    pub async fn webhook(&self, id: &Id) -> StoreResult<Option<webhook_endpoint::Model>> {
        Ok(webhook_endpoint::Entity::find_by_id(*id)
            .one(&self.db)
            .await?)
    }

    /// Every endpoint, newest first.
    pub async fn webhooks(&self) -> StoreResult<Vec<webhook_endpoint::Model>> {
        Ok(webhook_endpoint::Entity::find()
            .order_by_desc(webhook_endpoint::Column::CreationTimestamp)
            .order_by_desc(webhook_endpoint::Column::Id)
            .all(&self.db)
            .await?)
    }

    /// The newest `limit` attempts to deliver to `endpoint`.
    pub async fn webhook_deliveries(
        &self,
        endpoint: &Id,
        limit: u64,
    ) -> StoreResult<Vec<webhook_delivery::Model>> {
        Ok(webhook_delivery::Entity::find()
            .filter(webhook_delivery::Column::EndpointId.eq(*endpoint))
            .order_by_desc(webhook_delivery::Column::CreationTimestamp)
            .order_by_desc(webhook_delivery::Column::Id)
            .limit(limit)
            .all(&self.db)
            .await?)
    }

    /// The account `id` if it is active and `scope` sees it.
    pub async fn active_user(
        &self,
        scope: &dyn super::Scope,
        id: &Id,
    ) -> StoreResult<Option<user::Model>> {
        Ok(user::Entity::find_by_id(*id)
            .filter(user::Column::Activation.eq(true))
            .filter(scope.users("users", "id", self.now()))
            .one(&self.db)
            .await?)
    }
}

impl Tx {
    /// Registers an endpoint (the caller has checked that its viewer may).
    pub async fn insert_webhook(&self, new: NewWebhook) -> StoreResult<webhook_endpoint::Model> {
        let now = self.now();
        Ok(webhook_endpoint::ActiveModel {
            id: Set(Id::generate()),
            group_id: Set(new.group_id),
            url: Set(new.url.as_str().to_owned()),
            events: Set(new.events.to_stored()),
            enabled: Set(true),
            disabled_reason: Set(None),
            creator_id: Set(new.creator_id),
            creation_timestamp: Set(now),
            update_timestamp: Set(now),
        }
        .insert(&self.db)
        .await?)
    }

    /// Turns endpoint `id` on again, or off; returns it as it is now.
    pub async fn set_webhook_enabled(
        &self,
        id: &Id,
        enabled: bool,
    ) -> StoreResult<Option<webhook_endpoint::Model>> {
        webhook_endpoint::Entity::update_many()
            .col_expr(webhook_endpoint::Column::Enabled, Expr::value(enabled))
            .col_expr(
                webhook_endpoint::Column::DisabledReason,
                Expr::value(Option::<String>::None),
            )
            .col_expr(
                webhook_endpoint::Column::UpdateTimestamp,
                Expr::value(self.now()),
            )
            .filter(webhook_endpoint::Column::Id.eq(*id))
            .exec(&self.db)
            .await?;
        self.webhook(id).await
    }

    /// Disables an enabled endpoint, saying why; `None` when it was already off or is gone
    /// (so its administrators are told once).
    pub async fn disable_webhook(
        &self,
        id: &Id,
        reason: &str,
    ) -> StoreResult<Option<webhook_endpoint::Model>> {
        let result = webhook_endpoint::Entity::update_many()
            .col_expr(webhook_endpoint::Column::Enabled, Expr::value(false))
            .col_expr(
                webhook_endpoint::Column::DisabledReason,
                Expr::value(reason.chars().take(1000).collect::<String>()),
            )
            .col_expr(
                webhook_endpoint::Column::UpdateTimestamp,
                Expr::value(self.now()),
            )
            .filter(webhook_endpoint::Column::Id.eq(*id))
            .filter(webhook_endpoint::Column::Enabled.eq(true))
            .exec(&self.db)
            .await?;
        if result.rows_affected == 0 {
            return Ok(None);
        }
        self.webhook(id).await
    }

    /// Deletes endpoint `id` and its log; false when it did not exist.
    pub async fn delete_webhook(&self, id: &Id) -> StoreResult<bool> {
        webhook_delivery::Entity::delete_many()
            .filter(webhook_delivery::Column::EndpointId.eq(*id))
            .exec(&self.db)
            .await?;
        let result = webhook_endpoint::Entity::delete_by_id(*id)
            .exec(&self.db)
            .await?;
        Ok(result.rows_affected == 1)
    }

    /// Logs one delivery attempt.
    pub async fn log_webhook_delivery(&self, record: DeliveryRecord) -> StoreResult<()> {
        webhook_delivery::ActiveModel {
            id: Set(Id::generate()),
            endpoint_id: Set(record.endpoint_id),
            event_id: Set(record.event_id),
            attempt: Set(record.attempt),
            outcome: Set(if record.error.is_none() {
                "delivered"
            } else {
                "failed"
            }
            .to_owned()),
            status_code: Set(record.status.map(i32::from)),
            latency_ms: Set(record.latency_ms),
            error: Set(record.error),
            creation_timestamp: Set(self.now()),
        }
        .insert(&self.db)
        .await?;
        Ok(())
    }
}
