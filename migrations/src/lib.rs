//! Database schema of Tacho, as sea-orm migrations that run unchanged on SQLite and PostgreSQL.
//!
//! Every timestamp is a `BIGINT` of epoch milliseconds: both databases then compare and sort
//! them identically (SQLite keeps nanoseconds and PostgreSQL microseconds in native types).

pub use sea_orm_migration::prelude::*;

mod columns;
mod m20261122_000001_accounts;
mod m20261122_000002_measurements;
mod m20261122_000003_jobs;
mod m20261122_000004_reports;
mod m20261122_000010_sessions;
mod m20261122_000011_audit;
mod m20261123_000012_measurement_list_index;
mod m20261124_000013_measurement_results;
mod m20261124_000021_login_attempts;
mod m20261124_000030_shared_links;
mod m20261124_000031_file_token_hashes;
mod m20261124_000040_audit_append_only;
mod m20261125_000050_notifications;
mod m20261126_000060_event_fan_out;
mod m20261126_000070_account_links;
mod m20261126_000080_report_groups;
mod m20261127_000090_clinic_scale;
mod m20261127_000100_by_measurement;
mod m20261127_000110_measurement_conclusions;
mod m20261127_000120_work_rank_rates;
mod m20261127_000130_reports_by_file;
mod m20261127_000140_password_change_due;
mod m20261128_000150_report_links;
mod m20261128_000160_ids_as_varchar;
mod m20261128_000170_sort_indexes_nulls_first;
mod m20261128_000180_files_sha1;
mod m20261128_000190_patient_rights;
mod m20261128_000200_kept_tallies;
mod m20261128_000210_users_by_name;
mod m20261129_000220_inbox_care;
mod m20261207_000230_work_tallies;
mod m20261207_000240_audit_without_rowid;

/// Applies Tacho's migrations in order.
pub struct Migrator;

#[async_trait::async_trait]
impl MigratorTrait for Migrator {
    fn migrations() -> Vec<Box<dyn MigrationTrait>> {
        vec![
            Box::new(m20261122_000001_accounts::Migration),
            Box::new(m20261122_000002_measurements::Migration),
            Box::new(m20261122_000003_jobs::Migration),
            Box::new(m20261122_000004_reports::Migration),
            Box::new(m20261122_000010_sessions::Migration),
            Box::new(m20261122_000011_audit::Migration),
            Box::new(m20261123_000012_measurement_list_index::Migration),
            Box::new(m20261124_000013_measurement_results::Migration),
            Box::new(m20261124_000021_login_attempts::Migration),
            Box::new(m20261124_000030_shared_links::Migration),
            Box::new(m20261124_000031_file_token_hashes::Migration),
            Box::new(m20261124_000040_audit_append_only::Migration),
            Box::new(m20261125_000050_notifications::Migration),
            Box::new(m20261126_000060_event_fan_out::Migration),
            Box::new(m20261126_000070_account_links::Migration),
            Box::new(m20261126_000080_report_groups::Migration),
            Box::new(m20261127_000090_clinic_scale::Migration),
            Box::new(m20261127_000100_by_measurement::Migration),
            Box::new(m20261127_000110_measurement_conclusions::Migration),
            Box::new(m20261127_000120_work_rank_rates::Migration),
            Box::new(m20261127_000130_reports_by_file::Migration),
            Box::new(m20261127_000140_password_change_due::Migration),
            Box::new(m20261128_000150_report_links::Migration),
            Box::new(m20261128_000160_ids_as_varchar::Migration),
            Box::new(m20261128_000170_sort_indexes_nulls_first::Migration),
            Box::new(m20261128_000180_files_sha1::Migration),
            Box::new(m20261128_000190_patient_rights::Migration),
            Box::new(m20261128_000200_kept_tallies::Migration),
            Box::new(m20261128_000210_users_by_name::Migration),
            Box::new(m20261129_000220_inbox_care::Migration),
            Box::new(m20261207_000230_work_tallies::Migration),
            Box::new(m20261207_000240_audit_without_rowid::Migration),
        ]
    }
}
