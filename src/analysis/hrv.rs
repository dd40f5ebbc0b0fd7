//! Heart-rate variability in the time domain and from the Poincaré plot (Task Force of the
//! ESC and NASPE, "Heart rate variability: standards of measurement, physiological
//! interpretation and clinical use", Circulation 93:1043–1065, 1996; Brennan, Palaniswami &
//! Kamen, "Do existing measures of Poincaré plot geometry reflect nonlinear features of heart
//! rate variability?", IEEE TBME 48(11):1342–1347, 2001).
//!
//! Conventions are heartpy's (van Gent et al., 2019), so the two can be compared: population
//! standard deviations; successive differences only between adjacent accepted intervals;
//! pNN50 counts differences strictly above 50 ms and is a fraction.

use super::result::Hrv;

/// HRV of an interval series (ms) in which rejected intervals are `None`; none without at
/// least two accepted intervals next to each other.
pub fn hrv(rr: &[Option<f64>]) -> Option<Hrv> {
    let accepted: Vec<f64> = rr.iter().flatten().copied().collect();
    let pairs: Vec<(f64, f64)> = rr.windows(2).filter_map(|w| Some((w[0]?, w[1]?))).collect();
    if pairs.is_empty() {
        return None;
    }
    let diffs: Vec<f64> = pairs.iter().map(|(a, b)| b - a).collect();
    let n = diffs.len() as f64;
    let rmssd = (diffs.iter().map(|d| d * d).sum::<f64>() / n).sqrt();
    let pnn50 = diffs.iter().filter(|d| d.abs() > 50.0).count() as f64 / n;
    let (sd1, sd2) = poincare(&pairs);
    Some(Hrv {
        sdnn: population_sd(&accepted),
        rmssd,
        pnn50,
        sd1,
        sd2,
    })
}

/// Poincaré SD1 and SD2 of pairs of successive intervals `(a, b)`: the population standard
/// deviations of (a − b)/√2 and (a + b)/√2.
pub fn poincare(pairs: &[(f64, f64)]) -> (f64, f64) {
    let across: Vec<f64> = pairs
        .iter()
        .map(|(a, b)| (a - b) / std::f64::consts::SQRT_2)
        .collect();
    let along: Vec<f64> = pairs
        .iter()
        .map(|(a, b)| (a + b) / std::f64::consts::SQRT_2)
        .collect();
    (population_sd(&across), population_sd(&along))
}

/// The population standard deviation (divides by n).
pub fn population_sd(x: &[f64]) -> f64 {
    super::signal::mean_sd(x).1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn differences_skip_rejected_intervals() {
        let h = hrv(&[Some(800.0), Some(900.0), None, Some(700.0), Some(760.0)]).unwrap();
        // Differences: +100 and +60 only (none across the gap).
        assert!((h.rmssd - ((100.0f64.powi(2) + 60.0f64.powi(2)) / 2.0).sqrt()).abs() < 1e-9);
        assert!((h.pnn50 - 1.0).abs() < 1e-12);
        assert!(hrv(&[Some(800.0), None, Some(800.0)]).is_none());
    }
}
