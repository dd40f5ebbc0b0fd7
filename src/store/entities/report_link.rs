//! `report_links`: grants to read a periodic report's PDF without an account.

use sea_orm::entity::prelude::*;

use crate::domain::id::Id;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "report_links")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: Id,
    /// SHA-256 (hex) of the secret in the link; the secret itself is never stored.
    pub secret_hash: String,
    pub report_id: Id,
    pub file_id: Id,
    pub patient_id: Id,
    /// Who made the link.
    pub creator_id: Id,
    /// The language of the PDF it serves.
    pub language: String,
    pub expires_at: i64,
    pub revoked_at: Option<i64>,
    pub revoked_by: Option<Id>,
    pub creation_timestamp: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}

impl Model {
    /// Whether the link opens its PDF at `now`.
    pub fn is_open(&self, now: i64) -> bool {
        self.revoked_at.is_none() && now < self.expires_at
    }
}
