//! From the camera's 4 × 4 cells × Y/U/V traces to one pulse signal.
//!
//! Method: every channel of every cell sees the same heartbeat with its own gain and noise.
//! The cleanest channel is the reference; every channel that follows it is aligned in sign
//! and added with a weight that grows with its signal-to-noise ratio (maximal-ratio
//! combining: Brennan, "Linear diversity combining techniques", Proc. IRE 47(6):1075–1102,
//! 1959).

use super::input::CameraCell;
use super::result::Abnormality;
use super::signal::{Grid, mean_sd, moving_average};

/// A fingertip on the lens with the torch on fills the frame with red: Cr (V) well above
/// Cb (U). Ambient scenes sit near the neutral 128/128. The margin of 40 is a choice made
/// here (no published value): the fingertip fixtures sit at V − U ≈ 100, a white or grey
/// scene at ≈ 0.
const FINGER_RED_MARGIN: f64 = 40.0;
/// A channel pinned at the end of its range for more than this share of frames is clipped.
const SATURATED_SHARE: f64 = 0.2;
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
        .filter(|c| mean_sd(&c.v).0 - mean_sd(&c.u).0 >= FINGER_RED_MARGIN)
        .collect();
    if finger.len() * 4 < cells.len() {
        return Err(Abnormality::FingerNotFound);
    }

    // Candidate channels: unclipped and not constant. Y and V fall with blood volume (more
    // blood absorbs more red light), U rises: `polarity` turns each so that beats point up.
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
            let resampled = grid.resample(values);
            let band = pulse_band(&resampled, rate);
            let (_, sd) = mean_sd(&band.pulse);
            if sd <= 1e-9 {
                continue;
            }
            channels.push(Channel {
                name: format!("{name}[{}][{}]", cell.row, cell.col),
                polarity,
                raw: resampled,
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
    let reference_pulse = normalised(&channels[reference].band.pulse);
    let reference_polarity = channels[reference].polarity;
    let mut combined = vec![0.0; grid.len()];
    let mut used = 0;
    for channel in &channels {
        let pulse = normalised(&channel.band.pulse);
        let agreement = correlation(&pulse, &reference_pulse);
        if agreement.abs() < MIN_AGREEMENT {
            continue;
        }
        // Weight ∝ SNR, estimated from the agreement with the reference: r² / (1 − r²).
        let r2 = (agreement * agreement).min(0.999);
        let weight = agreement.signum() * reference_polarity * r2 / (1.0 - r2);
        let (mean, sd) = mean_sd(&channel.raw);
        for (out, v) in combined.iter_mut().zip(&channel.raw) {
            *out += weight * (v - mean) / sd.max(1e-9);
        }
        used += 1;
    }
    let name = &channels[reference].name;
    let label = if used > 1 {
        format!("{name}+{}", used - 1)
    } else {
        name.clone()
    };
    Ok((combined, label))
}

struct Channel {
    name: String,
    polarity: f64,
    raw: Vec<f64>,
    band: Band,
}

/// A cheap split of a channel into its pulse band and the noise above it, for ranking and
/// weighting channels (the combined signal is filtered properly afterwards): a 1 s moving
/// average removes respiration and drift; a 100 ms one separates the pulse from frame noise.
struct Band {
    pulse: Vec<f64>,
    noise_var: f64,
}

impl Band {
    fn snr(&self) -> f64 {
        let (_, sd) = mean_sd(&self.pulse);
        sd * sd / self.noise_var.max(1e-12)
    }
}

fn pulse_band(x: &[f64], rate: f64) -> Band {
    let slow = moving_average(x, rate.round() as usize);
    let smooth = moving_average(x, ((0.1 * rate).round() as usize).max(3));
    let pulse: Vec<f64> = smooth.iter().zip(&slow).map(|(s, b)| s - b).collect();
    let noise_var = x
        .iter()
        .zip(&smooth)
        .map(|(v, s)| (v - s) * (v - s))
        .sum::<f64>()
        / x.len().max(1) as f64;
    Band { pulse, noise_var }
}

fn normalised(x: &[f64]) -> Vec<f64> {
    let (mean, sd) = mean_sd(x);
    let sd = sd.max(1e-12);
    x.iter().map(|v| (v - mean) / sd).collect()
}

fn correlation(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len().min(b.len()).max(1) as f64;
    a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>() / n
}
