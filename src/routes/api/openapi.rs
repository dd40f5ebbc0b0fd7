//! The OpenAPI document: the operations of the route table ([`super::configure`]), each as its
//! handler's annotations describe it, under the service's title, tags and security scheme.

use actix_web::App;
use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityScheme};
use utoipa::{Modify, OpenApi};
use utoipa_actix_web::AppExt;

use super::extract::BodyLimit;
use super::{error, page};

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

/// Tacho's wire API: what the document says besides its operations, which [`openapi`] adds
/// from the route table.
#[derive(OpenApi)]
#[openapi(
    info(title = "Tacho", description = "Heart-rhythm measurements, reports and profiles. Errors use the envelope {code, name, message}; lists the envelope {page, data}; list endpoints take RQL in the query string."),
    modifiers(&BearerAuth),
    components(schemas(error::ErrorBody, page::Page, page::PageInfo)),
    tags(
        (name = "auth", description = "OAuth2 tokens"),
        (name = "users", description = "Accounts, enlistments, roles"),
        (name = "consents", description = "Consent to the processing of health data and to sharing with groups"),
        (name = "profiles", description = "Personal and device information"),
        (name = "groups", description = "Care teams"),
        (name = "measurements", description = "Heart-rhythm measurements (camelCase dialect)"),
        (name = "measurement-reports", description = "PDF reports of single measurements"),
        (name = "reports", description = "Periodic reports: weekly, monthly, end of prescription, manual (snake_case dialect)"),
        (name = "files", description = "Public PDFs behind capability tokens"),
        (name = "notifications", description = "The caller's inbox: reports and results as they are ready"),
        (name = "webhooks", description = "Clinic systems' endpoints for a group's events, signed as Standard Webhooks"),
        (name = "fhir", description = "HL7 FHIR R4, read-only (application/fhir+json); docs/fhir.md maps every field"),
        (name = "health", description = "Probes"),
    )
)]
pub struct ApiDoc;

/// The OpenAPI document: [`ApiDoc`] with every operation that [`super::configure`] registers,
/// collected by registering them on an app of their own.
pub fn openapi() -> utoipa::openapi::OpenApi {
    let (_, document) = App::new()
        .into_utoipa_app()
        .openapi(ApiDoc::openapi())
        // The body limit is not part of the document.
        .configure(|cfg| super::configure(cfg, BodyLimit(0)))
        .split_for_parts();
    document
}

/// The OpenAPI document as pretty-printed JSON, as kept in `docs/openapi.json`.
pub fn document() -> String {
    openapi().to_pretty_json().unwrap_or_default()
}
