//! sea-orm entities, one module per table. Only the store uses them.

pub mod access_token;
pub mod group;
pub mod patient_enlistment;
pub mod profile;
pub mod refresh_token;
pub mod staff_enlistment;
pub mod user;
