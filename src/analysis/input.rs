//! Recordings as the analysis reads them, parsed from a measurement payload or a CSV file.
//!
//! Parsing never fails loudly: what cannot be read becomes an [`Abnormality`], so a malformed
//! upload is stored as `analysis_failed` with a reason.

use serde_json::{Map, Value};

use super::result::Abnormality;

/// One cell of the camera grid: its mean Y, U and V per frame.
#[derive(Debug, Clone, PartialEq)]
///
/// The traces are kept in single precision: they are 8-bit levels (averaged over a cell), for
/// which `f32` is exact to far below the sensor's noise, and at half the size the 48 traces of
/// a minute (345 KB instead of 691 KB) stay in a core's L2 cache while they are read, which
/// they are several times.
pub struct CameraCell {
    pub row: usize,
    pub col: usize,
    pub y: Vec<f32>,
    pub u: Vec<f32>,
    pub v: Vec<f32>,
}

/// What can be analysed.
#[derive(Debug, Clone, PartialEq)]
pub enum Recording {
    /// Camera frames: their times (ms) and the cells of the grid, each as long as `times_ms`.
    Camera {
        times_ms: Vec<f64>,
        cells: Vec<CameraCell>,
    },
    /// A plain PPG series: sample times (ms) and values, of equal length.
    Ppg {
        times_ms: Vec<f64>,
        values: Vec<f64>,
    },
    /// Beat-to-beat intervals, ms.
    RrIntervals(Vec<f64>),
}

/// What the analysis needs to know besides the signal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Context {
    /// Whether the patient was at rest; a fast rate is flagged only at rest.
    pub at_rest: bool,
}

impl Default for Context {
    fn default() -> Self {
        Context { at_rest: true }
    }
}

impl Context {
    /// Reads `context.activity` of a payload: walking and exercise are not rest.
    pub fn of_payload(data: &Map<String, Value>) -> Self {
        let activity = data
            .get("context")
            .and_then(|c| c.get("activity"))
            .and_then(Value::as_str);
        Context {
            at_rest: !matches!(
                activity,
                Some("walking" | "exercise" | "after_exercise" | "running" | "cycling")
            ),
        }
    }
}

/// A series of numbers, or `None` when any element is not a finite number.
/// A JSON array of finite numbers, in single precision (see [`CameraCell`]); a value beyond
/// `f32`'s range is not finite there.
fn levels(value: &Value) -> Option<Vec<f32>> {
    value
        .as_array()?
        .iter()
        .map(|v| v.as_f64().map(|x| x as f32).filter(|x| x.is_finite()))
        .collect()
}

fn numbers(value: &Value) -> Option<Vec<f64>> {
    value
        .as_array()?
        .iter()
        .map(|v| v.as_f64().filter(|x| x.is_finite()))
        .collect()
}

/// Sample times must run forwards.
fn increasing(times: &[f64]) -> bool {
    times.windows(2).all(|w| w[1] > w[0])
}

impl Recording {
    /// The recording in a measurement payload: the camera traces when there are any, else
    /// `rr_intervals`. Malformed traces are a [`Abnormality::BadSignalQuality`] (they are
    /// not silently replaced by the phone's intervals); no signal at all is
    /// [`Abnormality::TooShort`].
    pub fn from_payload(data: &Map<String, Value>) -> Result<Recording, Abnormality> {
        let time = data.get("time").filter(|v| !v.is_null());
        let quadrants = data.get("quadrants").filter(|v| !v.is_null());
        if let (Some(time), Some(quadrants)) = (time, quadrants) {
            return camera(time, quadrants);
        }
        match data.get("rr_intervals").filter(|v| !v.is_null()) {
            Some(rr) => {
                let rr = numbers(rr).ok_or(Abnormality::BadSignalQuality)?;
                if rr.iter().any(|ms| *ms <= 0.0) {
                    return Err(Abnormality::BadSignalQuality);
                }
                Ok(Recording::RrIntervals(rr))
            }
            None => Err(Abnormality::TooShort),
        }
    }

    /// A plain PPG series, checked: equal lengths, times running forwards.
    pub fn ppg(times_ms: Vec<f64>, values: Vec<f64>) -> Result<Recording, Abnormality> {
        if times_ms.len() != values.len()
            || !increasing(&times_ms)
            || times_ms.iter().chain(&values).any(|x| !x.is_finite())
        {
            return Err(Abnormality::BadSignalQuality);
        }
        Ok(Recording::Ppg { times_ms, values })
    }

    /// A CSV file: `time_ms,value` rows, or one value per row with `rate_hz`. A header row
    /// and empty lines are skipped; more than one column without a rate reads the first two.
    pub fn from_csv(text: &str, rate_hz: Option<f64>) -> Result<Recording, String> {
        let mut times = Vec::new();
        let mut values = Vec::new();
        for (line_no, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            let fields: Vec<&str> = line.split([',', ';', '\t']).map(str::trim).collect();
            let parsed: Option<Vec<f64>> = fields.iter().map(|f| f.parse().ok()).collect();
            let Some(parsed) = parsed else {
                if times.is_empty() && values.is_empty() {
                    continue; // a header
                }
                return Err(format!("line {}: not a number", line_no + 1));
            };
            match rate_hz {
                Some(_) => values.push(*parsed.last().unwrap_or(&f64::NAN)),
                None => {
                    if parsed.len() < 2 {
                        return Err(format!(
                            "line {}: expected `time_ms,value` (or give --rate)",
                            line_no + 1
                        ));
                    }
                    times.push(parsed[0]);
                    values.push(parsed[1]);
                }
            }
        }
        if let Some(rate) = rate_hz {
            if !(rate.is_finite() && rate > 0.0) {
                return Err("the rate must be a positive number of hertz".into());
            }
            times = (0..values.len())
                .map(|i| i as f64 * 1000.0 / rate)
                .collect();
        }
        Recording::ppg(times, values)
            .map_err(|_| "the series must be numbers with sample times running forwards".to_owned())
    }

    /// Where the signal came from.
    pub fn source(&self) -> super::result::Source {
        match self {
            Recording::Camera { .. } => super::result::Source::Camera,
            Recording::Ppg { .. } => super::result::Source::Ppg,
            Recording::RrIntervals(_) => super::result::Source::RrIntervals,
        }
    }
}

fn camera(time: &Value, quadrants: &Value) -> Result<Recording, Abnormality> {
    let times_ms = numbers(time).ok_or(Abnormality::BadSignalQuality)?;
    if !increasing(&times_ms) {
        return Err(Abnormality::BadSignalQuality);
    }
    let rows = quadrants.as_array().ok_or(Abnormality::BadSignalQuality)?;
    let mut cells = Vec::new();
    for (row, cols) in rows.iter().enumerate() {
        let cols = cols.as_array().ok_or(Abnormality::BadSignalQuality)?;
        for (col, cell) in cols.iter().enumerate() {
            let channel = |name: &str| -> Result<Vec<f32>, Abnormality> {
                let values = cell
                    .get(name)
                    .and_then(levels)
                    .ok_or(Abnormality::BadSignalQuality)?;
                if values.len() != times_ms.len() {
                    return Err(Abnormality::BadSignalQuality);
                }
                Ok(values)
            };
            cells.push(CameraCell {
                row,
                col,
                y: channel("y")?,
                u: channel("u")?,
                v: channel("v")?,
            });
        }
    }
    if cells.is_empty() {
        return Err(Abnormality::BadSignalQuality);
    }
    Ok(Recording::Camera { times_ms, cells })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn payload(value: Value) -> Map<String, Value> {
        value.as_object().cloned().unwrap()
    }

    #[test]
    fn malformed_traces_are_bad_quality_not_errors() {
        let cell = |y: Value| json!({"y": y, "u": [1, 2, 3], "v": [1, 2, 3]});
        let cases = [
            json!({"time": [0, 33, 66], "quadrants": [[cell(json!([1, "x", 3]))]]}),
            json!({"time": [0, 33, 66], "quadrants": [[cell(json!([1, 2]))]]}),
            json!({"time": [0, 66, 33], "quadrants": [[cell(json!([1, 2, 3]))]]}),
            json!({"time": "now", "quadrants": []}),
            json!({"time": [0, 33, 66], "quadrants": []}),
            json!({"rr_intervals": [800, null]}),
        ];
        for case in cases {
            assert_eq!(
                Recording::from_payload(&payload(case.clone())),
                Err(Abnormality::BadSignalQuality),
                "{case}"
            );
        }
        assert_eq!(
            Recording::from_payload(&payload(json!({"heartrate": 70}))),
            Err(Abnormality::TooShort)
        );
    }

    #[test]
    fn csv_reads_times_or_a_rate() {
        let with_times = Recording::from_csv("time_ms,value\n0,1\n10,2\n20,3\n", None).unwrap();
        assert_eq!(
            with_times,
            Recording::Ppg {
                times_ms: vec![0.0, 10.0, 20.0],
                values: vec![1.0, 2.0, 3.0]
            }
        );
        let with_rate = Recording::from_csv("hart\n5\n6\n", Some(100.0)).unwrap();
        assert_eq!(
            with_rate,
            Recording::Ppg {
                times_ms: vec![0.0, 10.0],
                values: vec![5.0, 6.0]
            }
        );
        assert!(Recording::from_csv("0,1\n0,2\n", None).is_err());
        assert!(Recording::from_csv("1\n2\n", None).is_err());
    }
}
