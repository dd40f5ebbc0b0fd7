//! Framework-free domain logic: ids, account values, profiles and the RQL query language.

pub mod account;
pub mod audit;
pub mod clock;
pub mod consent;
pub mod country;
pub mod group;
pub mod id;
pub mod json;
pub mod measurement;
pub mod network;
pub mod notification;
pub mod payload;
pub mod periods;
pub mod person_name;
pub mod profile;
pub mod reanalysis;
pub mod recipients;
pub mod recording_limits;
pub mod rql;
pub mod time;
