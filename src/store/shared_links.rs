//! Shared links of measurement reports: made, listed, looked up by the hash of their secret,
//! revoked; and the end of what links and app tokens granted when the access behind them ends.
//! Every lookup reads the database, so a revocation or an expiry holds at once on every
//! instance.

use sea_orm::sea_query::{Alias, Condition, Expr, ExprTrait, Query, SelectStatement};
use sea_orm::{
    ActiveModelTrait, ActiveValue::Set, ColumnTrait, EntityTrait, QueryFilter, QueryOrder,
};

use super::entities::{
    file, measurement, measurement_group, measurement_report, shared_link, staff_enlistment, user,
};
use super::{Reader, Scope, StoreResult, Tx, Viewer};
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

impl Reader {
    /// The links of measurement `measurement`, newest first, if `viewer` sees it.
    pub async fn shared_links_of(
        &self,
        viewer: &Viewer,
        measurement: &Id,
    ) -> StoreResult<Vec<shared_link::Model>> {
        Ok(shared_link::Entity::find()
            .filter(shared_link::Column::MeasurementId.eq(*measurement))
            .filter(viewer.measurements("shared_links", "measurement_id", "patient_id"))
            .order_by_desc(shared_link::Column::CreationTimestamp)
            .order_by_desc(shared_link::Column::Id)
            .all(&self.db)
            .await?)
    }

    /// The link whose secret has this hash, if it is open now: not revoked, not expired, and
    /// its maker still active and still seeing its measurement (a link grants no more than
    /// its maker has, and ends when the maker's access does).
    pub async fn open_shared_link(
        &self,
        secret_hash: &str,
    ) -> StoreResult<Option<shared_link::Model>> {
        let now = self.now();
        Ok(shared_link::Entity::find()
            .filter(shared_link::Column::SecretHash.eq(secret_hash))
            .filter(maker_still_sees())
            .one(&self.db)
            .await?
            .filter(|link| link.is_open(now)))
    }

    /// The files of the report documents of measurement `measurement`, if `viewer` sees it.
    pub async fn files_of_measurement(
        &self,
        viewer: &Viewer,
        measurement: &Id,
    ) -> StoreResult<Vec<Id>> {
        let mut files: Vec<Id> = measurement_report::Entity::find()
            .filter(measurement_report::Column::MeasurementId.eq(*measurement))
            .filter(viewer.measurements("measurement_reports", "measurement_id", "patient_id"))
            .all(&self.db)
            .await?
            .into_iter()
            .filter_map(|report| report.file_id)
            .collect();
        files.sort();
        files.dedup();
        Ok(files)
    }
}

/// The measurements (ids) shared with `group`.
fn shared_with(group: &Id) -> SelectStatement {
    Query::select()
        .column((
            measurement_group::Entity,
            measurement_group::Column::MeasurementId,
        ))
        .from(measurement_group::Entity)
        .and_where(
            Expr::col((
                measurement_group::Entity,
                measurement_group::Column::GroupId,
            ))
            .eq(*group),
        )
        .to_owned()
}

/// A row when the measurement in `measurement` is shared with `group`: one index entry probed
/// per measurement. `IN` over [`shared_with`] would first list every measurement of the
/// group (100,000 in a large clinic) to test a patient's few.
fn is_shared_with(group: &Id, measurement: Expr) -> Expr {
    Expr::exists(
        Query::select()
            .expr(Expr::val(1))
            .from(measurement_group::Entity)
            .and_where(
                Expr::col((
                    measurement_group::Entity,
                    measurement_group::Column::MeasurementId,
                ))
                .eq(measurement),
            )
            .and_where(
                Expr::col((
                    measurement_group::Entity,
                    measurement_group::Column::GroupId,
                ))
                .eq(*group),
            )
            .to_owned(),
    )
}

/// The maker of a link in `table` (its `creator_id`).
pub(super) fn maker(table: &str) -> Expr {
    Expr::col((Alias::new(table), Alias::new("creator_id")))
}

/// Whether the maker of a link in `table` is active and `extra` holds of its account; with
/// [`is_admin`], whether it is an active administrator.
pub(super) fn maker_account(table: &str, extra: Expr) -> Condition {
    let account = Query::select()
        .expr(Expr::val(1))
        .from(user::Entity)
        .and_where(Expr::col((user::Entity, user::Column::Id)).eq(maker(table)))
        .and_where(Expr::col((user::Entity, user::Column::Activation)).eq(true))
        .and_where(extra)
        .to_owned();
    Condition::all().add(Expr::exists(account))
}

/// An account with the administrator's role.
pub(super) fn is_admin() -> Expr {
    Expr::cust("CAST(users.roles AS TEXT) LIKE '%\"admin\"%'")
}

/// Whether the maker of the `shared_links` row is active and still sees its measurement:
/// the patient itself, an administrator, or staff of a group the measurement is shared with.
fn maker_still_sees() -> Condition {
    let maker = || maker("shared_links");
    let staff_groups = Query::select()
        .column((staff_enlistment::Entity, staff_enlistment::Column::GroupId))
        .from(staff_enlistment::Entity)
        .and_where(
            Expr::col((staff_enlistment::Entity, staff_enlistment::Column::UserId)).eq(maker()),
        )
        .to_owned();
    let shared = Query::select()
        .column((
            measurement_group::Entity,
            measurement_group::Column::MeasurementId,
        ))
        .from(measurement_group::Entity)
        .and_where(
            Expr::col((
                measurement_group::Entity,
                measurement_group::Column::GroupId,
            ))
            .in_subquery(staff_groups),
        )
        .to_owned();
    Condition::all()
        .add(maker_account("shared_links", Expr::val(1).eq(1)))
        .add(
            Condition::any()
                .add(maker().eq(Expr::col((
                    Alias::new("shared_links"),
                    Alias::new("patient_id"),
                ))))
                .add(maker_account("shared_links", is_admin()))
                .add(
                    Expr::col((Alias::new("shared_links"), Alias::new("measurement_id")))
                        .in_subquery(shared),
                ),
        )
}

impl Tx {
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

    /// Ends what `user` held through group `group` once it has left that group's staff:
    /// its open links to measurements shared with the group that it no longer sees, and to
    /// the group's periodic reports, are revoked (by `by`), and the report files of those measurements get new tokens, so that
    /// a `readFileToken` it copied opens nothing. Runs in the action's transaction, after the
    /// removal. Returns how many links and files.
    pub async fn end_staff_grants(
        &self,
        user: &Viewer,
        group: &Id,
        by: &Id,
    ) -> StoreResult<(u64, u64)> {
        let lost = Query::select()
            .column((measurement::Entity, measurement::Column::Id))
            .from(measurement::Entity)
            .and_where(
                Expr::col((measurement::Entity, measurement::Column::Id))
                    .in_subquery(shared_with(group)),
            )
            .cond_where(user.measurements("measurements", "id", "creator_id").not())
            .to_owned();
        let links = shared_link::Entity::update_many()
            .col_expr(shared_link::Column::RevokedAt, Expr::value(self.now()))
            .col_expr(shared_link::Column::RevokedBy, Expr::value(*by))
            .filter(shared_link::Column::CreatorId.eq(user.user_id))
            .filter(shared_link::Column::RevokedAt.is_null())
            .filter(shared_link::Column::MeasurementId.in_subquery(lost.clone()))
            .exec(&self.db)
            .await?
            .rows_affected;
        let files = self.rotate_report_files(lost).await?;
        let report_links = self.end_staff_report_links(user, group, by).await?;
        Ok((links + report_links, files))
    }

    /// Ends what group `group` held on `patient`'s measurements once the patient's
    /// prescription there ends or is shortened: open links that the group's staff made to
    /// the patient's measurements shared with the group, and to the patient's reports made
    /// for the group, are revoked (by `by`), and the report
    /// files of those measurements get new tokens. Returns how many links and files.
    pub async fn end_prescription_grants(
        &self,
        patient: &Id,
        group: &Id,
        by: &Id,
    ) -> StoreResult<(u64, u64)> {
        let shared = Query::select()
            .column((measurement::Entity, measurement::Column::Id))
            .from(measurement::Entity)
            .and_where(
                Expr::col((measurement::Entity, measurement::Column::CreatorId)).eq(*patient),
            )
            .and_where(is_shared_with(
                group,
                Expr::col((measurement::Entity, measurement::Column::Id)),
            ))
            .to_owned();
        let staff = Query::select()
            .column((staff_enlistment::Entity, staff_enlistment::Column::UserId))
            .from(staff_enlistment::Entity)
            .and_where(
                Expr::col((staff_enlistment::Entity, staff_enlistment::Column::GroupId)).eq(*group),
            )
            .to_owned();
        let links = shared_link::Entity::update_many()
            .col_expr(shared_link::Column::RevokedAt, Expr::value(self.now()))
            .col_expr(shared_link::Column::RevokedBy, Expr::value(*by))
            .filter(shared_link::Column::PatientId.eq(*patient))
            .filter(shared_link::Column::CreatorId.ne(*patient))
            .filter(shared_link::Column::CreatorId.in_subquery(staff))
            .filter(shared_link::Column::RevokedAt.is_null())
            .filter(shared_link::Column::MeasurementId.in_subquery(shared.clone()))
            .exec(&self.db)
            .await?
            .rows_affected;
        let files = self.rotate_report_files(shared).await?;
        let report_links = self
            .end_prescription_report_links(patient, group, by)
            .await?;
        Ok((links + report_links, files))
    }

    /// Moves every file of the report documents of the measurements `measurements` selects
    /// to a new token version (see [`Store::rotate_file_secret`]); returns how many.
    async fn rotate_report_files(&self, measurements: SelectStatement) -> StoreResult<u64> {
        let files = Query::select()
            .column((
                measurement_report::Entity,
                measurement_report::Column::FileId,
            ))
            .from(measurement_report::Entity)
            .and_where(
                Expr::col((
                    measurement_report::Entity,
                    measurement_report::Column::MeasurementId,
                ))
                .in_subquery(measurements),
            )
            .to_owned();
        let result = file::Entity::update_many()
            .col_expr(
                file::Column::TokenVersion,
                Expr::col(file::Column::TokenVersion).add(1),
            )
            .col_expr(file::Column::LegacySecretHash, Expr::value(""))
            .filter(file::Column::Id.in_subquery(files))
            .exec(&self.db)
            .await?;
        Ok(result.rows_affected)
    }
}
