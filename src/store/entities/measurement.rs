//! `measurements`: the payload verbatim in `data`, its queryable fields in columns.

use sea_orm::entity::prelude::*;

use crate::domain::id::Id;
use crate::domain::measurement::Status;

#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "measurements")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: Id,
    pub creator_id: Id,
    pub status: Status,
    /// The payload as JSON text, kept verbatim.
    #[sea_orm(column_type = "Text")]
    pub data: String,
    pub measurement_timestamp: Option<i64>,
    /// The heart rate the phone sent (`data.heartrate`), bpm.
    pub heartrate: Option<f64>,
    /// The server's indicator (`data.indicator`): `normal`, `warning`, `urgent`, `quality`.
    pub indicator: Option<String>,
    /// The server's heart rate (`data.analysis.heart_rate`), bpm; none when the analysis failed.
    pub heart_rate: Option<f64>,
    /// The server's headline result (`data.mostSevereLabel.key`), a
    /// [`crate::analysis::ResultKey`] wire name.
    pub result: Option<String>,
    /// JSON text of [`crate::domain::measurement::Summary`]; none for rows stored before it existed.
    #[sea_orm(column_type = "Text", nullable)]
    pub summary: Option<String>,
    /// The physician's conclusion (`data.review.label`): a rhythm label's wire name or free
    /// text; none before a review gives one.
    pub review_label: Option<String>,
    /// Who gave the conclusion (`data.review.reviewer_id`).
    pub reviewer_id: Option<Id>,
    /// When (`data.review.review_timestamp`), epoch ms.
    pub review_timestamp: Option<i64>,
    pub creation_timestamp: i64,
    pub update_timestamp: i64,
    pub status_changed_timestamp: i64,
}

/// A measurement without its payload: the indexed columns lists show. A list of twenty rows
/// reads a few hundred bytes instead of twenty payloads of ~0.4 MB.
#[derive(Clone, Debug, PartialEq, DerivePartialModel)]
#[sea_orm(entity = "Entity")]
pub struct Header {
    pub id: Id,
    pub creator_id: Id,
    pub status: Status,
    pub measurement_timestamp: Option<i64>,
    /// The phone's heart rate.
    pub heartrate: Option<f64>,
    /// The server's indicator.
    pub indicator: Option<String>,
    /// The server's heart rate.
    pub heart_rate: Option<f64>,
    /// The server's result key.
    pub result: Option<String>,
    /// The physician's conclusion, its author and its time.
    pub review_label: Option<String>,
    pub reviewer_id: Option<Id>,
    pub review_timestamp: Option<i64>,
    pub creation_timestamp: i64,
    /// The last change of any kind (context, tags, review, re-analysis).
    pub update_timestamp: i64,
}

impl From<&Model> for Header {
    fn from(m: &Model) -> Self {
        Header {
            id: m.id,
            creator_id: m.creator_id,
            status: m.status,
            measurement_timestamp: m.measurement_timestamp,
            heartrate: m.heartrate,
            indicator: m.indicator.clone(),
            heart_rate: m.heart_rate,
            result: m.result.clone(),
            review_label: m.review_label.clone(),
            reviewer_id: m.reviewer_id,
            review_timestamp: m.review_timestamp,
            creation_timestamp: m.creation_timestamp,
            update_timestamp: m.update_timestamp,
        }
    }
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}

impl Model {
    /// The payload as a JSON object (empty if the stored text were ever unreadable).
    pub fn data_object(&self) -> serde_json::Map<String, serde_json::Value> {
        match serde_json::from_str(&self.data) {
            Ok(serde_json::Value::Object(map)) => map,
            _ => serde_json::Map::new(),
        }
    }

    /// The payload split into its members, each read only when asked for (see
    /// [`Payload`](crate::domain::payload::Payload)).
    pub fn payload(&self) -> crate::domain::payload::Payload<'_> {
        crate::domain::payload::Payload::parse(&self.data)
    }

    /// The summary periodic reports list, read from the payload when none is stored.
    pub fn summary(&self) -> crate::domain::measurement::Summary {
        self.summary
            .as_deref()
            .and_then(|text| serde_json::from_str(text).ok())
            .unwrap_or_else(|| crate::domain::measurement::Summary::of(&self.data_object()))
    }
}
