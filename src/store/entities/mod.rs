//! sea-orm entities, one module per table. Only the store uses them.

pub mod access_token;
pub mod audit_event;
pub mod file;
pub mod file_blob;
pub mod group;
pub mod job;
pub mod login_attempt;
pub mod measurement;
pub mod measurement_group;
pub mod measurement_report;
pub mod measurement_tag;
pub mod measurement_user;
pub mod patient_enlistment;
pub mod profile;
pub mod refresh_token;
pub mod report;
pub mod secret;
pub mod session;
pub mod shared_link;
pub mod staff_enlistment;
mod text_columns;
pub mod user;
