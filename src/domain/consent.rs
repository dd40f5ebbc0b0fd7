//! Consent (GDPR art. 7 and 9(2)(a)): the versions of the texts a patient consents to, and
//! which recorded consent is in force.
//!
//! Each text is named by a version, the date it was published. A consent is recorded with the
//! version the patient was shown; when a text changes, its version moves on and every later
//! consent names the new one, while those recorded before keep theirs.

/// The version of the text by which a patient consents to the processing of their health data
/// (GDPR art. 9(2)(a)). Registering through the API is consent to it.
pub const HEALTH_DATA_VERSION: &str = "2026-11-28";

/// The version of the text by which a patient consents to sharing their data with the staff of
/// a group, for the time of a prescription there.
pub const GROUP_SHARING_VERSION: &str = "2026-11-28";

/// The versions of the texts in force, as the server states them to the apps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CurrentTexts {
    pub health_data: &'static str,
    pub group_sharing: &'static str,
}

/// The texts a consent given now is to.
pub const CURRENT: CurrentTexts = CurrentTexts {
    health_data: HEALTH_DATA_VERSION,
    group_sharing: GROUP_SHARING_VERSION,
};

/// Of consents recorded oldest first, the index of the one in force for each subject (a kind,
/// and for sharing a group): the latest, since rows are only ever added. `subject` names what
/// a row is about; the answer keeps the order in which subjects first appear.
pub fn in_force<T, S: PartialEq>(rows: &[T], subject: impl Fn(&T) -> S) -> Vec<usize> {
    let mut latest: Vec<(S, usize)> = Vec::new();
    for (index, row) in rows.iter().enumerate() {
        let about = subject(row);
        match latest.iter_mut().find(|(s, _)| *s == about) {
            Some(entry) => entry.1 = index,
            None => latest.push((about, index)),
        }
    }
    latest.into_iter().map(|(_, index)| index).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_latest_row_of_each_subject_is_in_force() {
        let rows = ["health", "a", "a", "b", "a"];
        assert_eq!(in_force(&rows, |r| *r), vec![0, 4, 3]);
        assert!(in_force(&[] as &[&str], |r| *r).is_empty());
    }

    #[test]
    fn versions_are_dates() {
        for version in [HEALTH_DATA_VERSION, GROUP_SHARING_VERSION] {
            assert!(chrono::NaiveDate::parse_from_str(version, "%Y-%m-%d").is_ok());
        }
    }
}
