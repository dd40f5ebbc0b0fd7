//! Analysing a stored measurement again (`tacho measurements reanalyse`, after the analysis
//! changed): what to write back, and only when anything the server derives from the analysis
//! differs, so that a report of an unchanged measurement stays current.

use serde_json::{Map, Value};

use super::measurement::{
    ANALYSIS_FIELDS, AnalysisRun, Status, Summary, analyse, status_after, write_analysis,
};

/// What is stored of a measurement that its analysis decides.
#[derive(Debug, Clone, Copy)]
pub struct Stored<'a> {
    /// The payload, as JSON text.
    pub data: &'a str,
    pub status: Status,
    pub indicator: Option<&'a str>,
    pub result: Option<&'a str>,
    pub heart_rate: Option<f64>,
    /// The stored summary, as JSON text.
    pub summary: Option<&'a str>,
}

/// What to write after a re-analysis.
#[derive(Debug, Clone)]
pub struct Rewrite {
    /// The payload with the new analysis' fields, as JSON text.
    pub data: String,
    pub status: Status,
    pub indicator: Option<String>,
    pub summary: Summary,
}

/// The outcome of analysing one stored measurement again.
#[derive(Debug)]
pub struct Reanalysed {
    /// What to write; none when nothing changed, or the payload no longer reads.
    pub rewrite: Option<Rewrite>,
    /// Whether the analysis found no result (or the payload no longer reads).
    pub failed: bool,
    /// The analysis' measure, for the caller's metric; none when nothing was analysed.
    pub run: Option<AnalysisRun>,
}

/// Analyses a stored measurement again; what to write when anything the server derives from
/// the analysis (its fields in `data`, the status, the result columns, the summary) differs.
pub fn reanalyse(stored: Stored<'_>) -> Reanalysed {
    // A payload that no longer reads as an object is left as it is: rewriting it from an empty
    // object would lose it.
    let Ok(Value::Object(mut data)) = serde_json::from_str::<Value>(stored.data) else {
        return Reanalysed {
            rewrite: None,
            failed: true,
            run: None,
        };
    };
    let (analysis, run) = analyse(&data);
    let failed = analysis.failed();
    let status = status_after(stored.status, &analysis);
    let before: Vec<Option<Value>> = ANALYSIS_FIELDS
        .iter()
        .map(|k| data.get(*k).cloned())
        .collect();
    write_analysis(&mut data, &analysis);
    Reanalysed {
        rewrite: changed(&stored, data, &before, status),
        failed,
        run: Some(run),
    }
}

/// The rewrite of `data` (already holding the new analysis), unless it and what follows from
/// it are the same as `stored`.
fn changed(
    stored: &Stored<'_>,
    data: Map<String, Value>,
    before: &[Option<Value>],
    status: Status,
) -> Option<Rewrite> {
    let fields_same = ANALYSIS_FIELDS.iter().zip(before).all(|(k, old)| {
        old.as_ref()
            .zip(data.get(*k))
            .is_some_and(|(o, n)| same(o, n))
    });
    let summary = Summary::of(&data);
    let indicator = data
        .get("indicator")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let stored_summary = stored
        .summary
        .and_then(|text| serde_json::from_str::<Value>(text).ok());
    let summary_same = stored_summary
        .is_some_and(|old| serde_json::to_value(&summary).is_ok_and(|new| same(&old, &new)));
    let columns_same = status == stored.status
        && indicator.as_deref() == stored.indicator
        && summary.result.as_deref() == stored.result
        && match (summary.heart_rate, stored.heart_rate) {
            (Some(x), Some(y)) => same_number(x, y),
            (x, y) => x.is_none() && y.is_none(),
        };
    if fields_same && summary_same && columns_same {
        return None;
    }
    Some(Rewrite {
        data: Value::Object(data).to_string(),
        status,
        indicator,
        summary,
    })
}

/// Whether two JSON values are the same up to the last bits of their numbers: a number read
/// back from JSON text may differ from the one written in its last place (serde_json's fast
/// float parsing), which is no change of a result.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_f64(), y.as_f64()) {
            (Some(x), Some(y)) => same_number(x, y),
            _ => x == y,
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

fn same_number(x: f64, y: f64) -> bool {
    x == y || (x - y).abs() <= 4.0 * f64::EPSILON * x.abs().max(y.abs())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn stored(data: &str) -> Stored<'_> {
        Stored {
            data,
            status: Status::Analyzed,
            indicator: None,
            result: None,
            heart_rate: None,
            summary: None,
        }
    }

    #[test]
    fn an_unreadable_payload_is_never_rewritten() {
        let unreadable = reanalyse(stored("{\"time\": ["));
        assert!(unreadable.rewrite.is_none() && unreadable.failed && unreadable.run.is_none());
        let data = json!({"rr_intervals": [800, 810, 790]}).to_string();
        let short = reanalyse(stored(&data));
        assert!(short.failed, "three intervals are too short for a rhythm");
        let rewrite = short.rewrite.expect("a row without a summary is written");
        assert_eq!(rewrite.status, Status::AnalysisFailed);
        assert!(
            rewrite
                .data
                .starts_with(r#"{"rr_intervals":[800,810,790],"indicator":"quality""#)
        );
    }

    #[test]
    fn a_measurement_whose_analysis_is_unchanged_is_not_rewritten() {
        let data = json!({"rr_intervals": [800, 810, 790]}).to_string();
        let first = reanalyse(stored(&data)).rewrite.unwrap();
        let summary = serde_json::to_string(&first.summary).unwrap();
        let again = reanalyse(Stored {
            data: &first.data,
            status: first.status,
            indicator: first.indicator.as_deref(),
            result: first.summary.result.as_deref(),
            heart_rate: first.summary.heart_rate,
            summary: Some(&summary),
        });
        assert!(again.rewrite.is_none());
        let moved = reanalyse(Stored {
            status: Status::Measured,
            ..stored(&first.data)
        });
        assert!(
            moved.rewrite.is_some(),
            "a status behind its result is rewritten"
        );
    }

    #[test]
    fn numbers_read_back_from_text_are_the_same() {
        let x = 72.123_456_789_012_34_f64;
        let next = f64::from_bits(x.to_bits() + 1);
        assert!(same(&json!({"a": [x, 1]}), &json!({"a": [next, 1]})));
        assert!(!same(&json!({"a": [x]}), &json!({"a": [x + 1e-9]})));
        assert!(!same(&json!({"a": 1}), &json!({"a": 1, "b": 2})));
        assert!(!same(&json!([1, 2]), &json!([1])));
        assert!(same(&json!("x"), &json!("x")));
    }
}
