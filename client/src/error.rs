//! The one error type of the client: Tacho's error envelope, kept apart from transport failures.

use serde::Deserialize;

/// What can go wrong with a call.
///
/// Tacho answers every failure with an envelope `{code, name, message}`; those arrive as
/// [`Error::Api`] with the envelope's fields, so callers match on [`ApiError::code`]. Failures
/// below HTTP (DNS, refused connections, TLS, timeouts) are [`Error::Transport`]; an answer that
/// is not what the contract promises is [`Error::UnexpectedResponse`]. The FHIR interface
/// answers its refusals as OperationOutcomes instead, which arrive as [`Error::Fhir`].
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The server refused the request with an error envelope.
    #[error(transparent)]
    Api(#[from] ApiError),
    /// The FHIR interface refused the request with an OperationOutcome.
    #[error(transparent)]
    Fhir(#[from] FhirError),
    /// The request did not complete at the HTTP level.
    #[error("transport error: {0}")]
    Transport(#[from] reqwest::Error),
    /// The server answered, but not in the shape the contract describes.
    #[error("unexpected response (HTTP {status}): {detail}")]
    UnexpectedResponse {
        /// HTTP status of the answer.
        status: u16,
        /// What did not match.
        detail: String,
    },
}

impl Error {
    /// The envelope's code when the server refused the request, e.g. `16` for an unknown
    /// resource; `None` for transport and shape errors.
    pub fn code(&self) -> Option<i64> {
        match self {
            Error::Api(api) => Some(api.code),
            _ => None,
        }
    }
}

/// A refusal by the server, as its error envelope describes it.
///
/// On the token endpoint Tacho answers OAuth2-shaped errors; their `exh_error` part is mapped
/// to the same fields and the OAuth2 error word is kept in [`ApiError::oauth_error`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{name} ({code}, HTTP {status}): {message}")]
pub struct ApiError {
    /// HTTP status, e.g. 404.
    pub status: u16,
    /// Tacho's error code, e.g. 16 (see [`codes`]).
    pub code: i64,
    /// The error name, e.g. `RESOURCE_UNKNOWN_EXCEPTION`.
    pub name: String,
    /// A human-readable explanation (never contains secrets).
    pub message: String,
    /// On the token endpoint: `invalid_grant`, `invalid_request`, `invalid_client` or
    /// `unsupported_grant_type`.
    pub oauth_error: Option<String>,
}

/// A refusal of the FHIR interface (`/fhir/R4`), as its OperationOutcome describes it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("FHIR {} (HTTP {status}): {}", .issues.first().map_or("error", |i| i.code.as_str()),
    .issues.first().and_then(|i| i.diagnostics.as_deref()).unwrap_or(""))]
pub struct FhirError {
    /// HTTP status, e.g. 404.
    pub status: u16,
    /// The outcome's issues; Tacho's carry one.
    pub issues: Vec<FhirIssue>,
}

impl FhirError {
    /// The code of the first issue (FHIR's issue-type), e.g. `not-found`, `login`, `invalid`.
    pub fn code(&self) -> Option<&str> {
        self.issues.first().map(|i| i.code.as_str())
    }
}

/// One issue of an OperationOutcome.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct FhirIssue {
    /// `fatal`, `error`, `warning` or `information`.
    pub severity: String,
    /// FHIR's issue-type code, e.g. `not-found`.
    pub code: String,
    /// A human-readable explanation (never contains secrets).
    pub diagnostics: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct OperationOutcome {
    resource_type: String,
    #[serde(default)]
    issue: Vec<FhirIssue>,
}

/// The error codes of Tacho's wire contract that clients commonly act on.
pub mod codes {
    /// Authenticated, but not allowed.
    pub const NO_PERMISSION: i64 = 10;
    /// A malformed id.
    pub const ID_FORMAT: i64 = 12;
    /// A required field is missing.
    pub const MISSING_REQUIRED_FIELDS: i64 = 14;
    /// A field fails validation; the message names the field.
    pub const FIELD_FORMAT: i64 = 15;
    /// No such resource, or not visible to the caller.
    pub const RESOURCE_UNKNOWN: i64 = 16;
    /// Bad RQL.
    pub const INVALID_RQL: i64 = 19;
    /// Not allowed in the current state (e.g. a report for an unanalysed measurement).
    pub const ILLEGAL_STATE: i64 = 27;
    /// Wrong e-mail or password.
    pub const AUTHENTICATION: i64 = 106;
    /// The access token is unknown or revoked.
    pub const ACCESS_TOKEN_UNKNOWN: i64 = 117;
    /// The access token has expired.
    pub const ACCESS_TOKEN_EXPIRED: i64 = 118;
    /// Too many requests; retry later.
    pub const TOO_MANY_REQUESTS: i64 = 429;
}

#[derive(Deserialize)]
struct Envelope {
    code: i64,
    name: String,
    message: String,
}

#[derive(Deserialize)]
struct OAuthEnvelope {
    error: String,
    exh_error: OAuthDetail,
}

#[derive(Deserialize)]
struct OAuthDetail {
    code: i64,
    name: String,
    description: String,
}

/// Reads an error answer: the envelope, the token endpoint's OAuth2 shape, or neither.
pub(crate) fn from_response(status: u16, body: &[u8]) -> Error {
    if let Ok(envelope) = serde_json::from_slice::<Envelope>(body) {
        return Error::Api(ApiError {
            status,
            code: envelope.code,
            name: envelope.name,
            message: envelope.message,
            oauth_error: None,
        });
    }
    if let Ok(outcome) = serde_json::from_slice::<OperationOutcome>(body)
        && outcome.resource_type == "OperationOutcome"
    {
        return Error::Fhir(FhirError {
            status,
            issues: outcome.issue,
        });
    }
    if let Ok(oauth) = serde_json::from_slice::<OAuthEnvelope>(body) {
        return Error::Api(ApiError {
            status,
            code: oauth.exh_error.code,
            name: oauth.exh_error.name,
            message: oauth.exh_error.description,
            oauth_error: Some(oauth.error),
        });
    }
    let text = String::from_utf8_lossy(body);
    let mut detail: String = text.chars().take(200).collect();
    if detail.is_empty() {
        detail = "an error status without an error envelope".into();
    }
    Error::UnexpectedResponse { status, detail }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn envelopes_oauth_errors_and_other_bodies_are_told_apart() {
        let api = from_response(
            404,
            br#"{"code":16,"name":"RESOURCE_UNKNOWN_EXCEPTION","message":"no such measurement"}"#,
        );
        assert_eq!(api.code(), Some(16));
        let Error::Api(api) = api else { panic!() };
        assert_eq!(
            (api.status, api.name.as_str()),
            (404, "RESOURCE_UNKNOWN_EXCEPTION")
        );

        let oauth = from_response(
            400,
            br#"{"error":"invalid_grant","description":"x","exh_error":{"code":106,"name":"AUTHENTICATION_EXCEPTION","description":"wrong e-mail or password"}}"#,
        );
        let Error::Api(oauth) = oauth else { panic!() };
        assert_eq!(oauth.code, codes::AUTHENTICATION);
        assert_eq!(oauth.oauth_error.as_deref(), Some("invalid_grant"));
        assert_eq!(oauth.message, "wrong e-mail or password");

        let fhir = from_response(
            404,
            br#"{"resourceType":"OperationOutcome","issue":[{"severity":"error","code":"not-found","diagnostics":"no such resource, or not visible to the caller"}]}"#,
        );
        let Error::Fhir(fhir) = fhir else { panic!() };
        assert_eq!((fhir.status, fhir.code()), (404, Some("not-found")));
        assert_eq!(
            fhir.to_string(),
            "FHIR not-found (HTTP 404): no such resource, or not visible to the caller"
        );

        let other = from_response(502, b"<html>bad gateway</html>");
        assert!(matches!(
            other,
            Error::UnexpectedResponse { status: 502, .. }
        ));
        assert_eq!(other.code(), None);
    }
}
