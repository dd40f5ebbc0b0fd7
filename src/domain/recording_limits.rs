//! How much signal one measurement may carry, and the check of an upload against it.
//!
//! Every bound follows from two choices: the longest recording a measurement may hold and the
//! fastest rate at which it may have been sampled. A camera recording (the spot check is 60 s)
//! may last up to [`MAX_CAMERA_SECONDS`] at up to [`MAX_SAMPLE_HZ`] frames per second, and its
//! motion sensors run alongside at the same rate at most; an RR series may cover up to
//! [`MAX_RR_SECONDS`] at up to [`MAX_BPM`]. Camera traces are bounded tighter than RR series
//! because each frame carries 48 channels (4 × 4 cells of Y, U and V) plus a time and six
//! motion axes: two minutes at 250 Hz are already 1.65 million numbers, while an hour of RR
//! intervals at 300 bpm are 18,000.
//!
//! Only lengths are checked here. What is inside the arrays (strings among numbers, unequal
//! lengths) stays the analysis' business: such a recording is stored as `analysis_failed`,
//! not refused.

use serde_json::{Map, Value};

/// The longest camera recording, seconds: twice the 60 s spot check.
pub const MAX_CAMERA_SECONDS: usize = 120;
/// The highest camera frame rate and motion-sensor sample rate accepted, Hz. Camera apps
/// record at 25–60 fps; finger PPG sensors and high-speed cameras go higher.
pub const MAX_SAMPLE_HZ: usize = 250;
/// The longest RR series, seconds: twice the 30-minute series of a long resting recording.
pub const MAX_RR_SECONDS: usize = 3600;
/// The fastest heart rate an RR series may hold throughout, beats per minute.
pub const MAX_BPM: usize = 300;

/// Frames (`time`), values per camera channel and samples per motion axis: 30,000.
pub const MAX_FRAMES: usize = MAX_CAMERA_SECONDS * MAX_SAMPLE_HZ;
/// Intervals in `rr_intervals`: 18,000.
pub const MAX_RR_INTERVALS: usize = MAX_RR_SECONDS * MAX_BPM / 60;
/// Rows of `quadrants`, and cells per row: the camera grid is 4 × 4.
pub const MAX_GRID: usize = 4;
/// The camera channels of a cell.
const CHANNELS: [&str; 3] = ["y", "u", "v"];
/// The motion sensors, each `{x, y, z}` (or an array of samples).
const MOTION: [&str; 2] = ["acc", "gyro"];

/// Numbers a payload at every bound holds: per frame a time, 48 channel values and six
/// motion axes, and the RR series.
pub const MAX_NUMBERS: usize =
    MAX_FRAMES * (1 + MAX_GRID * MAX_GRID * CHANNELS.len() + 2 * 3) + MAX_RR_INTERVALS;
/// Bytes a number takes in the JSON text on average, with its comma: a three-digit value
/// with two decimals (`255.25,`) or a frame time of a two-minute recording (`119996,`).
/// The apps' integer channels take four.
pub const BYTES_PER_NUMBER: usize = 6;
/// Room for everything else a payload carries: context, device, app, location, tags,
/// technical details.
pub const OTHER_FIELDS_BYTES: usize = 256 * 1024;
/// The largest measurement upload that [`MAX_NUMBERS`] make, rounded up to whole MiB:
/// 10 MiB. The default of `TACHO_MAX_MEASUREMENT_BYTES`.
pub const MAX_MEASUREMENT_BYTES: usize = {
    const MIB: usize = 1024 * 1024;
    (MAX_NUMBERS * BYTES_PER_NUMBER + OTHER_FIELDS_BYTES).div_ceil(MIB) * MIB
};

/// An array longer than its bound: the field's path and the bound.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TooLong {
    /// The field, e.g. `quadrants[1][2].y`.
    pub field: String,
    /// The most it may hold.
    pub limit: usize,
    /// What the limit stands for, e.g. "2 minutes at 250 Hz".
    pub reason: &'static str,
}

impl TooLong {
    /// The rule the field broke, e.g. "may hold at most 18000 values (1 hour at 300 bpm)".
    pub fn rule(&self) -> String {
        format!("may hold at most {} values ({})", self.limit, self.reason)
    }
}

impl std::fmt::Display for TooLong {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "`{}` {}", self.field, self.rule())
    }
}

const CAMERA_REASON: &str = "2 minutes at 250 Hz";
const RR_REASON: &str = "1 hour at 300 bpm";
const GRID_REASON: &str = "a 4 × 4 camera grid";

fn check(
    field: impl FnOnce() -> String,
    len: usize,
    limit: usize,
    reason: &'static str,
) -> Result<(), TooLong> {
    if len > limit {
        return Err(TooLong {
            field: field(),
            limit,
            reason,
        });
    }
    Ok(())
}

/// Checks the length of every signal array of a measurement payload: `rr_intervals`, `time`,
/// the rows and cells of `quadrants` and each cell's `y`, `u` and `v`, and each axis of
/// `acc` and `gyro`. Fields of another shape are left to the analysis.
pub fn check_payload(data: &Map<String, Value>) -> Result<(), TooLong> {
    if let Some(Value::Array(rr)) = data.get("rr_intervals") {
        check(
            || "rr_intervals".into(),
            rr.len(),
            MAX_RR_INTERVALS,
            RR_REASON,
        )?;
    }
    if let Some(Value::Array(time)) = data.get("time") {
        check(|| "time".into(), time.len(), MAX_FRAMES, CAMERA_REASON)?;
    }
    if let Some(Value::Array(rows)) = data.get("quadrants") {
        check(|| "quadrants".into(), rows.len(), MAX_GRID, GRID_REASON)?;
        for (r, row) in rows.iter().enumerate() {
            let Value::Array(cells) = row else { continue };
            check(
                || format!("quadrants[{r}]"),
                cells.len(),
                MAX_GRID,
                GRID_REASON,
            )?;
            for (c, cell) in cells.iter().enumerate() {
                for channel in CHANNELS {
                    if let Some(Value::Array(values)) = cell.get(channel) {
                        let field = || format!("quadrants[{r}][{c}].{channel}");
                        check(field, values.len(), MAX_FRAMES, CAMERA_REASON)?;
                    }
                }
            }
        }
    }
    for sensor in MOTION {
        match data.get(sensor) {
            Some(Value::Array(samples)) => {
                check(|| sensor.into(), samples.len(), MAX_FRAMES, CAMERA_REASON)?;
            }
            Some(Value::Object(axes)) => {
                for (axis, values) in axes {
                    if let Value::Array(values) = values {
                        let field =
                            || format!("{sensor}.{}", axis.chars().take(64).collect::<String>());
                        check(field, values.len(), MAX_FRAMES, CAMERA_REASON)?;
                    }
                }
            }
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn payload(value: Value) -> Map<String, Value> {
        value.as_object().cloned().unwrap()
    }

    #[test]
    fn the_bounds_follow_from_duration_and_rate() {
        assert_eq!(MAX_FRAMES, 30_000);
        assert_eq!(MAX_RR_INTERVALS, 18_000);
        assert_eq!(MAX_NUMBERS, 1_668_000);
        assert_eq!(MAX_MEASUREMENT_BYTES, 10 * 1024 * 1024);
    }

    #[test]
    fn every_array_is_bounded_and_named() {
        let at = |n: usize| Value::from(vec![1; n]);
        let cell = |n: usize| json!({"y": at(n), "u": at(MAX_FRAMES), "v": at(3)});
        let ok = payload(json!({
            "rr_intervals": at(MAX_RR_INTERVALS),
            "time": at(MAX_FRAMES),
            "quadrants": vec![vec![cell(MAX_FRAMES); 4]; 4],
            "acc": {"x": at(MAX_FRAMES), "y": at(1), "z": []},
            "gyro": at(MAX_FRAMES),
        }));
        assert_eq!(check_payload(&ok), Ok(()));
        let cases = [
            (
                "rr_intervals",
                json!({"rr_intervals": at(MAX_RR_INTERVALS + 1)}),
                MAX_RR_INTERVALS,
            ),
            ("time", json!({"time": at(MAX_FRAMES + 1)}), MAX_FRAMES),
            (
                "quadrants",
                json!({"quadrants": vec![Value::Array(vec![]); 5]}),
                MAX_GRID,
            ),
            (
                "quadrants[0]",
                json!({"quadrants": [vec![cell(1); 5]]}),
                MAX_GRID,
            ),
            (
                "quadrants[1][2].y",
                json!({"quadrants": [[cell(1)], [cell(1), cell(1), cell(MAX_FRAMES + 1)]]}),
                MAX_FRAMES,
            ),
            (
                "acc.z",
                json!({"acc": {"x": [], "z": at(MAX_FRAMES + 1)}}),
                MAX_FRAMES,
            ),
            ("gyro", json!({"gyro": at(MAX_FRAMES + 1)}), MAX_FRAMES),
        ];
        for (field, value, limit) in cases {
            let err = check_payload(&payload(value)).unwrap_err();
            assert_eq!((err.field.as_str(), err.limit), (field, limit));
        }
        // Other shapes are the analysis' business, not the bounds'.
        let odd = payload(json!({"time": "now", "quadrants": [1, {"y": 2}], "acc": 3}));
        assert_eq!(check_payload(&odd), Ok(()));
    }

    #[test]
    fn the_message_names_field_and_limit() {
        let err = check_payload(&payload(json!({"rr_intervals": vec![800; 18_001]}))).unwrap_err();
        assert_eq!(
            err.to_string(),
            "`rr_intervals` may hold at most 18000 values (1 hour at 300 bpm)"
        );
    }
}
