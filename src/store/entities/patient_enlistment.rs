//! `patient_enlistments`: prescriptions, a patient in a group from creation until expiry.

use sea_orm::entity::prelude::*;

use crate::domain::id::Id;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "patient_enlistments")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: Id,
    pub user_id: Id,
    pub group_id: Id,
    pub creation_timestamp: i64,
    pub expiry_timestamp: i64,
    /// The end of the latest period enqueued for a periodic report; none before the first.
    pub scheduled_until: Option<i64>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
