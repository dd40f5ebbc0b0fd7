//! `tacho analyse FILE [--rate HZ]`: the rhythm analysis outside the server, printing what an
//! upload of the same recording would get in its `data`.

use std::io::{ErrorKind, Read, Write};
use std::process::ExitCode;

use serde_json::{Map, Value};

use crate::analysis::{self, Context, Recording};
use crate::domain::measurement::{analyse, analysis_fields};

/// Exit code for input that cannot be read (as for a usage error).
const UNREADABLE: u8 = 2;

/// Reads FILE (`-` for stdin), analyses it and prints `{indicator, mostSevereLabel, af,
/// analysis}` as pretty JSON on stdout. FILE is a measurement JSON (the bare `data` object or
/// a document with a `data` key), a CSV of `time_ms,value`, or one value per line with `rate`.
/// A recording that cannot be analysed is still a result (exit 0); a file that cannot be read
/// is not (a message on stderr, exit 2).
pub fn run(file: &str, rate: Option<f64>) -> ExitCode {
    let analysis = match read(file).and_then(|text| analysis_of(&text, rate)) {
        Ok(analysis) => analysis,
        Err(message) => {
            eprintln!("error: {file}: {message}");
            return ExitCode::from(UNREADABLE);
        }
    };
    let fields = Value::Object(analysis_fields(&analysis));
    let mut out = std::io::stdout().lock();
    let printed = serde_json::to_writer_pretty(&mut out, &fields)
        .map_err(std::io::Error::from)
        .and_then(|()| writeln!(out));
    match printed {
        // A reader that stopped early (`| head`) wanted no more; that is not a failure.
        Err(err) if err.kind() != ErrorKind::BrokenPipe => {
            eprintln!("error: cannot print the result: {err}");
            ExitCode::FAILURE
        }
        _ => ExitCode::SUCCESS,
    }
}

fn read(file: &str) -> Result<String, String> {
    let mut text = String::new();
    let read = if file == "-" {
        std::io::stdin().read_to_string(&mut text).map(|_| ())
    } else {
        std::fs::read_to_string(file).map(|t| text = t)
    };
    read.map_err(|err| format!("cannot read it: {err}"))?;
    Ok(text)
}

fn analysis_of(text: &str, rate: Option<f64>) -> Result<analysis::Analysis, String> {
    if text.trim_start().starts_with('{') {
        if rate.is_some() {
            return Err("--rate is for CSV files; a measurement carries its own times".into());
        }
        let data = measurement_data(text)?;
        return Ok(analyse(&data).0);
    }
    let recording = Recording::from_csv(text, rate)?;
    Ok(analysis::analyse(&recording, Context::default()))
}

/// The measurement's `data`: the object itself, or its `data` when it is a whole document.
fn measurement_data(text: &str) -> Result<Map<String, Value>, String> {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(mut object)) => match object.remove("data") {
            Some(Value::Object(data)) => Ok(data),
            Some(_) => Err("`data` is not an object".into()),
            None => Ok(object),
        },
        Ok(_) => Err("not a JSON object".into()),
        Err(err) => Err(format!("not valid JSON: {err}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_and_bare_payloads_read_the_same() {
        let bare = measurement_data(r#"{"rr_intervals": [800, 810]}"#).unwrap();
        let document = measurement_data(r#"{"id": "x", "data": {"rr_intervals": [800, 810]}}"#);
        assert_eq!(document.unwrap(), bare);
        assert!(measurement_data("[1]").is_err());
        assert!(measurement_data(r#"{"data": 3}"#).is_err());
        assert!(measurement_data("{").is_err());
    }

    #[test]
    fn csv_errors_are_reported() {
        assert!(analysis_of("1\n2\n", None).is_err());
        assert!(analysis_of("0,1\nx,2\n", None).is_err());
        assert!(analysis_of(r#"{"rr_intervals": []}"#, Some(100.0)).is_err());
        assert!(analysis_of("0,1\n10,2\n", None).is_ok());
    }
}
