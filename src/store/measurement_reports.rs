//! Measurement report documents.

use sea_orm::{ActiveModelTrait, ColumnTrait, EntityTrait, QueryFilter, QueryOrder, Set};

use super::entities::file;
use super::entities::measurement_report::{self, MeasurementReportStatus};
use super::notifications::{NewEvent, write_event};
use super::query::ListSpec;
use super::{Reader, Scope, StoreError, StoreResult, Tx, Viewer};
use crate::domain::id::Id;
use crate::domain::notification::EventKind;

/// A report document to record; it is rendered already.
#[derive(Debug, Clone)]
pub struct NewMeasurementReport {
    pub creator_id: Id,
    pub patient_id: Id,
    pub measurement_id: Id,
    pub language: String,
    pub time_zone: String,
    pub file_id: Id,
    pub for_measurement_updated_timestamp: i64,
}

/// A report document with the file it points at and its measurement's groups.
#[derive(Debug, Clone)]
pub struct ReportRecord {
    pub report: measurement_report::Model,
    pub file: Option<file::Model>,
    pub group_ids: Vec<Id>,
}

impl ReportRecord {
    /// The file of this document if it can be handed out again for a measurement last changed
    /// at `updated`, read in `language` (its code) in the patient's `time_zone`: rendered, not
    /// older than that change, in that language and zone (interface.md 3, rule 1, as the SDK's
    /// `getMeasurementReportUrl` checks it).
    pub fn reusable(&self, updated: i64, language: &str, time_zone: &str) -> Option<&file::Model> {
        let r = &self.report;
        let fits = r.status == MeasurementReportStatus::Rendered
            && r.for_measurement_updated_timestamp >= updated
            && r.language == language
            && r.time_zone == time_zone;
        fits.then_some(self.file.as_ref()).flatten()
    }
}

impl Reader {
    /// The newest report document of a measurement that `viewer` may see, if any.
    pub async fn latest_measurement_report(
        &self,
        viewer: &Viewer,
        measurement_id: &Id,
    ) -> StoreResult<Option<ReportRecord>> {
        let latest = measurement_report::Entity::find()
            .filter(viewer.measurements("measurement_reports", "measurement_id", "patient_id"))
            .filter(measurement_report::Column::MeasurementId.eq(*measurement_id))
            .order_by_desc(measurement_report::Column::Id)
            .one(&self.db)
            .await?;
        Ok(self
            .report_records(latest.into_iter().collect())
            .await?
            .pop())
    }

    /// A page of the report documents `viewer` may see (those of visible patients).
    pub async fn list_measurement_reports(
        &self,
        viewer: &Viewer,
        spec: &ListSpec,
    ) -> StoreResult<(Vec<ReportRecord>, Option<u64>)> {
        let select = measurement_report::Entity::find().filter(viewer.measurements(
            "measurement_reports",
            "measurement_id",
            "patient_id",
        ));
        let (reports, total) = self.page(select, spec).await?;
        Ok((self.report_records(reports).await?, total))
    }

    /// The report document `id` if `viewer` may see it.
    pub async fn visible_measurement_report(
        &self,
        viewer: &Viewer,
        id: &Id,
    ) -> StoreResult<ReportRecord> {
        let report = measurement_report::Entity::find_by_id(*id)
            .filter(viewer.measurements("measurement_reports", "measurement_id", "patient_id"))
            .one(&self.db)
            .await?
            .ok_or(StoreError::NotFound)?;
        self.report_records(vec![report])
            .await?
            .pop()
            .ok_or(StoreError::NotFound)
    }

    async fn report_records(
        &self,
        reports: Vec<measurement_report::Model>,
    ) -> StoreResult<Vec<ReportRecord>> {
        use sea_orm::ColumnTrait;
        let ids: Vec<Id> = reports.iter().filter_map(|r| r.file_id).collect();
        let files = file::Entity::find()
            .filter(file::Column::Id.is_in(ids))
            .all(&self.db)
            .await?;
        let measurement_ids: Vec<Id> = reports.iter().map(|r| r.measurement_id).collect();
        let groups = self.measurement_group_ids(&measurement_ids).await?;
        Ok(reports
            .into_iter()
            .map(|report| ReportRecord {
                file: files
                    .iter()
                    .find(|f| Some(&f.id) == report.file_id.as_ref())
                    .cloned(),
                group_ids: groups
                    .get(&report.measurement_id)
                    .cloned()
                    .unwrap_or_default(),
                report,
            })
            .collect())
    }
}

impl Tx {
    /// Records a rendered report document.
    pub async fn insert_measurement_report(
        &self,
        new: NewMeasurementReport,
    ) -> StoreResult<measurement_report::Model> {
        let now = self.now();
        let made = measurement_report::ActiveModel {
            id: Set(Id::generate()),
            creator_id: Set(new.creator_id),
            patient_id: Set(new.patient_id),
            measurement_id: Set(new.measurement_id),
            status: Set(MeasurementReportStatus::Rendered),
            language: Set(new.language),
            time_zone: Set(new.time_zone),
            file_id: Set(Some(new.file_id)),
            for_measurement_updated_timestamp: Set(new.for_measurement_updated_timestamp),
            creation_timestamp: Set(now),
            update_timestamp: Set(now),
            status_changed_timestamp: Set(now),
        }
        .insert(&self.db)
        .await?;
        // Whoever asked for the document has it; the others are told it is ready.
        write_event(
            &self.db,
            now,
            NewEvent {
                kind: EventKind::MeasurementReportReady,
                patient_id: made.patient_id,
                actor_id: Some(made.creator_id),
                measurement_id: Some(made.measurement_id),
                report_id: Some(made.id),
                detail: made.language.clone(),
            },
        )
        .await?;
        self.events_written();
        Ok(made)
    }
}
