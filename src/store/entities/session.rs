//! `sessions`: portal sessions kept on the server, keyed by the random key in the cookie.

use sea_orm::entity::prelude::*;

use crate::domain::id::Id;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "sessions")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub key: String,
    /// The session's values as a JSON object of strings.
    #[sea_orm(column_type = "Text")]
    pub state: String,
    /// The logged-in user, so that a user's sessions can be ended together.
    pub user_id: Option<Id>,
    pub expires_at: i64,
    pub creation_timestamp: i64,
    pub update_timestamp: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
