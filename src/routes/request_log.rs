//! Request logging with a request id. The line names the matched route pattern
//! (`/files/v1/{token}/file`), never the concrete path or query: those carry capabilities and
//! personal data. Headers are never logged.

use std::time::Instant;

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{HeaderName, HeaderValue};
use actix_web::middleware::Next;
use tracing::Instrument;

/// Header carrying the request id, echoed on every answer.
pub const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

fn request_id(req: &ServiceRequest) -> String {
    req.headers()
        .get(&REQUEST_ID)
        .and_then(|v| v.to_str().ok())
        .filter(|v| {
            !v.is_empty()
                && v.len() <= 64
                && v.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        })
        .map(str::to_owned)
        .unwrap_or_else(|| uuid::Uuid::new_v4().simple().to_string())
}

/// Middleware: a span per request, one log line when it ends, `X-Request-Id` on the answer.
pub async fn log_requests(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let id = request_id(&req);
    let method = req.method().to_string();
    let started = Instant::now();
    let span = tracing::info_span!("request", request_id = %id, method = %method);
    let result = next.call(req).instrument(span.clone()).await;
    let _entered = span.enter();
    let elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
    match result {
        Ok(mut res) => {
            let route = res
                .request()
                .match_pattern()
                .unwrap_or_else(|| "(no route)".into());
            let status = res.status().as_u16();
            if let Ok(value) = HeaderValue::from_str(&id) {
                res.headers_mut().insert(REQUEST_ID, value);
            }
            crate::telemetry::metrics::http_request(&route, &method, status, started.elapsed());
            if status >= 500 {
                tracing::error!(route, status, elapsed_ms, "request");
            } else {
                tracing::info!(route, status, elapsed_ms, "request");
            }
            Ok(res)
        }
        Err(err) => {
            crate::telemetry::metrics::http_request(
                "(failed)",
                &method,
                err.as_response_error().status_code().as_u16(),
                started.elapsed(),
            );
            tracing::error!(elapsed_ms, error = %err, "request failed");
            Err(err)
        }
    }
}
