//! Lists of measurements, written document by document.
//!
//! A page may hold 50 measurements of up to `TACHO_MAX_MEASUREMENT_BYTES` each, and each one
//! built as a `serde_json::Value` tree takes several times its text. So a list reads the page
//! without payloads first, then the payloads a few at a time, and writes each stored payload
//! into the body as the text it is (checked, not parsed into a tree). The payload text and
//! the JSON written from it count against one budget shared by every list of the process
//! ([`BUDGET_BYTES`]): a list waits for room before it reads more, so fifty lists of the
//! largest measurements at once hold about that much payload in memory, not fifty pages.
//! The wire shape is the list envelope of [`super::page`], `select()` included.

use std::collections::{HashMap, VecDeque};

use actix_web::web::Bytes;
use futures_util::Stream;
use serde::Serialize;
use serde::ser::SerializeMap;
use serde_json::Value;
use serde_json::value::RawValue;
use tokio::sync::{Semaphore, SemaphorePermit};

use super::page::PageInfo;
use crate::domain::id::Id;
use crate::domain::measurement::Status;
use crate::domain::time::rfc3339_millis;
use crate::store::query::ListSpec;
use crate::store::{ListedMeasurement, ListedRecord, MeasurementRecord, Reader, Viewer};

/// Bytes of payload text and of the JSON written from it that all lists together may hold.
pub const BUDGET_BYTES: usize = 256 * 1024 * 1024;
/// The budget is counted in KiB, so that a permit count fits in `u32`.
const UNIT: usize = 1024;
static BUDGET: Semaphore = Semaphore::const_new(BUDGET_BYTES / UNIT);
/// Payloads read by one query: up to this many bytes, or one payload when it is larger.
const BATCH_BYTES: usize = 4 * 1024 * 1024;
/// Payload queries of all lists at once: half of SQLite's pool of 8 connections, so that the
/// reads of large payloads never take every connection from the requests queued behind them
/// (a page query, a login) for longer than the pool lets those wait.
static READS: Semaphore = Semaphore::const_new(4);
/// The body is handed to the connection in pieces of this size (views of one buffer, not
/// copies), so that the connection's write buffer never holds a whole document.
const CHUNK_BYTES: usize = 64 * 1024;

/// The page's envelope up to its first document.
fn prefix(total: Option<u64>, spec: &ListSpec) -> Bytes {
    let info = PageInfo {
        total,
        offset: spec.offset,
        limit: spec.limit,
    };
    let info = serde_json::to_string(&info).unwrap_or_else(|_| "{}".into());
    Bytes::from(format!("{{\"page\":{info},\"data\":["))
}

/// The stored payload as the object it holds, or `{}` when the text were ever unreadable
/// (as [`crate::store::entities::measurement::Model::data_object`] reads it).
pub(super) fn stored_object(text: &str) -> &RawValue {
    match serde_json::from_str::<&RawValue>(text) {
        Ok(raw) if raw.get().starts_with('{') => raw,
        _ => empty_object(),
    }
}

fn empty_object() -> &'static RawValue {
    serde_json::from_str("{}").unwrap_or_else(|_| unreachable!("`{{}}` is JSON"))
}

/// A measurement document, with the payload as its stored text: the lists and
/// [`super::measurements`] write it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Document<'a> {
    id: Id,
    creator_id: Id,
    user_ids: &'a [Id],
    group_ids: &'a [Id],
    status: Status,
    data: &'a RawValue,
    creation_timestamp: String,
    update_timestamp: String,
    status_changed_timestamp: String,
}

impl<'a> Document<'a> {
    fn new(record: &'a ListedRecord, data: &'a RawValue) -> Self {
        Document::of(
            &record.measurement,
            &record.user_ids,
            &record.group_ids,
            data,
        )
    }

    /// One stored measurement's document.
    pub(super) fn stored(record: &'a MeasurementRecord) -> Self {
        let m = &record.measurement;
        let data = stored_object(&m.data);
        Document::of(&m.into(), &record.user_ids, &record.group_ids, data)
    }

    fn of(
        m: &ListedMeasurement,
        user_ids: &'a [Id],
        group_ids: &'a [Id],
        data: &'a RawValue,
    ) -> Self {
        Document {
            id: m.id,
            creator_id: m.creator_id,
            user_ids,
            group_ids,
            status: m.status,
            data,
            creation_timestamp: rfc3339_millis(m.creation_timestamp),
            update_timestamp: rfc3339_millis(m.update_timestamp),
            status_changed_timestamp: rfc3339_millis(m.status_changed_timestamp),
        }
    }

    /// The envelope's fields other than `data`, as values.
    fn envelope(&self) -> serde_json::Map<String, Value> {
        let mut value = serde_json::to_value(self).unwrap_or(Value::Null);
        match value.as_object_mut() {
            Some(map) => {
                map.shift_remove("data");
                std::mem::take(map)
            }
            None => serde_json::Map::new(),
        }
    }
}

/// What `select()` keeps of a document: small values copied, parts of the payload as their
/// text.
enum Picked<'a> {
    Value(Value),
    Raw(&'a RawValue),
    Object(Vec<(String, Picked<'a>)>),
}

impl Serialize for Picked<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Picked::Value(value) => value.serialize(serializer),
            Picked::Raw(raw) => raw.serialize(serializer),
            Picked::Object(fields) => {
                let mut map = serializer.serialize_map(Some(fields.len()))?;
                for (key, value) in fields {
                    map.serialize_entry(key, value)?;
                }
                map.end()
            }
        }
    }
}

/// The member `key` of a JSON object's text; none when it is not an object or has no such
/// member.
fn raw_member<'a>(raw: &'a RawValue, key: &str) -> Option<&'a RawValue> {
    let members: HashMap<String, &'a RawValue> = serde_json::from_str(raw.get()).ok()?;
    members.get(key).copied()
}

/// The value at a dotted path of the document, as [`super::page::project`] looks it up.
fn lookup<'a>(
    envelope: &serde_json::Map<String, Value>,
    data: &'a RawValue,
    parts: &[&str],
) -> Option<Picked<'a>> {
    let (first, rest) = parts.split_first()?;
    if *first == "data" {
        let raw = rest
            .iter()
            .try_fold(data, |raw, part| raw_member(raw, part))?;
        return Some(Picked::Raw(raw));
    }
    let value = rest
        .iter()
        .try_fold(envelope.get(*first)?, |value, part| value.get(*part))?;
    Some(Picked::Value(value.clone()))
}

/// Puts `value` at a dotted path, as [`super::page::project`] does.
fn insert<'a>(out: &mut Vec<(String, Picked<'a>)>, parts: &[&str], value: Picked<'a>) {
    let position =
        |out: &Vec<(String, Picked<'a>)>, key: &str| out.iter().position(|(k, _)| k == key);
    match parts {
        [] => {}
        [last] => match position(out, last) {
            Some(i) => out[i].1 = value,
            None => out.push(((*last).to_owned(), value)),
        },
        [first, rest @ ..] => {
            let i = position(out, first).unwrap_or_else(|| {
                out.push(((*first).to_owned(), Picked::Object(Vec::new())));
                out.len() - 1
            });
            if let Picked::Object(child) = &mut out[i].1 {
                insert(child, rest, value);
            }
        }
    }
}

/// One document of the page as JSON text, projected when the query had `select(…)`.
fn document_text(record: &ListedRecord, text: &str, select: Option<&[String]>) -> Vec<u8> {
    let document = Document::new(record, stored_object(text));
    let written = match select {
        None => serde_json::to_vec(&document),
        Some(paths) => {
            let envelope = document.envelope();
            let mut out = Vec::new();
            for path in paths {
                let parts: Vec<&str> = path.split('.').collect();
                if let Some(found) = lookup(&envelope, document.data, &parts) {
                    insert(&mut out, &parts, found);
                }
            }
            serde_json::to_vec(&Picked::Object(out))
        }
    };
    // Serialising strings, numbers and checked JSON text cannot fail.
    written.unwrap_or_else(|_| b"null".to_vec())
}

/// Where the writing of a page is.
struct Writer {
    store: Reader,
    /// Whose page it is: the payloads are read through the same visibility as the page.
    viewer: Viewer,
    spec_select: Option<Vec<String>>,
    records: VecDeque<ListedRecord>,
    /// Pieces ready to be handed out, with the budget they hold.
    ready: VecDeque<Bytes>,
    held: Option<SemaphorePermit<'static>>,
    written: usize,
    finished: bool,
}

impl Writer {
    /// The records of the next query: up to [`BATCH_BYTES`] of payload, at least one.
    fn next_batch(&mut self) -> Vec<ListedRecord> {
        let mut batch = Vec::new();
        let mut bytes = 0;
        while let Some(next) = self.records.front() {
            let size = usize::try_from(next.measurement.data_bytes).unwrap_or(0);
            if !batch.is_empty() && bytes + size > BATCH_BYTES {
                break;
            }
            bytes += size;
            batch.extend(self.records.pop_front());
        }
        batch
    }

    /// Reads the next payloads and writes their documents into `ready`.
    async fn fill(&mut self) -> Result<(), crate::store::StoreError> {
        let batch = self.next_batch();
        let payload: usize = batch
            .iter()
            .map(|r| usize::try_from(r.measurement.data_bytes).unwrap_or(0))
            .sum();
        // The text read and the document written from it; never more than the whole budget,
        // so that a payload larger than it still goes, alone.
        let units = (2 * payload).div_ceil(UNIT).clamp(1, BUDGET_BYTES / UNIT);
        let units = u32::try_from(units).unwrap_or(u32::MAX);
        self.held = BUDGET.acquire_many(units).await.ok();
        let ids: Vec<Id> = batch.iter().map(|r| r.measurement.id).collect();
        let mut texts = {
            let _read = READS.acquire().await.ok();
            self.store.measurement_payloads(&self.viewer, &ids).await?
        };
        for record in &batch {
            // A measurement gone since the page was read is left out.
            let Some(text) = texts.remove(&record.measurement.id) else {
                continue;
            };
            let mut piece = Vec::with_capacity(text.len() + 512);
            if self.written > 0 {
                piece.push(b',');
            }
            piece.extend(document_text(record, &text, self.spec_select.as_deref()));
            drop(text);
            self.written += 1;
            let piece = Bytes::from(piece);
            let mut at = 0;
            while at < piece.len() {
                let end = (at + CHUNK_BYTES).min(piece.len());
                self.ready.push_back(piece.slice(at..end));
                at = end;
            }
        }
        Ok(())
    }

    /// The next piece of the body.
    async fn next(&mut self) -> Option<Result<Bytes, actix_web::Error>> {
        loop {
            if let Some(piece) = self.ready.pop_front() {
                return Some(Ok(piece));
            }
            // Everything read so far has been handed out.
            self.held = None;
            if self.finished {
                return None;
            }
            if self.records.is_empty() {
                self.finished = true;
                return Some(Ok(Bytes::from_static(b"]}")));
            }
            if let Err(err) = self.fill().await {
                // The status line is sent; the client sees a cut-off body.
                tracing::error!(error = %err, "a measurement list failed while writing");
                self.finished = true;
                self.records.clear();
                return Some(Err(actix_web::error::ErrorInternalServerError(
                    "the list could not be read",
                )));
            }
        }
    }
}

/// The body of a page of measurements: the list envelope, then each document as its payload
/// is read, within the process' budget.
pub fn body(
    store: Reader,
    viewer: Viewer,
    records: Vec<ListedRecord>,
    total: Option<u64>,
    spec: &ListSpec,
) -> impl Stream<Item = Result<Bytes, actix_web::Error>> + 'static {
    let writer = Writer {
        store,
        viewer,
        spec_select: spec.select.clone(),
        records: records.into(),
        ready: VecDeque::from([prefix(total, spec)]),
        held: None,
        written: 0,
        finished: false,
    };
    futures_util::stream::unfold(writer, |mut writer| async move {
        let item = writer.next().await?;
        Some((item, writer))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::ListedMeasurement;
    use serde_json::json;

    fn record() -> ListedRecord {
        ListedRecord {
            measurement: ListedMeasurement {
                id: "6740a0000000000000000001".into(),
                creator_id: "6740a0000000000000000002".into(),
                status: Status::Analyzed,
                creation_timestamp: 1,
                update_timestamp: 2,
                status_changed_timestamp: 3,
                data_bytes: 0,
            },
            user_ids: vec!["6740a0000000000000000002".into()],
            group_ids: vec![],
        }
    }

    fn as_value(bytes: Vec<u8>) -> Value {
        serde_json::from_slice(&bytes).unwrap()
    }

    /// The document as the single-document endpoint writes it, through a value tree.
    fn through_tree(record: &ListedRecord, text: &str) -> Value {
        let m = &record.measurement;
        let data = match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(map)) => Value::Object(map),
            _ => json!({}),
        };
        json!({
            "id": m.id, "creatorId": m.creator_id, "userIds": record.user_ids,
            "groupIds": record.group_ids, "status": m.status, "data": data,
            "creationTimestamp": rfc3339_millis(m.creation_timestamp),
            "updateTimestamp": rfc3339_millis(m.update_timestamp),
            "statusChangedTimestamp": rfc3339_millis(m.status_changed_timestamp),
        })
    }

    #[test]
    fn documents_are_written_as_the_tree_would_be() {
        let record = record();
        for text in [
            // Stored payloads are serde_json's own compact text.
            r#"{"measurement_timestamp":1,"b":[1,2.5,-0.003],"a":{"z":1,"y":"é\"\n"}}"#,
            "{\"time\": [",
            "[1,2]",
            "",
        ] {
            let written = document_text(&record, text, None);
            let tree = through_tree(&record, text);
            assert_eq!(as_value(written.clone()), tree, "{text}");
            assert_eq!(
                String::from_utf8(written).unwrap(),
                serde_json::to_string(&tree).unwrap(),
                "key order too: {text}"
            );
        }
    }

    #[test]
    fn select_keeps_what_page_project_keeps() {
        let record = record();
        let text = r#"{"heartrate":60,"tags":["a"],"context":{"activity":"rest","x":1},"k.l":2}"#;
        let selections: [&[&str]; 6] = [
            &["id", "data.heartrate", "missing", "data.context.activity"],
            &["data.tags", "id", "data.nothing", "data.heartrate.deeper"],
            &["data.context.activity", "data"],
            &["data", "data.context.x"],
            &["status", "userIds", "creationTimestamp", "data.k.l"],
            &["id.more", "data.tags.0"],
        ];
        for paths in selections {
            let paths: Vec<String> = paths.iter().map(|p| (*p).to_owned()).collect();
            let written = document_text(&record, text, Some(&paths));
            let expected = super::super::page::project(&through_tree(&record, text), &paths);
            assert_eq!(
                String::from_utf8(written).unwrap(),
                serde_json::to_string(&expected).unwrap(),
                "{paths:?}"
            );
        }
    }
}
