//! The authenticated user's record (`GET /users/v1/me`).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// The record of a user, as `/users/v1/me` answers it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct User {
    /// The user id (24 hex characters).
    pub id: String,
    /// Given name.
    pub first_name: String,
    /// Family name.
    pub last_name: String,
    /// Upper-case language code, e.g. `EN`; reports are rendered in it.
    pub language: String,
    /// IANA time zone, e.g. `Europe/Brussels`; reports show times in it.
    pub time_zone: String,
    /// E-mail address, lower-case.
    pub email: String,
    /// Phone number, when one is set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phone_number: Option<String>,
    /// Whether the account may log in.
    pub activation: bool,
    /// Global roles; `admin` marks an administrator.
    #[serde(default)]
    pub roles: Vec<String>,
    /// Prescriptions: the groups the user is a patient of.
    #[serde(default)]
    pub patient_enlistments: Vec<PatientEnlistment>,
    /// The groups the user is staff (a physician) of.
    #[serde(default)]
    pub staff_enlistments: Vec<StaffEnlistment>,
    /// When the last failed login happened.
    #[serde(
        default,
        with = "chrono::serde::ts_milliseconds_option",
        skip_serializing_if = "Option::is_none"
    )]
    pub last_failed_timestamp: Option<DateTime<Utc>>,
    /// Failed logins in a row.
    #[serde(default)]
    pub failed_count: u32,
    /// When the account was made.
    #[serde(with = "chrono::serde::ts_milliseconds")]
    pub creation_timestamp: DateTime<Utc>,
    /// When the record last changed.
    #[serde(with = "chrono::serde::ts_milliseconds")]
    pub update_timestamp: DateTime<Utc>,
    /// Address of a profile image, when one is set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile_image: Option<String>,
}

impl User {
    /// The report language to ask for: the user's language in lower case (`en`, `nl`, …).
    pub fn report_language(&self) -> String {
        self.language.to_ascii_lowercase()
    }
}

/// A patient's membership of a group: a prescription from its creation to its expiry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PatientEnlistment {
    /// The group.
    pub group_id: String,
    /// When the prescription ends.
    #[serde(with = "chrono::serde::ts_milliseconds")]
    pub expiry_timestamp: DateTime<Utc>,
    /// Whether it has ended.
    pub expired: bool,
    /// When it started.
    #[serde(with = "chrono::serde::ts_milliseconds")]
    pub creation_timestamp: DateTime<Utc>,
}

/// A staff member's membership of a group.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StaffEnlistment {
    /// The group.
    pub group_id: String,
    /// Roles within the group, e.g. `physician`.
    #[serde(default)]
    pub roles: Vec<String>,
    /// When the enlistment was made.
    #[serde(with = "chrono::serde::ts_milliseconds")]
    pub creation_timestamp: DateTime<Utc>,
    /// When it last changed.
    #[serde(
        default,
        with = "chrono::serde::ts_milliseconds_option",
        skip_serializing_if = "Option::is_none"
    )]
    pub update_timestamp: Option<DateTime<Utc>>,
}
