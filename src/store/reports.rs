//! Periodic reports, and the prescriptions the scheduler makes them for.

use std::collections::{BTreeSet, HashMap};

use sea_orm::sea_query::{Condition, Expr, ExprTrait};

use sea_orm::{
    ColumnTrait, EntityTrait, IntoActiveModel, QueryFilter, QueryOrder, QuerySelect,
    TryInsertResult,
};
use serde_json::{Value, json};

use super::entities::{measurement, patient_enlistment, report, user};
use super::notifications::{NewEvent, write_events};
use super::query::ListSpec;
use super::visibility::{self, Both, Prescription, Scope, Service};
use super::{Reader, StoreError, StoreResult, Tx, Viewer};
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
    /// The group of the prescription it is made for (its staff see it); none for a report
    /// kept for the patient and administrators only.
    pub group_id: Option<Id>,
    /// Who asked for it (manual reports).
    pub creator_id: Option<Id>,
    pub trigger: Trigger,
    /// Scheduled reports carry their unique (prescription, trigger, period) key.
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

impl Reader {
    /// Reads what a report of `new` lists, of the measurements `scope` may see, and shapes
    /// the report, without storing it.
    pub async fn prepare_report(
        &self,
        scope: &dyn Scope,
        new: NewReport,
    ) -> StoreResult<report::Model> {
        let items = self
            .report_items(scope, &new.user_id, new.start, new.end)
            .await?;
        Ok(self.shape_report(new, items))
    }

    /// What a manual report of `user_id` over `[start, end)` for `group` would list, of the
    /// measurements `viewer` may see, shaped as a report but never stored: the portal's trend
    /// view, which therefore shows exactly what the periodic PDF of the same period shows.
    pub async fn trend(
        &self,
        viewer: &Viewer,
        user_id: &Id,
        group: Option<Id>,
        start: i64,
        end: i64,
    ) -> StoreResult<report::Model> {
        let patient = self.visible_user(viewer, user_id).await?;
        let new = NewReport {
            user_id: patient.id,
            group_id: group,
            creator_id: Some(viewer.user_id),
            trigger: Trigger::Manual,
            dedupe_key: None,
            start,
            end,
        };
        match group {
            Some(group) => {
                let prescription = Prescription {
                    patient: patient.id,
                    group,
                };
                self.prepare_report(&Both(viewer, &prescription), new).await
            }
            None => self.prepare_report(viewer, new).await,
        }
    }

    /// The groups through which `viewer` sees `patient` now, for a report it makes: the
    /// groups of the patient's running prescriptions that the viewer is staff of (every one
    /// of them, for an administrator), in order.
    pub async fn report_groups(&self, viewer: &Viewer, patient: &Id) -> StoreResult<Vec<Id>> {
        let mut running = patient_enlistment::Entity::find()
            .select_only()
            .column(patient_enlistment::Column::GroupId)
            .filter(patient_enlistment::Column::UserId.eq(*patient))
            .filter(patient_enlistment::Column::ExpiryTimestamp.gt(self.now()))
            .filter(viewer.users("patient_enlistments", "user_id", self.now()));
        if !viewer.admin {
            running = running.filter(
                patient_enlistment::Column::GroupId
                    .in_subquery(visibility::staff_groups_of(&viewer.user_id)),
            );
        }
        let groups: BTreeSet<Id> = running
            .into_tuple::<Id>()
            .all(&self.db)
            .await?
            .into_iter()
            .collect();
        Ok(groups.into_iter().collect())
    }

    fn shape_report(&self, new: NewReport, items: Vec<Value>) -> report::Model {
        let now = self.now();
        report::Model {
            id: Id::generate(),
            user_id: new.user_id,
            creator_id: new.creator_id,
            group_id: new.group_id,
            trigger: new.trigger,
            status: report::ReportStatus::Complete,
            dedupe_key: new.dedupe_key,
            period_start_timestamp: new.start,
            period_end_timestamp: new.end,
            data: json!({ "measurements": items }).to_string(),
            creation_timestamp: now,
            update_timestamp: now,
        }
    }

    /// The measurements of `user_id` taken in `[start, end)` that `scope` may see, oldest
    /// first, as report items. Only the columns a report lists are read; payloads only for
    /// rows stored before summaries existed.
    async fn report_items(
        &self,
        scope: &dyn Scope,
        user_id: &Id,
        start: i64,
        end: i64,
    ) -> StoreResult<Vec<Value>> {
        let visible = scope.measurements("measurements", "id", "creator_id");
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
            .filter(visible)
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

    /// A page of the reports `viewer` may see: its own, and those made for its groups.
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
    /// enqueued period ends before the prescription does (the scheduler's reading, under
    /// [`Service::Scheduler`]).
    pub async fn open_prescriptions(&self, scope: &Service) -> StoreResult<Vec<OpenPrescription>> {
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
                .filter(scope.users("users", "id", self.now()))
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

    /// The group of `user_id`'s prescription that started at `start`, if there is exactly
    /// one (for report jobs enqueued before their group was part of them).
    pub async fn prescription_group(
        &self,
        scope: &Service,
        user_id: &Id,
        start: i64,
    ) -> StoreResult<Option<Id>> {
        let groups: Vec<Id> = patient_enlistment::Entity::find()
            .select_only()
            .column(patient_enlistment::Column::GroupId)
            .filter(patient_enlistment::Column::UserId.eq(*user_id))
            .filter(patient_enlistment::Column::CreationTimestamp.eq(start))
            .filter(scope.users("patient_enlistments", "user_id", self.now()))
            .into_tuple()
            .all(&self.db)
            .await?;
        Ok(match groups.as_slice() {
            [group] => Some(*group),
            _ => None,
        })
    }

    /// Whether `user_id` exists, `scope` sees it, and it may have reports made (not
    /// deactivated).
    pub async fn user_is_active(&self, scope: &dyn Scope, user_id: &Id) -> StoreResult<bool> {
        let found: Option<bool> = user::Entity::find_by_id(user_id.to_owned())
            .select_only()
            .column(user::Column::Activation)
            .filter(scope.users("users", "id", self.now()))
            .into_tuple()
            .one(&self.db)
            .await?;
        Ok(found == Some(true))
    }
}

impl Tx {
    /// Makes a report of the measurements `user_id` made in its period that `scope` may see.
    /// A scheduled report whose key exists already is not made again: `None`.
    pub async fn create_report(
        &self,
        scope: &dyn Scope,
        new: NewReport,
    ) -> StoreResult<Option<report::Model>> {
        let report = self.prepare_report(scope, new).await?;
        Ok(self.store_reports(vec![report]).await?.pop())
    }

    /// Stores prepared reports, each with its `periodic_report.created` event, in one
    /// transaction (a savepoint inside an action's); a scheduled report whose key exists
    /// already is left out. Returns the reports stored. One transaction for a batch is what
    /// keeps a scheduler run cheap: on SQLite every transaction holds the only write lock, and
    /// on PostgreSQL every commit waits for the disk.
    pub async fn store_reports(
        &self,
        reports: Vec<report::Model>,
    ) -> StoreResult<Vec<report::Model>> {
        if reports.is_empty() {
            return Ok(Vec::new());
        }
        let txn = self.db.begin().await?;
        let mut stored = BTreeSet::new();
        // 11 values a row: a chunk stays far below SQLite's parameter limit.
        for chunk in reports.chunks(200) {
            let inserted = report::Entity::insert_many(
                chunk
                    .iter()
                    .cloned()
                    .map(IntoActiveModel::into_active_model),
            )
            .on_conflict_do_nothing_on([report::Column::DedupeKey])
            .exec_with_returning_keys(&txn)
            .await?;
            if let TryInsertResult::Inserted(keys) = inserted {
                stored.extend(keys);
            }
        }
        let made: Vec<report::Model> = reports
            .into_iter()
            .filter(|r| stored.contains(&r.id))
            .collect();
        let events = made.iter().map(|r| NewEvent {
            kind: EventKind::PeriodicReportCreated,
            patient_id: r.user_id,
            actor_id: r.creator_id,
            measurement_id: None,
            report_id: Some(r.id),
            detail: r.trigger.to_string(),
        });
        write_events(&txn, self.now(), events).await?;
        txn.commit().await?;
        if !made.is_empty() {
            self.events_written();
        }
        Ok(made)
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
}
