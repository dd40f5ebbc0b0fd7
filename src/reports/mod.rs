//! Reports: building their data, rendering PDFs once per distinct content, and storing them.
//!
//! A PDF is identified by the hash of its render input (the PDF standards it meets, the
//! template revision and the data, which holds everything the page shows). Repeats find the stored file by that hash; 50
//! concurrent first requests share one render (single-flight in the process, and a unique
//! `cache_key` row across processes).
//!
//! No account can hold the renderer: renders take one slot of a core each, every reader
//! (the account asking for the PDF) renders one at a time ([`turns`]), and a render still
//! running at the deadline is abandoned.

pub mod chart;
pub mod common;
pub mod findings;
pub mod format;
pub mod measurement;
pub mod periodic;
pub mod series;
pub mod turns;

#[cfg(test)]
pub(crate) mod render_data_tests;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chrono_tz::Tz;
use serde::Serialize;
use sha2::{Digest, Sha256};
use tokio::sync::{OnceCell, Semaphore};

use crate::domain::account::{Language, TimeZone};
use crate::domain::id::Id;
use crate::domain::measurement::Status;
use crate::pdf::{Engine, RenderMeta, Template, TemplateData};
use crate::storage::FileStorage;
use crate::store::entities::{file, measurement_report, report, user};
use crate::store::{
    MeasurementRecord, NewFile, NewMeasurementReport, Service, Store, StoreError, Tx, Unaudited,
};
use crate::telemetry::metrics;

/// Why a report could not be made.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// The measurement has no results to report.
    #[error("{0}")]
    NotReady(String),
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The render ran past the deadline and was abandoned; nothing was stored.
    #[error("the report took longer than the render deadline of {} ms; try again later", .0.as_millis())]
    Deadline(Duration),
    /// Rendering or storing failed.
    #[error(transparent)]
    Internal(#[from] anyhow::Error),
}

type Flight = Arc<OnceCell<Pdf>>;

/// A PDF found among the stored files, or just rendered and put in storage with its row still
/// to be recorded: the caller records it in the transaction that records what points at it.
#[derive(Debug, Clone)]
pub enum Pdf {
    /// A file recorded earlier, by this process or another.
    Stored(file::Model),
    /// A render now in storage, and the row to record for it.
    Rendered(NewFile),
}

/// A PDF from [`Reports::pdf`]. Until it is dropped, requests for the same content share it
/// instead of rendering again, so that its row is recorded before the next request looks for
/// it.
pub struct Flown<'a> {
    reports: &'a Reports,
    key: String,
    flight: Flight,
    pdf: Pdf,
}

impl Flown<'_> {
    /// The file's row: the stored one, or the rendered one's, inserted in `tx`. Requests that
    /// shared the render each insert it; a key recorded meanwhile keeps its first row
    /// ([`Tx::insert_file`]).
    pub async fn record(&self, tx: &Tx) -> Result<file::Model, StoreError> {
        match &self.pdf {
            Pdf::Stored(file) => Ok(file.clone()),
            Pdf::Rendered(new) => tx.insert_file(new.clone()).await,
        }
    }
}

impl Drop for Flown<'_> {
    fn drop(&mut self) {
        self.reports.land(&self.key, &self.flight);
    }
}

/// A measurement's report made by [`Reports::measurement_report`], for the caller to record
/// with its audit record: the PDF's row, then the document that points at it.
pub struct MeasurementDocument<'a> {
    pdf: Flown<'a>,
    creator_id: Id,
    patient_id: Id,
    measurement_id: Id,
    language: Language,
    time_zone: Tz,
    for_measurement_updated_timestamp: i64,
}

impl MeasurementDocument<'_> {
    /// Records the PDF's row and the report document in `tx`.
    pub async fn record(
        &self,
        tx: &Tx,
    ) -> Result<(measurement_report::Model, file::Model), StoreError> {
        let file = self.pdf.record(tx).await?;
        let report = tx
            .insert_measurement_report(NewMeasurementReport {
                creator_id: self.creator_id,
                patient_id: self.patient_id,
                measurement_id: self.measurement_id,
                language: self.language.code().to_owned(),
                time_zone: self.time_zone.name().to_owned(),
                file_id: file.id,
                for_measurement_updated_timestamp: self.for_measurement_updated_timestamp,
            })
            .await?;
        Ok((report, file))
    }
}

/// Makes reports; one per application.
pub struct Reports {
    store: Store,
    storage: Arc<dyn FileStorage>,
    engine: Arc<Engine>,
    permits: Arc<Semaphore>,
    in_flight: Mutex<HashMap<String, Flight>>,
    turns: Arc<turns::Turns>,
    deadline: Duration,
    renders: AtomicU64,
    abandoned: AtomicU64,
}

/// How long a render may run unless [`Reports::with_deadline`] says otherwise.
pub const DEFAULT_DEADLINE: Duration = Duration::from_secs(10);

/// Whether a measurement in `status` can be reported on: once it has results (the wire
/// contract answers 27 for any other status, `analysis_failed` included; the portal shows a
/// failed analysis and its reason on the measurement's page).
pub fn reportable(status: Status) -> bool {
    status.has_results()
}

/// The hash that identifies a rendered PDF: of the standards it meets, the template
/// revision, the template and the serialised `data`. The standards are named apart from the
/// revision, so that PDFs stored before they were declared (or under others) are not served
/// as meeting them even where the templates did not change.
pub fn cache_key(template: Template, data: &impl Serialize) -> String {
    let mut hasher = Sha256::new();
    hasher.update(crate::pdf::STANDARDS.as_bytes());
    hasher.update([0]);
    hasher.update(crate::pdf::revision().as_bytes());
    hasher.update([0, template as u8, 0]);
    hasher.update(serde_json::to_vec(data).unwrap_or_default());
    hex::encode(hasher.finalize())
}

/// What a report's PDF declares of itself: its title (the patient's name), its identifier (the
/// cache key), its date (the data's instant, `as_of`) and its language.
fn render_meta(
    patient: &user::Model,
    key: &str,
    as_of: chrono::DateTime<chrono::Utc>,
    language: Language,
) -> RenderMeta {
    RenderMeta {
        title: format!(
            "Tacho — {}",
            crate::domain::person_name::full_name(&patient.first_name, &patient.last_name)
        ),
        ident: key.to_owned(),
        timestamp: as_of,
        language: language.code().to_owned(),
    }
}

impl Reports {
    /// Reports stored in `storage`, rendered by `engine`, at most one render per core at once,
    /// each within [`DEFAULT_DEADLINE`].
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
            turns: Arc::default(),
            deadline: DEFAULT_DEADLINE,
            renders: AtomicU64::new(0),
            abandoned: AtomicU64::new(0),
        }
    }

    /// The same, abandoning renders that run longer than `deadline` (`TACHO_RENDER_DEADLINE`).
    pub fn with_deadline(mut self, deadline: Duration) -> Self {
        self.deadline = deadline;
        self
    }

    /// The PDF of a measurement of `patient` in `language`, in the patient's current time
    /// zone, rendered unless one with the same content exists, and the report document that
    /// points at it, for the caller to record (in the transaction of its audit record).
    /// `creator_id` is the reader asking for it, whose renders take turns.
    pub async fn measurement_report(
        &self,
        creator_id: &Id,
        record: &MeasurementRecord,
        patient: &user::Model,
        language: Language,
    ) -> Result<MeasurementDocument<'_>, ReportError> {
        let m = &record.measurement;
        if !reportable(m.status) {
            return Err(ReportError::NotReady(format!(
                "measurement {} has status `{}`; a report needs an analysed measurement",
                m.id, m.status
            )));
        }
        // The reviewer is named beside the conclusion: staff names are for every reader.
        let reviewers = async {
            match m.reviewer_id {
                Some(reviewer) => self.store.user_names(&Service::Reports, &[reviewer]).await,
                None => Ok(Default::default()),
            }
        };
        let (profile, reviewers) = tokio::try_join!(
            self.store.visible_profile(&Service::Reports, &patient.id),
            reviewers,
        )?;
        let time_zone: Tz = TimeZone::parse(&patient.time_zone)
            .map(|z| z.0)
            .unwrap_or(Tz::UTC);
        let input = measurement::MeasurementReportInput {
            measurement: m,
            patient,
            profile: profile.as_ref(),
            language,
            time_zone,
            reviewer: m
                .reviewer_id
                .and_then(|id| reviewers.get(&id))
                .map(String::as_str),
        };
        let built = measurement::build(&input);
        let key = cache_key(Template::Measurement, &built.data);
        let name = format!("tacho-measurement-{}-{}.pdf", &m.id, language.code());
        let meta = render_meta(patient, &key, built.as_of, language);
        let pdf = self
            .pdf(
                creator_id,
                &key,
                (&name, &patient.id),
                Template::Measurement,
                built.data,
                meta,
            )
            .await?;
        Ok(MeasurementDocument {
            pdf,
            creator_id: *creator_id,
            patient_id: patient.id,
            measurement_id: m.id,
            language,
            time_zone,
            for_measurement_updated_timestamp: m.update_timestamp,
        })
    }

    /// The PDF of a periodic report about `patient` in `language` and `time_zone`, rendered
    /// unless a PDF with the same content exists; `reader_id` is the account asking for it,
    /// whose renders take turns.
    pub async fn periodic_report_pdf(
        &self,
        reader_id: &Id,
        report: &report::Model,
        patient: &user::Model,
        language: Language,
        time_zone: Tz,
    ) -> Result<file::Model, ReportError> {
        let profile = self
            .store
            .visible_profile(&Service::Reports, &patient.id)
            .await?;
        let built = periodic::build(&periodic::PeriodicReportInput {
            report,
            patient,
            profile: profile.as_ref(),
            language,
            time_zone,
        })
        .map_err(anyhow::Error::from)?;
        let key = cache_key(Template::Periodic, &built.data);
        let name = format!("tacho-report-{}-{}.pdf", report.id, language.code());
        let meta = render_meta(patient, &key, built.as_of, language);
        let pdf = self
            .pdf(
                reader_id,
                &key,
                (&name, &patient.id),
                Template::Periodic,
                built.data,
                meta,
            )
            .await?;
        let file = match &pdf.pdf {
            Pdf::Stored(file) => file.clone(),
            Pdf::Rendered(_) => {
                self.store
                    .write(Unaudited::Renders, async |tx| pdf.record(tx).await)
                    .await?
            }
        };
        Ok(file)
    }

    /// The stored file for `key`, or a render of it put in storage when no process has one.
    /// The file is written only once a render has finished in time; its row, under `name`
    /// and the id of the patient it is about (what erasure and retention find it by), is for
    /// the caller to record ([`Flown::record`]). The key is looked up once, inside the single
    /// flight: requests for the same key wait for that one answer, stored or rendered, and
    /// share it until the first of them has recorded it.
    ///
    /// Another instance may record the same key between the lookup and the insert; the
    /// insert then keeps the first row ([`crate::store::Tx::insert_file`]) and the render
    /// was only spent twice.
    async fn pdf<D: TemplateData + Send + 'static>(
        &self,
        reader_id: &Id,
        key: &str,
        (name, patient_id): (&str, &Id),
        template: Template,
        data: D,
        meta: RenderMeta,
    ) -> Result<Flown<'_>, ReportError> {
        let flight = {
            let mut in_flight = self.in_flight.lock().unwrap_or_else(|e| e.into_inner());
            in_flight.entry(key.to_owned()).or_default().clone()
        };
        let result = flight
            .get_or_try_init(|| async {
                if let Some(file) = self.store.file_by_cache_key(&Service::Reports, key).await? {
                    metrics::render_cache(template.name(), true);
                    return Ok(Pdf::Stored(file));
                }
                metrics::render_cache(template.name(), false);
                let bytes = self.render(reader_id, template, data, meta).await?;
                let new = NewFile {
                    cache_key: key.to_owned(),
                    name: name.to_owned(),
                    patient_id: *patient_id,
                    mimetype: "application/pdf".into(),
                    size: bytes.len() as i64,
                    sha256: hex::encode(Sha256::digest(&bytes)),
                    sha1: crate::fhir::map::sha1_base64(&bytes),
                };
                self.storage.put(key, bytes).await?;
                Ok::<_, ReportError>(Pdf::Rendered(new))
            })
            .await
            .cloned();
        match result {
            Ok(pdf) => Ok(Flown {
                reports: self,
                key: key.to_owned(),
                flight,
                pdf,
            }),
            Err(e) => {
                self.land(key, &flight);
                Err(e)
            }
        }
    }

    /// Ends `flight` for `key`: the next request for it looks it up again.
    fn land(&self, key: &str, flight: &Flight) {
        let mut in_flight = self.in_flight.lock().unwrap_or_else(|e| e.into_inner());
        if in_flight.get(key).is_some_and(|f| Arc::ptr_eq(f, flight)) {
            in_flight.remove(key);
        }
    }

    /// Renders on the blocking pool: first the reader's turn, then a core's slot. Typst has
    /// no way to stop a compilation, so a render past the deadline is abandoned, not
    /// stopped: the caller is answered and the slot goes to the next render at once, while
    /// the thread finishes in the background and its result is dropped. The reader's turn
    /// travels with the thread and ends only when it does, so one account never has more
    /// than one render running, abandoned or not.
    async fn render<D: TemplateData + Send + 'static>(
        &self,
        reader_id: &Id,
        template: Template,
        data: D,
        meta: RenderMeta,
    ) -> Result<Vec<u8>, ReportError> {
        let turn = self.turns.take(reader_id).await;
        let _permit = self.permits.acquire().await.map_err(anyhow::Error::from)?;
        let engine = self.engine.clone();
        let language = meta.language.clone();
        let started = Instant::now();
        let task = tokio::task::spawn_blocking(move || {
            let _turn = turn;
            engine.render(template, &data, &meta)
        });
        let bytes = match tokio::time::timeout(self.deadline, task).await {
            Ok(joined) => joined
                .map_err(anyhow::Error::from)?
                .map_err(anyhow::Error::from)?,
            Err(_) => {
                self.abandoned.fetch_add(1, Ordering::Relaxed);
                metrics::render_abandoned(template.name());
                tracing::warn!(
                    deadline_ms = self.deadline.as_secs_f64() * 1000.0,
                    "abandoned a PDF render that ran past the deadline"
                );
                return Err(ReportError::Deadline(self.deadline));
            }
        };
        self.renders.fetch_add(1, Ordering::Relaxed);
        metrics::render(template.name(), &language, started.elapsed());
        tracing::info!(
            elapsed_ms = started.elapsed().as_secs_f64() * 1000.0,
            bytes = bytes.len(),
            "rendered a PDF"
        );
        Ok(bytes)
    }

    /// How many renders this process has abandoned at the deadline.
    pub fn abandoned(&self) -> u64 {
        self.abandoned.load(Ordering::Relaxed)
    }

    /// How many accounts are rendering or waiting for their turn.
    pub fn readers_rendering(&self) -> usize {
        self.turns.len()
    }

    /// Where the rendered files are kept.
    pub fn storage(&self) -> &Arc<dyn FileStorage> {
        &self.storage
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
