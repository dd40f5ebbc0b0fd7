//! The `tacho` command: migrate, user add, the demo seed, `analyse` and `measurements
//! reanalyse`.

use std::io::Write;
use std::process::{Command, Output, Stdio};
use tacho::config::ExposeSecret;

use sea_orm::{ActiveModelTrait, EntityTrait, IntoActiveModel, Set};
use serde_json::{Value, json};
use tacho::demo;
use tacho::domain::id::Id;
use tacho::domain::measurement::Status;
use tacho::store::entities::measurement;

use crate::helpers::{TestApp, World, fixture, regular_rr, same_json, spawn_app};

fn tacho(dir: &std::path::Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_tacho"))
        .args(args)
        .env("TACHO_DATA_DIR", dir)
        .env_remove("TACHO_DATABASE_URL")
        .env("TACHO_LOG", "warn")
        .output()
        .expect("tacho runs")
}

#[test]
fn migrate_and_user_add_work_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let migrated = tacho(dir.path(), &["migrate"]);
    assert!(
        migrated.status.success(),
        "{}",
        String::from_utf8_lossy(&migrated.stderr)
    );
    let add = [
        "user",
        "add",
        "--email",
        "Boss@Tacho.test",
        "--password",
        "a long enough phrase",
        "--first-name",
        "Bo",
        "--last-name",
        "Ss",
        "--admin",
    ];
    let added = tacho(dir.path(), &add);
    assert!(
        added.status.success(),
        "{}",
        String::from_utf8_lossy(&added.stderr)
    );
    assert!(String::from_utf8_lossy(&added.stdout).contains("<boss@tacho.test> (admin)"));
    let again = tacho(dir.path(), &add);
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("already registered"));
    let bad = tacho(
        dir.path(),
        &[
            "user",
            "add",
            "--email",
            "x",
            "--password",
            "a long enough phrase",
            "--first-name",
            "B",
            "--last-name",
            "S",
        ],
    );
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("email"));
    // A common password is refused here as at every door.
    let common = tacho(
        dir.path(),
        &[
            "user",
            "add",
            "--email",
            "weak@tacho.test",
            "--password",
            "password123",
            "--first-name",
            "W",
            "--last-name",
            "K",
        ],
    );
    assert!(!common.status.success());
    assert!(String::from_utf8_lossy(&common.stderr).contains("too easy to guess"));
}

#[tokio::test]
async fn the_demo_seed_is_idempotent_and_logs_in() {
    let app = spawn_app().await;
    let first = demo::seed(&app.store, app.operator.auth.hasher())
        .await
        .unwrap();
    let second = demo::seed(&app.store, app.operator.auth.hasher())
        .await
        .unwrap();
    assert_eq!(first.len(), 7);
    assert_eq!(first.len(), second.len());
    let token = app.demo_token("admin@tacho.test").await;
    let users = app.get("/users/v1", &token).await;
    assert_eq!(
        users.body["page"]["total"], 7,
        "seeding twice creates nobody twice"
    );
    assert_eq!(app.get("/groups/v1", &token).await.body["page"]["total"], 2);
    let physician_token = app.demo_token("dr.peeters@tacho.test").await;
    let patients = app
        .get("/profiles/v1?sort(country)", &physician_token)
        .await;
    assert_eq!(
        patients.body["page"]["total"], 3,
        "two patients and the physician's own profile"
    );
    assert_eq!(patients.body["data"][1]["country"], "BE");
}

/// `tacho serve --demo` as a separate process with JSON logs on a fresh SQLite database in
/// `dir`: the child (ended when dropped), its log lines as they come, the lines read up to the
/// one naming its port, and the port.
pub(crate) fn serve_demo(
    dir: &std::path::Path,
) -> (
    crate::helpers::Spawned,
    std::sync::mpsc::Receiver<String>,
    Vec<String>,
    u64,
) {
    use std::io::{BufRead, BufReader};

    let mut child = crate::helpers::Spawned::start(
        Command::new(env!("CARGO_BIN_EXE_tacho"))
            .args(["serve", "--demo"])
            .env("TACHO_DATA_DIR", dir)
            .env_remove("TACHO_DATABASE_URL")
            .env("TACHO_ADDR", "127.0.0.1:0")
            .env("TACHO_LOG_FORMAT", "json")
            .env("TACHO_LOG", "info")
            .stdout(Stdio::piped())
            .stderr(Stdio::null()),
    )
    .expect("tacho serve starts");
    let stdout = child.stdout.take().unwrap();
    let (lines_tx, lines_rx) = std::sync::mpsc::channel::<String>();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if lines_tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut log = Vec::new();
    loop {
        let line = lines_rx
            .recv_timeout(std::time::Duration::from_secs(60))
            .expect("server logs its port");
        let port = serde_json::from_str::<Value>(&line)
            .ok()
            .and_then(|v| v["port"].as_u64());
        log.push(line);
        if let Some(port) = port {
            return (child, lines_rx, log, port);
        }
    }
}

/// Logs in as the demo patient Anna on the server at `base` and returns her access token and
/// the ids of her measurements that `rql` (a query string, `?…`, or empty) selects.
pub(crate) async fn demo_patient(
    client: &reqwest::Client,
    base: &str,
    rql: &str,
) -> (String, Vec<String>) {
    let login: Value = client
        .post(format!("{base}/auth/v2/oauth2/tokens"))
        .json(
            &json!({"grant_type": "password", "username": "anna@tacho.test",
            "password": demo::DEMO_PASSWORD}),
        )
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let token = login["access_token"].as_str().unwrap().to_owned();
    let listed: Value = client
        .get(format!("{base}/data/v1/measurements/documents{rql}"))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let ids = listed["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap().to_owned())
        .collect();
    (token, ids)
}

/// Runs `tacho serve` as a separate process with JSON logs, makes requests that carry
/// secrets, and checks that none of them reaches the log.
#[tokio::test]
async fn logs_name_routes_and_never_secrets() {
    let dir = tempfile::tempdir().unwrap();
    let (mut child, lines_rx, mut log, port) = serve_demo(dir.path());
    let base = format!("http://127.0.0.1:{port}");
    let client = reqwest::Client::new();
    let password = demo::DEMO_PASSWORD;
    let login: serde_json::Value = client
        .post(format!("{base}/auth/v2/oauth2/tokens"))
        .json(&serde_json::json!({"grant_type": "password", "username": "anna@tacho.test", "password": password}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let access = login["access_token"].as_str().unwrap().to_owned();
    let refresh = login["refresh_token"].as_str().unwrap().to_owned();
    client
        .get(format!("{base}/users/v1/me"))
        .bearer_auth(&access)
        .send()
        .await
        .unwrap();
    client
        .get(format!("{base}/users/v1?eq(email,anna%40tacho.test)"))
        .bearer_auth(&access)
        .send()
        .await
        .unwrap();
    client
        .post(format!("{base}/auth/v2/oauth2/tokens"))
        .json(&serde_json::json!({"grant_type": "refresh_token", "refresh_token": refresh}))
        .send()
        .await
        .unwrap();
    client
        .post(format!("{base}/auth/v2/oauth2/tokens"))
        .json(&serde_json::json!({"grant_type": "password", "username": "anna@tacho.test", "password": "wrong-secret-42"}))
        .send()
        .await
        .unwrap();
    client
        .get(format!("{base}/users/v1/me"))
        .bearer_auth("stolen-token-value")
        .send()
        .await
        .unwrap();
    child.kill().ok();
    child.wait().ok();
    while let Ok(line) = lines_rx.recv_timeout(std::time::Duration::from_millis(500)) {
        log.push(line);
    }
    // `--demo` prints its logins on purpose; the log is the JSON lines.
    let log: Vec<String> = log.into_iter().filter(|l| l.starts_with('{')).collect();
    let text = log.join("\n");
    for secret in [
        password,
        "wrong-secret-42",
        &access,
        &refresh,
        "stolen-token-value",
        "anna%40tacho.test",
        "eq(email",
    ] {
        assert!(!text.contains(secret), "the log contains `{secret}`");
    }
    let requests: Vec<serde_json::Value> = log
        .iter()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["message"] == "request")
        .collect();
    assert!(requests.len() >= 6, "one line per request: {text}");
    assert!(
        requests
            .iter()
            .any(|r| r["route"] == "/users/v1/me" && r["status"] == 200)
    );
    assert!(
        requests
            .iter()
            .all(|r| r["request_id"].is_string() || r["span"]["request_id"].is_string()),
        "{text}"
    );
}

/// SIGTERM to `tacho serve` while a PDF is being made: the report in flight is answered
/// (200, a PDF behind its token), the process stops accepting, and it exits by itself,
/// successfully, saying so in its log.
#[tokio::test]
async fn sigterm_lets_the_running_request_finish_and_exits() {
    let dir = tempfile::tempdir().unwrap();
    let (mut child, lines_rx, _, port) = serve_demo(dir.path());
    let base = format!("http://127.0.0.1:{port}");
    let client = reqwest::Client::new();
    let (token, measurements) = demo_patient(&client, &base, "").await;
    let measurement = measurements[0].clone();
    let in_flight = tokio::spawn({
        let (client, base, token) = (client.clone(), base.clone(), token.clone());
        async move {
            client
                .post(format!("{base}/data/v1/measurement-reports/documents"))
                .bearer_auth(&token)
                .json(&json!({"measurementId": measurement, "language": "de"}))
                .send()
                .await
        }
    });
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let answer = in_flight
        .await
        .unwrap()
        .expect("the request in flight is answered");
    assert_eq!(answer.status(), 200);
    let report: Value = answer.json().await.unwrap();
    assert!(report["data"]["readFileToken"].is_string(), "{report}");
    let mut exited = None;
    for _ in 0..300 {
        if let Some(status) = child.try_wait().unwrap() {
            exited = Some(status);
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let Some(status) = exited else {
        child.kill().ok();
        panic!("tacho serve did not exit within 30 s of SIGTERM");
    };
    assert!(status.success(), "{status}");
    let log: Vec<String> = lines_rx.try_iter().collect();
    assert!(
        log.iter().any(|l| l.contains("\"stopped\"")),
        "the log says it stopped: {log:?}"
    );
    assert!(
        client
            .get(format!("{base}/health/live"))
            .send()
            .await
            .is_err(),
        "nothing listens any more"
    );
}

/// Runs `tacho` with `args`, `stdin` as its input, outside any database.
fn tacho_reading(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tacho"))
        .args(args)
        .env("TACHO_LOG", "warn")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("tacho runs");
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    child.wait_with_output().unwrap()
}

/// The JSON `tacho analyse` printed, after checking it succeeded.
fn printed(output: &Output) -> Value {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("JSON on stdout")
}

fn fixture_path(name: &str) -> String {
    format!("{}/tests/fixtures/{name}.json", env!("CARGO_MANIFEST_DIR"))
}

/// A minute of finger PPG at `hz`: a systolic peak and a dicrotic wave per beat at `bpm`,
/// with a little sensor noise (fixed seed).
fn ppg(bpm: f64, hz: f64) -> Vec<(f64, f64)> {
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let period = 60_000.0 / bpm;
    (0..(60.0 * hz) as usize)
        .map(|i| {
            let t = i as f64 * 1000.0 / hz;
            let phase = (t % period) / period;
            let pulse = 40.0 * (-(phase - 0.2).powi(2) / 0.004).exp()
                + 15.0 * (-(phase - 0.5).powi(2) / 0.008).exp();
            (t, 100.0 + pulse + rng.random_range(-0.8..0.8))
        })
        .collect()
}

#[tokio::test]
async fn analyse_prints_what_an_upload_of_the_same_recording_gets() {
    let app = spawn_app().await;
    let user = app.user("ann").await;
    let path = "/data/v1/measurements/documents";
    for name in ["sinus_72", "irregular_af", "no_heartrate"] {
        let document = app.post(path, &user.token, fixture(name)).await;
        let data = &document.assert_ok()["data"];
        let wire = json!({
            "indicator": data["indicator"],
            "mostSevereLabel": data["mostSevereLabel"],
            "af": data["af"],
            "analysis": data["analysis"],
        });
        let from_file = printed(&tacho_reading(&["analyse", &fixture_path(name)], b""));
        assert!(
            same_json(&from_file, &wire),
            "{name}: as the wire writes it"
        );
        // A whole document (as GET answers it) reads its `data`; `-` reads stdin.
        let saved = serde_json::to_vec(&document.body).unwrap();
        let from_stdin = printed(&tacho_reading(&["analyse", "-"], &saved));
        assert!(same_json(&from_stdin, &wire), "{name}");
    }
}

#[test]
fn analyse_reads_csv_with_times_or_a_rate() {
    let series = ppg(72.0, 100.0);
    let mut with_times = String::from("time_ms,value\n");
    for (t, v) in &series {
        with_times.push_str(&format!("{t},{v:.3}\n"));
    }
    let values: String = ppg(72.0, 50.0)
        .iter()
        .map(|(_, v)| format!("{v:.3}\n"))
        .collect();
    for (args, csv) in [
        (&["analyse", "-"][..], with_times.as_bytes()),
        (&["analyse", "--rate", "50", "-"][..], values.as_bytes()),
    ] {
        let result = printed(&tacho_reading(args, csv));
        let analysis = &result["analysis"];
        assert_eq!(analysis["source"], "ppg", "{args:?}");
        let bpm = analysis["heart_rate"].as_f64().expect("a heart rate");
        assert!((bpm - 72.0).abs() <= 2.0, "{args:?}: {bpm}");
        assert_eq!(result["indicator"], "normal", "{args:?}");
        assert_eq!(result["af"], 0);
    }
}

#[test]
fn analyse_refuses_what_it_cannot_read_and_prints_failed_analyses() {
    let missing = tacho_reading(&["analyse", "/nonexistent/recording.json"], b"");
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("/nonexistent/recording.json"));
    assert!(missing.stdout.is_empty());
    for (args, input) in [
        (&["analyse", "-"][..], &b"time_ms,value\n0,1\nten,2\n"[..]),
        (&["analyse", "-"][..], &b"1\n2\n3\n"[..]),
        (&["analyse", "--rate", "0", "-"][..], &b"1\n2\n3\n"[..]),
        (&["analyse", "-"][..], &b"{\"rr_intervals\": ["[..]),
        (&["analyse", "-"][..], &b"0,1\n0,2\n"[..]),
    ] {
        let output = tacho_reading(args, input);
        assert_eq!(
            output.status.code(),
            Some(2),
            "{}",
            String::from_utf8_lossy(input)
        );
        assert!(!output.stderr.is_empty());
    }
    // A recording that cannot be analysed is a result, not an error.
    let failed = printed(&tacho_reading(
        &["analyse", &fixture_path("no_heartrate")],
        b"",
    ));
    assert_eq!(failed["indicator"], "quality");
    assert!(
        !failed["analysis"]["abnormalities"]
            .as_array()
            .unwrap()
            .is_empty()
    );
}

/// Runs `tacho measurements reanalyse` on the test app's database; its summary line.
fn reanalyse(app: &TestApp, args: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_tacho"))
        .args(["measurements", "reanalyse"])
        .args(args)
        .env(
            "TACHO_DATABASE_URL",
            app.settings.database_url.expose_secret(),
        )
        .env("TACHO_LOG", "warn")
        .output()
        .expect("tacho runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}

async fn row(app: &TestApp, id: &str) -> measurement::Model {
    measurement::Entity::find_by_id(Id::parse(id).expect("an id"))
        .one(app.store.connection())
        .await
        .unwrap()
        .expect("stored")
}

/// Overwrites a stored measurement's `data` (and status), as an older Tacho left it.
async fn store_as(app: &TestApp, id: &str, data: Value, status: Status) {
    let mut model = row(app, id).await.into_active_model();
    model.data = Set(data.to_string());
    model.status = Set(status);
    model.update(app.store.connection()).await.unwrap();
}

fn times(model: &measurement::Model) -> (i64, i64) {
    (model.update_timestamp, model.status_changed_timestamp)
}

#[tokio::test]
async fn reanalyse_rewrites_only_what_changed() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let path = "/data/v1/measurements/documents";
    let mut ids = Vec::new();
    let mut documents = Vec::new();
    let intervals =
        json!({"measurement_timestamp": 1_795_400_000_000_i64, "rr_intervals": regular_rr(60.0)});
    for payload in [
        fixture("sinus_72"),
        fixture("irregular_af"),
        fixture("no_heartrate"),
        intervals,
    ] {
        let document = app.post(path, &world.patient.token, payload).await;
        ids.push(document.assert_ok()["id"].as_str().unwrap().to_owned());
        documents.push(document.body);
    }
    let (sinus, af, failed, rr) = (&ids[0], &ids[1], &ids[2], &ids[3]);
    let mut before = Vec::new();
    for id in &ids {
        before.push(row(&app, id).await);
    }

    // What the server stored is what the analysis says: nothing to do.
    let first = reanalyse(&app, &[]);
    assert!(
        first.starts_with("4 measurements examined, 0 changed, 1 failed"),
        "{first}"
    );
    for (id, old) in ids.iter().zip(&before) {
        assert_eq!(row(&app, id).await, *old, "untouched");
    }

    // Results of an older algorithm: one with another version stamp, one that had failed.
    let mut stale = documents[1]["data"].clone();
    stale["analysis"]["version"] = json!("0.9.0");
    store_as(&app, af, stale, Status::Analyzed).await;
    let mut old_failure = documents[0]["data"].clone();
    old_failure["indicator"] = json!("quality");
    old_failure["mostSevereLabel"] = json!({"key": "quality_too_low", "color": "grey"});
    old_failure["analysis"] = documents[2]["data"]["analysis"].clone();
    store_as(&app, sinus, old_failure, Status::AnalysisFailed).await;
    // A reviewed measurement whose stored recording no longer gives a result keeps its review.
    let review = app
        .put(
            &format!("{path}/{rr}"),
            &world.staff_a.token,
            json!({"label": "normal"}),
        )
        .await;
    review.assert_ok();
    let mut emptied = row(&app, rr).await.data_object();
    emptied.insert("rr_intervals".into(), json!([]));
    store_as(&app, rr, Value::Object(emptied), Status::Reviewed).await;
    let mut stale_rows = Vec::new();
    for id in &ids {
        stale_rows.push(row(&app, id).await);
    }

    let summary = reanalyse(&app, &[]);
    assert!(
        summary.starts_with("4 measurements examined, 3 changed, 2 failed"),
        "{summary}"
    );
    let af_now = row(&app, af).await;
    assert_eq!(
        af_now.data_object()["analysis"]["version"],
        tacho::analysis::VERSION
    );
    assert!(same_json(
        &Value::Object(af_now.data_object()),
        &documents[1]["data"]
    ));
    assert!(af_now.update_timestamp > stale_rows[1].update_timestamp);
    assert_eq!(
        af_now.status_changed_timestamp,
        stale_rows[1].status_changed_timestamp
    );

    let sinus_now = row(&app, sinus).await;
    assert_eq!(sinus_now.status, Status::Analyzed);
    assert!(same_json(
        &Value::Object(sinus_now.data_object()),
        &documents[0]["data"]
    ));
    assert!(sinus_now.update_timestamp > stale_rows[0].update_timestamp);
    assert!(sinus_now.status_changed_timestamp > stale_rows[0].status_changed_timestamp);
    assert_eq!(
        (
            sinus_now.heart_rate,
            sinus_now.result.as_deref(),
            sinus_now.indicator.as_deref()
        ),
        (before[0].heart_rate, Some("regular"), Some("normal"))
    );

    let rr_now = row(&app, rr).await;
    assert_eq!(rr_now.status, Status::Reviewed);
    assert_eq!(rr_now.indicator.as_deref(), Some("quality"));
    assert_eq!(rr_now.heart_rate, None);
    assert_eq!(rr_now.data_object()["review"]["label"], "normal");
    assert!(rr_now.update_timestamp > stale_rows[3].update_timestamp);
    assert_eq!(
        rr_now.status_changed_timestamp,
        stale_rows[3].status_changed_timestamp
    );

    assert_eq!(
        times(&row(&app, failed).await),
        times(&before[2]),
        "unchanged"
    );

    // A second run finds nothing left to do and touches nothing.
    let mut after = Vec::new();
    for id in &ids {
        after.push(row(&app, id).await);
    }
    let again = reanalyse(&app, &[]);
    assert!(
        again.starts_with("4 measurements examined, 0 changed, 2 failed"),
        "{again}"
    );
    for (id, old) in ids.iter().zip(&after) {
        assert_eq!(row(&app, id).await, *old);
    }

    // --since limits the run to the measurements taken from then on.
    let since = documents[1]["data"]["measurement_timestamp"]
        .as_i64()
        .unwrap();
    let taken_since = documents
        .iter()
        .filter(|d| d["data"]["measurement_timestamp"].as_i64().unwrap() >= since)
        .count();
    assert!((1..4).contains(&taken_since));
    let limited = reanalyse(&app, &["--since", &since.to_string()]);
    assert!(
        limited.starts_with(&format!("{taken_since} measurements examined, 0 changed")),
        "{limited}"
    );
    assert!(reanalyse(&app, &["--since", "2999-01-01"]).starts_with("0 measurements examined"));
}

#[tokio::test]
async fn a_clinic_is_built_to_size_once_and_each_physician_sees_only_their_group() {
    use tacho::demo::clinic::{Built, Size, build};

    let app = spawn_app().await;
    let size = Size {
        patients: 12,
        measurements: 5,
        patients_per_group: 5,
    };
    let mut seen = Vec::new();
    let built = build(
        &app.store,
        app.operator.auth.hasher(),
        &app.operator.notifier,
        size,
        |done, _| seen.push(done),
    )
    .await
    .unwrap();
    assert_eq!(
        (
            built.groups,
            built.physicians,
            built.patients,
            built.measurements
        ),
        (3, 6, 12, 60),
        "{built:?}"
    );
    assert_eq!(built.reports, 2, "patients 0 and 10 get a report");
    assert!(built.reviews > 0 && built.events > 0, "{built:?}");
    assert_eq!(
        seen,
        (1..=12).collect::<Vec<_>>(),
        "progress after every patient"
    );

    // Building again adds nothing.
    let again = build(
        &app.store,
        app.operator.auth.hasher(),
        &app.operator.notifier,
        size,
        |_, _| {},
    )
    .await
    .unwrap();
    assert_eq!(again, Built::default());

    // The first group's physician sees its five patients' 25 measurements, with a mix of
    // results and some of them reviewed, and is notified of them.
    let token = app.demo_token("dr1.1@clinic.test").await;
    let all = app
        .get("/data/v1/measurements/documents?limit(50)", &token)
        .await;
    assert_eq!(all.body["page"]["total"], 25, "{}", all.body);
    let documents = all.body["data"].as_array().unwrap();
    let mut results: Vec<&str> = documents
        .iter()
        .filter_map(|d| d["data"]["indicator"].as_str())
        .collect();
    results.sort_unstable();
    results.dedup();
    assert!(results.len() >= 2, "a mix of results: {results:?}");
    assert!(
        documents.iter().any(|d| d["status"] == "reviewed"),
        "some are reviewed"
    );
    let notifications = app.get("/notifications/v1", &token).await;
    assert!(
        notifications.body["page"]["total"].as_u64().unwrap() > 0,
        "{}",
        notifications.body
    );
    // The third group (patients 10 and 11) is another physician's.
    let third = app.demo_token("dr3.2@clinic.test").await;
    let theirs = app
        .get("/data/v1/measurements/documents?limit(50)", &third)
        .await;
    assert_eq!(theirs.body["page"]["total"], 10);

    // From the command line, on the same database: the demo accounts and two patients more.
    let run = crate::reports::tacho_on(
        &app,
        &[
            "demo",
            "--patients",
            "14",
            "--measurements",
            "5",
            "--patients-per-group",
            "5",
        ],
    );
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(
        stdout.contains("0 groups, 0 physicians and 2 patients added with 10 measurements"),
        "{stdout}"
    );
    assert!(stdout.contains("admin@tacho.test"), "{stdout}");
    let refused = crate::reports::tacho_on(&app, &["demo", "--patients-per-group", "0"]);
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--patients-per-group"));
}
