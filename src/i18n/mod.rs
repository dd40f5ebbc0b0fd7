//! Translations: Fluent resources under `locales/<lang>/*.ftl`, embedded at compile time.
//! Every language defines every message (a test checks it); a missing one falls back to English.

use std::borrow::Cow;
use std::collections::HashMap;

use fluent_templates::fluent_bundle::FluentValue;
use fluent_templates::{LanguageIdentifier, Loader};

use crate::domain::account::Language;

pub mod locale;

fluent_templates::static_loader! {
    static LOCALES = {
        locales: "./locales",
        fallback_language: "en",
        // Isolation marks (U+2068/U+2069) are invisible but would land in PDF text layers.
        customise: |bundle| bundle.set_use_isolating(false),
    };
}

/// Looks up messages in one language.
#[derive(Debug, Clone)]
pub struct Translator {
    language: Language,
    id: LanguageIdentifier,
}

impl Translator {
    /// A translator for `language`.
    pub fn new(language: Language) -> Self {
        let id = language
            .code()
            .parse()
            .expect("language codes are valid identifiers");
        Translator { language, id }
    }

    /// The language translated to.
    pub fn language(&self) -> Language {
        self.language
    }

    /// The message `key`.
    pub fn text(&self, key: &str) -> String {
        LOCALES.lookup(&self.id, key)
    }

    /// The message `key` if it exists (in this language or English).
    pub fn try_text(&self, key: &str) -> Option<String> {
        LOCALES.try_lookup(&self.id, key)
    }

    /// The message `key` with its placeables filled.
    pub fn text_with(&self, key: &str, args: &[(&'static str, String)]) -> String {
        let args: HashMap<Cow<'static, str>, FluentValue> = args
            .iter()
            .map(|(name, value)| (Cow::Borrowed(*name), FluentValue::from(value.clone())))
            .collect();
        LOCALES.lookup_with_args(&self.id, key, &args)
    }

    /// The message `key` with the number `count` as `$name`, so that the message can choose
    /// its plural form (`{ $hours -> [one] … *[other] … }`).
    pub fn text_with_count(&self, key: &str, name: &'static str, count: i64) -> String {
        let args: HashMap<Cow<'static, str>, FluentValue> =
            HashMap::from([(Cow::Borrowed(name), FluentValue::from(count))]);
        LOCALES.lookup_with_args(&self.id, key, &args)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::path::Path;

    use super::*;

    fn message_ids(path: &Path) -> BTreeSet<String> {
        std::fs::read_to_string(path)
            .unwrap()
            .lines()
            .filter(|line| line.chars().next().is_some_and(|c| c.is_ascii_alphabetic()))
            .filter_map(|line| line.split_once('=').map(|(id, _)| id.trim().to_owned()))
            .collect()
    }

    #[test]
    fn every_language_defines_every_message() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("locales");
        let english = root.join("en");
        for entry in std::fs::read_dir(&english).unwrap() {
            let file = entry.unwrap().file_name();
            let expected = message_ids(&english.join(&file));
            assert!(!expected.is_empty());
            for language in Language::ALL {
                let ids = message_ids(&root.join(language.code()).join(&file));
                let missing: Vec<_> = expected.difference(&ids).collect();
                let extra: Vec<_> = ids.difference(&expected).collect();
                assert!(
                    missing.is_empty() && extra.is_empty(),
                    "{}/{file:?}: missing {missing:?}, extra {extra:?}",
                    language.code()
                );
            }
        }
    }

    #[test]
    fn messages_are_translated_and_filled_without_isolation_marks() {
        let german = Translator::new(Language::De);
        assert_ne!(
            german.text("heart-rate"),
            Translator::new(Language::En).text("heart-rate")
        );
        let filled =
            Translator::new(Language::En).text_with("age-years", &[("years", "68".into())]);
        assert_eq!(filled, "68 years");
        assert!(!filled.contains('\u{2068}'));
        assert!(
            Translator::new(Language::Zh)
                .try_text("no-such-message")
                .is_none()
        );
    }
}
