//! Liveness and readiness probes.

use actix_web::web::Data;
use actix_web::{HttpResponse, get};
use serde_json::json;

use crate::startup::AppState;

/// The process is up.
#[utoipa::path(tag = "health", responses((status = 200, description = "alive")))]
#[get("/health/live")]
pub async fn live() -> HttpResponse {
    HttpResponse::Ok().json(json!({"status": "ok"}))
}

/// The process can serve: the database answers.
#[utoipa::path(tag = "health",
    responses((status = 200, description = "ready"), (status = 503, description = "the database does not answer")))]
#[get("/health/ready")]
pub async fn ready(state: Data<AppState>) -> HttpResponse {
    match state.store.ping().await {
        Ok(()) => HttpResponse::Ok().json(json!({"status": "ok", "database": "ok"})),
        Err(err) => {
            tracing::warn!(error = %err, "readiness check failed");
            HttpResponse::ServiceUnavailable()
                .json(json!({"code": 1, "name": "SERVER_EXCEPTION", "message": "the database is not reachable"}))
        }
    }
}
