//! Profiles: one JSON document per user, merged on update, with indexed copies of the fields
//! clients filter on.

use sea_orm::{ActiveModelTrait, Condition, EntityTrait, QueryFilter, Set};
use serde_json::{Map, Value};

use super::entities::profile;
use super::query::ListSpec;
use super::{Reader, Scope, StoreResult, Tx, Viewer};
use crate::domain::id::Id;
use crate::domain::profile::{ProfilePatch, indexed_fields};

impl Reader {
    /// A page of the profiles `viewer` may see.
    pub async fn list_profiles(
        &self,
        viewer: &Viewer,
        spec: &ListSpec,
    ) -> StoreResult<(Vec<profile::Model>, Option<u64>)> {
        self.page(
            profile::Entity::find().filter(viewer.users("profiles", "id", self.now())),
            spec,
        )
        .await
    }

    /// The profile of user `id` if `scope` may see it.
    pub async fn visible_profile(
        &self,
        scope: &dyn Scope,
        id: &Id,
    ) -> StoreResult<Option<profile::Model>> {
        Ok(profile::Entity::find_by_id(*id)
            .filter(scope.users("profiles", "id", self.now()))
            .one(&self.db)
            .await?)
    }
}

impl Tx {
    /// Merges `patch` into every profile that matches `condition` and that `viewer` may see
    /// (who may see a profile may update it). Returns the ids of those updated.
    pub async fn update_profiles(
        &self,
        viewer: &Viewer,
        condition: Condition,
        patch: &ProfilePatch,
    ) -> StoreResult<Vec<Id>> {
        let now = self.now();
        let txn = self.db.begin().await?;
        let matching = profile::Entity::find()
            .filter(viewer.users("profiles", "id", self.now()))
            .filter(condition)
            .all(&txn)
            .await?;
        let mut ids = Vec::with_capacity(matching.len());
        for stored in matching {
            ids.push(stored.id);
            let mut document: Map<String, Value> = match stored.data.clone() {
                Value::Object(map) => map,
                _ => Map::new(),
            };
            patch.apply_to(&mut document);
            let indexed = indexed_fields(&document);
            let mut model: profile::ActiveModel = stored.into();
            model.data = Set(Value::Object(document));
            model.country = Set(indexed.country);
            model.city = Set(indexed.city);
            model.physician = Set(indexed.physician);
            model.gender = Set(indexed.gender);
            model.update_timestamp = Set(now);
            model.update(&txn).await?;
        }
        txn.commit().await?;
        Ok(ids)
    }
}
