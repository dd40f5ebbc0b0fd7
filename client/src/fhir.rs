//! Typed access to Tacho's FHIR R4 interface (`/fhir/R4`, see Tacho's `docs/fhir.md`): a
//! patient's whole record (`$everything`) and DiagnosticReports, page by page, and a report's
//! PDF through its `presentedForm`. Only the elements a client acts on are typed; the rest of
//! a resource is kept as JSON.

use reqwest::Method;
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::client::segment;
use crate::{Client, Error};

/// A `Coding`: a code in a code system.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Coding {
    /// The code system (`http://loinc.org`, `http://snomed.info/sct`, …).
    pub system: String,
    /// The code in that system.
    pub code: String,
    /// Its display text.
    #[serde(default)]
    pub display: Option<String>,
}

/// A `CodeableConcept`.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
pub struct CodeableConcept {
    /// The codings of the concept.
    #[serde(default)]
    pub coding: Vec<Coding>,
    /// Its text.
    #[serde(default)]
    pub text: Option<String>,
}

impl CodeableConcept {
    /// Whether the concept has the code `code` of `system`.
    pub fn has(&self, system: &str, code: &str) -> bool {
        self.coding
            .iter()
            .any(|c| c.system == system && c.code == code)
    }
}

/// A `Quantity` (UCUM).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Quantity {
    /// The number.
    pub value: f64,
    /// Its unit as people read it.
    pub unit: String,
    /// Its UCUM code (`/min`, `ms`, `%`).
    pub code: String,
}

/// An `Attachment`: where a report's PDF is, and what to check it by.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Attachment {
    /// `application/pdf`.
    pub content_type: String,
    /// Where the document is (a `Binary` of the server).
    pub url: String,
    /// The document's language.
    #[serde(default)]
    pub language: Option<String>,
    /// Its file name.
    #[serde(default)]
    pub title: Option<String>,
    /// Bytes.
    #[serde(default)]
    pub size: Option<u64>,
    /// SHA-1 of the bytes, base64.
    #[serde(default)]
    pub hash: Option<String>,
}

/// A `Period`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Period {
    /// The start (FHIR dateTime).
    pub start: String,
    /// The end.
    pub end: String,
}

/// A `Patient`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Patient {
    /// The Tacho user id.
    pub id: String,
    /// `YYYY-MM-DD`.
    #[serde(default)]
    pub birth_date: Option<String>,
    /// `male`, `female` or `unknown`.
    #[serde(default)]
    pub gender: Option<String>,
}

/// An `Observation`: one coded result of a measurement.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Observation {
    /// `<measurement id>-<kind>`.
    pub id: String,
    /// `final`, or `registered` for a conclusion still to come.
    pub status: String,
    /// What was observed (LOINC where it has a code).
    pub code: CodeableConcept,
    /// When the measurement was taken, in the patient's zone.
    pub effective_date_time: String,
    /// A number with its unit.
    #[serde(default)]
    pub value_quantity: Option<Quantity>,
    /// A coded value (a rhythm).
    #[serde(default)]
    pub value_codeable_concept: Option<CodeableConcept>,
    /// A text value (symptoms).
    #[serde(default)]
    pub value_string: Option<String>,
    /// Why there is no value (`error`: the recording could not be read).
    #[serde(default)]
    pub data_absent_reason: Option<CodeableConcept>,
}

/// A `DiagnosticReport`: a measurement's report or a periodic report, with its PDF.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DiagnosticReport {
    /// The report's id.
    pub id: String,
    /// `final`, or `amended` after a review changed it.
    pub status: String,
    /// Electrocardiac, and which kind of report.
    #[serde(default)]
    pub category: Vec<CodeableConcept>,
    /// LOINC 11524-6.
    pub code: CodeableConcept,
    /// A measurement report's measurement time.
    #[serde(default)]
    pub effective_date_time: Option<String>,
    /// A periodic report's period.
    #[serde(default)]
    pub effective_period: Option<Period>,
    /// When the report was made.
    pub issued: String,
    /// The conclusion, with the screening note.
    #[serde(default)]
    pub conclusion: Option<String>,
    /// The conclusion's concept.
    #[serde(default)]
    pub conclusion_code: Vec<CodeableConcept>,
    /// The PDF.
    #[serde(default)]
    pub presented_form: Vec<Attachment>,
}

/// A resource of a Bundle, typed where a client acts on it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "resourceType")]
pub enum Resource {
    /// The patient.
    Patient(Patient),
    /// A coded result.
    Observation(Box<Observation>),
    /// A report.
    DiagnosticReport(Box<DiagnosticReport>),
    /// A report's PDF as a document, as JSON.
    DocumentReference(Map<String, Value>),
    /// A phone or Tacho's analysis, as JSON.
    Device(Map<String, Value>),
}

#[derive(Deserialize)]
struct BundleLink {
    relation: String,
    url: String,
}

#[derive(Deserialize)]
struct BundleEntry {
    resource: Resource,
}

#[derive(Deserialize)]
struct Bundle {
    #[serde(default)]
    total: Option<u64>,
    #[serde(default)]
    link: Vec<BundleLink>,
    #[serde(default)]
    entry: Vec<BundleEntry>,
}

/// One page of a FHIR search or of `$everything`, which can fetch the next.
#[derive(Debug, Clone)]
pub struct FhirPage {
    /// The resources of this page, in the server's order.
    pub resources: Vec<Resource>,
    /// How many resources the search found in all (`$everything` gives none).
    pub total: Option<u64>,
    next: Option<String>,
    client: Client,
}

impl FhirPage {
    async fn fetch(client: Client, path: String) -> Result<FhirPage, Error> {
        let bundle: Bundle = client.json(Method::GET, &path, None::<&()>).await?;
        let next = bundle
            .link
            .into_iter()
            .find(|l| l.relation == "next")
            .map(|l| path_of(&l.url));
        Ok(FhirPage {
            resources: bundle.entry.into_iter().map(|e| e.resource).collect(),
            total: bundle.total,
            next,
            client,
        })
    }

    /// Whether a next page exists.
    pub fn has_next(&self) -> bool {
        self.next.is_some()
    }

    /// The next page, if there is one.
    pub async fn next(&self) -> Result<Option<FhirPage>, Error> {
        match &self.next {
            Some(path) => Ok(Some(
                FhirPage::fetch(self.client.clone(), path.clone()).await?,
            )),
            None => Ok(None),
        }
    }

    /// The DiagnosticReports of this page.
    pub fn diagnostic_reports(&self) -> impl Iterator<Item = &DiagnosticReport> {
        self.resources.iter().filter_map(|r| match r {
            Resource::DiagnosticReport(report) => Some(report.as_ref()),
            _ => None,
        })
    }

    /// The Observations of this page.
    pub fn observations(&self) -> impl Iterator<Item = &Observation> {
        self.resources.iter().filter_map(|r| match r {
            Resource::Observation(observation) => Some(observation.as_ref()),
            _ => None,
        })
    }
}

/// The path and query of an absolute URL of the server.
fn path_of(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    match rest.find('/') {
        Some(at) => rest[at..].to_owned(),
        None => "/".to_owned(),
    }
}

impl Client {
    /// The first page of a patient's whole record (`Patient/<id>/$everything`): `count`
    /// measurements per page, each with its Observations, phone and reports; the periodic
    /// reports after them.
    ///
    /// ```no_run
    /// # async fn run(client: tacho_client::Client, patient: &str) -> Result<(), tacho_client::Error> {
    /// let mut page = client.fhir_everything(patient, 20).await?;
    /// loop {
    ///     for o in page.observations() {
    ///         println!("{} {:?}", o.id, o.value_quantity);
    ///     }
    ///     match page.next().await? {
    ///         Some(next) => page = next,
    ///         None => break,
    ///     }
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn fhir_everything(&self, patient_id: &str, count: u32) -> Result<FhirPage, Error> {
        let path = format!(
            "/fhir/R4/Patient/{}/$everything?_count={count}",
            segment(patient_id)
        );
        FhirPage::fetch(self.clone(), path).await
    }

    /// The first page of a patient's DiagnosticReports, newest first.
    pub async fn fhir_diagnostic_reports(
        &self,
        patient_id: &str,
        count: u32,
    ) -> Result<FhirPage, Error> {
        let path = format!(
            "/fhir/R4/DiagnosticReport?patient={}&_count={count}",
            segment(patient_id)
        );
        FhirPage::fetch(self.clone(), path).await
    }

    /// The document an attachment points at (a report's PDF, from its `presentedForm`).
    pub async fn fhir_attachment(&self, attachment: &Attachment) -> Result<Vec<u8>, Error> {
        let path = path_of(&attachment.url);
        if !path.starts_with("/fhir/R4/Binary/") {
            return Err(Error::UnexpectedResponse {
                status: 0,
                detail: format!("not a Binary of this server: {}", attachment.url),
            });
        }
        let response = self.send_get(&path).await?;
        Ok(response.bytes().await?.to_vec())
    }
}
