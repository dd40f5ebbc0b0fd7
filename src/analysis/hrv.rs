//! Heart-rate variability.

use super::result::Hrv;

/// HRV of an interval series in which rejected intervals are `None`.
pub fn hrv(rr: &[Option<f64>]) -> Option<Hrv> {
    let _ = rr;
    None
}
