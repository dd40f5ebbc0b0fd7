//! Measurement reports (`/data/v1/measurement-reports`) and periodic reports (`/reports/v1`).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::enums::wire_enum;

wire_enum! {
    /// The rendering state of a measurement report.
    ReportStatus {
        /// Asked for, not started.
        Requested => "requested",
        /// Being rendered.
        Rendering => "rendering",
        /// The PDF can be downloaded.
        Rendered => "rendered",
        /// Rendering failed.
        Failed => "failed",
    }
}

/// A measurement report document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MeasurementReport {
    /// The report id; a newer report has a greater id.
    pub id: String,
    /// The user who asked for it.
    pub creator_id: String,
    /// The rendering state, when the server puts it on the envelope.
    #[serde(default)]
    pub status: Option<ReportStatus>,
    /// The report's fields.
    pub data: MeasurementReportData,
    /// When it was made.
    pub creation_timestamp: DateTime<Utc>,
}

impl MeasurementReport {
    /// The rendering state: `data.status` (interface.md 2.1), else the envelope's `status`.
    pub fn rendering_status(&self) -> Option<&ReportStatus> {
        self.data.status.as_ref().or(self.status.as_ref())
    }
}

/// The `data` of a measurement report document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MeasurementReportData {
    /// The measurement the report is for.
    pub measurement_id: String,
    /// The rendering state.
    #[serde(default)]
    pub status: Option<ReportStatus>,
    /// The report language, lower case.
    #[serde(default)]
    pub language: Option<String>,
    /// The time zone the report shows times in (fixed once the report exists).
    #[serde(default)]
    pub time_zone: Option<String>,
    /// The capability token of the PDF, once rendered.
    #[serde(default)]
    pub read_file_token: Option<String>,
    /// The measurement's `updateTimestamp` when the report was made, epoch milliseconds.
    #[serde(default)]
    pub for_measurement_updated_timestamp: Option<i64>,
}

wire_enum! {
    /// Why a periodic report was made.
    Trigger {
        /// Asked for by staff or an administrator.
        Manual => "MANUAL",
        /// Seven days of a prescription passed.
        PeriodDaysPassed7 => "PERIOD_DAYS_PASSED_7",
        /// Thirty days of a prescription passed.
        PeriodDaysPassed30 => "PERIOD_DAYS_PASSED_30",
        /// A prescription ended.
        PrescriptionEnded => "PRESCRIPTION_ENDED",
    }
}

/// A periodic report: the measurements of one period of a prescription.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PeriodicReport {
    /// The report id, for [`Client::get_periodic_report_pdf`](crate::Client::get_periodic_report_pdf).
    pub id: String,
    /// The patient.
    pub user_id: String,
    /// The group of the prescription the report was made for (whose staff see it); none for a
    /// report kept for the patient and administrators only.
    #[serde(default)]
    pub group_id: Option<String>,
    /// E.g. `COMPLETE`.
    #[serde(default)]
    pub status: Option<String>,
    /// The period the report covers.
    pub trigger: Trigger,
    /// When the report was made; lists are newest first.
    #[serde(with = "chrono::serde::ts_milliseconds")]
    pub creation_timestamp: DateTime<Utc>,
    /// Start of the period.
    #[serde(default, with = "chrono::serde::ts_milliseconds_option")]
    pub period_start_timestamp: Option<DateTime<Utc>>,
    /// End of the period.
    #[serde(default, with = "chrono::serde::ts_milliseconds_option")]
    pub period_end_timestamp: Option<DateTime<Utc>>,
    /// The report's contents.
    pub data: PeriodicReportData,
}

/// The contents of a periodic report.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PeriodicReportData {
    /// The measurements of the period.
    #[serde(default)]
    pub measurements: Vec<PeriodMeasurement>,
}

/// One measurement as a periodic report lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PeriodMeasurement {
    /// The measurement id.
    pub id: String,
    /// When it was measured.
    #[serde(default, with = "chrono::serde::ts_milliseconds_option")]
    pub measurement_timestamp: Option<DateTime<Utc>>,
    /// Beats per minute, when analysed.
    #[serde(default)]
    pub heartrate: Option<f64>,
    /// The measurement's status.
    #[serde(default)]
    pub status: Option<String>,
    /// The analysis' rhythm indicator.
    #[serde(default)]
    pub indicator: Option<String>,
    /// The reviewer's label.
    #[serde(default)]
    pub label: Option<String>,
}
