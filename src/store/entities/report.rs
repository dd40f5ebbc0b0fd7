//! `reports`: periodic reports, each covering the measurements of one period.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "reports")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: String,
    /// The patient the report is about.
    pub user_id: String,
    /// Who asked for a manual report; none for scheduled ones.
    pub creator_id: Option<String>,
    /// `MANUAL`, `PERIOD_DAYS_PASSED_7`, `PERIOD_DAYS_PASSED_30` or `PRESCRIPTION_ENDED`.
    pub trigger: String,
    pub status: String,
    /// Unique for scheduled reports (user, trigger, period start); none for manual ones.
    pub dedupe_key: Option<String>,
    pub period_start_timestamp: i64,
    pub period_end_timestamp: i64,
    /// JSON text: `{"measurements": [...]}`, as they were when the report was made.
    #[sea_orm(column_type = "Text")]
    pub data: String,
    pub creation_timestamp: i64,
    pub update_timestamp: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
