//! From beats to the interval series: spurious beats merged, implausible intervals and
//! premature (ectopic) beats set aside.

use super::beats::Beat;
use super::rhythm;
use super::signal::median;

/// Physiological interval bounds, ms: 25 to 240 bpm.
pub const PLAUSIBLE_MS: std::ops::RangeInclusive<f64> = 250.0..=2400.0;
/// Two accepted beats closer than half the typical interval cannot both be beats: one is a
/// dicrotic notch or noise (the notch follows the peak by 30–45 % of the interval).
const SPURIOUS_RATIO: f64 = 0.5;
/// An interval this far from its neighbours' median is a missed or extra beat, not rhythm:
/// a missed beat doubles the interval (ratio ≈ 2), an extra one halves it. The bounds leave
/// room for atrial fibrillation, whose intervals range from about 0.6 to 1.7 times the median.
const ARTEFACT_RATIO: (f64, f64) = (0.5, 1.8);
/// Neighbours either side that make the local reference.
const NEIGHBOURS: usize = 5;

/// Where the beats come from, which decides what a long interval is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gaps {
    /// A pulse wave: a weak pulse can go undetected (pulse deficit), so an interval longer
    /// than [`ARTEFACT_RATIO`] allows is a missed beat and is set aside.
    MissedBeats,
    /// A device's beat list (an ECG or a chest strap), whose detector rarely misses a beat.
    /// A long interval among regular neighbours is still a dropped beat; among neighbours
    /// that are already as variable as atrial fibrillation (normalised RMSSD ≥
    /// [`rhythm::NRMSSD_MIN`], Dash et al. 2009) it is a pause of that rhythm, which reaches
    /// twice the median in a slow ventricular response, and is kept.
    Listed,
}
/// A premature beat: an interval more than 20 % shorter than the local reference (Malik et
/// al.'s 20 % criterion, Eur Heart J 10:1060–1074, 1989), followed by a pause longer than
/// the reference (the compensatory pause; 5 % margin chosen here).
const PREMATURE_RATIO: f64 = 0.8;
const PAUSE_RATIO: f64 = 1.05;
/// When more than this share of intervals look premature the rhythm is irregular as a whole
/// and nothing is set aside.
const MAX_ECTOPIC_SHARE: f64 = 0.2;

/// Rejects the weaker of two accepted beats closer than [`SPURIOUS_RATIO`] of the typical
/// interval (`ms_per_sample` converts grid positions).
pub fn merge_spurious(beats: &mut [Beat], ms_per_sample: f64) {
    let accepted_gaps: Vec<f64> = accepted_pairs(beats)
        .map(|(a, b)| (beats[b].at - beats[a].at) * ms_per_sample)
        .collect();
    let Some(typical) = median(&accepted_gaps) else {
        return;
    };
    let mut previous: Option<usize> = None;
    for i in 0..beats.len() {
        if !beats[i].accepted {
            continue;
        }
        if let Some(p) = previous {
            let gap = (beats[i].at - beats[p].at) * ms_per_sample;
            if gap < SPURIOUS_RATIO * typical {
                let weaker = if strength(&beats[i]) < strength(&beats[p]) {
                    i
                } else {
                    p
                };
                beats[weaker].accepted = false;
                if weaker == p {
                    previous = Some(i);
                }
                continue;
            }
        }
        previous = Some(i);
    }
}

fn strength(beat: &Beat) -> f64 {
    beat.amplitude * beat.correlation.max(0.0)
}

fn accepted_pairs(beats: &[Beat]) -> impl Iterator<Item = (usize, usize)> + '_ {
    (1..beats.len())
        .filter(|&i| beats[i - 1].accepted && beats[i].accepted)
        .map(|i| (i - 1, i))
}

/// The interval before each beat after the first (ms), `None` where either beat was rejected
/// or the interval is implausible for its neighbours (long ones as `gaps` says).
pub fn series(beats: &[Beat], ms_per_sample: f64, gaps: Gaps) -> Vec<Option<f64>> {
    let raw: Vec<Option<f64>> = (1..beats.len())
        .map(|i| {
            let ms = (beats[i].at - beats[i - 1].at) * ms_per_sample;
            (beats[i - 1].accepted && beats[i].accepted && PLAUSIBLE_MS.contains(&ms)).then_some(ms)
        })
        .collect();
    (0..raw.len())
        .map(|i| {
            let ms = raw[i]?;
            let reference = local_reference(&raw, i, &[i])?;
            let ratio = ms / reference;
            let pause =
                ratio > ARTEFACT_RATIO.1 && gaps == Gaps::Listed && irregular_around(&raw, i);
            (ratio >= ARTEFACT_RATIO.0 && (ratio <= ARTEFACT_RATIO.1 || pause)).then_some(ms)
        })
        .collect()
}

/// Whether the intervals around `i` (leaving it out) already vary as much as atrial
/// fibrillation: their normalised RMSSD, over the pairs of adjacent intervals on either side,
/// reaches [`rhythm::NRMSSD_MIN`].
fn irregular_around(rr: &[Option<f64>], i: usize) -> bool {
    let lo = i.saturating_sub(NEIGHBOURS);
    let hi = (i + NEIGHBOURS + 1).min(rr.len());
    let (mut squares, mut pairs, mut sum, mut count) = (0.0, 0usize, 0.0, 0usize);
    for j in lo..hi {
        if j == i {
            continue;
        }
        let Some(ms) = rr[j] else { continue };
        sum += ms;
        count += 1;
        if j + 1 < hi
            && j + 1 != i
            && let Some(next) = rr[j + 1]
        {
            squares += (next - ms).powi(2);
            pairs += 1;
        }
    }
    // Fewer than three differences say nothing about a rhythm.
    pairs >= 3 && (squares / pairs as f64).sqrt() / (sum / count as f64) >= rhythm::NRMSSD_MIN
}

/// The median of the accepted intervals around `i`, leaving out `skip`.
fn local_reference(rr: &[Option<f64>], i: usize, skip: &[usize]) -> Option<f64> {
    let lo = i.saturating_sub(NEIGHBOURS);
    let hi = (i + NEIGHBOURS + 2).min(rr.len());
    // At most 2 × NEIGHBOURS + 2 values: on the stack, as this runs for every interval.
    let mut around = [0.0; 2 * NEIGHBOURS + 2];
    let mut count = 0;
    for j in (lo..hi).filter(|j| !skip.contains(j)) {
        if let Some(ms) = rr[j] {
            around[count] = ms;
            count += 1;
        }
    }
    if count < 2 {
        // Too few neighbours to judge: the interval stands on its own.
        return rr[i];
    }
    let around = &mut around[..count];
    let (_, middle, _) = around.select_nth_unstable_by(count / 2, f64::total_cmp);
    Some(*middle)
}

/// Premature beats: the indices `i` where `rr[i]` is premature and `rr[i + 1]` its pause.
pub fn ectopics(rr: &[Option<f64>]) -> Vec<usize> {
    let mut found = Vec::new();
    let mut i = 0;
    while i + 1 < rr.len() {
        if let (Some(short), Some(pause)) = (rr[i], rr[i + 1])
            && let Some(reference) = local_reference(rr, i, &[i, i + 1])
            && short < PREMATURE_RATIO * reference
            && pause > PAUSE_RATIO * reference
        {
            found.push(i);
            i += 2;
            continue;
        }
        i += 1;
    }
    found
}

/// Normal-to-normal intervals, the series HRV is defined on (Task Force of the ESC and
/// NASPE, Circulation 93:1043–1065, 1996): premature beats and their pauses are left out,
/// and so is every interval that differs by more than 20 % from the one before it (Malik et
/// al. 1989), which also catches an unrecognised artefact. `premature` are the
/// [`ectopics`] of `rr`.
pub fn normal_to_normal(rr: &[Option<f64>], premature: &[usize]) -> Vec<Option<f64>> {
    let mut normal = rr.to_vec();
    for &i in premature {
        normal[i] = None;
        normal[i + 1] = None;
    }
    for i in 1..rr.len() {
        if let (Some(before), Some(ms)) = (rr[i - 1], rr[i])
            && (ms - before).abs() > (1.0 - PREMATURE_RATIO) * before
        {
            normal[i] = None;
        }
    }
    normal
}

/// The series the rhythm features are computed on: the accepted intervals, with each
/// premature beat and its pause set aside (`None`) unless they are so many that they are the
/// rhythm. `premature` are the [`ectopics`] of `rr`.
pub fn for_rhythm(rr: &[Option<f64>], premature: &[usize]) -> Vec<Option<f64>> {
    let accepted = rr.iter().flatten().count();
    let mut clean = rr.to_vec();
    if premature.len() as f64 <= MAX_ECTOPIC_SHARE * accepted as f64 {
        for &i in premature {
            clean[i] = None;
            clean[i + 1] = None;
        }
    }
    clean
}

#[cfg(test)]
mod tests {
    use super::*;

    fn beat(at: f64, amplitude: f64) -> Beat {
        Beat {
            at,
            amplitude,
            correlation: 0.95,
            accepted: true,
            unsure: false,
        }
    }

    #[test]
    fn a_notch_between_two_beats_is_merged_away() {
        let mut beats: Vec<Beat> = (0..10).map(|k| beat(k as f64 * 800.0, 1.0)).collect();
        beats.insert(3, beat(2.0 * 800.0 + 300.0, 0.3));
        merge_spurious(&mut beats, 1.0);
        assert!(!beats[3].accepted);
        assert_eq!(beats.iter().filter(|b| b.accepted).count(), 10);
    }

    #[test]
    fn a_missed_beat_is_an_artefact_and_a_premature_beat_is_set_aside() {
        let mut rr = vec![Some(800.0); 20];
        rr[5] = Some(1600.0);
        let mut beats = vec![beat(0.0, 1.0)];
        for ms in rr.iter().flatten() {
            let at = beats.last().unwrap().at + ms;
            beats.push(beat(at, 1.0));
        }
        let series_of = |gaps| series(&beats, 1.0, gaps);
        for gaps in [Gaps::MissedBeats, Gaps::Listed] {
            let series = series_of(gaps);
            assert_eq!(series[5], None, "{gaps:?}");
            assert_eq!(series.iter().flatten().count(), 19);
        }

        let mut with_premature = vec![Some(800.0); 20];
        with_premature[8] = Some(560.0);
        with_premature[9] = Some(1040.0);
        let premature = ectopics(&with_premature);
        assert_eq!(premature, vec![8]);
        let clean = for_rhythm(&with_premature, &premature);
        assert_eq!(clean.iter().flatten().count(), 18);
    }

    #[test]
    fn a_long_pause_among_irregular_listed_beats_is_rhythm_but_a_pulse_gap_is_not() {
        // Intervals varying like atrial fibrillation, then a pause twice their median.
        let irregular = [
            700.0, 1000.0, 760.0, 1150.0, 820.0, 950.0, 690.0, 1900.0, 880.0, 720.0, 1080.0, 800.0,
            990.0, 740.0,
        ];
        let mut beats = vec![beat(0.0, 1.0)];
        for ms in irregular {
            let at = beats.last().unwrap().at + ms;
            beats.push(beat(at, 1.0));
        }
        assert_eq!(series(&beats, 1.0, Gaps::Listed)[7], Some(1900.0));
        assert_eq!(series(&beats, 1.0, Gaps::MissedBeats)[7], None);
    }
}
