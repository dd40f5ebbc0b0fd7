//! Small readers of the JSON documents apps send (payloads, profiles), which keep what they do
//! not understand rather than fail on it.

use serde_json::Value;

/// The strings of a JSON array (other items skipped); empty for anything but an array.
pub fn string_list(value: Option<&Value>) -> Vec<String> {
    value
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::string_list;

    #[test]
    fn only_the_strings_of_an_array_are_kept() {
        let list = json!(["TREMOR", 3, null, "CALLUS"]);
        assert_eq!(string_list(Some(&list)), ["TREMOR", "CALLUS"]);
        assert!(string_list(Some(&json!("TREMOR"))).is_empty());
        assert!(string_list(None).is_empty());
    }
}
