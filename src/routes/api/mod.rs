//! The JSON wire API: snake_case for auth, users, profiles, groups and reports; camelCase for `/data/v1`
//! and `/files/v1`.
//!
//! Each endpoint is declared once, on its handler: actix's method attribute (`#[get("/users/v1/me")]`)
//! gives its method and path, `#[utoipa::path]` the rest of its documentation. [`configure`]
//! registers the handlers, and the OpenAPI document ([`openapi::document`]) is collected from that
//! same table, so the two cannot name different endpoints.

pub mod auth;
pub mod consents;
pub mod erasure;
pub mod error;
pub mod export;
pub mod extract;
pub mod fhir;
pub mod files;
pub mod groups;
pub mod health;
pub mod measurement_list;
pub mod measurement_reports;
pub mod measurements;
pub mod notifications;
pub mod openapi;
pub mod page;
pub mod profiles;
pub mod reports;
pub mod users;
pub mod webhooks;

use std::sync::LazyLock;

use actix_web::dev::ResourceDef;
use actix_web::http::Method;
use utoipa::openapi::path::HttpMethod;
use utoipa_actix_web::scope;
use utoipa_actix_web::service_config::ServiceConfig;

use actix_web::error::PathError;
use actix_web::web::PathConfig;
use error::ApiError;
use extract::BodyLimit;

/// The API's route table. Order matters where paths overlap: `/users/v1/register` and
/// `/users/v1/me` come before `/users/v1/{id}`. Measurements are registered in a scope of
/// their own (their handlers' paths are relative to it) that carries the larger body limit of
/// uploads, `measurement_limit`. The downloads by token and link come first: the router tries
/// the routes in order, each path with a parameter by a regular expression, and trying the
/// fifty before them was a tenth of a cached download's time.
pub fn configure(cfg: &mut ServiceConfig, measurement_limit: BodyLimit) {
    // Ids in paths are parsed by the extractor (`Path<Id>`); a malformed one is code 12.
    // (The portal's handlers take their path segments as text.)
    cfg.app_data(PathConfig::default().error_handler(|err, _| {
        let message = match &err {
            PathError::Deserialize(inner) => inner.to_string(),
            other => other.to_string(),
        };
        ApiError::IdFormat(message).into()
    }));
    cfg.service(files::download)
        .service(files::shared)
        .service(files::details)
        .service(health::live)
        .service(health::ready)
        .service(auth::token)
        .service(auth::revoke)
        .service(users::register)
        .service(users::me)
        .service(users::list_users)
        .service(users::get_user)
        .service(users::update_user)
        .service(users::add_patient_enlistment)
        .service(users::end_patient_enlistment)
        .service(users::add_staff_enlistment)
        .service(users::remove_staff_enlistment)
        .service(users::add_roles)
        .service(users::remove_roles)
        .service(users::set_activation)
        .service(erasure::set_legal_hold)
        .service(erasure::request_erasure)
        .service(erasure::erasure_progress)
        .service(export::export_record)
        .service(consents::current)
        .service(consents::history)
        .service(consents::withdraw)
        .service(profiles::list_profiles)
        .service(profiles::update_profiles)
        .service(profiles::get_profile)
        .service(groups::create_group)
        .service(groups::list_groups)
        .service(groups::get_group)
        .service(fhir::metadata)
        .service(fhir::search_patients)
        .service(fhir::everything)
        .service(fhir::read_patient)
        .service(fhir::search_observations)
        .service(fhir::read_observation)
        .service(fhir::search_reports)
        .service(fhir::read_report)
        .service(fhir::search_documents)
        .service(fhir::read_document)
        .service(fhir::read_device)
        .service(fhir::read_binary)
        .service(
            scope("/data/v1/measurements")
                .app_data(measurement_limit)
                .service(measurements::create)
                .service(measurements::list)
                .service(measurements::get)
                .service(measurements::update),
        )
        .service(measurement_reports::create)
        .service(measurement_reports::list)
        .service(measurement_reports::get)
        .service(reports::list)
        .service(reports::create)
        .service(reports::get)
        .service(reports::pdf)
        .service(notifications::list)
        .service(notifications::mark_all_read)
        .service(notifications::update)
        .service(webhooks::create)
        .service(webhooks::list)
        .service(webhooks::get)
        .service(webhooks::update)
        .service(webhooks::remove);
}

/// The operations that also answer at their path followed by one slash (`GET /users/v1/`), as
/// the platform's SDK asks for these: each by its handler, whose declaration gives method and
/// path. Applied by [`crate::routes::trailing_slash`]; every other path with a trailing slash
/// stays unknown.
static TRAILING_SLASH: LazyLock<Vec<(Method, ResourceDef)>> = LazyLock::new(|| {
    [
        operation::<users::list_users>(),
        operation::<profiles::list_profiles>(),
        operation::<profiles::update_profiles>(),
        operation::<groups::list_groups>(),
        operation::<reports::list>(),
        operation::<reports::create>(),
        operation::<reports::pdf>(),
    ]
    .into_iter()
    .flatten()
    .collect()
});

/// The method(s) and path pattern of a handler, from its declaration.
fn operation<P: utoipa::Path>() -> Vec<(Method, ResourceDef)> {
    let pattern = ResourceDef::new(P::path());
    P::methods()
        .into_iter()
        .map(|method| {
            let method = match method {
                HttpMethod::Get => Method::GET,
                HttpMethod::Post => Method::POST,
                HttpMethod::Put => Method::PUT,
                HttpMethod::Delete => Method::DELETE,
                HttpMethod::Options => Method::OPTIONS,
                HttpMethod::Head => Method::HEAD,
                HttpMethod::Patch => Method::PATCH,
                HttpMethod::Trace => Method::TRACE,
            };
            (method, pattern.clone())
        })
        .collect()
}

/// Whether `path` (without its trailing slash) is that of an operation that also answers with
/// one; see [`TRAILING_SLASH`].
pub fn answers_with_trailing_slash(method: &Method, path: &str) -> bool {
    TRAILING_SLASH
        .iter()
        .any(|(m, pattern)| m == method && pattern.is_match(path))
}
