//! An account's own details as a form: names, phone number, language and time zone. The user
//! edits its own on the account page, an administrator anyone's on the user's edit page; both
//! parse and refuse them alike, and a refused form shows what was typed.

use serde::Deserialize;

use crate::actions::AccountChanges;
use crate::domain::account::{Language, PersonName, PhoneNumber, TimeZone};
use crate::store::entities::user;

/// The form as posted. The names and the phone number may be left out (an older form, or
/// one that changes only the language): they then stay as they are.
#[derive(Debug, Deserialize)]
pub struct DetailsForm {
    #[serde(default)]
    pub first_name: Option<String>,
    #[serde(default)]
    pub last_name: Option<String>,
    #[serde(default)]
    pub phone_number: Option<String>,
    pub language: String,
    pub time_zone: String,
}

/// The form as a page shows it: the stored details, or what was typed when it was refused.
#[derive(Debug, Clone)]
pub struct Details {
    pub first_name: String,
    pub last_name: String,
    pub phone_number: String,
    pub language: Option<Language>,
    pub time_zone: String,
}

impl Details {
    /// The stored details of `user`.
    pub fn of(user: &user::Model) -> Self {
        Details {
            first_name: user.first_name.clone(),
            last_name: user.last_name.clone(),
            phone_number: user.phone_number.clone().unwrap_or_default(),
            language: Language::parse(&user.language),
            time_zone: user.time_zone.clone(),
        }
    }

    /// What `form` holds, over the stored details of `user` for the fields it left out.
    pub fn typed(form: &DetailsForm, user: &user::Model) -> Self {
        let stored = Details::of(user);
        Details {
            first_name: form.first_name.clone().unwrap_or(stored.first_name),
            last_name: form.last_name.clone().unwrap_or(stored.last_name),
            phone_number: form.phone_number.clone().unwrap_or(stored.phone_number),
            language: Language::parse(&form.language),
            time_zone: form.time_zone.clone(),
        }
    }
}

/// A refused field: its form name and the message's key.
pub type FieldRefusal = (&'static str, &'static str);

/// The message beside `field` among a form's refused fields (name and message), if it was
/// refused.
pub fn message_for<'a>(errors: &'a [(&'static str, String)], field: &str) -> Option<&'a str> {
    errors
        .iter()
        .find(|(name, _)| *name == field)
        .map(|(_, message)| message.as_str())
}

/// The changes `form` asks for, or every field it refuses. An empty phone number clears it.
pub fn parse(form: &DetailsForm) -> Result<AccountChanges, Vec<FieldRefusal>> {
    let mut refused = Vec::new();
    let mut name = |field: &'static str, text: &Option<String>| {
        let parsed = text
            .as_deref()
            .map(|t| PersonName::parse(field, t))
            .transpose();
        parsed.unwrap_or_else(|_| {
            refused.push((field, "field-error-name"));
            None
        })
    };
    let first_name = name("first_name", &form.first_name);
    let last_name = name("last_name", &form.last_name);
    let phone_number = match form.phone_number.as_deref().map(str::trim) {
        None => None,
        Some("") => Some(None),
        Some(text) => match PhoneNumber::parse(text) {
            Ok(phone) => Some(Some(phone)),
            Err(_) => {
                refused.push(("phone_number", "field-error-phone"));
                None
            }
        },
    };
    let language = Language::parse_field(&form.language)
        .map_err(|_| refused.push(("language", "field-error-choice")))
        .ok();
    let time_zone = TimeZone::parse_field(&form.time_zone)
        .map_err(|_| refused.push(("time_zone", "field-error-choice")))
        .ok();
    if !refused.is_empty() {
        return Err(refused);
    }
    Ok(AccountChanges {
        first_name,
        last_name,
        phone_number,
        language,
        time_zone,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form(first: &str, phone: &str, zone: &str) -> DetailsForm {
        DetailsForm {
            first_name: Some(first.into()),
            last_name: Some("Janssens".into()),
            phone_number: Some(phone.into()),
            language: "nl".into(),
            time_zone: zone.into(),
        }
    }

    #[test]
    fn every_refused_field_is_named_and_an_empty_phone_clears_it() {
        let refused = parse(&form("", "call me", "Brussels")).unwrap_err();
        assert_eq!(
            refused,
            [
                ("first_name", "field-error-name"),
                ("phone_number", "field-error-phone"),
                ("time_zone", "field-error-choice"),
            ]
        );
        let changes = parse(&form("Anna", "", "Europe/Brussels")).unwrap();
        assert_eq!(changes.phone_number, Some(None));
        assert_eq!(changes.first_name.unwrap().as_str(), "Anna");
        let only_settings = DetailsForm {
            first_name: None,
            last_name: None,
            phone_number: None,
            language: "en".into(),
            time_zone: "UTC".into(),
        };
        let changes = parse(&only_settings).unwrap();
        assert!(changes.first_name.is_none() && changes.phone_number.is_none());
    }
}
