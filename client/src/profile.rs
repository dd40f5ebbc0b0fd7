//! The user profile: personal and device information, every field optional.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::enums::wire_enum;

/// A profile, or the part of one to change.
///
/// Every field is optional: [`Client::update_profile`](crate::Client::update_profile) sends only
/// the fields that are `Some`, and the server merges them into the stored profile (objects
/// such as [`ServiceInfo`] and `custom_fields` key by key; lists and plain values replace).
///
/// ```
/// use tacho_client::{Activity, Profile};
///
/// let partial = Profile {
///     weight: Some(67.5),
///     activity: Some(Activity::Active),
///     ..Profile::default()
/// };
/// assert_eq!(
///     serde_json::to_value(&partial).unwrap(),
///     serde_json::json!({"weight": 67.5, "activity": "ACTIVE"})
/// );
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Profile {
    /// ISO 3166-1 alpha-2 country code, e.g. `BE`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub country: Option<String>,
    /// Region or province.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region: Option<String>,
    /// First address line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address_line1: Option<String>,
    /// Second address line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address_line2: Option<String>,
    /// City.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub city: Option<String>,
    /// Postal code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub postal_code: Option<String>,
    /// Weight in kilograms, more than 0 and at most 500.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight: Option<f64>,
    /// Length (height) in centimetres, more than 0 and at most 300.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub length: Option<f64>,
    /// Date of birth; not in the future.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub birthday: Option<Birthday>,
    /// Sex, ISO 5218.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gender: Option<Gender>,
    /// Conditions that matter when reading a measurement.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comorbidities: Option<Vec<Comorbidity>>,
    /// The treating physician's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub physician: Option<String>,
    /// Whether the user smokes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub smoker: Option<bool>,
    /// How active the user is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub activity: Option<Activity>,
    /// The app and device that measure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_info: Option<ServiceInfo>,
    /// Conditions that make measuring harder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub impediments: Option<Vec<Impediment>>,
    /// Free string-to-string fields.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom_fields: Option<BTreeMap<String, String>>,
}

/// A stored profile with its id and timestamps, as `GET /profiles/v1/<id>` answers it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredProfile {
    /// The id of the user the profile belongs to.
    pub id: String,
    /// When the profile was made (at registration).
    #[serde(with = "chrono::serde::ts_milliseconds")]
    pub creation_timestamp: DateTime<Utc>,
    /// When it last changed.
    #[serde(with = "chrono::serde::ts_milliseconds")]
    pub update_timestamp: DateTime<Utc>,
    /// The profile's fields.
    #[serde(flatten)]
    pub profile: Profile,
}

/// The app and device a user measures with (the wire name is `service_info`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServiceInfo {
    /// The measuring app.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app: Option<AppInfo>,
    /// The phone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<DeviceInfo>,
}

/// The measuring app.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AppInfo {
    /// App version, e.g. `3.5.0`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

/// The phone a user measures with.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DeviceInfo {
    /// Operating-system version, e.g. `17.2`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub os: Option<String>,
    /// Model, e.g. `iPhone 13`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// `android` or `ios`.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub device_type: Option<DeviceType>,
    /// Maker, e.g. `Apple`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manufacturer: Option<String>,
}

wire_enum! {
    /// The phone's platform.
    DeviceType {
        /// Android.
        Android => "android",
        /// iOS.
        Ios => "ios",
    }
}

wire_enum! {
    /// How active a user is.
    Activity {
        /// Not active.
        NotActive => "NOT_ACTIVE",
        /// Slightly active.
        SlightlyActive => "SLIGHTLY_ACTIVE",
        /// Moderately active.
        ModeratelyActive => "MODERATELY_ACTIVE",
        /// Active.
        Active => "ACTIVE",
        /// Very active.
        VeryActive => "VERY_ACTIVE",
    }
}

wire_enum! {
    /// A condition that matters when reading a measurement.
    Comorbidity {
        /// Heart failure.
        HeartFailure => "HEART_FAILURE",
        /// Diabetes.
        Diabetes => "DIABETES",
        /// Chronic obstructive pulmonary disease.
        Copd => "COPD",
        /// High blood pressure.
        Hypertension => "HYPERTENSION",
        /// Vascular disease.
        VascularDisease => "VASCULAR_DISEASE",
        /// A past transient ischaemic attack or stroke.
        HistoryOfTiaStroke => "HISTORY_OF_TIA_STROKE",
    }
}

wire_enum! {
    /// A condition that makes measuring with a phone camera harder.
    Impediment {
        /// Trembling hands.
        Tremor => "TREMOR",
        /// Chilblains.
        Perniosis => "PERNIOSIS",
        /// Callused fingertips.
        Callus => "CALLUS",
    }
}

/// Sex as ISO 5218 codes it (an integer on the wire).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Gender {
    /// 0: not known.
    NotKnown,
    /// 1: male.
    Male,
    /// 2: female.
    Female,
    /// 9: not applicable.
    NotApplicable,
    /// A code this version of the client does not know, kept verbatim.
    Other(i64),
}

impl Gender {
    /// The ISO 5218 code.
    pub fn code(self) -> i64 {
        match self {
            Gender::NotKnown => 0,
            Gender::Male => 1,
            Gender::Female => 2,
            Gender::NotApplicable => 9,
            Gender::Other(code) => code,
        }
    }

    /// The gender with an ISO 5218 code.
    pub fn from_code(code: i64) -> Self {
        match code {
            0 => Gender::NotKnown,
            1 => Gender::Male,
            2 => Gender::Female,
            9 => Gender::NotApplicable,
            other => Gender::Other(other),
        }
    }
}

impl Serialize for Gender {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_i64(self.code())
    }
}

impl<'de> Deserialize<'de> for Gender {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        i64::deserialize(deserializer).map(Gender::from_code)
    }
}

/// A calendar date of birth; `YYYY-MM-DD` on the wire (the `{year, month, day}` form is read too).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Birthday {
    /// Year, e.g. 1958.
    pub year: i32,
    /// Month, 1–12.
    pub month: u32,
    /// Day of the month, 1–31.
    pub day: u32,
}

impl Serialize for Birthday {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(&format_args!(
            "{:04}-{:02}-{:02}",
            self.year, self.month, self.day
        ))
    }
}

impl<'de> Deserialize<'de> for Birthday {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Form {
            Text(String),
            Parts { year: i32, month: u32, day: u32 },
        }
        match Form::deserialize(deserializer)? {
            Form::Parts { year, month, day } => Ok(Birthday { year, month, day }),
            Form::Text(text) => {
                let mut parts = text.splitn(3, '-').map(str::parse::<i64>);
                match (parts.next(), parts.next(), parts.next()) {
                    (Some(Ok(year)), Some(Ok(month)), Some(Ok(day))) => Ok(Birthday {
                        year: year as i32,
                        month: month as u32,
                        day: day as u32,
                    }),
                    _ => Err(serde::de::Error::custom(format!(
                        "a birthday is YYYY-MM-DD, not `{text}`"
                    ))),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_full_profile_has_the_wire_names() {
        let profile = Profile {
            birthday: Some(Birthday {
                year: 1958,
                month: 3,
                day: 14,
            }),
            gender: Some(Gender::Female),
            comorbidities: Some(vec![Comorbidity::HeartFailure]),
            impediments: Some(vec![Impediment::Tremor]),
            service_info: Some(ServiceInfo {
                device: Some(DeviceInfo {
                    device_type: Some(DeviceType::Ios),
                    ..DeviceInfo::default()
                }),
                ..ServiceInfo::default()
            }),
            ..Profile::default()
        };
        let wire = serde_json::to_value(&profile).unwrap();
        assert_eq!(
            wire,
            json!({"birthday": "1958-03-14", "gender": 2, "comorbidities": ["HEART_FAILURE"],
                   "impediments": ["TREMOR"], "service_info": {"device": {"type": "ios"}}})
        );
        assert_eq!(serde_json::from_value::<Profile>(wire).unwrap(), profile);
    }

    #[test]
    fn unknown_values_from_a_newer_server_are_kept() {
        let read: Profile = serde_json::from_value(json!({
            "gender": 7, "activity": "ATHLETE", "birthday": {"year": 2001, "month": 2, "day": 3},
            "comorbidities": ["HEART_FAILURE", "ASTHMA"], "shoe_size": 42
        }))
        .unwrap();
        assert_eq!(read.gender, Some(Gender::Other(7)));
        assert_eq!(read.activity, Some(Activity::Other("ATHLETE".into())));
        assert_eq!(
            read.comorbidities,
            Some(vec![
                Comorbidity::HeartFailure,
                Comorbidity::Other("ASTHMA".into())
            ])
        );
        assert_eq!(
            read.birthday,
            Some(Birthday {
                year: 2001,
                month: 2,
                day: 3
            })
        );
    }
}
