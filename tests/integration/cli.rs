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
