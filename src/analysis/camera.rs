//! From the camera's 4 × 4 cells × Y/U/V traces to one pulse signal.
//!
//! Method: every channel of every cell sees the same heartbeat with its own gain and noise.
//! The cleanest channel is the reference; every channel that follows it is aligned in sign
//! and added with a weight that grows with its signal-to-noise ratio (maximal-ratio
//! combining: Brennan, "Linear diversity combining techniques", Proc. IRE 47(6):1075–1102,
//! 1959).

use super::input::CameraCell;
use super::result::Abnormality;
use super::signal::Grid;

/// A fingertip on the lens with the torch on fills the frame with red: Cr (V) well above
/// Cb (U). Ambient scenes sit near the neutral 128/128. The margin of 40 is a choice made
/// here (no published value): the fingertip fixtures sit at V − U ≈ 100, a white or grey
/// scene at ≈ 0.
const FINGER_RED_MARGIN: f64 = 40.0;
/// A channel pinned at the end of its range for more than this share of frames is clipped.
const SATURATED_SHARE: f64 = 0.2;
/// Channels are ranked on every `SCORE_STRIDE`th frame.
const SCORE_STRIDE: usize = 2;
/// Channels whose band signal correlates less than this with the reference are left out.
const MIN_AGREEMENT: f64 = 0.5;

/// The combined pulse on `grid` (beats pointing up) and the name of the reference channel.
pub fn combine(
    cells: &[CameraCell],
    grid: &Grid,
    rate: f64,
) -> Result<(Vec<f64>, String), Abnormality> {
    let finger: Vec<&CameraCell> = cells
        .iter()
        .filter(|c| mean(&c.v) - mean(&c.u) >= FINGER_RED_MARGIN)
        .collect();
    if finger.len() * 4 < cells.len() {
        return Err(Abnormality::FingerNotFound);
    }

    // Candidate channels: unclipped and not constant. Y and V fall with blood volume (more
    // blood absorbs more red light), U rises: `polarity` turns each so that beats point up.
    // Channels are ranked on every other frame as recorded (the frame times jitter by a
    // millisecond or so, which does not matter for a pulse-to-noise ratio): this runs on 48
    // channels per upload. Only the channels kept are interpolated onto the grid.
    let n = grid.len();
    let stride_rate = rate / SCORE_STRIDE as f64;
    let slow_width = (stride_rate.round() as usize).max(3);
    let fast_width = ((0.1 * stride_rate).round() as usize).max(3);
    let mut sampled = Vec::with_capacity(n / SCORE_STRIDE + 1);
    let mut clipped = 0;
    let mut channels: Vec<Channel> = Vec::with_capacity(finger.len() * 3);
    for cell in &finger {
        for (name, values, polarity) in [
            ("y", &cell.y, -1.0),
            ("u", &cell.u, 1.0),
            ("v", &cell.v, -1.0),
        ] {
            let pinned = values.iter().filter(|v| **v >= 254.0 || **v <= 1.0).count();
            if pinned as f64 > SATURATED_SHARE * values.len() as f64 {
                clipped += 1;
                continue;
            }
            sampled.clear();
            sampled.extend(values.iter().step_by(SCORE_STRIDE));
            let band = pulse_band(&sampled, slow_width, fast_width);
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
    let mut combined = vec![0.0; n];
    let mut used = 0;
    for channel in &channels {
        let agreement = correlation(&channel.band, &channels[reference].band);
        if agreement.abs() < MIN_AGREEMENT {
            continue;
        }
        // Weight ∝ SNR, estimated from the agreement with the reference: r² / (1 − r²).
        let r2 = (agreement * agreement).min(0.999);
        let weight = agreement.signum() * reference_polarity * r2 / (1.0 - r2);
        let scale = weight / channel.band.raw_sd.max(1e-9);
        let offset = channel.band.raw_mean;
        grid.accumulate(channel.values, |k, v| combined[k] += scale * (v - offset));
        used += 1;
    }
    let (name, row, col) = channels[reference].name;
    let label = if used > 1 {
        format!("{name}[{row}][{col}]+{}", used - 1)
    } else {
        format!("{name}[{row}][{col}]")
    };
    Ok((combined, label))
}

struct Channel<'a> {
    name: (&'static str, usize, usize),
    polarity: f64,
    values: &'a [f64],
    band: Band,
}

/// A cheap split of a channel into its pulse band and the noise above it, for ranking and
/// weighting channels (the combined signal is filtered properly afterwards): a 1 s moving
/// average removes respiration and drift; a 100 ms one separates the pulse from frame noise.
struct Band {
    pulse: Vec<f64>,
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

/// Centred moving averages of two widths, kept as running sums, in one pass.
fn pulse_band(x: &[f64], slow_width: usize, fast_width: usize) -> Band {
    let n = x.len();
    let (slow_half, fast_half) = (slow_width / 2, fast_width / 2);
    // Running window sums over [i - half, i + half], cut at the ends of the series.
    let window = |half: usize| {
        let first: f64 = x[..(half + 1).min(n)].iter().sum();
        (first, half)
    };
    let (mut slow_sum, _) = window(slow_half);
    let (mut fast_sum, _) = window(fast_half);
    let (mut sum, mut squares) = (0.0, 0.0);
    let mut pulse = Vec::with_capacity(n);
    let (mut p_sum, mut p_squares, mut noise) = (0.0, 0.0, 0.0);
    for (i, &v) in x.iter().enumerate() {
        let width = |half: usize| ((i + half + 1).min(n) - i.saturating_sub(half)) as f64;
        let smooth = fast_sum / width(fast_half);
        let p = smooth - slow_sum / width(slow_half);
        sum += v;
        squares += v * v;
        p_sum += p;
        p_squares += p * p;
        noise += (v - smooth) * (v - smooth);
        pulse.push(p);
        for (total, half) in [(&mut slow_sum, slow_half), (&mut fast_sum, fast_half)] {
            if i + half + 1 < n {
                *total += x[i + half + 1];
            }
            if i >= half {
                *total -= x[i - half];
            }
        }
    }
    let count = n.max(1) as f64;
    let pulse_mean = p_sum / count;
    let raw_mean = sum / count;
    Band {
        pulse,
        pulse_mean,
        pulse_sd: (p_squares / count - pulse_mean * pulse_mean)
            .max(0.0)
            .sqrt(),
        noise_var: noise / count,
        raw_mean,
        raw_sd: (squares / count - raw_mean * raw_mean).max(0.0).sqrt(),
    }
}

fn mean(x: &[f64]) -> f64 {
    x.iter().sum::<f64>() / x.len().max(1) as f64
}

/// Pearson's correlation of two channels' pulse bands.
fn correlation(a: &Band, b: &Band) -> f64 {
    let n = a.pulse.len().min(b.pulse.len()).max(1) as f64;
    let covariance = a
        .pulse
        .iter()
        .zip(&b.pulse)
        .map(|(x, y)| (x - a.pulse_mean) * (y - b.pulse_mean))
        .sum::<f64>()
        / n;
    covariance / (a.pulse_sd * b.pulse_sd).max(1e-18)
}
