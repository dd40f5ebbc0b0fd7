//! The patient list's order (last name, first name, id) as one index, `users_by_name`, in
//! place of `users_last_name`. With the last name alone the database read every patient of
//! the page's last names and sorted them by first name before it could stop at a page, so a
//! page cost more as more patients shared a name.

use sea_orm_migration::prelude::*;

use crate::columns::index;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum Users {
    Table,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_index(index(
                Users::Table,
                "users_by_name",
                &["last_name", "first_name", "id"],
                false,
            ))
            .await?;
        manager
            .drop_index(
                Index::drop()
                    .name("users_last_name")
                    .table(Users::Table)
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_index(index(
                Users::Table,
                "users_last_name",
                &["last_name"],
                false,
            ))
            .await?;
        manager
            .drop_index(
                Index::drop()
                    .name("users_by_name")
                    .table(Users::Table)
                    .to_owned(),
            )
            .await
    }
}
