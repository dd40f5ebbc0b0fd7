//! Reads of personal data, each recorded in the audit trail (HIPAA §164.312(b)): one record per
//! object read, and for a page of a list one record per patient whose data it shows, with how
//! many of their objects it held. A read of nothing records nothing.

use std::collections::BTreeMap;

use super::{ActionResult, Actions, EntryExt, entry};
use crate::domain::id::Id;
use crate::store::entities::{audit_event, measurement, profile, report, user};
use crate::store::query::ListSpec;
use crate::store::{
    AuditAction, AuditEntry, AuditFilter, LIST_COUNTED, ListedRecord, PatientListing,
    PatientSummary, ReportRecord, UserRecord, Viewer, WorkItem, WorkListing,
};

/// A page of a list: its items and, when asked, the total.
pub type ListPage<T> = (Vec<T>, Option<u64>);

impl Actions {
    /// Records that `viewer` read a page of a list (`action`, e.g. `measurement.list`) showing
    /// the data of these patients, one per item; `noun` names the items in the record.
    async fn record_list(
        &self,
        viewer: &Viewer,
        action: AuditAction,
        noun: &'static str,
        patients: impl IntoIterator<Item = Id>,
    ) -> ActionResult<()> {
        let mut counts: BTreeMap<Id, usize> = BTreeMap::new();
        for patient in patients {
            *counts.entry(patient).or_default() += 1;
        }
        let entries: Vec<AuditEntry> = counts
            .into_iter()
            .map(|(patient, n)| {
                entry(viewer, action, "user", &patient)
                    .patient(&patient)
                    .detail(format!("{n} {noun}"))
            })
            .collect();
        self.store.record_reads(entries).await?;
        Ok(())
    }

    /// A user's account, if `viewer` sees it; the read is recorded.
    pub async fn view_user(&self, viewer: &Viewer, id: &Id) -> ActionResult<user::Model> {
        let user = self.store.visible_user(viewer, id).await?;
        self.store
            .record_read(entry(viewer, AuditAction::UserView, "user", id).patient(id))
            .await?;
        Ok(user)
    }

    /// A periodic report, if `viewer` sees it; the read is recorded.
    pub async fn view_report(&self, viewer: &Viewer, id: &Id) -> ActionResult<report::Model> {
        let report = self.store.visible_report(viewer, id).await?;
        self.store
            .record_read(
                entry(
                    viewer,
                    AuditAction::PeriodicReportView,
                    "periodic-report",
                    id,
                )
                .patient(&report.user_id),
            )
            .await?;
        Ok(report)
    }

    /// A measurement's report document, if `viewer` sees it; the read is recorded.
    pub async fn view_measurement_report(
        &self,
        viewer: &Viewer,
        id: &Id,
    ) -> ActionResult<ReportRecord> {
        let record = self.store.visible_measurement_report(viewer, id).await?;
        self.store
            .record_read(
                entry(
                    viewer,
                    AuditAction::MeasurementReportView,
                    "measurement-report",
                    id,
                )
                .patient(&record.report.patient_id),
            )
            .await?;
        Ok(record)
    }

    /// A page of the users `viewer` sees.
    pub async fn list_users(
        &self,
        viewer: &Viewer,
        spec: &ListSpec,
    ) -> ActionResult<ListPage<UserRecord>> {
        let page = self.store.list_users(viewer, spec).await?;
        self.record_list(
            viewer,
            AuditAction::UserList,
            "accounts",
            page.0.iter().map(|r| r.user.id),
        )
        .await?;
        Ok(page)
    }

    /// A page of the profiles `viewer` sees.
    pub async fn list_profiles(
        &self,
        viewer: &Viewer,
        spec: &ListSpec,
    ) -> ActionResult<ListPage<profile::Model>> {
        let page = self.store.list_profiles(viewer, spec).await?;
        self.record_list(
            viewer,
            AuditAction::ProfileList,
            "profiles",
            page.0.iter().map(|p| p.id),
        )
        .await?;
        Ok(page)
    }

    /// A page of the measurements `viewer` sees, without their payloads (the API's list).
    pub async fn list_measurements(
        &self,
        viewer: &Viewer,
        spec: &ListSpec,
    ) -> ActionResult<ListPage<ListedRecord>> {
        let page = self.store.list_measurements_lean(viewer, spec).await?;
        self.record_list(
            viewer,
            AuditAction::MeasurementList,
            "measurements",
            page.0.iter().map(|r| r.measurement.creator_id),
        )
        .await?;
        Ok(page)
    }

    /// A page of the measurements `viewer` sees, as the portal lists them.
    pub async fn list_measurement_headers(
        &self,
        viewer: &Viewer,
        spec: &ListSpec,
    ) -> ActionResult<ListPage<measurement::Header>> {
        let page = self.store.list_measurement_headers(viewer, spec).await?;
        self.record_list(
            viewer,
            AuditAction::MeasurementList,
            "measurements",
            page.0.iter().map(|m| m.creator_id),
        )
        .await?;
        Ok(page)
    }

    /// A page of the measurement report documents `viewer` sees.
    pub async fn list_measurement_reports(
        &self,
        viewer: &Viewer,
        spec: &ListSpec,
    ) -> ActionResult<ListPage<ReportRecord>> {
        let page = self.store.list_measurement_reports(viewer, spec).await?;
        self.record_list(
            viewer,
            AuditAction::MeasurementReportList,
            "measurement reports",
            page.0.iter().map(|r| r.report.patient_id),
        )
        .await?;
        Ok(page)
    }

    /// A page of the periodic reports `viewer` sees.
    pub async fn list_reports(
        &self,
        viewer: &Viewer,
        spec: &ListSpec,
    ) -> ActionResult<ListPage<report::Model>> {
        let page = self.store.list_reports(viewer, spec).await?;
        self.record_list(
            viewer,
            AuditAction::PeriodicReportList,
            "periodic reports",
            page.0.iter().map(|r| r.user_id),
        )
        .await?;
        Ok(page)
    }

    /// A page of the patients `viewer` cares for, as the portal lists them (each with the
    /// latest measurement the viewer sees); one record per patient on the page.
    pub async fn list_patients(
        &self,
        viewer: &Viewer,
        listing: PatientListing,
        offset: u64,
        limit: u64,
    ) -> ActionResult<(Vec<PatientSummary>, u64)> {
        self.store.may_list_patients(viewer).await?;
        let page = self
            .store
            .patients_page(viewer, listing, offset, limit)
            .await?;
        self.record_list(
            viewer,
            AuditAction::PatientList,
            "patient rows",
            page.0.iter().map(|p| p.user.id),
        )
        .await?;
        Ok(page)
    }

    /// A page of `viewer`'s work list; one record per patient whose measurements it shows.
    pub async fn work_list(
        &self,
        viewer: &Viewer,
        listing: &WorkListing,
        offset: u64,
        limit: u64,
    ) -> ActionResult<(Vec<WorkItem>, u64)> {
        let page = self
            .store
            .work_list_page(viewer, listing, offset, limit)
            .await?;
        self.record_list(
            viewer,
            AuditAction::WorklistView,
            "measurements",
            page.0.iter().map(|item| item.patient.id),
        )
        .await?;
        Ok(page)
    }

    /// A page of the audit trail matching `filter`, newest first (administrators); the read
    /// is recorded, naming the patient filtered on, as an export is.
    pub async fn audit_trail(
        &self,
        viewer: &Viewer,
        filter: &AuditFilter,
        offset: u64,
        limit: u64,
    ) -> ActionResult<(Vec<audit_event::Model>, u64)> {
        let (events, total) = self.store.audit_page(viewer, filter, offset, limit).await?;
        let mut record = entry(
            viewer,
            AuditAction::AuditView,
            "audit-trail",
            &viewer.user_id,
        )
        .detail(format!(
            "{} of {} entries from {offset}",
            events.len(),
            counted(total)
        ));
        record.patient_id = filter.patient;
        self.store.record_read(record).await?;
        Ok((events, total))
    }

    /// The entries of the audit trail matching `filter`, newest first, at most
    /// [`MAX_EXPORTED`] (administrators); the export is recorded, naming the patient filtered on.
    pub async fn export_audit(
        &self,
        viewer: &Viewer,
        filter: &AuditFilter,
    ) -> ActionResult<Vec<audit_event::Model>> {
        let (events, total) = self
            .store
            .audit_page(viewer, filter, 0, MAX_EXPORTED)
            .await?;
        let mut record = entry(
            viewer,
            AuditAction::AuditExport,
            "audit-trail",
            &viewer.user_id,
        )
        .detail(format!("{} of {} entries", events.len(), counted(total)));
        record.patient_id = filter.patient;
        self.store.record_read(record).await?;
        Ok(events)
    }
}

/// A total counted no further than [`LIST_COUNTED`] + 1, as a record says it.
fn counted(total: u64) -> String {
    if total > LIST_COUNTED {
        format!("more than {LIST_COUNTED}")
    } else {
        total.to_string()
    }
}

/// The most entries one export of the audit trail holds.
pub const MAX_EXPORTED: u64 = 100_000;
