//! Faults the service must come through whole: a process killed mid-render, and a full disk
//! under local storage. (A database outage: `health.rs`; a worker killed mid-batch:
//! `jobs.rs` and `benches/load/run_due.sh`.)

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use sea_orm::{ConnectionTrait, Database, Statement};
use serde_json::json;
use sha2::{Digest, Sha256};

use crate::cli::{demo_patient, serve_demo};
use crate::helpers::{World, files_under, spawn_app};

const LANGUAGES: [&str; 8] = ["en", "nl", "de", "fr", "es", "it", "ar", "zh"];

/// `kill -9` of `tacho serve` while it makes PDFs, then a restart on the same folder: no
/// temporary or partial file is left, every stored file is whole and matches its record, and
/// asking again makes each report exactly once.
#[tokio::test]
async fn a_server_killed_mid_render_leaves_no_partial_file() {
    let dir = tempfile::tempdir().unwrap();
    let (mut child, _, _, port) = serve_demo(dir.path());
    let base = format!("http://127.0.0.1:{port}");
    let client = reqwest::Client::new();
    let (token, mut measurements) = demo_patient(&client, &base, "?eq(status,analyzed)").await;
    measurements.truncate(3);
    assert!(!measurements.is_empty());
    let (done_tx, mut done_rx) = tokio::sync::mpsc::unbounded_channel();
    for measurement in &measurements {
        for language in LANGUAGES {
            let request = client
                .post(format!("{base}/data/v1/measurement-reports/documents"))
                .bearer_auth(&token)
                .json(&json!({"measurementId": measurement, "language": language}))
                .send();
            let done = done_tx.clone();
            tokio::spawn(async move {
                let made = request.await.is_ok_and(|r| r.status() == 200);
                let _ = done.send(made);
            });
        }
    }
    drop(done_tx);
    // Renders run one at a time per account: once the first is answered, the next is
    // running and the rest wait. The kill comes then.
    assert_eq!(done_rx.recv().await, Some(true), "the first report is made");
    let killed = Command::new("kill")
        .args(["-KILL", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    child.wait().unwrap();
    let mut answered = 1;
    while let Some(made) = done_rx.recv().await {
        answered += usize::from(made);
    }
    let total = measurements.len() * LANGUAGES.len();
    eprintln!("{answered} of {total} reports answered before the kill");
    assert!(
        answered < total,
        "the kill came before every render was done"
    );

    let (mut child, _, _, port) = serve_demo(dir.path());
    let base = format!("http://127.0.0.1:{port}");
    let files = dir.path().join("files");
    let leftovers: Vec<_> = files_under(&files)
        .into_iter()
        .filter(|path| path.file_name().unwrap().to_string_lossy().starts_with('.'))
        .collect();
    assert!(
        leftovers.is_empty(),
        "temporary files after the restart: {leftovers:?}"
    );
    for path in files_under(&files) {
        let pdf = std::fs::read(&path).unwrap();
        assert!(pdf.starts_with(b"%PDF"), "{path:?}");
        assert!(
            pdf.trim_ascii_end().ends_with(b"%%EOF"),
            "a whole PDF: {path:?}"
        );
    }

    // Every report asked for is made now, once each.
    let (token, _) = demo_patient(&client, &base, "").await;
    for measurement in &measurements {
        for language in LANGUAGES {
            let made = client
                .post(format!("{base}/data/v1/measurement-reports/documents"))
                .bearer_auth(&token)
                .json(&json!({"measurementId": measurement, "language": language}))
                .send()
                .await
                .unwrap();
            assert_eq!(made.status(), 200);
        }
    }
    let url = format!("sqlite://{}?mode=ro", dir.path().join("tacho.db").display());
    let db = Database::connect(&url).await.unwrap();
    let rows = db
        .query_all_raw(Statement::from_string(
            db.get_database_backend(),
            "SELECT cache_key, sha256, size FROM files",
        ))
        .await
        .unwrap();
    assert_eq!(rows.len(), total, "one file per report, none doubled");
    for row in rows {
        let key: String = row.try_get("", "cache_key").unwrap();
        let sha: String = row.try_get("", "sha256").unwrap();
        let size: i64 = row.try_get("", "size").unwrap();
        let stored = std::fs::read(files.join(&key[..2]).join(&key)).unwrap();
        assert_eq!(stored.len() as i64, size);
        assert_eq!(hex::encode(Sha256::digest(&stored)), sha, "{key}");
    }
    assert_eq!(files_under(&files).len(), total);
    child.kill().ok();
    child.wait().ok();
}

/// A small file system mounted for a test, unmounted when dropped.
struct SmallDisk {
    dir: PathBuf,
}

impl SmallDisk {
    /// A tmpfs of `size` at `dir`, or `None` where this process may not mount one.
    fn mount(dir: &Path, size: &str) -> Option<SmallDisk> {
        std::fs::create_dir_all(dir).unwrap();
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir)
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|status| status.success());
        mounted.then(|| SmallDisk {
            dir: dir.to_owned(),
        })
    }

    fn resize(&self, size: &str) {
        let status = Command::new("mount")
            .args(["-o", &format!("remount,size={size}")])
            .arg(&self.dir)
            .status()
            .unwrap();
        assert!(status.success());
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.dir).status();
    }
}

/// Local storage on a full disk: the report is refused with a clear 503 (the envelope, with
/// `Retry-After`), nothing is stored or recorded, and it is made once there is room again.
#[tokio::test]
async fn a_full_disk_refuses_the_report_clearly_and_keeps_nothing() {
    let app = spawn_app().await;
    let files = app.settings.data_dir.join("files");
    let Some(disk) = SmallDisk::mount(&files, "16k") else {
        crate::helpers::without("TMPFS", "this process cannot mount a tmpfs (it needs root)");
        return;
    };
    let world = World::new(&app).await;
    let measurement = app.measurement_id(&world.patient, "sinus_72").await;

    let refused = app.report(&world.patient, &measurement, Some("en")).await;
    refused.assert_error(503, 503);
    assert_eq!(refused.body["name"], "SERVICE_UNAVAILABLE_EXCEPTION");
    let message = refused.body["message"].as_str().unwrap();
    assert!(message.contains("the file storage is full"), "{message}");
    assert_eq!(refused.headers["retry-after"], "5");
    assert!(files_under(&files).is_empty(), "nothing half-written");
    assert!(app.store.file_cache_keys().await.unwrap().is_empty());

    disk.resize("8m");
    let (_, pdf) = app
        .report_pdf(&world.patient, &measurement, Some("en"))
        .await;
    assert!(pdf.starts_with(b"%PDF"));
    assert_eq!(files_under(&files).len(), 1);
}
