//! The `tacho` command: migrate, user add, and the demo seed.

use std::process::Command;

use tacho::demo;

use crate::helpers::spawn_app;

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
        "long enough",
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
            "long enough",
            "--first-name",
            "B",
            "--last-name",
            "S",
        ],
    );
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("email"));
}

#[tokio::test]
async fn the_demo_seed_is_idempotent_and_logs_in() {
    let app = spawn_app().await;
    let first = demo::seed(&app.state.store, app.state.auth.hasher())
        .await
        .unwrap();
    let second = demo::seed(&app.state.store, app.state.auth.hasher())
        .await
        .unwrap();
    assert_eq!(first.len(), 7);
    assert_eq!(first.len(), second.len());
    let admin = app
        .password_grant("admin@tacho.test", demo::DEMO_PASSWORD)
        .await;
    let token = admin.assert_ok()["access_token"]
        .as_str()
        .unwrap()
        .to_owned();
    let users = app.get("/users/v1", &token).await;
    assert_eq!(
        users.body["page"]["total"], 7,
        "seeding twice creates nobody twice"
    );
    assert_eq!(app.get("/groups/v1", &token).await.body["page"]["total"], 2);
    let physician = app
        .password_grant("dr.peeters@tacho.test", demo::DEMO_PASSWORD)
        .await;
    let physician_token = physician.body["access_token"].as_str().unwrap().to_owned();
    let patients = app
        .get("/profiles/v1?sort(country)", &physician_token)
        .await;
    assert_eq!(
        patients.body["page"]["total"], 3,
        "two patients and the physician's own profile"
    );
    assert_eq!(patients.body["data"][1]["country"], "BE");
}

/// Runs `tacho serve` as a separate process with JSON logs, makes requests that carry
/// secrets, and checks that none of them reaches the log.
#[tokio::test]
async fn logs_name_routes_and_never_secrets() {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;

    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_tacho"))
        .args(["serve", "--demo"])
        .env("TACHO_DATA_DIR", dir.path())
        .env_remove("TACHO_DATABASE_URL")
        .env("TACHO_ADDR", "127.0.0.1:0")
        .env("TACHO_LOG_FORMAT", "json")
        .env("TACHO_LOG", "info")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
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
    let port = loop {
        let line = lines_rx
            .recv_timeout(std::time::Duration::from_secs(60))
            .expect("server logs its port");
        let port = serde_json::from_str::<serde_json::Value>(&line)
            .ok()
            .and_then(|v| v["port"].as_u64());
        log.push(line);
        if let Some(port) = port {
            break port;
        }
    };
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
