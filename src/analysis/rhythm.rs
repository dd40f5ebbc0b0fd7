//! Rhythm screening from the interval series: irregularity features and the verdict.
//!
//! The rule follows Dash et al., "Automatic real time detection of atrial fibrillation", Ann
//! Biomed Eng 37(9):1701–1709, 2009: atrial fibrillation is an interval series that is at
//! once variable (normalised RMSSD), spread out (Shannon entropy) and random (turning-point
//! ratio). Two classic false positives are handled before and beside it: premature beats are
//! set aside first ([`super::intervals::for_rhythm`]), and respiratory sinus arrhythmia,
//! which is variable but periodic, is told apart by the concentration of the series' power in
//! one frequency band. Because setting aside short-long pairs also takes turning points out
//! of a truly random series, the whole series is judged too: premature beats in a regular
//! rhythm leave its histogram narrow (low entropy), fibrillation does not.

use realfft::RealFftPlanner;

use super::hrv::poincare;
use super::result::{Features, Label};

/// Dash et al. 2009: AF when RMSSD / mean interval ≥ 0.1.
pub const NRMSSD_MIN: f64 = 0.1;
/// Dash et al. 2009 use ShE ≥ 0.7 over 16 bins on 128 beats. A one-minute window holds 50
/// to 150 beats, so the histogram is sparser and the estimate lower for the same spread;
/// 0.6 keeps the criterion's role (it rules out series with few distinct values).
const SHANNON_MIN: f64 = 0.6;
/// Histogram bins for the Shannon entropy (Dash et al. 2009).
const SHANNON_BINS: usize = 16;
/// The turning-point test for randomness (Kendall & Stuart, The Advanced Theory of
/// Statistics, vol. 3; used by Dash et al. 2009 at 95 %): a random series of n values has
/// (2n − 4)/3 turning points with variance (16n − 29)/90. Fewer than z = 2.58 (99 %) below
/// that mean a smooth rhythm, not fibrillation. Too many turning points are not held against
/// a series: an alternating rhythm (bigeminy) is periodic and caught by [`PERIODIC_SHARE`],
/// and a random one exceeds the bound by chance.
const TURNING_POINT_Z: f64 = 2.58;
/// A random series spreads its power evenly, so that the strongest three adjacent bins of a
/// one-minute series hold about a quarter of it; a breathing rhythm puts most of its power
/// there. At or above half, the variability is periodic, not fibrillation (a threshold
/// chosen here; the measure is in the spirit of Staniczenko et al.'s spectral entropy,
/// Phys Rev E 79:011915, 2009).
const PERIODIC_SHARE: f64 = 0.5;
/// The share of its power that the strongest three adjacent bins of a random (white) series
/// reach in only 1 % of such series, by the number of bins from 3 to 19 (from 20 bins on it
/// is below [`PERIODIC_SHARE`]). A short series spreads its power over few bins, so chance
/// alone concentrates it: 15 random intervals put 0.64 of their power in three of their seven
/// bins on average, and would always look periodic. A series is judged periodic only when
/// its share also exceeds this, so that periodicity stands out from chance (as a periodogram
/// peak must in Fisher's g test, Proc R Soc A 125:54–59, 1929). Drawn by simulation: 200,000
/// Gaussian series of 2m and of 2m + 1 values for m bins, the larger 99th percentile;
/// `chance_shares_match_a_simulation` draws them again.
const CHANCE_SHARE_99: [f64; 17] = [
    1.0, 1.0, 0.987, 0.95, 0.901, 0.854, 0.805, 0.761, 0.722, 0.684, 0.651, 0.62, 0.595, 0.567,
    0.546, 0.523, 0.504,
];
/// Fewer clean intervals than this give no rhythm verdict.
pub const MIN_INTERVALS: usize = 12;
/// Bradycardia below 50 bpm, tachycardia above 100 bpm at rest.
const BRADYCARDIA_BPM: f64 = 50.0;
const TACHYCARDIA_BPM: f64 = 100.0;
/// The rate label of a rhythm at `heart_rate` bpm measured at rest, by the thresholds above:
/// what makes a regular rhythm `warning`, for the lists that keep only the rate.
pub fn rate_label(heart_rate: f64) -> Option<Label> {
    if heart_rate < BRADYCARDIA_BPM {
        Some(Label::Bradycardia)
    } else if heart_rate > TACHYCARDIA_BPM {
        Some(Label::Tachycardia)
    } else {
        None
    }
}

/// Premature beats in a minute from which they are "frequent".
pub const FREQUENT_ECTOPICS: usize = 3;
/// Intervals in each window when marking irregular stretches.
const STRETCH_WINDOW: usize = 8;

/// The irregularity features of a clean interval series (ms); `resolution_ms` is the finest
/// step its timing can resolve, which sets the narrowest histogram bin.
pub fn features(rr: &[f64], resolution_ms: f64) -> Features {
    let series: Vec<Option<f64>> = rr.iter().copied().map(Some).collect();
    features_with_gaps(&series, resolution_ms)
}

/// The features of a series in which set-aside intervals are `None`. As for HRV, successive
/// differences, Poincaré pairs and turning points are taken only between intervals that are
/// next to each other; the histogram and the spectrum take the accepted intervals in order.
/// Taking turning points across a gap would bias the ratio: a rejected beat is often the weak
/// one after a short interval, and dropping it drops a turning point.
pub fn features_with_gaps(rr: &[Option<f64>], resolution_ms: f64) -> Features {
    features_of(rr, resolution_ms, None)
}

/// [`features_with_gaps`], with the periodicity from [`features_timed`]'s periodogram when
/// `ends_ms` is given and the series has gaps inside.
fn features_of(rr: &[Option<f64>], resolution_ms: f64, ends_ms: Option<&[f64]>) -> Features {
    let mut f = Features {
        timing_resolution_ms: Some(resolution_ms),
        ..Features::default()
    };
    let accepted: Vec<f64> = rr.iter().flatten().copied().collect();
    let pairs: Vec<(f64, f64)> = rr.windows(2).filter_map(|w| Some((w[0]?, w[1]?))).collect();
    let triples: Vec<(f64, f64, f64)> = rr
        .windows(3)
        .filter_map(|w| Some((w[0]?, w[1]?, w[2]?)))
        .collect();
    if accepted.len() < 3 || pairs.is_empty() || triples.is_empty() {
        return f;
    }
    let mean = accepted.iter().sum::<f64>() / accepted.len() as f64;
    let rmssd =
        (pairs.iter().map(|(a, b)| (b - a) * (b - a)).sum::<f64>() / pairs.len() as f64).sqrt();
    f.nrmssd = (mean > 0.0).then(|| rmssd / mean);
    f.shannon_entropy = Some(shannon_entropy(&accepted, resolution_ms));
    let turning = triples
        .iter()
        .filter(|(a, b, c)| (b > a && b > c) || (b < a && b < c))
        .count();
    f.turning_point_ratio = Some(turning as f64 / triples.len() as f64);
    let (sd1, sd2) = poincare(&pairs);
    f.sd1_sd2 = (sd2 > 0.0).then(|| sd1 / sd2);
    f.spectral_peak_share = match ends_ms.and_then(|ends| timed_across_gaps(rr, ends)) {
        Some(points) => lomb_peak_share(&points),
        None => spectral_peak_share(&accepted, mean),
    };
    f
}

/// The longest series whose periodicity [`features_timed`] takes from the Lomb–Scargle
/// periodogram: ten minutes at 60 bpm, more than twice a minute at the fastest rate counted
/// (240 bpm), at most 600 × 300 steps.
pub const LOMB_MOST: usize = 600;

/// As [`features_with_gaps`], given the time (ms) at which each interval of `rr` ends. Where
/// intervals are missing inside the series (a beat set aside, movement cut out), joining the
/// others end to end would break the phase of a breathing rhythm at every join and spread its
/// power; the periodicity is then judged on the Lomb–Scargle periodogram, which takes each
/// interval at its own time (Lomb, Astrophys Space Sci 39:447–462, 1976; Scargle, ApJ
/// 263:835–853, 1982; for heart-rate series with missing beats, Clifford & Tarassenko, IEEE
/// TBME 52(4):630–638, 2005). Without gaps it is the same share as the DFT's. The periodogram
/// costs intervals × intervals / 2 steps, so a series longer than [`LOMB_MOST`] (never a
/// minute's) keeps the DFT of the joined intervals.
pub fn features_timed(rr: &[Option<f64>], ends_ms: &[f64], resolution_ms: f64) -> Features {
    features_of(rr, resolution_ms, Some(ends_ms))
}

/// The accepted intervals of `rr` as `(end time ms, value ms)`, when some are missing between
/// them and the series is short enough for the periodogram ([`LOMB_MOST`]); otherwise none.
fn timed_across_gaps(rr: &[Option<f64>], ends_ms: &[f64]) -> Option<Vec<(f64, f64)>> {
    let first = rr.iter().position(Option::is_some)?;
    let last = rr.iter().rposition(Option::is_some)?;
    let inner_gap = rr[first..=last].iter().any(Option::is_none);
    (inner_gap && ends_ms.len() == rr.len() && rr.len() <= LOMB_MOST).then(|| {
        rr.iter()
            .zip(ends_ms)
            .filter_map(|(v, t)| Some((*t, (*v)?)))
            .collect()
    })
}

/// [`spectral_peak_share`] of intervals `(end time ms, value ms)` with gaps between them: the
/// time axis is counted in mean intervals (beats), as the DFT's is, and the periodogram is
/// taken at the DFT's frequencies for as many beats as the series spans.
fn lomb_peak_share(points: &[(f64, f64)]) -> Option<f64> {
    let n = points.len();
    if n < 4 {
        return None;
    }
    let mean = points.iter().map(|p| p.1).sum::<f64>() / n as f64;
    let start = points[0].0;
    let span = (points[n - 1].0 - start) / mean;
    let slots = span.round() as usize + 1;
    let bins = slots / 2;
    if mean <= 0.0 || bins < 3 {
        return None;
    }
    // Per frequency k/slots: Σx·cos, Σx·sin, Σcos², Σsin², Σcos·sin over the points, each
    // point's cos and sin of k·θ by rotating those of (k − 1)·θ.
    let mut sums = vec![[0.0f64; 5]; bins];
    for &(t, value) in points {
        let x = value - mean;
        let theta = std::f64::consts::TAU * (t - start) / mean / slots as f64;
        let (s1, c1) = theta.sin_cos();
        let (mut c, mut s) = (c1, s1);
        for sum in &mut sums {
            sum[0] += x * c;
            sum[1] += x * s;
            sum[2] += c * c;
            sum[3] += s * s;
            sum[4] += c * s;
            (c, s) = (c * c1 - s * s1, s * c1 + c * s1);
        }
    }
    let power: Vec<f64> = sums
        .iter()
        .map(|&[xc, xs, cc, ss, cs]| {
            // Scargle's τ makes the two terms independent: tan 2ωτ = Σsin 2ωt / Σcos 2ωt.
            let (sin, cos) = (0.5 * (2.0 * cs).atan2(cc - ss)).sin_cos();
            let c_term = xc * cos + xs * sin;
            let s_term = xs * cos - xc * sin;
            let c_norm = cc * cos * cos + 2.0 * cs * cos * sin + ss * sin * sin;
            let s_norm = ss * cos * cos - 2.0 * cs * cos * sin + cc * sin * sin;
            let part = |num: f64, den: f64| if den > 1e-12 { num * num / den } else { 0.0 };
            part(c_term, c_norm) + part(s_term, s_norm)
        })
        .collect();
    peak_share(&power)
}

/// How many values the turning-point test sees in a series with gaps: two more than the
/// number of triples of adjacent intervals.
pub fn turning_point_values(rr: &[Option<f64>]) -> usize {
    rr.windows(3)
        .filter(|w| w.iter().all(Option::is_some))
        .count()
        + 2
}

/// Normalised Shannon entropy of the histogram over [min, max] in at most 16 equal bins, no
/// narrower than `resolution_ms` (a series quantised to camera frames cannot fill finer bins).
fn shannon_entropy(rr: &[f64], resolution_ms: f64) -> f64 {
    let low = rr.iter().copied().fold(f64::INFINITY, f64::min);
    let high = rr.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let range = high - low;
    let by_resolution = if resolution_ms > 0.0 {
        (range / resolution_ms).floor() as usize + 1
    } else {
        SHANNON_BINS
    };
    let bins = SHANNON_BINS.min(by_resolution).max(1);
    if bins == 1 || range <= 0.0 {
        return 0.0;
    }
    let mut counts = vec![0usize; bins];
    for v in rr {
        let k = (((v - low) / range) * bins as f64).floor() as usize;
        counts[k.min(bins - 1)] += 1;
    }
    let n = rr.len() as f64;
    let h: f64 = counts
        .iter()
        .filter(|c| **c > 0)
        .map(|c| {
            let p = *c as f64 / n;
            -p * p.ln()
        })
        .sum();
    h / (SHANNON_BINS as f64).ln()
}

/// The largest share of the mean-removed series' power (bins 1..=n/2 of its DFT) that three
/// adjacent bins hold.
fn spectral_peak_share(rr: &[f64], mean: f64) -> Option<f64> {
    let n = rr.len();
    if n < 4 {
        return None;
    }
    let mut planner = RealFftPlanner::<f64>::new();
    let fft = planner.plan_fft_forward(n);
    let mut input: Vec<f64> = rr.iter().map(|v| v - mean).collect();
    let mut spectrum = fft.make_output_vec();
    fft.process(&mut input, &mut spectrum).ok()?;
    let power: Vec<f64> = spectrum[1..=n / 2].iter().map(|c| c.norm_sqr()).collect();
    peak_share(&power)
}

/// The largest share of `power` that three adjacent bins hold.
fn peak_share(power: &[f64]) -> Option<f64> {
    let total: f64 = power.iter().sum();
    if total <= 0.0 {
        return None;
    }
    let best = (0..power.len())
        .map(|k| {
            power[k.saturating_sub(1)..(k + 2).min(power.len())]
                .iter()
                .sum::<f64>()
        })
        .fold(0.0, f64::max);
    Some(best / total)
}

/// Whether a series of `n` values has at least as many turning points as chance gives (within
/// [`TURNING_POINT_Z`]): it is not smooth.
fn not_smooth(ratio: f64, n: usize) -> bool {
    let n = n as f64;
    let expected = (2.0 * n - 4.0) / 3.0;
    let sd = ((16.0 * n - 29.0) / 90.0).sqrt();
    ratio * (n - 2.0) >= expected - TURNING_POINT_Z * sd
}

/// Whether a series with these features, of `n` intervals, is irregular in the way of atrial
/// fibrillation: variable, spread out, random and not periodic.
pub fn fibrillation_like(features: &Features, n: usize) -> bool {
    let (Some(nrmssd), Some(entropy), Some(tpr)) = (
        features.nrmssd,
        features.shannon_entropy,
        features.turning_point_ratio,
    ) else {
        return false;
    };
    n >= MIN_INTERVALS
        && nrmssd >= NRMSSD_MIN
        && !periodic(features, n)
        && entropy >= SHANNON_MIN
        && not_smooth(tpr, n)
}

/// Whether the variability of a series of `n` intervals with these features is periodic
/// (breathing), by the share its strongest frequencies hold: at least [`PERIODIC_SHARE`], and
/// more than chance gives a series of that length ([`CHANCE_SHARE_99`]).
fn periodic(features: &Features, n: usize) -> bool {
    features
        .spectral_peak_share
        .is_none_or(|share| share >= periodic_share_min(n))
}

/// The least peak share that makes a series of `n` intervals periodic.
fn periodic_share_min(n: usize) -> f64 {
    let bins = n / 2;
    let chance = match bins.checked_sub(3) {
        None => 1.0,
        Some(i) => CHANCE_SHARE_99.get(i).copied().unwrap_or(0.0),
    };
    PERIODIC_SHARE.max(chance)
}

/// The screening's result: labels (least severe first) and whether the rhythm is irregular.
/// `features` are those of the `n` intervals the verdict was made on; `af` whether they (or
/// the whole series, before premature beats were set aside) are fibrillation-like.
pub fn screen(
    features: &Features,
    n: usize,
    af: bool,
    heart_rate: f64,
    at_rest: bool,
) -> (Vec<Label>, bool) {
    let mut labels = Vec::new();
    let (Some(nrmssd), Some(tpr)) = (features.nrmssd, features.turning_point_ratio) else {
        return (labels, false);
    };
    // Too few intervals stand next to each other (beats set aside break the series) for
    // irregularity to be judged: no verdict at all, rather than a sinus rhythm by default.
    if n < MIN_INTERVALS {
        return (labels, false);
    }
    // Variable and aperiodic, not smooth, but not random enough for fibrillation.
    let irregular_other = n >= MIN_INTERVALS
        && !af
        && nrmssd >= NRMSSD_MIN
        && !periodic(features, n)
        && not_smooth(tpr, n);
    let ectopics = features.ectopic_beats;

    if af {
        labels.push(Label::AtrialFibrillation);
    } else {
        if !irregular_other && ectopics < FREQUENT_ECTOPICS {
            labels.push(Label::SinusRhythm);
        }
        match ectopics {
            0 => {}
            n if n < FREQUENT_ECTOPICS => labels.push(Label::ExtrasystolesIsolated),
            _ => labels.push(Label::ExtrasystolesFrequent),
        }
        if irregular_other {
            labels.push(Label::IrregularRhythm);
        }
    }
    if heart_rate < BRADYCARDIA_BPM {
        labels.push(Label::Bradycardia);
    } else if heart_rate > TACHYCARDIA_BPM && at_rest {
        labels.push(Label::Tachycardia);
    }
    labels.sort();
    let irregular = af || irregular_other || ectopics >= FREQUENT_ECTOPICS;
    (labels, irregular)
}

/// Stretches (ms from the start) where windows of consecutive accepted intervals are
/// variable in the sense of [`NRMSSD_MIN`]; `times` are the closing beats of `rr`.
pub fn irregular_stretches(rr: &[Option<f64>], times: &[f64]) -> Vec<[f64; 2]> {
    let mut stretches: Vec<[f64; 2]> = Vec::new();
    if rr.len() < STRETCH_WINDOW {
        return stretches;
    }
    for start in 0..=rr.len() - STRETCH_WINDOW {
        let window: Option<Vec<f64>> = rr[start..start + STRETCH_WINDOW].iter().copied().collect();
        let Some(window) = window else { continue };
        let mean = window.iter().sum::<f64>() / window.len() as f64;
        let diffs: Vec<f64> = window.windows(2).map(|w| w[1] - w[0]).collect();
        let rmssd = (diffs.iter().map(|d| d * d).sum::<f64>() / diffs.len() as f64).sqrt();
        if rmssd / mean < NRMSSD_MIN {
            continue;
        }
        let begin = times[start] - window[0];
        let end = times[start + STRETCH_WINDOW - 1];
        match stretches.last_mut() {
            Some(last) if begin <= last[1] => last[1] = last[1].max(end),
            _ => stretches.push([begin, end]),
        }
    }
    stretches
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`CHANCE_SHARE_99`] drawn again, on fewer series (4,000 per length) and by this
    /// module's own share: each within 0.04 of the table.
    #[test]
    fn chance_shares_match_a_simulation() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(99);
        let mut gauss = move || {
            // Box–Muller.
            let (u, v): (f64, f64) = (rng.random(), rng.random());
            (-2.0 * (1.0 - u).ln()).sqrt() * (std::f64::consts::TAU * v).cos()
        };
        for (i, &table) in CHANCE_SHARE_99.iter().enumerate().skip(2) {
            let bins = i + 3;
            let quantile = |n: usize, gauss: &mut dyn FnMut() -> f64| {
                let mut shares: Vec<f64> = (0..4_000)
                    .map(|_| {
                        let x: Vec<f64> = (0..n).map(|_| gauss()).collect();
                        let mean = x.iter().sum::<f64>() / n as f64;
                        spectral_peak_share(&x, mean).unwrap()
                    })
                    .collect();
                shares.sort_by(f64::total_cmp);
                shares[shares.len() * 99 / 100]
            };
            let drawn = quantile(2 * bins, &mut gauss).max(quantile(2 * bins + 1, &mut gauss));
            assert!(
                (drawn - table).abs() < 0.04,
                "{bins} bins: drawn {drawn:.3}, table {table}"
            );
        }
        assert!(periodic_share_min(40) == PERIODIC_SHARE && periodic_share_min(15) > 0.9);
    }

    #[test]
    fn a_breathing_rhythm_is_periodic_and_random_intervals_are_not() {
        let breathing: Vec<f64> = (0..70)
            .map(|i| 850.0 + 90.0 * (i as f64 * std::f64::consts::TAU / 4.2).sin())
            .collect();
        let f = features(&breathing, 1.0);
        assert!(f.nrmssd.unwrap() > 0.1);
        assert!(f.spectral_peak_share.unwrap() > 0.8);
        let af = fibrillation_like(&f, breathing.len());
        let (labels, irregular) = screen(&f, breathing.len(), af, 70.0, true);
        assert_eq!((labels, irregular), (vec![Label::SinusRhythm], false));
    }

    #[test]
    fn a_breathing_rhythm_stays_periodic_across_a_gap() {
        // 70 beats of breathing rhythm (3.1 beats a breath); two stretches cut out, as
        // movement bursts are (5–9 s and 40–45 s).
        let rr: Vec<f64> = (0..70)
            .map(|i| 850.0 + 90.0 * (i as f64 * std::f64::consts::TAU / 3.1).sin())
            .collect();
        let ends: Vec<f64> = rr
            .iter()
            .scan(0.0, |t, v| {
                *t += v;
                Some(*t)
            })
            .collect();
        let cut: Vec<Option<f64>> = rr
            .iter()
            .zip(&ends)
            .map(|(v, t)| {
                let moved = (5_000.0..9_000.0).contains(t) || (40_000.0..45_000.0).contains(t);
                (!moved).then_some(*v)
            })
            .collect();
        assert_eq!(cut.iter().filter(|v| v.is_none()).count(), 10);
        // Joined end to end, the breathing rhythm's phase breaks at each cut and its power
        // spreads; taken at their own times, the intervals keep it.
        let joined = features_with_gaps(&cut, 1.0).spectral_peak_share.unwrap();
        let timed = features_timed(&cut, &ends, 1.0)
            .spectral_peak_share
            .unwrap();
        assert!(
            timed > 0.75 && joined < 0.7,
            "timed {timed:.3}, joined {joined:.3}"
        );
        // Without a gap, the periodogram is the DFT's.
        let whole: Vec<Option<f64>> = rr.iter().copied().map(Some).collect();
        let dft = features_with_gaps(&whole, 1.0).spectral_peak_share.unwrap();
        let lomb = lomb_peak_share(
            &rr.iter()
                .copied()
                .zip(&ends)
                .map(|(v, t)| (*t, v))
                .collect::<Vec<_>>(),
        )
        .unwrap();
        assert!(
            (dft - lomb).abs() < 0.05,
            "DFT {dft:.3}, Lomb–Scargle {lomb:.3}"
        );
        // Beyond LOMB_MOST intervals the periodogram's cost is not spent: the joined DFT.
        let long: Vec<Option<f64>> = (0..LOMB_MOST + 1)
            .map(|i| (i % 100 != 50).then_some(800.0 + 80.0 * (i as f64 / 3.1).sin()))
            .collect();
        let long_ends: Vec<f64> = (0..long.len()).map(|i| 800.0 * (i + 1) as f64).collect();
        assert_eq!(
            features_timed(&long, &long_ends, 1.0).spectral_peak_share,
            features_with_gaps(&long, 1.0).spectral_peak_share
        );
        // Random intervals stay aperiodic.
        let mut state = 12345u64;
        let random: Vec<Option<f64>> = (0..80)
            .map(|i| {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let v = 600.0 + 400.0 * ((state >> 33) as f64 / (1u64 << 31) as f64);
                (!(30..40).contains(&i)).then_some(v)
            })
            .collect();
        let random_ends: Vec<f64> = (0..80).map(|i| 800.0 * (i + 1) as f64).collect();
        let share = features_timed(&random, &random_ends, 1.0)
            .spectral_peak_share
            .unwrap();
        assert!(share < 0.5, "{share:.2}");
    }

    #[test]
    fn entropy_is_zero_for_a_constant_series_and_bins_follow_the_resolution() {
        assert_eq!(shannon_entropy(&[800.0; 10], 1.0), 0.0);
        // Two values a frame apart fill two bins, not sixteen.
        let two = [800.0, 833.0, 800.0, 833.0];
        assert!((shannon_entropy(&two, 33.0) - 2f64.ln() / 16f64.ln()).abs() < 1e-12);
    }
}
