//! On PostgreSQL, the indexes that lists are sorted by keep missing values first. Tacho sorts
//! missing values as the smallest on every database (`ASC NULLS FIRST`, `DESC NULLS LAST`,
//! SQLite's own order). A PostgreSQL index built with the default order keeps them last, so
//! it could serve neither a descending list nor an ascending one: the physician's inbox,
//! newest first, read all of the physician's entries and sorted them for a page of 20
//! (22,951 rows at 20,000 measurements). An index `NULLS FIRST` read forwards is the
//! ascending order and read backwards the descending one. The inbox's index also takes the
//! id, which breaks ties. SQLite needs none of this.
//!
//! Only the indexes of lists sorted through `store::ordered` (the API's lists and the
//! portal's, which follow that convention) are rebuilt: the portal's patient list (by name)
//! and the audit trail of a patient (newest first) sort without a NULLS clause, in the
//! order their indexes already have.

use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::{ConnectionTrait, DbBackend};

#[derive(DeriveMigrationName)]
pub struct Migration;

/// The indexes rebuilt: name, table, and columns in the new order.
const INDEXES: &[(&str, &str, &str)] = &[
    (
        "notifications_inbox",
        "notifications",
        "user_id, creation_timestamp NULLS FIRST, id NULLS FIRST",
    ),
    (
        "reports_user_created",
        "reports",
        "user_id, creation_timestamp NULLS FIRST",
    ),
    (
        "reports_group",
        "reports",
        "group_id, creation_timestamp NULLS FIRST",
    ),
    (
        "reports_created",
        "reports",
        "creation_timestamp NULLS FIRST",
    ),
    ("users_creation", "users", "creation_timestamp NULLS FIRST"),
    (
        "measurements_timestamp",
        "measurements",
        "measurement_timestamp NULLS FIRST",
    ),
    (
        "measurements_creation",
        "measurements",
        "creation_timestamp NULLS FIRST",
    ),
    (
        "measurement_reports_creation",
        "measurement_reports",
        "creation_timestamp NULLS FIRST",
    ),
];

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        if manager.get_database_backend() != DbBackend::Postgres {
            return Ok(());
        }
        let db = manager.get_connection();
        for (name, table, columns) in INDEXES {
            db.execute_unprepared(&format!("DROP INDEX IF EXISTS {name}"))
                .await?;
            db.execute_unprepared(&format!("CREATE INDEX {name} ON {table} ({columns})"))
                .await?;
        }
        Ok(())
    }

    async fn down(&self, _manager: &SchemaManager) -> Result<(), DbErr> {
        // The default order served no list; there is nothing to go back to.
        Ok(())
    }
}
