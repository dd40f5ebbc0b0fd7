//! Measurements and the link tables behind their list fields.

use std::collections::HashMap;

use sea_orm::sea_query::Expr;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, EntityTrait, FromQueryResult, PaginatorTrait,
    QueryFilter, QueryOrder, QuerySelect, Set,
};
use serde_json::{Map, Value};

use super::entities::{
    measurement, measurement_group, measurement_tag, measurement_user, patient_enlistment,
    staff_enlistment,
};
use super::notifications::{NewEvent, write_event};
use super::query::ListSpec;
use super::{Reader, Scope, StoreError, StoreResult, Tx, Viewer};
use crate::analysis::Indicator;
use crate::domain::id::Id;
use crate::domain::measurement::{Conclusion, NewMeasurement, Status, Summary};
use crate::domain::notification::EventKind;
use crate::domain::reanalysis::Rewrite;

/// A measurement with its list fields.
#[derive(Debug, Clone)]
pub struct MeasurementRecord {
    pub measurement: measurement::Model,
    pub user_ids: Vec<Id>,
    pub group_ids: Vec<Id>,
}

/// A measurement of a list page without its payload: the envelope's columns and how many
/// bytes the payload takes, so that the payloads can be read a few at a time.
#[derive(Debug, Clone, FromQueryResult)]
pub struct ListedMeasurement {
    pub id: Id,
    pub creator_id: Id,
    pub status: Status,
    pub creation_timestamp: i64,
    pub update_timestamp: i64,
    pub status_changed_timestamp: i64,
    /// The stored `data` text's length in bytes.
    pub data_bytes: i64,
}

impl From<&measurement::Model> for ListedMeasurement {
    fn from(m: &measurement::Model) -> Self {
        ListedMeasurement {
            id: m.id,
            creator_id: m.creator_id,
            status: m.status,
            creation_timestamp: m.creation_timestamp,
            update_timestamp: m.update_timestamp,
            status_changed_timestamp: m.status_changed_timestamp,
            data_bytes: i64::try_from(m.data.len()).unwrap_or(i64::MAX),
        }
    }
}

/// A [`ListedMeasurement`] with its list fields.
#[derive(Debug, Clone)]
pub struct ListedRecord {
    pub measurement: ListedMeasurement,
    pub user_ids: Vec<Id>,
    pub group_ids: Vec<Id>,
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
    id: &Id,
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

impl Reader {
    /// The measurement `id` if `viewer` may see it.
    pub async fn visible_measurement(
        &self,
        viewer: &Viewer,
        id: &Id,
    ) -> StoreResult<MeasurementRecord> {
        let model = measurement::Entity::find_by_id(*id)
            .filter(viewer.measurements("measurements", "id", "creator_id"))
            .one(&self.db)
            .await?
            .ok_or(StoreError::NotFound)?;
        let mut records = self.measurement_records(vec![model]).await?;
        records.pop().ok_or(StoreError::NotFound)
    }

    /// The measurements of the same patient just before and just after `current` (by when
    /// they were taken, as the lists show them, then id; the upload time for one sent without
    /// its time) that `viewer` may see: the previous (older) and next (newer) of the
    /// measurement page. Upload order would not do: a phone sends what it measured offline
    /// later, so "previous" led to a newer measurement.
    pub async fn neighbouring_measurements(
        &self,
        viewer: &Viewer,
        current: &measurement::Model,
    ) -> StoreResult<(Option<Id>, Option<Id>)> {
        use measurement::Column::{CreatorId, Id as IdColumn};
        use sea_orm::sea_query::ExprTrait;
        use sea_orm::{Condition, Order};
        let at = current
            .measurement_timestamp
            .unwrap_or(current.creation_timestamp);
        let taken = || {
            Expr::cust(
                r#"COALESCE("measurements"."measurement_timestamp", "measurements"."creation_timestamp")"#,
            )
        };
        // The nearest one on either side in (time taken, id) order.
        let neighbour = |later: bool| {
            let (beyond, order) = if later {
                (taken().gt(at), Order::Asc)
            } else {
                (taken().lt(at), Order::Desc)
            };
            let tie = if later {
                IdColumn.gt(current.id)
            } else {
                IdColumn.lt(current.id)
            };
            measurement::Entity::find()
                .select_only()
                .column(IdColumn)
                .filter(CreatorId.eq(current.creator_id))
                .filter(viewer.measurements("measurements", "id", "creator_id"))
                .filter(
                    Condition::any()
                        .add(beyond)
                        .add(Condition::all().add(taken().eq(at)).add(tie)),
                )
                .order_by(taken(), order.clone())
                .order_by(IdColumn, order)
                .limit(1)
                .into_tuple::<Id>()
                .one(&self.db)
        };
        let previous = neighbour(false).await?;
        let next = neighbour(true).await?;
        Ok((previous, next))
    }

    /// Adds the list fields to measurements, two queries for any number of them.
    pub(super) async fn measurement_records(
        &self,
        models: Vec<measurement::Model>,
    ) -> StoreResult<Vec<MeasurementRecord>> {
        let ids: Vec<Id> = models.iter().map(|m| m.id).collect();
        let (mut users, mut groups) = self.measurement_links(&ids).await?;
        Ok(models
            .into_iter()
            .map(|m| MeasurementRecord {
                user_ids: users.remove(&m.id).unwrap_or_default(),
                group_ids: groups.remove(&m.id).unwrap_or_default(),
                measurement: m,
            })
            .collect())
    }

    /// The user ids and the group ids of each of these measurements, read at once on two of
    /// the pool's connections.
    async fn measurement_links(
        &self,
        ids: &[Id],
    ) -> StoreResult<(HashMap<Id, Vec<Id>>, HashMap<Id, Vec<Id>>)> {
        tokio::try_join!(
            self.measurement_user_ids(ids),
            self.measurement_group_ids(ids),
        )
    }

    /// The user ids of each of these measurements.
    async fn measurement_user_ids(&self, ids: &[Id]) -> StoreResult<HashMap<Id, Vec<Id>>> {
        let mut users: HashMap<Id, Vec<Id>> = HashMap::new();
        for row in measurement_user::Entity::find()
            .filter(measurement_user::Column::MeasurementId.is_in(ids.to_vec()))
            .all(&self.db)
            .await?
        {
            users
                .entry(row.measurement_id)
                .or_default()
                .push(row.user_id);
        }
        Ok(users)
    }

    /// The group ids of each of these measurements.
    pub(super) async fn measurement_group_ids(
        &self,
        ids: &[Id],
    ) -> StoreResult<HashMap<Id, Vec<Id>>> {
        let mut groups: HashMap<Id, Vec<Id>> = HashMap::new();
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

    /// A page of the measurements `viewer` may see, without the payloads: each comes with
    /// its size, and [`Store::measurement_payloads`] reads them when the caller is ready to
    /// hold them.
    pub async fn list_measurements_lean(
        &self,
        viewer: &Viewer,
        spec: &ListSpec,
    ) -> StoreResult<(Vec<ListedRecord>, Option<u64>)> {
        use measurement::Column;
        let select = measurement::Entity::find().filter(viewer.measurements(
            "measurements",
            "id",
            "creator_id",
        ));
        // Unfiltered, the total is what the viewer sees at all, counted from the indexes. It
        // is counted on another connection while the page is read: for an administrator it
        // counts every measurement, the longest statement of the list.
        let page = super::paged(select.clone(), spec);
        let total = async {
            match spec.condition.is_empty() && !spec.skip_count {
                true => self.count_visible_measurements(viewer).await.map(Some),
                false => self.total(select, spec).await,
            }
        };
        let page = async {
            let Some(page) = page else {
                return Ok(Vec::new());
            };
            // A bigint on every database (PostgreSQL's OCTET_LENGTH is an int4).
            let data_bytes = Expr::cust(r#"CAST(OCTET_LENGTH("measurements"."data") AS BIGINT)"#);
            let rows: Vec<ListedMeasurement> = page
                .select_only()
                .columns([
                    Column::Id,
                    Column::CreatorId,
                    Column::Status,
                    Column::CreationTimestamp,
                    Column::UpdateTimestamp,
                    Column::StatusChangedTimestamp,
                ])
                .column_as(data_bytes, "data_bytes")
                .into_model()
                .all(&self.db)
                .await?;
            let ids: Vec<Id> = rows.iter().map(|m| m.id).collect();
            let (mut users, mut groups) = self.measurement_links(&ids).await?;
            let records = rows
                .into_iter()
                .map(|m| ListedRecord {
                    user_ids: users.remove(&m.id).unwrap_or_default(),
                    group_ids: groups.remove(&m.id).unwrap_or_default(),
                    measurement: m,
                })
                .collect();
            Ok::<_, StoreError>(records)
        };
        tokio::try_join!(page, total)
    }

    /// How many measurements `viewer` sees: exactly those [`Viewer::measurements`] admits
    /// (its own, and those shared with a group it is staff in), counted from the indexes
    /// alone, and for one group from its kept tally. Counting the list's rows instead probes the access gate per row, which for a
    /// physician of a large group is most of a page's time.
    async fn count_visible_measurements(&self, viewer: &Viewer) -> StoreResult<u64> {
        use sea_orm::sea_query::{Query, UnionType};
        if viewer.admin {
            return Ok(measurement::Entity::find().count(&self.db).await?);
        }
        let groups: Vec<Id> = staff_enlistment::Entity::find()
            .select_only()
            .column(staff_enlistment::Column::GroupId)
            .filter(staff_enlistment::Column::UserId.eq(viewer.user_id))
            .into_tuple()
            .all(&self.db)
            .await?;
        let own =
            measurement::Entity::find().filter(measurement::Column::CreatorId.eq(viewer.user_id));
        match groups.as_slice() {
            [] => Ok(own.count(&self.db).await?),
            [group] => {
                // Its own, plus its group's, less its own shared with the group.
                let own_ids = Query::select()
                    .column(measurement::Column::Id)
                    .from(measurement::Entity)
                    .and_where(measurement::Column::CreatorId.eq(viewer.user_id))
                    .to_owned();
                let both = measurement_group::Entity::find()
                    .filter(measurement_group::Column::GroupId.eq(*group))
                    .filter(measurement_group::Column::MeasurementId.in_subquery(own_ids));
                let own = own.count(&self.db).await?;
                let shared = self.measurements_shared_with(group).await?;
                let both = both.count(&self.db).await?;
                Ok(own + shared - both)
            }
            _ => {
                // A measurement may be shared with several of its groups: counted once.
                let visible = Query::select()
                    .column(measurement_group::Column::MeasurementId)
                    .from(measurement_group::Entity)
                    .and_where(measurement_group::Column::GroupId.is_in(groups))
                    .union(
                        UnionType::Distinct,
                        Query::select()
                            .column(measurement::Column::Id)
                            .from(measurement::Entity)
                            .and_where(measurement::Column::CreatorId.eq(viewer.user_id))
                            .to_owned(),
                    )
                    .to_owned();
                self.count_rows(visible).await
            }
        }
    }

    /// The stored `data` text of these measurements that `scope` sees, by id (those that no
    /// longer exist, or no longer are in view, are missing).
    pub async fn measurement_payloads(
        &self,
        scope: &dyn Scope,
        ids: &[Id],
    ) -> StoreResult<HashMap<Id, String>> {
        let rows: Vec<(Id, String)> = measurement::Entity::find()
            .select_only()
            .columns([measurement::Column::Id, measurement::Column::Data])
            .filter(measurement::Column::Id.is_in(ids.to_vec()))
            .filter(scope.measurements("measurements", "id", "creator_id"))
            .into_tuple()
            .all(&self.db)
            .await?;
        Ok(rows.into_iter().collect())
    }

    /// The list columns of these measurements that `scope` sees, by id (those that no longer
    /// exist, or no longer are in view, are missing): one statement, whatever the number.
    pub async fn measurement_headers(
        &self,
        scope: &dyn Scope,
        ids: &[Id],
    ) -> StoreResult<HashMap<Id, measurement::Header>> {
        let rows: Vec<measurement::Header> = measurement::Entity::find()
            .filter(measurement::Column::Id.is_in(ids.to_vec()))
            .filter(scope.measurements("measurements", "id", "creator_id"))
            .into_partial_model()
            .all(&self.db)
            .await?;
        Ok(rows.into_iter().map(|h| (h.id, h)).collect())
    }

    /// A page of the measurements `viewer` may see, without their payloads (see
    /// [`measurement::Header`]).
    pub async fn list_measurement_headers(
        &self,
        viewer: &Viewer,
        spec: &ListSpec,
    ) -> StoreResult<(Vec<measurement::Header>, Option<u64>)> {
        let select = measurement::Entity::find().filter(viewer.measurements(
            "measurements",
            "id",
            "creator_id",
        ));
        self.partial_page(select, spec).await
    }

    /// Up to `limit` of `patient`'s measurements that `viewer` sees, oldest first by when they
    /// were taken (the phone's time, else the upload) and then by id, after `after` (the last
    /// row's time and id): a keyset page, so that reading a whole record costs the same per
    /// page however far it has gone.
    pub async fn measurement_headers_after(
        &self,
        viewer: &Viewer,
        patient: &Id,
        after: Option<(i64, Id)>,
        limit: u64,
    ) -> StoreResult<Vec<measurement::Header>> {
        use sea_orm::sea_query::{Alias, ExprTrait, Func, SimpleExpr};
        use sea_orm::{Condition, Order};
        let column = |c: measurement::Column| Expr::col((Alias::new("measurements"), c));
        let taken: SimpleExpr = Func::coalesce([
            SimpleExpr::from(column(measurement::Column::MeasurementTimestamp)),
            SimpleExpr::from(column(measurement::Column::CreationTimestamp)),
        ])
        .into();
        let id = column(measurement::Column::Id);
        let mut condition = Condition::all().add(measurement::Column::CreatorId.eq(*patient));
        if let Some((at, last)) = after {
            condition = condition.add(
                Condition::any().add(taken.clone().gt(at)).add(
                    Condition::all()
                        .add(taken.clone().eq(at))
                        .add(id.clone().gt(last)),
                ),
            );
        }
        let spec = ListSpec {
            condition,
            order: vec![(taken, Order::Asc), (id, Order::Asc)],
            limit,
            offset: 0,
            select: None,
            skip_count: true,
        };
        Ok(self.list_measurement_headers(viewer, &spec).await?.0)
    }
}

impl Reader {
    /// The number of measurements `scope` sees taken at or after `since` (epoch ms; all when
    /// none).
    pub async fn count_measurements_since(
        &self,
        scope: &dyn Scope,
        since: Option<i64>,
    ) -> StoreResult<u64> {
        let mut select = measurement::Entity::find().filter(scope.measurements(
            "measurements",
            "id",
            "creator_id",
        ));
        if let Some(since) = since {
            select = select.filter(measurement::Column::MeasurementTimestamp.gte(since));
        }
        Ok(select.count(&self.db).await?)
    }
}

impl Reader {
    /// Up to `limit` measurements that `scope` sees, taken at or after `since` (all when
    /// none), in id order after `after`: a batch of a run over all of them.
    pub async fn measurement_batch(
        &self,
        scope: &dyn Scope,
        since: Option<i64>,
        after: Option<Id>,
        limit: u64,
    ) -> StoreResult<Vec<measurement::Model>> {
        let mut select = measurement::Entity::find()
            .filter(scope.measurements("measurements", "id", "creator_id"))
            .order_by_asc(measurement::Column::Id)
            .limit(limit.max(1));
        if let Some(after) = after {
            select = select.filter(measurement::Column::Id.gt(after));
        }
        if let Some(since) = since {
            select = select.filter(measurement::Column::MeasurementTimestamp.gte(since));
        }
        Ok(select.all(&self.db).await?)
    }

    /// Measurement `id` as stored, if `scope` sees it.
    pub async fn scoped_measurement(
        &self,
        scope: &dyn Scope,
        id: &Id,
    ) -> StoreResult<Option<measurement::Model>> {
        Ok(measurement::Entity::find_by_id(*id)
            .filter(scope.measurements("measurements", "id", "creator_id"))
            .one(&self.db)
            .await?)
    }
}

impl Tx {
    /// Writes a re-analysis if the measurement is still as it was read; whether it was.
    pub async fn apply_rewrite(
        &self,
        current: &measurement::Model,
        rewrite: Rewrite,
    ) -> StoreResult<bool> {
        let now = self.now().max(current.update_timestamp + 1);
        let mut update = measurement::Entity::update_many()
            .col_expr(measurement::Column::Data, Expr::value(rewrite.data))
            .col_expr(measurement::Column::Status, Expr::value(rewrite.status))
            .col_expr(
                measurement::Column::Indicator,
                Expr::value(rewrite.indicator),
            )
            .col_expr(
                measurement::Column::HeartRate,
                Expr::value(rewrite.summary.heart_rate),
            )
            .col_expr(
                measurement::Column::Result,
                Expr::value(rewrite.summary.result.clone()),
            )
            .col_expr(
                measurement::Column::Summary,
                Expr::value(summary_text(&rewrite.summary)),
            )
            .col_expr(measurement::Column::UpdateTimestamp, Expr::value(now))
            .filter(measurement::Column::Id.eq(current.id))
            .filter(measurement::Column::Status.eq(current.status))
            .filter(measurement::Column::UpdateTimestamp.eq(current.update_timestamp));
        if rewrite.status != current.status {
            update = update.col_expr(
                measurement::Column::StatusChangedTimestamp,
                Expr::value(now),
            );
        }
        let applied = update.exec(&self.db).await?.rows_affected == 1;
        if applied {
            // A new result can rank it on the work list, or take it off.
            self.retally_work(&[current.creator_id]).await?;
        }
        Ok(applied)
    }

    /// Stores a measurement of `creator_id`, shared with the groups the creator is an active
    /// patient of.
    pub async fn create_measurement(
        &self,
        creator_id: &Id,
        new: NewMeasurement,
    ) -> StoreResult<MeasurementRecord> {
        let now = self.now();
        let id = Id::generate();
        let txn = self.db.begin().await?;
        let group_ids: Vec<Id> = patient_enlistment::Entity::find()
            .filter(patient_enlistment::Column::UserId.eq(creator_id))
            .filter(patient_enlistment::Column::ExpiryTimestamp.gt(now))
            .all(&txn)
            .await?
            .into_iter()
            .map(|e| e.group_id)
            .collect();
        let summary = Summary::of(&new.data);
        let conclusion = Conclusion::of(&new.data);
        let model = measurement::ActiveModel {
            id: Set(id),
            creator_id: Set(*creator_id),
            status: Set(new.status),
            summary: Set(Some(summary_text(&summary))),
            review_label: Set(conclusion.as_ref().map(|c| c.label.clone())),
            reviewer_id: Set(conclusion.as_ref().and_then(|c| c.reviewer)),
            review_timestamp: Set(conclusion.as_ref().and_then(|c| c.at)),
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
            measurement_id: Set(id),
            user_id: Set(*creator_id),
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
                    measurement_id: Set(id),
                    group_id: Set(*g),
                });
            measurement_group::Entity::insert_many(rows)
                .exec(&txn)
                .await?;
            super::group_tallies::count_shared(&txn, &unique_groups).await?;
        }
        replace_tags(&txn, &id, &new.tags).await?;
        // The analysis is the service's act, not the patient's: the patient is told too.
        let analysed = NewEvent {
            kind: EventKind::MeasurementAnalysed,
            patient_id: *creator_id,
            actor_id: None,
            measurement_id: Some(id),
            report_id: None,
            detail: model
                .result
                .clone()
                .unwrap_or_else(|| model.status.as_str().to_owned()),
        };
        let urgent =
            (model.indicator.as_deref() == Some(Indicator::Urgent.as_str())).then(|| NewEvent {
                kind: EventKind::ResultUrgent,
                ..analysed.clone()
            });
        write_event(&txn, now, analysed).await?;
        if let Some(urgent) = urgent {
            write_event(&txn, now, urgent).await?;
        }
        txn.commit().await?;
        if !unique_groups.is_empty() {
            // Shared with a group, it may wait in its staff's work lists.
            self.retally_work(&[*creator_id]).await?;
        }
        self.events_written();
        Ok(MeasurementRecord {
            measurement: model,
            user_ids: vec![*creator_id],
            group_ids: unique_groups,
        })
    }

    /// Applies a change, bumping `update_timestamp` (and `status_changed_timestamp` when the
    /// status changes). Fails with `Changed` if the measurement changed status meanwhile.
    pub async fn update_measurement(
        &self,
        current: &measurement::Model,
        change: MeasurementChange,
    ) -> StoreResult<measurement::Model> {
        let now = self.now().max(current.update_timestamp + 1);
        let txn = self.db.begin().await?;
        let status_changed = change.status != current.status;
        let summary = summary_text(&Summary::of(&change.data));
        let conclusion = Conclusion::of(&change.data);
        let mut update = measurement::Entity::update_many()
            .col_expr(measurement::Column::Summary, Expr::value(summary))
            .col_expr(
                measurement::Column::ReviewLabel,
                Expr::value(conclusion.as_ref().map(|c| c.label.clone())),
            )
            .col_expr(
                measurement::Column::ReviewerId,
                Expr::value(conclusion.as_ref().and_then(|c| c.reviewer)),
            )
            .col_expr(
                measurement::Column::ReviewTimestamp,
                Expr::value(conclusion.as_ref().and_then(|c| c.at)),
            )
            .col_expr(
                measurement::Column::Data,
                Expr::value(Value::Object(change.data).to_string()),
            )
            .col_expr(measurement::Column::Status, Expr::value(change.status))
            .col_expr(measurement::Column::UpdateTimestamp, Expr::value(now))
            .filter(measurement::Column::Id.eq(current.id))
            .filter(measurement::Column::Status.eq(current.status));
        if status_changed {
            update = update.col_expr(
                measurement::Column::StatusChangedTimestamp,
                Expr::value(now),
            );
        }
        if update.exec(&txn).await?.rows_affected == 0 {
            return Err(StoreError::Changed);
        }
        if let Some(tags) = &change.tags {
            replace_tags(&txn, &current.id, tags).await?;
        }
        let updated = measurement::Entity::find_by_id(current.id)
            .one(&txn)
            .await?
            .ok_or(StoreError::NotFound)?;
        txn.commit().await?;
        if status_changed {
            // Reviewed, it leaves the work lists; a review withdrawn puts it back.
            self.retally_work(&[current.creator_id]).await?;
        }
        Ok(updated)
    }
}
