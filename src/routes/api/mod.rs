//! The JSON wire API: snake_case for auth, users, profiles, groups and reports; camelCase for `/data/v1`
//! and `/files/v1`.

pub mod auth;
pub mod error;
pub mod extract;
pub mod files;
pub mod groups;
pub mod health;
pub mod measurement_list;
pub mod measurement_reports;
pub mod measurements;
pub mod openapi;
pub mod page;
pub mod profiles;
pub mod reports;
pub mod users;
