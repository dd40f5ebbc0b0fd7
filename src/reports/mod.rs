//! Reports: building their data, rendering PDFs once per distinct content, and storing them.
//!
//! A PDF is identified by the hash of its render input (the template revision and the data,
//! which holds everything the page shows). Repeats find the stored file by that hash; 50
//! concurrent first requests share one render (single-flight in the process, and a unique
//! `cache_key` row across processes).

pub mod common;
pub mod findings;
pub mod format;
pub mod measurement;
pub mod periodic;
pub mod series;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use chrono_tz::Tz;
use sha2::{Digest, Sha256};
use tokio::sync::{OnceCell, Semaphore};

use crate::domain::account::{Language, TimeZone};
use crate::domain::measurement::Status;
use crate::pdf::{Engine, RenderMeta, Template};
use crate::storage::FileStorage;
use crate::store::entities::{file, measurement_report, report, user};
use crate::store::{MeasurementRecord, NewFile, NewMeasurementReport, Store, StoreError};

/// Why a report could not be made.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// The measurement has no results to report.
    #[error("{0}")]
    NotReady(String),
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Rendering or storing failed.
    #[error(transparent)]
    Internal(#[from] anyhow::Error),
}

type Flight = Arc<OnceCell<file::Model>>;

/// Makes reports; one per application.
pub struct Reports {
    store: Store,
    storage: Arc<dyn FileStorage>,
    engine: Arc<Engine>,
    permits: Arc<Semaphore>,
    in_flight: Mutex<HashMap<String, Flight>>,
    renders: AtomicU64,
}

/// Whether a measurement in `status` can be reported on: once it has results (the wire
/// contract answers 27 for any other status, `analysis_failed` included; the portal shows a
/// failed analysis and its reason on the measurement's page).
pub fn reportable(status: Status) -> bool {
    status.has_results()
}

/// The hash that identifies a rendered PDF.
pub fn cache_key(template: Template, data: &serde_json::Value) -> String {
    let mut hasher = Sha256::new();
    hasher.update(crate::pdf::revision().as_bytes());
    hasher.update([0, template as u8, 0]);
    hasher.update(serde_json::to_vec(data).unwrap_or_default());
    hex::encode(hasher.finalize())
}

impl Reports {
    /// Reports stored in `storage`, rendered by `engine`, at most one render per core at once.
    pub fn new(store: Store, storage: Arc<dyn FileStorage>, engine: Arc<Engine>) -> Self {
        let cores = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(2);
        Reports {
            store,
            storage,
            engine,
            permits: Arc::new(Semaphore::new(cores)),
            in_flight: Mutex::new(HashMap::new()),
            renders: AtomicU64::new(0),
        }
    }

    /// Creates a report document for a measurement in `language`, in the patient's current
    /// time zone, rendering the PDF unless one with the same content exists.
    pub async fn create_measurement_report(
        &self,
        creator_id: &str,
        record: &MeasurementRecord,
        language: Language,
    ) -> Result<(measurement_report::Model, file::Model), ReportError> {
        let m = &record.measurement;
        let status = Status::parse(&m.status).unwrap_or(Status::Measured);
        if !reportable(status) {
            return Err(ReportError::NotReady(format!(
                "measurement {} has status `{}`; a report needs an analysed measurement",
                m.id, m.status
            )));
        }
        let patient = self
            .store
            .user_by_id(&m.creator_id)
            .await?
            .ok_or(StoreError::NotFound)?;
        let profile = self.store.profile_of(&patient.id).await?;
        let time_zone: Tz = TimeZone::parse(&patient.time_zone)
            .map(|z| z.0)
            .unwrap_or(Tz::UTC);
        let input = measurement::MeasurementReportInput {
            measurement: m,
            patient: &patient,
            profile: profile.as_ref(),
            language,
            time_zone,
        };
        let built = measurement::build(&input);
        let key = cache_key(Template::Measurement, &built.data);
        let name = format!("tacho-measurement-{}-{}.pdf", &m.id, language.code());
        let meta = RenderMeta {
            title: format!("Tacho — {} {}", patient.first_name, patient.last_name),
            ident: key.clone(),
            timestamp: built.as_of,
            language: language.code().to_owned(),
        };
        let file = self
            .pdf(&key, &name, Template::Measurement, built.data, meta)
            .await?;
        let report = self
            .store
            .insert_measurement_report(NewMeasurementReport {
                creator_id: creator_id.to_owned(),
                patient_id: patient.id.clone(),
                measurement_id: m.id.clone(),
                language: language.code().to_owned(),
                time_zone: time_zone.name().to_owned(),
                file_id: file.id.clone(),
                for_measurement_updated_timestamp: m.update_timestamp,
            })
            .await?;
        Ok((report, file))
    }

    /// The PDF of a periodic report about `patient` in `language` and `time_zone`, rendered
    /// unless a PDF with the same content exists.
    pub async fn periodic_report_pdf(
        &self,
        report: &report::Model,
        patient: &user::Model,
        language: Language,
        time_zone: Tz,
    ) -> Result<file::Model, ReportError> {
        let profile = self.store.profile_of(&patient.id).await?;
        let built = periodic::build(&periodic::PeriodicReportInput {
            report,
            patient,
            profile: profile.as_ref(),
            language,
            time_zone,
        });
        let key = cache_key(Template::Periodic, &built.data);
        let name = format!("tacho-report-{}-{}.pdf", report.id, language.code());
        let meta = RenderMeta {
            title: format!("Tacho — {} {}", patient.first_name, patient.last_name),
            ident: key.clone(),
            timestamp: built.as_of,
            language: language.code().to_owned(),
        };
        self.pdf(&key, &name, Template::Periodic, built.data, meta)
            .await
    }

    /// The stored file for `key`, rendering it first when no process has.
    async fn pdf(
        &self,
        key: &str,
        name: &str,
        template: Template,
        data: serde_json::Value,
        meta: RenderMeta,
    ) -> Result<file::Model, ReportError> {
        if let Some(file) = self.store.file_by_cache_key(key).await? {
            return Ok(file);
        }
        let flight = {
            let mut in_flight = self.in_flight.lock().unwrap_or_else(|e| e.into_inner());
            in_flight.entry(key.to_owned()).or_default().clone()
        };
        let result = flight
            .get_or_try_init(|| async {
                if let Some(file) = self.store.file_by_cache_key(key).await? {
                    return Ok(file);
                }
                let bytes = self.render(template, data, meta).await?;
                self.storage.put(key, bytes.clone()).await?;
                let file = self
                    .store
                    .insert_file(NewFile {
                        cache_key: key.to_owned(),
                        name: name.to_owned(),
                        mimetype: "application/pdf".into(),
                        size: bytes.len() as i64,
                        sha256: hex::encode(Sha256::digest(&bytes)),
                    })
                    .await?;
                Ok::<_, ReportError>(file)
            })
            .await
            .cloned();
        let mut in_flight = self.in_flight.lock().unwrap_or_else(|e| e.into_inner());
        if in_flight.get(key).is_some_and(|f| Arc::ptr_eq(f, &flight)) {
            in_flight.remove(key);
        }
        result
    }

    async fn render(
        &self,
        template: Template,
        data: serde_json::Value,
        meta: RenderMeta,
    ) -> anyhow::Result<Vec<u8>> {
        let _permit = self.permits.acquire().await?;
        let engine = self.engine.clone();
        let started = std::time::Instant::now();
        let bytes =
            tokio::task::spawn_blocking(move || engine.render(template, &data, &meta)).await??;
        self.renders.fetch_add(1, Ordering::Relaxed);
        tracing::info!(
            elapsed_ms = started.elapsed().as_secs_f64() * 1000.0,
            bytes = bytes.len(),
            "rendered a PDF"
        );
        Ok(bytes)
    }

    /// How many PDFs this process has rendered.
    pub fn renders(&self) -> u64 {
        self.renders.load(Ordering::Relaxed)
    }

    /// The contents of a stored file.
    pub async fn contents(&self, file: &file::Model) -> anyhow::Result<Option<Vec<u8>>> {
        self.storage.get(&file.cache_key).await
    }
}
