//! From the camera's 4 × 4 cells × Y/U/V traces to one pulse signal.
//!
//! Method: every channel of every cell sees the same heartbeat with its own gain and noise.
//! The cleanest channel is the reference; every channel that follows it is aligned in sign
//! and added with a weight that grows with its signal-to-noise ratio (maximal-ratio
//! combining: Brennan, "Linear diversity combining techniques", Proc. IRE 47(6):1075–1102,
//! 1959).

use super::input::CameraCell;
use super::result::Abnormality;
use super::signal::{Grid, distance_squared, dot, moments, prefix_sums, window_means};

/// A fingertip on the lens with the torch on fills the frame with red: Cr (V) well above
/// Cb (U). Ambient scenes sit near the neutral 128/128. The margin of 40 is a choice made
/// here (no published value): the fingertip fixtures sit at V − U ≈ 100, a white or grey
/// scene at ≈ 0.
const FINGER_RED_MARGIN: f64 = 40.0;
/// A channel pinned at the end of its range for more than this share of frames is clipped.
const SATURATED_SHARE: f64 = 0.2;
/// Channels are ranked on every few frames, as many as leave at least this rate (Hz): 60 fps
/// is ranked at 30, 30 fps on every frame. The ranking splits each channel with a 100 ms
/// moving average into the pulse and the noise above it; that window must span three
/// samples or more, and at 140 bpm the pulse's first two harmonics reach 4.7 Hz: at 15 Hz
/// the 100 ms window becomes 200 ms, takes the pulse for noise, and a noisy channel, whose
/// own split gives a ratio near 1/(3 − 1), outranks every clean one.
const RANK_RATE: f64 = 25.0;
/// Channels are ranked on the middle this many seconds of the recording: 25 to 75 beats,
/// enough to tell a clean channel from a noisy one, at the cost of a pass over every other
/// frame of the whole minute. The weights then apply to every frame.
const RANK_SECONDS: f64 = 30.0;
/// Channels whose band signal correlates less than this with the reference are left out.
const MIN_AGREEMENT: f64 = 0.5;

/// The combined pulse on `grid` (beats pointing up) and the name of the reference channel.
///
/// Its loops (conversions, moving sums, moments, the weighted sum) run over every frame of
/// 48 channels: compiled as well for AVX2, chosen at run time where the processor has it,
/// they take four values at a time instead of two. Floating-point results are the same
/// either way: Rust never fuses or reorders the operations.
#[multiversion::multiversion(targets("x86_64+avx2+fma"))]
pub fn combine(
    cells: &[CameraCell],
    grid: &Grid,
    rate: f64,
) -> Result<(Vec<f64>, String), Abnormality> {
    // Candidate channels: unclipped and not constant. Y and V fall with blood volume (more
    // blood absorbs more red light), U rises: `polarity` turns each so that beats point up.
    // Channels are ranked on the middle of the recording ([`RANK_SECONDS`]) as recorded,
    // every frame or every few ([`RANK_RATE`]; the frame times jitter by a millisecond or
    // so, which does not matter for a pulse-to-noise ratio): this runs on 48
    // channels per upload, each read once while it is in cache. Whether a cell is under the
    // fingertip is judged from the same frames, once its channels are read; the channels of
    // other cells are dropped then.
    let stride = ((rate / RANK_RATE).floor() as usize).max(1);
    let stride_rate = rate / stride as f64;
    let slow_width = (stride_rate.round() as usize).max(3);
    let fast_width = ((0.1 * stride_rate).round() as usize).max(3);
    let mut work = BandWork {
        stride,
        span: (RANK_SECONDS * rate).round() as usize,
        ..BandWork::default()
    };
    let mut clipped = 0;
    let mut finger = 0;
    let mut channels: Vec<Channel> = Vec::with_capacity(cells.len() * 3);
    for cell in cells {
        let kept = (channels.len(), work.pulses.len());
        let mut cell_clipped = 0;
        let mut means = [0.0; 3];
        for (k, (name, values, polarity)) in [
            ("y", &cell.y, -1.0),
            ("u", &cell.u, 1.0),
            ("v", &cell.v, -1.0),
        ]
        .into_iter()
        .enumerate()
        {
            let sampled = work.sample(values);
            let frames = sampled.len().max(1) as f64;
            // The clipped share, like the ranking, from the frames read.
            let pinned: usize = sampled
                .iter()
                .map(|v| usize::from(*v >= 254.0 || *v <= 1.0))
                .sum();
            let clipped_here = pinned as f64 > SATURATED_SHARE * frames;
            means[k] = work.raw.0 / frames;
            if clipped_here {
                cell_clipped += 1;
                continue;
            }
            let band = work.band(slow_width, fast_width);
            if band.pulse_sd <= 1e-9 {
                continue;
            }
            channels.push(Channel {
                name: (name, cell.row, cell.col),
                polarity,
                values,
                band,
            });
        }
        if means[2] - means[1] >= FINGER_RED_MARGIN {
            finger += 1;
            clipped += cell_clipped;
        } else {
            channels.truncate(kept.0);
            work.pulses.truncate(kept.1);
        }
    }
    if finger * 4 < cells.len() {
        return Err(Abnormality::FingerNotFound);
    }
    if channels.is_empty() {
        return Err(if clipped > 0 {
            Abnormality::Saturated
        } else {
            Abnormality::PulseNotFound
        });
    }

    let reference = channels
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.band.snr().total_cmp(&b.1.band.snr()))
        .map(|(i, _)| i)
        .unwrap_or(0);
    let reference_polarity = channels[reference].polarity;
    // The channels are added frame by frame as recorded and the sum is laid on the grid once:
    // interpolation is linear, so this equals adding the interpolated channels.
    let frames = channels[reference].values.len();
    let mut combined = vec![0.0; frames];
    let mut shift = 0.0;
    let mut used = 0;
    for channel in &channels {
        let agreement = work.correlation(&channel.band, &channels[reference].band);
        if agreement.abs() < MIN_AGREEMENT || channel.values.len() != frames {
            continue;
        }
        // Weight ∝ SNR, estimated from the agreement with the reference: r² / (1 − r²).
        let r2 = (agreement * agreement).min(0.999);
        let weight = agreement.signum() * reference_polarity * r2 / (1.0 - r2);
        let scale = weight / channel.band.raw_sd.max(1e-9);
        shift += scale * channel.band.raw_mean;
        combined
            .iter_mut()
            .zip(channel.values)
            .for_each(|(sum, v)| *sum += scale * f64::from(*v));
        used += 1;
    }
    // Each channel is centred on its mean: subtracted once, for all of them together.
    combined.iter_mut().for_each(|v| *v -= shift);
    let (name, row, col) = channels[reference].name;
    let label = if used > 1 {
        format!("{name}[{row}][{col}]+{}", used - 1)
    } else {
        format!("{name}[{row}][{col}]")
    };
    Ok((grid.resample(&combined), label))
}

struct Channel<'a> {
    name: (&'static str, usize, usize),
    polarity: f64,
    values: &'a [f32],
    band: Band,
}

/// A cheap split of a channel into its pulse band and the noise above it, for ranking and
/// weighting channels (the combined signal is filtered properly afterwards): a 1 s moving
/// average removes respiration and drift; a 100 ms one separates the pulse from frame noise.
struct Band {
    /// Where the pulse band sits in [`BandWork::pulses`].
    at: usize,
    len: usize,
    pulse_mean: f64,
    pulse_sd: f64,
    noise_var: f64,
    raw_mean: f64,
    raw_sd: f64,
}

impl Band {
    fn snr(&self) -> f64 {
        self.pulse_sd * self.pulse_sd / self.noise_var.max(1e-12)
    }
}

/// Buffers reused across the channels of a recording; every channel's pulse band is kept in
/// one allocation.
#[derive(Default)]
struct BandWork {
    sampled: Vec<f64>,
    /// The sum and the sum of squares of `sampled`.
    raw: (f64, f64),
    prefix: Vec<f64>,
    slow: Vec<f64>,
    fast: Vec<f64>,
    pulses: Vec<f64>,
    /// Every how many frames a channel is read for its ranking.
    stride: usize,
    /// How many frames, from the middle of the recording, are read.
    span: usize,
}

impl BandWork {
    /// Every `stride`th value of the middle `span` of `values`, in double precision, kept
    /// for [`band`].
    #[inline(always)]
    fn sample(&mut self, values: &[f32]) -> &[f64] {
        self.sampled.clear();
        let span = self.span.min(values.len());
        let first = (values.len() - span) / 2;
        let values = &values[first..first + span];
        if self.stride == 1 {
            // Every frame (30 fps): a plain conversion, which runs several values at a time.
            self.sampled.extend(values.iter().map(|v| f64::from(*v)));
        } else {
            // `chunks_exact` lets the copy run without a capacity check per value.
            let pairs = values.chunks_exact(self.stride);
            let last = pairs.remainder().first().copied();
            self.sampled
                .extend(pairs.map(|frames| f64::from(frames[0])));
            self.sampled.extend(last.map(f64::from));
        }
        self.raw = moments(&self.sampled);
        &self.sampled
    }

    /// The pulse band of the values last [`sample`]d: centred moving averages of two widths
    /// from one set of prefix sums.
    #[inline(always)]
    fn band(&mut self, slow_width: usize, fast_width: usize) -> Band {
        prefix_sums(&self.sampled, &mut self.prefix);
        window_means(&self.prefix, slow_width, &mut self.slow);
        window_means(&self.prefix, fast_width, &mut self.fast);
        let n = self.fast.len();
        let count = n.max(1) as f64;
        let at = self.pulses.len();
        self.pulses
            .extend(self.fast.iter().zip(&self.slow).map(|(f, s)| f - s));
        let (pulse_sum, pulse_squares) = moments(&self.pulses[at..]);
        let pulse_mean = pulse_sum / count;
        let pulse_var = pulse_squares / count - pulse_mean * pulse_mean;
        let raw_mean = self.raw.0 / count;
        let raw_var = self.raw.1 / count - raw_mean * raw_mean;
        Band {
            at,
            len: n,
            pulse_mean,
            pulse_sd: pulse_var.max(0.0).sqrt(),
            // The noise above the pulse band.
            noise_var: distance_squared(&self.sampled, &self.fast) / count,
            raw_mean,
            raw_sd: raw_var.max(0.0).sqrt(),
        }
    }

    #[inline(always)]
    fn pulse(&self, band: &Band) -> &[f64] {
        &self.pulses[band.at..band.at + band.len]
    }

    /// Pearson's correlation of two channels' pulse bands.
    #[inline(always)]
    fn correlation(&self, a: &Band, b: &Band) -> f64 {
        let n = a.len.min(b.len).max(1) as f64;
        let covariance = dot(self.pulse(a), self.pulse(b)) / n - a.pulse_mean * b.pulse_mean;
        covariance / (a.pulse_sd * b.pulse_sd).max(1e-18)
    }
}

#[cfg(test)]
mod tests {
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};

    use super::*;
    use crate::analysis::beats::pearson;

    /// A fast pulse (140 bpm: narrow systolic waves, 6.4 frames a beat at 30 fps) on 16
    /// cells (the corners pulse less); U carries a sixth of Y's pulse, every channel the
    /// same small frame noise. Ranked on every other frame, a noisy U channel was taken as
    /// the reference.
    #[test]
    fn a_fast_pulse_is_taken_from_the_clean_channels_not_the_noisy_ones() {
        let mut rng = StdRng::seed_from_u64(7);
        let mut gauss = move || {
            let (u1, u2): (f64, f64) = (1.0 - rng.random::<f64>(), rng.random());
            (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
        };
        let beat_ms = 60_000.0 / 140.0;
        // The stress sets' pulse model at this rate: a systolic wave rising over 28 ms and
        // falling over 49, and a dicrotic wave of 0.35 at 238 ms that runs into the next beat.
        let pulse = |t: f64| {
            let wave = |dt: f64| {
                if dt < 0.0 {
                    return 0.0;
                }
                let systolic = if dt < 91.0 { 28.0 } else { 49.0 };
                let dicrotic = if dt < 238.0 { 28.0 } else { 140.0 };
                (-0.5 * ((dt - 91.0) / systolic).powi(2)).exp()
                    + 0.35 * (-0.5 * ((dt - 238.0) / dicrotic).powi(2)).exp()
            };
            let since = t.rem_euclid(beat_ms);
            wave(since) + wave(since + beat_ms) + wave(since + 2.0 * beat_ms)
        };
        let times: Vec<f64> = (0..1800).map(|i| i as f64 * 1000.0 / 30.0).collect();
        let cells: Vec<CameraCell> = (0..16)
            .map(|k| {
                // The corner cells, half off the fingertip, pulse less.
                let (row, col) = (k / 4, k % 4);
                let inner = (1..=2).contains(&row) && (1..=2).contains(&col);
                let weight = if inner { 1.0 } else { 0.6 };
                let mut channel = |base: f64, gain: f64| -> Vec<f32> {
                    times
                        .iter()
                        .map(|&t| (base + gain * weight * pulse(t) + 0.3 * gauss()) as f32)
                        .collect()
                };
                CameraCell {
                    row,
                    col,
                    y: channel(110.0, -6.0),
                    u: channel(100.0, 1.0),
                    v: channel(175.0, -4.0),
                }
            })
            .collect();
        let grid = Grid::new(&times, 30.0);
        let (combined, reference) = combine(&cells, &grid, 30.0).unwrap();
        assert!(!reference.starts_with('u'), "reference {reference}");
        let truth: Vec<f64> = (0..combined.len())
            .map(|i| pulse(grid.start_ms + i as f64 * grid.step_ms))
            .collect();
        let r = pearson(&combined, &truth);
        assert!(
            r > 0.95,
            "the combined pulse follows the true one: r = {r:.3}"
        );
    }
}
