//! What an analysis finds, as stored in a measurement's `data.analysis` and printed by
//! `tacho analyse`, and the verdict the wire and the reports derive from it.

use serde::{Deserialize, Serialize};

/// What the analysis read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// The phone camera's per-cell brightness traces (`time` + `quadrants`).
    Camera,
    /// A plain PPG series (values and their sample times).
    Ppg,
    /// Beat-to-beat intervals alone (`rr_intervals`).
    RrIntervals,
}

impl Source {
    /// The name the wire and the metrics use.
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Camera => "camera",
            Source::Ppg => "ppg",
            Source::RrIntervals => "rr_intervals",
        }
    }
}

/// Why a recording could not be analysed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Abnormality {
    /// Too little signal (or no signal at all) for a rhythm.
    TooShort,
    /// The camera did not see a fingertip.
    FingerNotFound,
    /// A signal was there, but no pulse in it.
    PulseNotFound,
    /// The camera's values sat at the end of their range.
    Saturated,
    /// Beats were found, but too few of them could be trusted (or the data was malformed).
    BadSignalQuality,
}

/// Rhythm labels, from least to most severe (the order of [`Label::ALL`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Label {
    /// Regular rhythm at 50–100 bpm.
    SinusRhythm,
    /// One or two premature beats in an otherwise regular rhythm.
    ExtrasystolesIsolated,
    /// Slow: below 50 bpm.
    Bradycardia,
    /// Fast at rest: above 100 bpm.
    Tachycardia,
    /// Three or more premature beats in a minute.
    ExtrasystolesFrequent,
    /// Irregular, but not in the way of atrial fibrillation.
    IrregularRhythm,
    /// Irregularly irregular, as in atrial fibrillation.
    AtrialFibrillation,
}

impl Label {
    /// Every label, least severe first.
    pub const ALL: [Label; 7] = [
        Label::SinusRhythm,
        Label::ExtrasystolesIsolated,
        Label::Bradycardia,
        Label::Tachycardia,
        Label::ExtrasystolesFrequent,
        Label::IrregularRhythm,
        Label::AtrialFibrillation,
    ];

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Label::SinusRhythm => "sinus_rhythm",
            Label::ExtrasystolesIsolated => "extrasystoles_isolated",
            Label::Bradycardia => "bradycardia",
            Label::Tachycardia => "tachycardia",
            Label::ExtrasystolesFrequent => "extrasystoles_frequent",
            Label::IrregularRhythm => "irregular_rhythm",
            Label::AtrialFibrillation => "atrial_fibrillation",
        }
    }

    /// The label with wire name `name`, if there is one.
    pub fn from_wire(name: &str) -> Option<Label> {
        Label::ALL.into_iter().find(|label| label.as_str() == name)
    }

    /// The indicator a measurement with this label (as its most severe) gets.
    pub fn indicator(self) -> Indicator {
        match self {
            Label::SinusRhythm | Label::ExtrasystolesIsolated => Indicator::Normal,
            Label::Bradycardia
            | Label::Tachycardia
            | Label::ExtrasystolesFrequent
            | Label::IrregularRhythm => Indicator::Warning,
            Label::AtrialFibrillation => Indicator::Urgent,
        }
    }
}

/// How urgent a result is: `data.indicator` on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Indicator {
    Normal,
    Warning,
    Urgent,
    /// No rhythm result: the recording could not be read.
    Quality,
}

impl Indicator {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Indicator::Normal => "normal",
            Indicator::Warning => "warning",
            Indicator::Urgent => "urgent",
            Indicator::Quality => "quality",
        }
    }

    /// The colour of this indicator.
    pub fn colour(self) -> Colour {
        match self {
            Indicator::Normal => Colour::Green,
            Indicator::Warning => Colour::Orange,
            Indicator::Urgent => Colour::Red,
            Indicator::Quality => Colour::Grey,
        }
    }
}

/// The headline result: `data.mostSevereLabel.key` on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResultKey {
    Regular,
    PossiblyIrregular,
    PossibleAtrialFibrillation,
    /// A signal was recorded but could not be read.
    QualityTooLow,
    /// Nothing to analyse (no signal, or far too little).
    NoResult,
}

impl ResultKey {
    /// Every result key from most to least severe: the order of the periodic report's counts,
    /// of the portal's patient list sorted by result and of the work list. An unreadable
    /// measurement ranks above a regular one: the patient has to measure again before
    /// anything is known.
    pub const BY_SEVERITY: [ResultKey; 5] = [
        ResultKey::PossibleAtrialFibrillation,
        ResultKey::PossiblyIrregular,
        ResultKey::QualityTooLow,
        ResultKey::NoResult,
        ResultKey::Regular,
    ];

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            ResultKey::Regular => "regular",
            ResultKey::PossiblyIrregular => "possibly_irregular",
            ResultKey::PossibleAtrialFibrillation => "possible_atrial_fibrillation",
            ResultKey::QualityTooLow => "quality_too_low",
            ResultKey::NoResult => "no_result",
        }
    }
}

/// A result's colour: `data.mostSevereLabel.color` on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Colour {
    Green,
    Orange,
    Red,
    Grey,
}

impl Colour {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Colour::Green => "green",
            Colour::Orange => "orange",
            Colour::Red => "red",
            Colour::Grey => "grey",
        }
    }
}

/// Signal quality, per recording.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QualityClass {
    Good,
    Fair,
    Poor,
}

impl QualityClass {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            QualityClass::Good => "good",
            QualityClass::Fair => "fair",
            QualityClass::Poor => "poor",
        }
    }
}

/// Why a recording that held a pulse still gave no result: the quality score's reason, in
/// words on the measurement page and in the PDF.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QualityReason {
    /// The beats cannot be timed finely enough to judge the rhythm: what looks irregular
    /// does not clearly exceed the timing's own jitter (a coarse or slow pulse).
    CoarseTiming,
    /// Too many beats misshapen or out of height: movement or pressure changes.
    Disturbed,
    /// The sensor lost the fingertip for part of the recording.
    SensorLost,
}

impl QualityReason {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            QualityReason::CoarseTiming => "coarse_timing",
            QualityReason::Disturbed => "disturbed",
            QualityReason::SensorLost => "sensor_lost",
        }
    }
}

/// How far the signal can be trusted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Quality {
    /// 0 (unreadable) to 1 (clean).
    pub score: f64,
    pub class: QualityClass,
    pub accepted_beats: usize,
    pub rejected_beats: usize,
    /// The camera channel(s) the pulse was read from, e.g. `y[1][2]+v[1][1]`; none for a
    /// plain series.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel: Option<String>,
    /// How precisely one beat is timed (one SD, ms), as the recording itself shows it;
    /// none for intervals alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timing_jitter_ms: Option<f64>,
    /// Why a recording with a pulse gave no result; none when it gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<QualityReason>,
}

/// Heart-rate variability of the accepted intervals (ms, pNN50 as a fraction).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Hrv {
    pub sdnn: f64,
    pub rmssd: f64,
    pub pnn50: f64,
    pub sd1: f64,
    pub sd2: f64,
}

/// The irregularity features the rhythm verdict is made from.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Features {
    /// RMSSD over the mean interval.
    pub nrmssd: Option<f64>,
    /// Shannon entropy of the interval histogram (16 bins, no narrower than the series'
    /// timing resolution), normalised to 0..1.
    pub shannon_entropy: Option<f64>,
    /// Turning points over the number of inner intervals (about 2/3 for a random series).
    pub turning_point_ratio: Option<f64>,
    /// Poincaré dispersion: SD1 / SD2.
    pub sd1_sd2: Option<f64>,
    /// Share of the interval series' power in its strongest frequency band (a breathing
    /// rhythm concentrates it; a random series spreads it).
    pub spectral_peak_share: Option<f64>,
    /// Premature beats found (and left out of the features above).
    pub ectopic_beats: usize,
    /// The smallest step between interval values, ms.
    pub timing_resolution_ms: Option<f64>,
}

/// The rhythm screening.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Rhythm {
    pub irregular: bool,
    /// From [`Label::ALL`], least severe first; empty when nothing could be analysed.
    pub labels: Vec<Label>,
    pub features: Features,
    /// Stretches (start and end, ms from the start) where the intervals were irregular.
    #[serde(default)]
    pub irregular_stretches: Vec<[f64; 2]>,
}

/// The analysis of one recording.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Analysis {
    /// The algorithm's version, stamped on every result.
    pub version: String,
    pub source: Source,
    /// Beats per minute from the accepted intervals; none when the analysis failed.
    pub heart_rate: Option<f64>,
    /// Accepted beats, ms from the start of the recording.
    pub beats: Vec<f64>,
    /// Beats found but not trusted, ms from the start.
    #[serde(default)]
    pub rejected_beats: Vec<f64>,
    /// Beats kept only by the second, lower-threshold pass (weak pulses, as after a short
    /// interval in atrial fibrillation), ms from the start: also in `beats`, counted in the
    /// rate, the intervals and the variability; listed here so that they can be shown apart.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unsure_beats: Vec<f64>,
    /// Accepted beat-to-beat intervals, ms.
    pub rr_intervals: Vec<f64>,
    /// When each accepted interval ended (its closing beat), ms from the start.
    #[serde(default)]
    pub rr_times: Vec<f64>,
    pub quality: Quality,
    pub hrv: Option<Hrv>,
    pub rhythm: Rhythm,
    /// Why the recording could not be analysed; empty when it could.
    pub abnormalities: Vec<Abnormality>,
}

/// The headline of an analysis, as the wire's `indicator`, `mostSevereLabel` and `af`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Verdict {
    pub indicator: Indicator,
    pub key: ResultKey,
    pub colour: Colour,
    pub af: bool,
    /// The most severe rhythm label, if any.
    pub label: Option<Label>,
}

impl Analysis {
    /// An analysis of a `source` recording that gives no result, for `reason`.
    pub fn unreadable(source: Source, reason: Abnormality) -> Analysis {
        Analysis {
            version: super::VERSION.to_owned(),
            source,
            heart_rate: None,
            beats: Vec::new(),
            rejected_beats: Vec::new(),
            unsure_beats: Vec::new(),
            rr_intervals: Vec::new(),
            rr_times: Vec::new(),
            quality: Quality {
                score: 0.0,
                class: QualityClass::Poor,
                accepted_beats: 0,
                rejected_beats: 0,
                channel: None,
                timing_jitter_ms: None,
                reason: None,
            },
            hrv: None,
            rhythm: Rhythm::default(),
            abnormalities: vec![reason],
        }
    }

    /// Whether no result could be given.
    pub fn failed(&self) -> bool {
        !self.abnormalities.is_empty()
    }

    /// The headline result.
    pub fn verdict(&self) -> Verdict {
        if self.failed() {
            let key = if self.abnormalities.contains(&Abnormality::TooShort) {
                ResultKey::NoResult
            } else {
                ResultKey::QualityTooLow
            };
            return Verdict {
                indicator: Indicator::Quality,
                key,
                colour: Colour::Grey,
                af: false,
                label: None,
            };
        }
        let label = self.rhythm.labels.iter().copied().max();
        let indicator = label.map_or(Indicator::Normal, Label::indicator);
        let key = match label {
            Some(Label::AtrialFibrillation) => ResultKey::PossibleAtrialFibrillation,
            Some(Label::ExtrasystolesFrequent | Label::IrregularRhythm) => {
                ResultKey::PossiblyIrregular
            }
            _ => ResultKey::Regular,
        };
        Verdict {
            indicator,
            key,
            colour: indicator.colour(),
            af: label == Some(Label::AtrialFibrillation),
            label,
        }
    }
}
