//! A user's profile: validation of partial updates and merging them into the
//! stored document.
//!
//! The profile is kept as a JSON object rather than a struct because clients
//! send partial updates in which a missing field (leave alone) and a `null`
//! field (clear) mean different things, and because `custom_fields` is free
//! form. Validation therefore works on [`Value`]s and only normalises the few
//! fields that have more than one accepted spelling.

use std::fmt;

use chrono::{DateTime, NaiveDate, TimeDelta, Utc};
use serde_json::{Map, Value};

use super::country;

/// Longest accepted free-text value (address parts, physician), in characters.
const MAX_TEXT_CHARS: usize = 200;

/// Values accepted for `service_info.device.type`.
const DEVICE_TYPES: &[&str] = &["android", "ios"];

/// Earliest accepted birthday; anything before is almost certainly a typo.
const EARLIEST_BIRTHDAY: NaiveDate = match NaiveDate::from_ymd_opt(1900, 1, 1) {
    Some(date) => date,
    None => panic!("1900-01-01 is a valid date"),
};

/// Why a profile (patch) was rejected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileError {
    /// Path of the offending field, e.g. `weight`, `service_info.device.type`
    /// or `comorbidities[2]`; `profile` when the document itself is wrong.
    pub field: String,
    /// The rule that was broken, phrased to follow the field name.
    pub rule: String,
}

impl ProfileError {
    /// `field` is a [`ProfileField`] or a path written out.
    fn new(field: impl fmt::Display, rule: impl Into<String>) -> Self {
        Self {
            field: field.to_string(),
            rule: rule.into(),
        }
    }

    fn unknown_field(field: impl fmt::Display) -> Self {
        Self::new(field, "is an unknown field")
    }
}

impl fmt::Display for ProfileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}` {}", self.field, self.rule)
    }
}

impl std::error::Error for ProfileError {}

/// The profile's string enumerations: its field names (snake_case on the wire) and the values
/// of its enumerated fields (SCREAMING_SNAKE_CASE). strum derives both directions, so the
/// validators treat them alike and the allowed values and error messages come straight from
/// the enums.
pub trait WireEnum:
    Sized + Copy + 'static + strum::VariantArray + Into<&'static str> + std::str::FromStr
{
    /// Every value, in declaration order.
    fn all() -> &'static [Self] {
        Self::VARIANTS
    }

    /// The value as it appears in JSON.
    fn as_str(&self) -> &'static str {
        (*self).into()
    }

    /// Parses the JSON spelling; case-sensitive, like the wire format.
    fn parse(s: &str) -> Option<Self> {
        s.parse().ok()
    }

    /// "must be one of …", naming every value.
    fn one_of_rule() -> String {
        let names: Vec<&str> = Self::all().iter().map(Self::as_str).collect();
        format!("must be one of {}", names.join(", "))
    }
}

impl<T> WireEnum for T where
    T: Sized + Copy + 'static + strum::VariantArray + Into<&'static str> + std::str::FromStr
{
}

/// A field the profile document knows, by its JSON key. Any other top-level key is refused;
/// the free-form keys a clinic adds live inside [`ProfileField::CustomFields`].
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    strum::VariantArray,
    strum::IntoStaticStr,
    strum::EnumString,
    strum::Display,
)]
#[strum(serialize_all = "snake_case")]
pub enum ProfileField {
    /// ISO 3166-1 alpha-2 country code, normalised to upper case.
    Country,
    /// Region or province, free text.
    Region,
    /// First address line, free text.
    AddressLine1,
    /// Second address line, free text.
    AddressLine2,
    /// City, free text.
    City,
    /// Postal code, free text.
    PostalCode,
    /// The treating physician, free text.
    Physician,
    /// Body weight in kilograms.
    Weight,
    /// Body length (height) in centimetres.
    Length,
    /// Date of birth, normalised to `"YYYY-MM-DD"`.
    Birthday,
    /// ISO/IEC 5218 code, see [`Gender`].
    Gender,
    /// A list of [`Comorbidity`] values.
    Comorbidities,
    /// Whether the user smokes.
    Smoker,
    /// An [`Activity`] level.
    Activity,
    /// A list of [`Impediment`] values.
    Impediments,
    /// What the app reports about itself and the phone, `app` and `device`.
    ServiceInfo,
    /// The clinic's own fields: any key, each a string.
    CustomFields,
}

impl ProfileField {
    /// Checks a non-null value of this field and normalises it.
    fn normalise(self, value: Value, today: NaiveDate) -> Result<Value, ProfileError> {
        let path = self.as_str();
        match self {
            Self::Country => country_code(value),
            Self::Region
            | Self::AddressLine1
            | Self::AddressLine2
            | Self::City
            | Self::PostalCode
            | Self::Physician => text(path, value),
            Self::Weight => number_in(path, value, 500, "kilograms"),
            Self::Length => number_in(path, value, 300, "centimetres"),
            Self::Birthday => birthday(value, today),
            Self::Gender => gender(value),
            Self::Comorbidities => enum_array::<Comorbidity>(path, value),
            Self::Smoker => boolean(path, value),
            Self::Activity => enum_string::<Activity>(path, value),
            Self::Impediments => enum_array::<Impediment>(path, value),
            Self::ServiceInfo => service_info(value),
            Self::CustomFields => custom_fields(value),
        }
    }
}

/// A condition that affects the interpretation of heart-rhythm measurements.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    strum::VariantArray,
    strum::IntoStaticStr,
    strum::EnumString,
)]
#[strum(serialize_all = "SCREAMING_SNAKE_CASE")]
pub enum Comorbidity {
    /// Heart failure.
    HeartFailure,
    /// Diabetes mellitus.
    Diabetes,
    /// Chronic obstructive pulmonary disease.
    Copd,
    /// Hypertension.
    Hypertension,
    /// Vascular disease.
    VascularDisease,
    /// A past transient ischaemic attack or stroke.
    HistoryOfTiaStroke,
}

/// How physically active the user is.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    strum::VariantArray,
    strum::IntoStaticStr,
    strum::EnumString,
)]
#[strum(serialize_all = "SCREAMING_SNAKE_CASE")]
pub enum Activity {
    /// Not active.
    NotActive,
    /// Slightly active.
    SlightlyActive,
    /// Moderately active.
    ModeratelyActive,
    /// Active.
    Active,
    /// Very active.
    VeryActive,
}

/// A physical condition that can disturb finger-based measurements.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    strum::VariantArray,
    strum::IntoStaticStr,
    strum::EnumString,
)]
#[strum(serialize_all = "SCREAMING_SNAKE_CASE")]
pub enum Impediment {
    /// Tremor.
    Tremor,
    /// Perniosis (chilblains).
    Perniosis,
    /// Callus.
    Callus,
}

/// Sex as coded by ISO/IEC 5218, which is how it is sent and stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Gender {
    /// Not known (code 0).
    NotKnown,
    /// Male (code 1).
    Male,
    /// Female (code 2).
    Female,
    /// Not applicable (code 9).
    NotApplicable,
}

impl Gender {
    /// Every value, in order of code.
    pub const ALL: &[Self] = &[
        Self::NotKnown,
        Self::Male,
        Self::Female,
        Self::NotApplicable,
    ];

    /// The ISO/IEC 5218 code.
    pub fn code(&self) -> i32 {
        match self {
            Self::NotKnown => 0,
            Self::Male => 1,
            Self::Female => 2,
            Self::NotApplicable => 9,
        }
    }

    /// The value for an ISO/IEC 5218 code, if the code is assigned.
    pub fn from_code(code: i32) -> Option<Self> {
        Self::ALL
            .iter()
            .copied()
            .find(|gender| gender.code() == code)
    }
}

/// The latest birthday a profile may hold at `now`: today where the day begins first (UTC+14,
/// the Line Islands), so that a birthday that is today anywhere on Earth is accepted. One
/// rule for every door and every sender, wherever their clock or time zone is.
pub fn latest_birthday(now: DateTime<Utc>) -> NaiveDate {
    (now + TimeDelta::hours(14)).date_naive()
}

/// A validated partial profile, ready to merge.
///
/// Values are normalised: `country` is upper-case and `birthday` is always a
/// `"YYYY-MM-DD"` string. A `null` value means "clear this field".
#[derive(Debug, Clone, PartialEq)]
pub struct ProfilePatch(Map<String, Value>);

impl ProfilePatch {
    /// Validates and normalises a partial profile sent by a client.
    ///
    /// `today` is the latest birthday accepted ([`latest_birthday`]): later ones are in
    /// the future.
    ///
    /// # Errors
    ///
    /// Returns the first field that breaks a rule; nothing of a rejected
    /// patch should be applied.
    pub fn parse(value: Value, today: NaiveDate) -> Result<Self, ProfileError> {
        let Value::Object(fields) = value else {
            return Err(ProfileError::new("profile", "must be a JSON object"));
        };
        let mut normalised = Map::new();
        for (key, value) in fields {
            let value = normalise_field(&key, value, today)?;
            normalised.insert(key, value);
        }
        Ok(Self(normalised))
    }

    /// Applies the patch to a stored profile document (a JSON object),
    /// following the merge rules.
    ///
    /// Objects merge key by key, recursively; arrays and scalars replace;
    /// `null` removes the key. Objects left empty by the merge are removed so
    /// that clearing every key of, say, `service_info.app` leaves no trace.
    pub fn apply_to(&self, stored: &mut Map<String, Value>) {
        merge(stored, &self.0);
    }

    /// The normalised fields of the patch.
    pub fn as_map(&self) -> &Map<String, Value> {
        &self.0
    }
}

/// Values of a stored profile that live in indexed columns.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct IndexedFields {
    /// Upper-case ISO 3166-1 alpha-2 code.
    pub country: Option<String>,
    /// City, as entered.
    pub city: Option<String>,
    /// Physician, as entered.
    pub physician: Option<String>,
    /// ISO/IEC 5218 code.
    pub gender: Option<i32>,
}

/// Extracts the indexed columns from a stored profile.
///
/// Values of an unexpected type yield `None` rather than an error: the
/// stored document was validated on the way in, and indexing must not fail
/// on documents written by older versions.
pub fn indexed_fields(stored: &Map<String, Value>) -> IndexedFields {
    let get = |field: ProfileField| stored.get(field.as_str());
    let text = |field| get(field).and_then(Value::as_str).map(str::to_owned);
    IndexedFields {
        country: text(ProfileField::Country),
        city: text(ProfileField::City),
        physician: text(ProfileField::Physician),
        gender: get(ProfileField::Gender)
            .and_then(Value::as_i64)
            .and_then(|code| i32::try_from(code).ok()),
    }
}

fn normalise_field(key: &str, value: Value, today: NaiveDate) -> Result<Value, ProfileError> {
    let Some(field) = ProfileField::parse(key) else {
        return Err(ProfileError::unknown_field(key));
    };
    if value.is_null() {
        Ok(Value::Null)
    } else {
        field.normalise(value, today)
    }
}

fn country_code(value: Value) -> Result<Value, ProfileError> {
    let Value::String(code) = value else {
        return Err(ProfileError::new(ProfileField::Country, "must be a string"));
    };
    let code = code.to_ascii_uppercase();
    if country::is_alpha2(&code) {
        Ok(Value::String(code))
    } else {
        Err(ProfileError::new(
            ProfileField::Country,
            "must be an ISO 3166-1 alpha-2 country code",
        ))
    }
}

fn text(path: &str, value: Value) -> Result<Value, ProfileError> {
    let Value::String(s) = &value else {
        return Err(ProfileError::new(path, "must be a string"));
    };
    // Characters rather than bytes, so the limit does not penalise
    // non-Latin scripts.
    if s.chars().count() > MAX_TEXT_CHARS {
        return Err(ProfileError::new(
            path,
            format!("must be at most {MAX_TEXT_CHARS} characters long"),
        ));
    }
    Ok(value)
}

fn number_in(path: &str, value: Value, max: u32, unit: &str) -> Result<Value, ProfileError> {
    match value.as_f64() {
        Some(n) if n > 0.0 && n <= f64::from(max) => Ok(value),
        _ => Err(ProfileError::new(
            path,
            format!("must be a number of {unit} in (0, {max}]"),
        )),
    }
}

fn boolean(path: &str, value: Value) -> Result<Value, ProfileError> {
    if value.is_boolean() {
        Ok(value)
    } else {
        Err(ProfileError::new(path, "must be a boolean"))
    }
}

fn gender(value: Value) -> Result<Value, ProfileError> {
    let known = value
        .as_i64()
        .and_then(|code| i32::try_from(code).ok())
        .and_then(Gender::from_code)
        .is_some();
    if known {
        Ok(value)
    } else {
        let codes: Vec<String> = Gender::ALL.iter().map(|g| g.code().to_string()).collect();
        Err(ProfileError::new(
            ProfileField::Gender,
            format!(
                "must be an integer ISO 5218 code, one of {}",
                codes.join(", ")
            ),
        ))
    }
}

fn enum_string<E: WireEnum>(path: &str, value: Value) -> Result<Value, ProfileError> {
    match value.as_str() {
        Some(s) if E::parse(s).is_some() => Ok(value),
        Some(_) => Err(ProfileError::new(path, E::one_of_rule())),
        None => Err(ProfileError::new(path, "must be a string")),
    }
}

fn enum_array<E: WireEnum>(path: &str, value: Value) -> Result<Value, ProfileError> {
    let Value::Array(items) = &value else {
        return Err(ProfileError::new(path, "must be an array of strings"));
    };
    for (i, item) in items.iter().enumerate() {
        enum_string::<E>(&format!("{path}[{i}]"), item.clone())?;
    }
    Ok(value)
}

fn object<'a>(path: &str, value: &'a Value) -> Result<&'a Map<String, Value>, ProfileError> {
    value
        .as_object()
        .ok_or_else(|| ProfileError::new(path, "must be an object"))
}

fn optional_string(path: &str, value: &Value) -> Result<(), ProfileError> {
    if value.is_string() || value.is_null() {
        Ok(())
    } else {
        Err(ProfileError::new(path, "must be a string or null"))
    }
}

fn service_info(value: Value) -> Result<Value, ProfileError> {
    let field = ProfileField::ServiceInfo;
    for (key, part) in object(field.as_str(), &value)? {
        let path = format!("{field}.{key}");
        match key.as_str() {
            "app" | "device" if part.is_null() => {}
            "app" => app_info(&path, part)?,
            "device" => device_info(&path, part)?,
            _ => return Err(ProfileError::unknown_field(path)),
        }
    }
    Ok(value)
}

fn app_info(path: &str, value: &Value) -> Result<(), ProfileError> {
    for (key, field) in object(path, value)? {
        let path = format!("{path}.{key}");
        match key.as_str() {
            "version" => optional_string(&path, field)?,
            _ => return Err(ProfileError::unknown_field(path)),
        }
    }
    Ok(())
}

fn device_info(path: &str, value: &Value) -> Result<(), ProfileError> {
    for (key, field) in object(path, value)? {
        let path = format!("{path}.{key}");
        match key.as_str() {
            "os" | "model" | "manufacturer" => optional_string(&path, field)?,
            "type" => {
                optional_string(&path, field)?;
                if let Some(kind) = field.as_str()
                    && !DEVICE_TYPES.contains(&kind)
                {
                    return Err(ProfileError::new(
                        path,
                        format!("must be one of {}", DEVICE_TYPES.join(", ")),
                    ));
                }
            }
            _ => return Err(ProfileError::unknown_field(path)),
        }
    }
    Ok(())
}

fn custom_fields(value: Value) -> Result<Value, ProfileError> {
    let field = ProfileField::CustomFields;
    for (key, text) in object(field.as_str(), &value)? {
        optional_string(&format!("{field}.{key}"), text)?;
    }
    Ok(value)
}

fn birthday(value: Value, today: NaiveDate) -> Result<Value, ProfileError> {
    const SHAPE: &str =
        "must be a \"YYYY-MM-DD\" string or an object with integer `year`, `month` and `day`";
    let date = match &value {
        Value::String(s) => date_from_iso(s)?,
        Value::Object(parts) => date_from_parts(parts)?,
        _ => return Err(ProfileError::new(ProfileField::Birthday, SHAPE)),
    };
    if date < EARLIEST_BIRTHDAY {
        return Err(ProfileError::new(
            ProfileField::Birthday,
            "must not be before 1900-01-01",
        ));
    }
    if date > today {
        return Err(ProfileError::new(
            ProfileField::Birthday,
            "must not be in the future",
        ));
    }
    Ok(Value::String(date.format("%Y-%m-%d").to_string()))
}

fn not_a_real_date() -> ProfileError {
    ProfileError::new(ProfileField::Birthday, "must be a real calendar date")
}

fn date_from_iso(s: &str) -> Result<NaiveDate, ProfileError> {
    // Checked by hand because chrono's `%Y-%m-%d` also accepts unpadded
    // fields, signs and longer years, which the wire format does not allow.
    let well_formed = s.len() == 10
        && s.bytes().enumerate().all(|(i, b)| match i {
            4 | 7 => b == b'-',
            _ => b.is_ascii_digit(),
        });
    if !well_formed {
        return Err(ProfileError::new(
            ProfileField::Birthday,
            "must be a date written as \"YYYY-MM-DD\"",
        ));
    }
    // The digits were checked above, so these parses cannot fail.
    let year = s[0..4].parse().map_err(|_| not_a_real_date())?;
    let month = s[5..7].parse().map_err(|_| not_a_real_date())?;
    let day = s[8..10].parse().map_err(|_| not_a_real_date())?;
    NaiveDate::from_ymd_opt(year, month, day).ok_or_else(not_a_real_date)
}

fn date_from_parts(parts: &Map<String, Value>) -> Result<NaiveDate, ProfileError> {
    if let Some(key) = parts
        .keys()
        .find(|key| !matches!(key.as_str(), "year" | "month" | "day"))
    {
        return Err(ProfileError::unknown_field(format!(
            "{}.{key}",
            ProfileField::Birthday
        )));
    }
    let part = |name: &str| {
        parts.get(name).and_then(Value::as_i64).ok_or_else(|| {
            let path = format!("{}.{name}", ProfileField::Birthday);
            ProfileError::new(path, "must be an integer")
        })
    };
    let (year, month, day) = (part("year")?, part("month")?, part("day")?);
    let year = i32::try_from(year).map_err(|_| not_a_real_date())?;
    let month = u32::try_from(month).map_err(|_| not_a_real_date())?;
    let day = u32::try_from(day).map_err(|_| not_a_real_date())?;
    NaiveDate::from_ymd_opt(year, month, day).ok_or_else(not_a_real_date)
}

fn merge(target: &mut Map<String, Value>, patch: &Map<String, Value>) {
    for (key, value) in patch {
        match value {
            Value::Null => {
                target.remove(key);
            }
            Value::Object(nested) => {
                let slot = target
                    .entry(key.clone())
                    .or_insert_with(|| Value::Object(Map::new()));
                // A stored non-object cannot be merged into; the patch wins.
                if !slot.is_object() {
                    *slot = Value::Object(Map::new());
                }
                let now_empty = match slot {
                    Value::Object(existing) => {
                        merge(existing, nested);
                        existing.is_empty()
                    }
                    _ => false,
                };
                if now_empty {
                    target.remove(key);
                }
            }
            _ => {
                target.insert(key.clone(), value.clone());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn today() -> NaiveDate {
        NaiveDate::from_ymd_opt(2024, 6, 15).unwrap()
    }

    fn parse(value: Value) -> Result<ProfilePatch, ProfileError> {
        ProfilePatch::parse(value, today())
    }

    /// Parses `{field: value}` and returns the normalised value.
    fn accepted(field: ProfileField, value: Value) -> Value {
        let key = field.as_str();
        let patch = parse(json!({ key: value.clone() }))
            .unwrap_or_else(|e| panic!("{field} = {value} rejected: {e}"));
        patch.as_map()[key].clone()
    }

    /// Parses `{key: value}` and returns the error's field path.
    fn rejected(key: impl fmt::Display, value: Value) -> String {
        let key = key.to_string();
        match parse(json!({ key.as_str(): value.clone() })) {
            Ok(patch) => panic!("{key} = {value} accepted as {:?}", patch.as_map()),
            Err(e) => e.field,
        }
    }

    /// Parses `{field: value}` and checks that the field itself is refused.
    fn assert_refused(field: ProfileField, value: Value) {
        let message = format!("{field} = {value}");
        assert_eq!(rejected(field, value), field.as_str(), "{message}");
    }

    fn object(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            other => panic!("not an object: {other}"),
        }
    }

    fn applied(stored: Value, patch: Value) -> Value {
        let mut stored = object(stored);
        parse(patch).unwrap().apply_to(&mut stored);
        Value::Object(stored)
    }

    #[test]
    fn field_names_are_the_json_keys() {
        let names: Vec<&str> = ProfileField::all().iter().map(|f| f.as_str()).collect();
        assert_eq!(
            names,
            [
                "country",
                "region",
                "address_line1",
                "address_line2",
                "city",
                "postal_code",
                "physician",
                "weight",
                "length",
                "birthday",
                "gender",
                "comorbidities",
                "smoker",
                "activity",
                "impediments",
                "service_info",
                "custom_fields",
            ]
        );
        for field in ProfileField::all() {
            assert_eq!(ProfileField::parse(field.as_str()), Some(*field));
            assert_eq!(field.to_string(), field.as_str());
        }
        assert_eq!(ProfileField::parse("City"), None);
        assert_eq!(ProfileField::parse("addressLine1"), None);
    }

    // --- the document itself ---

    #[test]
    fn rejects_a_patch_that_is_not_an_object() {
        for value in [
            json!(null),
            json!([]),
            json!([{ "city": "Utrecht" }]),
            json!("city"),
            json!(1),
            json!(true),
        ] {
            let err = parse(value.clone()).unwrap_err();
            assert_eq!(err.field, "profile", "{value}");
        }
    }

    #[test]
    fn accepts_an_empty_patch() {
        assert!(parse(json!({})).unwrap().as_map().is_empty());
    }

    #[test]
    fn accepts_a_full_profile() {
        let patch = parse(json!({
            "country": "nl",
            "region": "Utrecht",
            "address_line1": "Oudegracht 1",
            "address_line2": "",
            "city": "Utrecht",
            "postal_code": "3511 AA",
            "physician": "Dr. Jansen",
            "weight": 72.5,
            "length": 181,
            "birthday": { "year": 1980, "month": 3, "day": 7 },
            "gender": 2,
            "comorbidities": ["DIABETES", "COPD"],
            "smoker": false,
            "activity": "ACTIVE",
            "impediments": ["TREMOR"],
            "service_info": {
                "app": { "version": "3.1.0" },
                "device": { "os": "14", "model": "Pixel 8", "type": "android", "manufacturer": "Google" }
            },
            "custom_fields": { "ward": "B2" }
        }))
        .unwrap();
        let map = patch.as_map();
        assert_eq!(map.len(), ProfileField::all().len());
        assert_eq!(map["country"], json!("NL"));
        assert_eq!(map["birthday"], json!("1980-03-07"));
        assert_eq!(map["weight"], json!(72.5));
    }

    #[test]
    fn rejects_unknown_top_level_fields() {
        for value in [json!("x"), json!(null), json!({})] {
            let err = parse(json!({ "city": "Utrecht", "nickname": value })).unwrap_err();
            assert_eq!(err.field, "nickname");
            assert_eq!(err.to_string(), "`nickname` is an unknown field");
        }
        // Field names are case-sensitive.
        assert_eq!(rejected("City", json!("Utrecht")), "City");
    }

    #[test]
    fn every_field_may_be_null() {
        for &field in ProfileField::all() {
            assert_eq!(accepted(field, Value::Null), Value::Null, "{field}");
        }
    }

    #[test]
    fn error_display_names_field_and_rule() {
        let err = parse(json!({ "weight": 0 })).unwrap_err();
        assert_eq!(
            err,
            ProfileError {
                field: ProfileField::Weight.to_string(),
                rule: "must be a number of kilograms in (0, 500]".into(),
            }
        );
        assert_eq!(
            err.to_string(),
            "`weight` must be a number of kilograms in (0, 500]"
        );
        let boxed: Box<dyn std::error::Error> = Box::new(err);
        assert!(boxed.to_string().starts_with("`weight`"));
    }

    // --- country ---

    #[test]
    fn country_is_normalised_to_upper_case() {
        assert_eq!(accepted(ProfileField::Country, json!("NL")), json!("NL"));
        assert_eq!(accepted(ProfileField::Country, json!("nl")), json!("NL"));
        assert_eq!(accepted(ProfileField::Country, json!("De")), json!("DE"));
        assert_eq!(accepted(ProfileField::Country, json!("gB")), json!("GB"));
    }

    #[test]
    fn country_must_be_an_assigned_alpha2_code() {
        for value in [
            json!("XX"),
            json!("UK"),
            json!("NLD"),
            json!("N"),
            json!(""),
            json!(" NL"),
            json!("NL "),
            json!("Ñl"),
            json!(31),
            json!(["NL"]),
        ] {
            assert_refused(ProfileField::Country, value);
        }
    }

    // --- free text ---

    const TEXT_FIELDS: [ProfileField; 6] = [
        ProfileField::Region,
        ProfileField::AddressLine1,
        ProfileField::AddressLine2,
        ProfileField::City,
        ProfileField::PostalCode,
        ProfileField::Physician,
    ];

    #[test]
    fn text_fields_are_stored_as_given() {
        for field in TEXT_FIELDS {
            for value in ["Utrecht", "  padded  ", "", "Zürich", "東京"] {
                assert_eq!(accepted(field, json!(value)), json!(value), "{field}");
            }
        }
    }

    #[test]
    fn text_fields_are_limited_to_200_characters() {
        for field in TEXT_FIELDS {
            accepted(field, json!("a".repeat(200)));
            // Two bytes per character: the limit counts characters.
            accepted(field, json!("é".repeat(200)));
            assert_refused(field, json!("a".repeat(201)));
            assert_refused(field, json!("é".repeat(201)));
        }
    }

    #[test]
    fn text_fields_must_be_strings() {
        for field in TEXT_FIELDS {
            for value in [json!(1), json!(true), json!(["a"]), json!({ "a": "b" })] {
                assert_refused(field, value);
            }
        }
    }

    // --- weight and length ---

    #[test]
    fn weight_is_a_positive_number_up_to_500_kg() {
        for value in [json!(0.1), json!(1), json!(72.5), json!(500), json!(500.0)] {
            assert_eq!(accepted(ProfileField::Weight, value.clone()), value);
        }
        for value in [
            json!(0),
            json!(0.0),
            json!(-1),
            json!(500.01),
            json!(501),
            json!("70"),
            json!(true),
            json!([70]),
        ] {
            assert_refused(ProfileField::Weight, value);
        }
    }

    #[test]
    fn length_is_a_positive_number_up_to_300_cm() {
        for value in [json!(0.5), json!(181), json!(175.5), json!(300)] {
            assert_eq!(accepted(ProfileField::Length, value.clone()), value);
        }
        for value in [
            json!(0),
            json!(-175),
            json!(300.1),
            json!("181"),
            json!(false),
        ] {
            assert_refused(ProfileField::Length, value);
        }
        let err = parse(json!({ "length": 301 })).unwrap_err();
        assert_eq!(err.rule, "must be a number of centimetres in (0, 300]");
    }

    // --- birthday ---

    #[test]
    fn birthday_accepts_a_date_string() {
        assert_eq!(
            accepted(ProfileField::Birthday, json!("1980-03-07")),
            json!("1980-03-07")
        );
    }

    #[test]
    fn birthday_accepts_an_object_and_normalises_it_to_a_string() {
        assert_eq!(
            accepted(
                ProfileField::Birthday,
                json!({ "year": 1980, "month": 3, "day": 7 })
            ),
            json!("1980-03-07")
        );
        assert_eq!(
            accepted(
                ProfileField::Birthday,
                json!({ "day": 31, "month": 12, "year": 1999 })
            ),
            json!("1999-12-31")
        );
    }

    #[test]
    fn birthday_feb_29_only_in_leap_years() {
        for year in [1904, 2000, 2020, 2024] {
            let iso = format!("{year}-02-29");
            assert_eq!(accepted(ProfileField::Birthday, json!(iso)), json!(iso));
            assert_eq!(
                accepted(
                    ProfileField::Birthday,
                    json!({ "year": year, "month": 2, "day": 29 })
                ),
                json!(iso)
            );
        }
        // 1900 is divisible by 100 but not by 400, so not a leap year.
        for year in [1900, 1999, 2023] {
            let err = parse(json!({ "birthday": format!("{year}-02-29") })).unwrap_err();
            assert_eq!(err, not_a_real_date());
            let err =
                parse(json!({ "birthday": { "year": year, "month": 2, "day": 29 } })).unwrap_err();
            assert_eq!(err, not_a_real_date());
        }
    }

    #[test]
    fn birthday_must_be_a_real_calendar_date() {
        for value in [
            json!("1980-13-01"),
            json!("1980-00-10"),
            json!("1980-04-31"),
            json!("1980-01-00"),
            json!("1980-01-32"),
            json!({ "year": 1980, "month": 13, "day": 1 }),
            json!({ "year": 1980, "month": 0, "day": 1 }),
            json!({ "year": 1980, "month": 4, "day": 31 }),
            json!({ "year": 1980, "month": -1, "day": 1 }),
            json!({ "year": 1980, "month": 1, "day": -1 }),
            json!({ "year": 1980, "month": 1, "day": 4_294_967_297_i64 }),
            json!({ "year": 99_999_999_999_i64, "month": 1, "day": 1 }),
        ] {
            assert_refused(ProfileField::Birthday, value);
        }
    }

    #[test]
    fn birthday_may_be_today_but_not_in_the_future() {
        assert_eq!(
            accepted(ProfileField::Birthday, json!("2024-06-15")),
            json!("2024-06-15")
        );
        for value in [
            json!("2024-06-16"),
            json!("2025-01-01"),
            json!({ "year": 2024, "month": 6, "day": 16 }),
            json!({ "year": 9999, "month": 12, "day": 31 }),
        ] {
            let err = parse(json!({ "birthday": value })).unwrap_err();
            assert_eq!(err.field, ProfileField::Birthday.as_str());
            assert_eq!(err.rule, "must not be in the future");
        }
    }

    #[test]
    fn birthday_not_before_1900() {
        assert_eq!(
            accepted(ProfileField::Birthday, json!("1900-01-01")),
            json!("1900-01-01")
        );
        for value in [
            json!("1899-12-31"),
            json!({ "year": 1066, "month": 10, "day": 14 }),
        ] {
            let err = parse(json!({ "birthday": value })).unwrap_err();
            assert_eq!(err.field, ProfileField::Birthday.as_str());
            assert_eq!(err.rule, "must not be before 1900-01-01");
        }
    }

    #[test]
    fn birthday_string_must_be_exactly_yyyy_mm_dd() {
        for value in [
            "1980-3-7",
            "1980-03-7",
            "07-03-1980",
            "1980/03/07",
            "19800307",
            " 1980-03-07",
            "1980-03-07 ",
            "+1980-03-07",
            "01980-03-07",
            "1980-03-07T00:00:00",
            "1980-0a-07",
            "",
        ] {
            assert_refused(ProfileField::Birthday, json!(value));
        }
    }

    #[test]
    fn birthday_object_needs_integer_year_month_and_day() {
        let cases = [
            (json!({ "month": 3, "day": 7 }), "birthday.year"),
            (json!({ "year": 1980, "day": 7 }), "birthday.month"),
            (json!({ "year": 1980, "month": 3 }), "birthday.day"),
            (
                json!({ "year": "1980", "month": 3, "day": 7 }),
                "birthday.year",
            ),
            (
                json!({ "year": 1980, "month": 3.0, "day": 7 }),
                "birthday.month",
            ),
            (
                json!({ "year": 1980, "month": 3, "day": null }),
                "birthday.day",
            ),
            (
                json!({ "year": 1980, "month": 3, "day": 7, "hour": 1 }),
                "birthday.hour",
            ),
        ];
        for (value, field) in cases {
            assert_eq!(rejected(ProfileField::Birthday, value), field);
        }
    }

    #[test]
    fn birthday_of_another_type_is_rejected() {
        for value in [json!(1980), json!(true), json!(["1980-03-07"])] {
            assert_refused(ProfileField::Birthday, value);
        }
    }

    // --- gender ---

    #[test]
    fn gender_is_an_iso_5218_code() {
        for code in [0, 1, 2, 9] {
            assert_eq!(accepted(ProfileField::Gender, json!(code)), json!(code));
        }
        for value in [
            json!(3),
            json!(-1),
            json!(10),
            json!(4_294_967_297_i64),
            json!(1.0),
            json!(1.5),
            json!("1"),
            json!("MALE"),
            json!(true),
        ] {
            assert_refused(ProfileField::Gender, value);
        }
        let err = parse(json!({ "gender": 3 })).unwrap_err();
        assert_eq!(
            err.rule,
            "must be an integer ISO 5218 code, one of 0, 1, 2, 9"
        );
    }

    #[test]
    fn gender_codes_round_trip() {
        assert_eq!(Gender::from_code(0), Some(Gender::NotKnown));
        assert_eq!(Gender::from_code(1), Some(Gender::Male));
        assert_eq!(Gender::from_code(2), Some(Gender::Female));
        assert_eq!(Gender::from_code(9), Some(Gender::NotApplicable));
        assert_eq!(Gender::from_code(3), None);
        for gender in Gender::ALL {
            assert_eq!(Gender::from_code(gender.code()), Some(*gender));
        }
    }

    // --- enumerations ---

    fn assert_round_trips<E: WireEnum + fmt::Debug + PartialEq>(expected: &[&str]) {
        let wire: Vec<&str> = E::all().iter().map(E::as_str).collect();
        assert_eq!(wire, expected);
        for value in E::all() {
            assert_eq!(E::parse(value.as_str()), Some(*value));
            assert_eq!(E::parse(&value.as_str().to_lowercase()), None);
        }
        assert_eq!(E::parse(""), None);
    }

    #[test]
    fn enumerations_round_trip() {
        assert_round_trips::<Comorbidity>(&[
            "HEART_FAILURE",
            "DIABETES",
            "COPD",
            "HYPERTENSION",
            "VASCULAR_DISEASE",
            "HISTORY_OF_TIA_STROKE",
        ]);
        assert_round_trips::<Activity>(&[
            "NOT_ACTIVE",
            "SLIGHTLY_ACTIVE",
            "MODERATELY_ACTIVE",
            "ACTIVE",
            "VERY_ACTIVE",
        ]);
        assert_round_trips::<Impediment>(&["TREMOR", "PERNIOSIS", "CALLUS"]);
        assert_eq!(Activity::parse("VERY_ACTIVE"), Some(Activity::VeryActive));
        assert_eq!(Comorbidity::Copd.as_str(), "COPD");
        assert_eq!(Impediment::all().len(), 3);
    }

    // --- comorbidities and impediments ---

    #[test]
    fn comorbidities_accept_every_known_value_and_duplicates() {
        let all: Vec<&str> = Comorbidity::all().iter().map(Comorbidity::as_str).collect();
        assert_eq!(
            accepted(ProfileField::Comorbidities, json!(all)),
            json!(all)
        );
        assert_eq!(accepted(ProfileField::Comorbidities, json!([])), json!([]));
        assert_eq!(
            accepted(ProfileField::Comorbidities, json!(["COPD", "COPD"])),
            json!(["COPD", "COPD"])
        );
    }

    #[test]
    fn comorbidities_reject_unknown_values_by_index() {
        assert_eq!(
            rejected(ProfileField::Comorbidities, json!(["COPD", "CANCER"])),
            "comorbidities[1]"
        );
        assert_eq!(
            rejected(ProfileField::Comorbidities, json!(["diabetes"])),
            "comorbidities[0]"
        );
        assert_eq!(
            rejected(ProfileField::Comorbidities, json!(["COPD", 3])),
            "comorbidities[1]"
        );
        assert_eq!(
            rejected(ProfileField::Comorbidities, json!([null])),
            "comorbidities[0]"
        );
        assert_refused(ProfileField::Comorbidities, json!("COPD"));
        assert_refused(ProfileField::Comorbidities, json!({ "COPD": true }));
        let err = parse(json!({ "comorbidities": ["CANCER"] })).unwrap_err();
        assert_eq!(
            err.rule,
            "must be one of HEART_FAILURE, DIABETES, COPD, HYPERTENSION, \
             VASCULAR_DISEASE, HISTORY_OF_TIA_STROKE"
        );
    }

    #[test]
    fn impediments_accept_known_values_only() {
        let all = json!(["TREMOR", "PERNIOSIS", "CALLUS"]);
        assert_eq!(accepted(ProfileField::Impediments, all.clone()), all);
        assert_eq!(accepted(ProfileField::Impediments, json!([])), json!([]));
        assert_eq!(
            rejected(ProfileField::Impediments, json!(["TREMOR", "GOUT"])),
            "impediments[1]"
        );
        assert_eq!(
            rejected(ProfileField::Impediments, json!(["callus"])),
            "impediments[0]"
        );
        assert_refused(ProfileField::Impediments, json!("TREMOR"));
    }

    // --- smoker and activity ---

    #[test]
    fn smoker_is_a_boolean() {
        assert_eq!(accepted(ProfileField::Smoker, json!(true)), json!(true));
        assert_eq!(accepted(ProfileField::Smoker, json!(false)), json!(false));
        for value in [json!("yes"), json!("true"), json!(1), json!(0), json!([])] {
            assert_refused(ProfileField::Smoker, value);
        }
    }

    #[test]
    fn activity_is_one_of_the_levels() {
        for level in Activity::all() {
            assert_eq!(
                accepted(ProfileField::Activity, json!(level.as_str())),
                json!(level.as_str())
            );
        }
        for value in [
            json!("LAZY"),
            json!("active"),
            json!(""),
            json!(2),
            json!(["ACTIVE"]),
        ] {
            assert_refused(ProfileField::Activity, value);
        }
    }

    // --- service_info ---

    #[test]
    fn service_info_accepts_app_and_device() {
        let value = json!({
            "app": { "version": "3.1.0" },
            "device": { "os": "17.4", "model": "iPhone 15", "type": "ios", "manufacturer": "Apple" }
        });
        assert_eq!(accepted(ProfileField::ServiceInfo, value.clone()), value);
        for value in [
            json!({}),
            json!({ "app": null, "device": null }),
            json!({ "app": {}, "device": {} }),
            json!({ "app": { "version": null } }),
            json!({ "device": { "os": null, "model": null, "type": null, "manufacturer": null } }),
            json!({ "device": { "type": "android" } }),
        ] {
            assert_eq!(accepted(ProfileField::ServiceInfo, value.clone()), value);
        }
    }

    #[test]
    fn service_info_rejects_unknown_keys_at_every_level() {
        let cases = [
            (json!({ "browser": "x" }), "service_info.browser"),
            (json!({ "browser": null }), "service_info.browser"),
            (
                json!({ "app": { "build": "42" } }),
                "service_info.app.build",
            ),
            (
                json!({ "device": { "color": "red" } }),
                "service_info.device.color",
            ),
            (
                json!({ "device": { "Type": "ios" } }),
                "service_info.device.Type",
            ),
        ];
        for (value, field) in cases {
            let err = parse(json!({ "service_info": value })).unwrap_err();
            assert_eq!(err.field, field);
            assert_eq!(err.rule, "is an unknown field");
        }
    }

    #[test]
    fn service_info_checks_types() {
        let cases = [
            (json!("android"), "service_info"),
            (json!([]), "service_info"),
            (json!({ "app": "3.1.0" }), "service_info.app"),
            (json!({ "device": ["ios"] }), "service_info.device"),
            (
                json!({ "app": { "version": 3 } }),
                "service_info.app.version",
            ),
            (json!({ "device": { "os": 17 } }), "service_info.device.os"),
            (
                json!({ "device": { "model": true } }),
                "service_info.device.model",
            ),
            (
                json!({ "device": { "manufacturer": {} } }),
                "service_info.device.manufacturer",
            ),
            (
                json!({ "device": { "type": 1 } }),
                "service_info.device.type",
            ),
        ];
        for (value, field) in cases {
            assert_eq!(rejected(ProfileField::ServiceInfo, value), field);
        }
    }

    #[test]
    fn device_type_is_android_or_ios() {
        for value in ["windows", "Android", "IOS", ""] {
            let err =
                parse(json!({ "service_info": { "device": { "type": value } } })).unwrap_err();
            assert_eq!(err.field, "service_info.device.type");
            assert_eq!(err.rule, "must be one of android, ios");
        }
    }

    // --- custom_fields ---

    #[test]
    fn custom_fields_map_strings_to_strings_or_null() {
        let value = json!({ "ward": "B2", "bed": "", "old": null, "": "empty key" });
        assert_eq!(accepted(ProfileField::CustomFields, value.clone()), value);
        assert_eq!(accepted(ProfileField::CustomFields, json!({})), json!({}));
    }

    #[test]
    fn custom_fields_reject_other_values() {
        assert_eq!(
            rejected(ProfileField::CustomFields, json!({ "bed": 12 })),
            "custom_fields.bed"
        );
        assert_eq!(
            rejected(ProfileField::CustomFields, json!({ "a": { "b": "c" } })),
            "custom_fields.a"
        );
        assert_eq!(
            rejected(ProfileField::CustomFields, json!({ "a": ["b"] })),
            "custom_fields.a"
        );
        assert_eq!(
            rejected(ProfileField::CustomFields, json!({ "a": false })),
            "custom_fields.a"
        );
        assert_refused(ProfileField::CustomFields, json!(["a"]));
        assert_refused(ProfileField::CustomFields, json!("a=b"));
    }

    // --- merging ---

    #[test]
    fn merge_into_an_empty_profile_stores_the_normalised_patch() {
        let merged = applied(
            json!({}),
            json!({ "country": "be", "birthday": { "year": 1990, "month": 1, "day": 5 } }),
        );
        assert_eq!(merged, json!({ "country": "BE", "birthday": "1990-01-05" }));
    }

    #[test]
    fn merge_leaves_fields_missing_from_the_patch_alone() {
        let merged = applied(
            json!({ "city": "Utrecht", "weight": 80, "smoker": true }),
            json!({ "weight": 78.5 }),
        );
        assert_eq!(
            merged,
            json!({ "city": "Utrecht", "weight": 78.5, "smoker": true })
        );
    }

    #[test]
    fn merge_null_removes_a_top_level_field() {
        let merged = applied(
            json!({ "city": "Utrecht", "gender": 1, "service_info": { "app": { "version": "1" } } }),
            json!({ "gender": null, "service_info": null, "physician": null }),
        );
        assert_eq!(merged, json!({ "city": "Utrecht" }));
    }

    #[test]
    fn merge_replaces_arrays_instead_of_concatenating() {
        let merged = applied(
            json!({ "comorbidities": ["DIABETES", "COPD"], "impediments": ["TREMOR"] }),
            json!({ "comorbidities": ["HYPERTENSION"], "impediments": [] }),
        );
        assert_eq!(
            merged,
            json!({ "comorbidities": ["HYPERTENSION"], "impediments": [] })
        );
    }

    #[test]
    fn merge_service_info_key_by_key_at_every_level() {
        let stored = json!({
            "service_info": {
                "app": { "version": "3.0.0" },
                "device": { "os": "13", "model": "Pixel 7", "type": "android", "manufacturer": "Google" }
            }
        });
        let merged = applied(
            stored.clone(),
            json!({ "service_info": { "device": { "type": "ios", "model": "iPhone 15" } } }),
        );
        assert_eq!(
            merged,
            json!({
                "service_info": {
                    "app": { "version": "3.0.0" },
                    "device": { "os": "13", "model": "iPhone 15", "type": "ios", "manufacturer": "Google" }
                }
            })
        );

        let merged = applied(
            stored,
            json!({ "service_info": { "app": { "version": "3.1.0" }, "device": { "os": null } } }),
        );
        assert_eq!(
            merged,
            json!({
                "service_info": {
                    "app": { "version": "3.1.0" },
                    "device": { "model": "Pixel 7", "type": "android", "manufacturer": "Google" }
                }
            })
        );
    }

    #[test]
    fn merge_adds_nested_objects_that_were_missing() {
        let merged = applied(
            json!({ "service_info": { "app": { "version": "1" } } }),
            json!({ "service_info": { "device": { "type": "ios" } } }),
        );
        assert_eq!(
            merged,
            json!({ "service_info": { "app": { "version": "1" }, "device": { "type": "ios" } } })
        );
    }

    #[test]
    fn merge_null_inside_service_info_removes_that_key() {
        let merged = applied(
            json!({ "service_info": { "app": { "version": "1" }, "device": { "type": "ios" } } }),
            json!({ "service_info": { "device": null } }),
        );
        assert_eq!(
            merged,
            json!({ "service_info": { "app": { "version": "1" } } })
        );
    }

    #[test]
    fn merge_removes_objects_it_leaves_empty() {
        let merged = applied(
            json!({
                "city": "Utrecht",
                "service_info": { "app": { "version": "1" }, "device": { "type": "ios" } }
            }),
            json!({ "service_info": { "app": { "version": null } } }),
        );
        assert_eq!(
            merged,
            json!({ "city": "Utrecht", "service_info": { "device": { "type": "ios" } } })
        );

        let merged = applied(
            merged,
            json!({ "service_info": { "device": { "type": null } } }),
        );
        assert_eq!(merged, json!({ "city": "Utrecht" }));

        // An empty object in the patch does not create one in the profile.
        let merged = applied(
            json!({}),
            json!({ "service_info": { "app": {} }, "custom_fields": {} }),
        );
        assert_eq!(merged, json!({}));
    }

    #[test]
    fn merge_custom_fields_key_by_key() {
        let merged = applied(
            json!({ "custom_fields": { "ward": "B2", "bed": "12", "note": "x" } }),
            json!({ "custom_fields": { "bed": "14", "note": null, "diet": "none" } }),
        );
        assert_eq!(
            merged,
            json!({ "custom_fields": { "ward": "B2", "bed": "14", "diet": "none" } })
        );

        let merged = applied(
            merged,
            json!({ "custom_fields": { "ward": null, "bed": null, "diet": null } }),
        );
        assert_eq!(merged, json!({}));
    }

    #[test]
    fn merge_replaces_a_stored_value_that_is_not_an_object() {
        let merged = applied(
            json!({ "service_info": "legacy", "custom_fields": ["x"] }),
            json!({ "service_info": { "app": { "version": "2" } }, "custom_fields": { "a": "b" } }),
        );
        assert_eq!(
            merged,
            json!({ "service_info": { "app": { "version": "2" } }, "custom_fields": { "a": "b" } })
        );
    }

    #[test]
    fn merge_is_idempotent() {
        let stored = object(json!({
            "country": "NL",
            "weight": 80,
            "comorbidities": ["COPD"],
            "service_info": { "app": { "version": "1" }, "device": { "type": "android", "os": "13" } },
            "custom_fields": { "ward": "B2", "bed": "12" }
        }));
        let patch = parse(json!({
            "country": "de",
            "weight": null,
            "comorbidities": ["DIABETES", "DIABETES"],
            "birthday": { "year": 2000, "month": 2, "day": 29 },
            "service_info": { "app": null, "device": { "type": "ios", "model": "iPhone" } },
            "custom_fields": { "bed": null, "diet": "none" }
        }))
        .unwrap();
        let mut once = stored.clone();
        patch.apply_to(&mut once);
        let mut twice = once.clone();
        patch.apply_to(&mut twice);
        assert_eq!(once, twice);
        assert_eq!(
            Value::Object(once),
            json!({
                "country": "DE",
                "comorbidities": ["DIABETES", "DIABETES"],
                "birthday": "2000-02-29",
                "service_info": { "device": { "type": "ios", "os": "13", "model": "iPhone" } },
                "custom_fields": { "ward": "B2", "diet": "none" }
            })
        );
    }

    #[test]
    fn a_rejected_patch_is_never_partially_returned() {
        // Validation happens before anything can be applied, so one bad
        // field rejects the whole patch.
        let err = parse(json!({ "city": "Utrecht", "weight": -1 })).unwrap_err();
        assert_eq!(err.field, ProfileField::Weight.as_str());
    }

    // --- indexed fields ---

    #[test]
    fn indexed_fields_are_read_from_the_stored_profile() {
        let stored = object(json!({
            "country": "NL",
            "city": "Utrecht",
            "physician": "Dr. Jansen",
            "gender": 2,
            "weight": 70
        }));
        assert_eq!(
            indexed_fields(&stored),
            IndexedFields {
                country: Some("NL".into()),
                city: Some("Utrecht".into()),
                physician: Some("Dr. Jansen".into()),
                gender: Some(2),
            }
        );
    }

    #[test]
    fn indexed_fields_are_none_when_missing_or_malformed() {
        assert_eq!(indexed_fields(&Map::new()), IndexedFields::default());
        let stored = object(json!({
            "country": 31,
            "city": null,
            "physician": ["Dr. Jansen"],
            "gender": "2"
        }));
        assert_eq!(indexed_fields(&stored), IndexedFields::default());
        let stored = object(json!({ "gender": 4_294_967_297_i64 }));
        assert_eq!(indexed_fields(&stored).gender, None);
    }

    #[test]
    fn indexed_fields_follow_a_merge() {
        let mut stored = object(json!({ "country": "NL", "city": "Utrecht", "gender": 1 }));
        parse(json!({ "country": "be", "city": null, "physician": "Dr. Peeters" }))
            .unwrap()
            .apply_to(&mut stored);
        assert_eq!(
            indexed_fields(&stored),
            IndexedFields {
                country: Some("BE".into()),
                city: None,
                physician: Some("Dr. Peeters".into()),
                gender: Some(1),
            }
        );
    }
}
