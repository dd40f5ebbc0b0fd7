//! Request extractors of the JSON API: the caller from its bearer token, JSON bodies under a
//! size limit with field-level errors, RQL from the raw query string, and ids from paths.

use std::future::Future;
use std::pin::Pin;

use actix_web::dev::Payload;
use actix_web::http::header;
use actix_web::web::{BytesMut, Data};
use actix_web::{FromRequest, HttpRequest};
use futures_util::StreamExt;
use serde::de::DeserializeOwned;

use super::error::ApiError;
use crate::domain::id::Id;
use crate::domain::rql;
use crate::routes::AppState;
use crate::store::Viewer;
use crate::store::entities::user;

/// The authenticated user making the request.
#[derive(Debug, Clone)]
pub struct Caller {
    pub user: user::Model,
}

impl Caller {
    /// The caller's id.
    pub fn id(&self) -> &Id {
        &self.user.id
    }

    /// The caller as a viewer for the store's visibility and access rules.
    pub fn viewer(&self) -> Viewer {
        Viewer::of(&self.user)
    }
}

/// The token of an `Authorization: Bearer …` header; `None` when there is no bearer credential.
pub fn bearer_token(req: &HttpRequest) -> Option<&str> {
    let value = req.headers().get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.trim().split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}

impl FromRequest for Caller {
    type Error = ApiError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, ApiError>>>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let token = bearer_token(req).map(str::to_owned);
        let state = req.app_data::<Data<AppState>>().cloned();
        Box::pin(async move {
            let token = token.ok_or(ApiError::NotAuthenticated)?;
            let state = state
                .ok_or_else(|| ApiError::Internal(anyhow::anyhow!("application state missing")))?;
            if token.is_empty() || token.len() > 512 {
                return Err(ApiError::AccessTokenUnknown);
            }
            let user = state
                .actions
                .authenticate(&token)
                .await
                .map_err(|err| match err {
                    crate::auth::BearerError::Unknown => ApiError::AccessTokenUnknown,
                    crate::auth::BearerError::Expired => ApiError::AccessTokenExpired,
                    crate::auth::BearerError::Internal(e) => e.into(),
                })?;
            Ok(Caller { user })
        })
    }
}

/// Size limit of JSON bodies for a scope, in bytes; set with `app_data`.
#[derive(Debug, Clone, Copy)]
pub struct BodyLimit(pub usize);

/// A JSON body parsed into `T`, with the contract's errors: 13 when empty, 22 when not JSON or
/// of another content type, 14 for a missing field, 15 for a wrong type or unknown field,
/// 413 above the size limit.
#[derive(Debug)]
pub struct ApiJson<T>(pub T);

/// Reads a request body of at most `limit` bytes (after decompression: the platform's SDK
/// gzips large uploads with `Content-Encoding: gzip`, and the limit must hold for what is
/// parsed, not for what travelled).
///
/// The travelled bytes are held to `limit` as well, and a packed body is inflated only after
/// it has arrived, through a reader that stops one byte past `limit`: a few kilobytes that
/// would unpack to gigabytes cost at most `limit` bytes of memory and the time to inflate them.
pub async fn read_body<S>(req: &HttpRequest, payload: S, limit: usize) -> Result<BytesMut, ApiError>
where
    S: futures_util::Stream<Item = Result<actix_web::web::Bytes, actix_web::error::PayloadError>>
        + Unpin,
{
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    if declared.is_some_and(|n| n > limit) {
        return Err(ApiError::BodyTooLarge { limit });
    }
    let mut body = BytesMut::with_capacity(declared.unwrap_or(0).min(limit));
    let mut payload = payload;
    while let Some(chunk) = payload.next().await {
        let chunk =
            chunk.map_err(|e| ApiError::BodyFormat(format!("the body could not be read: {e}")))?;
        if body.len() + chunk.len() > limit {
            return Err(ApiError::BodyTooLarge { limit });
        }
        body.extend_from_slice(&chunk);
    }
    let Some(packing) = Packing::of(req) else {
        return Ok(body);
    };
    // Inflating up to `limit` (megabytes for a measurement) is CPU work for the blocking pool,
    // not for the worker that serves other requests.
    actix_web::web::block(move || packing.inflate(&body, limit))
        .await
        .map_err(|e| ApiError::Internal(anyhow::anyhow!("inflating a request body: {e}")))?
}

/// A `Content-Encoding` the API unpacks. Any other value leaves the body as it came, which then
/// fails to parse as JSON (code 22), as before.
#[derive(Debug, Clone, Copy)]
enum Packing {
    Gzip,
    /// HTTP's `deflate` is the zlib format (RFC 9110 §8.4.1.2).
    Deflate,
}

impl Packing {
    fn of(req: &HttpRequest) -> Option<Packing> {
        let value = req.headers().get(header::CONTENT_ENCODING)?.to_str().ok()?;
        let value = value.trim();
        if value.eq_ignore_ascii_case("gzip") {
            Some(Packing::Gzip)
        } else if value.eq_ignore_ascii_case("deflate") {
            Some(Packing::Deflate)
        } else {
            None
        }
    }

    /// The unpacked body, or 413 as soon as it grows past `limit`.
    fn inflate(self, packed: &[u8], limit: usize) -> Result<BytesMut, ApiError> {
        use std::io::Read;
        let reader: Box<dyn Read + '_> = match self {
            Packing::Gzip => Box::new(flate2::read::GzDecoder::new(packed)),
            Packing::Deflate => Box::new(flate2::read::ZlibDecoder::new(packed)),
        };
        let mut body = Vec::new();
        // One byte more than allowed tells "exactly at the limit" from "over it".
        reader
            .take(limit as u64 + 1)
            .read_to_end(&mut body)
            .map_err(|e| ApiError::BodyFormat(format!("the body could not be read: {e}")))?;
        if body.len() > limit {
            return Err(ApiError::BodyTooLarge { limit });
        }
        Ok(bytes::Bytes::from(body).into())
    }
}

/// Whether the request declares a JSON body (or no content type at all).
pub fn is_json(req: &HttpRequest) -> bool {
    match req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
    {
        None => true,
        Some(value) => {
            let essence = value
                .split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase();
            essence == "application/json"
                || (essence.starts_with("application/") && essence.ends_with("+json"))
        }
    }
}

/// Parses a JSON body into `T` with the contract's error codes.
pub fn parse_json<T: DeserializeOwned>(body: &[u8]) -> Result<T, ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err(ApiError::EmptyBody);
    }
    let value: serde_json::Value = serde_json::from_slice(body)
        .map_err(|e| ApiError::BodyFormat(format!("the body is not valid JSON: {e}")))?;
    if let Some(path) = nul_path(&value, String::new()) {
        // PostgreSQL text cannot hold NUL; refuse it for every database alike.
        return Err(ApiError::FieldFormat(format!(
            "`{path}` must not contain NUL characters"
        )));
    }
    // The body is read straight into `T` (keeping the order of its keys); only when that
    // fails is it read again through serde-value, whose error names a missing field by its
    // kind (`MissingField`) rather than by the wording of a message.
    serde_path_to_error::deserialize::<_, T>(value).map_err(|first| {
        let again = serde_json::from_slice::<serde_value::Value>(body).map(|v| {
            serde_path_to_error::deserialize::<_, T>(serde_value::ValueDeserializer::new(v))
        });
        let Ok(Err(err)) = again else {
            return ApiError::FieldFormat(first.to_string());
        };
        let path = err.path().to_string();
        let at = |field: &str| {
            if path == "." {
                field.to_owned()
            } else {
                format!("{path}.{field}")
            }
        };
        match err.into_inner() {
            serde_value::DeserializerError::MissingField(field) => {
                ApiError::MissingField(format!("missing required field `{}`", at(field)))
            }
            inner if path == "." => ApiError::FieldFormat(inner.to_string()),
            inner => ApiError::FieldFormat(format!("`{path}`: {inner}")),
        }
    })
}

/// The path of the first string (key or value) holding a NUL character.
fn nul_path(value: &serde_json::Value, path: String) -> Option<String> {
    use serde_json::Value;
    let join = |key: &str| {
        if path.is_empty() {
            key.to_owned()
        } else {
            format!("{path}.{key}")
        }
    };
    match value {
        Value::String(s) if s.contains('\0') => {
            Some(if path.is_empty() { "body".into() } else { path })
        }
        Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, v)| nul_path(v, format!("{path}[{i}]"))),
        Value::Object(map) => map.iter().find_map(|(k, v)| {
            if k.contains('\0') {
                Some(join(&k.replace('\0', "\\0")))
            } else {
                nul_path(v, join(k))
            }
        }),
        _ => None,
    }
}

impl<T: DeserializeOwned + 'static> FromRequest for ApiJson<T> {
    type Error = ApiError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, ApiError>>>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let req = req.clone();
        let payload = payload.take();
        Box::pin(async move {
            if !is_json(&req) {
                return Err(ApiError::BodyFormat(
                    "the body must be JSON (Content-Type: application/json)".into(),
                ));
            }
            let limit = req
                .app_data::<BodyLimit>()
                .map(|l| l.0)
                .unwrap_or(64 * 1024);
            let body = read_body(&req, payload, limit).await?;
            parse_json(&body).map(ApiJson)
        })
    }
}

/// The RQL query of the request's raw query string.
#[derive(Debug, Clone)]
pub struct Rql(pub rql::Query);

impl FromRequest for Rql {
    type Error = ApiError;
    type Future = std::future::Ready<Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        std::future::ready(
            rql::parse(req.query_string())
                .map(Rql)
                .map_err(ApiError::from),
        )
    }
}

/// Parses an id from a path segment (400 code 12 when malformed).
pub fn parse_id(text: &str) -> Result<Id, ApiError> {
    Ok(Id::parse(text)?)
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    fn packed(packing: Packing, plain: &[u8]) -> Vec<u8> {
        let level = flate2::Compression::default();
        match packing {
            Packing::Gzip => {
                let mut encoder = flate2::write::GzEncoder::new(Vec::new(), level);
                encoder.write_all(plain).unwrap();
                encoder.finish().unwrap()
            }
            Packing::Deflate => {
                let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), level);
                encoder.write_all(plain).unwrap();
                encoder.finish().unwrap()
            }
        }
    }

    #[test]
    fn inflation_stops_past_the_limit() {
        for packing in [Packing::Gzip, Packing::Deflate] {
            let bomb = packed(packing, &vec![b' '; 4 << 20]);
            assert!(bomb.len() < 8 << 10, "{} bytes", bomb.len());
            assert!(matches!(
                packing.inflate(&bomb, 1000),
                Err(ApiError::BodyTooLarge { limit: 1000 })
            ));
            let exact = packed(packing, &[b'x'; 1000]);
            assert_eq!(packing.inflate(&exact, 1000).unwrap().len(), 1000);
            let over = packed(packing, &[b'x'; 1001]);
            assert!(matches!(
                packing.inflate(&over, 1000),
                Err(ApiError::BodyTooLarge { .. })
            ));
            assert!(matches!(
                packing.inflate(b"not packed at all", 1000),
                Err(ApiError::BodyFormat(_))
            ));
        }
    }
}
