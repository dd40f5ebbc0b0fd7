//! The whole analysis, from a recording to an [`Analysis`].

use serde_json::{Map, Value};

use super::input::{Context, Recording};
use super::result::{Abnormality, Analysis, Quality, QualityClass, Rhythm};

/// A pulse waveform on a uniform grid, as the strip charts draw it.
#[derive(Debug, Clone, PartialEq)]
pub struct Trace {
    /// Time of the first value, ms from the start of the recording.
    pub start_ms: f64,
    /// Time between values, ms.
    pub step_ms: f64,
    /// Band-passed pulse, beats pointing up, in the signal's own units.
    pub values: Vec<f64>,
}

/// Analyses a recording.
pub fn analyse(recording: &Recording, context: Context) -> Analysis {
    let _ = context;
    failed(recording.source(), Abnormality::PulseNotFound)
}

/// Analyses the recording in a measurement payload, with the payload's context.
pub fn analyse_payload(data: &Map<String, Value>) -> Analysis {
    match Recording::from_payload(data) {
        Ok(recording) => analyse(&recording, Context::of_payload(data)),
        Err(reason) => failed(source_of(data), reason),
    }
}

/// The band-passed pulse of a camera or PPG recording; none for intervals alone or a
/// recording too short to filter.
pub fn pulse_trace(recording: &Recording) -> Option<Trace> {
    let _ = recording;
    None
}

fn source_of(data: &Map<String, Value>) -> super::result::Source {
    if data.contains_key("time") || data.contains_key("quadrants") {
        super::result::Source::Camera
    } else {
        super::result::Source::RrIntervals
    }
}

/// An analysis that found no result, for `reason`.
pub(super) fn failed(source: super::result::Source, reason: Abnormality) -> Analysis {
    Analysis {
        version: super::VERSION.to_owned(),
        source,
        heart_rate: None,
        beats: Vec::new(),
        rejected_beats: Vec::new(),
        rr_intervals: Vec::new(),
        rr_times: Vec::new(),
        quality: Quality {
            score: 0.0,
            class: QualityClass::Poor,
            accepted_beats: 0,
            rejected_beats: 0,
            channel: None,
        },
        hrv: None,
        rhythm: Rhythm::default(),
        abnormalities: vec![reason],
    }
}
