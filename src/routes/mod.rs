//! HTTP surfaces and the one route table.

pub mod api;
pub mod request_log;
mod state;
pub mod web;

pub use state::AppState;

use actix_session::SessionMiddleware;
use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse, Url};
use actix_web::error::ErrorBadRequest;
use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use actix_web::http::uri::{PathAndQuery, Uri};
use actix_web::middleware::{ErrorHandlerResponse, ErrorHandlers, Next};
use actix_web::web as routing;
use actix_web::{HttpResponse, ResponseError};
use utoipa_swagger_ui::SwaggerUi;

use api::error::ApiError;
use api::extract::BodyLimit;
use web::session::PortalSessions;

/// Every route of the service: the portal (`/`, `/portal`, `/static`), the API's documentation
/// (`/docs`, `/openapi.json`) and the JSON API ([`api::configure`]); anything else is the API's
/// 404 envelope. Measurement uploads get their own, larger body limit; `sessions` guards the
/// portal.
pub fn configure(
    cfg: &mut routing::ServiceConfig,
    measurement_limit: BodyLimit,
    sessions: SessionMiddleware<PortalSessions>,
) {
    web::configure(cfg, sessions);
    cfg.service(SwaggerUi::new("/docs/{_:.*}").url("/openapi.json", api::openapi::openapi()))
        .route(
            "/docs",
            routing::get().to(|| async {
                HttpResponse::PermanentRedirect()
                    .insert_header((header::LOCATION, "/docs/"))
                    .finish()
            }),
        );
    api::configure(
        &mut utoipa_actix_web::service_config::ServiceConfig::new(cfg),
        measurement_limit,
    );
    cfg.default_service(routing::to(|| async {
        ApiError::NotFound.error_response()
    }));
}

/// The network of the client a request came from (its peer: Tacho trusts no forwarding header),
/// for the per-network login and registration limits and the audit trail.
pub fn client_network(req: &actix_web::HttpRequest) -> crate::domain::network::Network {
    let address = req
        .peer_addr()
        .map(|a| a.ip())
        .unwrap_or(std::net::IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED));
    crate::domain::network::Network::of(address)
}

/// Middleware: headers every answer gets.
/// - JSON answers carry personal data (accounts, profiles, measurements, reports) or tokens:
///   `Cache-Control: no-store` unless the handler chose otherwise (ASVS 5.0 V14.3.2).
/// - Behind HTTPS, `Strict-Transport-Security` for a year (V12.1.1, RFC 6797).
pub async fn security_headers(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let https = req
        .app_data::<routing::Data<crate::routes::AppState>>()
        .is_some_and(|state| web::session::is_https(&state.settings));
    let mut res = next.call(req).await?;
    let headers = res.headers_mut();
    let json = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if json && !headers.contains_key(header::CACHE_CONTROL) {
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    if https {
        headers.insert(
            header::STRICT_TRANSPORT_SECURITY,
            HeaderValue::from_static("max-age=31536000"),
        );
    }
    Ok(res)
}

/// Middleware: routes a request for one of the API operations that also answer with a trailing
/// slash ([`api::answers_with_trailing_slash`]) as if it came without that slash. Any other
/// path is left as it came, so that it answers, or is unknown, exactly as written.
pub async fn trailing_slash(
    mut req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let trimmed = req
        .path()
        .strip_suffix('/')
        .filter(|path| !path.is_empty() && api::answers_with_trailing_slash(req.method(), path))
        .map(str::to_owned);
    if let Some(path) = trimmed {
        let mut parts = req.uri().clone().into_parts();
        let path_and_query = match req.uri().query() {
            Some(query) => format!("{path}?{query}"),
            None => path,
        };
        // The trimmed path of a valid URI is valid: these cannot fail.
        parts.path_and_query =
            Some(PathAndQuery::try_from(path_and_query).map_err(ErrorBadRequest)?);
        let uri = Uri::from_parts(parts).map_err(ErrorBadRequest)?;
        req.match_info_mut().set(Url::new(uri.clone()));
        req.head_mut().uri = uri;
    }
    next.call(req).await
}

/// Turns any error answer that is not already JSON (from actix itself: 405, 404, payload or URL
/// errors) into the error envelope, so clients see one error format everywhere.
pub fn error_envelopes<B: 'static>() -> ErrorHandlers<B> {
    ErrorHandlers::new().default_handler(|res| {
        // JSON errors are already envelopes; HTML ones are the portal's own error pages.
        let rendered = res
            .response()
            .headers()
            .get(header::CONTENT_TYPE)
            .is_some_and(|v| {
                let v = v.to_str().unwrap_or("");
                v.contains("json") || v.starts_with("text/html")
            });
        if rendered {
            return Ok(ErrorHandlerResponse::Response(res.map_into_left_body()));
        }
        let error = match res.status() {
            StatusCode::NOT_FOUND | StatusCode::METHOD_NOT_ALLOWED => ApiError::NotFound,
            StatusCode::PAYLOAD_TOO_LARGE => ApiError::BodyTooLargeUnknownLimit,
            status if status.is_client_error() => {
                ApiError::BodyFormat("the request could not be read".into())
            }
            _ => ApiError::Internal(anyhow::anyhow!("unhandled error response {}", res.status())),
        };
        let (req, _) = res.into_parts();
        let mut response = error.error_response();
        response.headers_mut().insert(
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        );
        Ok(ErrorHandlerResponse::Response(
            actix_web::dev::ServiceResponse::new(req, response).map_into_right_body(),
        ))
    })
}
