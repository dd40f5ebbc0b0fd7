//! The portal's static files, embedded in the binary and addressed by their content: each one's
//! address carries the first 12 hex digits of its SHA-256 (`/static/portal.1f2e3d4c5b6a.css`),
//! so a browser keeps it for a year (`immutable`), and an upgrade that changes a file changes
//! its address, so that no browser runs yesterday's CSS or JavaScript against today's pages.
//! The plain names still answer, revalidated each time, for pages rendered before an upgrade.

use std::collections::HashMap;
use std::sync::LazyLock;

use actix_web::HttpResponse;
use actix_web::http::header;
use actix_web::web::Path;
use sha2::{Digest, Sha256};

use super::error::WebError;

/// One embedded file.
struct Asset {
    name: &'static str,
    content_type: &'static str,
    body: &'static [u8],
}

const ASSETS: [Asset; 4] = [
    Asset {
        name: "htmx.min.js",
        content_type: "text/javascript; charset=utf-8",
        body: include_bytes!("../../../static/htmx.min.js"),
    },
    Asset {
        name: "portal.js",
        content_type: "text/javascript; charset=utf-8",
        body: include_bytes!("../../../static/portal.js"),
    },
    Asset {
        name: "export.js",
        content_type: "text/javascript; charset=utf-8",
        body: include_bytes!("../../../static/export.js"),
    },
    Asset {
        name: "portal.css",
        content_type: "text/css; charset=utf-8",
        body: include_bytes!("../../../static/portal.css"),
    },
];

/// Each file's name with its content hash before the extension: `portal.1f2e3d4c5b6a.css`.
fn hashed_name(asset: &Asset) -> String {
    let digest = hex::encode(Sha256::digest(asset.body));
    match asset.name.rsplit_once('.') {
        Some((stem, extension)) => format!("{stem}.{}.{extension}", &digest[..12]),
        None => format!("{}.{}", asset.name, &digest[..12]),
    }
}

/// The address of each file by its plain name, and each file by its hashed name.
struct Table {
    paths: HashMap<&'static str, String>,
    hashed: HashMap<String, &'static Asset>,
}

static TABLE: LazyLock<Table> = LazyLock::new(|| {
    let mut paths = HashMap::new();
    let mut hashed = HashMap::new();
    for asset in &ASSETS {
        let name = hashed_name(asset);
        paths.insert(asset.name, format!("/static/{name}"));
        hashed.insert(name, asset);
    }
    Table { paths, hashed }
});

/// The address pages link `name` (`portal.css`) by.
pub fn path(name: &str) -> &'static str {
    TABLE
        .paths
        .get(name)
        .map(String::as_str)
        .unwrap_or("/static/missing")
}

/// `GET /static/{name}`: a hashed name for a year, a plain name revalidated each time.
pub async fn serve(name: Path<String>) -> Result<HttpResponse, WebError> {
    let name = name.into_inner();
    let (asset, cache) = match TABLE.hashed.get(&name) {
        Some(asset) => (*asset, "public, max-age=31536000, immutable"),
        None => match ASSETS.iter().find(|a| a.name == name) {
            Some(asset) => (asset, "public, no-cache"),
            None => return Err(WebError::NotFound),
        },
    };
    Ok(HttpResponse::Ok()
        .content_type(asset.content_type)
        .insert_header((header::CACHE_CONTROL, cache))
        .body(asset.body))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_has_an_address_that_changes_with_its_content() {
        for asset in &ASSETS {
            let address = path(asset.name);
            let digest = hex::encode(Sha256::digest(asset.body));
            assert!(address.contains(&digest[..12]), "{address}");
            assert!(address.starts_with("/static/"));
            let changed = Asset {
                body: b"other content",
                ..*asset
            };
            assert_ne!(hashed_name(&changed), hashed_name(asset));
        }
        assert_eq!(path("nothing.css"), "/static/missing");
    }
}
