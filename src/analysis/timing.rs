//! How precisely the beats are timed, read from the recording itself.
//!
//! A beat's time is only as good as the signal it is read from: a pulse sampled coarsely
//! (a sensor well below the camera's frame rate, laid onto the frames), a slow upstroke or
//! noise all move each fiducial point by some jitter. Intervals inherit that jitter, and
//! jitter alone is irregular: independent, aperiodic, with as many turning points as chance
//! gives. Judging a rhythm from intervals whose jitter rivals their variability would turn a
//! coarse recording of a steady pulse into "possible atrial fibrillation".
//!
//! The jitter is measured, not assumed: every beat is timed twice, at its systolic peak
//! (where the analysis places it) and at the steepest point of its upstroke, by methods that
//! err differently. The rise between the two changes little from one beat to the next, so the
//! spread of its beat-to-beat changes bounds how precisely the two points are read. This
//! covers the source's bandwidth, the rise time and the noise at once. A source held onto the
//! samples (a slower sensor, each value repeated) shifts both points alike, so its steps are
//! measured apart ([`held_step`]) and added.

use super::beats::vertex_offset;
use super::signal::median;

/// How far before a peak its upstroke is looked for, as a share of the typical interval: the
/// upstroke takes 100–150 ms of a 600–1200 ms beat (the generator's and heartpy's pulses
/// alike), so 0.4 of the interval always reaches the trough before it.
const FOOT_REACH: f64 = 0.4;
/// Beat-to-beat changes of the rise time needed for an estimate.
const MIN_CHANGES: usize = 8;
/// For normally distributed errors, the median absolute value of a difference of two is
/// 0.6745 × √2 standard deviations (the median of a half-normal is 0.6745 σ): the factor
/// that turns it into one SD. The median keeps a few misplaced feet from inflating it.
const MEDIAN_TO_SD: f64 = 1.0 / (0.674_49 * std::f64::consts::SQRT_2);

/// The steepest point of each beat's upstroke, before its peak at grid position `peaks` in
/// the pulse `fine`: the maximum of the first derivative, one of the fiducial points of Chiu
/// et al., "Determination of pulse wave velocities with computerized algorithms", Am Heart J
/// 121(5):1460–1470, 1991. It is placed between samples by a parabola through the largest
/// slope and its neighbours, as the peaks are. Unlike the foot it needs no trough, which a
/// fast rhythm blurs with the tail of the beat before. `None` where the beat has no clear
/// upstroke (flat, or cut off by the start).
pub fn upstrokes(fine: &[f64], peaks: &[f64], typical_samples: f64) -> Vec<Option<f64>> {
    let reach = (FOOT_REACH * typical_samples).round().max(3.0) as usize;
    peaks
        .iter()
        .map(|&peak| upstroke(fine, peak, reach))
        .collect()
}

fn upstroke(fine: &[f64], peak: f64, reach: usize) -> Option<f64> {
    let top = (peak.round() as usize).min(fine.len().checked_sub(1)?);
    let start = top.checked_sub(reach)?;
    let trough = (start..=top).min_by(|a, b| fine[*a].total_cmp(&fine[*b]))?;
    if top < trough + 2 {
        return None;
    }
    // slope(k) is the slope between samples trough + k and trough + k + 1.
    let slope = |k: usize| fine[trough + k + 1] - fine[trough + k];
    let count = top - trough;
    let k = (0..count).max_by(|a, b| slope(*a).total_cmp(&slope(*b)))?;
    if slope(k) <= 0.0 {
        return None;
    }
    let offset = if k > 0 && k + 1 < count {
        vertex_offset(slope(k - 1), slope(k), slope(k + 1))
    } else {
        0.0
    };
    let at = trough as f64 + k as f64 + 0.5 + offset;
    (at <= peak).then_some(at)
}

/// The timing jitter of one beat time (one SD, in the units of `peaks`), from the
/// beat-to-beat changes of the rise from each upstroke to its peak (both read with the same
/// error, so a change holds two peak and two upstroke errors: its SD is 2σ). Only beats
/// `trusted` and next to each other count; `None` with fewer than [`MIN_CHANGES`] changes.
pub fn jitter(peaks: &[f64], upstrokes: &[Option<f64>], trusted: &[bool]) -> Option<f64> {
    let rise: Vec<Option<f64>> = peaks
        .iter()
        .zip(upstrokes)
        .zip(trusted)
        .map(|((p, f), ok)| f.filter(|_| *ok).map(|f| p - f))
        .collect();
    let changes: Vec<f64> = rise
        .windows(2)
        .filter_map(|w| Some((w[1]? - w[0]?).abs()))
        .collect();
    if changes.len() < MIN_CHANGES {
        return None;
    }
    // SD of a change = √2 × SD of the rise; the rise's variance is that of a peak and an
    // upstroke error together (2σ²): σ = SD(change) / 2.
    Some(median(&changes)? * MEDIAN_TO_SD * std::f64::consts::SQRT_2 / 2.0)
}

/// A share of samples repeating the one before above which the source was held: a sensor
/// slower than the samples it is laid onto, each value repeated until the next (sample and
/// hold). A live signal with noise never repeats itself exactly that often.
const HELD_SHARE: f64 = 0.5;

/// The length (in samples) of the steps of a held source, when `channels` are one: the mean
/// run of samples at which every channel repeats its previous value exactly. Within a step
/// the signal says nothing about when the pulse moved, so each beat is late by up to a step,
/// uniformly: SD step/√12. Camera cells are whole numbers and may repeat by chance one at a
/// time, never all of them together, frame after frame.
pub fn held_step<T: PartialEq>(channels: &[&[T]]) -> Option<f64> {
    let len = channels.iter().map(|c| c.len()).min()?;
    if len < 2 {
        return None;
    }
    // Every channel must repeat as often: one that does not settles it in a single pass.
    let needed = HELD_SHARE * (len - 1) as f64;
    let first = channels[0][..len]
        .windows(2)
        .filter(|w| w[0] == w[1])
        .count();
    if (first as f64) < needed {
        return None;
    }
    let repeats = (1..len)
        .filter(|&i| channels.iter().all(|c| c[i] == c[i - 1]))
        .count();
    let runs = len - repeats;
    (repeats as f64 >= HELD_SHARE * (len - 1) as f64).then(|| len as f64 / runs as f64)
}

/// The timing SD of one beat from both causes: the measured spread of the fiducial points and
/// the steps of a held source (uniform over a step: step/√12), independent, so in quadrature.
pub fn combined(measured: Option<f64>, held_step: Option<f64>) -> Option<f64> {
    let held = held_step.map_or(0.0, |step| step / 12f64.sqrt());
    match measured {
        Some(m) => Some(m.hypot(held)),
        None => held_step.map(|_| held),
    }
}

/// The RMSSD that timing jitter of `sigma` alone gives an interval series: a successive
/// difference t₊₁ − 2t + t₋₁ of independent beat times has variance 6σ².
pub fn jitter_rmssd(sigma: f64) -> f64 {
    6f64.sqrt() * sigma
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_steepest_point_of_a_smooth_upstroke_is_found_between_samples() {
        // Pulses exp(−((t − c)/w)²): the upstroke is steepest at c − w/√2.
        let (w, rate) = (4.0, 1.0);
        let centres: Vec<f64> = (0..12).map(|k| 20.3 + 25.0 * k as f64).collect();
        let x: Vec<f64> = (0..320)
            .map(|i| {
                let t = i as f64 / rate;
                centres.iter().map(|c| (-((t - c) / w).powi(2)).exp()).sum()
            })
            .collect();
        let found = upstrokes(&x, &centres, 25.0);
        for (f, c) in found.iter().zip(&centres) {
            let truth = c - w / std::f64::consts::SQRT_2;
            assert!((f.unwrap() - truth).abs() < 0.15, "{f:?} against {truth}");
        }
        // Equal rises: next to no jitter.
        let sigma = jitter(&centres, &found, &vec![true; centres.len()]).unwrap();
        assert!(sigma < 0.1, "{sigma}");
    }

    #[test]
    fn a_held_source_is_told_by_its_repeats() {
        let held: Vec<f32> = (0..300).map(|i| (i / 4) as f32).collect();
        assert_eq!(held_step(&[&held[..], &held[..]]), Some(4.0));
        let live: Vec<f32> = (0..300).map(|i| (i as f32 * 0.37).sin()).collect();
        assert_eq!(held_step(&[&live[..]]), None);
        assert_eq!(held_step(&[&held[..], &live[..]]), None);
        assert!((combined(Some(3.0), Some(4.0 * 12f64.sqrt())).unwrap() - 5.0).abs() < 1e-12);
        assert_eq!(combined(None, None), None);
    }

    #[test]
    fn jitter_grows_with_the_spread_of_the_rise() {
        let peaks: Vec<f64> = (0..40).map(|k| 100.0 + 25.0 * k as f64).collect();
        // Rises alternating by ±2 samples: changes of 4, a σ of 4 × MEDIAN_TO_SD / √2.
        let feet: Vec<Option<f64>> = peaks
            .iter()
            .enumerate()
            .map(|(k, p)| Some(p - 6.0 + if k % 2 == 0 { 2.0 } else { -2.0 }))
            .collect();
        let sigma = jitter(&peaks, &feet, &[true; 40]).unwrap();
        assert!((sigma - 4.0 * MEDIAN_TO_SD / std::f64::consts::SQRT_2).abs() < 1e-9);
        assert_eq!(jitter(&peaks[..5], &feet[..5], &[true; 5]), None);
    }
}
