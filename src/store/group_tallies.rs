//! Kept tallies of what each group is shared: how many measurements name it in
//! `measurement_groups`. A physician of one group sees its own measurements and the group's,
//! so the measurement list's exact total reads one tally instead of counting the group's
//! rows, which grew with the clinic.
//!
//! A measurement's groups are written once, when it is stored ([`count_shared`], in its
//! transaction), and deleted with it ([`Tx::recount_groups`], in the erasure's).

use sea_orm::sea_query::{Expr, OnConflict};
use sea_orm::{
    ActiveValue::Set, ColumnTrait, ConnectionTrait, EntityTrait, ExprTrait, PaginatorTrait,
    QueryFilter, QuerySelect,
};

use super::entities::{group_tally, measurement_group};
use super::{Reader, StoreResult, Tx};
use crate::domain::id::Id;

/// Counts one more measurement shared with each of `groups`, in the transaction that shares
/// it.
pub(super) async fn count_shared<C: ConnectionTrait>(db: &C, groups: &[Id]) -> StoreResult<()> {
    if groups.is_empty() {
        return Ok(());
    }
    let rows = groups.iter().map(|g| group_tally::ActiveModel {
        group_id: Set(*g),
        measurements: Set(1),
    });
    group_tally::Entity::insert_many(rows)
        .on_conflict(
            OnConflict::column(group_tally::Column::GroupId)
                .value(
                    group_tally::Column::Measurements,
                    Expr::col((group_tally::Entity, group_tally::Column::Measurements)).add(1),
                )
                .to_owned(),
        )
        .exec(db)
        .await?;
    Ok(())
}

impl Reader {
    /// How many measurements are shared with `group`.
    pub(super) async fn measurements_shared_with(&self, group: &Id) -> StoreResult<u64> {
        let counted: Option<i64> = group_tally::Entity::find_by_id(*group)
            .select_only()
            .column(group_tally::Column::Measurements)
            .into_tuple()
            .one(&self.db)
            .await?;
        Ok(counted.map_or(0, |n| u64::try_from(n).unwrap_or(0)))
    }

    /// The groups that measurements `ids` are shared with.
    pub(super) async fn groups_of_measurements(
        &self,
        ids: impl IntoIterator<Item = Id>,
    ) -> StoreResult<Vec<Id>> {
        Ok(measurement_group::Entity::find()
            .select_only()
            .column(measurement_group::Column::GroupId)
            .distinct()
            .filter(measurement_group::Column::MeasurementId.is_in(ids))
            .into_tuple()
            .all(&self.db)
            .await?)
    }
}

impl Tx {
    /// Counts again, from `measurement_groups`, the tallies of `groups` (after measurements
    /// shared with them were deleted).
    pub(super) async fn recount_groups(&self, groups: &[Id]) -> StoreResult<()> {
        for group in groups {
            let counted = measurement_group::Entity::find()
                .filter(measurement_group::Column::GroupId.eq(*group))
                .count(&self.db)
                .await?;
            group_tally::Entity::update_many()
                .col_expr(
                    group_tally::Column::Measurements,
                    Expr::value(i64::try_from(counted).unwrap_or(i64::MAX)),
                )
                .filter(group_tally::Column::GroupId.eq(*group))
                .exec(&self.db)
                .await?;
        }
        Ok(())
    }
}
