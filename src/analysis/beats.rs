//! Beats: systolic peaks found, placed below the sample period, and judged by their shape.

use super::signal::{median, moving_average};

/// Elgendi's two event-related moving averages (Elgendi et al., "Systolic peak detection in
/// acceleration photoplethysmograms measured from emergency responders in tropical
/// conditions", PLoS ONE 8(10):e76585, 2013; the PPG parameters of its table 3): a 111 ms
/// window follows the systolic wave, a 667 ms window the beat.
const PEAK_WINDOW_S: f64 = 0.111;
const BEAT_WINDOW_S: f64 = 0.667;
/// Elgendi's offset β: the beat average is raised by β × the mean of the squared signal.
const OFFSET_BETA: f64 = 0.02;
/// No two beats closer than 250 ms (240 bpm): the larger of two such peaks is kept.
const REFRACTORY_S: f64 = 0.25;
/// Orphanidou et al., "Signal-quality indices for the electrocardiogram and
/// photoplethysmogram: derivation and applications to wireless monitoring", IEEE JBHI
/// 19(3):832–838, 2015: a PPG beat whose correlation with the recording's average beat is
/// below 0.86 is not acceptable.
pub const MIN_TEMPLATE_CORRELATION: f64 = 0.86;
/// A peak far smaller or larger than the typical one is a notch, noise or a movement, not a
/// beat (a choice made here: a quarter and four times the median height).
const AMPLITUDE_RANGE: (f64, f64) = (0.25, 4.0);

/// A detected beat.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Beat {
    /// Position on the grid, in samples (fractional after refinement).
    pub at: f64,
    /// Height above the trough before it.
    pub amplitude: f64,
    /// Correlation of its shape with the average beat.
    pub correlation: f64,
    pub accepted: bool,
    /// Kept by the second pass ([`recover_weak`]): shape and timing support it, its height
    /// does not.
    pub unsure: bool,
}

/// Systolic peaks of a band-passed pulse (0.5–8 Hz, beats up), as grid indices.
pub fn detect(band: &[f64], rate: f64) -> Vec<usize> {
    let squared: Vec<f64> = band.iter().map(|v| v.max(0.0).powi(2)).collect();
    if squared.is_empty() {
        return Vec::new();
    }
    let w1 = ((PEAK_WINDOW_S * rate).round() as usize).max(1);
    let w2 = ((BEAT_WINDOW_S * rate).round() as usize).max(w1 + 1);
    let ma_peak = moving_average(&squared, w1);
    let ma_beat = moving_average(&squared, w2);
    let alpha = OFFSET_BETA * squared.iter().sum::<f64>() / squared.len() as f64;

    let mut peaks: Vec<usize> = Vec::new();
    let mut start = None;
    for i in 0..=squared.len() {
        let inside = i < squared.len() && ma_peak[i] > ma_beat[i] + alpha;
        match (inside, start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                // Blocks narrower than the systolic window are noise (Elgendi's THR2 = W1).
                if i - s >= w1 {
                    let peak = (s..i)
                        .max_by(|a, b| band[*a].total_cmp(&band[*b]))
                        .unwrap_or(s);
                    peaks.push(peak);
                }
                start = None;
            }
            _ => {}
        }
    }
    let refractory = (REFRACTORY_S * rate).round() as usize;
    let mut kept: Vec<usize> = Vec::with_capacity(peaks.len());
    for p in peaks {
        match kept.last_mut() {
            Some(last) if p - *last < refractory => {
                if band[p] > band[*last] {
                    *last = p;
                }
            }
            _ => kept.push(p),
        }
    }
    kept
}

/// Each peak moved to the maximum of `fine` (a wider-band copy of the pulse) within ±60 ms,
/// then placed between samples by fitting a parabola through the maximum and its two
/// neighbours (parabolic interpolation; Smith & Serra, "PARSHL", ICMC 1987, for spectral
/// peaks; the same three-point fit is used for PPG fiducial points).
///
/// A pulse clipped by its sensor has no observable peak, only a plateau at the clipping
/// level of `raw`; its beat is placed where the upstroke reaches that level (a steep, and so
/// precise, fiducial point), as heartpy does without its clipping interpolation.
pub fn refine(fine: &[f64], raw: &[f64], peaks: &[usize], rate: f64) -> Vec<f64> {
    let reach = ((0.06 * rate).round() as usize).max(1);
    let n = fine.len().min(raw.len());
    let clip = clipping_level(raw, rate);
    peaks
        .iter()
        .map(|&p| {
            let lo = p.saturating_sub(reach);
            let hi = (p + reach + 1).min(n);
            if let Some(level) = clip
                && let Some(first) = (lo..hi).find(|&i| raw[i] >= level)
            {
                let mut start = first;
                while start > 0 && raw[start - 1] >= level {
                    start -= 1;
                }
                return start as f64;
            }
            let i = (lo..hi)
                .max_by(|a, b| fine[*a].total_cmp(&fine[*b]))
                .unwrap_or(p);
            parabolic(&fine[..n], i)
        })
        .collect()
}

/// The maximum at sample `i` placed between samples by the parabola through it and its two
/// neighbours (see [`refine`]).
fn parabolic(x: &[f64], i: usize) -> f64 {
    if i == 0 || i + 1 >= x.len() {
        return i as f64;
    }
    i as f64 + vertex_offset(x[i - 1], x[i], x[i + 1])
}

/// Where the parabola through three equally spaced values `a`, `b`, `c` peaks, relative to
/// the middle one (within half a step either way); 0 when they do not bend down.
pub(super) fn vertex_offset(a: f64, b: f64, c: f64) -> f64 {
    let curvature = a - 2.0 * b + c;
    if curvature >= 0.0 {
        return 0.0;
    }
    (0.5 * (a - c) / curvature).clamp(-0.5, 0.5)
}

/// The level a clipped signal is pinned at: near its maximum (within 0.2 % of its range, a
/// sensor's last bit or two), when runs there of 20 ms or more occur at least three times. A
/// smooth peak spends only a few milliseconds that close to its top.
fn clipping_level(raw: &[f64], rate: f64) -> Option<f64> {
    let high = raw.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let low = raw.iter().copied().fold(f64::INFINITY, f64::min);
    let range = high - low;
    if range.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
        return None;
    }
    let level = high - 0.002 * range;
    let shortest = ((0.02 * rate).round() as usize).max(3);
    let (mut runs, mut length) = (0, 0);
    for v in raw {
        if *v >= level {
            length += 1;
            if length == shortest {
                runs += 1;
            }
        } else {
            length = 0;
        }
    }
    (runs >= 3).then_some(level)
}

/// Stretches (grid index ranges) where the sensor lost the signal: the signal pinned at its
/// very minimum (a constant value) for at least 100 ms; a pulse never dwells at its trough. The band-pass
/// filter rings around such a step for about one period of its 0.5 Hz corner, so beats within
/// [`DROPOUT_MARGIN_S`] of one cannot be trusted.
pub fn dropouts(raw: &[f64], rate: f64) -> Vec<(usize, usize)> {
    let high = raw.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let low = raw.iter().copied().fold(f64::INFINITY, f64::min);
    let range = high - low;
    let mut found = Vec::new();
    if range.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
        return found;
    }
    let level = low;
    let shortest = ((0.1 * rate).round() as usize).max(3);
    let mut start = None;
    for i in 0..=raw.len() {
        let pinned = i < raw.len() && raw[i] <= level;
        match (pinned, start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                if i - s >= shortest {
                    found.push((s, i));
                }
                start = None;
            }
            _ => {}
        }
    }
    found
}

/// Movement: the pulse's RMS over a second of signal, against its median over the
/// recording. A finger that moves or presses changes the light far more than the pulse does
/// (motion artefacts are often an order of magnitude larger than the pulse: Tamura et al.,
/// "Wearable photoplethysmographic sensors — past and present", Electronics 3(2):282–302,
/// 2014); a second at more than [`MOVEMENT_RATIO`] times the median is taken for movement
/// (a threshold chosen here: breathing and a strong respiratory swing of the pulse stay well
/// below it).
const MOVEMENT_WINDOW_S: f64 = 1.0;
const MOVEMENT_RATIO: f64 = 3.0;

/// Stretches (grid index ranges) of `band` disturbed by movement ([`MOVEMENT_RATIO`]).
pub fn movements(band: &[f64], rate: f64) -> Vec<(usize, usize)> {
    let window = ((MOVEMENT_WINDOW_S * rate).round() as usize).max(3);
    if band.len() < 2 * window {
        return Vec::new();
    }
    // The RMS of each window, a tenth of a window apart: it changes slowly, and this runs on
    // every upload.
    let stride = (window / 10).max(1);
    let mut sum: f64 = band[..window].iter().map(|v| v * v).sum();
    let mut rms = Vec::with_capacity(band.len() / stride + 1);
    let mut starts = Vec::with_capacity(band.len() / stride + 1);
    let mut start = 0;
    loop {
        rms.push((sum.max(0.0) / window as f64).sqrt());
        starts.push(start);
        let next = start + stride;
        if next + window > band.len() {
            break;
        }
        sum -= band[start..next].iter().map(|v| v * v).sum::<f64>();
        sum += band[start + window..next + window]
            .iter()
            .map(|v| v * v)
            .sum::<f64>();
        start = next;
    }
    let Some(typical) = median(&rms) else {
        return Vec::new();
    };
    let mut found: Vec<(usize, usize)> = Vec::new();
    for (k, value) in rms.iter().enumerate() {
        if *value <= MOVEMENT_RATIO * typical {
            continue;
        }
        let (from, to) = (starts[k], (starts[k] + window).min(band.len()));
        match found.last_mut() {
            Some(last) if from <= last.1 => last.1 = last.1.max(to),
            _ => found.push((from, to)),
        }
    }
    found
}

/// How near a dropout a beat must not be, seconds.
pub const DROPOUT_MARGIN_S: f64 = 1.0;

/// The recording's average beat (Orphanidou et al. 2015: the template is the mean of all
/// beats over a window of the median beat interval centred on each peak; here 0.3 of it
/// either side), detrended.
struct Shape {
    template: Vec<f64>,
    half: usize,
}

impl Shape {
    fn new(fine: &[f64], at: impl Iterator<Item = f64>, typical: f64) -> Shape {
        let half = ((0.3 * typical).round() as usize).max(2);
        let mut template = vec![0.0; 2 * half + 1];
        let mut count = 0;
        for centre in at {
            if let Some(s) = segment(fine, centre_of(centre), half) {
                template.iter_mut().zip(s).for_each(|(t, v)| *t += v);
                count += 1;
            }
        }
        if count > 0 {
            template.iter_mut().for_each(|t| *t /= count as f64);
        }
        Shape {
            template: detrended(&template),
            half,
        }
    }

    /// The correlation of the beat centred on sample `c` with the average; none for a beat
    /// cut off by the start or end of the recording.
    fn correlation(&self, fine: &[f64], c: usize) -> Option<f64> {
        segment(fine, c, self.half).map(|s| pearson(&detrended(s), &self.template))
    }
}

fn centre_of(at: f64) -> usize {
    at.round().max(0.0) as usize
}

fn segment(fine: &[f64], c: usize, half: usize) -> Option<&[f64]> {
    (c >= half && c + half < fine.len()).then(|| &fine[c - half..=c + half])
}

/// Judges each beat by its height and by how well its shape matches the recording's average
/// beat ([`Shape`]).
pub fn judge(fine: &[f64], at: &[f64], rate: f64) -> Vec<Beat> {
    let n = fine.len();
    let gaps: Vec<f64> = at.windows(2).map(|w| w[1] - w[0]).collect();
    let typical = median(&gaps).unwrap_or(rate);
    let shape = Shape::new(fine, at.iter().copied(), typical);
    let half = shape.half;
    let centres: Vec<usize> = at.iter().map(|a| centre_of(*a)).collect();

    let amplitudes: Vec<f64> = centres
        .iter()
        .map(|&c| {
            let c = c.min(n.saturating_sub(1));
            let trough = fine[c.saturating_sub(half)..=c]
                .iter()
                .copied()
                .fold(f64::INFINITY, f64::min);
            fine[c] - trough
        })
        .collect();
    let typical_amplitude = median(&amplitudes).unwrap_or(0.0);

    centres
        .iter()
        .zip(at)
        .zip(&amplitudes)
        .map(|((&c, &at), &amplitude)| {
            // A beat cut off by the start or end of the recording is judged by height alone.
            let correlation = shape.correlation(fine, c).unwrap_or(1.0);
            let height_ok = amplitude >= AMPLITUDE_RANGE.0 * typical_amplitude
                && amplitude <= AMPLITUDE_RANGE.1 * typical_amplitude
                && amplitude > 0.0;
            Beat {
                at,
                amplitude,
                correlation,
                accepted: height_ok && correlation >= MIN_TEMPLATE_CORRELATION,
                unsure: false,
            }
        })
        .collect()
}

/// How weak a beat the second pass keeps: 0.15 of the typical height above the trough
/// before it (a choice made here, below the first pass's quarter: after a short interval in
/// atrial fibrillation the ventricle has had little time to fill, and the pulse it sends
/// can be a fraction of the usual; Frank–Starling, the cause of AF's pulse deficit).
const WEAK_HEIGHT: f64 = 0.15;
/// Where between two beats a missed one is looked for: at least half the typical interval,
/// and 250 ms, after the beat before and before the beat after (the spacing below which
/// [`super::intervals::merge_spurious`] takes one of two beats for a notch). The dicrotic
/// wave, which follows the peak by 20–45 % of the interval, lies before that.
const WEAK_REACH: f64 = 0.5;
/// Only a gap this many typical intervals long is searched: one that looks like a beat is
/// missing from it (a regular rhythm never pauses that long without one; in fibrillation a
/// short interval and its weak beat followed by a normal one span about 1.5 to 2.5).
const WEAK_GAP: f64 = 1.5;

/// A second pass for beats the first pass missed or set aside for their height: between two
/// accepted beats at least [`WEAK_GAP`] typical intervals apart, the strongest local maximum
/// of `fine` that rises at least [`WEAK_HEIGHT`] of the typical height and matches the recording's
/// average beat (Orphanidou's 0.86) is kept as a beat, marked unsure. The timing supports it
/// (a beat at least 250 ms and [`WEAK_REACH`] of an interval from either neighbour), the
/// shape supports it, only its height does not. Nothing is looked for inside `avoid` (grid
/// ranges where the sensor lost the signal).
pub fn recover_weak(fine: &[f64], beats: &mut Vec<Beat>, rate: f64, avoid: &[(f64, f64)]) {
    let accepted: Vec<&Beat> = beats.iter().filter(|b| b.accepted).collect();
    let gaps: Vec<f64> = accepted.windows(2).map(|w| w[1].at - w[0].at).collect();
    let Some(typical) = median(&gaps) else {
        return;
    };
    // Most recordings have no gap to search: nothing more to do then.
    if gaps.iter().all(|g| *g < WEAK_GAP * typical) {
        return;
    }
    let Some(height) = median(&accepted.iter().map(|b| b.amplitude).collect::<Vec<_>>()) else {
        return;
    };
    let shape = Shape::new(fine, accepted.iter().map(|b| b.at), typical);
    let reach = (WEAK_REACH * typical).max(REFRACTORY_S * rate);
    let mut found: Vec<Beat> = Vec::new();
    let mut previous: Option<f64> = None;
    for beat in beats.iter().filter(|b| b.accepted) {
        if let Some(before) = previous.filter(|b| beat.at - b >= WEAK_GAP * typical) {
            let (lo, hi) = (
                (before + reach).ceil() as usize,
                (beat.at - reach).floor() as usize,
            );
            let best = (lo.max(1)..hi.min(fine.len().saturating_sub(1)))
                .filter(|&i| fine[i] > fine[i - 1] && fine[i] >= fine[i + 1])
                .filter(|&i| !avoid.iter().any(|(a, b)| (*a..=*b).contains(&(i as f64))))
                .filter_map(|i| {
                    let trough = fine[before.round() as usize..i]
                        .iter()
                        .copied()
                        .fold(f64::INFINITY, f64::min);
                    let rise = fine[i] - trough;
                    let correlation = shape.correlation(fine, i)?;
                    (rise >= WEAK_HEIGHT * height && correlation >= MIN_TEMPLATE_CORRELATION)
                        .then_some((i, rise, correlation))
                })
                .max_by(|a, b| (a.1 * a.2).total_cmp(&(b.1 * b.2)));
            if let Some((i, rise, correlation)) = best {
                found.push(Beat {
                    at: parabolic(fine, i),
                    amplitude: rise,
                    correlation,
                    accepted: true,
                    unsure: true,
                });
            }
        }
        previous = Some(beat.at);
    }
    if found.is_empty() {
        return;
    }
    // A beat the first pass set aside where a weak one is now found is that beat.
    let near = 0.06 * rate;
    beats.retain(|b| b.accepted || !found.iter().any(|f| (f.at - b.at).abs() <= near));
    beats.extend(found);
    beats.sort_by(|a, b| a.at.total_cmp(&b.at));
}

/// A segment less its least-squares straight line: the tail of a short preceding beat tilts
/// the baseline under a beat without changing the beat's shape.
fn detrended(x: &[f64]) -> Vec<f64> {
    let n = x.len() as f64;
    let mid = (n - 1.0) / 2.0;
    let mean = x.iter().sum::<f64>() / n;
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for (i, v) in x.iter().enumerate() {
        let d = i as f64 - mid;
        sxy += d * (v - mean);
        sxx += d * d;
    }
    let slope = if sxx > 0.0 { sxy / sxx } else { 0.0 };
    x.iter()
        .enumerate()
        .map(|(i, v)| v - mean - slope * (i as f64 - mid))
        .collect()
}

/// Pearson's correlation coefficient (0 when either side is flat).
pub fn pearson(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len().min(b.len());
    if n < 2 {
        return 0.0;
    }
    let (ma, mb) = (
        a[..n].iter().sum::<f64>() / n as f64,
        b[..n].iter().sum::<f64>() / n as f64,
    );
    let (mut sab, mut saa, mut sbb) = (0.0, 0.0, 0.0);
    for i in 0..n {
        let (x, y) = (a[i] - ma, b[i] - mb);
        sab += x * y;
        saa += x * x;
        sbb += y * y;
    }
    if saa <= 0.0 || sbb <= 0.0 {
        0.0
    } else {
        sab / (saa * sbb).sqrt()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A train of Gaussian pulses at the given beat times (s), sampled at `rate`.
    fn pulses(beats: &[f64], rate: f64, seconds: f64) -> Vec<f64> {
        (0..(seconds * rate) as usize)
            .map(|i| {
                let t = i as f64 / rate;
                beats
                    .iter()
                    .map(|b| (-0.5 * ((t - b) / 0.06).powi(2)).exp())
                    .sum()
            })
            .collect()
    }

    #[test]
    fn finds_and_places_each_beat_below_the_sample_period() {
        let rate = 30.0;
        let beats: Vec<f64> = (0..20).map(|k| 0.5 + k as f64 * 0.8137).collect();
        let x = pulses(&beats, rate, 17.0);
        let peaks = detect(&x, rate);
        assert_eq!(peaks.len(), beats.len());
        let at = refine(&x, &x, &peaks, rate);
        for (found, truth) in at.iter().zip(&beats) {
            let error_ms = (found / rate - truth).abs() * 1000.0;
            assert!(error_ms < 5.0, "{error_ms} ms");
        }
        let judged = judge(&x, &at, rate);
        assert!(
            judged.iter().all(|b| b.accepted && b.correlation > 0.95),
            "{judged:?}"
        );
    }

    #[test]
    fn nothing_is_found_in_silence() {
        assert!(detect(&vec![0.0; 600], 30.0).is_empty());
        assert!(detect(&[], 30.0).is_empty());
    }
}
