//! What a measurement's analysis found, ready to show: the headline result in its colour, the
//! rhythm labels, signal quality, heart-rate variability, and the tachogram and pulse strip
//! (their plot geometry is built by [`super::chart`]). The measurement PDF and the portal's
//! measurement page show the same findings, so both are built here, from `data.analysis` and
//! the payload's signal.

use serde::Serialize;

use super::chart::{self, Strip, Tachogram};
use super::format;
use crate::analysis::{self, Abnormality, Analysis, Colour, Recording, ResultKey, Trace};
use crate::domain::payload::Payload;
use crate::i18n::Translator;

/// Result keys from most to least severe ([`ResultKey::BY_SEVERITY`]).
pub const RESULT_KEYS: [ResultKey; 5] = ResultKey::BY_SEVERITY;

/// A result key by its wire name.
pub fn result_key(name: &str) -> Option<ResultKey> {
    RESULT_KEYS.into_iter().find(|k| k.as_str() == name)
}

/// The printed colour of a result colour.
pub fn hex(colour: Colour) -> &'static str {
    match colour {
        Colour::Green => "#2e7d32",
        Colour::Orange => "#ef6c00",
        Colour::Red => "#c62828",
        Colour::Grey => "#757575",
    }
}

/// The colour a result key stands in when nothing more is known (counts and lists by key): a
/// regular rhythm at a too slow or fast rate is orange on its own page, green in a count.
pub fn key_colour(key: ResultKey) -> Colour {
    match key {
        ResultKey::Regular => Colour::Green,
        ResultKey::PossiblyIrregular => Colour::Orange,
        ResultKey::PossibleAtrialFibrillation => Colour::Red,
        ResultKey::QualityTooLow | ResultKey::NoResult => Colour::Grey,
    }
}

/// The headline: a result key, its translation and its colour.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Headline {
    pub key: &'static str,
    pub label: String,
    /// `green`, `orange`, `red` or `grey`.
    pub colour: &'static str,
    /// The colour as printed, `#rrggbb`.
    pub color: &'static str,
}

impl Headline {
    /// The headline of `key` shown in `colour`.
    pub fn new(tr: &Translator, key: ResultKey, colour: Colour) -> Self {
        Headline {
            key: key.as_str(),
            label: tr.text(&format!("result-{}", key.as_str())),
            colour: colour.as_str(),
            color: hex(colour),
        }
    }

    /// The headline of a stored result key and indicator (list rows): an unknown or missing
    /// key is "no result", the indicator's colour when it is a known one.
    pub fn stored(tr: &Translator, result: Option<&str>, indicator: Option<&str>) -> Self {
        let key = result.and_then(result_key).unwrap_or(ResultKey::NoResult);
        Headline::new(tr, key, stored_colour(key, indicator))
    }
}

/// The colour of a stored result `key` with its `indicator`: the indicator's when it is a
/// known one (a regular rhythm at a slow rate is orange), else the key's.
pub fn stored_colour(key: ResultKey, indicator: Option<&str>) -> Colour {
    indicator
        .and_then(|i| {
            [
                analysis::Indicator::Normal,
                analysis::Indicator::Warning,
                analysis::Indicator::Urgent,
                analysis::Indicator::Quality,
            ]
            .into_iter()
            .find(|known| known.as_str() == i)
        })
        .filter(|_| key != ResultKey::NoResult)
        .map_or_else(|| key_colour(key), analysis::Indicator::colour)
}

/// Colours from the least to the most severe, the order a chart draws them in (the severe
/// ones on top).
pub const COLOURS_BY_SEVERITY: [Colour; 4] =
    [Colour::Green, Colour::Grey, Colour::Orange, Colour::Red];

/// Signal quality as shown.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct QualityView {
    pub key: &'static str,
    pub label: String,
    pub color: &'static str,
    /// The score 0..1 in the language's figures.
    pub score: String,
    pub accepted_beats: usize,
    pub rejected_beats: usize,
}

/// One line of the heart-rate variability table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HrvRow {
    /// The measure's usual abbreviation (SDNN, RMSSD, …), the same in every language.
    pub name: &'static str,
    /// What it measures, translated.
    pub meaning: String,
    pub value: String,
    pub unit: &'static str,
}

/// Everything a measurement page and report show of the analysis.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Findings {
    /// Whether the server analysed the measurement at all (older ones were not).
    pub analysed: bool,
    /// Whether the analysis failed: no rate and no verdict, `reasons` say why.
    pub failed: bool,
    /// The server's heart rate, rounded bpm.
    pub heart_rate: Option<i64>,
    pub result: Headline,
    /// The rhythm labels, translated, most severe first.
    pub labels: Vec<String>,
    /// Why there is no result, translated.
    pub reasons: Vec<String>,
    pub quality: Option<QualityView>,
    /// Empty when there are too few intervals.
    pub hrv: Vec<HrvRow>,
    pub tachogram: Option<Tachogram>,
    pub strip: Option<Strip>,
}

impl Findings {
    /// The findings of a measurement's `data` (payload and server fields), in `tr`'s language.
    pub fn of(tr: &Translator, data: &Payload) -> Findings {
        let analysis = data.read::<Analysis>("analysis");
        // Only a camera recording has a pulse to draw; the intervals alone have none.
        let trace = Recording::from_payload(&data.subset(&["time", "quadrants"]))
            .ok()
            .and_then(|recording| analysis::pulse_trace(&recording));
        match analysis {
            Some(analysis) => Findings::from_analysis(tr, &analysis, trace.as_ref()),
            None => Findings::not_analysed(tr, trace.as_ref()),
        }
    }

    /// Findings of a measurement the server never analysed: no result, and the signal alone.
    fn not_analysed(tr: &Translator, trace: Option<&Trace>) -> Findings {
        Findings {
            analysed: false,
            failed: true,
            heart_rate: None,
            result: Headline::new(tr, ResultKey::NoResult, Colour::Grey),
            labels: Vec::new(),
            reasons: vec![tr.text("reason-not-analysed")],
            quality: None,
            hrv: Vec::new(),
            tachogram: None,
            strip: trace.and_then(|t| chart::strip(t, chart::StripBeats::default())),
        }
    }

    /// Findings of an analysis; `trace` is the pulse it was made from, when there is one.
    pub fn from_analysis(tr: &Translator, analysis: &Analysis, trace: Option<&Trace>) -> Findings {
        let language = tr.language();
        let verdict = analysis.verdict();
        let failed = analysis.failed();
        let labels = analysis
            .rhythm
            .labels
            .iter()
            .rev()
            .map(|label| tr.text(&format!("label-{}", label.as_str())))
            .collect();
        // The quality's own reason says more than "bad signal quality" does.
        let reasons = match analysis.quality.reason {
            Some(reason) if failed => vec![tr.text(&format!("reason-{}", reason.as_str()))],
            _ => analysis
                .abnormalities
                .iter()
                .map(|a| tr.text(&format!("reason-{}", abnormality_name(*a))))
                .collect(),
        };
        let quality = &analysis.quality;
        let class = quality.class.as_str();
        let quality = QualityView {
            key: class,
            label: tr.text(&format!("quality-{class}")),
            color: match quality.class {
                analysis::QualityClass::Good => hex(Colour::Green),
                analysis::QualityClass::Fair => hex(Colour::Orange),
                analysis::QualityClass::Poor => hex(Colour::Red),
            },
            score: format::decimal(language, quality.score.clamp(0.0, 1.0), 2),
            accepted_beats: quality.accepted_beats,
            rejected_beats: quality.rejected_beats,
        };
        let hrv = match (&analysis.hrv, failed) {
            (Some(h), false) => {
                let ms = |v: f64| format::decimal(language, v, 1);
                vec![
                    HrvRow {
                        name: "SDNN",
                        meaning: tr.text("hrv-sdnn"),
                        value: ms(h.sdnn),
                        unit: "ms",
                    },
                    HrvRow {
                        name: "RMSSD",
                        meaning: tr.text("hrv-rmssd"),
                        value: ms(h.rmssd),
                        unit: "ms",
                    },
                    HrvRow {
                        name: "pNN50",
                        meaning: tr.text("hrv-pnn50"),
                        value: format::decimal(language, h.pnn50 * 100.0, 1),
                        unit: "%",
                    },
                    HrvRow {
                        name: "SD1",
                        meaning: tr.text("hrv-sd1"),
                        value: ms(h.sd1),
                        unit: "ms",
                    },
                    HrvRow {
                        name: "SD2",
                        meaning: tr.text("hrv-sd2"),
                        value: ms(h.sd2),
                        unit: "ms",
                    },
                ]
            }
            _ => Vec::new(),
        };
        Findings {
            analysed: true,
            failed,
            heart_rate: analysis
                .heart_rate
                .filter(|hr| !failed && hr.is_finite())
                .map(|hr| hr.round() as i64),
            result: Headline::new(tr, verdict.key, verdict.colour),
            labels,
            reasons,
            quality: Some(quality),
            hrv,
            tachogram: if failed {
                None
            } else {
                chart::tachogram(language, analysis, trace)
            },
            strip: trace.and_then(|t| chart::strip(t, chart::StripBeats::of(analysis))),
        }
    }
}

fn abnormality_name(a: Abnormality) -> &'static str {
    match a {
        Abnormality::TooShort => "too_short",
        Abnormality::FingerNotFound => "finger_not_found",
        Abnormality::PulseNotFound => "pulse_not_found",
        Abnormality::Saturated => "saturated",
        Abnormality::BadSignalQuality => "bad_signal_quality",
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::analysis::{
        Features, Hrv, Label, Quality, QualityClass, Rhythm, Source, VERSION, Verdict,
    };
    use crate::domain::account::Language;

    /// A camera measurement's analysis: 41 beats, 40 intervals, one rejected beat at 20 s and
    /// an irregular stretch from 5 to 12 s.
    pub(in crate::reports) fn analysis(labels: Vec<Label>) -> Analysis {
        let rr: Vec<f64> = (0..40).map(|i| 800.0 + (i % 3) as f64 * 40.0).collect();
        let mut at = 500.0;
        let mut beats = vec![at];
        let mut rr_times = Vec::new();
        for v in &rr {
            at += v;
            beats.push(at);
            rr_times.push(at);
        }
        Analysis {
            version: VERSION.into(),
            source: Source::Camera,
            heart_rate: Some(72.4),
            beats,
            rejected_beats: vec![20_000.0],
            unsure_beats: Vec::new(),
            rr_intervals: rr,
            rr_times,
            quality: Quality {
                score: 0.912,
                class: QualityClass::Good,
                accepted_beats: 41,
                rejected_beats: 1,
                channel: None,
                timing_jitter_ms: Some(6.2),
                reason: None,
            },
            hrv: Some(Hrv {
                sdnn: 32.66,
                rmssd: 40.0,
                pnn50: 0.125,
                sd1: 28.3,
                sd2: 35.1,
            }),
            rhythm: Rhythm {
                irregular: false,
                labels,
                features: Features::default(),
                irregular_stretches: vec![[5_000.0, 12_000.0]],
            },
            abnormalities: Vec::new(),
        }
    }

    /// A minute of pulse at 30 frames a second.
    pub(in crate::reports) fn trace() -> Trace {
        Trace {
            start_ms: 0.0,
            step_ms: 1000.0 / 30.0,
            values: (0..1800).map(|i| (i as f64 / 25.0).sin()).collect(),
        }
    }

    #[test]
    fn a_result_shows_rate_verdict_quality_hrv_and_both_charts() {
        let tr = Translator::new(Language::De);
        let a = analysis(vec![Label::SinusRhythm, Label::Bradycardia]);
        let f = Findings::from_analysis(&tr, &a, Some(&trace()));
        assert_eq!(f.heart_rate, Some(72));
        assert!(!f.failed);
        let Verdict { key, colour, .. } = a.verdict();
        assert_eq!(f.result.key, key.as_str());
        assert_eq!(f.result.colour, colour.as_str());
        assert_eq!(f.labels.len(), 2);
        assert_eq!(
            f.labels[0],
            tr.text("label-bradycardia"),
            "most severe first"
        );
        let hrv: Vec<_> = f.hrv.iter().map(|r| (r.name, r.value.as_str())).collect();
        assert_eq!(
            hrv,
            [
                ("SDNN", "32,7"),
                ("RMSSD", "40"),
                ("pNN50", "12,5"),
                ("SD1", "28,3"),
                ("SD2", "35,1")
            ]
        );
        assert_eq!(f.quality.as_ref().unwrap().score, "0,91");
        let t = f.tachogram.unwrap();
        assert_eq!(t.points, 40);
        assert_eq!(t.runs.len(), 1);
        assert_eq!(
            t.stretches,
            vec![[0.0833, 0.2]],
            "x axis to 60 s, the trace's end"
        );
        assert!(t.x_ticks.iter().all(|t| (0.0..=1.0).contains(&t.at)));
        let s = f.strip.unwrap();
        assert_eq!(s.rows.len(), 2, "60 s in rows of 30 s");
        let accepted: usize = s.rows.iter().map(|r| r.accepted.len()).sum();
        assert_eq!(accepted, 41);
        assert_eq!(s.rows[0].rejected.len(), 1, "the beat at 20 s is in row 1");
        for row in &s.rows {
            for p in row.line.iter().chain(&row.accepted) {
                assert!((0.0..=1.0).contains(&p[0]) && (0.0..=1.0).contains(&p[1]));
            }
        }
    }

    #[test]
    fn a_failed_analysis_has_no_rate_no_verdict_and_says_why() {
        let tr = Translator::new(Language::En);
        let mut a = analysis(Vec::new());
        a.abnormalities = vec![Abnormality::FingerNotFound];
        a.heart_rate = Some(60.0);
        let f = Findings::from_analysis(&tr, &a, Some(&trace()));
        assert!(f.failed);
        assert_eq!(f.heart_rate, None);
        assert_eq!(f.result.key, "quality_too_low");
        assert_eq!(f.result.colour, "grey");
        assert!(f.hrv.is_empty() && f.tachogram.is_none());
        assert_eq!(f.reasons, vec![tr.text("reason-finger_not_found")]);
    }

    #[test]
    fn measurements_without_analysis_or_with_a_broken_one_show_no_result() {
        let tr = Translator::new(Language::En);
        for data in [
            serde_json::json!({"heartrate": 70}),
            serde_json::json!({"analysis": {"version": 3}}),
            serde_json::json!({"analysis": null, "time": "x", "quadrants": []}),
        ] {
            let text = data.to_string();
            let f = Findings::of(&tr, &Payload::parse(&text));
            assert!(!f.analysed && f.failed);
            assert_eq!(f.result.key, "no_result");
            assert_eq!(f.heart_rate, None);
        }
    }

    #[test]
    fn stored_results_read_back_and_unknown_ones_are_no_result() {
        let tr = Translator::new(Language::En);
        let h = Headline::stored(&tr, Some("regular"), Some("warning"));
        assert_eq!((h.key, h.colour), ("regular", "orange"));
        let h = Headline::stored(&tr, Some("possible_atrial_fibrillation"), None);
        assert_eq!((h.key, h.colour), ("possible_atrial_fibrillation", "red"));
        let h = Headline::stored(&tr, Some("<b>"), Some("urgent"));
        assert_eq!((h.key, h.colour), ("no_result", "grey"));
    }
}
