//! Reports: a measurement's PDF, a manual periodic report, and a periodic report's PDF.

use chrono_tz::Tz;

use super::{ActionError, ActionResult, Actions, EntryExt, entry};
use crate::domain::account::{Language, TimeZone};
use crate::domain::id::Id;
use crate::domain::periods::{Trigger, manual_period};
use crate::domain::time::rfc3339_millis;
use crate::store::entities::{file, report};
use crate::store::{NewReport, ReportRecord, StoreError, Viewer};

/// A measurement's PDF as handed out.
#[derive(Debug)]
pub struct MeasurementPdf {
    /// The report document (new, or the one reused), with its file.
    pub report: ReportRecord,
    /// The file of the PDF.
    pub file: file::Model,
    /// Whether an existing document was handed out again.
    pub reused: bool,
}

/// A periodic report's PDF as handed out.
#[derive(Debug)]
pub struct PeriodicPdf {
    pub report: report::Model,
    pub file: file::Model,
}

impl Actions {
    /// A measurement's report in `language`, in the patient's current time zone. With
    /// `reuse`, the newest existing document is handed out again when it still fits: rendered,
    /// not older than the measurement's last change, in that language and that time zone
    /// (interface.md 3, rule 1, as the SDK's `getMeasurementReportUrl` checks it); otherwise a
    /// new document is made (the PDF itself is rendered only when no PDF of the same content
    /// exists).
    pub async fn measurement_pdf(
        &self,
        viewer: &Viewer,
        measurement: &Id,
        language: Language,
        reuse: bool,
    ) -> ActionResult<MeasurementPdf> {
        let id = *measurement;
        let record = self.store.visible_measurement(viewer, &id).await?;
        let patient_id = record.measurement.creator_id;
        let patient = self
            .store
            .user_by_id(&patient_id)
            .await?
            .ok_or(StoreError::NotFound)?;
        if reuse {
            let latest = self.store.latest_measurement_report(viewer, &id).await?;
            let updated = record.measurement.update_timestamp;
            let file = latest.as_ref().and_then(|latest| {
                latest
                    .reusable(updated, language.code(), &patient.time_zone)
                    .cloned()
            });
            if let (Some(latest), Some(file)) = (latest, file) {
                let audit = entry(viewer, "report.download", "measurement", &id)
                    .patient(&patient_id)
                    .detail(language.code());
                self.store.audit(audit).await?;
                return Ok(MeasurementPdf {
                    report: latest,
                    file,
                    reused: true,
                });
            }
        }
        let (report, file) = self
            .reports
            .create_measurement_report(&viewer.user_id, &record, &patient, language)
            .await?;
        let audit = entry(viewer, "report.create", "measurement", &id)
            .patient(&patient_id)
            .detail(language.code());
        self.store.audit(audit).await?;
        Ok(MeasurementPdf {
            report: ReportRecord {
                report,
                file: Some(file.clone()),
                group_ids: record.group_ids,
            },
            file,
            reused: false,
        })
    }

    /// Makes a manual periodic report of a patient's measurements from `start` to `end`
    /// (epoch ms; by default the 7 days up to now): administrators, and the staff of a group
    /// the patient is in, never the patient.
    pub async fn create_manual_report(
        &self,
        viewer: &Viewer,
        patient: &Id,
        start: Option<i64>,
        end: Option<i64>,
    ) -> ActionResult<report::Model> {
        let store = self.store.begin().await?;
        let patient = store.patient_to_report_on(viewer, patient).await?;
        let (start, end) = manual_period(start, end, store.clock().now_millis())
            .map_err(|message| ActionError::invalid(message, "error-period-invalid"))?;
        let report = store
            .create_report(NewReport {
                user_id: patient.id,
                creator_id: Some(viewer.user_id),
                trigger: Trigger::Manual,
                dedupe_key: None,
                start,
                end,
            })
            .await?
            .ok_or_else(|| anyhow::anyhow!("a manual report was not stored"))?;
        let period = format!("{} to {}", rfc3339_millis(start), rfc3339_millis(end));
        store
            .audit(
                entry(viewer, "report.create", "periodic-report", &report.id)
                    .patient(&patient.id)
                    .detail(format!("manual, {period}")),
            )
            .await?;
        store.commit().await?;
        Ok(report)
    }

    /// A periodic report's PDF in `language` and `zone`, by default the patient's.
    pub async fn periodic_pdf(
        &self,
        viewer: &Viewer,
        report: &Id,
        language: Option<Language>,
        zone: Option<TimeZone>,
    ) -> ActionResult<PeriodicPdf> {
        let report = self.store.visible_report(viewer, report).await?;
        let patient = self
            .store
            .user_by_id(&report.user_id)
            .await?
            .ok_or(StoreError::NotFound)?;
        let language = language.unwrap_or_else(|| Language::or_english(Some(&patient.language)));
        let zone: Tz = match zone {
            Some(zone) => zone.0,
            None => TimeZone::parse(&patient.time_zone)
                .map(|z| z.0)
                .unwrap_or(Tz::UTC),
        };
        let file = self
            .reports
            .periodic_report_pdf(&viewer.user_id, &report, &patient, language, zone)
            .await?;
        let audit = entry(viewer, "report.download", "periodic-report", &report.id)
            .patient(&report.user_id)
            .detail(format!("{}, {}", language.code(), zone.name()));
        self.store.audit(audit).await?;
        Ok(PeriodicPdf { report, file })
    }
}
