//! `/files/v1/<token>`: stored PDFs behind capability tokens, no authentication. Tokens are
//! never logged (the request log names the route pattern) and never echoed in errors.

use std::sync::Arc;

use actix_web::http::header::{self, HeaderValue};
use actix_web::web::{Data, Path};
use actix_web::{HttpRequest, HttpResponse, get, route};
use bytes::Bytes;
use serde_json::json;

use super::error::{ApiError, ErrorBody};
use crate::domain::id::Id;
use crate::domain::time::rfc3339_millis;
use crate::file_cache::CachedFile;
use crate::routes::AppState;
use crate::store::Service;
use crate::store::entities::file;

/// How every PDF is served: never kept by a browser or proxy cache, since the access that
/// opened it (a token, a link, a login) may end at any moment and must end everywhere at once.
pub const NO_STORE: &str = "no-store";

/// Splits `<24-hex id>-<uuid v4>`; anything else is malformed (2605).
fn parse_token(token: &str) -> Result<(Id, &str), ApiError> {
    let (id, secret) = token.split_once('-').ok_or(ApiError::InvalidFileToken)?;
    let id = Id::parse(id).map_err(|_| ApiError::InvalidFileToken)?;
    let uuid = uuid::Uuid::parse_str(secret).map_err(|_| ApiError::InvalidFileToken)?;
    if uuid.get_version_num() != 4 || secret.len() != 36 {
        return Err(ApiError::InvalidFileToken);
    }
    Ok((id, secret))
}

/// The row of the file a token names, read from the database on every request (so that a
/// revoked token opens nothing at once, on every instance), with its contents from memory when
/// the file is hot and unchanged. A wrong secret is 404, compared in constant time with the
/// stored one.
async fn open(state: &AppState, token: &str) -> Result<Opened, ApiError> {
    let (id, secret) = parse_token(token)?;
    let secret = secret.to_ascii_lowercase();
    let file = state
        .store
        .file_by_id(&Service::Capability, &id)
        .await?
        .ok_or(ApiError::NotFound)?;
    if !state.file_tokens.opens(&file, &secret) {
        return Err(ApiError::NotFound);
    }
    Ok(match state.files.get(&id).filter(|hot| hot.file == file) {
        Some(hot) => Opened::Hot(hot),
        None => Opened::Cold(file),
    })
}

/// The file a token names for its download: from memory without a read when the file is hot
/// and the token opens the copy there (the download's record then checks, as it is written,
/// that the stored row still matches: see `Store::record_download`), else as [`open`] finds it.
async fn open_for_download(state: &AppState, token: &str) -> Result<Opened, ApiError> {
    let (id, secret) = parse_token(token)?;
    let secret = secret.to_ascii_lowercase();
    match state
        .files
        .get(&id)
        .filter(|hot| state.file_tokens.opens(&hot.file, &secret))
    {
        Some(hot) => Ok(Opened::Hot(hot)),
        None => open(state, token).await,
    }
}

/// A file found by its token: in memory with its contents, or a row just read.
enum Opened {
    Hot(Arc<CachedFile>),
    Cold(file::Model),
}

impl Opened {
    fn file(&self) -> &file::Model {
        match self {
            Opened::Hot(hot) => &hot.file,
            Opened::Cold(file) => file,
        }
    }
}

/// The file itself (GET and HEAD), with `ETag` and `If-None-Match` support.
#[utoipa::path(get, tag = "files",
    params(("token" = String, Path, description = "readFileToken: <24-hex file id>-<uuid v4>")),
    responses((status = 200, description = "the PDF", content_type = "application/pdf"), (status = 304, description = "unchanged"),
        (status = 400, description = "malformed token (2605)", body = ErrorBody), (status = 404, body = ErrorBody)))]
#[route("/files/v1/{token}/file", method = "GET", method = "HEAD")]
pub async fn download(
    state: Data<AppState>,
    req: HttpRequest,
    token: Path<String>,
) -> Result<HttpResponse, ApiError> {
    let opened = open_for_download(&state, &token).await?;
    if let Err(refused) = state
        .actions
        .record_file_download(opened.file(), crate::routes::client_network(&req))
        .await
    {
        // The copy in memory is older than a revocation: the next request reads the row.
        state.files.forget(&opened.file().id);
        return Err(refused.into());
    }
    match opened {
        Opened::Hot(hot) => respond(&state, &req, &hot.file, Some(&hot.contents), NO_STORE).await,
        Opened::Cold(file) => respond(&state, &req, &file, None, NO_STORE).await,
    }
}

/// A shared link (made in the portal): the PDF it grants while it is open, never kept by a
/// cache (`no-store`), since a revocation must hold at once. Unknown, revoked and expired links
/// are all 404: the error envelope for a program, and for a browser (which asks for HTML: the
/// person the link was sent to, a GP say) a page in its language saying to ask for a new one.
#[utoipa::path(get, tag = "files",
    params(("secret" = String, Path, description = "the shared link's secret")),
    responses((status = 200, description = "the PDF", content_type = "application/pdf"),
        (status = 404, description = "the link is unknown, revoked or expired: the error envelope, or for a client that accepts text/html a page saying so in its Accept-Language", body = ErrorBody)))]
#[route("/share/{secret}", method = "GET", method = "HEAD")]
pub async fn shared(
    state: Data<AppState>,
    req: HttpRequest,
    secret: Path<String>,
) -> Result<HttpResponse, ApiError> {
    let opened = if secret.len() > 64 {
        Err(ApiError::LinkClosed)
    } else {
        state
            .actions
            .open_shared_link(&secret, crate::routes::client_network(&req))
            .await
            .map_err(|err| match ApiError::from(err) {
                ApiError::NotFound => ApiError::LinkClosed,
                other => other,
            })
    };
    match opened {
        Ok(file) => serve(&state, &req, &file, NO_STORE).await,
        Err(ApiError::LinkClosed) if asks_for_html(&req) => {
            Ok(crate::routes::web::chrome::error_page_outside_portal(
                &req,
                actix_web::http::StatusCode::NOT_FOUND,
                "error-link-closed",
            ))
        }
        Err(other) => Err(other),
    }
}

/// Whether the client is a browser showing a page: it names HTML among what it accepts.
fn asks_for_html(req: &HttpRequest) -> bool {
    req.headers()
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|accept| accept.contains("text/html"))
}

/// A stored file as the answer: `ETag` (304 when the client has it), `cache_control`, no
/// referrer, and the contents with their type and name. The contents come from memory when
/// the file is hot, else from the storage (and are then kept in memory).
pub async fn serve(
    state: &AppState,
    req: &HttpRequest,
    file: &file::Model,
    cache_control: &'static str,
) -> Result<HttpResponse, ApiError> {
    // The row was just read by the caller: memory serves it only if it is the same file.
    let hot = state.files.get(&file.id).filter(|hot| hot.file == *file);
    respond(
        state,
        req,
        file,
        hot.as_ref().map(|hot| &hot.contents),
        cache_control,
    )
    .await
}

async fn respond(
    state: &AppState,
    req: &HttpRequest,
    file: &file::Model,
    hot: Option<&Bytes>,
    cache_control: &'static str,
) -> Result<HttpResponse, ApiError> {
    let etag = format!("\"{}\"", file.sha256);
    let matches = req
        .headers()
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(',')
                .any(|candidate| candidate.trim() == etag || candidate.trim() == "*")
        });
    let mut response = if matches {
        HttpResponse::NotModified()
    } else {
        HttpResponse::Ok()
    };
    response
        .insert_header((header::ETAG, etag))
        .insert_header((header::CACHE_CONTROL, cache_control))
        .insert_header((header::REFERRER_POLICY, "no-referrer"));
    if matches {
        return Ok(response.finish());
    }
    let contents = match hot {
        Some(contents) => contents.clone(),
        None => {
            let contents = state.storage.get(&file.cache_key).await?.ok_or_else(|| {
                ApiError::Internal(anyhow::anyhow!("stored file {} has no contents", file.id))
            })?;
            state.files.insert(file.clone(), Bytes::from(contents))
        }
    };
    let disposition = format!(
        "inline; filename=\"{}\"",
        file.name.replace(['"', '\\'], "")
    );
    Ok(response
        .insert_header((header::CONTENT_TYPE, file.mimetype.as_str()))
        .insert_header((
            header::CONTENT_DISPOSITION,
            HeaderValue::from_str(&disposition).unwrap_or(HeaderValue::from_static("inline")),
        ))
        .body(contents))
}

/// Name, type, size and creation time of a file.
#[utoipa::path(tag = "files",
    params(("token" = String, Path, description = "readFileToken")),
    responses((status = 200, description = "{name, mimetype, size, creationTimestamp}", body = Object),
        (status = 400, body = ErrorBody), (status = 404, body = ErrorBody)))]
#[get("/files/v1/{token}/details")]
pub async fn details(state: Data<AppState>, token: Path<String>) -> Result<HttpResponse, ApiError> {
    let opened = open(&state, &token).await?;
    let file = opened.file();
    Ok(HttpResponse::Ok()
        .insert_header((header::REFERRER_POLICY, "no-referrer"))
        .json(json!({
            "name": file.name,
            "mimetype": file.mimetype,
            "size": file.size,
            "creationTimestamp": rfc3339_millis(file.creation_timestamp),
        })))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_must_be_an_id_and_a_v4_uuid() {
        let good = "5f3c2b1a0d9e8f7a6b5c4d3e-2c1f1e0a-7b6c-4d5e-8f90-a1b2c3d4e5f6";
        assert!(parse_token(good).is_ok());
        for bad in [
            "",
            "nope",
            "5f3c2b1a0d9e8f7a6b5c4d3e",
            "5f3c2b1a0d9e8f7a6b5c4d3e-",
            "zz3c2b1a0d9e8f7a6b5c4d3e-2c1f1e0a-7b6c-4d5e-8f90-a1b2c3d4e5f6",
            "5f3c2b1a0d9e8f7a6b5c4d3e-2c1f1e0a-7b6c-1d5e-8f90-a1b2c3d4e5f6",
            "5f3c2b1a0d9e8f7a6b5c4d3e-2c1f1e0a7b6c4d5e8f90a1b2c3d4e5f6",
        ] {
            assert!(parse_token(bad).is_err(), "{bad}");
        }
    }
}
