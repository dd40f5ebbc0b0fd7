//! `POST /auth/v2/oauth2/tokens`: the OAuth2 password and refresh grants. Its errors are
//! OAuth2-shaped (`error`, `description`, `exh_error`), the contract's one exception to the
//! error envelope.

use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use actix_web::web::Data;
use actix_web::{HttpRequest, HttpResponse, ResponseError, post};

use base64::Engine;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::error::ApiError;
use super::extract::{is_json, read_body};
use crate::auth::LoginError;
use crate::routes::AppState;

/// A token request, as JSON or form fields.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct TokenRequest {
    /// `password` or `refresh_token`.
    pub grant_type: Option<String>,
    /// The e-mail address (password grant).
    pub username: Option<String>,
    pub password: Option<String>,
    pub refresh_token: Option<String>,
    /// Accepted and ignored.
    pub client_id: Option<String>,
    /// Accepted and ignored.
    pub client_secret: Option<String>,
}

/// Tokens granted.
#[derive(Debug, Serialize, ToSchema)]
pub struct TokenResponse {
    pub access_token: String,
    /// Always `bearer`.
    pub token_type: &'static str,
    /// Seconds until the access token expires.
    pub expires_in: u64,
    pub refresh_token: String,
    pub user_id: String,
}

/// The platform error inside an OAuth2 error.
#[derive(Debug, Serialize, ToSchema)]
pub struct ExhError {
    pub code: u32,
    pub name: &'static str,
    pub description: String,
}

/// An OAuth2 error body.
#[derive(Debug, Serialize, ToSchema)]
pub struct OAuthErrorBody {
    /// `invalid_grant`, `invalid_request`, `invalid_client`, `unsupported_grant_type` or `server_error`.
    pub error: &'static str,
    pub description: String,
    pub exh_error: ExhError,
}

/// A refused token request.
#[derive(Debug, thiserror::Error)]
#[error("{description}")]
pub struct OAuthError {
    status: StatusCode,
    error: &'static str,
    code: u32,
    name: &'static str,
    description: String,
    retry_after: Option<u64>,
}

impl OAuthError {
    fn new(
        error: &'static str,
        code: u32,
        name: &'static str,
        description: impl Into<String>,
    ) -> Self {
        OAuthError {
            status: StatusCode::BAD_REQUEST,
            error,
            code,
            name,
            description: description.into(),
            retry_after: None,
        }
    }

    fn invalid_request(code: u32, name: &'static str, description: impl Into<String>) -> Self {
        Self::new("invalid_request", code, name, description)
    }
}

impl ResponseError for OAuthError {
    fn status_code(&self) -> StatusCode {
        self.status
    }

    fn error_response(&self) -> HttpResponse {
        let mut response = HttpResponse::build(self.status);
        response.insert_header((header::CACHE_CONTROL, "no-store"));
        if let Some(seconds) = self.retry_after {
            response.insert_header((header::RETRY_AFTER, HeaderValue::from(seconds)));
        }
        response.json(OAuthErrorBody {
            error: self.error,
            description: self.description.clone(),
            exh_error: ExhError {
                code: self.code,
                name: self.name,
                description: self.description.clone(),
            },
        })
    }
}

impl From<LoginError> for OAuthError {
    fn from(err: LoginError) -> Self {
        let description = err.to_string();
        let grant = |code, name| OAuthError::new("invalid_grant", code, name, description.clone());
        match err {
            LoginError::InvalidCredentials | LoginError::Deactivated => {
                grant(106, "AUTHENTICATION_EXCEPTION")
            }
            LoginError::InvalidRefreshToken | LoginError::RefreshTokenReused => {
                grant(106, "AUTHENTICATION_EXCEPTION")
            }
            LoginError::Frozen { retry_after_secs } => OAuthError {
                retry_after: Some(retry_after_secs),
                ..grant(211, "LOGIN_TIMEOUT_EXCEPTION")
            },
            LoginError::FreezeStarted { freeze_secs } => OAuthError {
                retry_after: Some(freeze_secs),
                ..grant(212, "LOGIN_FREEZE_EXCEPTION")
            },
            LoginError::Blocked => grant(213, "TOO_MANY_FAILED_ATTEMPTS_EXCEPTION"),
            LoginError::Throttled { retry_after_secs } => OAuthError {
                status: StatusCode::TOO_MANY_REQUESTS,
                retry_after: Some(retry_after_secs),
                ..OAuthError::new(
                    "invalid_request",
                    429,
                    "TOO_MANY_REQUESTS_EXCEPTION",
                    format!("too many token requests; retry in {retry_after_secs} s"),
                )
            },
            LoginError::Internal(cause) => {
                tracing::error!(error = format!("{cause:#}"), "token request failed");
                OAuthError {
                    status: StatusCode::INTERNAL_SERVER_ERROR,
                    ..OAuthError::new("server_error", 1, "SERVER_EXCEPTION", "internal error")
                }
            }
        }
    }
}

impl From<ApiError> for OAuthError {
    fn from(err: ApiError) -> Self {
        let (code, name) = err.code_and_name();
        let mut oauth = OAuthError::invalid_request(code, name, err.to_string());
        if let ApiError::BodyTooLarge { .. } = err {
            oauth.status = StatusCode::PAYLOAD_TOO_LARGE;
        }
        oauth
    }
}

/// Client credentials sent with HTTP Basic must at least be well-formed.
fn check_basic_client(req: &HttpRequest) -> Result<(), OAuthError> {
    let Some(value) = req.headers().get(header::AUTHORIZATION) else {
        return Ok(());
    };
    let bad_client = || OAuthError {
        status: StatusCode::UNAUTHORIZED,
        ..OAuthError::new(
            "invalid_client",
            106,
            "AUTHENTICATION_EXCEPTION",
            "malformed client credentials",
        )
    };
    let value = value.to_str().map_err(|_| bad_client())?;
    let Some((scheme, encoded)) = value.trim().split_once(' ') else {
        return Err(bad_client());
    };
    if !scheme.eq_ignore_ascii_case("basic") {
        return Err(bad_client());
    }
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded.trim())
        .map_err(|_| bad_client())?;
    let text = String::from_utf8(decoded).map_err(|_| bad_client())?;
    if text.contains(':') {
        Ok(())
    } else {
        Err(bad_client())
    }
}

fn parse_request<T: serde::de::DeserializeOwned>(
    req: &HttpRequest,
    body: &[u8],
) -> Result<T, OAuthError> {
    let content_type = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| {
            v.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase()
        });
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err(ApiError::EmptyBody.into());
    }
    if content_type.as_deref() == Some("application/x-www-form-urlencoded") {
        return serde_urlencoded::from_bytes(body).map_err(|e| {
            OAuthError::invalid_request(
                22,
                "BODY_FORMAT_EXCEPTION",
                format!("malformed form body: {e}"),
            )
        });
    }
    if !is_json(req) {
        return Err(OAuthError::invalid_request(
            22,
            "BODY_FORMAT_EXCEPTION",
            "the body must be JSON or application/x-www-form-urlencoded",
        ));
    }
    Ok(super::extract::parse_json(body)?)
}

fn required<'a>(value: &'a Option<String>, field: &str) -> Result<&'a str, OAuthError> {
    value.as_deref().filter(|v| !v.is_empty()).ok_or_else(|| {
        OAuthError::invalid_request(
            14,
            "MISSING_REQUIRED_FIELDS_EXCEPTION",
            format!("missing required field `{field}`"),
        )
    })
}

/// Grants tokens for a password or a refresh token.
#[utoipa::path(tag = "auth",
    request_body(content = TokenRequest, content_type = "application/json"),
    responses((status = 200, body = TokenResponse),
        (status = 400, description = "invalid_grant (106, 211, 212, 213), invalid_request, unsupported_grant_type", body = OAuthErrorBody),
        (status = 401, description = "invalid_client", body = OAuthErrorBody)))]
#[post("/auth/v2/oauth2/tokens")]
pub async fn token(
    state: Data<AppState>,
    req: HttpRequest,
    payload: actix_web::web::Payload,
) -> Result<HttpResponse, OAuthError> {
    let network = crate::routes::client_network(&req);
    check_basic_client(&req)?;
    let body = read_body(&req, payload, 16 * 1024).await?;
    let request: TokenRequest = parse_request(&req, &body)?;
    let issued = match required(&request.grant_type, "grant_type")? {
        "password" => {
            let username = required(&request.username, "username")?;
            let password = required(&request.password, "password")?;
            state
                .actions
                .log_in_for_tokens(username, password, network)
                .await?
        }
        "refresh_token" => {
            state
                .actions
                .refresh_login(required(&request.refresh_token, "refresh_token")?, network)
                .await?
        }
        other => {
            return Err(OAuthError::new(
                "unsupported_grant_type",
                15,
                "FIELD_FORMAT_EXCEPTION",
                format!(
                    "grant type `{}` is not supported (password, refresh_token)",
                    other.chars().take(40).collect::<String>()
                ),
            ));
        }
    };
    Ok(HttpResponse::Ok()
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .insert_header((header::PRAGMA, "no-cache"))
        .json(TokenResponse {
            access_token: issued.access_token,
            token_type: "bearer",
            expires_in: issued.expires_in,
            refresh_token: issued.refresh_token,
            user_id: issued.user_id.to_string(),
        }))
}

/// A token revocation request (RFC 7009 2.1).
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct RevokeRequest {
    /// An access or a refresh token.
    pub token: Option<String>,
    /// `access_token` or `refresh_token`; accepted and not needed, since either kind is found.
    pub token_type_hint: Option<String>,
    /// Accepted and ignored.
    pub client_id: Option<String>,
    /// Accepted and ignored.
    pub client_secret: Option<String>,
}

/// Revokes a token (RFC 7009): the whole login it belongs to, its access and refresh tokens
/// alike. The answer is 200 with an empty body whether the token was valid, expired, revoked
/// already or unknown (RFC 7009 2.2), so it tells nothing about the token.
#[utoipa::path(tag = "auth",
    request_body(content = RevokeRequest, content_type = "application/x-www-form-urlencoded"),
    responses((status = 200, description = "revoked, or nothing to revoke"),
        (status = 400, description = "invalid_request (14, 22)", body = OAuthErrorBody),
        (status = 401, description = "invalid_client", body = OAuthErrorBody)))]
#[post("/auth/v2/oauth2/tokens/revoke")]
pub async fn revoke(
    state: Data<AppState>,
    req: HttpRequest,
    payload: actix_web::web::Payload,
) -> Result<HttpResponse, OAuthError> {
    check_basic_client(&req)?;
    let body = read_body(&req, payload, 16 * 1024).await?;
    let request: RevokeRequest = parse_request(&req, &body)?;
    state
        .actions
        .revoke_token(required(&request.token, "token")?)
        .await
        .map_err(|err| OAuthError::from(ApiError::from(err)))?;
    Ok(HttpResponse::Ok()
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .finish())
}
