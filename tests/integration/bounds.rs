//! Bounded cost and checked input (issue 14): packed bodies inflate under the body limit, RQL
//! caps its terms, list values and offset, and no timestamp a client sends reaches time
//! arithmetic unchecked.

use std::io::Write as _;

use futures_util::stream;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use reqwest::Method;
use serde_json::json;
use tacho::domain::rql::{MAX_LIST_VALUES, MAX_OFFSET, MAX_QUERY_VALUES, MAX_TERMS};
use tacho::domain::time::MAX_MILLIS;

use crate::helpers::{Reply, TestApp, TestUser, World, read, spawn_app};

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

/// What [`probe`] needs: who asks, about whom, in which group.
struct Probe {
    admin: TestUser,
    patient: TestUser,
    group: String,
}

/// Every list with its timestamp fields, as RQL names them.
const TIMESTAMP_FIELDS: &[(&str, &[&str])] = &[
    ("/users/v1", &["creation_timestamp", "update_timestamp"]),
    ("/profiles/v1", &["creation_timestamp", "update_timestamp"]),
    ("/groups/v1", &["creation_timestamp"]),
    (
        MEASUREMENTS,
        &[
            "creationTimestamp",
            "updateTimestamp",
            "statusChangedTimestamp",
            "data.measurement_timestamp",
        ],
    ),
    (
        "/data/v1/measurement-reports/documents",
        &["creationTimestamp", "updateTimestamp"],
    ),
    (
        "/reports/v1",
        &[
            "creation_timestamp",
            "period_start_timestamp",
            "period_end_timestamp",
        ],
    ),
];

/// Sends `x` in every timestamp a client can send: bodies, profile dates, RQL filters. The
/// first answer of 500 or above is the error.
async fn probe(app: &TestApp, p: &Probe, x: i64) -> Result<(), String> {
    let mut asked: Vec<(String, Reply)> = Vec::new();
    let admin = &p.admin.token;
    let uid = &p.patient.id;
    for body in [
        json!({"user_id": uid, "period_end_timestamp": x}),
        json!({"user_id": uid, "period_start_timestamp": x}),
        json!({"user_id": uid, "period_start_timestamp": x, "period_end_timestamp": x}),
        json!({"user_id": uid, "period_start_timestamp": 0, "period_end_timestamp": x}),
        json!({"user_id": uid, "period_start_timestamp": x, "period_end_timestamp": 86_400_000}),
    ] {
        let reply = app.post("/reports/v1", admin, body.clone()).await;
        asked.push((format!("POST /reports/v1 {body}"), reply));
    }
    for data in [
        json!({"measurement_timestamp": x}),
        json!({"measurement_timestamp": 1, "time": [x, 0, x],
               "quadrants": [[{"y": [1, 2, 3], "u": [1, 2, 3], "v": [1, 2, 3]}]]}),
    ] {
        let reply = app.post(MEASUREMENTS, &p.patient.token, data.clone()).await;
        asked.push((format!("POST {MEASUREMENTS} {data}"), reply));
    }
    let path = format!("/users/v1/{uid}/patient_enlistments");
    let body = json!({"group_id": p.group, "expiry_timestamp": x});
    let reply = app.post(&path, admin, body.clone()).await;
    asked.push((format!("POST {path} {body}"), reply));
    let profile = format!("/profiles/v1?id={uid}");
    for birthday in [
        json!(x),
        json!({"year": x, "month": 1, "day": 1}),
        json!({"year": 1980, "month": x, "day": 1}),
        json!({"year": 1980, "month": 1, "day": x}),
    ] {
        let body = json!({ "birthday": birthday });
        let reply = app.put(&profile, &p.patient.token, body.clone()).await;
        asked.push((format!("PUT {profile} {body}"), reply));
    }
    for (list, fields) in TIMESTAMP_FIELDS {
        for field in *fields {
            for query in [
                format!("gt({field},{x})"),
                format!("eq({field},epoch:{x})"),
                format!("{field}<=number:{x}"),
            ] {
                let path = format!("{list}?{query}");
                let reply = app.get(&path, admin).await;
                asked.push((format!("GET {path}"), reply));
            }
        }
    }
    match asked.into_iter().find(|(_, r)| r.status.is_server_error()) {
        Some((what, reply)) => Err(format!("{what} answered {}: {}", reply.status, reply.body)),
        None => Ok(()),
    }
}

/// The extremes every run sends, before the random ones.
const EXTREMES: [i64; 10] = [
    i64::MIN,
    i64::MIN + 1,
    -(1 << 53),
    -1,
    0,
    1 << 53,
    MAX_MILLIS,
    MAX_MILLIS + 1,
    i64::MAX - 1,
    i64::MAX,
];

#[test]
fn no_timestamp_a_client_sends_answers_a_server_error() {
    // proptest runs each case synchronously; the server and the requests run on this runtime.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let (app, p) = runtime.block_on(async {
        let app = spawn_app().await;
        let world = World::new(&app).await;
        let p = Probe {
            admin: world.admin.clone(),
            patient: world.patient.clone(),
            group: world.group_a.clone(),
        };
        (app, p)
    });
    for x in EXTREMES {
        runtime.block_on(probe(&app, &p, x)).unwrap();
    }
    let mut runner = TestRunner::new(Config {
        cases: 8,
        failure_persistence: None,
        ..Config::default()
    });
    let values = prop_oneof![
        any::<i64>(),
        -(1i64 << 53)..(1i64 << 53),
        0..=MAX_MILLIS,
        prop::sample::select(EXTREMES.to_vec()),
    ];
    runner
        .run(&values, |x| {
            runtime
                .block_on(probe(&app, &p, x))
                .map_err(TestCaseError::fail)
        })
        .unwrap();
    drop(app);
}

#[tokio::test]
async fn timestamps_out_of_range_are_validation_errors() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let (admin, uid) = (&world.admin.token, &world.patient.id);
    for x in [i64::MIN, -1, MAX_MILLIS + 1, i64::MAX] {
        for body in [
            json!({"user_id": uid, "period_end_timestamp": x}),
            json!({"user_id": uid, "period_start_timestamp": x}),
            json!({"user_id": uid, "period_start_timestamp": 0, "period_end_timestamp": x}),
        ] {
            let reply = app.post("/reports/v1", admin, body.clone()).await;
            reply.assert_error(400, 15);
        }
        let upload = json!({"measurement_timestamp": x});
        let reply = app.post(MEASUREMENTS, &world.patient.token, upload).await;
        reply.assert_error(400, 15);
        let enlist = json!({"group_id": world.group_a, "expiry_timestamp": x});
        let path = format!("/users/v1/{uid}/patient_enlistments");
        app.post(&path, admin, enlist).await.assert_error(400, 15);
    }
    let reply = app
        .post(
            "/reports/v1",
            admin,
            json!({"user_id": uid, "period_end_timestamp": i64::MIN}),
        )
        .await;
    assert_eq!(
        reply.body["message"],
        format!(
            "`period_end_timestamp` must be epoch milliseconds from 0 (1970) to {MAX_MILLIS} (the end of 9999)"
        )
    );
    // The last instant both dialects can write is still a measurement's time.
    let last = json!({"measurement_timestamp": MAX_MILLIS});
    app.post(MEASUREMENTS, &world.patient.token, last)
        .await
        .assert_ok();
}
