//! A measurement upload and its analysis on any input: the first byte picks the form.
//! - `0`: the rest is the JSON body of an upload, parsed and analysed as the API does;
//! - `1`: the rest is a PPG trace, three bytes per sample (the step to it in ms, then a
//!   little-endian `i16` value), analysed as a plain PPG recording;
//! - `2`: the rest is a CSV file, as `tacho analyse` reads it.
//!
//! None may panic. A recording the analysis cannot read is failed and has no heart rate; any
//! other has one, from intervals it accepts only between 250 and 2,400 ms
//! (`analysis::intervals::PLAUSIBLE_MS`): 25 to 240 beats per minute.

#![no_main]

use libfuzzer_sys::fuzz_target;
use tacho::analysis::{Analysis, Context, Recording, analyse};
use tacho::domain::measurement::NewMeasurement;

fuzz_target!(|data: &[u8]| {
    let Some((&form, rest)) = data.split_first() else {
        return;
    };
    match form % 3 {
        0 => {
            if let Ok(value) = serde_json::from_slice(rest) {
                let _ = NewMeasurement::parse(value);
            }
        }
        1 => {
            let mut time = 0.0;
            let (mut times, mut values) = (Vec::new(), Vec::new());
            for sample in rest.chunks_exact(3) {
                time += f64::from(sample[0]);
                times.push(time);
                values.push(f64::from(i16::from_le_bytes([sample[1], sample[2]])));
            }
            if let Ok(recording) = Recording::ppg(times, values) {
                check(&analyse(&recording, Context::default()));
            }
        }
        _ => {
            if let Ok(text) = std::str::from_utf8(rest)
                && let Ok(recording) = Recording::from_csv(text, None)
            {
                check(&analyse(&recording, Context::default()));
            }
        }
    }
});

/// What every result must satisfy, whatever the input.
fn check(analysis: &Analysis) {
    match analysis.heart_rate {
        None => assert!(analysis.failed(), "a result without a heart rate"),
        Some(bpm) => {
            assert!(!analysis.failed(), "a failed analysis with a heart rate");
            assert!((25.0..=240.0).contains(&bpm), "heart rate {bpm}");
        }
    }
}
