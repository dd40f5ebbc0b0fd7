//! The FHIR door: each read and search of `/fhir/R4` as one action. Everything is read
//! through the reader's [`Viewer`] scope, as the rest of the API reads it, and every read that
//! shows a patient's data is recorded in the audit trail (`fhir.read`, one record per patient
//! with the resources it held).

use std::collections::HashMap;

use chrono_tz::Tz;
use sea_orm::sea_query::{Alias, Expr, ExprTrait, Query, SimpleExpr};
use sea_orm::{ColumnTrait, Condition, Order};

use super::{ActionError, ActionResult, Actions, EntryExt, entry};
use crate::domain::account::{Language, TimeZone};
use crate::domain::audit::AuditAction;
use crate::domain::id::Id;
use crate::domain::measurement::Status;
use crate::fhir::DateRange;
use crate::fhir::codes::ObservationKind;
use crate::fhir::map::{self, MeasurementFacts, PdfFacts};
use crate::fhir::model::{DiagnosticReport, DocumentReference, Observation, Patient, Resource};
use crate::store::entities::{file, measurement, measurement_report, report, user};
use crate::store::query::ListSpec;
use crate::store::{ReportRecord, Viewer};

/// A page of FHIR resources: what was asked (`match`) and what it refers to (`include`),
/// the total of what was asked where it is known, and whether more pages follow.
#[derive(Debug)]
pub struct FhirPage {
    pub entries: Vec<(Resource, &'static str)>,
    pub total: Option<u64>,
    pub more: bool,
}

/// Which reports a DiagnosticReport or DocumentReference search wants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReportKinds {
    pub measurement: bool,
    pub periodic: bool,
}

/// A DiagnosticReport search, or a DocumentReference one (the same reports, as documents).
#[derive(Debug, Clone, Copy)]
pub struct ReportSearch {
    pub kinds: ReportKinds,
    pub range: DateRange,
    pub newest_first: bool,
    pub offset: u64,
    pub count: u64,
    pub documents: bool,
}

/// An Observation search of one patient.
#[derive(Debug, Clone)]
pub struct ObservationSearch {
    pub kinds: Vec<ObservationKind>,
    pub range: DateRange,
    pub newest_first: bool,
    pub offset: u64,
    pub count: u64,
}

/// The most measurement report documents of one page of measurements `$everything` lists.
const MAX_REPORTS_LISTED: u32 = 10_000;

fn zone_of(user: &user::Model) -> Tz {
    TimeZone::parse(&user.time_zone)
        .map(|z| z.0)
        .unwrap_or(Tz::UTC)
}

fn not_found() -> ActionError {
    ActionError::Store(crate::store::StoreError::NotFound)
}

/// A list's spec: `condition`, ordered by `key` then the id, one page.
fn spec(
    condition: Condition,
    key: SimpleExpr,
    newest_first: bool,
    offset: u64,
    limit: u64,
) -> ListSpec {
    let order = if newest_first {
        Order::Desc
    } else {
        Order::Asc
    };
    ListSpec {
        condition,
        order: vec![(key, order.clone()), (Expr::col(Alias::new("id")), order)],
        limit,
        offset,
        select: None,
        skip_count: false,
    }
}

fn in_range(column: SimpleExpr, range: &DateRange) -> Condition {
    let mut condition = Condition::all();
    if let Some(from) = range.from {
        condition = condition.add(column.clone().gte(from));
    }
    if let Some(before) = range.before {
        condition = condition.add(column.lt(before));
    }
    condition
}

impl Actions {
    /// Records that `viewer` read `count` FHIR resources of `patient`'s, `what` naming them.
    async fn record_fhir(&self, viewer: &Viewer, patient: &Id, what: String) -> ActionResult<()> {
        let record = entry(viewer, AuditAction::FhirRead, "user", patient)
            .patient(patient)
            .detail(what);
        self.store.record_read(record).await?;
        Ok(())
    }

    /// The patient's account, if `viewer` sees it, with its time zone.
    async fn fhir_subject(&self, viewer: &Viewer, patient: &Id) -> ActionResult<user::Model> {
        Ok(self.store.visible_user(viewer, patient).await?)
    }

    /// A Patient, if `viewer` sees the account.
    pub async fn fhir_patient(&self, viewer: &Viewer, id: &Id) -> ActionResult<Patient> {
        let user = self.fhir_subject(viewer, id).await?;
        let patient = self.patient_resource(viewer, &user).await?;
        self.record_fhir(viewer, id, "Patient".to_owned()).await?;
        Ok(patient)
    }

    /// The Patient of an account `viewer` was already found to see, with its profile.
    async fn patient_resource(&self, viewer: &Viewer, user: &user::Model) -> ActionResult<Patient> {
        let profile = self.store.visible_profile(viewer, &user.id).await?;
        let birthday = profile
            .as_ref()
            .and_then(|p| p.data.get("birthday"))
            .and_then(|b| b.as_str())
            .map(str::to_owned);
        Ok(map::patient(&map::PatientFacts {
            id: &user.id,
            first_name: &user.first_name,
            last_name: &user.last_name,
            language: &user.language,
            active: user.activation,
            updated: user.update_timestamp,
            zone: zone_of(user),
            gender: profile.as_ref().and_then(|p| p.gender),
            birthday: birthday.as_deref(),
        }))
    }

    /// Analysed measurements of `patient` that `viewer` sees, one page, with their payloads;
    /// and how many there are in all.
    async fn analysed_measurements(
        &self,
        viewer: &Viewer,
        patient: &Id,
        range: &DateRange,
        newest_first: bool,
        offset: u64,
        limit: u64,
    ) -> ActionResult<(Vec<(measurement::Header, serde_json::Value)>, u64)> {
        let taken = Expr::col((
            Alias::new("measurements"),
            measurement::Column::MeasurementTimestamp,
        ));
        let condition = Condition::all()
            .add(measurement::Column::CreatorId.eq(*patient))
            // Analysed: the server gave it a result (an unreadable recording has one too).
            .add(measurement::Column::Result.is_not_null())
            .add(in_range(taken.clone(), range));
        let spec = spec(condition, taken, newest_first, offset, limit);
        let (headers, total) = self.store.list_measurement_headers(viewer, &spec).await?;
        let ids: Vec<Id> = headers.iter().map(|h| h.id).collect();
        let mut payloads = self.store.measurement_payloads(viewer, &ids).await?;
        let rows = headers
            .into_iter()
            .filter_map(|h| {
                let data = serde_json::from_str(&payloads.remove(&h.id)?).ok()?;
                Some((h, data))
            })
            .collect();
        Ok((rows, total.unwrap_or(0)))
    }

    /// A page of `patient`'s Observations: each analysed measurement gives one of every kind
    /// asked, in the order of [`ObservationKind::ALL`], newest measurement first by default.
    pub async fn fhir_observations(
        &self,
        viewer: &Viewer,
        patient: &Id,
        search: &ObservationSearch,
    ) -> ActionResult<FhirPage> {
        let user = self.fhir_subject(viewer, patient).await?;
        let zone = zone_of(&user);
        let per = search.kinds.len().max(1) as u64;
        let first = search.offset / per;
        let skip = (search.offset % per) as usize;
        let measurements = (skip as u64 + search.count).div_ceil(per);
        let (rows, total) = self
            .analysed_measurements(
                viewer,
                patient,
                &search.range,
                search.newest_first,
                first,
                measurements,
            )
            .await?;
        let observations: Vec<(Resource, &'static str)> = rows
            .iter()
            .flat_map(|(header, data)| {
                let facts = facts(header, data, zone);
                search
                    .kinds
                    .iter()
                    .map(|kind| map::observation(&facts, *kind))
                    .collect::<Vec<_>>()
            })
            .skip(skip)
            .take(search.count as usize)
            .map(|o| (Resource::Observation(Box::new(o)), "match"))
            .collect();
        let total = total * per;
        if !observations.is_empty() {
            self.record_fhir(
                viewer,
                patient,
                format!("{} Observation", observations.len()),
            )
            .await?;
        }
        Ok(FhirPage {
            more: search.offset + (observations.len() as u64) < total,
            entries: observations,
            total: Some(total),
        })
    }

    /// One Observation, `<measurement id>-<kind>`, if `viewer` sees the measurement and it
    /// was analysed.
    pub async fn fhir_observation(&self, viewer: &Viewer, id: &str) -> ActionResult<Observation> {
        let (measurement, kind) = id
            .split_once('-')
            .and_then(|(m, k)| Some((Id::parse(m).ok()?, ObservationKind::from_suffix(k)?)))
            .ok_or_else(not_found)?;
        let record = self.store.visible_measurement(viewer, &measurement).await?;
        let m = record.measurement;
        if m.result.is_none() {
            return Err(not_found());
        }
        // Whoever sees a measurement sees whose it is, also once the patient's record is out
        // of its view (an ended prescription), as the rest of the API shows it.
        let user = self.store.patient_of_measurement(viewer, &m.id).await?;
        let data: serde_json::Value = serde_json::from_str(&m.data).map_err(|e| {
            ActionError::Internal(anyhow::anyhow!("a stored measurement is not JSON: {e}"))
        })?;
        let header = measurement::Header::from(&m);
        let facts = facts(&header, &data, zone_of(&user));
        let observation = map::observation(&facts, kind);
        self.record_fhir(viewer, &m.creator_id, "1 Observation".to_owned())
            .await?;
        Ok(observation)
    }

    /// A Device: Tacho's analysis (any reader), or the phone of a measurement `viewer` sees.
    pub async fn fhir_device(
        &self,
        viewer: &Viewer,
        id: &str,
    ) -> ActionResult<crate::fhir::model::Device> {
        if let Some(version) = id.strip_prefix("tacho-analysis-") {
            return Ok(map::analysis_device(version));
        }
        let measurement = id
            .strip_suffix("-phone")
            .and_then(|m| Id::parse(m).ok())
            .ok_or_else(not_found)?;
        let record = self.store.visible_measurement(viewer, &measurement).await?;
        let m = record.measurement;
        let data: serde_json::Value = serde_json::from_str(&m.data).unwrap_or_default();
        self.record_fhir(viewer, &m.creator_id, "1 Device".to_owned())
            .await?;
        Ok(map::phone_device(&m.id, &m.creator_id, &data))
    }

    /// The measurement reports of `patient` that `viewer` sees and that have their PDF, first
    /// `limit` in the search's order.
    async fn measurement_reports(
        &self,
        viewer: &Viewer,
        patient: &Id,
        search: &ReportSearch,
        limit: u64,
    ) -> ActionResult<(Vec<ReportRecord>, u64)> {
        // A report's date is its measurement's, found by a lookup per report row.
        let taken = Expr::expr(SimpleExpr::SubQuery(
            None,
            Box::new(
                Query::select()
                    .column((
                        measurement::Entity,
                        measurement::Column::MeasurementTimestamp,
                    ))
                    .from(measurement::Entity)
                    .and_where(
                        Expr::col((measurement::Entity, measurement::Column::Id)).equals((
                            measurement_report::Entity,
                            measurement_report::Column::MeasurementId,
                        )),
                    )
                    .to_owned()
                    .into(),
            ),
        ));
        let condition = Condition::all()
            .add(measurement_report::Column::PatientId.eq(*patient))
            .add(measurement_report::Column::FileId.is_not_null())
            .add(in_range(taken.clone(), &search.range));
        let spec = spec(condition, taken, search.newest_first, 0, limit);
        let (records, total) = self.store.list_measurement_reports(viewer, &spec).await?;
        Ok((records, total.unwrap_or(0)))
    }

    /// The periodic reports of `patient` that `viewer` sees whose period meets the range,
    /// first `limit` in the search's order.
    async fn periodic_reports(
        &self,
        viewer: &Viewer,
        patient: &Id,
        search: &ReportSearch,
        limit: u64,
    ) -> ActionResult<(Vec<report::Model>, u64)> {
        let mut condition = Condition::all().add(report::Column::UserId.eq(*patient));
        if let Some(from) = search.range.from {
            condition = condition.add(report::Column::PeriodEndTimestamp.gt(from));
        }
        if let Some(before) = search.range.before {
            condition = condition.add(report::Column::PeriodStartTimestamp.lt(before));
        }
        let key = Expr::col((Alias::new("reports"), report::Column::PeriodStartTimestamp));
        let spec = spec(condition, key, search.newest_first, 0, limit);
        let (reports, total) = self.store.list_reports(viewer, &spec).await?;
        Ok((reports, total.unwrap_or(0)))
    }

    /// A page of `patient`'s reports as DiagnosticReports (or DocumentReferences): the
    /// measurement reports and the periodic reports, merged by date.
    pub async fn fhir_reports(
        &self,
        viewer: &Viewer,
        patient: &Id,
        search: &ReportSearch,
        base: &str,
    ) -> ActionResult<FhirPage> {
        let user = self.fhir_subject(viewer, patient).await?;
        let zone = zone_of(&user);
        // Both lists up to the end of the page, then merged: a page deep into a patient's
        // reports reads the reports before it (a patient has hundreds, not millions).
        let end = search.offset + search.count;
        let (measured, measured_total) = if search.kinds.measurement {
            self.measurement_reports(viewer, patient, search, end)
                .await?
        } else {
            (Vec::new(), 0)
        };
        let (periodic, periodic_total) = if search.kinds.periodic {
            self.periodic_reports(viewer, patient, search, end).await?
        } else {
            (Vec::new(), 0)
        };
        let mut dated: Vec<(i64, Id, Dated)> = Vec::new();
        let measurement_ids: Vec<Id> = measured.iter().map(|r| r.report.measurement_id).collect();
        let payloads = self
            .store
            .measurement_payloads(viewer, &measurement_ids)
            .await?;
        let headers = self
            .store
            .measurement_headers(viewer, &measurement_ids)
            .await?;
        for record in measured {
            let Some(header) = headers.get(&record.report.measurement_id) else {
                continue;
            };
            let at = header
                .measurement_timestamp
                .unwrap_or(header.creation_timestamp);
            dated.push((at, record.report.id, Dated::Measurement(Box::new(record))));
        }
        for report in periodic {
            dated.push((
                report.period_start_timestamp,
                report.id,
                Dated::Periodic(report),
            ));
        }
        dated.sort_by_key(|(at, id, _)| (*at, *id));
        if search.newest_first {
            dated.reverse();
        }
        let window: Vec<(i64, Id, Dated)> = dated
            .into_iter()
            .skip(search.offset as usize)
            .take(search.count as usize)
            .collect();
        let mut pdfs: HashMap<Id, file::Model> = HashMap::new();
        for (_, _, item) in &window {
            if let Dated::Periodic(report) = item
                && let Some(pdf) = self.periodic_pdf_of(viewer, report, &user).await
            {
                pdfs.insert(report.id, pdf);
            }
        }
        let page: Vec<Resource> = window
            .into_iter()
            .filter_map(|(_, _, item)| {
                let report = match item {
                    Dated::Measurement(record) => {
                        let header = headers.get(&record.report.measurement_id)?;
                        let data: serde_json::Value =
                            serde_json::from_str(payloads.get(&header.id)?).ok()?;
                        measurement_diagnostic_report(&record, header, &data, zone, base)?
                    }
                    Dated::Periodic(report) => {
                        periodic_diagnostic_report(&report, &user, base, pdfs.get(&report.id))
                    }
                };
                Some(if search.documents {
                    Resource::DocumentReference(Box::new(map::document_reference(&report)))
                } else {
                    Resource::DiagnosticReport(Box::new(report))
                })
            })
            .collect();
        let total = measured_total + periodic_total;
        if !page.is_empty() {
            let noun = if search.documents {
                "DocumentReference"
            } else {
                "DiagnosticReport"
            };
            self.record_fhir(viewer, patient, format!("{} {noun}", page.len()))
                .await?;
        }
        Ok(FhirPage {
            more: end < total,
            entries: page.into_iter().map(|r| (r, "match")).collect(),
            total: Some(total),
        })
    }

    /// One report as a DiagnosticReport: a measurement's report document or a periodic
    /// report, if `viewer` sees it.
    pub async fn fhir_report(
        &self,
        viewer: &Viewer,
        id: &Id,
        base: &str,
    ) -> ActionResult<DiagnosticReport> {
        let (report, patient) = self.report_by_id(viewer, id, base).await?;
        self.record_fhir(viewer, &patient, "1 DiagnosticReport".to_owned())
            .await?;
        Ok(report)
    }

    /// One report's PDF as a DocumentReference, if `viewer` sees the report.
    pub async fn fhir_document(
        &self,
        viewer: &Viewer,
        id: &Id,
        base: &str,
    ) -> ActionResult<DocumentReference> {
        let (report, patient) = self.report_by_id(viewer, id, base).await?;
        self.record_fhir(viewer, &patient, "1 DocumentReference".to_owned())
            .await?;
        Ok(map::document_reference(&report))
    }

    async fn report_by_id(
        &self,
        viewer: &Viewer,
        id: &Id,
        base: &str,
    ) -> ActionResult<(DiagnosticReport, Id)> {
        match self.store.visible_measurement_report(viewer, id).await {
            Ok(record) if record.file.is_some() => {
                let m = self
                    .store
                    .visible_measurement(viewer, &record.report.measurement_id)
                    .await?
                    .measurement;
                let user = self.store.patient_of_measurement(viewer, &m.id).await?;
                let data: serde_json::Value =
                    serde_json::from_str(&m.data).map_err(|e| anyhow::anyhow!("{e}"))?;
                let header = measurement::Header::from(&m);
                let report =
                    measurement_diagnostic_report(&record, &header, &data, zone_of(&user), base)
                        .ok_or_else(not_found)?;
                return Ok((report, m.creator_id));
            }
            Ok(_) => return Err(not_found()),
            Err(crate::store::StoreError::NotFound) => {}
            Err(other) => return Err(other.into()),
        }
        let report = self.store.visible_report(viewer, id).await?;
        let user = self.store.patient_of_report(viewer, id).await?;
        let pdf = self.periodic_pdf_of(viewer, &report, &user).await;
        Ok((
            periodic_diagnostic_report(&report, &user, base, pdf.as_ref()),
            report.user_id,
        ))
    }

    /// A report's PDF: the stored file of a measurement's report document, or a periodic
    /// report's PDF (made when first asked, in the patient's language and zone).
    pub async fn fhir_binary(
        &self,
        viewer: &Viewer,
        id: &Id,
    ) -> ActionResult<crate::store::entities::file::Model> {
        match self.view_measurement_report(viewer, id).await {
            Ok(record) => return record.file.ok_or_else(not_found),
            Err(ActionError::Store(crate::store::StoreError::NotFound)) => {}
            Err(other) => return Err(other),
        }
        Ok(self.periodic_pdf(viewer, id, None, None).await?.file)
    }

    /// A page of `patient`'s whole record (`Patient/<id>/$everything`): the Patient and
    /// Tacho's analysis Device first, then every analysed measurement with its
    /// Observations, its phone, and its reports, newest first; then the periodic reports.
    /// `count` counts measurements and periodic reports, each with what comes with it.
    pub async fn fhir_everything(
        &self,
        viewer: &Viewer,
        patient: &Id,
        offset: u64,
        count: u64,
        base: &str,
    ) -> ActionResult<FhirPage> {
        let page = self
            .everything_page(viewer, patient, offset, count, base)
            .await?;
        let held = page
            .entries
            .iter()
            .filter(|(_, mode)| *mode == "match")
            .count();
        self.record_fhir(viewer, patient, format!("$everything, {held} resources"))
            .await?;
        Ok(page)
    }

    /// A page of [`Actions::fhir_everything`], read without an audit record of its own: for
    /// an action that records the whole read once (the patient's export).
    pub(super) async fn everything_page(
        &self,
        viewer: &Viewer,
        patient: &Id,
        offset: u64,
        count: u64,
        base: &str,
    ) -> ActionResult<FhirPage> {
        let user = self.fhir_subject(viewer, patient).await?;
        let zone = zone_of(&user);
        let mut entries: Vec<(Resource, &'static str)> = Vec::new();
        if offset == 0 {
            entries.push((
                Resource::Patient(Box::new(self.patient_resource(viewer, &user).await?)),
                "match",
            ));
        }
        let everything = DateRange::default();
        let (rows, measured) = self
            .analysed_measurements(viewer, patient, &everything, true, offset, count)
            .await?;
        let ids: Vec<Id> = rows.iter().map(|(h, _)| h.id).collect();
        let of_page = Condition::all()
            .add(measurement_report::Column::MeasurementId.is_in(ids.clone()))
            .add(measurement_report::Column::FileId.is_not_null());
        let created = Expr::col((
            Alias::new("measurement_reports"),
            measurement_report::Column::CreationTimestamp,
        ));
        let mut of_page = spec(of_page, created, false, 0, u64::from(MAX_REPORTS_LISTED));
        of_page.skip_count = true;
        let (reports, _) = self
            .store
            .list_measurement_reports(viewer, &of_page)
            .await?;
        let mut by_measurement: HashMap<Id, Vec<ReportRecord>> = HashMap::new();
        for record in reports.into_iter().filter(|r| r.file.is_some()) {
            by_measurement
                .entry(record.report.measurement_id)
                .or_default()
                .push(record);
        }
        let mut versions: Vec<String> = Vec::new();
        for (header, data) in &rows {
            let facts = facts(header, data, zone);
            let version = facts.analysis_version();
            if !versions.contains(&version) {
                versions.push(version);
            }
            for kind in ObservationKind::ALL {
                entries.push((
                    Resource::Observation(Box::new(map::observation(&facts, kind))),
                    "match",
                ));
            }
            entries.push((
                Resource::Device(Box::new(map::phone_device(&header.id, patient, data))),
                "match",
            ));
            for record in by_measurement.remove(&header.id).unwrap_or_default() {
                if let Some(report) =
                    measurement_diagnostic_report(&record, header, data, zone, base)
                {
                    entries.push((
                        Resource::DocumentReference(Box::new(map::document_reference(&report))),
                        "match",
                    ));
                    entries.push((Resource::DiagnosticReport(Box::new(report)), "match"));
                }
            }
        }
        for version in versions {
            entries.push((
                Resource::Device(Box::new(map::analysis_device(&version))),
                "include",
            ));
        }
        // The periodic reports follow the measurements: this page takes those from
        // `offset - measured` on, as many as the measurements left room for.
        let into_periodic = offset.saturating_sub(measured);
        let room = std::cmp::min(
            (offset + count).saturating_sub(std::cmp::max(measured, offset)),
            count,
        );
        let search = ReportSearch {
            kinds: ReportKinds {
                measurement: false,
                periodic: true,
            },
            range: DateRange::default(),
            newest_first: true,
            offset: into_periodic,
            count: room,
            documents: false,
        };
        let (periodic, periodic_total) = self
            .periodic_reports(viewer, patient, &search, into_periodic + room)
            .await?;
        for report in periodic.into_iter().skip(into_periodic as usize) {
            let pdf = self.periodic_pdf_of(viewer, &report, &user).await;
            let report = periodic_diagnostic_report(&report, &user, base, pdf.as_ref());
            entries.push((
                Resource::DocumentReference(Box::new(map::document_reference(&report))),
                "match",
            ));
            entries.push((Resource::DiagnosticReport(Box::new(report)), "match"));
        }
        Ok(FhirPage {
            more: offset + count < measured + periodic_total,
            entries,
            total: None,
        })
    }
}

/// A report of either kind, on its way into a merged list.
enum Dated {
    Measurement(Box<ReportRecord>),
    Periodic(report::Model),
}

fn facts<'a>(
    header: &'a measurement::Header,
    data: &'a serde_json::Value,
    zone: Tz,
) -> MeasurementFacts<'a> {
    MeasurementFacts {
        id: &header.id,
        patient: &header.creator_id,
        data,
        taken: header
            .measurement_timestamp
            .unwrap_or(header.creation_timestamp),
        updated: header.update_timestamp,
        zone,
    }
}

fn binary_url(base: &str, id: &Id) -> String {
    format!("{base}/Binary/{id}")
}

fn measurement_diagnostic_report(
    record: &ReportRecord,
    header: &measurement::Header,
    data: &serde_json::Value,
    zone: Tz,
    base: &str,
) -> Option<DiagnosticReport> {
    let file = record.file.as_ref()?;
    let facts = facts(header, data, zone);
    let pdf = PdfFacts {
        binary_url: binary_url(base, &record.report.id),
        language: &record.report.language,
        title: file.name.clone(),
        created: file.creation_timestamp,
        size: u64::try_from(file.size).ok(),
        sha1: file.sha1.clone(),
    };
    Some(map::measurement_report(
        &record.report.id,
        &facts,
        &pdf,
        record.report.creation_timestamp,
    ))
}

/// A periodic report as a DiagnosticReport; `pdf` is its PDF in the patient's language and
/// zone (what its Binary serves), which gives the attachment its size and hash.
fn periodic_diagnostic_report(
    report: &report::Model,
    patient: &user::Model,
    base: &str,
    pdf: Option<&file::Model>,
) -> DiagnosticReport {
    let zone = zone_of(patient);
    let language = patient.language.to_ascii_lowercase();
    let measurements = analysed_items(report);
    let facts = map::PeriodicFacts {
        id: &report.id,
        patient: &report.user_id,
        measurements: &measurements,
        start: report.period_start_timestamp,
        end: report.period_end_timestamp,
        created: report.creation_timestamp,
        updated: report.update_timestamp,
        zone,
    };
    let pdf = PdfFacts {
        binary_url: binary_url(base, &report.id),
        language: &language,
        title: pdf.map_or_else(
            || format!("periodic-report-{}.pdf", report.id),
            |f| f.name.clone(),
        ),
        created: pdf.map_or(report.creation_timestamp, |f| f.creation_timestamp),
        size: pdf.and_then(|f| u64::try_from(f.size).ok()),
        sha1: pdf.and_then(|f| f.sha1.clone()),
    };
    map::periodic_report(&facts, &pdf)
}

impl Actions {
    /// The PDF of periodic `report` as its Binary serves it (the patient's language and zone),
    /// made now if nobody has asked for it yet, so that its attachment carries its size and
    /// hash. A render that fails leaves the attachment without them rather than failing the
    /// read: the Binary itself then answers the error.
    async fn periodic_pdf_of(
        &self,
        viewer: &Viewer,
        report: &report::Model,
        patient: &user::Model,
    ) -> Option<file::Model> {
        let language = Language::or_english(Some(&patient.language));
        let made = self
            .reports
            .periodic_report_pdf(&viewer.user_id, report, patient, language, zone_of(patient))
            .await;
        match made {
            Ok(file) => Some(file),
            Err(err) => {
                tracing::warn!(report = %report.id, error = %err, "a periodic report's PDF could not be made for its attachment");
                None
            }
        }
    }
}

/// The analysed measurements a periodic report lists (the items of its `data` whose status
/// has results: those that have Observations).
fn analysed_items(report: &report::Model) -> Vec<Id> {
    #[derive(serde::Deserialize)]
    struct Item {
        id: Id,
        status: String,
    }
    #[derive(serde::Deserialize)]
    struct Data {
        #[serde(default)]
        measurements: Vec<Item>,
    }
    serde_json::from_str::<Data>(&report.data)
        .map(|data| {
            data.measurements
                .into_iter()
                .filter(|item| Status::parse(&item.status).is_some_and(Status::has_results))
                .map(|item| item.id)
                .collect()
        })
        .unwrap_or_default()
}
