//! A stored measurement payload, read one member at a time.

use std::collections::HashMap;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// A measurement's stored `data`, split into its top-level members, each left as JSON text
/// until it is asked for. A long recording's payload is mostly arrays (its intervals, the
/// analysis' series, camera traces); a report reads a few small members and the analysis,
/// and building a JSON tree of the whole payload first cost more than reading those.
#[derive(Debug, Default)]
pub struct Payload<'a> {
    members: HashMap<String, &'a RawValue>,
}

impl<'a> Payload<'a> {
    /// The payload stored as `text`; without members when the text is not a JSON object,
    /// as [`crate::store::entities::measurement::Model::data_object`] reads it.
    pub fn parse(text: &'a str) -> Payload<'a> {
        Payload {
            members: serde_json::from_str(text).unwrap_or_default(),
        }
    }

    /// The member `key` as a JSON value, if present.
    pub fn value(&self, key: &str) -> Option<Value> {
        self.read(key)
    }

    /// The member `key` read as a `T`; none when it is absent or is no `T`.
    pub fn read<T: Deserialize<'a>>(&self, key: &str) -> Option<T> {
        let raw: &'a RawValue = self.members.get(key)?;
        serde_json::from_str(raw.get()).ok()
    }

    /// The members named in `keys` that are present, as a JSON object: what a reader of a
    /// whole payload needs when only these members matter to it.
    pub fn subset(&self, keys: &[&str]) -> Map<String, Value> {
        keys.iter()
            .filter_map(|key| Some((key.to_string(), self.value(key)?)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn members_read_as_the_whole_payload_reads_them() {
        let text = json!({
            "context": {"symptoms": ["dizzy"], "activity": "sitting"},
            "rr_intervals": [812.5, 790, 1e3],
            "time": null,
            "heartrate": 72
        })
        .to_string();
        let payload = Payload::parse(&text);
        let whole = serde_json::from_str::<Map<String, Value>>(&text).unwrap();
        for key in ["context", "rr_intervals", "time", "heartrate", "absent"] {
            assert_eq!(payload.value(key).as_ref(), whole.get(key), "{key}");
        }
        assert_eq!(
            payload.read::<Vec<f64>>("rr_intervals"),
            Some(vec![812.5, 790.0, 1000.0])
        );
        assert_eq!(payload.read::<Vec<f64>>("context"), None);
        let subset = payload.subset(&["time", "heartrate", "absent"]);
        assert_eq!(
            Value::Object(subset),
            json!({"time": null, "heartrate": 72})
        );
    }

    #[test]
    fn a_payload_that_is_no_object_has_no_members() {
        for text in ["", "[1, 2]", "\"text\"", "{\"a\": ", "null"] {
            assert!(Payload::parse(text).members.is_empty(), "{text:?}");
        }
    }

    #[test]
    fn a_repeated_member_reads_as_its_last_value_as_in_the_whole_payload() {
        let text = r#"{"heartrate": 60, "heartrate": 61}"#;
        let whole = serde_json::from_str::<Map<String, Value>>(text).unwrap();
        assert_eq!(
            Payload::parse(text).value("heartrate").as_ref(),
            whole.get("heartrate")
        );
    }
}
