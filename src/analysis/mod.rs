//! Tacho's own rhythm analysis: heart rate, heart-rate variability, signal quality and a
//! rhythm screening from a camera PPG recording, a plain PPG series or RR intervals.
//!
//! Framework-free and pure: a function of its input, no I/O, no clock. It never panics on any
//! input; what it cannot read becomes an [`Abnormality`].
//!
//! The pipeline (each step names its method and source where it is defined):
//! 1. [`camera`]: choose and combine the camera cells and channels with the best pulse;
//! 2. [`signal`]: resample onto a uniform grid, band-pass with zero phase;
//! 3. [`beats`]: cut out movement, detect systolic peaks, refine them below the sample
//!    period, accept or reject each beat by its shape, and look again for weak beats where
//!    one is missing;
//! 4. [`timing`]: how precisely the beats are timed, from the recording itself;
//! 5. [`intervals`]: reject artefact and ectopic intervals;
//! 6. [`hrv`]: heart rate, SDNN, RMSSD, pNN50, SD1, SD2;
//! 7. [`rhythm`]: irregularity features and the screening verdict, given only when the
//!    irregularity clearly exceeds the timing's own jitter.
//!
//! Tacho screens; it does not diagnose.

mod beats;
mod camera;
mod hrv;
mod input;
mod intervals;
mod pipeline;
mod result;
mod rhythm;
mod signal;
mod timing;

pub use hrv::hrv;
pub use input::{CameraCell, Context, Recording};
pub use pipeline::{Trace, analyse, analyse_payload, pulse_trace};
pub use result::{
    Abnormality, Analysis, Colour, Features, Hrv, Indicator, Label, Quality, QualityClass,
    QualityReason, ResultKey, Rhythm, Source, Verdict,
};
pub use rhythm::{features, features_with_gaps, rate_label};

/// The algorithm's version, stamped on every result; a change of any threshold or step bumps
/// it, so stored results can be told apart and re-analysed.
pub const VERSION: &str = "1.3.0";
