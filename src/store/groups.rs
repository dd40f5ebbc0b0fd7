//! Groups: the care teams that connect patients with their physicians.

use sea_orm::{ActiveModelTrait, EntityTrait, QueryFilter, Set};

use super::entities::group;
use super::query::ListSpec;
use super::{Reader, StoreError, StoreResult, Tx, Viewer};
use crate::domain::id::Id;

/// A group to create.
#[derive(Debug, Clone)]
pub struct NewGroup {
    pub name: String,
    pub description: Option<String>,
}

impl Reader {
    /// The group with this id if `viewer` may see it.
    pub async fn visible_group(&self, viewer: &Viewer, id: &Id) -> StoreResult<group::Model> {
        group::Entity::find_by_id(*id)
            .filter(viewer.groups())
            .one(&self.db)
            .await?
            .ok_or(StoreError::NotFound)
    }

    /// The group with this name, whoever asks; the demo seed uses it to stay idempotent.
    pub async fn group_by_name(&self, name: &str) -> StoreResult<Option<group::Model>> {
        use sea_orm::ColumnTrait;
        Ok(group::Entity::find()
            .filter(group::Column::Name.eq(name))
            .one(&self.db)
            .await?)
    }

    /// Whether a group is named `name`, in any case: two groups of one name could not be told
    /// apart in a list, a form or a report.
    pub async fn group_name_taken(&self, name: &str) -> StoreResult<bool> {
        use sea_orm::sea_query::{Expr, ExprTrait, Func};
        use sea_orm::{PaginatorTrait, QuerySelect};
        let lower = Func::lower(Expr::col(group::Column::Name));
        Ok(group::Entity::find()
            .filter(Expr::expr(lower).eq(name.to_lowercase()))
            .limit(1)
            .count(&self.db)
            .await?
            > 0)
    }

    /// Every group `viewer` may see, as (id, name) by name: the choices of a form (one query,
    /// however many groups).
    pub async fn group_choices(&self, viewer: &Viewer) -> StoreResult<Vec<(Id, String)>> {
        use sea_orm::{QueryOrder, QuerySelect};
        Ok(group::Entity::find()
            .select_only()
            .columns([group::Column::Id, group::Column::Name])
            .filter(viewer.groups())
            .order_by_asc(group::Column::Name)
            .order_by_asc(group::Column::Id)
            .into_tuple()
            .all(&self.db)
            .await?)
    }

    /// A page of the groups `viewer` may see.
    pub async fn list_groups(
        &self,
        viewer: &Viewer,
        spec: &ListSpec,
    ) -> StoreResult<(Vec<group::Model>, Option<u64>)> {
        self.page(group::Entity::find().filter(viewer.groups()), spec)
            .await
    }
}

impl Tx {
    /// Creates a group.
    pub async fn create_group(&self, new: NewGroup) -> StoreResult<group::Model> {
        let now = self.now();
        Ok(group::ActiveModel {
            id: Set(Id::generate()),
            name: Set(new.name),
            description: Set(new.description),
            creation_timestamp: Set(now),
            update_timestamp: Set(now),
        }
        .insert(&self.db)
        .await?)
    }
}
