//! The JSON wire API: snake_case for auth, users, profiles, groups and reports; camelCase for `/data/v1`
//! and `/files/v1`.

pub mod auth;
pub mod error;
pub mod extract;
pub mod files;
pub mod groups;
pub mod health;
pub mod measurement_list;
pub mod measurement_reports;
pub mod measurements;
pub mod openapi;
pub mod page;
pub mod profiles;
pub mod reports;
pub mod users;

use std::sync::LazyLock;

use actix_web::dev::ResourceDef;
use actix_web::http::Method;
use utoipa::openapi::path::HttpMethod;

/// The operations that also answer at their path followed by one slash (`GET /users/v1/`), as
/// the platform's SDK asks for these: each by its handler's `#[utoipa::path]`, which gives
/// method and path. Applied by [`crate::routes::trailing_slash`]; every other path with a trailing slash
/// stays unknown.
static TRAILING_SLASH: LazyLock<Vec<(Method, ResourceDef)>> = LazyLock::new(|| {
    [
        operation::<users::__path_list_users>(),
        operation::<profiles::__path_list_profiles>(),
        operation::<profiles::__path_update_profiles>(),
        operation::<groups::__path_list_groups>(),
        operation::<reports::__path_list>(),
        operation::<reports::__path_create>(),
        operation::<reports::__path_pdf>(),
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
