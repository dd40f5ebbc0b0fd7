//! Account values that are parsed once at the edge: e-mail addresses, languages, time zones,
//! names, passwords and roles.

use std::fmt;
use std::str::FromStr;

/// A problem with one field of an account, naming the field and the rule.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{field}` {rule}")]
pub struct FieldError {
    /// The field, as named on the wire.
    pub field: &'static str,
    /// What the value must be.
    pub rule: String,
}

impl FieldError {
    pub(crate) fn new(field: &'static str, rule: impl Into<String>) -> Self {
        FieldError {
            field,
            rule: rule.into(),
        }
    }
}

/// A syntactically plausible e-mail address, stored in lower case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Email(String);

impl Email {
    /// Parses an address: one `@`, a non-empty local part, a dotted domain, no spaces, ≤ 254 bytes.
    pub fn parse(text: &str) -> Result<Self, FieldError> {
        let text = text.trim().to_lowercase();
        let invalid = || FieldError::new("email", "must be an e-mail address");
        if text.len() > 254 || text.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(invalid());
        }
        let (local, domain) = text.split_once('@').ok_or_else(invalid)?;
        let labels_ok = domain
            .split('.')
            .all(|l| !l.is_empty() && !l.starts_with('-'));
        if local.is_empty() || domain.contains('@') || !domain.contains('.') || !labels_ok {
            return Err(invalid());
        }
        Ok(Email(text))
    }

    /// The normalised address.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The languages Tacho speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Language {
    De,
    En,
    Es,
    Fr,
    It,
    Nl,
    Ar,
    Zh,
}

impl Language {
    /// Every supported language.
    pub const ALL: [Language; 8] = [
        Language::De,
        Language::En,
        Language::Es,
        Language::Fr,
        Language::It,
        Language::Nl,
        Language::Ar,
        Language::Zh,
    ];

    /// Parses a supported code in any case (`en`, `EN`, `En`).
    pub fn parse(code: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|l| l.code().eq_ignore_ascii_case(code.trim()))
    }

    /// A supported language, or English for anything else (the reports' fallback rule).
    pub fn or_english(code: Option<&str>) -> Self {
        code.and_then(Self::parse).unwrap_or(Language::En)
    }

    /// The writing direction, as HTML's `dir` names it: `rtl` for Arabic, else `ltr`.
    pub fn direction(self) -> &'static str {
        if self == Language::Ar { "rtl" } else { "ltr" }
    }

    /// Lower-case code, as used for translations.
    pub fn code(self) -> &'static str {
        match self {
            Language::De => "de",
            Language::En => "en",
            Language::Es => "es",
            Language::Fr => "fr",
            Language::It => "it",
            Language::Nl => "nl",
            Language::Ar => "ar",
            Language::Zh => "zh",
        }
    }

    /// Upper-case code, as the user record carries it.
    pub fn upper(self) -> String {
        self.code().to_ascii_uppercase()
    }

    /// Parses the `language` field of an account.
    pub fn parse_field(code: &str) -> Result<Self, FieldError> {
        Self::parse(code).ok_or_else(|| {
            FieldError::new("language", "must be one of DE, EN, ES, FR, IT, NL, AR, ZH")
        })
    }
}

/// A known IANA time zone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimeZone(pub chrono_tz::Tz);

impl TimeZone {
    /// Parses an IANA name such as `Europe/Brussels`.
    pub fn parse(name: &str) -> Option<Self> {
        chrono_tz::Tz::from_str(name.trim()).ok().map(TimeZone)
    }

    /// Parses the `time_zone` field of an account.
    pub fn parse_field(name: &str) -> Result<Self, FieldError> {
        Self::parse(name).ok_or_else(|| {
            FieldError::new(
                "time_zone",
                "must be an IANA time zone such as Europe/Brussels",
            )
        })
    }

    /// The IANA name.
    pub fn name(&self) -> &'static str {
        self.0.name()
    }
}

impl fmt::Display for TimeZone {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A person's first or last name: 1–200 characters after trimming, no control characters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PersonName(String);

impl PersonName {
    /// Parses the value of `field`.
    pub fn parse(field: &'static str, text: &str) -> Result<Self, FieldError> {
        let text = text.trim();
        if text.is_empty() || text.chars().count() > 200 || text.chars().any(char::is_control) {
            return Err(FieldError::new(
                field,
                "must be 1 to 200 characters without control characters",
            ));
        }
        Ok(PersonName(text.to_owned()))
    }

    /// The trimmed name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A phone number: digits with optional `+`, spaces, dots, dashes and parentheses; 3–50 characters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PhoneNumber(String);

impl PhoneNumber {
    /// Parses `phone_number`.
    pub fn parse(text: &str) -> Result<Self, FieldError> {
        let text = text.trim();
        let allowed = |c: char| c.is_ascii_digit() || " +-.()/".contains(c);
        if text.len() < 3
            || text.len() > 50
            || !text.chars().all(allowed)
            || !text.chars().any(|c| c.is_ascii_digit())
        {
            return Err(FieldError::new(
                "phone_number",
                "must be a phone number (digits, +, spaces, dashes)",
            ));
        }
        Ok(PhoneNumber(text.to_owned()))
    }

    /// The trimmed number.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A new password: 8 to 256 characters, and not easy to guess.
#[derive(Clone, PartialEq, Eq)]
pub struct NewPassword(String);

/// The least zxcvbn score a new password must have. zxcvbn (Wheeler, "zxcvbn: Low-Budget
/// Password Strength Estimation", USENIX Security 2016) estimates the guesses an attacker
/// needs from dictionaries of common passwords, names, words and keyboard patterns; score 3 is
/// "safely unguessable" (at least 10^8 guesses), which refuses the common passwords OWASP ASVS
/// 5.0 V6.2.4 asks to refuse ("password123" and "12345678" score 0) while phrases of a few
/// ordinary words pass.
pub const MIN_PASSWORD_SCORE: zxcvbn::Score = zxcvbn::Score::Three;

/// Why a new password is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PasswordRefusal {
    /// Fewer than 8 or more than 256 characters.
    Length,
    /// Too easy to guess (under [`MIN_PASSWORD_SCORE`]).
    Guessable,
}

impl PasswordRefusal {
    /// The portal's message.
    pub fn key(self) -> &'static str {
        match self {
            PasswordRefusal::Length => "password-too-short",
            PasswordRefusal::Guessable => "password-too-weak",
        }
    }
}

impl From<PasswordRefusal> for FieldError {
    fn from(refusal: PasswordRefusal) -> Self {
        match refusal {
            PasswordRefusal::Length => FieldError::new("password", "must be 8 to 256 characters"),
            PasswordRefusal::Guessable => FieldError::new(
                "password",
                "is too easy to guess (a common password, word or pattern); a phrase of a few \
                 uncommon words is both stronger and easier to remember",
            ),
        }
    }
}

impl NewPassword {
    /// Parses `password`.
    pub fn parse(text: &str) -> Result<Self, FieldError> {
        Ok(Self::check(text)?)
    }

    /// Parses `password`, saying why it is refused.
    pub fn check(text: &str) -> Result<Self, PasswordRefusal> {
        let count = text.chars().count();
        if !(8..=256).contains(&count) {
            return Err(PasswordRefusal::Length);
        }
        if zxcvbn::zxcvbn(text, &[]).score() < MIN_PASSWORD_SCORE {
            return Err(PasswordRefusal::Guessable);
        }
        Ok(NewPassword(text.to_owned()))
    }

    /// The password itself; keep it out of logs.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for NewPassword {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("NewPassword(***)")
    }
}

/// A global role. Only administrators exist today; the wire form is lower-case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    Admin,
}

impl Role {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Admin => "admin",
        }
    }

    /// Parses a role name.
    pub fn parse(text: &str) -> Result<Self, FieldError> {
        match text {
            "admin" => Ok(Role::Admin),
            _ => Err(FieldError::new(
                "roles",
                format!(
                    "has unknown role `{}` (known: admin)",
                    text.chars().take(40).collect::<String>()
                ),
            )),
        }
    }
}

/// A role within a group's staff: a label such as `physician` or `nurse`, 1 to 64 letters,
/// digits, `_` or `-`. The wire leaves the labels open (wire-contract.md: staff enlistments),
/// so a role is a parsed name rather than one of a closed set; no rule of the service reads
/// it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct StaffRole(String);

impl StaffRole {
    /// The role a staff member gets when none is named.
    pub fn physician() -> Self {
        StaffRole("physician".to_owned())
    }

    /// Parses a role name.
    pub fn parse(text: &str) -> Result<Self, FieldError> {
        let ok = !text.is_empty()
            && text.len() <= 64
            && text
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if ok {
            Ok(StaffRole(text.to_owned()))
        } else {
            Err(FieldError::new(
                "roles",
                "must hold names of 1 to 64 letters, digits, `_` or `-`",
            ))
        }
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emails_are_normalised_and_checked() {
        assert_eq!(
            Email::parse(" Ann@Example.COM ").unwrap().as_str(),
            "ann@example.com"
        );
        for bad in [
            "", "a", "a@b", "@b.c", "a@@b.c", "a b@c.d", "a@.c", "a@b..c",
        ] {
            assert!(Email::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn languages_parse_in_any_case() {
        assert_eq!(Language::parse("EN"), Some(Language::En));
        assert_eq!(Language::parse("zH"), Some(Language::Zh));
        assert_eq!(Language::parse("xx"), None);
        assert_eq!(Language::or_english(Some("xx")), Language::En);
        assert_eq!(Language::or_english(None), Language::En);
        assert_eq!(Language::Ar.upper(), "AR");
    }

    #[test]
    fn time_zones_are_iana_names() {
        assert_eq!(
            TimeZone::parse("Europe/Brussels").unwrap().name(),
            "Europe/Brussels"
        );
        assert!(TimeZone::parse("Mars/Olympus").is_none());
        assert!(TimeZone::parse("").is_none());
    }

    #[test]
    fn names_phones_passwords_roles() {
        assert!(PersonName::parse("first_name", "  ").is_err());
        assert_eq!(
            PersonName::parse("first_name", " Zoë ").unwrap().as_str(),
            "Zoë"
        );
        assert!(PhoneNumber::parse("+32 475 12 34 56").is_ok());
        assert!(PhoneNumber::parse("call me").is_err());
        assert!(NewPassword::parse("short").is_err());
        assert_eq!(
            format!("{:?}", NewPassword::parse("a long enough phrase").unwrap()),
            "NewPassword(***)"
        );
        // Common passwords are refused, phrases of ordinary words are not.
        for common in [
            "password123",
            "12345678",
            "qwertyuiop",
            "iloveyou1",
            "Summer2024!",
        ] {
            assert_eq!(
                NewPassword::check(common),
                Err(PasswordRefusal::Guessable),
                "{common}"
            );
        }
        assert!(NewPassword::check("correct horse battery").is_ok());
        assert_eq!(NewPassword::check("short"), Err(PasswordRefusal::Length));
        assert_eq!(Role::parse("admin"), Ok(Role::Admin));
        assert!(Role::parse("root").is_err());
        assert_eq!(StaffRole::parse("physician"), Ok(StaffRole::physician()));
        assert!(StaffRole::parse("drop table").is_err());
        assert!(StaffRole::parse(&"x".repeat(65)).is_err());
    }
}
