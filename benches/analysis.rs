//! The rhythm analysis on one core: a 60 s camera recording (`tests/fixtures/sinus_72.json`,
//! 16 cells × Y/U/V = 48 channels × 1,800 frames) and a 60 s PPG window of a real finger
//! recording (heartpy's `data3.csv`, 0–60 s at 100.42 Hz, from the validation reference).
//! Each input is parsed once, outside the measured loop; what is measured is `analyse`.
//!
//! `cargo bench --bench analysis`; `benches/analysis_speed.sh` runs it and times heartpy's
//! `process()` on the same two windows. The PPG case needs the reference that
//! `scripts/validation-setup` writes (it is skipped, saying so, without it).

use std::hint::black_box;
use std::path::PathBuf;
use std::time::Duration;

use criterion::Criterion;
use serde_json::{Map, Value};
use tacho::analysis::{Context, Recording, analyse};

fn manifest_path(relative: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(relative)
}

fn camera_recording() -> Recording {
    let text = std::fs::read_to_string(manifest_path("tests/fixtures/sinus_72.json"))
        .expect("tests/fixtures/sinus_72.json");
    let data: Map<String, Value> = serde_json::from_str(&text).expect("fixture JSON");
    let recording = Recording::from_payload(&data).expect("a camera recording");
    let Recording::Camera { times_ms, cells } = &recording else {
        panic!("sinus_72 is not read as a camera recording");
    };
    assert_eq!((cells.len() * 3, times_ms.len()), (48, 1800));
    recording
}

/// The first 60 s window of heartpy's data3.csv, as the validation reference holds it.
fn ppg_recording() -> Option<Recording> {
    let path = std::env::var_os("TACHO_HEARTPY_REFERENCE")
        .map(PathBuf::from)
        .unwrap_or_else(|| manifest_path("target/validation/heartpy.json"));
    let Ok(text) = std::fs::read_to_string(&path) else {
        eprintln!(
            "{} is missing: run scripts/validation-setup for the PPG case",
            path.display()
        );
        return None;
    };
    let reference: Value = serde_json::from_str(&text).ok()?;
    let window = reference["windows"]
        .as_array()?
        .iter()
        .find(|w| w["file"] == "data3.csv" && w["start_s"].as_f64() == Some(0.0))?;
    let numbers = |v: &Value| -> Vec<f64> {
        v.as_array()
            .map(|a| a.iter().filter_map(Value::as_f64).collect())
            .unwrap_or_default()
    };
    Recording::ppg(numbers(&window["times_ms"]), numbers(&window["values"])).ok()
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("analysis");
    group
        .sample_size(100)
        .measurement_time(Duration::from_secs(5));

    let camera = camera_recording();
    let result = analyse(&camera, Context::default());
    assert!(!result.failed(), "the camera fixture is analysed");
    // camera_60s: 48 channels × 1,800 frames.
    group.bench_function("camera_60s", |b| {
        b.iter(|| analyse(black_box(&camera), Context::default()))
    });

    if let Some(ppg) = ppg_recording() {
        // ppg_60s: data3.csv 0–60 s, 6,025 samples at 100.42 Hz.
        group.bench_function("ppg_60s", |b| {
            b.iter(|| analyse(black_box(&ppg), Context::default()))
        });
    }
    group.finish();
}

fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    bench(&mut criterion);
    criterion.final_summary();
}
