//! The OpenAPI document, generated from the handlers' annotations.

use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityScheme};
use utoipa::{Modify, OpenApi};

use super::{
    auth, error, files, groups, health, measurement_reports, measurements, page, profiles, reports,
    users,
};

struct BearerAuth;

impl Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(Http::new(HttpAuthScheme::Bearer)),
        );
    }
}

/// Tacho's wire API.
#[derive(OpenApi)]
#[openapi(
    info(title = "Tacho", description = "Heart-rhythm measurements, reports and profiles. Errors use the envelope {code, name, message}; lists the envelope {page, data}; list endpoints take RQL in the query string."),
    modifiers(&BearerAuth),
    paths(
        auth::token,
        users::register, users::me, users::get_user, users::list_users, users::update_user,
        users::add_patient_enlistment, users::end_patient_enlistment,
        users::add_staff_enlistment, users::remove_staff_enlistment,
        users::add_roles, users::remove_roles, users::set_activation,
        profiles::list_profiles, profiles::get_profile, profiles::update_profiles,
        groups::create_group, groups::list_groups, groups::get_group,
        measurements::create, measurements::list, measurements::get, measurements::update,
        measurement_reports::create, measurement_reports::list, measurement_reports::get,
        reports::list, reports::get, reports::create, reports::pdf,
        files::download, files::details,
        health::live, health::ready,
    ),
    components(schemas(error::ErrorBody, page::Page, page::PageInfo)),
    tags(
        (name = "auth", description = "OAuth2 tokens"),
        (name = "users", description = "Accounts, enlistments, roles"),
        (name = "profiles", description = "Personal and device information"),
        (name = "groups", description = "Care teams"),
        (name = "measurements", description = "Heart-rhythm measurements (camelCase dialect)"),
        (name = "measurement-reports", description = "PDF reports of single measurements"),
        (name = "reports", description = "Periodic reports: weekly, monthly, end of prescription, manual (snake_case dialect)"),
        (name = "files", description = "Public PDFs behind capability tokens"),
        (name = "health", description = "Probes"),
    )
)]
pub struct ApiDoc;

/// The OpenAPI document as pretty-printed JSON, as kept in `docs/openapi.json`.
pub fn document() -> String {
    ApiDoc::openapi().to_pretty_json().unwrap_or_default()
}
