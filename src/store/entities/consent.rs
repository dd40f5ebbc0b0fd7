//! `consents`: every consent a patient gave or withdrew. Rows are only added; the latest of a
//! kind (and, for sharing, of a group) is the one in force.

use sea_orm::entity::prelude::*;

use crate::domain::id::Id;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "consents")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: Id,
    /// The patient whose consent it is.
    pub user_id: Id,
    pub kind: ConsentKind,
    /// The group data is shared with (`kind` is `group_sharing`).
    pub group_id: Option<Id>,
    /// The version of the text consented to (see `domain::consent`).
    pub text_version: String,
    pub door: ConsentDoor,
    /// Given (`true`) or withdrawn.
    pub given: bool,
    /// Who recorded it: the patient, or the staff member or administrator who did for them.
    pub actor_id: Id,
    pub creation_timestamp: i64,
}

/// What a consent is to: stored as `health_data` or `group_sharing`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, EnumIter, DeriveActiveEnum)]
#[sea_orm(rs_type = "String", db_type = "Text")]
pub enum ConsentKind {
    /// The processing of the patient's health data (GDPR art. 9(2)(a)).
    #[sea_orm(string_value = "health_data")]
    HealthData,
    /// Sharing the patient's data with one group's staff.
    #[sea_orm(string_value = "group_sharing")]
    GroupSharing,
}

/// Through which door a consent came: stored as `api`, `portal` or `operator`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, EnumIter, DeriveActiveEnum)]
#[sea_orm(rs_type = "String", db_type = "Text")]
pub enum ConsentDoor {
    /// The JSON API (the apps).
    #[sea_orm(string_value = "api")]
    Api,
    /// The portal.
    #[sea_orm(string_value = "portal")]
    Portal,
    /// The command line, or a background job (retention, erasure).
    #[sea_orm(string_value = "operator")]
    Operator,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
