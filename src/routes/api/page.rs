//! The list envelope `{"page":{"total","offset","limit"},"data":[…]}` and `select()` projection.

use serde::Serialize;
use serde_json::{Map, Value};
use utoipa::ToSchema;

use crate::store::query::ListSpec;

/// Position of a page in the full result.
#[derive(Debug, Serialize, ToSchema)]
pub struct PageInfo {
    /// Number of matching items; left out after `skipCount()`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    pub offset: u64,
    pub limit: u64,
}

/// A page of items.
#[derive(Debug, Serialize, ToSchema)]
pub struct Page {
    pub page: PageInfo,
    #[schema(value_type = Vec<Object>)]
    pub data: Vec<Value>,
}

impl Page {
    /// Builds the envelope, keeping only the selected fields of each item when the query had
    /// `select(…)`.
    pub fn new<T: Serialize>(items: Vec<T>, total: Option<u64>, spec: &ListSpec) -> Page {
        let data = items
            .into_iter()
            .map(|item| {
                let value = serde_json::to_value(item).unwrap_or(Value::Null);
                match &spec.select {
                    Some(fields) => project(&value, fields),
                    None => value,
                }
            })
            .collect();
        Page {
            page: PageInfo {
                total,
                offset: spec.offset,
                limit: spec.limit,
            },
            data,
        }
    }
}

/// Keeps the given (dotted) paths of a JSON object.
pub fn project(value: &Value, paths: &[String]) -> Value {
    let mut out = Map::new();
    for path in paths {
        let parts: Vec<&str> = path.split('.').collect();
        if let Some(found) = lookup(value, &parts) {
            insert(&mut out, &parts, found.clone());
        }
    }
    Value::Object(out)
}

fn lookup<'a>(value: &'a Value, parts: &[&str]) -> Option<&'a Value> {
    parts.iter().try_fold(value, |v, part| v.get(*part))
}

fn insert(out: &mut Map<String, Value>, parts: &[&str], value: Value) {
    match parts {
        [] => {}
        [last] => {
            out.insert((*last).to_owned(), value);
        }
        [first, rest @ ..] => {
            let child = out
                .entry((*first).to_owned())
                .or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(map) = child {
                insert(map, rest, value);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn projection_keeps_nested_paths() {
        let item = json!({"id": "a", "email": "e", "data": {"heartrate": 60, "other": 1}});
        let kept = project(
            &item,
            &["id".into(), "data.heartrate".into(), "missing".into()],
        );
        assert_eq!(kept, json!({"id": "a", "data": {"heartrate": 60}}));
    }
}
