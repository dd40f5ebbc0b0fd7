//! The integration suite: the real server on port 0 against a fresh database per test
//! (SQLite by default; PostgreSQL when `TEST_DATABASE_URL` is set).

mod access_gate;
mod access_matrix;
mod accounts;
mod actions;
mod analysis_stress;
mod analysis_validation;
mod analysis_wire;
mod audit;
mod auth;
mod authorization;
mod bounds;
mod browser;
mod cli;
mod client;
mod errors;
mod faults;
mod files;
mod groups;
mod health;
mod helpers;
mod jobs;
mod js_sdk;
mod limits;
mod measurement_reports;
mod measurements;
mod metrics;
mod notifications;
mod portal;
mod portal_authorization;
mod profiles;
mod reports;
mod rql;
mod shared_links;
mod storage;
mod users;
