//! `users`: accounts, with login-failure counters.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "users")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: String,
    pub email: String,
    pub password_hash: String,
    pub first_name: String,
    pub last_name: String,
    pub phone_number: Option<String>,
    pub language: String,
    pub time_zone: String,
    pub activation: bool,
    pub roles: Json,
    pub profile_image: Option<String>,
    pub failed_count: i32,
    pub last_failed_timestamp: Option<i64>,
    pub creation_timestamp: i64,
    pub update_timestamp: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}

impl Model {
    /// Global role names held by the user.
    pub fn role_names(&self) -> Vec<String> {
        serde_json::from_value(self.roles.clone()).unwrap_or_default()
    }

    /// Whether the user holds the `admin` role.
    pub fn is_admin(&self) -> bool {
        self.roles
            .as_array()
            .is_some_and(|roles| roles.iter().any(|r| r == "admin"))
    }
}
