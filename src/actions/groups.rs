//! Groups: the care teams.

use super::{ActionError, ActionResult, Actions, EntryExt, done, entry};
use crate::domain::group::GroupName;
use crate::store::AuditAction;
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
        self.act(async |tx| {
            if tx.group_name_taken(name.as_str()).await? {
                return Err(ActionError::invalid(
                    "name is already the name of another group",
                    "admin-group-name-used",
                ));
            }
            let created = tx
                .create_group(NewGroup {
                    name: name.as_str().to_owned(),
                    description,
                })
                .await?;
            let record =
                entry(viewer, AuditAction::GroupCreate, "group", &created.id).detail(&created.name);
            done(created, record)
        })
        .await
    }
}
