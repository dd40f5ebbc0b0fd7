//! Compatibility: the published ExtraHorizon JavaScript SDK (npm
//! `@extrahorizon/javascript-sdk`), which the measurement apps are built on, runs its calls
//! against Tacho unchanged (`tests/js/compat.cjs`).
//!
//! The SDK is installed with npm into `target/js-compat` (pinned by `tests/js/package-lock.json`);
//! `scripts/test` installs it first and names the folder in `TACHO_JS_SDK_DIR`, and when that is
//! not set this test installs it itself. Node and npm must be on the path.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::helpers::{PASSWORD, World, spawn_app_with};

fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The folder holding `node_modules/@extrahorizon/javascript-sdk`, installed when missing.
fn sdk_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("TACHO_JS_SDK_DIR") {
        return PathBuf::from(dir);
    }
    let dir = manifest_dir().join("target/js-compat");
    if !dir
        .join("node_modules/@extrahorizon/javascript-sdk")
        .exists()
    {
        install(&dir);
    }
    dir
}

fn install(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    for file in ["package.json", "package-lock.json"] {
        std::fs::copy(manifest_dir().join("tests/js").join(file), dir.join(file)).unwrap();
    }
    let output = Command::new("npm")
        .args(["ci", "--no-audit", "--no-fund"])
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| panic!("npm must be installed to run the JavaScript SDK: {e}"));
    assert!(
        output.status.success(),
        "npm ci failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[tokio::test]
async fn the_extrahorizon_javascript_sdk_works_against_tacho() {
    // The SDK speaks plain HTTP only to a host named localhost.
    let app = spawn_app_with(|settings| settings.addr = "localhost:0".into()).await;
    let world = World::new(&app).await;
    let port = app.address.rsplit(':').next().unwrap().to_owned();
    let modules = sdk_dir().join("node_modules");
    let script = manifest_dir().join("tests/js/compat.cjs");
    let fixture = manifest_dir().join("tests/fixtures/sinus_72.json");
    let email = world.patient.email.clone();
    let output = tokio::task::spawn_blocking(move || {
        Command::new("node")
            .arg(script)
            .env("NODE_PATH", modules)
            .env("TACHO_URL", format!("http://localhost:{port}"))
            .env("TACHO_EMAIL", email)
            .env("TACHO_PASSWORD", PASSWORD)
            .env("TACHO_FIXTURE", fixture)
            .output()
    })
    .await
    .unwrap()
    .unwrap_or_else(|e| panic!("node must be installed to run the JavaScript SDK: {e}"));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    println!("{stdout}");
    assert!(
        output.status.success() && stdout.contains("PASS"),
        "the JavaScript SDK failed against Tacho:\n{stdout}\n{stderr}"
    );
    assert!(!stdout.contains("not ok"), "{stdout}");
}
