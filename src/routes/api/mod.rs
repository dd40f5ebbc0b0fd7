//! The JSON wire API (contract dialects: snake_case for auth/users/profiles/groups).

pub mod auth;
pub mod error;
pub mod extract;
pub mod groups;
pub mod health;
pub mod openapi;
pub mod page;
pub mod profiles;
pub mod resources;
pub mod users;
