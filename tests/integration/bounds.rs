//! Bounded cost and checked input (issue 14): packed bodies inflate under the body limit.

use std::io::Write as _;

use futures_util::stream;
use reqwest::Method;

use crate::helpers::{Reply, TestApp, read, spawn_app};

const MEASUREMENTS: &str = "/data/v1/measurements/documents";

/// `size` bytes of JSON, almost all of them one string of zeros, gzipped: about 10 KB per
/// 10 MB, the shape of a "gzip bomb".
fn packed_zeros(prefix: &str, size: usize) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(prefix.as_bytes()).unwrap();
    encoder.write_all(b"\"").unwrap();
    let zeros = vec![b'0'; 1 << 20];
    let mut written = prefix.len() + 3;
    while written < size {
        let n = zeros.len().min(size - written);
        encoder.write_all(&zeros[..n]).unwrap();
        written += n;
    }
    encoder.write_all(b"\"}").unwrap();
    encoder.finish().unwrap()
}

/// Posts `packed` gzipped and chunked (no `Content-Length`), 8 KiB a chunk.
async fn post_chunked(app: &TestApp, path: &str, token: Option<&str>, packed: Vec<u8>) -> Reply {
    let chunks: Vec<Result<Vec<u8>, std::io::Error>> =
        packed.chunks(8 * 1024).map(|c| Ok(c.to_vec())).collect();
    let mut request = app
        .client
        .post(app.url(path))
        .header("Content-Type", "application/json")
        .header("Content-Encoding", "gzip")
        .body(reqwest::Body::wrap_stream(stream::iter(chunks)));
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    read(request.send().await.expect("request sent")).await
}

#[tokio::test]
async fn a_chunked_gzip_bomb_is_refused_as_too_large_and_the_server_stays_up() {
    let app = spawn_app().await;
    let user = app.user("ann").await;
    let limit = app.settings.max_measurement_bytes;
    let bomb = packed_zeros("{\"measurement_timestamp\":1,\"note\":", 50_000_000);
    assert!(bomb.len() < 100_000, "{} bytes packed", bomb.len());
    let reply = post_chunked(&app, MEASUREMENTS, Some(&user.token), bomb).await;
    reply.assert_error(413, 413);
    assert_eq!(
        reply.body["message"],
        format!("the body is larger than the limit of {limit} bytes")
    );

    // The account endpoints' smaller limit holds the same way, before any authentication.
    let bomb = packed_zeros("{\"first_name\":", 5_000_000);
    post_chunked(&app, "/users/v1/register", None, bomb)
        .await
        .assert_error(413, 413);
    // The token endpoint answers in its OAuth2 shape, with the same status.
    let bomb = packed_zeros("{\"grant_type\":", 5_000_000);
    let token = post_chunked(&app, "/auth/v2/oauth2/tokens", None, bomb).await;
    assert_eq!(token.status.as_u16(), 413);
    assert_eq!(token.body["exh_error"]["code"], 413);

    // Still serving: a packed body under the limit is read and stored.
    app.request(Method::GET, "/health/live", None, None)
        .await
        .assert_ok();
    let prefix = "{\"measurement_timestamp\":1,\"note\":";
    let fine = packed_zeros(prefix, 100_000);
    let stored = post_chunked(&app, MEASUREMENTS, Some(&user.token), fine).await;
    let note = stored.assert_ok()["data"]["note"].as_str().unwrap().len();
    assert_eq!(note, 100_000 - prefix.len() - 3);
}
