//! Links of periodic reports: made, listed, looked up by the hash of their secret, revoked;
//! and their end when the access behind them ends. The same grant as a measurement report's
//! shared link (`shared_links.rs`), for a report a group's staff or its patient sees. Every
//! lookup reads the database, so a revocation or an expiry holds at once on every instance.

use sea_orm::sea_query::{Alias, Condition, Expr, ExprTrait, Query};
use sea_orm::{
    ActiveModelTrait, ActiveValue::Set, ColumnTrait, EntityTrait, QueryFilter, QueryOrder,
};

use super::entities::{report, report_link, staff_enlistment};
use super::shared_links::{is_admin, maker, maker_account};
use super::{Reader, Scope, StoreResult, Tx, Viewer};
use crate::domain::id::Id;

/// A report link to make.
#[derive(Debug, Clone)]
pub struct NewReportLink {
    pub secret_hash: String,
    pub report_id: Id,
    pub file_id: Id,
    pub patient_id: Id,
    pub creator_id: Id,
    pub language: String,
    pub expires_at: i64,
}

/// The reports `viewer` sees (ids), for conditions on the links that hang off them.
fn reports_seen_by(viewer: &Viewer) -> sea_orm::sea_query::SelectStatement {
    Query::select()
        .column((report::Entity, report::Column::Id))
        .from(report::Entity)
        .cond_where(viewer.periodic_reports())
        .to_owned()
}

impl Reader {
    /// The links of periodic report `report`, newest first, if `viewer` sees it.
    pub async fn report_links_of(
        &self,
        viewer: &Viewer,
        report: &Id,
    ) -> StoreResult<Vec<report_link::Model>> {
        Ok(report_link::Entity::find()
            .filter(report_link::Column::ReportId.eq(*report))
            .filter(report_link::Column::ReportId.in_subquery(reports_seen_by(viewer)))
            .order_by_desc(report_link::Column::CreationTimestamp)
            .order_by_desc(report_link::Column::Id)
            .all(&self.db)
            .await?)
    }

    /// The report link whose secret has this hash, if it is open now: not revoked, not
    /// expired, and its maker still active and still seeing its report (a link grants no more
    /// than its maker has, and ends when the maker's access does).
    pub async fn open_report_link(
        &self,
        secret_hash: &str,
    ) -> StoreResult<Option<report_link::Model>> {
        let now = self.now();
        Ok(report_link::Entity::find()
            .filter(report_link::Column::SecretHash.eq(secret_hash))
            .filter(maker_still_sees())
            .one(&self.db)
            .await?
            .filter(|link| link.is_open(now)))
    }
}

/// Whether the maker of the `report_links` row is active and still sees its report: the
/// patient itself, an administrator, or staff of the group the report was made for.
fn maker_still_sees() -> Condition {
    let maker = || maker("report_links");
    let in_group = Query::select()
        .expr(Expr::val(1))
        .from(report::Entity)
        .inner_join(
            staff_enlistment::Entity,
            Expr::col((staff_enlistment::Entity, staff_enlistment::Column::GroupId))
                .equals((report::Entity, report::Column::GroupId)),
        )
        .and_where(
            Expr::col((report::Entity, report::Column::Id))
                .equals((Alias::new("report_links"), Alias::new("report_id"))),
        )
        .and_where(
            Expr::col((staff_enlistment::Entity, staff_enlistment::Column::UserId)).eq(maker()),
        )
        .to_owned();
    Condition::all()
        .add(maker_account("report_links", Expr::val(1).eq(1)))
        .add(
            Condition::any()
                .add(maker().eq(Expr::col((
                    Alias::new("report_links"),
                    Alias::new("patient_id"),
                ))))
                .add(maker_account("report_links", is_admin()))
                .add(Expr::exists(in_group)),
        )
}

impl Tx {
    /// Records a report link.
    pub async fn insert_report_link(&self, new: NewReportLink) -> StoreResult<report_link::Model> {
        Ok(report_link::ActiveModel {
            id: Set(Id::generate()),
            secret_hash: Set(new.secret_hash),
            report_id: Set(new.report_id),
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

    /// Revokes link `id` of report `report`; false when there is no such link open.
    pub async fn revoke_report_link(&self, report: &Id, id: &Id, by: &Id) -> StoreResult<bool> {
        let result = report_link::Entity::update_many()
            .col_expr(report_link::Column::RevokedAt, Expr::value(self.now()))
            .col_expr(report_link::Column::RevokedBy, Expr::value(*by))
            .filter(report_link::Column::Id.eq(id))
            .filter(report_link::Column::ReportId.eq(report))
            .filter(report_link::Column::RevokedAt.is_null())
            .exec(&self.db)
            .await?;
        Ok(result.rows_affected == 1)
    }

    /// Revokes (by `by`) the open links `user` made to the reports of group `group`, once it
    /// has left that group's staff. Returns how many.
    pub(super) async fn end_staff_report_links(
        &self,
        user: &Viewer,
        group: &Id,
        by: &Id,
    ) -> StoreResult<u64> {
        if user.admin {
            // An administrator still sees every report.
            return Ok(0);
        }
        let lost = Query::select()
            .column((report::Entity, report::Column::Id))
            .from(report::Entity)
            .and_where(Expr::col((report::Entity, report::Column::GroupId)).eq(*group))
            .cond_where(user.periodic_reports().not())
            .to_owned();
        Ok(report_link::Entity::update_many()
            .col_expr(report_link::Column::RevokedAt, Expr::value(self.now()))
            .col_expr(report_link::Column::RevokedBy, Expr::value(*by))
            .filter(report_link::Column::CreatorId.eq(user.user_id))
            .filter(report_link::Column::RevokedAt.is_null())
            .filter(report_link::Column::ReportId.in_subquery(lost))
            .exec(&self.db)
            .await?
            .rows_affected)
    }

    /// Revokes (by `by`) the open links the staff of group `group` made to `patient`'s
    /// reports for that group, once the patient's prescription there ends or is shortened.
    /// Returns how many.
    pub(super) async fn end_prescription_report_links(
        &self,
        patient: &Id,
        group: &Id,
        by: &Id,
    ) -> StoreResult<u64> {
        let reports = Query::select()
            .column((report::Entity, report::Column::Id))
            .from(report::Entity)
            .and_where(Expr::col((report::Entity, report::Column::UserId)).eq(*patient))
            .and_where(Expr::col((report::Entity, report::Column::GroupId)).eq(*group))
            .to_owned();
        let staff = Query::select()
            .column((staff_enlistment::Entity, staff_enlistment::Column::UserId))
            .from(staff_enlistment::Entity)
            .and_where(
                Expr::col((staff_enlistment::Entity, staff_enlistment::Column::GroupId)).eq(*group),
            )
            .to_owned();
        Ok(report_link::Entity::update_many()
            .col_expr(report_link::Column::RevokedAt, Expr::value(self.now()))
            .col_expr(report_link::Column::RevokedBy, Expr::value(*by))
            .filter(report_link::Column::PatientId.eq(*patient))
            .filter(report_link::Column::CreatorId.ne(*patient))
            .filter(report_link::Column::CreatorId.in_subquery(staff))
            .filter(report_link::Column::RevokedAt.is_null())
            .filter(report_link::Column::ReportId.in_subquery(reports))
            .exec(&self.db)
            .await?
            .rows_affected)
    }
}
