//! Signal conditioning: a uniform time grid, zero-phase band-pass filters and moving averages.

use biquad::{Biquad, Coefficients, DirectForm2Transposed, ToHertz, Type};

/// Sample rates the analysis accepts, Hz. Camera apps record at 25–60 fps and finger PPG
/// sensors at up to a few hundred Hz; anything outside is a unit error (seconds sent as
/// milliseconds, say), not a recording.
pub const RATES: std::ops::RangeInclusive<f64> = 10.0..=1000.0;

/// The sample rate of a series of sample times (ms): the median spacing, so that jittered
/// frame times and the odd dropped frame do not move it.
pub fn rate_of(times_ms: &[f64]) -> Option<f64> {
    let mut steps: Vec<f64> = times_ms.windows(2).map(|w| w[1] - w[0]).collect();
    if steps.is_empty() {
        return None;
    }
    let mid = steps.len() / 2;
    let (_, median, _) = steps.select_nth_unstable_by(mid, f64::total_cmp);
    (*median > 0.0).then(|| 1000.0 / *median)
}

/// A uniform grid over a recording and, per grid point, where it falls between two samples,
/// computed once and applied to every channel of the recording.
pub struct Grid {
    pub start_ms: f64,
    pub step_ms: f64,
    /// `(i, w)`: the value at this grid point is `x[i] * (1 - w) + x[i + 1] * w`.
    points: Vec<(usize, f64)>,
}

impl Grid {
    /// A grid at `rate` Hz from the first to the last sample time (`times_ms` increasing).
    pub fn new(times_ms: &[f64], rate: f64) -> Grid {
        let step_ms = 1000.0 / rate;
        let start_ms = times_ms[0];
        let span = times_ms[times_ms.len() - 1] - start_ms;
        let len = (span / step_ms).floor() as usize + 1;
        let mut points = Vec::with_capacity(len);
        let mut i = 0;
        for k in 0..len {
            let t = start_ms + k as f64 * step_ms;
            while i + 2 < times_ms.len() && times_ms[i + 1] <= t {
                i += 1;
            }
            let (a, b) = (times_ms[i], times_ms[(i + 1).min(times_ms.len() - 1)]);
            let w = if b > a {
                ((t - a) / (b - a)).clamp(0.0, 1.0)
            } else {
                0.0
            };
            points.push((i, w));
        }
        Grid {
            start_ms,
            step_ms,
            points,
        }
    }

    /// How many points the grid has.
    pub fn len(&self) -> usize {
        self.points.len()
    }

    /// `values` (one per sample time) linearly interpolated onto the grid.
    pub fn resample(&self, values: &[f64]) -> Vec<f64> {
        let mut out = vec![0.0; self.len()];
        self.resample_into(values, &mut out);
        out
    }

    /// As [`Grid::resample`], into `out` (as long as the grid).
    pub fn resample_into(&self, values: &[f64], out: &mut [f64]) {
        self.accumulate(values, |k, v| out[k] = v);
    }

    /// Calls `apply(k, value)` with each grid point's interpolated value.
    pub fn accumulate(&self, values: &[f64], mut apply: impl FnMut(usize, f64)) {
        let last = values.len() - 1;
        for (k, &(i, w)) in self.points.iter().enumerate() {
            apply(k, values[i] * (1.0 - w) + values[(i + 1).min(last)] * w);
        }
    }
}

/// Zero-phase band-pass: second-order Butterworth high-pass and low-pass sections run forwards
/// and then backwards over the series (as `filtfilt` does), so peaks are not delayed. The
/// ends are padded with an odd reflection of the signal to keep the start-up transient out.
pub fn band_pass(x: &[f64], rate: f64, low_hz: f64, high_hz: f64) -> Vec<f64> {
    let n = x.len();
    if n < 4 {
        return vec![0.0; n];
    }
    let high_hz = high_hz.min(0.45 * rate);
    let sections: Vec<Coefficients<f64>> = [(Type::HighPass, low_hz), (Type::LowPass, high_hz)]
        .into_iter()
        .filter_map(|(kind, f0)| {
            Coefficients::<f64>::from_params(kind, rate.hz(), f0.hz(), biquad::Q_BUTTERWORTH_F64)
                .ok()
        })
        .collect();
    let pad = ((rate / low_hz) as usize).min(n - 1);
    let mut y = Vec::with_capacity(n + 2 * pad);
    let (first, last) = (x[0], x[n - 1]);
    y.extend((1..=pad).rev().map(|i| 2.0 * first - x[i]));
    y.extend_from_slice(x);
    y.extend((1..=pad).map(|i| 2.0 * last - x[n - 1 - i]));
    let offset = y.iter().sum::<f64>() / y.len() as f64;
    y.iter_mut().for_each(|v| *v -= offset);
    for coefficients in &sections {
        let mut forward = DirectForm2Transposed::<f64>::new(*coefficients);
        y.iter_mut().for_each(|v| *v = forward.run(*v));
        let mut backward = DirectForm2Transposed::<f64>::new(*coefficients);
        y.iter_mut().rev().for_each(|v| *v = backward.run(*v));
    }
    y.drain(..pad);
    y.truncate(n);
    y
}

/// Centred moving average over `width` samples (at least 1), shrinking at the ends.
pub fn moving_average(x: &[f64], width: usize) -> Vec<f64> {
    let n = x.len();
    let half = width.max(1) / 2;
    let mut prefix = Vec::with_capacity(n + 1);
    prefix.push(0.0);
    let mut sum = 0.0;
    for v in x {
        sum += v;
        prefix.push(sum);
    }
    (0..n)
        .map(|i| {
            let lo = i.saturating_sub(half);
            let hi = (i + half + 1).min(n);
            (prefix[hi] - prefix[lo]) / (hi - lo) as f64
        })
        .collect()
}

/// Mean and population standard deviation.
pub fn mean_sd(x: &[f64]) -> (f64, f64) {
    if x.is_empty() {
        return (0.0, 0.0);
    }
    let n = x.len() as f64;
    let mean = x.iter().sum::<f64>() / n;
    let var = x.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;
    (mean, var.sqrt())
}

/// The median (of a copy).
pub fn median(x: &[f64]) -> Option<f64> {
    if x.is_empty() {
        return None;
    }
    let mut v = x.to_vec();
    let mid = v.len() / 2;
    let (_, m, _) = v.select_nth_unstable_by(mid, f64::total_cmp);
    Some(*m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rate_is_the_median_spacing() {
        let times: Vec<f64> = (0..100).map(|i| i as f64 * 33.3 + (i % 3) as f64).collect();
        let rate = rate_of(&times).unwrap();
        assert!((rate - 30.0).abs() < 1.0, "{rate}");
        assert_eq!(rate_of(&[5.0]), None);
    }

    #[test]
    fn the_grid_interpolates_between_samples() {
        let times = [0.0, 10.0, 30.0];
        let grid = Grid::new(&times, 100.0);
        assert_eq!(grid.len(), 4);
        assert_eq!(grid.resample(&[0.0, 1.0, 3.0]), vec![0.0, 1.0, 2.0, 3.0]);
    }

    #[test]
    fn band_pass_keeps_the_pulse_band_without_delay() {
        let rate = 100.0;
        let x: Vec<f64> = (0..6000)
            .map(|i| {
                let t = i as f64 / rate;
                (2.0 * std::f64::consts::PI * 1.2 * t).sin() + 5.0 + 0.5 * t
            })
            .collect();
        let y = band_pass(&x, rate, 0.5, 8.0);
        // Away from the ends: the 1.2 Hz wave survives in phase, the offset and drift do not.
        for (i, value) in y.iter().enumerate().take(5000).skip(1000) {
            let t = i as f64 / rate;
            let expected = (2.0 * std::f64::consts::PI * 1.2 * t).sin();
            assert!(
                (value - expected).abs() < 0.05,
                "{i}: {value} vs {expected}"
            );
        }
    }
}
