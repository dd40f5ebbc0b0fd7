//! `/data/v1/measurements/documents`: measurements in the camelCase dialect. The handlers' paths
//! are relative to the route table's `/data/v1/measurements` scope, which carries the larger
//! body limit of uploads.

use actix_web::http::header::ContentType;
use actix_web::web::{self, Data, Path};
use actix_web::{HttpResponse, get, post, put};
use serde_json::{Value, json};

use super::error::{ApiError, ErrorBody};
use super::extract::{ApiJson, Caller, Rql};
use super::measurement_list::{self, Document};
use super::page::Page;
use crate::domain::id::Id;
use crate::domain::measurement::{DataError, MeasurementUpdate, NewMeasurement};
use crate::routes::AppState;
use crate::store::MeasurementRecord;
use crate::store::resources::MEASUREMENTS;

impl From<DataError> for ApiError {
    fn from(err: DataError) -> Self {
        match err {
            DataError::Missing(_) => ApiError::MissingField(err.to_string()),
            DataError::Invalid { .. } => ApiError::FieldFormat(err.to_string()),
            DataError::StaffOnly(_) => ApiError::NoPermission(err.to_string()),
        }
    }
}

/// A measurement document as the wire shows it. The payload goes out as the text that was
/// stored (checked, not parsed into a tree and written again): the same bytes, without a
/// second parse and print of a recording's tens of thousands of numbers.
fn measurement_body(record: &MeasurementRecord) -> HttpResponse {
    HttpResponse::Ok().json(Document::stored(record))
}

/// Stores a measurement and analyses it; the body is the bare `data` object of the camera SDK.
#[utoipa::path(tag = "measurements", security(("bearer" = [])),
    request_body(content = Object, description = "the measurement's data: measurement_timestamp (epoch ms up to the end of 9999, required), heartrate (the phone's, kept as sent), rr_intervals (ms, at most 18000: 1 hour at 300 bpm), time (ms) and quadrants (at most 4×4 cells of {y,u,v} per frame), acc and gyro ({x,y,z}), technical_details, context, device, app, location, tags. `time`, each channel of a cell and each motion axis hold at most 30000 values (2 minutes at 250 Hz). `indicator`, `mostSevereLabel`, `af`, `analysis` and `review` are written by the server: sending any of them is a 400 (code 15). The body may be up to TACHO_MAX_MEASUREMENT_BYTES (default 10 MiB)."),
    responses((status = 200, description = "the stored document: the payload as sent, followed by the server's result in `data`: `indicator` (normal|warning|urgent|quality), `mostSevereLabel` {key: regular|possibly_irregular|possible_atrial_fibrillation|quality_too_low|no_result, color: green|orange|red|grey}, `af` (1|0) and `analysis` (see docs/api.md, \"Rhythm analysis\"); `status` is `analyzed`, or `analysis_failed` with the reasons in `data.analysis.abnormalities` when the signal cannot be analysed", body = Object),
        (status = 400, description = "code 14: `measurement_timestamp` missing; code 15: a field of the wrong type (e.g. `rr_intervals` not numbers of ms), a signal array longer than its bound (the message names field and limit, e.g. \"`quadrants[1][2].y` may hold at most 30000 values (2 minutes at 250 Hz)\"), or a field written by the server (`indicator`, `mostSevereLabel`, `af`, `analysis`, `review`); code 22: not JSON", body = ErrorBody),
        (status = 413, description = "code 413: the body is larger than TACHO_MAX_MEASUREMENT_BYTES", body = ErrorBody)))]
#[post("/documents")]
pub async fn create(
    state: Data<AppState>,
    caller: Caller,
    ApiJson(body): ApiJson<Value>,
) -> Result<HttpResponse, ApiError> {
    // The analysis takes about a millisecond for a minute of camera traces, but its cost grows
    // with the signal, and an upload may carry up to TACHO_MAX_MEASUREMENT_BYTES of it (tens
    // of milliseconds at the limit). On the blocking pool it never holds up the other
    // requests of this worker; the hop costs a few microseconds.
    let new = web::block(move || NewMeasurement::parse(body))
        .await
        .map_err(|err| ApiError::Internal(anyhow::anyhow!("measurement analysis: {err}")))??;
    let record = state
        .actions
        .upload_measurement(&caller.viewer(), new)
        .await?;
    Ok(measurement_body(&record))
}

/// Measurements visible to the caller. The body is written document by document as the
/// payloads are read (see [`measurement_list`]), so its size is not known up front.
#[utoipa::path(tag = "measurements", security(("bearer" = [])),
    params(("rql" = Option<String>, Query, description = "RQL over id, creatorId, userIds, groupIds, status, creationTimestamp, updateTimestamp, statusChangedTimestamp, data.measurement_timestamp, data.heartrate (the phone's), data.indicator and data.mostSevereLabel.key (the server's result), data.tags")),
    responses((status = 200, description = "the page, written document by document (chunked, no Content-Length)", body = Page), (status = 400, body = ErrorBody)))]
#[get("/documents")]
pub async fn list(
    state: Data<AppState>,
    caller: Caller,
    Rql(query): Rql,
) -> Result<HttpResponse, ApiError> {
    let spec = MEASUREMENTS.translate(&query)?;
    let viewer = caller.viewer();
    let (records, total) = state.actions.list_measurements(&viewer, &spec).await?;
    let body = measurement_list::body(state.store.reader(), viewer, records, total, &spec);
    Ok(HttpResponse::Ok()
        .content_type(ContentType::json())
        .streaming(body))
}

/// One measurement.
#[utoipa::path(tag = "measurements", security(("bearer" = [])),
    params(("id" = String, Path, description = "measurement id")),
    responses((status = 200, body = Object), (status = 404, body = ErrorBody)))]
#[get("/documents/{id}")]
pub async fn get(
    state: Data<AppState>,
    caller: Caller,
    id: Path<Id>,
) -> Result<HttpResponse, ApiError> {
    let id = id.into_inner();
    let record = state
        .actions
        .view_measurement(&caller.viewer(), &id)
        .await?;
    Ok(measurement_body(&record))
}

/// Partly updates a measurement: patients `context`, `tags`, `review_requested`; staff also
/// `diagnosis` and `label` (a review). Bumps `updateTimestamp`.
#[utoipa::path(tag = "measurements", security(("bearer" = [])),
    params(("id" = String, Path, description = "measurement id")),
    request_body(content = Object, description = "fields of data to change: context, tags, review_requested; staff also diagnosis, label (a rhythm label such as `sinus_rhythm`, or free text), patient_note (the only note shown to the patient in the portal and the PDF). The server's fields (`indicator`, `mostSevereLabel`, `af`, `analysis`, `review`) cannot be sent (400, code 15)."),
    responses((status = 200, description = "{\"affectedRecords\":1}", body = Object), (status = 400, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
#[put("/documents/{id}")]
pub async fn update(
    state: Data<AppState>,
    caller: Caller,
    id: Path<Id>,
    ApiJson(body): ApiJson<Value>,
) -> Result<HttpResponse, ApiError> {
    let id = id.into_inner();
    let update = MeasurementUpdate::parse(body)?;
    state
        .actions
        .update_measurement(&caller.viewer(), &id, update)
        .await?;
    Ok(HttpResponse::Ok().json(json!({"affectedRecords": 1})))
}
