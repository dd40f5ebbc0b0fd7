//! Liveness and readiness probes.

use std::time::Duration;

use actix_web::http::header;
use actix_web::web::Data;
use actix_web::{HttpResponse, get};
use serde_json::json;

use crate::routes::AppState;

/// How long the readiness probe waits for the database; load balancers' probes time out
/// after a few seconds, and a slower answer is as good as none.
const READY_WITHIN: Duration = Duration::from_secs(2);

/// The process is up.
#[utoipa::path(tag = "health", responses((status = 200, description = "alive")))]
#[get("/health/live")]
pub async fn live() -> HttpResponse {
    HttpResponse::Ok().json(json!({"status": "ok"}))
}

/// The process can serve: the database answers, and the file storage can be written and
/// read. Answers 503 (with `Retry-After`) while either cannot, and 200 again once both can,
/// without a restart.
#[utoipa::path(tag = "health",
    responses((status = 200, description = "ready"),
        (status = 503, description = "the database or the file storage cannot be reached")))]
#[get("/health/ready")]
pub async fn ready(state: Data<AppState>) -> HttpResponse {
    let (database, storage) = tokio::join!(
        state.store.ping(READY_WITHIN),
        tokio::time::timeout(READY_WITHIN, state.storage.check()),
    );
    let database_ok = match &database {
        Ok(()) => true,
        Err(err) => {
            tracing::warn!(error = %err, "readiness: the database does not answer");
            false
        }
    };
    let storage_ok = match storage {
        Ok(Ok(())) => true,
        Ok(Err(err)) => {
            tracing::warn!(
                error = format!("{err:#}"),
                "readiness: the file storage fails"
            );
            false
        }
        Err(_) => {
            tracing::warn!("readiness: the file storage did not answer in time");
            false
        }
    };
    let word = |ok: bool| if ok { "ok" } else { "unavailable" };
    if database_ok && storage_ok {
        return HttpResponse::Ok().json(json!({"status": "ok", "database": "ok", "storage": "ok"}));
    }
    let message = match (database_ok, storage_ok) {
        (false, false) => "the database and the file storage cannot be reached",
        (false, true) => "the database cannot be reached",
        _ => "the file storage cannot be reached",
    };
    HttpResponse::ServiceUnavailable()
        .insert_header((header::RETRY_AFTER, "5"))
        .json(json!({
            "code": 503,
            "name": "SERVICE_UNAVAILABLE_EXCEPTION",
            "message": message,
            "database": word(database_ok),
            "storage": word(storage_ok),
        }))
}
