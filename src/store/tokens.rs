//! OAuth tokens: only SHA-256 hashes are stored. Access and refresh tokens of one login share a
//! family, so that reuse of a rotated refresh token can revoke the whole login.

use sea_orm::sea_query::Expr;
use sea_orm::{ActiveModelTrait, ColumnTrait, EntityTrait, QueryFilter, Set};

use super::entities::{access_token, refresh_token, user};
use super::{Reader, StoreResult, Tx};
use crate::domain::id::Id;

/// Hashes and lifetimes of a freshly issued token pair.
#[derive(Debug, Clone)]
pub struct NewTokenPair {
    pub user_id: Id,
    /// `None` starts a new family (a new login).
    pub family_id: Option<Id>,
    pub access_hash: String,
    pub access_expires_at: i64,
    pub refresh_hash: String,
    pub refresh_expires_at: i64,
}

/// What a bearer token turned out to be.
#[derive(Debug, Clone)]
pub enum AccessCheck {
    /// Valid: the user it acts for.
    Valid(Box<user::Model>),
    /// Unknown, revoked, or its user deactivated.
    Unknown,
    /// Known but past its lifetime.
    Expired,
}

/// What a presented refresh token turned out to be.
#[derive(Debug, Clone)]
pub enum RefreshCheck {
    /// Valid and now consumed: issue a new pair in this family for this user.
    Rotated {
        user: Box<user::Model>,
        family_id: Id,
    },
    /// A token that was already rotated: the family has been revoked.
    Reused,
    /// Unknown, revoked, expired or its user deactivated.
    Invalid,
}

impl Reader {
    /// Looks up a bearer token by its hash, with its user, in one query.
    pub async fn check_access_token(&self, hash: &str) -> StoreResult<AccessCheck> {
        if let Some((user, expires_at)) = self.cache.token(hash) {
            return Ok(self.judge_access(user, expires_at));
        }
        let generation = self.cache.generation();
        let found = access_token::Entity::find()
            .filter(access_token::Column::TokenHash.eq(hash))
            .find_also_related(user::Entity)
            .one(&self.db)
            .await?;
        Ok(match found {
            Some((token, Some(user))) if !token.revoked && user.activation => {
                self.cache
                    .put_token(generation, hash, &user, token.expires_at);
                self.judge_access(user, token.expires_at)
            }
            _ => AccessCheck::Unknown,
        })
    }

    fn judge_access(&self, user: user::Model, expires_at: i64) -> AccessCheck {
        if expires_at <= self.now() {
            AccessCheck::Expired
        } else {
            AccessCheck::Valid(Box::new(user))
        }
    }

    async fn revoke_tokens(
        &self,
        access: sea_orm::sea_query::SimpleExpr,
        refresh: sea_orm::sea_query::SimpleExpr,
    ) -> StoreResult<()> {
        let txn = self.db.begin().await?;
        access_token::Entity::update_many()
            .col_expr(access_token::Column::Revoked, Expr::value(true))
            .filter(access)
            .exec(&txn)
            .await?;
        refresh_token::Entity::update_many()
            .col_expr(refresh_token::Column::Revoked, Expr::value(true))
            .filter(refresh)
            .exec(&txn)
            .await?;
        txn.commit().await?;
        self.cache.invalidate();
        Ok(())
    }

    /// The login (token family) and user a token, access or refresh, belongs to, whatever its
    /// state; for a revocation (RFC 7009), which needs no more.
    pub async fn token_family(&self, hash: &str) -> StoreResult<Option<(Id, Id)>> {
        if let Some(token) = access_token::Entity::find()
            .filter(access_token::Column::TokenHash.eq(hash))
            .one(&self.db)
            .await?
        {
            return Ok(Some((token.family_id, token.user_id)));
        }
        Ok(refresh_token::Entity::find()
            .filter(refresh_token::Column::TokenHash.eq(hash))
            .one(&self.db)
            .await?
            .map(|token| (token.family_id, token.user_id)))
    }

    /// When the login `family_id` began: its first token's creation (epoch ms).
    pub async fn family_started_at(&self, family_id: &Id) -> StoreResult<Option<i64>> {
        use sea_orm::QuerySelect;
        Ok(refresh_token::Entity::find()
            .select_only()
            .column_as(refresh_token::Column::CreationTimestamp.min(), "started")
            .filter(refresh_token::Column::FamilyId.eq(family_id))
            .into_tuple::<Option<i64>>()
            .one(&self.db)
            .await?
            .flatten())
    }
}

impl Tx {
    /// Stores a new access/refresh token pair.
    pub async fn insert_token_pair(&self, pair: NewTokenPair) -> StoreResult<()> {
        let now = self.now();
        let family_id = pair.family_id.unwrap_or_else(Id::generate);
        let txn = self.db.begin().await?;
        access_token::ActiveModel {
            id: Set(Id::generate()),
            token_hash: Set(pair.access_hash),
            user_id: Set(pair.user_id),
            family_id: Set(family_id),
            expires_at: Set(pair.access_expires_at),
            revoked: Set(false),
            creation_timestamp: Set(now),
        }
        .insert(&txn)
        .await?;
        refresh_token::ActiveModel {
            id: Set(Id::generate()),
            token_hash: Set(pair.refresh_hash),
            user_id: Set(pair.user_id),
            family_id: Set(family_id),
            expires_at: Set(pair.refresh_expires_at),
            rotated_at: Set(None),
            revoked: Set(false),
            creation_timestamp: Set(now),
        }
        .insert(&txn)
        .await?;
        txn.commit().await?;
        Ok(())
    }

    /// Consumes a refresh token: marks it rotated if it was valid, or revokes its family if it
    /// had been used before.
    pub async fn consume_refresh_token(&self, hash: &str) -> StoreResult<RefreshCheck> {
        let now = self.now();
        let Some((token, user)) = refresh_token::Entity::find()
            .filter(refresh_token::Column::TokenHash.eq(hash))
            .find_also_related(user::Entity)
            .one(&self.db)
            .await?
        else {
            return Ok(RefreshCheck::Invalid);
        };
        if token.revoked {
            return Ok(RefreshCheck::Invalid);
        }
        if token.rotated_at.is_some() {
            self.revoke_family(&token.family_id).await?;
            return Ok(RefreshCheck::Reused);
        }
        let Some(user) = user.filter(|u| u.activation) else {
            return Ok(RefreshCheck::Invalid);
        };
        if token.expires_at <= now {
            return Ok(RefreshCheck::Invalid);
        }
        // Only one of several concurrent uses wins the conditional update; the others are reuse.
        let claimed = refresh_token::Entity::update_many()
            .col_expr(refresh_token::Column::RotatedAt, Expr::value(now))
            .filter(refresh_token::Column::Id.eq(token.id))
            .filter(refresh_token::Column::RotatedAt.is_null())
            .filter(refresh_token::Column::Revoked.eq(false))
            .exec(&self.db)
            .await?;
        if claimed.rows_affected == 0 {
            self.revoke_family(&token.family_id).await?;
            return Ok(RefreshCheck::Reused);
        }
        Ok(RefreshCheck::Rotated {
            user: Box::new(user),
            family_id: token.family_id,
        })
    }

    /// Revokes every access and refresh token of a login.
    pub async fn revoke_family(&self, family_id: &Id) -> StoreResult<()> {
        self.revoke_tokens(
            access_token::Column::FamilyId.eq(family_id),
            refresh_token::Column::FamilyId.eq(family_id),
        )
        .await
    }

    /// Revokes every token of every login of a user (a password change, a deactivation, a
    /// sign-out everywhere).
    pub async fn revoke_tokens_of(&self, user_id: &Id) -> StoreResult<()> {
        self.revoke_tokens(
            access_token::Column::UserId.eq(user_id),
            refresh_token::Column::UserId.eq(user_id),
        )
        .await
    }
}
