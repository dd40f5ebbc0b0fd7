//! HTTP surfaces and the one route table.

pub mod api;
pub mod request_log;

use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use actix_web::middleware::{ErrorHandlerResponse, ErrorHandlers};
use actix_web::{HttpResponse, ResponseError, web};
use utoipa::OpenApi;
use utoipa_swagger_ui::SwaggerUi;

use api::error::ApiError;
use api::extract::BodyLimit;
use api::{
    auth, files, groups, health, measurement_reports, measurements, profiles, reports, users,
};

/// Every route of the service. Measurement uploads get their own, larger body limit.
pub fn configure(cfg: &mut web::ServiceConfig, measurement_limit: BodyLimit) {
    cfg.service(
        SwaggerUi::new("/docs/{_:.*}").url("/openapi.json", api::openapi::ApiDoc::openapi()),
    )
    .route(
        "/docs",
        web::get().to(|| async {
            HttpResponse::PermanentRedirect()
                .insert_header((header::LOCATION, "/docs/"))
                .finish()
        }),
    )
    .route("/health/live", web::get().to(health::live))
    .route("/health/ready", web::get().to(health::ready))
    .route("/auth/v2/oauth2/tokens", web::post().to(auth::token))
    .route("/users/v1/register", web::post().to(users::register))
    .route("/users/v1/me", web::get().to(users::me))
    .route("/users/v1", web::get().to(users::list_users))
    .route("/users/v1/", web::get().to(users::list_users))
    .route("/users/v1/{id}", web::get().to(users::get_user))
    .route("/users/v1/{id}", web::put().to(users::update_user))
    .route(
        "/users/v1/{id}/patient_enlistments",
        web::post().to(users::add_patient_enlistment),
    )
    .route(
        "/users/v1/{id}/patient_enlistments/{group_id}",
        web::delete().to(users::end_patient_enlistment),
    )
    .route(
        "/users/v1/{id}/staff_enlistments",
        web::post().to(users::add_staff_enlistment),
    )
    .route(
        "/users/v1/{id}/staff_enlistments/{group_id}",
        web::delete().to(users::remove_staff_enlistment),
    )
    .route("/users/v1/{id}/roles", web::post().to(users::add_roles))
    .route(
        "/users/v1/{id}/roles",
        web::delete().to(users::remove_roles),
    )
    .route(
        "/users/v1/{id}/activation",
        web::put().to(users::set_activation),
    )
    .route("/profiles/v1", web::get().to(profiles::list_profiles))
    .route("/profiles/v1", web::put().to(profiles::update_profiles))
    .route("/profiles/v1/", web::get().to(profiles::list_profiles))
    .route("/profiles/v1/", web::put().to(profiles::update_profiles))
    .route("/profiles/v1/{id}", web::get().to(profiles::get_profile))
    .route("/groups/v1", web::post().to(groups::create_group))
    .route("/groups/v1", web::get().to(groups::list_groups))
    .route("/groups/v1/", web::get().to(groups::list_groups))
    .route("/groups/v1/{id}", web::get().to(groups::get_group))
    .service(
        web::resource("/data/v1/measurements/documents")
            .app_data(measurement_limit)
            .route(web::post().to(measurements::create))
            .route(web::get().to(measurements::list)),
    )
    .service(
        web::resource("/data/v1/measurements/documents/{id}")
            .app_data(measurement_limit)
            .route(web::get().to(measurements::get))
            .route(web::put().to(measurements::update)),
    )
    .route(
        "/data/v1/measurement-reports/documents",
        web::post().to(measurement_reports::create),
    )
    .route(
        "/data/v1/measurement-reports/documents",
        web::get().to(measurement_reports::list),
    )
    .route(
        "/data/v1/measurement-reports/documents/{id}",
        web::get().to(measurement_reports::get),
    )
    .route("/reports/v1", web::get().to(reports::list))
    .route("/reports/v1", web::post().to(reports::create))
    .route("/reports/v1/", web::get().to(reports::list))
    .route("/reports/v1/", web::post().to(reports::create))
    .route("/reports/v1/{id}", web::get().to(reports::get))
    .route("/reports/v1/{id}/pdf", web::get().to(reports::pdf))
    .route("/reports/v1/{id}/pdf/", web::get().to(reports::pdf))
    .route("/files/v1/{token}/file", web::get().to(files::download))
    .route("/files/v1/{token}/file", web::head().to(files::download))
    .route("/files/v1/{token}/details", web::get().to(files::details))
    .default_service(web::to(|| async { ApiError::NotFound.error_response() }));
}

/// Turns any error answer that is not already JSON (from actix itself: 405, 404, payload or URL
/// errors) into the error envelope, so clients see one error format everywhere.
pub fn error_envelopes<B: 'static>() -> ErrorHandlers<B> {
    ErrorHandlers::new().default_handler(|res| {
        let is_json = res
            .response()
            .headers()
            .get(header::CONTENT_TYPE)
            .is_some_and(|v| v.to_str().unwrap_or("").contains("json"));
        if is_json {
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
