//! `login_attempts`: failed logins in a row per (login, client network).

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "login_attempts")]
pub struct Model {
    /// SHA-256 (hex) of the normalised e-mail address tried.
    #[sea_orm(primary_key, auto_increment = false)]
    pub login_key: String,
    /// The client's network: `a.b.c.0/24` or an IPv6 /48.
    #[sea_orm(primary_key, auto_increment = false)]
    pub network: String,
    /// Attempts in a row that were not a success, the one in progress included.
    pub failures: i32,
    pub last_failed: Option<i64>,
    pub update_timestamp: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
