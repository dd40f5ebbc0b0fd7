//! Tacho: a heart-rhythm measurement service. Patients record measurements with a phone app;
//! Tacho stores them, analyses them and turns them into reports, behind a JSON wire API, a
//! server-rendered portal and a Rust client SDK.
//!
//! The layers: [`routes`] (HTTP) decode a request and call an [`actions`] function (every
//! change a person can make, checked, written and audited once for both front doors) or a
//! read of [`store`] (the only place with queries); both rest on [`domain`] (framework-free
//! rules: ids, accounts, profiles, RQL); [`auth`] handles passwords and tokens.

pub mod actions;
pub mod analysis;
pub mod auth;
pub mod cli;
pub mod config;
pub mod demo;
pub mod domain;
pub mod erasure;
pub mod fhir;
pub mod file_cache;
pub mod i18n;
pub mod notify;
pub mod pdf;
pub mod reports;
pub mod routes;
pub mod scheduler;
pub mod startup;
pub mod storage;
pub mod store;
pub mod telemetry;
