//! The patient's profile (interface.md 2.3) as a form: enumerations as choices, units shown,
//! each field checked by the domain's profile rules with its message beside it; saved with
//! htmx in place (the form fragment comes back), or as a plain form post without JavaScript.

use std::collections::HashMap;

use actix_web::HttpResponse;
use askama::Template;
use serde_json::{Map, Value, json};

use super::chrome::{Chrome, html};
use super::context::{CsrfForm, Member, Visitor};
use super::error::WebError;
use crate::domain::json::string_list;
use crate::domain::profile::{
    Activity, Comorbidity, Gender, Impediment, ProfileField, ProfilePatch, WireEnum,
    latest_birthday,
};
use crate::store::Viewer;

/// The fields with one value each, in the order the saved patch lists them (the stored
/// document keeps the order in which its keys arrived).
const SINGLE_FIELDS: [ProfileField; 13] = [
    ProfileField::Country,
    ProfileField::Weight,
    ProfileField::Length,
    ProfileField::Birthday,
    ProfileField::Gender,
    ProfileField::Smoker,
    ProfileField::Activity,
    ProfileField::Region,
    ProfileField::AddressLine1,
    ProfileField::AddressLine2,
    ProfileField::City,
    ProfileField::PostalCode,
    ProfileField::Physician,
];
/// The address's free-text fields, in form order.
const ADDRESS_FIELDS: [ProfileField; 5] = [
    ProfileField::Region,
    ProfileField::AddressLine1,
    ProfileField::AddressLine2,
    ProfileField::City,
    ProfileField::PostalCode,
];
/// Every field that can carry a message, in the order the form shows them.
const FORM_ORDER: [ProfileField; 15] = [
    ProfileField::Birthday,
    ProfileField::Gender,
    ProfileField::Weight,
    ProfileField::Length,
    ProfileField::Physician,
    ProfileField::Country,
    ProfileField::Region,
    ProfileField::AddressLine1,
    ProfileField::AddressLine2,
    ProfileField::City,
    ProfileField::PostalCode,
    ProfileField::Comorbidities,
    ProfileField::Smoker,
    ProfileField::Activity,
    ProfileField::Impediments,
];
/// What the app reports in `service_info`, shown read-only, as (part, key).
const DEVICE_FIELDS: [(&str, &str); 4] = [
    ("device", "os"),
    ("device", "model"),
    ("device", "manufacturer"),
    ("app", "version"),
];

/// One option of a choice.
pub struct Option_ {
    pub value: String,
    pub label: String,
    pub selected: bool,
}

/// The form's values (as text), choices and messages.
pub struct ProfileForm {
    values: HashMap<ProfileField, String>,
    errors: HashMap<ProfileField, String>,
    pub countries: Vec<Option_>,
    pub genders: Vec<Option_>,
    pub activities: Vec<Option_>,
    pub smoker: Vec<Option_>,
    pub device_types: Vec<Option_>,
    pub comorbidities: Vec<Option_>,
    pub impediments: Vec<Option_>,
    /// The address's free-text fields and their labels.
    pub address_fields: Vec<(ProfileField, String)>,
    /// What the app reports about the phone and itself, as (label, value).
    pub device_fields: Vec<(String, String)>,
    /// The clinic's own fields the app stored, as (name, value).
    pub custom: Vec<(String, String)>,
    pub notice: Option<String>,
}

// The fields are taken by reference because templates pass their variables so.
impl ProfileForm {
    /// The field's current text.
    pub fn value(&self, field: &ProfileField) -> String {
        self.values.get(field).cloned().unwrap_or_default()
    }

    /// The message for the field, if its value was refused.
    pub fn error(&self, field: &ProfileField) -> Option<String> {
        self.errors.get(field).cloned()
    }

    /// The fields with a message, in the form's order, and their messages: the summary above
    /// the form, each linking to its field.
    pub fn summary(&self) -> Vec<(ProfileField, String)> {
        let mut fields: Vec<ProfileField> = self.errors.keys().copied().collect();
        fields.sort_by_key(|field| {
            FORM_ORDER
                .iter()
                .position(|f| f == field)
                .unwrap_or(FORM_ORDER.len())
        });
        fields
            .into_iter()
            .map(|field| (field, self.errors[&field].clone()))
            .collect()
    }

    /// The attributes tying an invalid field to its message, and, on the first invalid field,
    /// `autofocus`: after a refused save the browser (or htmx, after its swap) moves the focus
    /// and the view to it. Empty for a valid field.
    pub fn aria(&self, field: &ProfileField) -> String {
        if !self.errors.contains_key(field) {
            return String::new();
        }
        let first = self.summary().first().is_some_and(|(f, _)| f == field);
        // Field names are snake_case JSON keys: nothing to escape.
        format!(
            " aria-describedby=\"{field}-error\"{}",
            if first { " autofocus" } else { "" }
        )
    }

    /// `aria-invalid` of the field.
    pub fn invalid(&self, field: &ProfileField) -> &'static str {
        if self.errors.contains_key(field) {
            "true"
        } else {
            "false"
        }
    }
}

fn text_of(value: Option<&Value>) -> String {
    match value {
        Some(Value::String(s)) => s.clone(),
        // A whole number stored as a float (a height of 165 sent as 165.0) reads as typed.
        Some(Value::Number(n)) => match n.as_f64() {
            Some(x) if n.is_f64() && x.fract() == 0.0 && x.abs() < 1e15 => format!("{x:.0}"),
            _ => n.to_string(),
        },
        Some(Value::Bool(b)) => b.to_string(),
        _ => String::new(),
    }
}

fn choices(values: &[(String, String)], current: &str) -> Vec<Option_> {
    values
        .iter()
        .map(|(value, label)| Option_ {
            selected: value == current,
            value: value.clone(),
            label: label.clone(),
        })
        .collect()
}

/// The stored values the form edits, as the form's text values and the two checkbox lists.
fn values_of(
    document: &Map<String, Value>,
) -> (HashMap<ProfileField, String>, Vec<String>, Vec<String>) {
    let get = |field: ProfileField| document.get(field.as_str());
    let values = SINGLE_FIELDS
        .into_iter()
        .map(|field| (field, text_of(get(field))))
        .collect();
    (
        values,
        string_list(get(ProfileField::Comorbidities)),
        string_list(get(ProfileField::Impediments)),
    )
}

/// A value of the stored `service_info`, as text.
fn service_info_text(document: &Map<String, Value>, part: &str, key: &str) -> String {
    text_of(
        document
            .get(ProfileField::ServiceInfo.as_str())
            .and_then(|s| s.get(part))
            .and_then(|p| p.get(key)),
    )
}

/// The clinic's own fields the app stored, as (name, value), shown read-only.
fn custom_fields_of(document: &Map<String, Value>) -> Vec<(String, String)> {
    document
        .get(ProfileField::CustomFields.as_str())
        .and_then(Value::as_object)
        .map(|fields| {
            fields
                .iter()
                .map(|(name, value)| (name.clone(), text_of(Some(value))))
                .collect()
        })
        .unwrap_or_default()
}

/// The form over `values`; what the app writes (`service_info`, `custom_fields`) is not the
/// form's to change, so it always comes from the stored `document`.
fn build_form(
    visitor: &Visitor,
    document: &Map<String, Value>,
    values: HashMap<ProfileField, String>,
    comorbidities: &[String],
    impediments: &[String],
    errors: HashMap<ProfileField, String>,
    notice: Option<String>,
) -> ProfileForm {
    let tr = &visitor.tr;
    let value = |field: ProfileField| values.get(&field).cloned().unwrap_or_default();
    // Named in the reader's language and in its alphabetical order (CLDR).
    let mut countries: Vec<(String, String)> = vec![(String::new(), "–".into())];
    countries.extend(
        crate::i18n::locale::countries(tr.language())
            .iter()
            .map(|(code, name)| ((*code).to_owned(), name.clone())),
    );
    let mut genders = vec![(String::new(), "–".to_owned())];
    genders.extend(Gender::ALL.iter().map(|g| {
        (
            g.code().to_string(),
            tr.text(&format!("gender-{}", g.code())),
        )
    }));
    let mut activities = vec![(String::new(), "–".to_owned())];
    activities.extend(Activity::all().iter().map(|a| {
        (
            a.as_str().to_owned(),
            tr.text(&format!("activity-{}", a.as_str())),
        )
    }));
    let smoker = vec![
        (String::new(), "–".to_owned()),
        ("true".to_owned(), tr.text("yes")),
        ("false".to_owned(), tr.text("no")),
    ];
    let device_types = vec![
        (String::new(), "–".to_owned()),
        ("android".to_owned(), "Android".to_owned()),
        ("ios".to_owned(), "iOS".to_owned()),
    ];
    let flags = |all: Vec<(&'static str, String)>, chosen: &[String]| -> Vec<Option_> {
        all.into_iter()
            .map(|(v, label)| Option_ {
                selected: chosen.iter().any(|c| c == v),
                value: v.to_owned(),
                label,
            })
            .collect()
    };
    ProfileForm {
        countries: choices(&countries, &value(ProfileField::Country)),
        genders: choices(&genders, &value(ProfileField::Gender)),
        activities: choices(&activities, &value(ProfileField::Activity)),
        smoker: choices(&smoker, &value(ProfileField::Smoker)),
        device_types: choices(
            &device_types,
            &service_info_text(document, "device", "type"),
        ),
        comorbidities: flags(
            Comorbidity::all()
                .iter()
                .map(|c| (c.as_str(), tr.text(&format!("comorbidity-{}", c.as_str()))))
                .collect(),
            comorbidities,
        ),
        impediments: flags(
            Impediment::all()
                .iter()
                .map(|i| (i.as_str(), tr.text(&format!("impediment-{}", i.as_str()))))
                .collect(),
            impediments,
        ),
        address_fields: ADDRESS_FIELDS
            .into_iter()
            .map(|f| {
                let label = tr.text(&format!("profile-{}", f.as_str().replace('_', "-")));
                (f, label)
            })
            .collect(),
        device_fields: DEVICE_FIELDS
            .into_iter()
            .map(|(part, key)| {
                (
                    tr.text(&format!("profile-{part}-{key}")),
                    service_info_text(document, part, key),
                )
            })
            .collect(),
        custom: custom_fields_of(document),
        values,
        errors,
        notice,
    }
}

#[derive(Template)]
#[template(path = "web/profile.html")]
struct ProfilePage {
    c: Chrome,
    f: ProfileForm,
}

#[derive(Template)]
#[template(path = "web/profile_form.html")]
struct ProfileFragment {
    c: Chrome,
    f: ProfileForm,
}

async fn stored_document(member: &Member) -> Result<Map<String, Value>, WebError> {
    let viewer: Viewer = member.viewer();
    Ok(member
        .state
        .store
        .visible_profile(&viewer, member.id())
        .await?
        .and_then(|p| p.data.as_object().cloned())
        .unwrap_or_default())
}

/// The profile form with the stored values.
pub async fn show(member: Member) -> Result<HttpResponse, WebError> {
    let document = stored_document(&member).await?;
    let (values, comorbidities, impediments) = values_of(&document);
    let f = build_form(
        &member,
        &document,
        values,
        &comorbidities,
        &impediments,
        HashMap::new(),
        None,
    );
    html(&ProfilePage {
        c: Chrome::new(&member, "profile", "profile-title"),
        f,
    })
}

/// The patch one form field asks for: empty means clear (`null`).
fn field_patch(field: ProfileField, text: &str) -> Value {
    let text = text.trim();
    if text.is_empty() {
        return Value::Null;
    }
    match field {
        ProfileField::Weight | ProfileField::Length => text
            .replace(',', ".")
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map(Value::Number)
            .unwrap_or_else(|| Value::String(text.to_owned())),
        ProfileField::Gender => text
            .parse::<i64>()
            .map(Value::from)
            .unwrap_or_else(|_| Value::String(text.to_owned())),
        ProfileField::Smoker => match text {
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            other => Value::String(other.to_owned()),
        },
        _ => Value::String(text.to_owned()),
    }
}

/// The message key for a refusal at `path`: a field of its own has its message, a part of
/// one (`comorbidities[1]`) the general one.
fn message_key(path: &str) -> &'static str {
    match ProfileField::parse(path) {
        Some(ProfileField::Country) => "invalid-country",
        Some(ProfileField::Weight) => "invalid-weight",
        Some(ProfileField::Length) => "invalid-length",
        Some(ProfileField::Birthday) => "invalid-birthday",
        _ => "invalid-value",
    }
}

/// Validates every field of the posted form on its own (so that each gets its message) and
/// merges the whole patch when all pass.
pub async fn save(
    member: Member,
    CsrfForm(pairs): CsrfForm<Vec<(String, String)>>,
) -> Result<HttpResponse, WebError> {
    let document = stored_document(&member).await?;
    let first = |field: ProfileField| {
        pairs
            .iter()
            .find(|(k, _)| k == field.as_str())
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    };
    let all = |field: ProfileField| -> Vec<String> {
        pairs
            .iter()
            .filter(|(k, _)| k == field.as_str())
            .map(|(_, v)| v.clone())
            .collect()
    };
    let mut fields = Vec::new();
    let mut values = HashMap::new();
    for field in SINGLE_FIELDS {
        let text = first(field);
        fields.push((field, field_patch(field, &text)));
        values.insert(field, text);
    }
    let comorbidities = all(ProfileField::Comorbidities);
    let impediments = all(ProfileField::Impediments);
    fields.push((ProfileField::Comorbidities, json!(comorbidities)));
    fields.push((ProfileField::Impediments, json!(impediments)));

    let today = latest_birthday(member.state.store.clock().now());
    let mut errors = HashMap::new();
    for (field, value) in &fields {
        let single = Map::from_iter([(field.to_string(), value.clone())]);
        if let Err(err) = ProfilePatch::parse(Value::Object(single), today) {
            errors.insert(*field, member.tr.text(message_key(&err.field)));
        }
    }
    let notice = if errors.is_empty() {
        let patch = fields
            .into_iter()
            .map(|(field, value)| (field.to_string(), value))
            .collect();
        let patch = ProfilePatch::parse(Value::Object(patch), today)
            .map_err(|_| WebError::BadRequest("invalid-value"))?;
        let condition = crate::store::visibility::only_user("profiles", "id", member.id());
        member
            .state
            .actions
            .update_profiles(&member.viewer(), condition, &patch)
            .await?;
        Some(member.tr.text("profile-saved"))
    } else {
        None
    };
    let f = build_form(
        &member,
        &document,
        values,
        &comorbidities,
        &impediments,
        errors,
        notice,
    );
    let c = Chrome::new(&member, "profile", "profile-title");
    if member.htmx {
        html(&ProfileFragment { c, f })
    } else {
        html(&ProfilePage { c, f })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers_read_as_they_were_typed() {
        assert_eq!(text_of(Some(&json!(165.0))), "165");
        assert_eq!(text_of(Some(&json!(67.5))), "67.5");
        assert_eq!(text_of(Some(&json!(72))), "72");
        assert_eq!(text_of(Some(&json!(-0.25))), "-0.25");
        assert_eq!(text_of(None), "");
    }
}
