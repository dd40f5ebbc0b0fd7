//! A periodic report belongs to a prescription: `reports.group_id` names the group it was
//! made for, and it lists only the measurements shared with that group. The patient sees all
//! of its reports; a group's staff see those made for their group.
//!
//! Existing reports are moved to the group they were made for where their measurements allow
//! it. That group is the prescription's, for a scheduled report (found by the prescription
//! start in its key); for a manual one, the one group through which its maker saw the patient
//! during the period (or, made by an administrator, the one group the patient was enlisted in
//! then). The report moves only when every measurement it lists was shared with that group.
//! Any other report (its measurements span several groups, or no single group made it) keeps
//! no group: the patient and administrators see it, no group's staff do.

use std::collections::{BTreeSet, HashMap};

use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::{ConnectionTrait, Statement};

use crate::columns::index;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum Reports {
    Table,
    GroupId,
}

/// An existing report, as far as choosing its group goes.
struct Stored {
    id: String,
    user_id: String,
    creator_id: Option<String>,
    dedupe_key: Option<String>,
    start: i64,
    end: i64,
    measurements: Vec<String>,
}

/// A prescription: patient, group, start, end.
type Enlistment = (String, String, i64, i64);

/// The group a stored report was made for, if one group made it and every measurement it
/// lists was shared with that group.
fn group_of(
    report: &Stored,
    enlistments: &[Enlistment],
    staff: &HashMap<String, BTreeSet<String>>,
    shared: &HashMap<String, BTreeSet<String>>,
) -> Option<String> {
    let of_patient = || enlistments.iter().filter(|e| e.0 == report.user_id);
    let overlapping: BTreeSet<&String> = of_patient()
        .filter(|e| e.2 <= report.end && e.3 > report.start)
        .map(|e| &e.1)
        .collect();
    let candidates: BTreeSet<&String> = match (&report.dedupe_key, &report.creator_id) {
        // `report:<user>:<prescription start>:<trigger>:<period>`
        (Some(key), _) => {
            let start = key.split(':').nth(2).and_then(|s| s.parse::<i64>().ok());
            of_patient()
                .filter(|e| Some(e.2) == start)
                .map(|e| &e.1)
                .collect()
        }
        (None, Some(creator)) => match staff.get(creator) {
            Some(groups) => overlapping
                .into_iter()
                .filter(|g| groups.contains(*g))
                .collect(),
            // An administrator, or a maker no longer on any staff.
            None => overlapping,
        },
        (None, None) => overlapping,
    };
    let mut candidates = candidates.into_iter();
    let group = candidates.next()?;
    if candidates.next().is_some() {
        return None;
    }
    let all_shared = report.measurements.iter().all(|m| {
        shared
            .get(m)
            .is_some_and(|groups| groups.contains(group.as_str()))
    });
    all_shared.then(|| group.clone())
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(Reports::Table)
                    .add_column(ColumnDef::new(Reports::GroupId).char_len(24).null())
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(index(
                Reports::Table,
                "reports_group",
                &["group_id", "creation_timestamp"],
                false,
            ))
            .await?;

        let db = manager.get_connection();
        let backend = manager.get_database_backend();
        let query = |sql: &str| db.query_all_raw(Statement::from_string(backend, sql.to_owned()));
        let mut reports = Vec::new();
        for row in query(
            "SELECT id, user_id, creator_id, dedupe_key, period_start_timestamp, \
             period_end_timestamp, data FROM reports",
        )
        .await?
        {
            let data: String = row.try_get("", "data")?;
            let measurements = serde_json::from_str::<serde_json::Value>(&data)
                .ok()
                .and_then(|d| d.get("measurements").and_then(|m| m.as_array()).cloned())
                .unwrap_or_default()
                .iter()
                .filter_map(|m| m.get("id").and_then(|id| id.as_str()).map(str::to_owned))
                .collect();
            reports.push(Stored {
                id: row.try_get("", "id")?,
                user_id: row.try_get("", "user_id")?,
                creator_id: row.try_get("", "creator_id")?,
                dedupe_key: row.try_get("", "dedupe_key")?,
                start: row.try_get("", "period_start_timestamp")?,
                end: row.try_get("", "period_end_timestamp")?,
                measurements,
            });
        }
        if reports.is_empty() {
            return Ok(());
        }
        let mut enlistments: Vec<Enlistment> = Vec::new();
        for row in query(
            "SELECT user_id, group_id, creation_timestamp, expiry_timestamp \
             FROM patient_enlistments",
        )
        .await?
        {
            enlistments.push((
                row.try_get("", "user_id")?,
                row.try_get("", "group_id")?,
                row.try_get("", "creation_timestamp")?,
                row.try_get("", "expiry_timestamp")?,
            ));
        }
        let mut staff: HashMap<String, BTreeSet<String>> = HashMap::new();
        for row in query("SELECT user_id, group_id FROM staff_enlistments").await? {
            staff
                .entry(row.try_get("", "user_id")?)
                .or_default()
                .insert(row.try_get("", "group_id")?);
        }
        let mut shared: HashMap<String, BTreeSet<String>> = HashMap::new();
        for row in query("SELECT measurement_id, group_id FROM measurement_groups").await? {
            shared
                .entry(row.try_get("", "measurement_id")?)
                .or_default()
                .insert(row.try_get("", "group_id")?);
        }
        for report in &reports {
            if let Some(group) = group_of(report, &enlistments, &staff, &shared) {
                let update = Query::update()
                    .table(Reports::Table)
                    .value(Reports::GroupId, group)
                    .and_where(Expr::col(Alias::new("id")).eq(report.id.as_str()))
                    .to_owned();
                manager.exec_stmt(update).await?;
            }
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_index(
                Index::drop()
                    .name("reports_group")
                    .table(Reports::Table)
                    .to_owned(),
            )
            .await?;
        manager
            .alter_table(
                Table::alter()
                    .table(Reports::Table)
                    .drop_column(Reports::GroupId)
                    .to_owned(),
            )
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(creator: Option<&str>, key: Option<&str>, measurements: &[&str]) -> Stored {
        Stored {
            id: "r".into(),
            user_id: "p".into(),
            creator_id: creator.map(str::to_owned),
            dedupe_key: key.map(str::to_owned),
            start: 100,
            end: 200,
            measurements: measurements.iter().map(|m| (*m).to_owned()).collect(),
        }
    }

    fn sets(pairs: &[(&str, &[&str])]) -> HashMap<String, BTreeSet<String>> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.iter().map(|g| (*g).to_owned()).collect()))
            .collect()
    }

    #[test]
    fn a_report_moves_to_the_one_group_that_made_it_when_its_measurements_allow() {
        // The patient is in Ghent from 0 and in Lyon from 50; the Ghent physician is "g".
        let enlistments = vec![
            ("p".to_owned(), "ghent".to_owned(), 0, 1000),
            ("p".to_owned(), "lyon".to_owned(), 50, 1000),
        ];
        let staff = sets(&[("g", &["ghent"])]);
        let shared = sets(&[
            ("m1", &["ghent"]),
            ("m2", &["lyon"]),
            ("m3", &["ghent", "lyon"]),
        ]);
        let group = |r: &Stored| group_of(r, &enlistments, &staff, &shared);
        // Scheduled: the prescription that started at 0 is Ghent's.
        let scheduled = report(
            None,
            Some("report:p:0:PERIOD_DAYS_PASSED_7:0"),
            &["m1", "m3"],
        );
        assert_eq!(group(&scheduled).as_deref(), Some("ghent"));
        // The same report listing a measurement only Lyon had stays with the patient.
        let spanning = report(
            None,
            Some("report:p:0:PERIOD_DAYS_PASSED_7:0"),
            &["m1", "m2"],
        );
        assert_eq!(group(&spanning), None);
        // Manual, by Ghent's physician: Ghent.
        assert_eq!(
            group(&report(Some("g"), None, &["m1"])).as_deref(),
            Some("ghent")
        );
        // Manual, by an administrator, with two groups overlapping: no single group.
        assert_eq!(group(&report(Some("admin"), None, &["m3"])), None);
        // An empty scheduled report still belongs to its prescription.
        let empty = report(None, Some("report:p:50:PERIOD_DAYS_PASSED_30:0"), &[]);
        assert_eq!(group(&empty).as_deref(), Some("lyon"));
    }
}
