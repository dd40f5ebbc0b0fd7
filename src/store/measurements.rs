//! Measurements and the link tables behind their list fields.

use std::collections::HashMap;

use sea_orm::sea_query::Expr;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, Set, TransactionTrait,
};
use serde_json::{Map, Value};

use super::entities::{
    measurement, measurement_group, measurement_tag, measurement_user, patient_enlistment,
};
use super::query::ListSpec;
use super::{Store, StoreError, StoreResult, Viewer};
use crate::domain::id::Id;
use crate::domain::measurement::{NewMeasurement, Status, Summary};

/// A measurement with its list fields.
#[derive(Debug, Clone)]
pub struct MeasurementRecord {
    pub measurement: measurement::Model,
    pub user_ids: Vec<String>,
    pub group_ids: Vec<String>,
}

/// A change to a stored measurement, already checked.
#[derive(Debug, Clone)]
pub struct MeasurementChange {
    /// The whole new `data`.
    pub data: Map<String, Value>,
    pub status: Status,
    /// New tags, when they changed.
    pub tags: Option<Vec<String>>,
}

fn summary_text(summary: &Summary) -> String {
    serde_json::to_string(summary).unwrap_or_default()
}

async fn replace_tags(
    db: &impl ConnectionTrait,
    id: &str,
    tags: &[String],
) -> Result<(), sea_orm::DbErr> {
    measurement_tag::Entity::delete_many()
        .filter(measurement_tag::Column::MeasurementId.eq(id))
        .exec(db)
        .await?;
    if !tags.is_empty() {
        let rows = tags.iter().map(|tag| measurement_tag::ActiveModel {
            measurement_id: Set(id.to_owned()),
            tag: Set(tag.clone()),
        });
        measurement_tag::Entity::insert_many(rows)
            .on_conflict_do_nothing()
            .exec(db)
            .await?;
    }
    Ok(())
}

impl Store {
    /// Stores a measurement of `creator_id`, shared with the groups the creator is an active
    /// patient of.
    pub async fn create_measurement(
        &self,
        creator_id: &str,
        new: NewMeasurement,
    ) -> StoreResult<MeasurementRecord> {
        let now = self.now();
        let id = Id::generate().to_string();
        let txn = self.db.begin().await?;
        let group_ids: Vec<String> = patient_enlistment::Entity::find()
            .filter(patient_enlistment::Column::UserId.eq(creator_id))
            .filter(patient_enlistment::Column::ExpiryTimestamp.gt(now))
            .all(&txn)
            .await?
            .into_iter()
            .map(|e| e.group_id)
            .collect();
        let summary = Summary::of(&new.data);
        let model = measurement::ActiveModel {
            id: Set(id.clone()),
            creator_id: Set(creator_id.to_owned()),
            status: Set(new.status.as_str().to_owned()),
            summary: Set(Some(summary_text(&summary))),
            data: Set(Value::Object(new.data).to_string()),
            measurement_timestamp: Set(Some(new.measurement_timestamp)),
            heartrate: Set(new.heartrate),
            indicator: Set(new.indicator),
            heart_rate: Set(summary.heart_rate),
            result: Set(summary.result),
            creation_timestamp: Set(now),
            update_timestamp: Set(now),
            status_changed_timestamp: Set(now),
        }
        .insert(&txn)
        .await?;
        measurement_user::ActiveModel {
            measurement_id: Set(id.clone()),
            user_id: Set(creator_id.to_owned()),
        }
        .insert(&txn)
        .await?;
        let mut unique_groups = group_ids.clone();
        unique_groups.sort();
        unique_groups.dedup();
        if !unique_groups.is_empty() {
            let rows = unique_groups
                .iter()
                .map(|g| measurement_group::ActiveModel {
                    measurement_id: Set(id.clone()),
                    group_id: Set(g.clone()),
                });
            measurement_group::Entity::insert_many(rows)
                .exec(&txn)
                .await?;
        }
        replace_tags(&txn, &id, &new.tags).await?;
        txn.commit().await?;
        Ok(MeasurementRecord {
            measurement: model,
            user_ids: vec![creator_id.to_owned()],
            group_ids: unique_groups,
        })
    }

    /// The measurement `id` if `viewer` may see it.
    pub async fn visible_measurement(
        &self,
        viewer: &Viewer,
        id: &str,
    ) -> StoreResult<MeasurementRecord> {
        let model = measurement::Entity::find_by_id(id.to_owned())
            .filter(viewer.users("measurements", "creator_id"))
            .one(&self.db)
            .await?
            .ok_or(StoreError::NotFound)?;
        let mut records = self.measurement_records(vec![model]).await?;
        records.pop().ok_or(StoreError::NotFound)
    }

    /// Adds the list fields to measurements, two queries for any number of them.
    pub async fn measurement_records(
        &self,
        models: Vec<measurement::Model>,
    ) -> StoreResult<Vec<MeasurementRecord>> {
        let ids: Vec<String> = models.iter().map(|m| m.id.clone()).collect();
        let mut users: HashMap<String, Vec<String>> = HashMap::new();
        for row in measurement_user::Entity::find()
            .filter(measurement_user::Column::MeasurementId.is_in(ids.iter().cloned()))
            .all(&self.db)
            .await?
        {
            users
                .entry(row.measurement_id)
                .or_default()
                .push(row.user_id);
        }
        let mut groups = self.measurement_group_ids(&ids).await?;
        Ok(models
            .into_iter()
            .map(|m| MeasurementRecord {
                user_ids: users.remove(&m.id).unwrap_or_default(),
                group_ids: groups.remove(&m.id).unwrap_or_default(),
                measurement: m,
            })
            .collect())
    }

    /// The group ids of each of these measurements.
    pub async fn measurement_group_ids(
        &self,
        ids: &[String],
    ) -> StoreResult<HashMap<String, Vec<String>>> {
        let mut groups: HashMap<String, Vec<String>> = HashMap::new();
        for row in measurement_group::Entity::find()
            .filter(measurement_group::Column::MeasurementId.is_in(ids.to_vec()))
            .all(&self.db)
            .await?
        {
            groups
                .entry(row.measurement_id)
                .or_default()
                .push(row.group_id);
        }
        Ok(groups)
    }

    /// A page of the measurements `viewer` may see.
    pub async fn list_measurements(
        &self,
        viewer: &Viewer,
        spec: &ListSpec,
    ) -> StoreResult<(Vec<MeasurementRecord>, Option<u64>)> {
        let select = measurement::Entity::find().filter(viewer.users("measurements", "creator_id"));
        let (models, total) = self.page(select, spec).await?;
        Ok((self.measurement_records(models).await?, total))
    }

    /// A page of the measurements `viewer` may see, without their payloads (see
    /// [`measurement::Header`]).
    pub async fn list_measurement_headers(
        &self,
        viewer: &Viewer,
        spec: &ListSpec,
    ) -> StoreResult<(Vec<measurement::Header>, Option<u64>)> {
        let select = measurement::Entity::find().filter(viewer.users("measurements", "creator_id"));
        self.partial_page(select, spec).await
    }

    /// Applies a change, bumping `update_timestamp` (and `status_changed_timestamp` when the
    /// status changes). Fails with `NotFound` if the measurement changed status meanwhile.
    pub async fn update_measurement(
        &self,
        current: &measurement::Model,
        change: MeasurementChange,
    ) -> StoreResult<measurement::Model> {
        let now = self.now().max(current.update_timestamp + 1);
        let txn = self.db.begin().await?;
        let status_changed = change.status.as_str() != current.status;
        let summary = summary_text(&Summary::of(&change.data));
        let mut update = measurement::Entity::update_many()
            .col_expr(measurement::Column::Summary, Expr::value(summary))
            .col_expr(
                measurement::Column::Data,
                Expr::value(Value::Object(change.data).to_string()),
            )
            .col_expr(
                measurement::Column::Status,
                Expr::value(change.status.as_str()),
            )
            .col_expr(measurement::Column::UpdateTimestamp, Expr::value(now))
            .filter(measurement::Column::Id.eq(current.id.as_str()))
            .filter(measurement::Column::Status.eq(current.status.as_str()));
        if status_changed {
            update = update.col_expr(
                measurement::Column::StatusChangedTimestamp,
                Expr::value(now),
            );
        }
        if update.exec(&txn).await?.rows_affected == 0 {
            return Err(StoreError::NotFound);
        }
        if let Some(tags) = &change.tags {
            replace_tags(&txn, &current.id, tags).await?;
        }
        let updated = measurement::Entity::find_by_id(current.id.clone())
            .one(&txn)
            .await?
            .ok_or(StoreError::NotFound)?;
        txn.commit().await?;
        Ok(updated)
    }
}
