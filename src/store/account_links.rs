//! Account links: single-use links sent by e-mail to reset a password or confirm a new
//! address. A link is spent in the same statement that checks it, so two uses racing each
//! other cannot both succeed.

use sea_orm::sea_query::Expr;
use sea_orm::{
    ActiveModelTrait, ActiveValue::Set, ColumnTrait, EntityTrait, QueryFilter, QueryOrder,
};

use super::entities::account_link;
use super::{Reader, StoreResult, Tx};
use crate::domain::id::Id;

/// An account link to record.
#[derive(Debug, Clone)]
pub struct NewAccountLink {
    pub secret_hash: String,
    pub user_id: Id,
    pub purpose: &'static str,
    pub new_email: Option<String>,
    pub expires_at: i64,
}

impl Reader {
    /// When the newest link of `purpose` was made for `user_id`, if one was.
    pub async fn last_account_link_at(
        &self,
        user_id: &Id,
        purpose: &str,
    ) -> StoreResult<Option<i64>> {
        Ok(account_link::Entity::find()
            .filter(account_link::Column::UserId.eq(*user_id))
            .filter(account_link::Column::Purpose.eq(purpose))
            .order_by_desc(account_link::Column::CreationTimestamp)
            .one(&self.db)
            .await?
            .map(|link| link.creation_timestamp))
    }

    /// Whether an open link of `purpose` has this hash (the page that asks for the new
    /// password looks before the form is sent; nothing is spent).
    pub async fn account_link_is_open(
        &self,
        secret_hash: &str,
        purpose: &str,
    ) -> StoreResult<bool> {
        let now = self.now();
        Ok(account_link::Entity::find()
            .filter(account_link::Column::SecretHash.eq(secret_hash))
            .filter(account_link::Column::Purpose.eq(purpose))
            .filter(account_link::Column::SpentAt.is_null())
            .filter(account_link::Column::ExpiresAt.gt(now))
            .one(&self.db)
            .await?
            .is_some())
    }
}

impl Tx {
    /// Records a link; the user's earlier links of the same purpose are spent, so only the
    /// newest one sent works.
    pub async fn insert_account_link(
        &self,
        new: NewAccountLink,
    ) -> StoreResult<account_link::Model> {
        let now = self.now();
        account_link::Entity::update_many()
            .col_expr(account_link::Column::SpentAt, Expr::value(now))
            .filter(account_link::Column::UserId.eq(new.user_id))
            .filter(account_link::Column::Purpose.eq(new.purpose))
            .filter(account_link::Column::SpentAt.is_null())
            .exec(&self.db)
            .await?;
        Ok(account_link::ActiveModel {
            id: Set(Id::generate()),
            secret_hash: Set(new.secret_hash),
            user_id: Set(new.user_id),
            purpose: Set(new.purpose.to_owned()),
            new_email: Set(new.new_email),
            expires_at: Set(new.expires_at),
            spent_at: Set(None),
            creation_timestamp: Set(now),
        }
        .insert(&self.db)
        .await?)
    }

    /// The open link of `purpose` whose secret has this hash, spent by this call; `None` when
    /// there is none, it expired, or it was used or replaced already.
    pub async fn spend_account_link(
        &self,
        secret_hash: &str,
        purpose: &str,
    ) -> StoreResult<Option<account_link::Model>> {
        let now = self.now();
        let spent = account_link::Entity::update_many()
            .col_expr(account_link::Column::SpentAt, Expr::value(now))
            .filter(account_link::Column::SecretHash.eq(secret_hash))
            .filter(account_link::Column::Purpose.eq(purpose))
            .filter(account_link::Column::SpentAt.is_null())
            .filter(account_link::Column::ExpiresAt.gt(now))
            .exec(&self.db)
            .await?;
        if spent.rows_affected == 0 {
            return Ok(None);
        }
        Ok(account_link::Entity::find()
            .filter(account_link::Column::SecretHash.eq(secret_hash))
            .one(&self.db)
            .await?)
    }

    /// Spends every open link of `user_id`, whatever its purpose: what a password change, a
    /// reset, signing out everywhere or a deactivation ends. Returns how many.
    pub async fn spend_account_links_of(&self, user_id: &Id) -> StoreResult<u64> {
        let spent = account_link::Entity::update_many()
            .col_expr(account_link::Column::SpentAt, Expr::value(self.now()))
            .filter(account_link::Column::UserId.eq(*user_id))
            .filter(account_link::Column::SpentAt.is_null())
            .exec(&self.db)
            .await?;
        Ok(spent.rows_affected)
    }

    /// Spends the open links of `purpose` of `user_id`; returns how many.
    pub async fn spend_account_links_for(&self, user_id: &Id, purpose: &str) -> StoreResult<u64> {
        let spent = account_link::Entity::update_many()
            .col_expr(account_link::Column::SpentAt, Expr::value(self.now()))
            .filter(account_link::Column::UserId.eq(*user_id))
            .filter(account_link::Column::Purpose.eq(purpose))
            .filter(account_link::Column::SpentAt.is_null())
            .exec(&self.db)
            .await?;
        Ok(spent.rows_affected)
    }
}
