//! The FHIR R4 (4.0.1) resources Tacho serves, as typed structs: only the elements it fills,
//! named and shaped as the specification names them (<https://hl7.org/fhir/R4/>), so that
//! serde writes valid FHIR JSON. Empty lists and missing values are left out, as FHIR
//! requires (an element is either absent or has a value).

use serde::Serialize;

/// `Coding`: a code in a code system.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Coding {
    pub system: String,
    pub code: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub display: Option<String>,
}

impl Coding {
    pub fn new(system: &str, code: &str, display: &str) -> Self {
        Coding {
            system: system.to_owned(),
            code: code.to_owned(),
            display: Some(display.to_owned()),
        }
    }
}

/// `CodeableConcept`: codings of one concept, and its text.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct CodeableConcept {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub coding: Vec<Coding>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

impl CodeableConcept {
    /// One coding, its display as the text.
    pub fn of(coding: Coding) -> Self {
        CodeableConcept {
            text: coding.display.clone(),
            coding: vec![coding],
        }
    }

    /// Text alone, where no code system has the concept (free text of a physician).
    pub fn text(text: &str) -> Self {
        CodeableConcept {
            coding: Vec::new(),
            text: Some(text.to_owned()),
        }
    }
}

/// `Reference`: a relative reference (`Patient/<id>`) to a resource of this server, or a
/// logical one (a type and an identifier) to one it does not serve.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Reference {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub identifier: Option<Identifier>,
}

impl Reference {
    pub fn to(kind: &str, id: &str) -> Self {
        Reference {
            reference: Some(format!("{kind}/{id}")),
            kind: None,
            identifier: None,
        }
    }

    /// A Tacho user this server serves no resource for (the reviewing physician), by id.
    pub fn practitioner(user_id: &str) -> Self {
        Reference {
            reference: None,
            kind: Some("Practitioner".to_owned()),
            identifier: Some(Identifier {
                system: super::codes::PATIENT_ID_SYSTEM.to_owned(),
                value: user_id.to_owned(),
            }),
        }
    }
}

/// `Identifier`: a business identifier under a system URI.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Identifier {
    pub system: String,
    pub value: String,
}

/// `Quantity` with a UCUM unit.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Quantity {
    pub value: f64,
    pub unit: String,
    pub system: String,
    pub code: String,
}

/// `Period`: a start and an end (FHIR dateTimes).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Period {
    pub start: String,
    pub end: String,
}

/// `HumanName`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HumanName {
    #[serde(rename = "use")]
    pub use_: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub family: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub given: Vec<String>,
    pub text: String,
}

/// `Attachment`: a document served elsewhere (`url`), with what a reader checks it by.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Attachment {
    pub content_type: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    pub url: String,
    /// Bytes of the document.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// SHA-1 of the document's bytes, in base64 (FHIR's `Attachment.hash`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hash: Option<String>,
    pub title: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub creation: Option<String>,
}

/// `Annotation`: a note.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Annotation {
    pub text: String,
}

/// `Meta`: when the resource last changed.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Meta {
    pub last_updated: String,
}

/// `Patient`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Patient {
    pub id: String,
    pub meta: Meta,
    pub identifier: Vec<Identifier>,
    pub active: bool,
    pub name: Vec<HumanName>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gender: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub birth_date: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub communication: Vec<PatientCommunication>,
}

/// `Patient.communication`: a language the patient reads.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PatientCommunication {
    pub language: CodeableConcept,
    pub preferred: bool,
}

/// `Device`: a phone and its app, or Tacho's analysis as software.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Device {
    pub id: String,
    pub status: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub manufacturer: Option<String>,
    pub device_name: Vec<DeviceName>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_number: Option<String>,
    #[serde(rename = "type")]
    pub kind: CodeableConcept,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub version: Vec<DeviceVersion>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub patient: Option<Reference>,
}

/// `Device.deviceName`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DeviceName {
    pub name: String,
    /// `user-friendly-name`, `model-name`, …
    #[serde(rename = "type")]
    pub kind: String,
}

/// `Device.version`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DeviceVersion {
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<CodeableConcept>,
    pub value: String,
}

/// `Observation`: one finding of one measurement.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Observation {
    pub id: String,
    pub meta: Meta,
    pub status: String,
    pub category: Vec<CodeableConcept>,
    pub code: CodeableConcept,
    pub subject: Reference,
    pub effective_date_time: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub issued: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub performer: Vec<Reference>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value_quantity: Option<Quantity>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value_codeable_concept: Option<CodeableConcept>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value_string: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data_absent_reason: Option<CodeableConcept>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub interpretation: Vec<CodeableConcept>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub note: Vec<Annotation>,
    pub device: Reference,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub derived_from: Vec<Reference>,
}

/// `DiagnosticReport`: a measurement's report or a periodic report.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DiagnosticReport {
    pub id: String,
    pub meta: Meta,
    pub status: String,
    pub category: Vec<CodeableConcept>,
    pub code: CodeableConcept,
    pub subject: Reference,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub effective_date_time: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub effective_period: Option<Period>,
    pub issued: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub performer: Vec<Reference>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub results_interpreter: Vec<Reference>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub result: Vec<Reference>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conclusion: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub conclusion_code: Vec<CodeableConcept>,
    pub presented_form: Vec<Attachment>,
}

/// `DocumentReference`: a stored PDF.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DocumentReference {
    pub id: String,
    pub meta: Meta,
    pub status: String,
    #[serde(rename = "type")]
    pub kind: CodeableConcept,
    pub category: Vec<CodeableConcept>,
    pub subject: Reference,
    pub date: String,
    pub content: Vec<DocumentContent>,
    pub context: DocumentContext,
}

/// `DocumentReference.content`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DocumentContent {
    pub attachment: Attachment,
}

/// `DocumentReference.context`: what the document is about.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DocumentContext {
    pub related: Vec<Reference>,
}

/// `Binary`: a document's bytes, in base64.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Binary {
    pub id: String,
    pub content_type: String,
    pub data: String,
}

/// `OperationOutcome`: what went wrong.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OperationOutcome {
    pub issue: Vec<Issue>,
}

/// `OperationOutcome.issue`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Issue {
    /// `fatal`, `error`, `warning`, `information`.
    pub severity: String,
    /// A code of <http://hl7.org/fhir/issue-type>: `not-found`, `invalid`, `not-supported`, …
    pub code: String,
    pub diagnostics: String,
}

/// `Bundle` of type `searchset`: a page of a search, or of `$everything`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Bundle {
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    pub link: Vec<BundleLink>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub entry: Vec<BundleEntry>,
}

/// `Bundle.link`: `self`, `next`, `previous`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BundleLink {
    pub relation: String,
    pub url: String,
}

/// `Bundle.entry`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BundleEntry {
    pub full_url: String,
    pub resource: Resource,
    pub search: EntrySearch,
}

/// `Bundle.entry.search`: `match` for what was asked, `include` for what it refers to.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EntrySearch {
    pub mode: String,
}

/// `CapabilityStatement`: what this server serves, exactly.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CapabilityStatement {
    pub status: String,
    pub date: String,
    pub kind: String,
    pub software: Software,
    pub implementation: Implementation,
    pub fhir_version: String,
    pub format: Vec<String>,
    pub rest: Vec<Rest>,
}

/// `CapabilityStatement.software`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Software {
    pub name: String,
    pub version: String,
}

/// `CapabilityStatement.implementation`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Implementation {
    pub description: String,
    pub url: String,
}

/// `CapabilityStatement.rest`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Rest {
    pub mode: String,
    pub documentation: String,
    pub resource: Vec<RestResource>,
}

/// `CapabilityStatement.rest.resource`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RestResource {
    #[serde(rename = "type")]
    pub kind: String,
    pub interaction: Vec<Interaction>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub search_param: Vec<SearchParam>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub operation: Vec<Operation>,
}

/// `CapabilityStatement.rest.resource.interaction`: `read`, `search-type`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Interaction {
    pub code: String,
}

/// `CapabilityStatement.rest.resource.searchParam`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SearchParam {
    pub name: String,
    #[serde(rename = "type")]
    pub kind: String,
}

/// `CapabilityStatement.rest.resource.operation`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Operation {
    pub name: String,
    pub definition: String,
}

/// Any resource Tacho serves, tagged with its `resourceType`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "resourceType")]
pub enum Resource {
    Patient(Box<Patient>),
    Device(Box<Device>),
    Observation(Box<Observation>),
    DiagnosticReport(Box<DiagnosticReport>),
    DocumentReference(Box<DocumentReference>),
    Binary(Box<Binary>),
    Bundle(Box<Bundle>),
    OperationOutcome(Box<OperationOutcome>),
    CapabilityStatement(Box<CapabilityStatement>),
}

impl Resource {
    /// The resource's type and id, for its `fullUrl`.
    pub fn kind_and_id(&self) -> (&'static str, &str) {
        match self {
            Resource::Patient(r) => ("Patient", &r.id),
            Resource::Device(r) => ("Device", &r.id),
            Resource::Observation(r) => ("Observation", &r.id),
            Resource::DiagnosticReport(r) => ("DiagnosticReport", &r.id),
            Resource::DocumentReference(r) => ("DocumentReference", &r.id),
            Resource::Binary(r) => ("Binary", &r.id),
            Resource::Bundle(_) => ("Bundle", ""),
            Resource::OperationOutcome(_) => ("OperationOutcome", ""),
            Resource::CapabilityStatement(_) => ("CapabilityStatement", ""),
        }
    }
}
