//! Reports: a measurement's PDF, a manual periodic report, and a periodic report's PDF.

use chrono_tz::Tz;

use super::{ActionError, ActionResult, Actions, EntryExt, done, entry, operator_entry};
use crate::domain::account::{Language, TimeZone};
use crate::domain::id::Id;
use crate::domain::periods::{Trigger, manual_period};
use crate::domain::time::rfc3339_millis;
use crate::scheduler::DueReports;
use crate::store::entities::{file, report};
use crate::store::visibility::Scope;
use crate::store::{
    AdminTask, AuditAction, AuditEntry, Both, NewReport, Prescription, ReportRecord, Service,
    StoreError, Tx, Viewer,
};

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
    /// Enqueues every periodic report that is due and not yet enqueued, as the scheduler's
    /// next tick would (administrators); answers how many. A scheduler running in this
    /// process is woken as the change commits; others take them at their next tick.
    pub async fn make_due_reports(&self, viewer: &Viewer) -> ActionResult<usize> {
        self.act(async |tx| {
            viewer
                .administer(AdminTask::MakeDueReports)
                .map_err(StoreError::Denied)?;
            let open = tx.open_prescriptions(&Service::Scheduler).await?;
            let due = DueReports::of(&open, tx.clock().now_millis());
            let count = due.jobs.len();
            due.enqueue(tx).await?;
            let record = entry(
                viewer,
                AuditAction::ReportEnqueueDue,
                "user",
                &viewer.user_id,
            )
            .detail(format!("{count} reports"));
            done(count, record)
        })
        .await
    }

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
        // Both through the same gate, on two of the pool's connections at once.
        let (record, patient) = tokio::try_join!(
            self.store.visible_measurement(viewer, &id),
            self.store.patient_of_measurement(viewer, &id),
        )?;
        let patient_id = record.measurement.creator_id;
        if reuse {
            let latest = self.store.latest_measurement_report(viewer, &id).await?;
            let updated = record.measurement.update_timestamp;
            let file = latest.as_ref().and_then(|latest| {
                latest
                    .reusable(updated, language.code(), &patient.time_zone)
                    .cloned()
            });
            if let (Some(latest), Some(file)) = (latest, file) {
                let audit = entry(viewer, AuditAction::ReportDownload, "measurement", &id)
                    .patient(&patient_id)
                    .detail(language.code());
                self.store.record_read(audit).await?;
                return Ok(MeasurementPdf {
                    report: latest,
                    file,
                    reused: true,
                });
            }
        }
        // The render runs outside the transaction (it may take seconds); the file's row, the
        // document and its audit record are stored together.
        let document = self
            .reports
            .measurement_report(&viewer.user_id, &record, &patient, language)
            .await?;
        let (report, file) = self
            .act(async |tx| {
                let made = document.record(tx).await?;
                let record = entry(viewer, AuditAction::ReportCreate, "measurement", &id)
                    .patient(&patient_id)
                    .detail(language.code());
                done(made, record)
            })
            .await?;
        // Requests for the same PDF shared its render until its row was committed, here.
        drop(document);
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
    /// the patient is in, never the patient. The report is made for the group through which
    /// the maker sees the patient (`group`, which must be named when there are several; see
    /// [`report_group`]) and lists only what both the maker and that group see; without any
    /// such group (an administrator, the patient in no running prescription) it lists what
    /// the maker sees and is kept for the patient and administrators.
    pub async fn create_manual_report(
        &self,
        viewer: &Viewer,
        patient: &Id,
        group: Option<Id>,
        start: Option<i64>,
        end: Option<i64>,
    ) -> ActionResult<report::Model> {
        self.act(async |tx| {
            let patient = tx.patient_to_report_on(viewer, patient).await?;
            let (start, end) = manual_period(start, end, tx.clock().now_millis())
                .map_err(|message| ActionError::invalid(message, "error-period-invalid"))?;
            let candidates = tx.report_groups(viewer, &patient.id).await?;
            let group = report_group(&candidates, group)?;
            let maker = Maker::Person(viewer);
            let made = insert_manual_report(tx, maker, &patient.id, group, start, end).await?;
            done(made.report, made.record.actor(viewer))
        })
        .await
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
        let patient = self.store.patient_of_report(viewer, &report.id).await?;
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
        let audit = entry(
            viewer,
            AuditAction::ReportDownload,
            "periodic-report",
            &report.id,
        )
        .patient(&report.user_id)
        .detail(format!("{}, {}", language.code(), zone.name()));
        self.store.record_read(audit).await?;
        Ok(PeriodicPdf { report, file })
    }
}

/// Who makes a manual report: a person, or the operator at the command line.
#[derive(Clone, Copy)]
pub(super) enum Maker<'a> {
    Person(&'a Viewer),
    Operator,
}

/// A manual report just stored, with its audit record (whose actor is the operator until
/// [`EntryExt::actor`] names the person).
pub(super) struct MadeReport {
    pub report: report::Model,
    pub record: AuditEntry,
}

/// Stores a manual periodic report of `patient` over `[start, end)` made by `maker`: for
/// `group` it lists what both the maker and the group's prescription see and the group's
/// staff see it; without one, what the maker sees, kept for the patient and administrators.
pub(super) async fn insert_manual_report(
    tx: &Tx,
    maker: Maker<'_>,
    patient: &Id,
    group: Option<Id>,
    start: i64,
    end: i64,
) -> ActionResult<MadeReport> {
    let (scope, creator, by): (&dyn Scope, _, _) = match maker {
        Maker::Person(viewer) => (viewer, Some(viewer.user_id), ""),
        Maker::Operator => (&Service::Operator, None, "by the operator, "),
    };
    let new = NewReport {
        user_id: *patient,
        group_id: group,
        creator_id: creator,
        trigger: Trigger::Manual,
        dedupe_key: None,
        start,
        end,
    };
    let made = match group {
        Some(group) => {
            let prescription = Prescription {
                patient: *patient,
                group,
            };
            tx.create_report(&Both(scope, &prescription), new).await?
        }
        None => tx.create_report(scope, new).await?,
    };
    let report = made.ok_or_else(|| anyhow::anyhow!("a manual report was not stored"))?;
    let period = format!("{} to {}", rfc3339_millis(start), rfc3339_millis(end));
    let group = group.map_or_else(|| "the patient only".to_owned(), |g| format!("group {g}"));
    let record = operator_entry(AuditAction::ReportCreate, "periodic-report", &report.id)
        .patient(patient)
        .detail(format!("{by}manual, {period}, for {group}"));
    Ok(MadeReport { report, record })
}

/// The group a manual report is made for, of `candidates` (the groups through which its
/// maker sees the patient, [`crate::store::Store::report_groups`]): the one `named`, which
/// must be among them; else the only one; none when there is none.
pub fn report_group(candidates: &[Id], named: Option<Id>) -> ActionResult<Option<Id>> {
    match (named, candidates) {
        (Some(group), _) if candidates.contains(&group) => Ok(Some(group)),
        (Some(_), _) => Err(ActionError::invalid(
            "group_id must be a group of the patient's running prescriptions that you are staff of",
            "error-report-group-invalid",
        )),
        (None, []) => Ok(None),
        (None, [group]) => Ok(Some(*group)),
        (None, _) => Err(ActionError::invalid(
            "group_id is needed: you see the patient through several groups; name the one the report is for",
            "error-report-group-needed",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_manual_report_is_made_for_the_one_group_named_or_possible() {
        let (a, b, c) = (Id::generate(), Id::generate(), Id::generate());
        assert_eq!(report_group(&[], None).unwrap(), None);
        assert_eq!(report_group(&[a], None).unwrap(), Some(a));
        assert_eq!(report_group(&[a, b], Some(b)).unwrap(), Some(b));
        let needed = report_group(&[a, b], None).unwrap_err();
        assert!(
            needed.to_string().contains("group_id is needed"),
            "{needed}"
        );
        let foreign = report_group(&[a, b], Some(c)).unwrap_err();
        assert!(
            foreign.to_string().contains("group_id must be"),
            "{foreign}"
        );
        assert!(report_group(&[], Some(c)).is_err());
    }
}
