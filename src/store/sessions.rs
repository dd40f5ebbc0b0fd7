//! Portal sessions and shared secrets. The session state is opaque here (a JSON text); the
//! portal's session store adapter decides what goes in it.

use sea_orm::sea_query::Expr;
use sea_orm::{ActiveValue::Set, ColumnTrait, EntityTrait, QueryFilter};

use super::entities::{secret, session};
use super::{Reader, StoreResult, Tx};
use crate::domain::id::Id;

impl Reader {
    /// The live session `key`, if any.
    pub async fn session(&self, key: &str) -> StoreResult<Option<session::Model>> {
        Ok(session::Entity::find_by_id(key.to_owned())
            .filter(session::Column::ExpiresAt.gt(self.now()))
            .one(&self.db)
            .await?)
    }

    /// The shared random key `name` of `len` bytes (stored as hex), made by whichever
    /// instance asks first: the keys of session cookies, file tokens and webhook secrets.
    pub async fn shared_key(&self, name: &str, len: usize) -> StoreResult<Vec<u8>> {
        let text = self
            .shared_secret(name, || {
                let mut bytes = vec![0u8; len];
                rand::fill(bytes.as_mut_slice());
                hex::encode(bytes)
            })
            .await?;
        hex::decode(&text).map_err(|_| {
            sea_orm::DbErr::Custom(format!("the stored key `{name}` is not hexadecimal")).into()
        })
    }

    /// The shared secret `name`, made from `make` by whichever instance asks first.
    pub async fn shared_secret(
        &self,
        name: &str,
        make: impl FnOnce() -> String,
    ) -> StoreResult<String> {
        if let Some(found) = secret::Entity::find_by_id(name.to_owned())
            .one(&self.db)
            .await?
        {
            return Ok(found.value);
        }
        secret::Entity::insert(secret::ActiveModel {
            name: Set(name.to_owned()),
            value: Set(make()),
            creation_timestamp: Set(self.now()),
        })
        .on_conflict_do_nothing_on([secret::Column::Name])
        .exec(&self.db)
        .await?;
        // Read back: another instance may have won the race.
        Ok(secret::Entity::find_by_id(name.to_owned())
            .one(&self.db)
            .await?
            .map(|s| s.value)
            .unwrap_or_default())
    }
}

impl Tx {
    /// Creates session `key`; expired sessions are swept on the way.
    pub async fn insert_session(
        &self,
        key: &str,
        state: String,
        user_id: Option<Id>,
        expires_at: i64,
    ) -> StoreResult<()> {
        let now = self.now();
        session::Entity::delete_many()
            .filter(session::Column::ExpiresAt.lte(now))
            .exec(&self.db)
            .await?;
        session::Entity::insert(session::ActiveModel {
            key: Set(key.to_owned()),
            state: Set(state),
            user_id: Set(user_id),
            expires_at: Set(expires_at),
            creation_timestamp: Set(now),
            update_timestamp: Set(now),
        })
        .exec_without_returning(&self.db)
        .await?;
        Ok(())
    }

    /// Replaces the state of session `key`; false when it no longer exists.
    pub async fn update_session(
        &self,
        key: &str,
        state: String,
        user_id: Option<Id>,
        expires_at: i64,
    ) -> StoreResult<bool> {
        let result = session::Entity::update_many()
            .col_expr(session::Column::State, Expr::value(state))
            .col_expr(session::Column::UserId, Expr::value(user_id))
            .col_expr(session::Column::ExpiresAt, Expr::value(expires_at))
            .col_expr(session::Column::UpdateTimestamp, Expr::value(self.now()))
            .filter(session::Column::Key.eq(key))
            .filter(session::Column::ExpiresAt.gt(self.now()))
            .exec(&self.db)
            .await?;
        Ok(result.rows_affected == 1)
    }

    /// Moves the expiry of session `key`.
    pub async fn touch_session(&self, key: &str, expires_at: i64) -> StoreResult<()> {
        session::Entity::update_many()
            .col_expr(session::Column::ExpiresAt, Expr::value(expires_at))
            .filter(session::Column::Key.eq(key))
            .exec(&self.db)
            .await?;
        Ok(())
    }

    /// Deletes session `key`.
    pub async fn delete_session(&self, key: &str) -> StoreResult<()> {
        session::Entity::delete_by_id(key.to_owned())
            .exec(&self.db)
            .await?;
        Ok(())
    }

    /// Ends every database-held session of a user.
    pub async fn delete_sessions_of(&self, user_id: &Id) -> StoreResult<u64> {
        Ok(session::Entity::delete_many()
            .filter(session::Column::UserId.eq(user_id))
            .exec(&self.db)
            .await?
            .rows_affected)
    }
}
