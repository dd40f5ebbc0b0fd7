//! The patient's export of their whole record (GDPR art. 15 and 20), for both doors: one ZIP
//! holding `README.txt` in the patient's language, `record.json` (a FHIR R4 Bundle of type
//! `collection`: the pages of [`Actions::fhir_everything`], without their own audit records),
//! `measurements.csv` (one row per measurement, as the portal shows it) and `reports/*.pdf`
//! (every stored report PDF of the patient, byte for byte).
//!
//! The archive is made while it is sent and is never whole in memory: the ZIP is written
//! without seeking (`ZipWriter::new_stream`, each entry closed by a data descriptor) into a
//! buffer that is handed, a chunk at a time, to a channel of [`CHUNKS_IN_FLIGHT`] chunks from
//! which the response body reads; the task making it waits whenever the client reads slower.
//! Measurements are read a page at a time, PDFs one at a time, so what is held at once does
//! not grow with the record. A client that leaves closes the channel, which ends the task.
//!
//! Only the patient and administrators may export ([`crate::store::Viewer::may_export`]); an
//! export is audited (`user.export`) before its first byte, and each account may start
//! [`EXPORTS_PER_HOUR`] an hour.

use std::collections::{HashMap, HashSet};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::io::Write;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};

use bytes::Bytes;
use chrono::{DateTime, Datelike, SecondsFormat, Timelike};
use chrono_tz::Tz;
use futures_util::Stream;
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;
use zip::write::{SimpleFileOptions, StreamWriter};
use zip::{CompressionMethod, ZipWriter};

use super::{ActionError, ActionResult, Actions, EntryExt, entry};
use crate::analysis::{Indicator, Label, ResultKey, rate_label};
use crate::auth::throttle::Throttle;
use crate::domain::account::{Language, TimeZone};
use crate::domain::audit::AuditAction;
use crate::domain::id::Id;
use crate::domain::person_name::full_name;
use crate::domain::time::rfc3339_millis;
use crate::fhir::model::Resource;
use crate::i18n::Translator;
use crate::reports::common::translated_or_raw;
use crate::reports::findings::Headline;
use crate::reports::format;
use crate::store::Viewer;
use crate::store::entities::{file, measurement, user};

/// Exports each account may start in an hour, in a burst or spread out: an export reads the
/// whole record, which a loop of them would turn into load on the database.
pub const EXPORTS_PER_HOUR: u32 = 5;

/// Chunks waiting between the task making an archive and the client reading it.
const CHUNKS_IN_FLIGHT: usize = 4;
/// The size a chunk is sent at (the last one of an archive is smaller).
const CHUNK_BYTES: usize = 64 * 1024;
/// Measurements (each with its Observations, phone and reports) per page of `record.json`.
const RECORD_PAGE: u64 = 20;
/// Rows of `measurements.csv` read per statement (their list columns only).
const ROWS_PAGE: u64 = 200;
/// The periodic reports of one patient whose PDFs an export makes when missing: more than a
/// weekly and a monthly report of every prescription of years.
const PERIODIC_REPORTS_MADE: u64 = 10_000;
/// Payloads read at once for the rows' signal quality and note (a camera recording's payload
/// is about 0.4 MB).
const PAYLOADS_AT_ONCE: usize = 25;
/// File rows read per statement; their contents are read one at a time.
const FILES_PAGE: u64 = 50;

/// The columns of `measurements.csv`, in order (`docs/api.md` describes each).
const CSV_COLUMNS: [&str; 12] = [
    "measurement_id",
    "taken_at",
    "heart_rate_bpm",
    "result_code",
    "result",
    "signal_quality_code",
    "signal_quality",
    "review_conclusion_code",
    "review_conclusion",
    "reviewed_by",
    "reviewed_at",
    "review_note",
];

/// Exports started per acting account: a token bucket of [`EXPORTS_PER_HOUR`] refilled over
/// the hour.
pub type ExportThrottle = Throttle<Id>;

/// The bytes of an archive as they are made. An error ends the body early, which the client
/// sees as a broken download, never as a complete archive.
pub type ExportBody = Pin<Box<dyn Stream<Item = Result<Bytes, std::io::Error>> + Send>>;

/// An export under way: the name to save it as, and its bytes.
pub struct Export {
    /// `tacho-export-<patient id>.zip`.
    pub file_name: String,
    /// The archive's bytes, as they are made.
    pub body: ExportBody,
}

impl Actions {
    /// Starts the export of `patient`'s whole record for `viewer` (the patient, or an
    /// administrator): 404 for a patient the viewer does not see, 403 for one it sees but may
    /// not export, 429 past [`EXPORTS_PER_HOUR`]. The export is recorded before the first byte
    /// is made. `fhir_base` is the FHIR door's base (`…/fhir/R4`), which the Bundle's
    /// `fullUrl`s and references are under.
    pub async fn export_record(
        &self,
        viewer: &Viewer,
        patient: &Id,
        fhir_base: &str,
    ) -> ActionResult<Export> {
        let patient = self.store.patient_to_export(viewer, patient).await?;
        self.export_throttle
            .take(&viewer.user_id)
            .map_err(|wait| ActionError::Throttled {
                retry_after_secs: std::cmp::max(wait.as_secs(), 1),
            })?;
        let record = entry(viewer, AuditAction::UserExport, "user", &patient.id)
            .patient(&patient.id)
            .detail("record.json, measurements.csv, report PDFs");
        self.store.record_read(record).await?;
        let file_name = format!("tacho-export-{}.zip", patient.id);
        let (sender, mut receiver) = mpsc::channel(CHUNKS_IN_FLIGHT);
        let job = Job {
            actions: self.clone(),
            viewer: viewer.clone(),
            now: self.store.clock().now(),
            patient,
            base: fhir_base.trim_end_matches('/').to_owned(),
        };
        tokio::spawn(async move {
            let patient = job.patient.id;
            match job.run(&sender).await {
                Ok(()) | Err(Fault::Left) => {}
                Err(Fault::Failed(cause)) => {
                    // The cause names a step and a fault, never what the record holds.
                    tracing::error!(%patient, error = format!("{cause:#}"), "an export failed");
                    let failed = std::io::Error::other("the export failed");
                    drop(sender.send(Err(failed)).await);
                }
            }
        });
        let body = futures_util::stream::poll_fn(move |cx| receiver.poll_recv(cx));
        Ok(Export {
            file_name,
            body: Box::pin(body),
        })
    }
}

/// Why an archive stopped before its end.
#[derive(Debug)]
enum Fault {
    /// The client went away: nothing is wrong.
    Left,
    Failed(anyhow::Error),
}

impl From<ActionError> for Fault {
    fn from(err: ActionError) -> Self {
        Fault::Failed(err.into())
    }
}

impl From<crate::store::StoreError> for Fault {
    fn from(err: crate::store::StoreError) -> Self {
        Fault::Failed(err.into())
    }
}

impl From<zip::result::ZipError> for Fault {
    fn from(err: zip::result::ZipError) -> Self {
        Fault::Failed(anyhow::anyhow!("writing the ZIP: {err}"))
    }
}

impl From<std::io::Error> for Fault {
    fn from(err: std::io::Error) -> Self {
        Fault::Failed(anyhow::anyhow!("writing the ZIP: {err}"))
    }
}

impl From<csv::Error> for Fault {
    fn from(err: csv::Error) -> Self {
        Fault::Failed(anyhow::anyhow!("writing measurements.csv: {err}"))
    }
}

impl From<serde_json::Error> for Fault {
    fn from(err: serde_json::Error) -> Self {
        Fault::Failed(anyhow::anyhow!("writing record.json: {err}"))
    }
}

/// What the ZIP writer writes into: a buffer that [`Archive::send`] empties into the channel.
#[derive(Clone, Default)]
struct Buffer(Arc<Mutex<Vec<u8>>>);

impl Buffer {
    /// What was written since the last call, once it is at least `at_least` bytes.
    fn take(&self, at_least: usize) -> Option<Bytes> {
        let mut buffer = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        (!buffer.is_empty() && buffer.len() >= at_least)
            .then(|| Bytes::from(std::mem::take(&mut *buffer)))
    }
}

impl Write for Buffer {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The ZIP being written, and where its bytes go.
struct Archive<'a> {
    zip: ZipWriter<StreamWriter<Buffer>>,
    buffer: Buffer,
    out: &'a mpsc::Sender<Result<Bytes, std::io::Error>>,
    /// Every entry's modification time: when the export was made, on the patient's clock.
    modified: zip::DateTime,
}

impl<'a> Archive<'a> {
    fn new(out: &'a mpsc::Sender<Result<Bytes, std::io::Error>>, made: DateTime<Tz>) -> Self {
        let buffer = Buffer::default();
        let modified = zip::DateTime::from_date_and_time(
            u16::try_from(made.year()).unwrap_or(1980),
            made.month() as u8,
            made.day() as u8,
            made.hour() as u8,
            made.minute() as u8,
            made.second() as u8,
        )
        .unwrap_or_default();
        Archive {
            zip: ZipWriter::new_stream(buffer.clone()),
            buffer,
            out,
            modified,
        }
    }

    /// Starts entry `name`: deflated text, or a stored PDF (compressed already).
    fn start(&mut self, name: &str, compressed: bool) -> Result<(), Fault> {
        let method = if compressed {
            CompressionMethod::Stored
        } else {
            CompressionMethod::Deflated
        };
        let options = SimpleFileOptions::default()
            .compression_method(method)
            .last_modified_time(self.modified)
            .unix_permissions(0o644);
        self.zip.start_file(name, options)?;
        Ok(())
    }

    fn write(&mut self, bytes: &[u8]) -> Result<(), Fault> {
        self.zip.write_all(bytes)?;
        Ok(())
    }

    /// Sends what was written once it makes a chunk, waiting while the client is behind.
    async fn send(&mut self) -> Result<(), Fault> {
        if let Some(chunk) = self.buffer.take(CHUNK_BYTES) {
            self.out.send(Ok(chunk)).await.map_err(|_| Fault::Left)?;
        }
        Ok(())
    }

    /// Writes the central directory and sends the rest.
    async fn finish(self) -> Result<(), Fault> {
        let Archive {
            zip, buffer, out, ..
        } = self;
        zip.finish()?;
        if let Some(rest) = buffer.take(0) {
            out.send(Ok(rest)).await.map_err(|_| Fault::Left)?;
        }
        Ok(())
    }
}

/// The export of one record, run by its own task.
struct Job {
    actions: Actions,
    viewer: Viewer,
    patient: user::Model,
    base: String,
    now: DateTime<chrono::Utc>,
}

impl Job {
    async fn run(&self, out: &mpsc::Sender<Result<Bytes, std::io::Error>>) -> Result<(), Fault> {
        let language = Language::or_english(Some(&self.patient.language));
        let tr = Translator::new(language);
        let zone = TimeZone::parse(&self.patient.time_zone)
            .map(|z| z.0)
            .unwrap_or(Tz::UTC);
        let mut archive = Archive::new(out, self.now.with_timezone(&zone));
        archive.start("README.txt", false)?;
        let name = full_name(&self.patient.first_name, &self.patient.last_name);
        archive.write(readme(&tr, name, self.now.with_timezone(&zone)).as_bytes())?;
        archive.send().await?;
        self.record(&mut archive).await?;
        self.measurements(&mut archive, &tr, zone).await?;
        self.make_periodic_pdfs(language, zone).await?;
        self.reports(&mut archive).await?;
        archive.finish().await
    }

    /// `record.json`: the Bundle's head, then each page of `$everything` as it is read.
    async fn record(&self, archive: &mut Archive<'_>) -> Result<(), Fault> {
        archive.start("record.json", false)?;
        let timestamp = serde_json::to_string(&rfc3339_millis(self.now.timestamp_millis()))?;
        let head = format!(
            r#"{{"resourceType":"Bundle","type":"collection","timestamp":{timestamp},"entry":["#
        );
        archive.write(head.as_bytes())?;
        // A resource each page refers to (the analysis' Device) comes once; and a measurement
        // that arrives while the export runs moves the pages by one, which must not list a
        // resource twice. The set holds a hash of each `fullUrl`, not the text.
        let mut written: HashSet<u64> = HashSet::new();
        let mut offset = 0;
        loop {
            let page = self
                .actions
                .everything_page(
                    &self.viewer,
                    &self.patient.id,
                    offset,
                    RECORD_PAGE,
                    &self.base,
                )
                .await?;
            for (resource, _) in &page.entries {
                let (kind, id) = resource.kind_and_id();
                let full_url = format!("{}/{kind}/{id}", self.base);
                let mut hasher = DefaultHasher::new();
                full_url.hash(&mut hasher);
                if !written.insert(hasher.finish()) {
                    continue;
                }
                if written.len() > 1 {
                    archive.write(b",")?;
                }
                let entry = CollectionEntry {
                    full_url: &full_url,
                    resource,
                };
                archive.write(&serde_json::to_vec(&entry)?)?;
            }
            archive.send().await?;
            if !page.more {
                break;
            }
            offset += RECORD_PAGE;
        }
        archive.write(b"]}")?;
        Ok(())
    }

    /// `measurements.csv`: every measurement of the patient, oldest first, a page at a time.
    async fn measurements(
        &self,
        archive: &mut Archive<'_>,
        tr: &Translator,
        zone: Tz,
    ) -> Result<(), Fault> {
        archive.start("measurements.csv", false)?;
        // A byte-order mark, so that spreadsheet programs read the file as UTF-8.
        archive.write("\u{feff}".as_bytes())?;
        archive.write(&csv_lines(&[CSV_COLUMNS.map(str::to_owned).to_vec()])?)?;
        let store = &self.actions.store;
        let mut after: Option<(i64, Id)> = None;
        loop {
            let headers = store
                .measurement_headers_after(&self.viewer, &self.patient.id, after, ROWS_PAGE)
                .await?;
            let Some(last) = headers.last() else {
                break;
            };
            after = Some((taken(last), last.id));
            let mut reviewers: Vec<Id> = headers.iter().filter_map(|h| h.reviewer_id).collect();
            reviewers.sort();
            reviewers.dedup();
            let names = store.user_names(&self.viewer, &reviewers).await?;
            for part in headers.chunks(PAYLOADS_AT_ONCE) {
                let ids: Vec<Id> = part.iter().map(|h| h.id).collect();
                let payloads = store.measurement_payloads(&self.viewer, &ids).await?;
                let rows: Vec<Vec<String>> = part
                    .iter()
                    .map(|header| {
                        let facts = payloads
                            .get(&header.id)
                            .and_then(|text| serde_json::from_str::<RowFacts>(text).ok())
                            .unwrap_or_default();
                        csv_row(tr, zone, header, &facts, &names)
                    })
                    .collect();
                archive.write(&csv_lines(&rows)?)?;
                archive.send().await?;
            }
            if (headers.len() as u64) < ROWS_PAGE {
                break;
            }
        }
        Ok(())
    }

    /// Makes the PDF of every periodic report of the patient that nobody has opened yet (a
    /// report's PDF is made on first request), in the patient's language and zone, so that
    /// the archive holds every report. A report opened before keeps the PDFs it has.
    async fn make_periodic_pdfs(&self, language: Language, zone: Tz) -> Result<(), Fault> {
        let store = &self.actions.store;
        let ids = store
            .report_ids_of(&self.viewer, &self.patient.id, PERIODIC_REPORTS_MADE)
            .await?;
        for id in ids {
            let report = store.visible_report(&self.viewer, &id).await?;
            if store.has_periodic_pdf(&self.viewer, &report.id).await? {
                continue;
            }
            self.actions
                .reports
                .periodic_report_pdf(&self.viewer.user_id, &report, &self.patient, language, zone)
                .await
                .map_err(|e| Fault::Failed(anyhow::Error::from(e).context("a periodic PDF")))?;
        }
        Ok(())
    }

    /// `reports/<name>`: every stored PDF about the patient, read and sent one at a time.
    async fn reports(&self, archive: &mut Archive<'_>) -> Result<(), Fault> {
        let store = &self.actions.store;
        let storage = self.actions.reports.storage();
        let mut names: HashSet<String> = HashSet::new();
        let mut after = None;
        loop {
            let files = store
                .patient_files(&self.viewer, &self.patient.id, after, FILES_PAGE)
                .await?;
            for file in &files {
                // A file whose contents are gone (a storage restored from an older backup)
                // is left out rather than failing the whole export.
                let Some(contents) = storage
                    .get(&file.cache_key)
                    .await
                    .map_err(|e| Fault::Failed(e.context("reading a report PDF")))?
                else {
                    tracing::warn!(file = %file.id, "an exported file's contents are missing");
                    continue;
                };
                archive.start(&pdf_name(file, &mut names), true)?;
                for part in contents.chunks(CHUNK_BYTES) {
                    archive.write(part)?;
                    archive.send().await?;
                }
            }
            match files.last() {
                Some(last) if files.len() as u64 == FILES_PAGE => after = Some(last.id),
                _ => break,
            }
        }
        Ok(())
    }
}

/// An entry of a `collection` Bundle: no `search`, which only a search's entries carry.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CollectionEntry<'a> {
    full_url: &'a str,
    resource: &'a Resource,
}

/// When a measurement was taken, as lists order it: the phone's time, else its upload.
fn taken(header: &measurement::Header) -> i64 {
    header
        .measurement_timestamp
        .unwrap_or(header.creation_timestamp)
}

/// What a row reads from a measurement's payload beyond its list columns; the rest of the
/// payload is skipped unread.
#[derive(Debug, Default, Deserialize)]
struct RowFacts {
    #[serde(default)]
    analysis: Option<AnalysisFacts>,
    #[serde(default)]
    review: Option<ReviewFacts>,
}

/// The review's note to the patient; never its clinical note (`diagnosis`), which is the care
/// team's and which the patient's pages never show.
#[derive(Debug, Default, Deserialize)]
struct ReviewFacts {
    #[serde(default)]
    patient_note: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
struct AnalysisFacts {
    #[serde(default)]
    quality: Option<QualityFacts>,
}

#[derive(Debug, Default, Deserialize)]
struct QualityFacts {
    #[serde(default)]
    class: Option<String>,
}

/// A row of `measurements.csv`, in [`CSV_COLUMNS`]' order: the result as the portal's lists
/// show it (the same headline, with the rate's words beside a regular rhythm coloured for its
/// rate), the signal quality as the measurement's page shows it, and the physician's
/// conclusion with who gave it when, and the note to the patient.
fn csv_row(
    tr: &Translator,
    zone: Tz,
    header: &measurement::Header,
    facts: &RowFacts,
    reviewers: &HashMap<Id, String>,
) -> Vec<String> {
    let time = |millis: i64| {
        DateTime::from_timestamp_millis(millis)
            .map(|at| {
                at.with_timezone(&zone)
                    .to_rfc3339_opts(SecondsFormat::Millis, false)
            })
            .unwrap_or_default()
    };
    let heart_rate = header.heart_rate.filter(|hr| hr.is_finite());
    let mut result = Headline::stored(tr, header.result.as_deref(), header.indicator.as_deref());
    if result.key == ResultKey::Regular.as_str()
        && header.indicator.as_deref() == Some(Indicator::Warning.as_str())
        && let Some(rate) = heart_rate.and_then(rate_label)
    {
        let rate = tr.text(&format!("label-{}", rate.as_str()));
        result.label = format!("{} · {rate}", result.label);
    }
    let quality = facts
        .analysis
        .as_ref()
        .and_then(|a| a.quality.as_ref())
        .and_then(|q| q.class.clone())
        .unwrap_or_default();
    let quality_label = if quality.is_empty() {
        String::new()
    } else {
        translated_or_raw(tr, "quality", &quality)
    };
    let conclusion = header.review_label.as_deref().filter(|l| !l.is_empty());
    let (conclusion_code, conclusion_label, by, at) = match conclusion {
        Some(label) => (
            Label::from_wire(label)
                .map_or("other", Label::as_str)
                .to_owned(),
            translated_or_raw(tr, "label", label),
            header
                .reviewer_id
                .and_then(|id| reviewers.get(&id).cloned())
                .unwrap_or_default(),
            header.review_timestamp.map(time).unwrap_or_default(),
        ),
        None => Default::default(),
    };
    vec![
        header.id.to_string(),
        time(taken(header)),
        heart_rate
            .map(|hr| (hr.round() as i64).to_string())
            .unwrap_or_default(),
        result.key.to_owned(),
        result.label,
        quality,
        quality_label,
        conclusion_code,
        conclusion_label,
        by,
        at,
        facts
            .review
            .as_ref()
            .and_then(|r| r.patient_note.clone())
            .unwrap_or_default(),
    ]
}

/// Rows as CSV text, each cell [`inert`].
fn csv_lines(rows: &[Vec<String>]) -> Result<Vec<u8>, Fault> {
    let mut writer = csv::WriterBuilder::new()
        .has_headers(false)
        .from_writer(Vec::new());
    for row in rows {
        let cells: Vec<_> = row.iter().map(|cell| inert(cell)).collect();
        writer.write_record(cells.iter().map(|cell| cell.as_bytes()))?;
    }
    writer
        .into_inner()
        .map_err(|e| Fault::Failed(anyhow::anyhow!("writing measurements.csv: {e}")))
}

/// A cell a spreadsheet will not run: a physician's free-text conclusion or a name that would
/// start a formula gets a leading `'` (OWASP, CSV injection), as the audit trail's export
/// does. No id, code, time or rate starts so.
fn inert(cell: &str) -> std::borrow::Cow<'_, str> {
    if cell.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("'{cell}").into()
    } else {
        cell.into()
    }
}

/// A stored file's path in the archive: `reports/` and its stored name (the report's kind,
/// id and language), kept to letters, digits, `.`, `-` and `_`; a name that repeats (an
/// earlier version of the same report, made before the measurement changed) carries the
/// file's id before `.pdf`.
fn pdf_name(file: &file::Model, taken: &mut HashSet<String>) -> String {
    let clean: String = file
        .name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let stem = clean
        .strip_suffix(".pdf")
        .unwrap_or(&clean)
        .trim_matches('.');
    let stem = if stem.is_empty() { "report" } else { stem };
    let mut name = format!("{stem}.pdf");
    if taken.contains(&name) {
        name = format!("{stem}-{}.pdf", file.id);
    }
    taken.insert(name.clone());
    format!("reports/{name}")
}

/// `README.txt` in the patient's language: what each file is, and that Tacho screens and does
/// not diagnose.
fn readme(tr: &Translator, name: String, made: DateTime<Tz>) -> String {
    let language = tr.language();
    let made_line = tr.text_with(
        "export-readme-made",
        &[
            ("name", name),
            ("date", format::long_date(language, made)),
            ("time", format::time(made)),
            ("zone", format::zone(made)),
        ],
    );
    let files = [
        ("README.txt", "export-readme-readme"),
        ("record.json", "export-readme-record"),
        ("measurements.csv", "export-readme-csv"),
        ("reports/", "export-readme-reports"),
    ];
    let mut text = format!(
        "{}\n\n{made_line}\n\n{}\n\n",
        tr.text("export-readme-title"),
        tr.text("export-readme-contents")
    );
    for (name, key) in files {
        text.push_str(&format!("- {name}: {}\n", tr.text(key)));
    }
    text.push_str(&format!(
        "\n{}\n\n{}\n",
        tr.text("export-readme-columns"),
        tr.text("export-readme-screening")
    ));
    // Windows' Notepad and most mail programs expect CRLF in a `.txt`.
    text.replace('\n', "\r\n")
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn file(id: Id, name: &str) -> file::Model {
        file::Model {
            id,
            legacy_secret_hash: String::new(),
            token_version: 0,
            cache_key: "k".into(),
            name: name.into(),
            patient_id: None,
            mimetype: "application/pdf".into(),
            size: 1,
            sha256: String::new(),
            sha1: None,
            creation_timestamp: 0,
        }
    }

    #[test]
    fn report_names_stay_in_their_folder_and_never_repeat() {
        let mut taken = HashSet::new();
        let (a, b) = (Id::generate(), Id::generate());
        let name = "tacho-measurement-0123-en.pdf";
        assert_eq!(
            pdf_name(&file(a, name), &mut taken),
            "reports/tacho-measurement-0123-en.pdf"
        );
        assert_eq!(
            pdf_name(&file(b, name), &mut taken),
            format!("reports/tacho-measurement-0123-en-{b}.pdf")
        );
        assert_eq!(
            pdf_name(&file(a, "../../etc/passwd"), &mut taken),
            "reports/_.._etc_passwd.pdf"
        );
        assert_eq!(pdf_name(&file(a, ".pdf"), &mut taken), "reports/report.pdf");
    }

    #[test]
    fn no_cell_starts_a_formula() {
        let lines = csv_lines(&[vec![
            "=HYPERLINK(\"x\")".into(),
            "@SUM(A1)".into(),
            "Sinus".into(),
        ]])
        .unwrap();
        assert_eq!(
            String::from_utf8(lines).unwrap(),
            "\"'=HYPERLINK(\"\"x\"\")\",'@SUM(A1),Sinus\n"
        );
    }

    #[test]
    fn a_throttle_allows_a_burst_per_account_then_says_how_long_to_wait() {
        let throttle = ExportThrottle::per_hour(2);
        let (one, other) = (Id::generate(), Id::generate());
        assert!(throttle.take(&one).is_ok());
        assert!(throttle.take(&one).is_ok());
        let wait = throttle.take(&one).unwrap_err();
        assert!(wait > Duration::from_secs(29 * 60), "{wait:?}");
        assert!(
            throttle.take(&other).is_ok(),
            "accounts are throttled apart"
        );
    }

    #[test]
    fn every_language_has_the_readme() {
        let made = DateTime::from_timestamp_millis(1_764_000_000_000)
            .unwrap()
            .with_timezone(&Tz::Europe__Brussels);
        for language in Language::ALL {
            let text = readme(&Translator::new(language), "Anna Peeters".into(), made);
            assert!(text.contains("Anna"), "{language:?}: {text}");
            for name in ["record.json", "measurements.csv", "reports/"] {
                assert!(text.contains(name), "{language:?}: {text}");
            }
            assert!(!text.contains("export-readme"), "{language:?}: {text}");
        }
    }
}
