//! `users`: accounts, with login-failure counters.

use sea_orm::entity::prelude::*;

use crate::domain::id::Id;

#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "users")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: Id,
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
    /// Someone else chose the password (an administrator created the account): the portal
    /// asks for the user's own before anything else. Cleared when the password changes.
    pub password_change_due: bool,
    /// An administrator's legal hold: while set, the account is neither erased nor touched
    /// by retention.
    pub legal_hold: bool,
    /// When the account was erased: the row is then a tombstone, kept so the audit trail's
    /// ids still name an account, with no name, address, e-mail or phone.
    pub erased_timestamp: Option<i64>,
    /// When the account was last deactivated (retention counts from it); `None` while active.
    pub deactivation_timestamp: Option<i64>,
    pub creation_timestamp: i64,
    pub update_timestamp: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}

impl Model {
    /// The full name, in the order its script implies (see `domain::person_name`).
    pub fn full_name(&self) -> String {
        crate::domain::person_name::full_name(&self.first_name, &self.last_name)
    }

    /// Global role names held by the user. Stored roles that are not a list of names are a
    /// fault of the database, never an empty list: that would quietly take an
    /// administrator's role away at its next change.
    pub fn role_names(&self) -> Result<Vec<String>, DbErr> {
        role_names(&self.roles)
    }

    /// Whether the user holds the `admin` role.
    pub fn is_admin(&self) -> bool {
        self.roles
            .as_array()
            .is_some_and(|roles| roles.iter().any(|r| r == "admin"))
    }
}

/// A stored list of role names (global, or within a group).
pub fn role_names(roles: &Json) -> Result<Vec<String>, DbErr> {
    serde_json::from_value(roles.clone())
        .map_err(|_| DbErr::Custom("a stored role list is not a list of names".into()))
}
