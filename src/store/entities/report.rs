//! `reports`: periodic reports, each covering the measurements of one period.

use sea_orm::entity::prelude::*;

use crate::domain::id::Id;
use crate::domain::periods::Trigger;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "reports")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: Id,
    /// The patient the report is about.
    pub user_id: Id,
    /// Who asked for a manual report; none for scheduled ones.
    pub creator_id: Option<Id>,
    /// The group of the prescription it was made for: its staff see it, and it lists only
    /// the measurements shared with that group. None: the patient's and administrators' only.
    pub group_id: Option<Id>,
    /// `MANUAL`, `PERIOD_DAYS_PASSED_7`, `PERIOD_DAYS_PASSED_30` or `PRESCRIPTION_ENDED`.
    pub trigger: Trigger,
    pub status: ReportStatus,
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

/// Where a periodic report is; stored and shown as `COMPLETE` (the only state: a report is
/// recorded once its items are gathered; its PDF is made on request).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, EnumIter, DeriveActiveEnum)]
#[sea_orm(rs_type = "String", db_type = "Text")]
pub enum ReportStatus {
    /// Its items are gathered.
    #[sea_orm(string_value = "COMPLETE")]
    Complete,
}

impl ReportStatus {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            ReportStatus::Complete => "COMPLETE",
        }
    }
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
