//! `measurement_reports`: report documents, each pointing at a (possibly shared) rendered file.

use sea_orm::entity::prelude::*;

use crate::domain::id::Id;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "measurement_reports")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: Id,
    pub creator_id: Id,
    pub patient_id: Id,
    pub measurement_id: Id,
    pub status: MeasurementReportStatus,
    pub language: String,
    pub time_zone: String,
    pub file_id: Option<Id>,
    pub for_measurement_updated_timestamp: i64,
    pub creation_timestamp: i64,
    pub update_timestamp: i64,
    pub status_changed_timestamp: i64,
}

/// Where a report document is; stored and shown as `rendered` (the only state: a document is
/// recorded once its PDF exists).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, EnumIter, DeriveActiveEnum)]
#[sea_orm(rs_type = "String", db_type = "Text")]
pub enum MeasurementReportStatus {
    /// Its PDF is made.
    #[sea_orm(string_value = "rendered")]
    Rendered,
}

impl MeasurementReportStatus {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            MeasurementReportStatus::Rendered => "rendered",
        }
    }
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {
    #[sea_orm(
        belongs_to = "super::file::Entity",
        from = "Column::FileId",
        to = "super::file::Column::Id"
    )]
    File,
}

impl Related<super::file::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::File.def()
    }
}

impl ActiveModelBehavior for ActiveModel {}
