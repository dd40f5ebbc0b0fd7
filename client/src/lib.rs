//! # tacho-client
//!
//! An async client for Tacho, the heart-rhythm measurement service: log
//! in, keep the access token fresh, read the user record, keep the profile current, store and
//! annotate measurements, and get their PDF reports and the periodic reports.
//!
//! ```no_run
//! use tacho_client::{Client, Profile, ServiceInfo, AppInfo};
//!
//! # async fn run() -> Result<(), tacho_client::Error> {
//! let client = Client::login("http://127.0.0.1:8080", "anna@tacho.test", "tacho-demo").await?;
//! let me = client.me().await?;
//! println!("hello {} ({}, {})", me.first_name, me.language, me.time_zone);
//!
//! // Keep the profile current after every login.
//! let app = AppInfo { version: Some("3.5.0".into()) };
//! let service_info = ServiceInfo { app: Some(app), ..ServiceInfo::default() };
//! client.update_profile(&Profile { service_info: Some(service_info), ..Profile::default() }).await?;
//!
//! // Store a measurement and get the URL of its PDF report (made when needed).
//! let payload = serde_json::json!({"measurement_timestamp": 1795689000000_i64, "heartrate": 72});
//! let measurement = client.post_measurement(&payload).await?;
//! let url = client.get_measurement_report_url(&measurement.id).await?;
//! println!("report: {url}");
//! # Ok(()) }
//! ```
//!
//! ## Operations
//!
//! | operation | wire call |
//! |---|---|
//! | [`Client::login`], [`Client::with_tokens`] | `POST /auth/v2/oauth2/tokens` (password and refresh grants) |
//! | [`Client::me`] | `GET /users/v1/me` |
//! | [`Client::update_profile`], [`Client::profile`] | `PUT /profiles/v1?id=…`, `GET /profiles/v1/<id>` |
//! | [`Client::post_measurement`], [`Client::get_measurement`], [`Client::update_measurement`] | `/data/v1/measurements/documents` |
//! | [`Client::get_measurement_report_url`], [`Client::measurement_report`] | `GET` then, when needed, `POST /data/v1/measurement-reports/documents` |
//! | [`Client::get_periodic_reports`] | `GET /reports/v1?sort(-creation_timestamp)&user_id=…` |
//! | [`Client::get_periodic_report_pdf`] | `GET /reports/v1/<id>/pdf?language=…&time_zone=…` |
//! | [`Client::fhir_everything`], [`Client::fhir_diagnostic_reports`], [`Client::fhir_attachment`] | `GET /fhir/R4/Patient/<id>/$everything`, `GET /fhir/R4/DiagnosticReport?patient=…`, `GET /fhir/R4/Binary/<id>` ([`fhir`]) |
//!
//! ## Tokens
//!
//! The client refreshes the access token 30 seconds before it expires and, once per call,
//! when the server refuses it as expired (118) or unknown (117). Refresh tokens rotate: read
//! the latest ones with [`Client::tokens`] (or be told with [`Client::on_tokens_refreshed`]) and
//! persist them; [`Client::with_tokens`] resumes.
//!
//! ## Errors
//!
//! Every failure is an [`Error`]: [`Error::Api`] carries the server's error envelope (`code`,
//! `name`, `message`; see [`codes`]), [`Error::Transport`] a failure below HTTP.
//!
//! ```no_run
//! use tacho_client::{Error, codes};
//! # async fn run(client: tacho_client::Client) {
//! match client.get_measurement("0123456789abcdef01234567").await {
//!     Ok(measurement) => println!("{}", measurement.status),
//!     Err(Error::Api(refused)) if refused.code == codes::RESOURCE_UNKNOWN => println!("no such measurement"),
//!     Err(Error::Transport(e)) => println!("offline? {e}"),
//!     Err(other) => println!("{other}"),
//! }
//! # }
//! ```
//!
//! Enumerated wire values (activity, comorbidities, statuses, triggers, …) are Rust enums with
//! an `Other(String)` variant, so values added by a newer server are kept, not rejected.

#![warn(missing_docs)]

/// The README's example, compiled as a doctest.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctest;

mod client;
mod enums;
mod error;
pub mod fhir;
mod measurement;
mod page;
mod profile;
mod report;
mod tokens;
mod user;

pub use client::Client;
pub use error::{ApiError, Error, FhirError, FhirIssue, codes};
pub use measurement::{
    AnalysisResult, Indicator, Measurement, MeasurementStatus, MeasurementUpdate, ResultKey,
};
pub use page::Page;
pub use profile::{
    Activity, AppInfo, Birthday, Comorbidity, DeviceInfo, DeviceType, Gender, Impediment, Profile,
    ServiceInfo, StoredProfile,
};
pub use report::{
    MeasurementReport, MeasurementReportData, PeriodMeasurement, PeriodicReport,
    PeriodicReportData, ReportStatus, Trigger,
};
pub use tokens::Tokens;
pub use user::{PatientEnlistment, StaffEnlistment, User};
