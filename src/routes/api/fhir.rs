//! `/fhir/R4`: HL7 FHIR R4, read-only, as `application/fhir+json`, on the same bearer tokens
//! and access rules as the rest of the API (`actions::fhir` reads and audits). Errors are
//! OperationOutcomes; a search parameter this server does not serve is refused, not ignored.

use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use actix_web::web::{Data, Path};
use actix_web::{HttpRequest, HttpResponse, ResponseError, get};
use base64::Engine;

use super::error::ApiError;
use super::extract::Caller;
use crate::actions::ActionError;
use crate::actions::fhir::{FhirPage, ObservationSearch, ReportKinds, ReportSearch};
use crate::domain::id::Id;
use crate::fhir::codes::{self, ObservationKind};
use crate::fhir::model::{Binary, Resource};
use crate::fhir::{self as fhir, DateRange, SearchError};
use crate::routes::AppState;

/// An error as FHIR answers it: an OperationOutcome with the HTTP status.
#[derive(Debug)]
pub struct FhirError {
    status: StatusCode,
    code: &'static str,
    diagnostics: String,
}

impl FhirError {
    fn not_found() -> Self {
        FhirError {
            status: StatusCode::NOT_FOUND,
            code: "not-found",
            diagnostics: "no such resource, or not visible to the caller".to_owned(),
        }
    }
}

impl std::fmt::Display for FhirError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.status, self.diagnostics)
    }
}

impl From<SearchError> for FhirError {
    fn from(err: SearchError) -> Self {
        let code = match err {
            SearchError::Unknown(_) => "not-supported",
            SearchError::Invalid(..) | SearchError::Missing(_) => "invalid",
        };
        FhirError {
            status: StatusCode::BAD_REQUEST,
            code,
            diagnostics: err.to_string(),
        }
    }
}

impl From<ApiError> for FhirError {
    fn from(err: ApiError) -> Self {
        let status = err.status_code();
        if status.is_server_error() {
            // Logged with its cause by the API's own error; the body says nothing internal.
            let _ = err.error_response();
        }
        let code = match status.as_u16() {
            401 => "login",
            403 => "forbidden",
            404 => "not-found",
            429 => "throttled",
            400..=499 => "invalid",
            _ => "exception",
        };
        let diagnostics = if status.is_server_error() {
            "the server could not answer; try again later".to_owned()
        } else {
            err.to_string()
        };
        FhirError {
            status,
            code,
            diagnostics,
        }
    }
}

impl From<ActionError> for FhirError {
    fn from(err: ActionError) -> Self {
        ApiError::from(err).into()
    }
}

impl ResponseError for FhirError {
    fn status_code(&self) -> StatusCode {
        self.status
    }

    fn error_response(&self) -> HttpResponse {
        let outcome =
            Resource::OperationOutcome(Box::new(fhir::outcome(self.code, &self.diagnostics)));
        fhir_json(HttpResponse::build(self.status), &outcome)
    }
}

type FhirResult = Result<HttpResponse, FhirError>;

fn fhir_json(mut response: actix_web::HttpResponseBuilder, resource: &Resource) -> HttpResponse {
    match serde_json::to_vec(resource) {
        Ok(body) => response
            .insert_header((
                header::CONTENT_TYPE,
                HeaderValue::from_static(fhir::MEDIA_TYPE),
            ))
            .insert_header((header::CACHE_CONTROL, "no-store"))
            .body(body),
        Err(err) => ApiError::Internal(anyhow::anyhow!("a FHIR resource: {err}")).error_response(),
    }
}

fn ok(resource: Resource) -> FhirResult {
    Ok(fhir_json(HttpResponse::Ok(), &resource))
}

/// The base of every absolute URL: `…/fhir/R4`.
fn base(state: &AppState) -> String {
    format!("{}/fhir/R4", state.settings.base_url.trim_end_matches('/'))
}

/// The caller, or an OperationOutcome when the token is missing or bad.
fn caller(caller: Result<Caller, ApiError>) -> Result<Caller, FhirError> {
    caller.map_err(FhirError::from)
}

fn parse_id(id: &str) -> Result<Id, FhirError> {
    Id::parse(id).map_err(|_| FhirError::not_found())
}

/// The query's parameters, each checked against `allowed` (and `_format`, which may only
/// ask for JSON).
fn params(req: &HttpRequest, allowed: &[&str]) -> Result<Vec<(String, String)>, FhirError> {
    let pairs: Vec<(String, String)> = serde_urlencoded::from_str(req.query_string())
        .map_err(|e| SearchError::Invalid("query".to_owned(), e.to_string()))?;
    for (name, value) in &pairs {
        if name == "_format" {
            if !matches!(
                value.as_str(),
                "json" | "application/json" | "application/fhir+json"
            ) {
                return Err(SearchError::Invalid(
                    "_format".to_owned(),
                    "this server answers JSON only".to_owned(),
                )
                .into());
            }
            continue;
        }
        if !allowed.contains(&name.as_str()) {
            return Err(SearchError::Unknown(name.chars().take(64).collect()).into());
        }
    }
    Ok(pairs.into_iter().filter(|(n, _)| n != "_format").collect())
}

/// Paging and ordering parameters common to searches.
struct Paging {
    count: u64,
    offset: u64,
    newest_first: bool,
}

fn paging(pairs: &[(String, String)]) -> Result<Paging, FhirError> {
    let mut paging = Paging {
        count: fhir::DEFAULT_COUNT,
        offset: 0,
        newest_first: true,
    };
    for (name, value) in pairs {
        match name.as_str() {
            "_count" => paging.count = fhir::count(value)?,
            "_offset" => paging.offset = fhir::offset(value)?,
            "_sort" => paging.newest_first = fhir::newest_first(value)?,
            _ => {}
        }
    }
    Ok(paging)
}

/// The one `patient` of a search (required: every search is of one patient's record).
fn the_patient(pairs: &[(String, String)]) -> Result<Id, FhirError> {
    let mut found = pairs.iter().filter(|(n, _)| n == "patient");
    let (_, value) = found.next().ok_or(SearchError::Missing("patient"))?;
    if found.next().is_some() {
        return Err(SearchError::Invalid("patient".into(), "give one patient".into()).into());
    }
    Id::parse(fhir::patient_id(value))
        .map_err(|_| SearchError::Invalid("patient".into(), "not a patient id".into()).into())
}

fn date_range(pairs: &[(String, String)]) -> Result<DateRange, FhirError> {
    let mut range = DateRange::default();
    for (_, value) in pairs.iter().filter(|(n, _)| n == "date") {
        range.narrow(value)?;
    }
    Ok(range)
}

/// A searchset of `page`, its links keeping the query's parameters.
fn bundle(
    req: &HttpRequest,
    state: &AppState,
    pairs: &[(String, String)],
    page: FhirPage,
    offset: u64,
    count: u64,
) -> FhirResult {
    let base = base(state);
    let path = format!(
        "{}{}",
        state.settings.base_url.trim_end_matches('/'),
        req.path()
    );
    let kept: Vec<(String, String)> = pairs
        .iter()
        .filter(|(n, _)| n != "_offset" && n != "_count")
        .cloned()
        .collect();
    let url = |offset: u64| {
        let mut query = kept.clone();
        query.push(("_count".to_owned(), count.to_string()));
        query.push(("_offset".to_owned(), offset.to_string()));
        let query = serde_urlencoded::to_string(&query).unwrap_or_default();
        format!("{path}?{query}")
    };
    let entries = page
        .entries
        .into_iter()
        .map(|(resource, mode)| fhir::entry(&base, resource, mode))
        .collect();
    let set = fhir::searchset(entries, page.total, offset, count, page.more, url);
    ok(Resource::Bundle(Box::new(set)))
}

/// What this server serves: a CapabilityStatement (no token needed).
#[utoipa::path(tag = "fhir", responses((status = 200, description = "CapabilityStatement", content_type = "application/fhir+json")))]
#[get("/fhir/R4/metadata")]
pub async fn metadata(state: Data<AppState>) -> FhirResult {
    let date = crate::domain::time::rfc3339_millis(state.store.clock().now_millis());
    let statement = fhir::capability_statement(&base(&state), env!("CARGO_PKG_VERSION"), &date);
    ok(Resource::CapabilityStatement(Box::new(statement)))
}

/// A Patient.
#[utoipa::path(tag = "fhir", security(("bearer" = [])),
    params(("id" = String, Path, description = "Tacho user id")),
    responses((status = 200, description = "Patient", content_type = "application/fhir+json"),
        (status = 404, description = "OperationOutcome")))]
#[get("/fhir/R4/Patient/{id}")]
pub async fn read_patient(
    state: Data<AppState>,
    who: Result<Caller, ApiError>,
    id: Path<String>,
) -> FhirResult {
    let viewer = caller(who)?.viewer();
    let id = parse_id(&id)?;
    let patient = state.actions.fhir_patient(&viewer, &id).await?;
    ok(Resource::Patient(Box::new(patient)))
}

/// Patients by identifier (`urn:tacho:user-id|<id>`).
#[utoipa::path(tag = "fhir", security(("bearer" = [])),
    params(("identifier" = String, Query, description = "`urn:tacho:user-id|<id>` or `<id>`")),
    responses((status = 200, description = "Bundle searchset", content_type = "application/fhir+json"),
        (status = 400, description = "OperationOutcome")))]
#[get("/fhir/R4/Patient")]
pub async fn search_patients(
    req: HttpRequest,
    state: Data<AppState>,
    who: Result<Caller, ApiError>,
) -> FhirResult {
    let viewer = caller(who)?.viewer();
    let pairs = params(&req, &["identifier", "_count", "_offset"])?;
    let paging = paging(&pairs)?;
    let identifier = pairs
        .iter()
        .find(|(n, _)| n == "identifier")
        .map(|(_, v)| v.as_str())
        .ok_or(SearchError::Missing("identifier"))?;
    let value = match identifier.split_once('|') {
        Some((system, value)) if system == codes::PATIENT_ID_SYSTEM || system.is_empty() => value,
        Some(_) => "",
        None => identifier,
    };
    let mut found = None;
    if let Ok(id) = Id::parse(value) {
        match state.actions.fhir_patient(&viewer, &id).await {
            Ok(patient) => found = Some(patient),
            Err(ActionError::Store(crate::store::StoreError::NotFound)) => {}
            Err(other) => return Err(other.into()),
        }
    }
    let total = u64::from(found.is_some());
    let entries = found
        .filter(|_| paging.offset == 0 && paging.count > 0)
        .map(|patient| (Resource::Patient(Box::new(patient)), "match"))
        .into_iter()
        .collect();
    let page = FhirPage {
        entries,
        total: Some(total),
        more: false,
    };
    bundle(&req, &state, &pairs, page, paging.offset, paging.count)
}

/// A patient's whole record, paged: `_count` measurements (each with its Observations,
/// phone and reports) or periodic reports per page.
#[utoipa::path(tag = "fhir", security(("bearer" = [])),
    params(("id" = String, Path, description = "Tacho user id"),
        ("_count" = Option<u64>, Query, description = "measurements or periodic reports per page (default 20, at most 100)"),
        ("_offset" = Option<u64>, Query, description = "where the page starts; the `next` link carries it")),
    responses((status = 200, description = "Bundle searchset", content_type = "application/fhir+json"),
        (status = 404, description = "OperationOutcome")))]
#[get("/fhir/R4/Patient/{id}/$everything")]
pub async fn everything(
    req: HttpRequest,
    state: Data<AppState>,
    who: Result<Caller, ApiError>,
    id: Path<String>,
) -> FhirResult {
    let viewer = caller(who)?.viewer();
    let id = parse_id(&id)?;
    let pairs = params(&req, &["_count", "_offset"])?;
    let paging = paging(&pairs)?;
    let page = state
        .actions
        .fhir_everything(&viewer, &id, paging.offset, paging.count, &base(&state))
        .await?;
    bundle(&req, &state, &pairs, page, paging.offset, paging.count)
}

/// One patient's Observations: `patient` (required), `code`, `date`, `_sort`, `_count`.
#[utoipa::path(tag = "fhir", security(("bearer" = [])),
    params(("patient" = String, Query, description = "`Patient/<id>` or `<id>`"),
        ("code" = Option<String>, Query, description = "`system|code`, comma-separated for any of several"),
        ("date" = Option<String>, Query, description = "prefixed date (eq, ge, gt, le, lt), repeatable"),
        ("_sort" = Option<String>, Query, description = "`-date` (default) or `date`")),
    responses((status = 200, description = "Bundle searchset", content_type = "application/fhir+json"),
        (status = 400, description = "OperationOutcome")))]
#[get("/fhir/R4/Observation")]
pub async fn search_observations(
    req: HttpRequest,
    state: Data<AppState>,
    who: Result<Caller, ApiError>,
) -> FhirResult {
    let viewer = caller(who)?.viewer();
    let pairs = params(
        &req,
        &["patient", "code", "date", "_count", "_offset", "_sort"],
    )?;
    let patient = the_patient(&pairs)?;
    let paging = paging(&pairs)?;
    let mut kinds: Vec<ObservationKind> = ObservationKind::ALL.to_vec();
    for (_, value) in pairs.iter().filter(|(n, _)| n == "code") {
        // Repeated `code` parameters must all hold; commas within one are alternatives.
        kinds.retain(|kind| value.split(',').any(|token| kind.matches(token)));
    }
    let search = ObservationSearch {
        kinds,
        range: date_range(&pairs)?,
        newest_first: paging.newest_first,
        offset: paging.offset,
        count: paging.count,
    };
    let page = if search.kinds.is_empty() {
        FhirPage {
            entries: Vec::new(),
            total: Some(0),
            more: false,
        }
    } else {
        state
            .actions
            .fhir_observations(&viewer, &patient, &search)
            .await?
    };
    bundle(&req, &state, &pairs, page, paging.offset, paging.count)
}

/// One Observation (`<measurement id>-<kind>`).
#[utoipa::path(tag = "fhir", security(("bearer" = [])),
    params(("id" = String, Path, description = "`<measurement id>-<kind>`")),
    responses((status = 200, description = "Observation", content_type = "application/fhir+json"),
        (status = 404, description = "OperationOutcome")))]
#[get("/fhir/R4/Observation/{id}")]
pub async fn read_observation(
    state: Data<AppState>,
    who: Result<Caller, ApiError>,
    id: Path<String>,
) -> FhirResult {
    let viewer = caller(who)?.viewer();
    let observation = state.actions.fhir_observation(&viewer, &id).await?;
    ok(Resource::Observation(Box::new(observation)))
}

fn report_search(
    pairs: &[(String, String)],
    allow_category: bool,
    documents: bool,
) -> Result<ReportSearch, FhirError> {
    let paging = paging(pairs)?;
    let mut kinds = ReportKinds {
        measurement: true,
        periodic: true,
    };
    if allow_category {
        for (_, value) in pairs.iter().filter(|(n, _)| n == "category") {
            let any = |periodic: bool| {
                value
                    .split(',')
                    .any(|token| codes::report_category_matches(periodic, token))
            };
            kinds.measurement &= any(false);
            kinds.periodic &= any(true);
        }
    }
    Ok(ReportSearch {
        kinds,
        range: date_range(pairs)?,
        newest_first: paging.newest_first,
        offset: paging.offset,
        count: paging.count,
        documents,
    })
}

/// One patient's DiagnosticReports (measurement reports and periodic reports): `patient`
/// (required), `date`, `category`, `_sort`, `_count`.
#[utoipa::path(tag = "fhir", security(("bearer" = [])),
    params(("patient" = String, Query, description = "`Patient/<id>` or `<id>`"),
        ("date" = Option<String>, Query, description = "prefixed date (eq, ge, gt, le, lt), repeatable"),
        ("category" = Option<String>, Query, description = "`EC`, `urn:tacho:codes|measurement-report` or `…|periodic-report`")),
    responses((status = 200, description = "Bundle searchset", content_type = "application/fhir+json"),
        (status = 400, description = "OperationOutcome")))]
#[get("/fhir/R4/DiagnosticReport")]
pub async fn search_reports(
    req: HttpRequest,
    state: Data<AppState>,
    who: Result<Caller, ApiError>,
) -> FhirResult {
    let viewer = caller(who)?.viewer();
    let pairs = params(
        &req,
        &["patient", "date", "category", "_count", "_offset", "_sort"],
    )?;
    let patient = the_patient(&pairs)?;
    let search = report_search(&pairs, true, false)?;
    let page = state
        .actions
        .fhir_reports(&viewer, &patient, &search, &base(&state))
        .await?;
    bundle(&req, &state, &pairs, page, search.offset, search.count)
}

/// One DiagnosticReport.
#[utoipa::path(tag = "fhir", security(("bearer" = [])),
    params(("id" = String, Path, description = "report id")),
    responses((status = 200, description = "DiagnosticReport", content_type = "application/fhir+json"),
        (status = 404, description = "OperationOutcome")))]
#[get("/fhir/R4/DiagnosticReport/{id}")]
pub async fn read_report(
    state: Data<AppState>,
    who: Result<Caller, ApiError>,
    id: Path<String>,
) -> FhirResult {
    let viewer = caller(who)?.viewer();
    let id = parse_id(&id)?;
    let report = state
        .actions
        .fhir_report(&viewer, &id, &base(&state))
        .await?;
    ok(Resource::DiagnosticReport(Box::new(report)))
}

/// One patient's report PDFs as DocumentReferences: `patient` (required), `_count`.
#[utoipa::path(tag = "fhir", security(("bearer" = [])),
    params(("patient" = String, Query, description = "`Patient/<id>` or `<id>`")),
    responses((status = 200, description = "Bundle searchset", content_type = "application/fhir+json"),
        (status = 400, description = "OperationOutcome")))]
#[get("/fhir/R4/DocumentReference")]
pub async fn search_documents(
    req: HttpRequest,
    state: Data<AppState>,
    who: Result<Caller, ApiError>,
) -> FhirResult {
    let viewer = caller(who)?.viewer();
    let pairs = params(&req, &["patient", "_count", "_offset", "_sort"])?;
    let patient = the_patient(&pairs)?;
    let search = report_search(&pairs, false, true)?;
    let page = state
        .actions
        .fhir_reports(&viewer, &patient, &search, &base(&state))
        .await?;
    bundle(&req, &state, &pairs, page, search.offset, search.count)
}

/// One DocumentReference.
#[utoipa::path(tag = "fhir", security(("bearer" = [])),
    params(("id" = String, Path, description = "report id")),
    responses((status = 200, description = "DocumentReference", content_type = "application/fhir+json"),
        (status = 404, description = "OperationOutcome")))]
#[get("/fhir/R4/DocumentReference/{id}")]
pub async fn read_document(
    state: Data<AppState>,
    who: Result<Caller, ApiError>,
    id: Path<String>,
) -> FhirResult {
    let viewer = caller(who)?.viewer();
    let id = parse_id(&id)?;
    let document = state
        .actions
        .fhir_document(&viewer, &id, &base(&state))
        .await?;
    ok(Resource::DocumentReference(Box::new(document)))
}

/// One Device: Tacho's analysis (`tacho-analysis-<version>`) or a measurement's phone
/// (`<measurement id>-phone`).
#[utoipa::path(tag = "fhir", security(("bearer" = [])),
    params(("id" = String, Path, description = "device id")),
    responses((status = 200, description = "Device", content_type = "application/fhir+json"),
        (status = 404, description = "OperationOutcome")))]
#[get("/fhir/R4/Device/{id}")]
pub async fn read_device(
    state: Data<AppState>,
    who: Result<Caller, ApiError>,
    id: Path<String>,
) -> FhirResult {
    let viewer = caller(who)?.viewer();
    let device = state.actions.fhir_device(&viewer, &id).await?;
    ok(Resource::Device(Box::new(device)))
}

/// A report's PDF: the PDF itself, or with `Accept: application/fhir+json` a Binary
/// resource holding it in base64.
#[utoipa::path(tag = "fhir", security(("bearer" = [])),
    params(("id" = String, Path, description = "report id")),
    responses((status = 200, description = "application/pdf, or Binary", content_type = "application/pdf"),
        (status = 404, description = "OperationOutcome")))]
#[get("/fhir/R4/Binary/{id}")]
pub async fn read_binary(
    req: HttpRequest,
    state: Data<AppState>,
    who: Result<Caller, ApiError>,
    id: Path<String>,
) -> FhirResult {
    let viewer = caller(who)?.viewer();
    let id = parse_id(&id)?;
    let file = state.actions.fhir_binary(&viewer, &id).await?;
    let wants_resource = req
        .headers()
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|accept| accept.contains("fhir+json") || accept.contains("application/json"));
    if !wants_resource {
        return Ok(super::files::serve(&state, &req, &file, "private, no-store").await?);
    }
    let contents = state
        .storage
        .get(&file.cache_key)
        .await
        .map_err(ApiError::from)?
        .ok_or_else(|| {
            ApiError::Internal(anyhow::anyhow!("stored file {} has no contents", file.id))
        })?;
    ok(Resource::Binary(Box::new(Binary {
        id: id.to_string(),
        content_type: file.mimetype.clone(),
        data: base64::engine::general_purpose::STANDARD.encode(contents),
    })))
}
