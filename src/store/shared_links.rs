//! Shared links of measurement reports: made, listed, looked up by the hash of their secret,
//! revoked. Every lookup reads the database, so a revocation or an expiry holds at once on
//! every instance.

use sea_orm::sea_query::Expr;
use sea_orm::{
    ActiveModelTrait, ActiveValue::Set, ColumnTrait, EntityTrait, QueryFilter, QueryOrder,
};

use super::entities::shared_link;
use super::{Store, StoreResult};
use crate::domain::id::Id;

/// A shared link to make.
#[derive(Debug, Clone)]
pub struct NewSharedLink {
    pub secret_hash: String,
    pub measurement_id: Id,
    pub file_id: Id,
    pub patient_id: Id,
    pub creator_id: Id,
    pub language: String,
    pub expires_at: i64,
}

impl Store {
    /// Records a shared link.
    pub async fn insert_shared_link(&self, new: NewSharedLink) -> StoreResult<shared_link::Model> {
        Ok(shared_link::ActiveModel {
            id: Set(Id::generate()),
            secret_hash: Set(new.secret_hash),
            measurement_id: Set(new.measurement_id),
            file_id: Set(new.file_id),
            patient_id: Set(new.patient_id),
            creator_id: Set(new.creator_id),
            language: Set(new.language),
            expires_at: Set(new.expires_at),
            revoked_at: Set(None),
            revoked_by: Set(None),
            creation_timestamp: Set(self.now()),
        }
        .insert(&self.db)
        .await?)
    }

    /// The links of a measurement, newest first (the caller has checked that its viewer sees
    /// the measurement).
    pub async fn shared_links_of(&self, measurement: &Id) -> StoreResult<Vec<shared_link::Model>> {
        Ok(shared_link::Entity::find()
            .filter(shared_link::Column::MeasurementId.eq(measurement))
            .order_by_desc(shared_link::Column::CreationTimestamp)
            .order_by_desc(shared_link::Column::Id)
            .all(&self.db)
            .await?)
    }

    /// The link whose secret has this hash, if it is open now.
    pub async fn open_shared_link(
        &self,
        secret_hash: &str,
    ) -> StoreResult<Option<shared_link::Model>> {
        let now = self.now();
        Ok(shared_link::Entity::find()
            .filter(shared_link::Column::SecretHash.eq(secret_hash))
            .one(&self.db)
            .await?
            .filter(|link| link.is_open(now)))
    }

    /// Revokes link `id` of `measurement`; false when there is no such link open.
    pub async fn revoke_shared_link(
        &self,
        measurement: &Id,
        id: &Id,
        by: &Id,
    ) -> StoreResult<bool> {
        let result = shared_link::Entity::update_many()
            .col_expr(shared_link::Column::RevokedAt, Expr::value(self.now()))
            .col_expr(shared_link::Column::RevokedBy, Expr::value(*by))
            .filter(shared_link::Column::Id.eq(id))
            .filter(shared_link::Column::MeasurementId.eq(measurement))
            .filter(shared_link::Column::RevokedAt.is_null())
            .exec(&self.db)
            .await?;
        Ok(result.rows_affected == 1)
    }

    /// The files of the report documents of a measurement.
    pub async fn files_of_measurement(&self, measurement: &Id) -> StoreResult<Vec<Id>> {
        use super::entities::measurement_report;
        let mut files: Vec<Id> = measurement_report::Entity::find()
            .filter(measurement_report::Column::MeasurementId.eq(*measurement))
            .all(&self.db)
            .await?
            .into_iter()
            .filter_map(|report| report.file_id)
            .collect();
        files.sort();
        files.dedup();
        Ok(files)
    }

    /// The patient a stored file is a report about, for the audit record of a download.
    pub async fn patient_of_file(&self, file: &Id) -> StoreResult<Option<Id>> {
        use super::entities::measurement_report;
        Ok(measurement_report::Entity::find()
            .filter(measurement_report::Column::FileId.eq(*file))
            .one(&self.db)
            .await?
            .map(|report| report.patient_id))
    }
}
