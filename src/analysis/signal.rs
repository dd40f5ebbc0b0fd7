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

    /// `values` (one per sample time) linearly interpolated onto the grid.
    pub fn resample(&self, values: &[f64]) -> Vec<f64> {
        let last = values.len() - 1;
        self.points
            .iter()
            .map(|&(i, w)| values[i] * (1.0 - w) + values[(i + 1).min(last)] * w)
            .collect()
    }
}

/// Two zero-phase band-passes of `x` with one low corner and two high ones: second-order
/// Butterworth high-pass and low-pass sections run forwards and then backwards over the
/// series (as `filtfilt` does), so peaks are not delayed. The ends are padded with an odd
/// reflection of the signal to keep the start-up transient out. The high-pass section runs
/// once for both, and the two low-pass sections run side by side (their recursions are
/// independent, so the processor overlaps them); each result is the one it would be alone.
pub fn band_passes(x: &[f64], rate: f64, low_hz: f64, high_hz: [f64; 2]) -> [Vec<f64>; 2] {
    let n = x.len();
    if n < 4 {
        return [vec![0.0; n], vec![0.0; n]];
    }
    let section = |kind, f0: f64| {
        Coefficients::<f64>::from_params(kind, rate.hz(), f0.hz(), biquad::Q_BUTTERWORTH_F64).ok()
    };
    let pad = ((rate / low_hz) as usize).min(n - 1);
    let mut y = Vec::with_capacity(n + 2 * pad);
    let (first, last) = (x[0], x[n - 1]);
    y.extend((1..=pad).rev().map(|i| 2.0 * first - x[i]));
    y.extend_from_slice(x);
    y.extend((1..=pad).map(|i| 2.0 * last - x[n - 1 - i]));
    let offset = y.iter().sum::<f64>() / y.len() as f64;
    y.iter_mut().for_each(|v| *v -= offset);
    if let Some(high_pass) = section(Type::HighPass, low_hz) {
        let mut forward = DirectForm2Transposed::<f64>::new(high_pass);
        y.iter_mut().for_each(|v| *v = forward.run(*v));
        let mut backward = DirectForm2Transposed::<f64>::new(high_pass);
        y.iter_mut().rev().for_each(|v| *v = backward.run(*v));
    }
    let mut z = y.clone();
    let low_passes = high_hz.map(|f0| section(Type::LowPass, f0.min(0.45 * rate)));
    if let [Some(a), Some(b)] = low_passes {
        let (mut fa, mut fb) = (
            DirectForm2Transposed::<f64>::new(a),
            DirectForm2Transposed::<f64>::new(b),
        );
        for (u, v) in y.iter_mut().zip(z.iter_mut()) {
            (*u, *v) = (fa.run(*u), fb.run(*v));
        }
        let (mut ba, mut bb) = (
            DirectForm2Transposed::<f64>::new(a),
            DirectForm2Transposed::<f64>::new(b),
        );
        for (u, v) in y.iter_mut().rev().zip(z.iter_mut().rev()) {
            (*u, *v) = (ba.run(*u), bb.run(*v));
        }
    } else {
        for (series, coefficients) in [(&mut y, low_passes[0]), (&mut z, low_passes[1])] {
            if let Some(coefficients) = coefficients {
                let mut forward = DirectForm2Transposed::<f64>::new(coefficients);
                series.iter_mut().for_each(|v| *v = forward.run(*v));
                let mut backward = DirectForm2Transposed::<f64>::new(coefficients);
                series.iter_mut().rev().for_each(|v| *v = backward.run(*v));
            }
        }
    }
    [y, z].map(|mut series| {
        series.drain(..pad);
        series.truncate(n);
        series
    })
}

/// A series sampled uniformly at `rate` Hz, linearly interpolated onto `to_rate` Hz over the
/// same span (as [`Grid::resample`] does for a uniform series).
pub fn upsample(x: &[f64], rate: f64, to_rate: f64) -> Vec<f64> {
    if x.is_empty() {
        return Vec::new();
    }
    let last = x.len() - 1;
    let step = rate / to_rate;
    let len = ((last as f64 * to_rate / rate) + 1e-9).floor() as usize + 1;
    let mut out = Vec::with_capacity(len);
    // Walk the series alongside the new grid: position k × step lies between x[i] and x[i + 1].
    let mut i = 0;
    for k in 0..len {
        let position = k as f64 * step;
        while i < last && (i + 1) as f64 <= position {
            i += 1;
        }
        let w = position - i as f64;
        let next = if i < last { x[i + 1] } else { x[i] };
        out.push(x[i] * (1.0 - w) + next * w);
    }
    out
}

/// A sample type: `f64` for times and PPG values, `f32` for camera traces.
pub trait Sample: Copy + Default + std::ops::Mul<Output = Self> + std::ops::AddAssign {
    /// Neither infinite nor NaN.
    fn finite(self) -> bool;
}

impl Sample for f64 {
    fn finite(self) -> bool {
        self.is_finite()
    }
}

impl Sample for f32 {
    fn finite(self) -> bool {
        self.is_finite()
    }
}

/// Whether every value is finite. `v × 0` is 0 for a finite `v` and NaN for an infinite or
/// NaN one, so the sum of those products is 0 exactly when every value is finite; summed in
/// eight lanes as [`sum`] does, this runs as vector code, which a test that stops early does
/// not.
pub fn all_finite<T: Sample>(x: &[T]) -> bool {
    let (blocks, tail) = x.as_chunks::<8>();
    let mut sums = [T::default(); 8];
    for v in blocks {
        for k in 0..8 {
            sums[k] += v[k] * T::default();
        }
    }
    sums.iter().chain(tail).all(|v| v.finite())
}

/// Centred moving average over `width` samples (at least 1), shrinking at the ends.
pub fn moving_average(x: &[f64], width: usize) -> Vec<f64> {
    let mut prefix = Vec::with_capacity(x.len() + 1);
    prefix_sums(x, &mut prefix);
    let mut out = Vec::with_capacity(x.len());
    window_means(&prefix, width, &mut out);
    out
}

/// The running sums of `x`, after a leading 0, into `prefix`. A running sum is one long chain
/// of additions, each waiting for the one before; here the sums within each block of four
/// are formed apart from the chain, which then takes one addition per block, not four.
// These small kernels are always inlined, so that `camera::combine`'s AVX2 version compiles
// them with AVX2 too (a function called from it keeps the features it was built with).
#[inline(always)]
pub fn prefix_sums(x: &[f64], prefix: &mut Vec<f64>) {
    prefix.clear();
    prefix.resize(x.len() + 1, 0.0);
    let (blocks, tail) = x.as_chunks::<4>();
    let (out, out_tail) = prefix[1..].as_chunks_mut::<4>();
    let mut carry = 0.0;
    for (block, out) in blocks.iter().zip(out) {
        let a = block[0];
        let b = a + block[1];
        let c = b + block[2];
        let d = c + block[3];
        *out = [carry + a, carry + b, carry + c, carry + d];
        carry += d;
    }
    for (v, out) in tail.iter().zip(out_tail) {
        carry += v;
        *out = carry;
    }
}

/// The centred moving average over `width` samples (as [`moving_average`]) of the series
/// whose prefix sums are `prefix`, into `out`. Inside the series every window is full, so
/// the division becomes one multiplication by a constant there.
#[inline(always)]
pub fn window_means(prefix: &[f64], width: usize, out: &mut Vec<f64>) {
    let n = prefix.len().saturating_sub(1);
    let half = width.max(1) / 2;
    out.clear();
    out.reserve(n);
    let full = 1.0 / (2 * half + 1) as f64;
    let cut = |i: usize| {
        let (lo, hi) = (i.saturating_sub(half), (i + half + 1).min(n));
        (prefix[hi] - prefix[lo]) / (hi - lo) as f64
    };
    let head = half.min(n);
    let tail_start = n.saturating_sub(half).max(head);
    out.extend((0..head).map(cut));
    out.extend(
        prefix
            .get(2 * half + 1..)
            .unwrap_or_default()
            .iter()
            .zip(prefix)
            .take(tail_start - head)
            .map(|(hi, lo)| (hi - lo) * full),
    );
    out.extend((tail_start..n).map(cut));
}

/// Independent running sums per reduction: the compiler keeps floating-point additions in
/// order, so a single running sum would wait on each addition in turn; eight sums (four vector
/// registers of two) keep the adder busy.
const LANES: usize = 8;

/// The dot product of two series (over the shorter one's length), in [`LANES`] independent
/// sums.
#[inline(always)]
pub fn dot(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len().min(b.len());
    let ((a8, a_tail), (b8, b_tail)) = (a[..n].as_chunks::<LANES>(), b[..n].as_chunks::<LANES>());
    let mut sums = [0.0; LANES];
    for (x, y) in a8.iter().zip(b8) {
        for k in 0..LANES {
            sums[k] += x[k] * y[k];
        }
    }
    let tail: f64 = a_tail.iter().zip(b_tail).map(|(x, y)| x * y).sum();
    sums.iter().sum::<f64>() + tail
}

/// The sum and the sum of squares of a series, read once.
#[inline(always)]
pub fn moments(a: &[f64]) -> (f64, f64) {
    let (a8, tail) = a.as_chunks::<LANES>();
    let (mut sums, mut squares) = ([0.0; LANES], [0.0; LANES]);
    for x in a8 {
        for k in 0..LANES {
            sums[k] += x[k];
            squares[k] += x[k] * x[k];
        }
    }
    let tail_squares: f64 = tail.iter().map(|x| x * x).sum();
    (
        sums.iter().sum::<f64>() + tail.iter().sum::<f64>(),
        squares.iter().sum::<f64>() + tail_squares,
    )
}

/// The sum of squared differences of two series (over the shorter one's length).
#[inline(always)]
pub fn distance_squared(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len().min(b.len());
    let ((a8, a_tail), (b8, b_tail)) = (a[..n].as_chunks::<LANES>(), b[..n].as_chunks::<LANES>());
    let mut sums = [0.0; LANES];
    for (x, y) in a8.iter().zip(b8) {
        for k in 0..LANES {
            let d = x[k] - y[k];
            sums[k] += d * d;
        }
    }
    let tail: f64 = a_tail
        .iter()
        .zip(b_tail)
        .map(|(x, y)| (x - y) * (x - y))
        .sum();
    sums.iter().sum::<f64>() + tail
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
    fn moving_averages_shrink_at_the_ends_and_match_the_definition() {
        let x: Vec<f64> = (0..23).map(|i| ((i * 7919) % 13) as f64 - 6.0).collect();
        for n in [0, 1, 2, 5, 23] {
            for width in [1, 2, 3, 4, 7, 30] {
                let half = width / 2;
                let expected: Vec<f64> = (0..n)
                    .map(|i: usize| {
                        let window = &x[i.saturating_sub(half)..(i + half + 1).min(n)];
                        window.iter().sum::<f64>() / window.len() as f64
                    })
                    .collect();
                let got = moving_average(&x[..n], width);
                assert_eq!(got.len(), n);
                for (g, e) in got.iter().zip(&expected) {
                    assert!((g - e).abs() < 1e-12, "n {n} width {width}: {got:?}");
                }
            }
        }
    }

    #[test]
    fn sums_dot_products_and_finiteness() {
        let x: Vec<f64> = (0..11).map(|i| i as f64 - 3.5).collect();
        let y: Vec<f64> = (0..13).map(|i| (i * i) as f64).collect();
        let naive: f64 = x.iter().zip(&y).map(|(a, b)| a * b).sum();
        assert_eq!(dot(&x, &y), naive);
        assert_eq!(moments(&x).0, x.iter().sum::<f64>());
        assert_eq!(moments(&x).1, dot(&x, &x));
        assert_eq!(distance_squared(&x, &x), 0.0);
        assert_eq!(moments(&[]), (0.0, 0.0));
        assert!(all_finite(&x) && all_finite::<f64>(&[]));
        assert!(all_finite(&[1.0f32; 9]) && !all_finite(&[1.0f32, 2.0, f32::NAN]));
        for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            for at in [0, 5, 10] {
                let mut z = x.clone();
                z[at] = bad;
                assert!(!all_finite(&z), "{bad} at {at}");
            }
        }
        assert!(all_finite(&[f64::MAX, f64::MAX, -f64::MAX, 1e308, 1e308]));
    }

    #[test]
    fn upsampling_interpolates_a_uniform_series_as_the_grid_does() {
        let x: Vec<f64> = (0..31).map(|i| ((i * 37) % 11) as f64).collect();
        let times: Vec<f64> = (0..31).map(|i| i as f64 * 1000.0 / 30.0).collect();
        let expected = Grid::new(&times, 50.0).resample(&x);
        let got = upsample(&x, 30.0, 50.0);
        assert_eq!(got.len(), expected.len());
        for (g, e) in got.iter().zip(&expected) {
            assert!((g - e).abs() < 1e-9, "{got:?} vs {expected:?}");
        }
        assert!(upsample(&[], 30.0, 50.0).is_empty());
        assert_eq!(upsample(&[4.0], 30.0, 50.0), vec![4.0]);
    }

    #[test]
    fn the_grid_interpolates_between_samples() {
        let times = [0.0, 10.0, 30.0];
        let grid = Grid::new(&times, 100.0);
        assert_eq!(grid.points.len(), 4);
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
        let [y, wide] = band_passes(&x, rate, 0.5, [8.0, 25.0]);
        // Each band is what it would be alone.
        assert_eq!(band_passes(&x, rate, 0.5, [8.0, 8.0])[1], y);
        assert_eq!(band_passes(&x, rate, 0.5, [25.0, 25.0])[0], wide);
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
