//! Shared links: a measurement report's or a periodic report's PDF handed to someone without
//! an account, by the patient or the patient's staff, for a number of days (default 30),
//! revocable; and the record of every download, through a shared link or an app's
//! `readFileToken`.

use super::{ANONYMOUS, ActionError, ActionResult, Actions, EntryExt, done, entry};
use crate::auth::token;
use crate::domain::account::Language;
use crate::domain::id::Id;
use crate::domain::network::Network;
use crate::domain::time::rfc3339_millis;
use crate::store::entities::{file, report, report_link, shared_link};
use crate::store::{AuditAction, NewReportLink, NewSharedLink, Service, StoreError, Viewer};

/// How long a shared link lasts unless its maker says otherwise, in days.
pub const DEFAULT_LINK_DAYS: i64 = 30;
/// The longest a shared link may last, in days.
pub const MAX_LINK_DAYS: i64 = 365;
const DAY_MILLIS: i64 = 86_400_000;

/// A link just made: its record (a measurement report's [`shared_link::Model`] or a
/// periodic report's [`report_link::Model`]), and the secret that goes into its address
/// (shown once).
#[derive(Debug, Clone)]
pub struct NewLink<L = shared_link::Model> {
    pub link: L,
    pub secret: String,
}

/// A link lasts 1 to [`MAX_LINK_DAYS`] days.
fn check_days(days: i64) -> ActionResult<()> {
    if !(1..=MAX_LINK_DAYS).contains(&days) {
        return Err(ActionError::invalid(
            format!("a link lasts 1 to {MAX_LINK_DAYS} days"),
            "shared-link-days-invalid",
        ));
    }
    Ok(())
}

impl Actions {
    /// Makes a link to the PDF of measurement `measurement` in `language` that opens for
    /// `days` days: whoever sees the measurement (the patient, the patient's staff, an
    /// administrator). The report is made or reused as [`Actions::measurement_pdf`] does.
    pub async fn create_shared_link(
        &self,
        viewer: &Viewer,
        measurement: &Id,
        language: Language,
        days: i64,
    ) -> ActionResult<NewLink> {
        check_days(days)?;
        let pdf = self
            .measurement_pdf(viewer, measurement, language, true)
            .await?;
        let secret = token::generate();
        let link = self
            .act(async |tx| {
                let expires_at = tx.clock().now_millis() + days * DAY_MILLIS;
                let link = tx
                    .insert_shared_link(NewSharedLink {
                        secret_hash: token::hash(&secret),
                        measurement_id: *measurement,
                        file_id: pdf.file.id,
                        patient_id: pdf.report.report.patient_id,
                        creator_id: viewer.user_id,
                        language: language.code().to_owned(),
                        expires_at,
                    })
                    .await?;
                let until = rfc3339_millis(expires_at);
                let record = entry(viewer, AuditAction::LinkCreate, "shared-link", &link.id)
                    .patient(&link.patient_id)
                    .detail(format!("measurement {measurement} until {until}"));
                done(link, record)
            })
            .await?;
        Ok(NewLink { link, secret })
    }

    /// The links of a measurement the viewer sees, newest first.
    pub async fn shared_links(
        &self,
        viewer: &Viewer,
        measurement: &Id,
    ) -> ActionResult<Vec<shared_link::Model>> {
        self.store.visible_measurement(viewer, measurement).await?;
        Ok(self.store.shared_links_of(viewer, measurement).await?)
    }

    /// Revokes a link of a measurement the viewer sees: its address opens nothing from now on.
    pub async fn revoke_shared_link(
        &self,
        viewer: &Viewer,
        measurement: &Id,
        link: &Id,
    ) -> ActionResult<()> {
        self.act(async |tx| {
            let record = tx.visible_measurement(viewer, measurement).await?;
            if !tx
                .revoke_shared_link(measurement, link, &viewer.user_id)
                .await?
            {
                return Err(StoreError::NotFound.into());
            }
            let audit = entry(viewer, AuditAction::LinkRevoke, "shared-link", link)
                .patient(&record.measurement.creator_id);
            done((), audit)
        })
        .await
    }

    /// Makes a link to the PDF of periodic report `report` in `language` that opens for
    /// `days` days: whoever sees the report (the patient, the staff of its group, an
    /// administrator). The PDF is made or reused as [`Actions::periodic_pdf`] does, in the
    /// patient's time zone.
    pub async fn create_report_link(
        &self,
        viewer: &Viewer,
        report: &Id,
        language: Language,
        days: i64,
    ) -> ActionResult<NewLink<report_link::Model>> {
        check_days(days)?;
        let pdf = self
            .periodic_pdf(viewer, report, Some(language), None)
            .await?;
        let secret = token::generate();
        let link = self
            .act(async |tx| {
                let expires_at = tx.clock().now_millis() + days * DAY_MILLIS;
                let link = tx
                    .insert_report_link(NewReportLink {
                        secret_hash: token::hash(&secret),
                        report_id: *report,
                        file_id: pdf.file.id,
                        patient_id: pdf.report.user_id,
                        creator_id: viewer.user_id,
                        language: language.code().to_owned(),
                        expires_at,
                    })
                    .await?;
                let until = rfc3339_millis(expires_at);
                let record = entry(viewer, AuditAction::LinkCreate, "report-link", &link.id)
                    .patient(&link.patient_id)
                    .detail(format!("periodic report {report} until {until}"));
                done(link, record)
            })
            .await?;
        Ok(NewLink { link, secret })
    }

    /// A periodic report the viewer sees, with its links, newest first.
    pub async fn report_links(
        &self,
        viewer: &Viewer,
        report: &Id,
    ) -> ActionResult<(report::Model, Vec<report_link::Model>)> {
        let seen = self.store.visible_report(viewer, report).await?;
        let links = self.store.report_links_of(viewer, report).await?;
        Ok((seen, links))
    }

    /// Revokes a link of a periodic report the viewer sees: its address opens nothing from
    /// now on.
    pub async fn revoke_report_link(
        &self,
        viewer: &Viewer,
        report: &Id,
        link: &Id,
    ) -> ActionResult<()> {
        self.act(async |tx| {
            let seen = tx.visible_report(viewer, report).await?;
            if !tx.revoke_report_link(report, link, &viewer.user_id).await? {
                return Err(StoreError::NotFound.into());
            }
            let audit =
                entry(viewer, AuditAction::LinkRevoke, "report-link", link).patient(&seen.user_id);
            done((), audit)
        })
        .await
    }

    /// Revokes the apps' `readFileToken`s of a measurement's reports (whoever sees the
    /// measurement): each of its files gets a new secret, so the tokens handed out so far open
    /// nothing, and the documents show new ones. Returns how many files were affected.
    pub async fn revoke_file_tokens(
        &self,
        viewer: &Viewer,
        measurement: &Id,
    ) -> ActionResult<usize> {
        self.act(async |tx| {
            let record = tx.visible_measurement(viewer, measurement).await?;
            let files = tx.files_of_measurement(viewer, measurement).await?;
            for file in &files {
                tx.rotate_file_secret(file).await?;
            }
            let audit = entry(viewer, AuditAction::FileRevoke, "measurement", measurement)
                .patient(&record.measurement.creator_id)
                .detail(format!("{} files", files.len()));
            done(files.len(), audit)
        })
        .await
    }

    /// The file a shared link's `secret` opens, a measurement report's or a periodic
    /// report's, if the link is open; the download is recorded (by no one, with the client's
    /// network).
    pub async fn open_shared_link(
        &self,
        secret: &str,
        network: Network,
    ) -> ActionResult<file::Model> {
        let hash = token::hash(secret);
        let (kind, link, file, patient) = match self.store.open_shared_link(&hash).await? {
            Some(link) => ("shared-link", link.id, link.file_id, link.patient_id),
            None => {
                let link = self
                    .store
                    .open_report_link(&hash)
                    .await?
                    .ok_or(StoreError::NotFound)?;
                ("report-link", link.id, link.file_id, link.patient_id)
            }
        };
        let file = self
            .store
            .file_by_id(&Service::Capability, &file)
            .await?
            .ok_or(StoreError::NotFound)?;
        let anonymous = anonymous();
        self.store
            .record_read(
                entry(&anonymous, AuditAction::LinkDownload, kind, &link)
                    .patient(&patient)
                    .detail(format!("from {network}")),
            )
            .await?;
        Ok(file)
    }

    /// Records a download through an app's `readFileToken` (by no one, with the client's
    /// network), if the token checked against `file` still opens it: `NotFound` once the
    /// token has been revoked, even when `file` is a copy kept in memory.
    pub async fn record_file_download(
        &self,
        file: &file::Model,
        network: Network,
    ) -> ActionResult<()> {
        let record = entry(&anonymous(), AuditAction::FileDownload, "file", &file.id)
            .detail(format!("from {network}"));
        self.store
            .record_download(&Service::Capability, file, record)
            .await?;
        Ok(())
    }
}

fn anonymous() -> Viewer {
    Viewer {
        user_id: ANONYMOUS,
        admin: false,
    }
}
