//! Bounded cost and checked input (issue 14): packed bodies inflate under the body limit, and
//! RQL caps its terms, list values and offset.

use std::io::Write as _;

use futures_util::stream;
use reqwest::Method;
use serde_json::json;
use tacho::domain::rql::{MAX_LIST_VALUES, MAX_OFFSET, MAX_QUERY_VALUES, MAX_TERMS};

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

/// Asserts an RQL error (400 code 19) whose message ends with `message`.
#[track_caller]
fn assert_rql_error(reply: &Reply, message: &str) {
    reply.assert_error(400, 19);
    let text = reply.body["message"].as_str().unwrap();
    assert!(text.ends_with(message), "{text}");
}

#[tokio::test]
async fn rql_queries_hold_at_most_100_terms() {
    let app = spawn_app().await;
    let admin = app.admin("admin").await;
    let conditions = |n: usize| vec!["activation=true"; n].join("&");
    let at_limit = format!("/users/v1?{}", conditions(MAX_TERMS));
    assert_eq!(
        app.get(&at_limit, &admin.token).await.assert_ok()["page"]["total"],
        1
    );
    let over = format!("/users/v1?{}", conditions(MAX_TERMS + 1));
    assert_rql_error(
        &app.get(&over, &admin.token).await,
        "too many terms: a query may hold at most 100 (conditions, sort keys and selected fields)",
    );
    let sorted = format!(
        "/users/v1?{}&sort({})",
        conditions(MAX_TERMS - 1),
        ["email", "id"].join(",")
    );
    assert_rql_error(
        &app.get(&sorted, &admin.token).await,
        "at most 100 (conditions, sort keys and selected fields)",
    );
}

#[tokio::test]
async fn rql_lists_hold_at_most_1000_values_and_a_query_10000() {
    let app = spawn_app().await;
    let admin = app.admin("admin").await;
    // One letter a value: the longest query here stays within a URI's 64 KiB.
    let names = |n: usize| vec!["x"; n].join(",");
    for op in ["in", "out"] {
        let at_limit = format!("/users/v1?{op}(first_name,({}))", names(MAX_LIST_VALUES));
        app.get(&at_limit, &admin.token).await.assert_ok();
        let over = format!(
            "/users/v1?{op}(first_name,({}))",
            names(MAX_LIST_VALUES + 1)
        );
        assert_rql_error(
            &app.get(&over, &admin.token).await,
            &format!("too many values: `{op}` takes at most 1000"),
        );
    }
    let fiql = format!("/users/v1?first_name=in=({})", names(MAX_LIST_VALUES + 1));
    assert_rql_error(
        &app.get(&fiql, &admin.token).await,
        "`in` takes at most 1000",
    );

    // Every value is a bind parameter: the most a query may hold run on either database.
    let full = format!("in(first_name,({}))", names(MAX_LIST_VALUES));
    let lists = [full.as_str(); MAX_QUERY_VALUES / MAX_LIST_VALUES].join("|");
    let page = app.get(&format!("/users/v1?{lists}"), &admin.token).await;
    assert_eq!(page.assert_ok()["page"]["total"], 0);
    let over = format!("/users/v1?{lists}|in(first_name,x)");
    assert_rql_error(
        &app.get(&over, &admin.token).await,
        "too many values: the `in` and `out` lists of a query may hold at most 10000 together",
    );
}

#[tokio::test]
async fn rql_offsets_are_at_most_100000() {
    let app = spawn_app().await;
    let admin = app.admin("admin").await;
    let deep = app
        .get(&format!("/groups/v1?limit(10,{MAX_OFFSET})"), &admin.token)
        .await;
    assert_eq!(
        deep.assert_ok()["page"],
        json!({"total": 0, "offset": MAX_OFFSET, "limit": 10})
    );
    for offset in [MAX_OFFSET + 1, u64::MAX] {
        let reply = app
            .get(&format!("/reports/v1?limit(10,{offset})"), &admin.token)
            .await;
        assert_rql_error(
            &reply,
            "offset too large: `limit` takes an offset of at most 100000",
        );
    }
}
