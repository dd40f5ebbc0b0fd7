//! `account_links`: single-use links sent by e-mail (password reset, e-mail change).

use sea_orm::entity::prelude::*;

use crate::domain::id::Id;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "account_links")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: Id,
    /// SHA-256 (hex) of the secret in the link; the secret itself is never stored.
    pub secret_hash: String,
    pub user_id: Id,
    /// `password_reset` or `email_change`.
    pub purpose: String,
    /// The address to change to (`email_change` only).
    pub new_email: Option<String>,
    pub expires_at: i64,
    /// When the link was used, or replaced by a newer one; it opens nothing after that.
    pub spent_at: Option<i64>,
    pub creation_timestamp: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
