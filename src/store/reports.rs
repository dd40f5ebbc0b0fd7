//! Periodic reports, and the prescriptions the scheduler makes them for.

use std::collections::HashMap;

use sea_orm::sea_query::{Condition, Expr, ExprTrait};
use sea_orm::{
    ActiveValue::Set, ColumnTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect,
    TryInsertResult,
};
use serde_json::{Value, json};

use super::entities::{measurement, patient_enlistment, report, user};
use super::notifications::{NewEvent, write_event};
use super::query::ListSpec;
use super::{Store, StoreError, StoreResult, Viewer};
use crate::domain::id::Id;
use crate::domain::measurement::Summary;
use crate::domain::notification::EventKind;
use crate::domain::periods::Trigger;

/// The wire fields of each measurement a report lists (the stored item holds a few more
/// that the PDF shows).
pub const MEASUREMENT_ITEM_FIELDS: [&str; 6] = [
    "id",
    "measurement_timestamp",
    "heartrate",
    "status",
    "indicator",
    "label",
];

/// A report to make.
#[derive(Debug, Clone)]
pub struct NewReport {
    pub user_id: Id,
    /// Who asked for it (manual reports).
    pub creator_id: Option<Id>,
    pub trigger: Trigger,
    /// Scheduled reports carry their unique (user, trigger, period start) key.
    pub dedupe_key: Option<String>,
    /// `[start, end)`, epoch ms.
    pub start: i64,
    pub end: i64,
}

/// A prescription that may have periods left to schedule, with its patient's time zone.
#[derive(Debug, Clone)]
pub struct OpenPrescription {
    pub enlistment: patient_enlistment::Model,
    pub time_zone: String,
}

type MeasurementRow = (
    Id,
    Option<i64>,
    Option<f64>,
    String,
    Option<String>,
    Option<f64>,
    Option<String>,
    Option<String>,
);

impl Store {
    /// Makes a report of the measurements `user_id` made in its period. A scheduled report
    /// whose key exists already is not made again: `None`.
    pub async fn create_report(&self, new: NewReport) -> StoreResult<Option<report::Model>> {
        let items = self.report_items(&new.user_id, new.start, new.end).await?;
        let now = self.now();
        let model = report::ActiveModel {
            id: Set(Id::generate()),
            user_id: Set(new.user_id),
            creator_id: Set(new.creator_id),
            trigger: Set(new.trigger.as_str().to_owned()),
            status: Set(report::ReportStatus::Complete),
            dedupe_key: Set(new.dedupe_key),
            period_start_timestamp: Set(new.start),
            period_end_timestamp: Set(new.end),
            data: Set(json!({ "measurements": items }).to_string()),
            creation_timestamp: Set(now),
            update_timestamp: Set(now),
        };
        let id = model.id.clone().unwrap();
        // The report and its event commit together (a savepoint inside an action's transaction).
        let txn = self.db.begin().await?;
        let inserted = report::Entity::insert(model)
            .on_conflict_do_nothing_on([report::Column::DedupeKey])
            .exec(&txn)
            .await?;
        if !matches!(inserted, TryInsertResult::Inserted(_)) {
            return Ok(None);
        }
        let made = report::Entity::find_by_id(id).one(&txn).await?;
        write_event(
            &txn,
            now,
            NewEvent {
                kind: EventKind::PeriodicReportCreated,
                patient_id: new.user_id,
                actor_id: new.creator_id,
                measurement_id: None,
                report_id: Some(id),
                detail: new.trigger.as_str().to_owned(),
            },
        )
        .await?;
        txn.commit().await?;
        self.events_written();
        Ok(made)
    }

    /// The measurements of `user_id` taken in `[start, end)`, oldest first, as report items.
    /// Only the columns a report lists are read; payloads only for rows stored before
    /// summaries existed.
    async fn report_items(&self, user_id: &Id, start: i64, end: i64) -> StoreResult<Vec<Value>> {
        let rows: Vec<MeasurementRow> = measurement::Entity::find()
            .select_only()
            .columns([
                measurement::Column::Id,
                measurement::Column::MeasurementTimestamp,
                measurement::Column::Heartrate,
                measurement::Column::Status,
                measurement::Column::Indicator,
                measurement::Column::HeartRate,
                measurement::Column::Result,
                measurement::Column::Summary,
            ])
            .filter(measurement::Column::CreatorId.eq(user_id))
            .filter(measurement::Column::MeasurementTimestamp.gte(start))
            .filter(measurement::Column::MeasurementTimestamp.lt(end))
            .order_by_asc(measurement::Column::MeasurementTimestamp)
            .order_by_asc(measurement::Column::Id)
            .into_tuple()
            .all(&self.db)
            .await?;
        let mut items = Vec::with_capacity(rows.len());
        for (id, timestamp, heartrate, status, indicator, heart_rate, result, summary) in rows {
            let summary = match summary.and_then(|s| serde_json::from_str::<Summary>(&s).ok()) {
                Some(summary) => summary,
                None => match measurement::Entity::find_by_id(id).one(&self.db).await? {
                    Some(model) => model.summary(),
                    None => continue,
                },
            };
            items.push(json!({
                "id": id,
                "measurement_timestamp": timestamp,
                "heartrate": heartrate,
                "status": status,
                "indicator": indicator,
                "heart_rate": heart_rate,
                "result": result,
                "labels": summary.labels,
                "label": summary.label,
                "symptoms": summary.symptoms,
                "quality": summary.quality,
            }));
        }
        Ok(items)
    }

    /// A page of the reports `viewer` may see (those of visible users).
    pub async fn list_reports(
        &self,
        viewer: &Viewer,
        spec: &ListSpec,
    ) -> StoreResult<(Vec<report::Model>, Option<u64>)> {
        let select = report::Entity::find().filter(viewer.periodic_reports());
        self.page(select, spec).await
    }

    /// The report `id` if `viewer` may see it.
    pub async fn visible_report(&self, viewer: &Viewer, id: &Id) -> StoreResult<report::Model> {
        report::Entity::find_by_id(*id)
            .filter(viewer.periodic_reports())
            .one(&self.db)
            .await?
            .ok_or(StoreError::NotFound)
    }

    /// Prescriptions of active users with periods still to schedule: those whose latest
    /// enqueued period ends before the prescription does.
    pub async fn open_prescriptions(&self) -> StoreResult<Vec<OpenPrescription>> {
        let enlistments = patient_enlistment::Entity::find()
            .filter(
                Condition::any()
                    .add(patient_enlistment::Column::ScheduledUntil.is_null())
                    .add(
                        Expr::col(patient_enlistment::Column::ScheduledUntil)
                            .lt(Expr::col(patient_enlistment::Column::ExpiryTimestamp)),
                    ),
            )
            .order_by_asc(patient_enlistment::Column::Id)
            .all(&self.db)
            .await?;
        let mut zones: HashMap<Id, String> = HashMap::new();
        let ids: Vec<Id> = enlistments.iter().map(|e| e.user_id).collect();
        for chunk in ids.chunks(500) {
            let rows: Vec<(Id, String)> = user::Entity::find()
                .select_only()
                .columns([user::Column::Id, user::Column::TimeZone])
                .filter(user::Column::Id.is_in(chunk.to_vec()))
                .filter(user::Column::Activation.eq(true))
                .into_tuple()
                .all(&self.db)
                .await?;
            zones.extend(rows);
        }
        Ok(enlistments
            .into_iter()
            .filter_map(|enlistment| {
                let time_zone = zones.get(&enlistment.user_id)?.clone();
                Some(OpenPrescription {
                    enlistment,
                    time_zone,
                })
            })
            .collect())
    }

    /// Records that every period of a prescription ending by `until` has been enqueued.
    pub async fn mark_scheduled(&self, enlistment_id: &Id, until: i64) -> StoreResult<()> {
        patient_enlistment::Entity::update_many()
            .col_expr(
                patient_enlistment::Column::ScheduledUntil,
                Expr::value(until),
            )
            .filter(patient_enlistment::Column::Id.eq(enlistment_id))
            .filter(
                Condition::any()
                    .add(patient_enlistment::Column::ScheduledUntil.is_null())
                    .add(patient_enlistment::Column::ScheduledUntil.lt(until)),
            )
            .exec(&self.db)
            .await?;
        Ok(())
    }

    /// Whether `user_id` exists and may have reports made (not deactivated).
    pub async fn user_is_active(&self, user_id: &Id) -> StoreResult<bool> {
        let found: Option<bool> = user::Entity::find_by_id(user_id.to_owned())
            .select_only()
            .column(user::Column::Activation)
            .into_tuple()
            .one(&self.db)
            .await?;
        Ok(found == Some(true))
    }
}
