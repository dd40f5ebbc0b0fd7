//! Groups: the care teams.

use super::{ActionResult, Actions, EntryExt, entry};
use crate::domain::group::GroupName;
use crate::store::entities::group;
use crate::store::{AdminTask, NewGroup, StoreError, Viewer};

impl Actions {
    /// Creates a group (administrators). `description` is parsed by
    /// [`crate::domain::group::parse_description`].
    pub async fn create_group(
        &self,
        viewer: &Viewer,
        name: GroupName,
        description: Option<String>,
    ) -> ActionResult<group::Model> {
        viewer
            .administer(AdminTask::CreateGroups)
            .map_err(StoreError::Denied)?;
        let store = self.store.begin().await?;
        let created = store
            .create_group(NewGroup {
                name: name.as_str().to_owned(),
                description,
            })
            .await?;
        store
            .commit(entry(viewer, "group.create", "group", &created.id).detail(&created.name))
            .await?;
        Ok(created)
    }
}
