//! The whole analysis, from a recording to an [`Analysis`].

use serde_json::{Map, Value};

use super::beats::{self, Beat};
use super::input::{Context, Recording};
use super::intervals;
use super::result::{Abnormality, Analysis, Features, QualityClass, QualityReason, Rhythm, Source};
use super::rhythm;
use super::signal::{Grid, RATES, all_finite, band_passes, mean_sd, median, rate_of, upsample};
use super::{camera, hrv, timing};

/// A rhythm needs at least 10 s of signal.
const MIN_DURATION_MS: f64 = 10_000.0;
/// The pulse band: 0.5–8 Hz, second-order Butterworth, zero phase (Elgendi et al. 2013).
const PULSE_BAND_HZ: (f64, f64) = (0.5, 8.0);
/// A wider band keeps the systolic peak's shape for placing it (up to 15 Hz, or below the
/// Nyquist frequency of slow recordings).
const FINE_BAND_HZ: (f64, f64) = (0.5, 25.0);
/// Quality classes by score (coverage × mean beat correlation) and by the share of beats
/// rejected for their shape or height; a poor recording gets no result. Thresholds chosen
/// here: a score of 0.8 leaves at most a fifth of the minute unusable, 0.6 at most two
/// fifths. More than one beat in ten rejected is poor: the line heartpy's comparison draws
/// between clean and noisy segments (see docs/validation.md), one in twenty is fair.
const GOOD: f64 = 0.8;
const FAIR: f64 = 0.6;
const GOOD_REJECTED: f64 = 0.05;
const FAIR_REJECTED: f64 = 0.10;
/// Irregularity counts only when the RMSSD is at least this many times what jitter alone
/// gives. For n successive differences of pure jitter the RMSSD estimate has a relative SD of
/// about 1/√(2n) (chi-square; n ≥ 11 here, so under 0.22): twice the expected value is more
/// than four SDs above it, which jitter reaches by chance far less than once in 10,000.
const JITTER_MARGIN: f64 = 2.0;
/// A recording whose timing jitter alone gives half the RMSSD that the AF criterion asks
/// for (Dash et al.'s normalised RMSSD of 0.1) cannot tell a steady pulse from fibrillation
/// either way: no verdict at all.
const COARSE_SHARE: f64 = 0.5;
/// Slower recordings are interpolated onto a grid of this rate (Hz) before filtering.
const MIN_WORK_RATE: f64 = 50.0;
/// Above this many samples per second of recording the grid is mostly gaps.
const MAX_GRID_PER_SAMPLE: usize = 2;

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
    let source = recording.source();
    let found = match recording {
        Recording::RrIntervals(rr) => from_intervals(rr),
        _ => prepare(recording).and_then(|p| from_signal(&p)),
    };
    match found {
        Ok(found) => conclude(source, found, context),
        Err(reason) => failed(source, reason),
    }
}

/// Analyses the recording in a measurement payload, with the payload's context.
pub fn analyse_payload(data: &Map<String, Value>) -> Analysis {
    match Recording::from_payload(data) {
        Ok(recording) => analyse(&recording, Context::of_payload(data)),
        Err(reason) => failed(source_of(data), reason),
    }
}

/// The band-passed pulse of a camera or PPG recording; none for intervals alone or a
/// recording that cannot be read.
pub fn pulse_trace(recording: &Recording) -> Option<Trace> {
    let prepared = prepare(recording).ok()?;
    Some(Trace {
        start_ms: prepared.start_ms,
        step_ms: prepared.step_ms,
        values: prepared.fine,
    })
}

/// A signal on its uniform grid, filtered.
struct Prepared {
    /// The working rate (Hz) and the grid step (ms).
    rate: f64,
    start_ms: f64,
    step_ms: f64,
    /// The recording's own sample period, ms: the finest timing it resolves.
    sample_ms: f64,
    /// The step of a source held onto the samples, ms ([`timing::held_step`]).
    held_ms: Option<f64>,
    duration_ms: f64,
    band: Vec<f64>,
    fine: Vec<f64>,
    /// The signal before filtering, on the grid (beats up).
    raw: Vec<f64>,
    channel: Option<String>,
}

fn prepare(recording: &Recording) -> Result<Prepared, Abnormality> {
    let times = match recording {
        Recording::Camera { times_ms, .. } | Recording::Ppg { times_ms, .. } => times_ms,
        Recording::RrIntervals(_) => return Err(Abnormality::TooShort),
    };
    // The fields are public, so a recording may have been built without its checks.
    let lengths_agree = match recording {
        Recording::Camera { cells, .. } => cells.iter().all(|c| {
            [&c.y, &c.u, &c.v]
                .iter()
                .all(|v| v.len() == times.len() && all_finite(v))
        }),
        Recording::Ppg { values, .. } => values.len() == times.len() && all_finite(values),
        Recording::RrIntervals(_) => true,
    };
    if !lengths_agree || !all_finite(times) || times.windows(2).any(|w| w[1] <= w[0]) {
        return Err(Abnormality::BadSignalQuality);
    }
    if times.len() < 2 {
        return Err(Abnormality::TooShort);
    }
    let rate = rate_of(times).ok_or(Abnormality::BadSignalQuality)?;
    if !RATES.contains(&rate) {
        return Err(Abnormality::BadSignalQuality);
    }
    let duration_ms = times[times.len() - 1] - times[0];
    if duration_ms < MIN_DURATION_MS {
        return Err(Abnormality::TooShort);
    }
    // Checked before the grid is laid: one far-off time stamp would make it enormous.
    if duration_ms * rate / 1000.0 > (MAX_GRID_PER_SAMPLE * times.len()) as f64 {
        return Err(Abnormality::BadSignalQuality);
    }
    let grid = Grid::new(times, rate);
    // A coarse source laid onto the samples repeats in every channel at once.
    let held = match recording {
        Recording::Camera { cells, .. } => {
            let channels: Vec<&[f32]> = cells
                .iter()
                .flat_map(|c| [&c.y[..], &c.u[..], &c.v[..]])
                .collect();
            timing::held_step(&channels)
        }
        Recording::Ppg { values, .. } => timing::held_step(&[&values[..]]),
        Recording::RrIntervals(_) => None,
    };
    let held_ms = held.map(|samples| samples * 1000.0 / rate);
    let (signal, channel) = match recording {
        Recording::Camera { cells, .. } => {
            let (signal, channel) = camera::combine(cells, &grid, rate)?;
            (signal, Some(channel))
        }
        Recording::Ppg { values, .. } => (grid.resample(values), None),
        Recording::RrIntervals(_) => unreachable!("handled above"),
    };
    // Slow recordings are worked on at MIN_WORK_RATE: the detector's 111 ms window and the
    // beat templates need a few samples per systolic wave.
    let (signal, work_rate) = if rate < MIN_WORK_RATE {
        (upsample(&signal, rate, MIN_WORK_RATE), MIN_WORK_RATE)
    } else {
        (signal, rate)
    };
    // Nothing above the recording's own Nyquist frequency is signal.
    let fine_high = FINE_BAND_HZ.1.min(0.45 * rate);
    let [band, fine] = band_passes(
        &signal,
        work_rate,
        PULSE_BAND_HZ.0,
        [PULSE_BAND_HZ.1, fine_high],
    );
    if mean_sd(&band).1 <= 1e-9 {
        return Err(Abnormality::PulseNotFound);
    }
    Ok(Prepared {
        rate: work_rate,
        start_ms: grid.start_ms,
        step_ms: 1000.0 / work_rate,
        sample_ms: grid.step_ms,
        held_ms,
        duration_ms,
        band,
        fine,
        raw: signal,
        channel,
    })
}

/// What the signal stage found, in ms.
struct Found {
    /// Every beat found.
    beats: Vec<Mark>,
    /// The interval before each beat after the first; `None` where rejected.
    rr: Vec<Option<f64>>,
    /// Beats set aside because the sensor lost the signal next to them: not counted against
    /// the beats' quality, only against the coverage.
    lost: usize,
    /// Mean shape correlation of the accepted beats (1 for intervals alone).
    correlation: f64,
    duration_ms: f64,
    resolution_ms: f64,
    /// The timing jitter of one beat (one SD, ms), as the recording shows it; none for
    /// intervals alone or too few clean beats to tell ([`timing::jitter`]).
    jitter_ms: Option<f64>,
    channel: Option<String>,
}

/// A beat as the result lists it.
struct Mark {
    /// ms from the start of the recording.
    ms: f64,
    accepted: bool,
    /// Accepted by the second pass only ([`beats::recover_weak`]).
    unsure: bool,
}

fn from_signal(p: &Prepared) -> Result<Found, Abnormality> {
    // Movement is cut out before beats are looked for: its swings would pass for beats and
    // raise the detector's threshold everywhere else.
    let moved = beats::movements(&p.band, p.rate);
    let band: std::borrow::Cow<[f64]> = if moved.is_empty() {
        std::borrow::Cow::Borrowed(&p.band)
    } else {
        let mut band = p.band.clone();
        for &(start, end) in &moved {
            band[start..end].iter_mut().for_each(|v| *v = 0.0);
        }
        std::borrow::Cow::Owned(band)
    };
    let peaks = beats::detect(&band, p.rate);
    if peaks.len() < 3 {
        return Err(Abnormality::PulseNotFound);
    }
    let at = beats::refine(&p.fine, &p.raw, &peaks, p.rate);
    let mut judged = beats::judge(&band, &at, p.rate);
    let margin = beats::DROPOUT_MARGIN_S * p.rate;
    let lost_ranges: Vec<(f64, f64)> = beats::dropouts(&p.raw, p.rate)
        .into_iter()
        .chain(moved)
        .map(|(start, end)| (start as f64 - margin, end as f64 + margin))
        .collect();
    let mut lost = 0;
    for (start, end) in &lost_ranges {
        for beat in judged.iter_mut().filter(|b| b.at > *start && b.at < *end) {
            lost += usize::from(beat.accepted);
            beat.accepted = false;
        }
    }
    intervals::merge_spurious(&mut judged, p.step_ms);
    beats::recover_weak(&band, &mut judged, p.rate, &lost_ranges);
    let rr = intervals::series(&judged, p.step_ms, intervals::Gaps::MissedBeats);
    let accepted: Vec<&Beat> = judged.iter().filter(|b| b.accepted).collect();
    let correlation = if accepted.is_empty() {
        0.0
    } else {
        accepted.iter().map(|b| b.correlation).sum::<f64>() / accepted.len() as f64
    };
    let positions: Vec<f64> = judged.iter().map(|b| b.at).collect();
    let gaps: Vec<f64> = accepted.windows(2).map(|w| w[1].at - w[0].at).collect();
    let upstrokes = timing::upstrokes(&p.fine, &positions, median(&gaps).unwrap_or(p.rate));
    let trusted: Vec<bool> = judged.iter().map(|b| b.accepted && !b.unsure).collect();
    let measured = timing::jitter(&positions, &upstrokes, &trusted).map(|s| s * p.step_ms);
    let jitter_ms = timing::combined(measured, p.held_ms);
    Ok(Found {
        beats: judged
            .iter()
            .map(|b| Mark {
                ms: p.start_ms + b.at * p.step_ms,
                accepted: b.accepted,
                unsure: b.unsure,
            })
            .collect(),
        rr,
        lost,
        correlation,
        duration_ms: p.duration_ms,
        // Intervals are as fine as their beats are timed: the difference of two beat times
        // has √2 times their jitter. Sub-sample placement does better than the sample period.
        resolution_ms: jitter_ms.map_or(p.sample_ms, |j| (std::f64::consts::SQRT_2 * j).max(1.0)),
        jitter_ms,
        channel: p.channel.clone(),
    })
}

fn from_intervals(rr: &[f64]) -> Result<Found, Abnormality> {
    if rr.iter().any(|ms| !ms.is_finite() || *ms <= 0.0) {
        return Err(Abnormality::BadSignalQuality);
    }
    let total: f64 = rr.iter().sum();
    if total < MIN_DURATION_MS || rr.len() < 2 {
        return Err(Abnormality::TooShort);
    }
    let mut at = 0.0;
    let mut beats = vec![Beat {
        at,
        amplitude: 1.0,
        correlation: 1.0,
        accepted: true,
        unsure: false,
    }];
    for ms in rr {
        at += ms;
        beats.push(Beat {
            at,
            amplitude: 1.0,
            correlation: 1.0,
            accepted: true,
            unsure: false,
        });
    }
    Ok(Found {
        beats: beats
            .iter()
            .map(|b| Mark {
                ms: b.at,
                accepted: true,
                unsure: false,
            })
            .collect(),
        rr: intervals::series(&beats, 1.0, intervals::Gaps::Listed),
        lost: 0,
        correlation: 1.0,
        duration_ms: total,
        resolution_ms: quantum(rr),
        jitter_ms: None,
        channel: None,
    })
}

/// The finest step between the values of an interval series (at least 1 ms): intervals
/// counted in camera frames move in steps of a frame.
fn quantum(rr: &[f64]) -> f64 {
    let mut values = rr.to_vec();
    values.sort_by(f64::total_cmp);
    values
        .windows(2)
        .map(|w| w[1] - w[0])
        .filter(|d| *d > 0.0)
        .fold(f64::INFINITY, f64::min)
        .clamp(1.0, 1000.0)
}

fn conclude(source: Source, found: Found, context: Context) -> Analysis {
    let accepted_beats = found.beats.iter().filter(|b| b.accepted).count();
    let rejected_beats = found.beats.len() - accepted_beats;
    let mut analysis = failed(source, Abnormality::BadSignalQuality);
    let times = |keep: fn(&Mark) -> bool| -> Vec<f64> {
        found
            .beats
            .iter()
            .filter(|b| keep(b))
            .map(|b| round1(b.ms))
            .collect()
    };
    analysis.beats = times(|b| b.accepted);
    analysis.unsure_beats = times(|b| b.unsure);
    analysis.rejected_beats = times(|b| !b.accepted);
    analysis.quality.accepted_beats = accepted_beats;
    analysis.quality.rejected_beats = rejected_beats;
    analysis.quality.channel = found.channel.clone();
    analysis.quality.timing_jitter_ms = found.jitter_ms.map(round1);

    let closing: Vec<f64> = found.beats.iter().skip(1).map(|b| b.ms).collect();
    let accepted: Vec<f64> = found.rr.iter().flatten().copied().collect();
    let typical = median(&accepted).unwrap_or(0.0);
    let covered: f64 = accepted.iter().sum();
    let usable = (found.duration_ms - typical).max(covered).max(1.0);
    let score = ((covered / usable) * found.correlation).clamp(0.0, 1.0);
    analysis.quality.score = round3(score);
    if accepted.len() < rhythm::MIN_INTERVALS {
        if accepted_beats < 3 {
            analysis.abnormalities = vec![Abnormality::PulseNotFound];
        }
        return analysis;
    }
    let mean_interval = covered / accepted.len() as f64;
    let too_coarse = found.jitter_ms.is_some_and(|j| {
        timing::jitter_rmssd(j) >= COARSE_SHARE * rhythm::NRMSSD_MIN * mean_interval
    });
    let judged = found.beats.len().saturating_sub(found.lost).max(1);
    let rejected_share = rejected_beats.saturating_sub(found.lost) as f64 / judged as f64;
    analysis.quality.class = if score >= GOOD && rejected_share <= GOOD_REJECTED {
        QualityClass::Good
    } else if score >= FAIR && rejected_share <= FAIR_REJECTED {
        QualityClass::Fair
    } else {
        // A pulse too coarse to time explains the rest: its beats lose their shape too.
        analysis.quality.reason = Some(if too_coarse {
            QualityReason::CoarseTiming
        } else if found.lost > rejected_beats.saturating_sub(found.lost) {
            QualityReason::SensorLost
        } else {
            QualityReason::Disturbed
        });
        return analysis;
    };

    let heart_rate = 60_000.0 / (covered / accepted.len() as f64);
    let premature = intervals::ectopics(&found.rr);
    let ectopic_beats = premature.len();
    let clean = intervals::for_rhythm(&found.rr, &premature);
    let mut features = rhythm::features_timed(&clean, &closing, found.resolution_ms);
    features.ectopic_beats = ectopic_beats;
    let mut n = rhythm::turning_point_values(&clean);
    let mut af = rhythm::fibrillation_like(&features, n);
    if !af && ectopic_beats >= rhythm::FREQUENT_ECTOPICS {
        let whole = rhythm::features_timed(&found.rr, &closing, found.resolution_ms);
        let whole_n = rhythm::turning_point_values(&found.rr);
        if rhythm::fibrillation_like(&whole, whole_n) {
            (af, n) = (true, whole_n);
            features = Features {
                ectopic_beats,
                ..whole
            };
        }
    }
    let (labels, irregular) = rhythm::screen(&features, n, af, heart_rate, context.at_rest);
    if too_coarse || irregular && !irregularity_exceeds_jitter(&features, &clean, found.jitter_ms) {
        // What looks irregular may be the timing's own jitter: unreadable, never a verdict.
        analysis.quality.class = QualityClass::Poor;
        analysis.quality.reason = Some(QualityReason::CoarseTiming);
        return analysis;
    }
    if labels.is_empty() {
        // Enough intervals, but once premature beats are set aside too few of them stand next
        // to each other for a rhythm to be judged (no successive differences, no turning
        // points): the recording is unreadable, never a result without a rhythm.
        analysis.quality.class = QualityClass::Poor;
        return analysis;
    }
    let mut stretches = if irregular {
        rhythm::irregular_stretches(&found.rr, &closing)
    } else {
        Vec::new()
    };
    for &i in &premature {
        if let (Some(short), Some(&end)) = (found.rr[i], closing.get(i + 1)) {
            stretches.push([closing[i] - short, end]);
        }
    }
    stretches.sort_by(|a, b| a[0].total_cmp(&b[0]));

    analysis.abnormalities.clear();
    analysis.heart_rate = Some(round1(heart_rate));
    analysis.rr_times = found
        .rr
        .iter()
        .zip(&closing)
        .filter(|(rr, _)| rr.is_some())
        .map(|(_, t)| round1(*t))
        .collect();
    analysis.rr_intervals = accepted.iter().map(|v| round1(*v)).collect();
    let normal = intervals::normal_to_normal(&found.rr, &premature);
    analysis.hrv = hrv::hrv(&normal).map(|h| super::result::Hrv {
        sdnn: round2(h.sdnn),
        rmssd: round2(h.rmssd),
        pnn50: round3(h.pnn50),
        sd1: round2(h.sd1),
        sd2: round2(h.sd2),
    });
    analysis.rhythm = Rhythm {
        irregular,
        labels,
        features: round_features(features),
        irregular_stretches: stretches
            .into_iter()
            .map(|[a, b]| [round1(a), round1(b)])
            .collect(),
    };
    analysis
}

/// Whether the successive differences of `clean` intervals clearly exceed what the timing
/// jitter of their beats alone would give ([`timing::jitter_rmssd`]): by [`JITTER_MARGIN`].
/// Without a jitter estimate (intervals alone) the series' own resolution already bounds its
/// histogram, and the intervals are taken as they are.
fn irregularity_exceeds_jitter(
    features: &Features,
    clean: &[Option<f64>],
    jitter_ms: Option<f64>,
) -> bool {
    let Some(jitter) = jitter_ms else {
        return true;
    };
    // RMSSD over adjacent intervals only, as HRV and the features take it.
    features.nrmssd.is_some()
        && hrv::hrv(clean).is_some_and(|h| h.rmssd >= JITTER_MARGIN * timing::jitter_rmssd(jitter))
}

fn round_features(mut f: super::result::Features) -> super::result::Features {
    let r4 = |v: Option<f64>| v.map(|x| (x * 1e4).round() / 1e4);
    f.nrmssd = r4(f.nrmssd);
    f.shannon_entropy = r4(f.shannon_entropy);
    f.turning_point_ratio = r4(f.turning_point_ratio);
    f.sd1_sd2 = r4(f.sd1_sd2);
    f.spectral_peak_share = r4(f.spectral_peak_share);
    f.timing_resolution_ms = f.timing_resolution_ms.map(round2);
    f
}

fn round1(v: f64) -> f64 {
    (v * 10.0).round() / 10.0
}

fn round2(v: f64) -> f64 {
    (v * 100.0).round() / 100.0
}

fn round3(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}

fn source_of(data: &Map<String, Value>) -> Source {
    if data.contains_key("time") || data.contains_key("quadrants") {
        Source::Camera
    } else {
        Source::RrIntervals
    }
}

/// An analysis that found no result, for `reason`.
pub(super) fn failed(source: Source, reason: Abnormality) -> Analysis {
    Analysis::unreadable(source, reason)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::result::{Label, ResultKey};

    fn fixture(text: &str) -> Map<String, Value> {
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn the_camera_fixtures_get_their_rhythm() {
        let cases = [
            (
                include_str!("../../tests/fixtures/sinus_72.json"),
                ResultKey::Regular,
                Label::SinusRhythm,
            ),
            (
                include_str!("../../tests/fixtures/bradycardia_48.json"),
                ResultKey::Regular,
                Label::Bradycardia,
            ),
            (
                include_str!("../../tests/fixtures/irregular_af.json"),
                ResultKey::PossibleAtrialFibrillation,
                Label::AtrialFibrillation,
            ),
        ];
        for (text, key, label) in cases {
            let data = fixture(text);
            let analysis = analyse_payload(&data);
            assert_eq!(analysis.verdict().key, key, "{analysis:?}");
            assert!(analysis.rhythm.labels.contains(&label), "{analysis:?}");
            // The phone's own intervals, analysed alone, agree.
            let mut intervals_only = data.clone();
            intervals_only.remove("time");
            let from_intervals = analyse_payload(&intervals_only);
            assert_eq!(from_intervals.source, Source::RrIntervals);
            assert_eq!(from_intervals.verdict().key, key, "{from_intervals:?}");
        }
    }

    #[test]
    fn hostile_time_stamps_fail_without_panicking() {
        let n = 1800;
        let mut times: Vec<f64> = (0..n).map(|i| i as f64 * 33.3).collect();
        let values: Vec<f64> = (0..n).map(|i| (i as f64 * 0.2).sin()).collect();
        times[n - 1] = 1e300;
        let far = Recording::ppg(times, values.clone()).unwrap();
        assert_eq!(
            analyse(&far, Context::default()).abnormalities,
            vec![Abnormality::BadSignalQuality]
        );
        let seconds: Vec<f64> = (0..n).map(|i| i as f64 * 0.0333).collect();
        let in_seconds = Recording::ppg(seconds, values.clone()).unwrap();
        assert!(analyse(&in_seconds, Context::default()).failed());
        let one_second: Vec<f64> = (0..30).map(|i| i as f64 * 33.3).collect();
        let short = Recording::ppg(one_second, values[..30].to_vec()).unwrap();
        assert_eq!(
            analyse(&short, Context::default()).abnormalities,
            vec![Abnormality::TooShort]
        );
        let flat = Recording::ppg((0..n).map(|i| i as f64 * 10.0).collect(), vec![7.0; n]).unwrap();
        assert_eq!(
            analyse(&flat, Context::default()).abnormalities,
            vec![Abnormality::PulseNotFound]
        );
        let huge = Recording::RrIntervals(vec![f64::MAX; 100]);
        assert!(analyse(&huge, Context::default()).failed());
        let not_numbers = Recording::RrIntervals(vec![800.0, f64::NAN, f64::INFINITY]);
        assert!(analyse(&not_numbers, Context::default()).failed());
        let unequal = Recording::Ppg {
            times_ms: (0..420).map(|i| i as f64 * 10.0).collect(),
            values: Vec::new(),
        };
        assert!(analyse(&unequal, Context::default()).failed());
    }

    #[test]
    fn a_noiseless_pulse_train_is_read() {
        let times: Vec<f64> = (0..6000).map(|i| i as f64 * 10.0).collect();
        let values: Vec<f64> = times
            .iter()
            .map(|t| {
                (0..80)
                    .map(|k| (-0.5 * ((t - 300.0 - k as f64 * 800.0) / 60.0).powi(2)).exp())
                    .sum()
            })
            .collect();
        let analysis = analyse(&Recording::ppg(times, values).unwrap(), Context::default());
        assert!(!analysis.failed(), "{analysis:?}");
        assert_eq!(analysis.heart_rate, Some(75.0));
        assert_eq!(analysis.quality.rejected_beats, 0);
    }

    #[test]
    fn a_failed_capture_gives_no_result() {
        let analysis = analyse_payload(&fixture(include_str!(
            "../../tests/fixtures/no_heartrate.json"
        )));
        assert!(analysis.failed(), "{analysis:?}");
        assert_eq!(analysis.heart_rate, None);
        assert_eq!(analysis.verdict().key, ResultKey::QualityTooLow);
    }
}
