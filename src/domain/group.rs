//! A group's values, parsed once for the API and the portal alike.

use crate::domain::account::FieldError;

/// Longest group name, in characters.
pub const MAX_NAME_CHARS: usize = 200;
/// Longest group description, in characters.
pub const MAX_DESCRIPTION_CHARS: usize = 2000;

/// A group's name: 1 to 200 characters after trimming, no control characters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupName(String);

impl GroupName {
    /// Parses a name.
    pub fn parse(text: &str) -> Result<Self, FieldError> {
        let text = text.trim();
        if text.is_empty()
            || text.chars().count() > MAX_NAME_CHARS
            || text.chars().any(char::is_control)
        {
            return Err(FieldError::new(
                "name",
                format!("must be 1 to {MAX_NAME_CHARS} characters without control characters"),
            ));
        }
        Ok(GroupName(text.to_owned()))
    }

    /// The trimmed name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A group's description: at most 2,000 characters after trimming; blank means none. A longer
/// text is refused, never cut.
pub fn parse_description(text: Option<&str>) -> Result<Option<String>, FieldError> {
    let Some(text) = text.map(str::trim).filter(|t| !t.is_empty()) else {
        return Ok(None);
    };
    if text.chars().count() > MAX_DESCRIPTION_CHARS {
        return Err(FieldError::new(
            "description",
            format!("must be at most {MAX_DESCRIPTION_CHARS} characters"),
        ));
    }
    Ok(Some(text.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_descriptions_follow_one_rule() {
        assert_eq!(GroupName::parse("  Cardio  ").unwrap().as_str(), "Cardio");
        assert!(GroupName::parse(" ").is_err());
        assert!(GroupName::parse(&"x".repeat(201)).is_err());
        assert!(GroupName::parse(&"x".repeat(200)).is_ok());
        assert_eq!(parse_description(None), Ok(None));
        assert_eq!(parse_description(Some("  ")), Ok(None));
        assert_eq!(parse_description(Some(" a ")), Ok(Some("a".into())));
        assert!(parse_description(Some(&"é".repeat(2000))).is_ok());
        let err = parse_description(Some(&"é".repeat(2001))).unwrap_err();
        assert_eq!(
            err.to_string(),
            "`description` must be at most 2000 characters"
        );
    }
}
